"""model_raw.onnx takes float32 series; its check of what float32 carries read each channel's global mean and std.
A series normalised on its own (series_norm series) is read at its own spread: 1e6 + 0.001 x signal, its offset
varying by 1e3 across series, passed the channel's check (steps of 6e-5 of 1e3) and the graph was written, its
logits on the training series 1.48 from fpt's (largest logit 1.49). And with cf_difference the graph takes the first
difference of the rounded inputs: a timestamp channel (1.7e9, steps of 128) whose differences have a spread of 14
passed on its spread across series (1.2e7), the logits 1.69 off."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

import fpt
from fpt.data.modalities import from_json
from fpt.data.tokenisers import SeriesTokens
from fpt.onnx_raw import raw_tokeniser
from fpt.run import Run

N, L = 40, 21


def _series(offset: float, spread: float, signal: float, seed: int = 0) -> list[np.ndarray]:
    """Two channels: the first at ``offset`` (each series' own offset spread by ``spread``) plus ``signal`` x noise,
    the second of unit noise."""
    rng = np.random.default_rng(seed)
    first = offset + rng.normal(size=N)[:, None] * spread + signal * rng.normal(size=(N, L))
    return list(np.stack([first, rng.normal(size=(N, L))], 1))


def _fitted(series: list[np.ndarray], norm: str, difference: bool = False) -> SeriesTokens:
    options = SimpleNamespace(series_patch=4, series_stride=3, series_norm=norm, cf_difference=difference)
    return SeriesTokens.fit_from(series, options, {})


def _why(tok: SeriesTokens) -> str | None:
    module, _, said = raw_tokeniser(SimpleNamespace(modality="timeseries", tokeniser=tok), {"train_lengths": f"{L}..{L}"})
    return None if module is not None else said


def test_a_series_normalised_on_its_own_is_checked_at_its_own_spread_not_its_channels():
    series = _series(1e6, 1e3, 0.001)
    own = _fitted(series, "series")
    worst = max(np.spacing(np.float32(np.abs(s[0]).max())) / s[0].std() for s in series)
    assert own.float32_steps[0] == pytest.approx(worst) and worst > 30  # 0.0625 steps of a spread near 0.001
    assert own.float32_steps[1] < 1e-5
    assert _why(own) == (f"float32 inputs round channel 0 to steps of {worst:.2g} of a training series' own standard "
                         "deviation (normalised per series); model.onnx takes fpt's tokens")
    # the same series normalised by the channel's spread (1e3 across series) are carried: the graph is written
    spread = _fitted(series, "global")
    assert spread.float32_steps[0] < 1e-4 and _why(spread) is None
    # series near 0 whose spread float32 carries: written
    assert _why(_fitted(_series(0.0, 10.0, 1.0), "series")) is None


def test_a_first_difference_is_checked_at_the_differences_spread():
    rng = np.random.default_rng(1)
    stamps = 1.7e9 + rng.normal(size=N)[:, None] * 1e7 + np.cumsum(60 + 5 * rng.normal(size=(N, L)), axis=1)
    series = list(np.stack([stamps, rng.normal(size=(N, L))], 1))
    tok = _fitted(series, "global", difference=True)
    assert len(tok.float32_steps) == 4 and tok.float32_steps[0] < 1e-4  # the timestamps at their spread: carried
    assert tok.float32_steps[2] == pytest.approx(128 / tok.diff_std[0], rel=0.01)  # their differences: not
    assert _why(tok).startswith(f"float32 inputs round channel 0's first difference to steps of {tok.float32_steps[2]:.2g} "
                                "of its standard deviation")
    # a run saved before the steps were measured: its differences are judged by the saved mean and std
    old = from_json({k: v for k, v in tok.to_json().items() if k != "float32_steps"})
    assert old.float32_steps == [] and "channel 0's first difference (values near 1.737" in _why(old)


def test_saved_float32_steps_are_checked_when_a_run_is_read_back():
    tok = _fitted(_series(0.0, 1.0, 1.0), "global")
    assert from_json(json.loads(json.dumps(tok.to_json()))).float32_steps == tok.float32_steps
    with pytest.raises(Exception, match=r"float32_steps"):
        from_json({**tok.to_json(), "float32_steps": [0.1]})  # one per channel: 2


def test_no_raw_graph_for_series_float32_rounds_at_their_own_spread(tiny_bert_dir, tmp_path):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxscript")
    series = np.stack(_series(1e6, 1e3, 0.001))
    y = np.arange(N) % 2
    exp = fpt.build(data=(series, y), body=tiny_bert_dir, steps=2, eval_every=2, batch_size=8, device="cpu",
                    series_patch=4, series_stride=3, series_norm="series")
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    Run(tmp_path / "run").export(tmp_path / "export", onnx=True)
    raw = json.loads((tmp_path / "export" / "config.json").read_text())["onnx"]["raw"]
    assert not raw["written"] and raw["why"].startswith("float32 inputs round channel 0 to steps of")  # was written
    assert not (tmp_path / "export" / "model_raw.onnx").exists() and (tmp_path / "export" / "model.onnx").exists()


def test_a_series_run_saved_before_the_steps_were_measured_resumes(tiny_bert_dir, tmp_path):
    """The resume check compares data.json with what the data gives now: the measured float32_steps, absent from a
    run saved before them, read as 'the data changed since the run started' and the resume was refused."""
    from fpt.cli import main

    np.savez(tmp_path / "s.npz", X=np.stack(_series(0.0, 1.0, 1.0)).astype(np.float32), y=np.arange(N) % 2)
    common = ["--body", tiny_bert_dir, "--init", "random", "--batch-size", "8", "--eval-every", "2", "--device", "cpu",
              "--baselines", "none", "--quiet"]
    assert main(["train", "--data", str(tmp_path / "s.npz"), *common, "--steps", "2", "--out", str(tmp_path / "run")]) == 0
    data = json.loads((tmp_path / "run" / "data.json").read_text())
    assert len(data["tokeniser"].pop("float32_steps")) == 2
    (tmp_path / "run" / "data.json").write_text(json.dumps(data))
    assert main(["train", "--resume", str(tmp_path / "run"), "--steps", "4"]) == 0  # was 2: 'the data changed'
    assert fpt.Run(tmp_path / "run").summary()["steps"] == 4

"""Classic models and controls beside a --data run (fpt.baselines), and the data-sized budget."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

import fpt
from fpt import baselines
from fpt.cli import main
from fpt.config import RunConfig
from fpt.data.tokenisers import SeriesTokens
from fpt.pipeline import data_budget


def _csv(path, n=60):
    rng = np.random.default_rng(0)
    rows = ["x1,x2,kind,label"] + [f"{rng.normal() + 2 * (i % 2):.3f},{rng.normal():.3f},{'pq'[i % 3 % 2]},{'ab'[i % 2]}"
                                   for i in range(n)]
    path.write_text("\n".join(rows) + "\n")
    return path


def _series_npz(path, n=40, length=20):
    rng = np.random.default_rng(1)
    y = np.arange(n) % 2
    t = np.linspace(0, 1, length)
    x = np.stack([np.sin(2 * np.pi * (1 + k) * t) + 0.3 * rng.normal(size=length) for k in y])[:, None, :]
    np.savez(path, X=x.astype(np.float32), y=y)
    return path


def _build(path, body, **kw):
    return fpt.build(**{"data": str(path), "body": body, "init": "random", "steps": 4, "eval_every": 2,
                        "batch_size": 8, "device": "cpu", **kw})


def test_cli_prints_and_saves_models_beside_the_run(tmp_path, tiny_bert_dir, capsys):
    out = tmp_path / "run"
    assert main(["train", "--data", str(_csv(tmp_path / "c.csv")), "--body", tiny_bert_dir, "--init", "random",
                 "--steps", "4", "--eval-every", "2", "--device", "cpu", "--quiet", "--out", str(out)]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[-1].startswith("best on validation: ")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["baselines"]["chance"] == 0.5 and "majority" in summary["baselines"]  # the old keys stay
    compared = summary["baselines_models"]
    assert compared["metric"] == "accuracy" and set(compared["models"]) == {"logistic regression", "gradient boosting"}
    for entry in compared["models"].values():
        assert 0 <= entry["val"] <= 1 and 0 <= entry["test"] <= 1 and entry["seconds"] >= 0 and "chosen" in entry
    assert compared["line"] == printed[-1]
    assert compared["best_on_validation"]["val"] == max(
        [e["val"] for e in compared["models"].values()] + [round(summary["val_accuracy"], 4)])


def test_none_and_paper_tasks_fit_nothing(tmp_path, tiny_bert_dir):
    assert baselines.level(RunConfig(task="bit-xor")) == "none"
    assert baselines.level(RunConfig(data="x.csv")) == "fast"
    assert baselines.level(RunConfig(data="x.csv", baselines="none")) == "none"
    exp = _build(_csv(tmp_path / "c.csv"), tiny_bert_dir, baselines="none")
    summary = fpt.fit(exp, progress=False)
    assert baselines.beside_run(exp, summary) is summary


def test_regression_fits_ridge_and_boosting(tmp_path, tiny_bert_dir):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(80, 3))
    y = 3 * x[:, 0] - x[:, 1]
    (tmp_path / "r.csv").write_text("a,b,c,v\n" + "".join(f"{r[0]},{r[1]},{r[2]},{t}\n" for r, t in zip(x, y, strict=True)))
    result = baselines.fit_models(_build(tmp_path / "r.csv", tiny_bert_dir).data)
    assert result["metric"] == "r2" and set(result["models"]) == {"ridge regression", "gradient boosting"}
    assert result["models"]["ridge regression"]["test"] > 0.95


def test_series_get_nearest_neighbour_and_minirocket_or_a_note(tmp_path, tiny_bert_dir, monkeypatch):
    exp = _build(_series_npz(tmp_path / "s.npz"), tiny_bert_dir)
    result = baselines.fit_models(exp.data)
    assert "1-NN Euclidean" in result["models"]
    pytest.importorskip("aeon")
    assert "MiniRocket" in result["models"]
    monkeypatch.setitem(sys.modules, "aeon.classification.convolution_based", None)  # as if aeon were missing
    result = baselines.fit_models(exp.data)
    assert "MiniRocket" not in result["models"] and "aeon is not installed" in result["notes"][0]


@pytest.mark.parametrize(("patch", "stride"), [(4, 4), (4, 2), (5, 3)])
def test_series_rebuilt_from_overlapping_windows(patch, stride):
    rng = np.random.default_rng(0)
    series = [rng.normal(size=(2, 17)) for _ in range(3)]
    tok = SeriesTokens.fit(series, patch, stride, "global")
    x, _ = tok(series)
    rebuilt = baselines._series(x.numpy(), tok.to_json())
    for i, s in enumerate(series):
        np.testing.assert_allclose(rebuilt[i, :, :17], tok._normalise(s), atol=1e-5)


def test_all_adds_the_two_controls(tmp_path, tiny_bert_dir):
    exp = _build(_csv(tmp_path / "c.csv"), tiny_bert_dir, steps=2, eval_every=1, baselines="all")
    out = tmp_path / "run"
    summary = baselines.beside_run(exp, fpt.fit(exp, out=out, progress=False), out)
    controls = summary["baselines_models"]["controls"]
    assert set(controls) == {"random body", "no language model"}
    assert (out / "controls" / "no-lm" / "summary.json").is_file()
    assert json.loads((out / "summary.json").read_text())["baselines_models"]["controls"]["no language model"]["val"] \
        == controls["no language model"]["val"]


def test_budget_follows_the_training_examples(tmp_path, tiny_bert_dir):
    base = RunConfig(data="x.csv")
    assert (data_budget(base, 106).steps, data_budget(base, 106).eval_every) == (200, 10)
    assert (data_budget(base, 1000).steps, data_budget(base, 1000).eval_every) == (1875, 93)
    assert (data_budget(base, 10**6).steps, data_budget(base, 10**6).eval_every) == (2000, 100)
    path = _csv(tmp_path / "c.csv")
    exp = fpt.build(data=str(path), body=tiny_bert_dir, init="random", device="cpu")  # neither set: both fitted
    assert (exp.config.steps, exp.config.eval_every) == (200, 10)
    exp = fpt.build(data=str(path), body=tiny_bert_dir, init="random", device="cpu", steps=7)  # steps kept
    assert (exp.config.steps, exp.config.eval_every) == (7, 7)
    exp = fpt.build(RunConfig(data=str(path), body=tiny_bert_dir, init="random", device="cpu"))  # a config: as is
    assert (exp.config.steps, exp.config.eval_every) == (2000, 50)

"""cf_difference: the closed-form fit's second half of members read a series' first difference (round 3's study,
bench/closed_form_study.py's ``diff_members``): the tokeniser cuts it, the members read it, a saved run reads new
inputs the same way, and other data is refused."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import yaml
from tests.test_closed_form_data import _unequal_ts
from tests.test_predictor import _table

import fpt
from fpt.cli import main
from fpt.config import RunConfig
from fpt.data.tokenisers import SeriesTokens, first_difference
from fpt.errors import ConfigError
from fpt.feature_map import resolve
from fpt.model import InputSpec
from fpt.pipeline import build_model

FLAGS = ["--init", "random", "--fit", "closed-form", "--cf-members", "4", "--device", "cpu", "--quiet",
         "--baselines", "none"]


def _options(diff: bool | None, norm: str = "global") -> SimpleNamespace:
    return SimpleNamespace(series_patch=3, series_stride=None, series_norm=norm, cf_difference=diff)


@pytest.mark.parametrize("norm", ["global", "series", "none"])
def test_tokens_hold_the_series_then_its_difference_tokenised_as_a_series_of_its_own(norm):
    rng = np.random.default_rng(0)
    series = [rng.normal(size=(2, n)).cumsum(1) * 5 + 3 for n in (7, 9, 8)]
    plain = SeriesTokens.fit_from(series, _options(None, norm), {})
    both = SeriesTokens.fit_from(series, _options(True, norm), {})
    # the study's way: the difference (first point 0) as the training series, normalised by its own statistics
    alone = SeriesTokens.fit([first_difference(s) for s in series], 3, None, norm)
    x, lengths = both(series)
    x_plain, lengths_plain = plain(series)
    x_diff, _ = alone([first_difference(s) for s in series])
    d = plain.spec()["token_dim"]
    assert x.shape == (3, plain.max_tokens, 2 * d) and both.spec()["token_dim"] == 2 * d
    assert torch.equal(lengths, lengths_plain)
    assert torch.equal(x[..., :d], x_plain)
    assert torch.allclose(x[..., d:], x_diff)
    assert first_difference(series[0])[:, 0].tolist() == [0.0, 0.0]
    # saved and read back (data.json); without the option data.json is as before it existed
    back = SeriesTokens(**SeriesTokens.check_json(json.loads(json.dumps(both.to_json()))))
    assert torch.equal(back(series)[0], x)
    assert "difference" not in plain.to_json()


def test_members_from_half_of_e_read_the_difference_and_the_tokens_stay_the_series(tiny_bert_dir):
    config = RunConfig(body=tiny_bert_dir, init="random", fit="closed-form", cf_members=4, cf_scales="1",
                       cf_difference=True, data="x.ts")
    model = build_model(config, InputSpec(seq_len=6, num_classes=3, token_dim=8)).eval()
    plain = build_model(RunConfig(body=tiny_bert_dir, init="random", fit="closed-form", cf_members=4, cf_scales="1"),
                        InputSpec(seq_len=6, num_classes=3, token_dim=4))
    assert model.num_features == plain.num_features == 4 * 32 + 6 * 4  # members read 4 values a token, as the series
    x = torch.randn(2, 6, 8)
    moved = x.clone()
    moved[..., 4:] += 1.0  # the difference's half only
    with torch.no_grad():
        a, b = model.features(x)[:, 0], model.features(moved)[:, 0]
        member2 = model.member_features(2, x)
        h = model.body.block(0, model.body.embed(model.input[2](x[..., 4:])), None).amax(1)
    same = (a - b).abs().reshape(2, -1)
    assert same[:, : 2 * 32].max() == 0 and same[:, 4 * 32:].max() == 0  # members 0, 1 and the tokens: the series
    assert same[:, 2 * 32: 3 * 32].max() > 0 and same[:, 3 * 32: 4 * 32].max() > 0  # members 2, 3: the difference
    assert torch.allclose(member2, h, atol=1e-6)


def test_it_resolves_with_the_design_and_needs_the_closed_form_fit(tiny_bert_dir):
    assert resolve(RunConfig(fit="closed-form")).cf_difference is False  # config.yaml records it
    assert RunConfig().cf_difference is None
    with pytest.raises(ConfigError, match="cf_difference.*fit=closed-form"):
        RunConfig(data="x.tsv", cf_difference=True)
    with pytest.raises(ConfigError, match="cf_difference apply only to your own dataset"):
        RunConfig(fit="closed-form", cf_difference=True)
    with pytest.raises(ConfigError, match="cf_difference"):
        build_model(RunConfig(body=tiny_bert_dir, init="random", fit="closed-form", cf_difference=True, data="x.ts"),
                    InputSpec(seq_len=6, num_classes=3, vocab_size=9))


def test_a_saved_run_predicts_new_series_as_its_own_test_figures(tmp_path, tiny_bert_dir):
    _unequal_ts(tmp_path / "r_TRAIN.ts", 30, 0)
    _unequal_ts(tmp_path / "r_TEST.ts", 12, 1)
    out = tmp_path / "run"
    assert main(["train", "--data", str(tmp_path / "r_TRAIN.ts"), "--body", tiny_bert_dir, *FLAGS,
                 "--cf-difference", "true", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert yaml.safe_load((out / "config.yaml").read_text())["cf_difference"] is True
    model = fpt.load(out)
    assert model.score(str(tmp_path / "r_TEST.ts"))["accuracy"] == pytest.approx(summary["test_accuracy"], abs=1e-6)


def test_a_table_is_refused_on_one_line_naming_the_field(tmp_path, tiny_bert_dir, capsys):
    _table(tmp_path / "train.csv", 40, 0)
    code = main(["train", "--data", str(tmp_path / "train.csv"), "--body", tiny_bert_dir, *FLAGS,
                 "--cf-difference", "true", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and any("'cf_difference'=true" in line and "drop it" in line for line in err)
    assert not (tmp_path / "run" / "summary.json").exists()


def test_the_onnx_raw_tokeniser_cuts_the_difference_as_the_tokeniser():
    from fpt.onnx_raw import SeriesRaw

    rng = np.random.default_rng(1)
    series = [rng.normal(size=(2, 9)).cumsum(1) for _ in range(4)]
    series[1][0, 4] = np.nan  # a missing point: the mean, in the series and in both differences beside it
    tok = SeriesTokens.fit_from(series, _options(True), {})
    raw = SeriesRaw(tok, 9)(torch.tensor(np.stack(series), dtype=torch.float32))
    assert torch.allclose(raw, tok(series)[0], atol=1e-5)

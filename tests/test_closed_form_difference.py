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


def updown_series() -> tuple[np.ndarray, np.ndarray]:
    """30 random walks of 2 channels x 12 points, labelled up / down by a level shift (the estimators' series)."""
    rng = np.random.default_rng(3)
    y = np.array(["up", "down"] * 15)
    return rng.normal(size=(30, 2, 12)).cumsum(-1) + 2 * (y == "up")[:, None, None], y


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
    with pytest.raises(ConfigError, match="cf_difference.*fit='closed-form'"):
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


# --- the default for series (issue 40: round 3's TRAIN-only CV chose it) -------------------------------------------

DEFAULT_FLAGS = ["--init", "random", "--fit", "closed-form", "--cf-members", "2", "--device", "cpu", "--quiet",
                 "--baselines", "none"]


def test_the_data_stage_decides_it_from_the_fit():
    from fpt.data.base import RawData, Split
    from fpt.tasks.user_data import DataOptions, fit_preprocessing

    rng = np.random.default_rng(2)
    raw = RawData("timeseries", {"train": Split([rng.normal(size=(2, 9)) for _ in range(6)], np.array([[0], [1]] * 3),
                                                "t")}, ["y"], "t")

    def cut(**fields):
        return fit_preprocessing(raw, DataOptions(data="t.ts", series_patch=3, **fields), "classification").tokeniser

    assert cut(fit="closed-form").difference and cut(fit="closed-form").spec()["token_dim"] == 2 * 2 * 3
    assert not cut(fit="gradient").difference and not cut(fit="auto").difference and not cut().difference
    assert not cut(fit="closed-form", cf_difference=False).difference and cut(fit="auto", cf_difference=True).difference
    assert cut(fit="closed-form", cf_difference=True).difference


def test_the_data_options_are_checked_as_the_run_fields_they_mirror():
    from fpt.tasks.user_data import DataOptions

    for fit in ("closed-form", "auto"):
        assert DataOptions(data="t.ts", fit=fit, cf_difference=True).cf_difference
    with pytest.raises(ConfigError, match="config field 'cf_difference'=True is read by the closed-form fit's"):
        RunConfig(data="t.ts", cf_difference=True)  # fit gradient
    with pytest.raises(ConfigError, match="data option 'cf_difference'=True is read by the closed-form fit's"):
        DataOptions(data="t.ts", cf_difference=True)  # tokens with the difference for a gradient run: refused alike


def test_a_series_closed_form_fit_reads_the_difference_unless_told_and_predicts_as_it_reported(tmp_path,
                                                                                               tiny_bert_dir):
    _unequal_ts(tmp_path / "r_TRAIN.ts", 30, 0)
    _unequal_ts(tmp_path / "r_TEST.ts", 12, 1)
    for given, expected in (([], True), (["--cf-difference", "false"], False)):
        out = tmp_path / f"run{expected}"
        assert main(["train", "--data", str(tmp_path / "r_TRAIN.ts"), "--body", tiny_bert_dir, *DEFAULT_FLAGS,
                     *given, "--out", str(out)]) == 0
        assert yaml.safe_load((out / "config.yaml").read_text())["cf_difference"] is expected
        assert json.loads((out / "data.json").read_text())["tokeniser"].get("difference", False) is expected
        summary = json.loads((out / "summary.json").read_text())
        model = fpt.load(out)
        assert model.score(str(tmp_path / "r_TEST.ts"))["accuracy"] == pytest.approx(summary["test_accuracy"],
                                                                                      abs=1e-6)


def test_gradient_training_and_other_data_read_no_difference(tmp_path, tiny_bert_dir):
    _unequal_ts(tmp_path / "r_TRAIN.ts", 30, 0)
    gradient = fpt.build(data=str(tmp_path / "r_TRAIN.ts"), body=tiny_bert_dir, init="random", fit="gradient",
                         steps=2, device="cpu")
    assert gradient.config.cf_difference is None and "difference" not in gradient.data.fitted["tokeniser"]
    _table(tmp_path / "train.csv", 40, 0)
    table = fpt.build(data=str(tmp_path / "train.csv"), body=tiny_bert_dir, init="random", fit="closed-form",
                      cf_members=2, device="cpu")
    assert table.config.cf_difference is False
    series = fpt.build(data=str(tmp_path / "r_TRAIN.ts"), body=tiny_bert_dir, init="random", fit="closed-form",
                       cf_members=2, device="cpu")
    assert series.config.cf_difference is True and series.data.spec.token_dim == 2 * gradient.data.spec.token_dim


def test_a_config_and_tokens_that_disagree_are_refused(tmp_path, tiny_bert_dir):
    from dataclasses import replace

    from fpt.pipeline import assemble, task_data

    _unequal_ts(tmp_path / "r_TRAIN.ts", 30, 0)
    config = RunConfig(data=str(tmp_path / "r_TRAIN.ts"), body=tiny_bert_dir, init="random", fit="closed-form",
                       cf_members=2, device="cpu")
    plain, both = task_data(replace(config, cf_difference=False)), task_data(config)
    assert assemble(config, plain).config.cf_difference is False  # left None: what the tokeniser did
    # half of each univariate token read as the difference (or the difference as the series): refused
    with pytest.raises(ConfigError, match="'cf_difference'=true, but the series was tokenised without"):
        assemble(replace(config, cf_difference=True), plain)
    with pytest.raises(ConfigError, match="'cf_difference'=false, but the series was tokenised with its"):
        assemble(replace(config, cf_difference=False), both)


def test_fit_auto_tokenises_each_candidate_for_its_own_fit(tmp_path, tiny_bert_dir):
    from dataclasses import replace

    from fpt.select import AUTO, choose_fit

    _unequal_ts(tmp_path / "r_TRAIN.ts", 30, 0)
    config = RunConfig(data=str(tmp_path / "r_TRAIN.ts"), body=tiny_bert_dir, init="random", fit="auto", steps=2,
                       eval_every=2, batch_size=8, cf_members=2, device="cpu")
    closed = choose_fit(config, 2, choice=replace(AUTO, gradient_budget_s=0.0))
    assert closed.config.cf_difference is None and closed.experiment.config.cf_difference is True
    assert closed.experiment.data.fitted["tokeniser"]["difference"] is True
    told = choose_fit(replace(config, cf_difference=False), 2, choice=replace(AUTO, gradient_budget_s=0.0))
    assert told.experiment.config.cf_difference is False
    # given true, fit=auto takes it (its closed-form candidate reads it) and the gradient candidate drops it
    gradient = choose_fit(replace(config, cf_difference=True), 2,
                          choice=replace(AUTO, candidates=({"fit": "gradient"},), gradient_budget_s=float("inf")))
    assert gradient.config.fit == "gradient" and gradient.config.cf_difference is None


# given true: the gradient runs drop it on both paths (cross_validate's fold runs, one run on validation)
@pytest.mark.parametrize(("given", "protocol"), [(None, "k-fold"), (True, "k-fold"), (False, "validation"),
                                                 (True, "validation")])
def test_fit_auto_builds_the_closed_form_candidate_with_the_difference_and_the_gradient_runs_without(
        tmp_path, tiny_bert_dir, monkeypatch, given, protocol):
    import math
    from dataclasses import replace

    import fpt.select
    from fpt.select import AUTO, choose_fit

    _unequal_ts(tmp_path / "r_TRAIN.ts", 30, 0)
    built, real = [], fpt.select.build

    def recorded(config, *args, **kwargs):  # every experiment the choice builds: its candidates and fold runs
        exp = real(config, *args, **kwargs)
        built.append((config.fit, config.cf_difference, exp.config.cf_difference,
                      exp.data.fitted["tokeniser"].get("difference", False)))
        return exp

    monkeypatch.setattr(fpt.select, "build", recorded)
    config = RunConfig(data=str(tmp_path / "r_TRAIN.ts"), body=tiny_bert_dir, init="random", fit="auto", steps=2,
                       eval_every=2, batch_size=8, cf_members=2, device="cpu", cf_difference=given)
    choice = replace(AUTO, gradient_budget_s=math.inf, cv_max=1000 if protocol == "k-fold" else 10)
    got = choose_fit(config, 2, choice=choice)
    assert got.protocol == protocol and got.selection.candidates == [{"fit": "closed-form"}, {"fit": "gradient"}]
    cut = given is not False  # a series' closed-form fit reads its first difference unless told not to
    assert [b for b in built if b[0] == "closed-form"] == [("closed-form", given, cut, cut)]
    runs = [b for b in built if b[0] != "closed-form"]  # k-fold: one per fold; validation: one
    assert runs == [("gradient", None, None, False)] * (2 if protocol == "k-fold" else 1)
    assert got.config.cf_difference == (given if got.config.fit == "closed-form" else None)


def test_the_sklearn_estimators_series_path_reads_it(tiny_bert_dir):
    from fpt.sklearn import FPTClassifier

    X, y = updown_series()
    small = {"body": tiny_bert_dir, "init": "random", "device": "cpu", "fitting": "closed-form"}
    clf = FPTClassifier(**small, options={"cf_members": 2}).fit(X, y)
    assert clf.experiment_.config.cf_difference is True and clf.preprocessing_.tokeniser.difference
    tokens = clf.experiment_.data.eval_sets["train"].x  # fpt.sklearn holds no test split: train is reported
    assert tokens.shape[-1] == 2 * 2 * clf.preprocessing_.tokeniser.patch
    assert (clf.predict(X) == y).mean() == pytest.approx(clf.score(X, y))
    off = FPTClassifier(**small, options={"cf_members": 2, "cf_difference": False}).fit(X, y)
    assert off.experiment_.config.cf_difference is False and not off.preprocessing_.tokeniser.difference
    table = FPTClassifier(**small, options={"cf_members": 2}).fit(X[:, 0], y)  # a 2-D X: a table by default
    assert table.experiment_.config.cf_difference is False

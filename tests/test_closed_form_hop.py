"""cf_hop: a closed-form member's merged windows side by side, every half window or at every token (round 14's
study, bench/closed_form_study.py's ``hop``): the windows each reads, that padding never changes an example's
features, a series' default and its members within the reading budget (round 15), and runs saved before it."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch
from tests.test_closed_form_data import _unequal_ts
from tests.test_predictor import _table

import fpt
from fpt.config import RunConfig, from_saved
from fpt.errors import ConfigError
from fpt.feature_map import DEFAULTS, FeatureMap, member_tokens, merge_tokens, options, resolve, windows
from fpt.model import InputSpec
from fpt.pipeline import build_model


def _map(body, spec, **design) -> FeatureMap:
    return FeatureMap(body, spec, dataclasses.replace(DEFAULTS, **design), seed=2, input_init="gpt2",
                      padding="mask").eval()  # the body's dropout off, as fpt.closed_form reads features


def test_windows_side_by_side_are_the_tokens_reshaped_and_overlapping_ones_slide():
    x = torch.arange(2 * 7 * 3, dtype=torch.float).reshape(2, 7, 3)  # (B, T, d)
    lengths = torch.tensor([7, 3])
    side, n = merge_tokens(x, lengths, 4)
    padded = torch.cat([x, torch.zeros(2, 1, 3)], 1)
    assert torch.equal(side, padded.reshape(2, 2, 12)) and n.tolist() == [2, 1]
    assert torch.equal(merge_tokens(x, lengths, 4, 4)[0], side)  # hop = k: the same
    every, n = merge_tokens(x, lengths, 4, 1)
    assert every.shape == (2, 4, 12) and n.tolist() == [4, 1]  # starts 0..3; a length of 3 holds one window's start
    for i in range(4):
        assert torch.equal(every[:, i], x[:, i:i + 4].reshape(2, 12))  # window i: tokens i..i+3, token by token
    half, n = merge_tokens(x, lengths, 4, 2)
    assert half.shape == (2, 3, 12) and torch.equal(half[:, 2], padded[:, 4:8].reshape(2, 12)) and n.tolist() == [3, 1]
    assert merge_tokens(x, lengths, 1, 1)[0] is x
    # the count, as the tokeniser counts its windows: 1 + ceil((T - k) / hop), at least 1
    assert [windows(t, 4, 1) for t in (1, 4, 5, 64)] == [1, 1, 2, 61]
    assert windows(torch.tensor([1, 4, 5, 64]), 4, 1).tolist() == [1, 1, 2, 61]
    assert windows(64, 16, 8) == 7 and windows(64, 16, 16) == 4


def test_hops_are_checked_and_give_each_member_its_windows(tiny_bert_dir):
    with pytest.raises(ConfigError, match="cf_hop"):
        options(RunConfig(fit="closed-form", cf_hop="two"))
    spec = InputSpec(seq_len=16, num_classes=2, token_dim=2)
    body = build_model(RunConfig(body=tiny_bert_dir, init="random", fit="closed-form"), spec).body
    design = {"members": 5, "scales": "1,2,4,8,16", "poolings": "max,flatten"}
    side, half, one = (_map(body, spec, hop=h, **design) for h in ("scale", "half", "one"))
    assert side.positions == (16, 8, 4, 2, 1) and half.positions == (16, 15, 7, 3, 1)
    assert one.positions == (16, 15, 13, 9, 1) and one.hops == (1, 1, 1, 1, 1)
    assert one.num_features == 5 * 32 + sum(one.positions) * 32 + 16 * 2  # max, flatten per member, the tokens
    x = torch.randn(3, 16, 2)
    with torch.no_grad():
        assert one.features(x).shape == (3, 1, one.num_features)
        # scale 1 merges nothing: every hop reads the same first member
        assert torch.equal(one.member_features(0, x), side.member_features(0, x))
        assert not torch.allclose(one.member_features(2, x)[:, :32], side.member_features(2, x)[:, :32])  # max


def test_an_examples_features_do_not_depend_on_the_batch_it_is_padded_into(tiny_bert_dir):
    spec = InputSpec(seq_len=12, num_classes=2, token_dim=2)
    body = build_model(RunConfig(body=tiny_bert_dir, init="random", fit="closed-form"), spec).body
    model = _map(body, spec, members=4, scales="1,2,4,8", hop="one", poolings="max,mean")
    short = torch.randn(1, 5, 2)
    long = torch.randn(1, 12, 2)
    batch = torch.cat([torch.cat([short, torch.zeros(1, 7, 2)], 1), long])
    with torch.no_grad():
        alone = model.features(short, torch.tensor([5]))
        together = model.features(batch, torch.tensor([5, 12]))
    torch.testing.assert_close(alone[0], together[0], rtol=1e-5, atol=1e-5)


def test_the_reading_budget_picks_the_members_and_past_it_the_windows_side_by_side():
    one = RunConfig(fit="closed-form", cf_hop="one")
    per = {m: member_tokens(64, m, (1, 2, 4, 8, 16), "one") for m in (10, 20, 30)}
    assert per[10] == 2 * (64 + 63 + 61 + 57 + 49) and per[30] == 3 * per[10]
    budget = DEFAULTS.read_budget

    def size(examples: int, fitted: int = 50) -> tuple[int, int, int]:
        return examples * 64, fitted, 64

    assert resolve(one, size(budget // per[30])).cf_members == 30
    assert resolve(one, size(budget // per[30] + 1)).cf_members == 20
    assert resolve(one, size(budget // per[20] + 1)).cf_members == 10
    past = resolve(one, size(budget // per[10] + 1))
    assert (past.cf_members, past.cf_hop) == (DEFAULTS.members, "scale")
    assert resolve(one, size(10, DEFAULTS.small_fitted + 1)).cf_members == 10  # a head too wide to fit: E=10
    given = resolve(dataclasses.replace(one, cf_members=30), size(10 * budget))
    assert (given.cf_members, given.cf_hop) == (30, "one")  # given members keep their hop
    # the windows side by side keep the example-token gate they had
    side = RunConfig(fit="closed-form")
    assert resolve(side, (DEFAULTS.small_reads, 10, 64)).cf_members == DEFAULTS.small_members
    assert resolve(side, (DEFAULTS.small_reads + 1, 10, 64)).cf_members == DEFAULTS.members


def test_a_series_slides_its_windows_a_table_keeps_them_side_by_side(tmp_path, tiny_bert_dir):
    _unequal_ts(tmp_path / "r_TRAIN.ts", 30, 0)
    series = fpt.build(data=str(tmp_path / "r_TRAIN.ts"), body=tiny_bert_dir, init="random", fit="closed-form",
                       device="cpu")
    assert series.config.cf_hop == "one" and series.config.cf_members == 30  # a small series: within the budget
    assert set(series.model.hops) == {1}
    told = fpt.build(data=str(tmp_path / "r_TRAIN.ts"), body=tiny_bert_dir, init="random", fit="closed-form",
                     cf_members=2, cf_hop="scale", device="cpu")
    assert told.config.cf_hop == "scale" and told.model.hops == tuple(told.model.scales)
    _table(tmp_path / "train.csv", 40, 0)
    table = fpt.build(data=str(tmp_path / "train.csv"), body=tiny_bert_dir, init="random", fit="closed-form",
                      device="cpu")
    assert table.config.cf_hop == DEFAULTS.hop == "scale" and table.config.cf_members == DEFAULTS.small_members
    gradient = fpt.build(data=str(tmp_path / "r_TRAIN.ts"), body=tiny_bert_dir, init="random", fit="gradient",
                         steps=2, device="cpu")
    assert gradient.config.cf_hop is None


def test_a_series_run_records_its_hop_and_predicts_as_it_reported(ragged_series_run):
    assert ragged_series_run["config"]["cf_hop"] == "one"  # series_run_as_reported checked it predicts as reported
    record = json.loads((ragged_series_run["run"] / "summary.json").read_text())["closed_form"]
    exp = fpt.build(fpt.Run(ragged_series_run["run"]).config())
    assert record["hop"] == exp.config.cf_hop == "one" and record["members"] == 2
    # every member's windows over every split's examples (the odd member twice: cf_series_norm=choose), as the
    # reading budget counts them
    per_example = member_tokens(exp.data.spec.seq_len, 2, (1, 2, 4, 8, 16), "one", "choose")
    assert sum(exp.model.positions) + exp.model.positions[1] == per_example
    assert record["member_tokens"] == record["examples_read"] * per_example and record["examples_read"] == 30 + 12


def test_a_closed_form_run_saved_before_the_hop_existed_reads_side_by_side():
    saved = {"preset": "fast", "fit": "closed-form", "data": "x.ts", "cf_members": 30, "cf_scales": "1,2,4,8,16"}
    assert from_saved(saved).cf_hop == "scale"
    assert from_saved({**saved, "cf_hop": "one"}).cf_hop == "one"
    assert from_saved({"preset": "fast", "fit": "gradient"}).cf_hop is None


def test_a_series_run_at_every_token_exports_to_onnx_with_unequal_lengths(ragged_series_run, ragged_series_export):
    """The windows' unfold and their counts from each series' length are traced: the ONNX graph predicts as the run."""
    out, exported = ragged_series_run["run"], ragged_series_export
    assert fpt.Run(out).config().cf_hop == "one"
    doc = json.loads((exported / "config.json").read_text())["onnx"]
    assert doc["max_abs_diff"] < 1e-4 and "lengths" in doc["inputs"]
    model = fpt.load(out)
    test = str(ragged_series_run["root"] / "r_TEST.ts")
    assert fpt.load(exported).logits(test) == pytest.approx(model.logits(test), abs=1e-5)


def test_the_scikit_learn_estimators_slide_a_series_windows_and_not_a_tables(tiny_bert_dir):
    from tests.test_closed_form_difference import updown_series

    from fpt.sklearn import FPTClassifier

    X, y = updown_series()
    small = {"body": tiny_bert_dir, "init": "random", "device": "cpu", "fitting": "closed-form"}
    clf = FPTClassifier(**small, options={"cf_members": 2}).fit(X, y)
    assert clf.experiment_.config.cf_hop == "one" and set(clf.experiment_.model.hops) == {1}
    off = FPTClassifier(**small, options={"cf_members": 2, "cf_hop": "scale"}).fit(X, y)
    assert off.experiment_.config.cf_hop == "scale"
    table = FPTClassifier(**small, options={"cf_members": 2}).fit(X[:, 0], y)  # a 2-D X: a table by default
    assert table.experiment_.config.cf_hop == "scale"


def test_fit_auto_gives_its_closed_form_candidate_the_series_hop(tmp_path, tiny_bert_dir):
    from fpt.select import AUTO, choose_fit

    _unequal_ts(tmp_path / "r_TRAIN.ts", 30, 0)
    config = RunConfig(data=str(tmp_path / "r_TRAIN.ts"), body=tiny_bert_dir, init="random", fit="auto", steps=2,
                       eval_every=2, batch_size=8, device="cpu")
    closed = choose_fit(config, 2, choice=dataclasses.replace(AUTO, gradient_budget_s=0.0))
    assert closed.config.cf_hop is None and closed.experiment.config.cf_hop == "one"
    assert closed.experiment.config.cf_members == 30  # the reading budget's choice for a small series

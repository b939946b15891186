"""cf_gains: the closed-form fit's members' input layers scaled along the scale ladder (round 13's study,
bench/closed_form_study.py's ``gains``): which member gets which gain, that the gain is the seeded draw scaled, that a
series takes 0.25,4 and every other run 1, and that runs saved before the field read as gain 1."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from tests.test_closed_form_data import _unequal_ts
from tests.test_predictor import _table

import fpt
from fpt.config import RunConfig, from_saved
from fpt.errors import ConfigError
from fpt.feature_map import DEFAULTS, FeatureMap, gain_factors, resolve
from fpt.model import InputSpec
from fpt.pipeline import build_model


def _map(body, spec, **design) -> FeatureMap:
    return FeatureMap(body, spec, dataclasses.replace(DEFAULTS, **design), seed=2, input_init="gpt2", padding="mask")


def test_gains_are_read_and_checked():
    assert gain_factors("0.25, 4") == (0.25, 4.0) and gain_factors("1") == (1.0,)
    for bad in ("0", "-1", "x", "", "1,,2", "inf"):
        with pytest.raises(ConfigError, match="cf_gains"):
            gain_factors(bad)


def test_a_members_gain_follows_its_rung_of_the_ladder_the_differences_rungs_after_the_series(tiny_bert_dir):
    spec = InputSpec(seq_len=32, num_classes=2, token_dim=4)  # each token: a window of 2, then its difference's
    body = build_model(RunConfig(body=tiny_bert_dir, init="random", fit="closed-form"), spec).body
    # one draw of the ladder (E=10, 5 scales, the last 5 on the difference): gains alternate member by member
    ten = _map(body, spec, members=10, difference=True, gains="0.25,4")
    assert ten.gains == (0.25, 4, 0.25, 4, 0.25) + (4, 0.25, 4, 0.25, 4)
    # three draws (E=30): each (scale, source) keeps one gain, as round 13 measured it (member e of each draw of 10)
    thirty = _map(body, spec, members=30, difference=True, gains="0.25,4")
    series, diff = (0.25, 4, 0.25, 4, 0.25), (4, 0.25, 4, 0.25, 4)
    assert thirty.gains == series * 3 + diff * 3
    by_group = {thirty.scales[e] * (2 if e >= thirty.first_difference else 1): thirty.gains[e] for e in range(30)}
    assert all(thirty.gains[e] == by_group[thirty.scales[e] * (2 if e >= 15 else 1)] for e in range(30))
    # no difference: the rungs of the ladder alone; one gain: every member at it
    plain = _map(body, InputSpec(seq_len=8, num_classes=2, token_dim=2), members=6, scales="1,2,4", gains="0.25,4")
    assert plain.gains == (0.25, 4, 0.25, 0.25, 4, 0.25)
    assert set(_map(body, spec, members=4, gains="1").gains) == {1.0}


def test_a_members_layer_is_its_seeded_draw_times_its_gain(tiny_bert_dir):
    spec = InputSpec(seq_len=6, num_classes=3, token_dim=4)
    drawn = build_model(RunConfig(body=tiny_bert_dir, init="random", fit="closed-form", cf_members=3, seed=2,
                                  cf_scales="1,1,1"), spec)
    body = drawn.body
    scaled = _map(body, spec, members=3, scales="1,1,1", gains="0.25,4")  # three rungs of one scale
    assert _map(body, spec, members=3, scales="1", gains="0.25,4").gains == (0.25,) * 3  # one rung: one gain
    for e, gain in enumerate((0.25, 4.0, 0.25)):
        assert torch.allclose(scaled.input[e].weight, gain * drawn.input[e].weight)
        assert torch.equal(scaled.input[e].bias, torch.zeros_like(scaled.input[e].bias))
    x = torch.randn(5, 6, 4)
    with torch.no_grad():  # the body reads the scaled tokens: the features differ from the layers as drawn
        assert not torch.allclose(scaled.features(x), _map(body, spec, members=3, scales="1,1,1").features(x))
    # member 0 at gain 1 stays the input layer a gradient run starts from
    gradient = build_model(RunConfig(body=tiny_bert_dir, init="random", seed=2), spec)
    assert torch.equal(_map(body, spec, members=2).input[0].weight, gradient.input.weight)


def test_symbol_ids_refuse_gains_other_than_one(tiny_bert_dir):
    spec = InputSpec(seq_len=5, num_classes=2, vocab_size=9)
    config = RunConfig(body=tiny_bert_dir, init="random", fit="closed-form", cf_members=2)
    assert build_model(config, spec).gains == (1.0, 1.0)
    with pytest.raises(ConfigError, match="'cf_gains'='0.25,4' multiplies a linear input layer.*drop cf_gains"):
        build_model(dataclasses.replace(config, cf_gains="0.25,4"), spec)


def test_a_series_takes_its_declared_gains_other_data_and_other_fits_none(tmp_path, tiny_bert_dir):
    _unequal_ts(tmp_path / "r_TRAIN.ts", 30, 0)
    series = fpt.build(data=str(tmp_path / "r_TRAIN.ts"), body=tiny_bert_dir, init="random", fit="closed-form",
                       cf_members=2, device="cpu")
    # member 1 reads the difference at scale 2: rung 1 + 5 of the ladder, so gain 0.25 as member 0's
    assert series.config.cf_gains == "0.25,4" and series.model.gains == (0.25, 0.25)
    told = fpt.build(data=str(tmp_path / "r_TRAIN.ts"), body=tiny_bert_dir, init="random", fit="closed-form",
                     cf_members=2, cf_gains="1", device="cpu")
    assert told.config.cf_gains == "1" and told.model.gains == (1.0, 1.0)
    gradient = fpt.build(data=str(tmp_path / "r_TRAIN.ts"), body=tiny_bert_dir, init="random", fit="gradient",
                         steps=2, device="cpu")
    assert gradient.config.cf_gains is None
    _table(tmp_path / "train.csv", 40, 0)
    table = fpt.build(data=str(tmp_path / "train.csv"), body=tiny_bert_dir, init="random", fit="closed-form",
                      cf_members=2, device="cpu")
    assert table.config.cf_gains == DEFAULTS.gains == "1"
    assert resolve(RunConfig(fit="closed-form")).cf_gains == "1"  # not --data: the design's default, recorded


def test_a_series_run_records_its_gains_and_predicts_as_it_reported(ragged_series_run):
    assert ragged_series_run["config"]["cf_gains"] == "0.25,4"  # series_run_as_reported checked it predicts as reported


def test_a_closed_form_run_saved_before_gains_existed_reads_as_gain_one():
    saved = {"preset": "fast", "fit": "closed-form", "data": "x.ts", "cf_members": 30, "cf_scales": "1,2,4,8,16"}
    assert from_saved(saved).cf_gains == "1"
    assert from_saved({**saved, "cf_gains": "0.25,4"}).cf_gains == "0.25,4"
    assert from_saved({"preset": "fast", "fit": "gradient"}).cf_gains is None


def test_fit_auto_gives_its_closed_form_candidate_the_series_gains(tmp_path, tiny_bert_dir):
    from fpt.select import AUTO, choose_fit

    _unequal_ts(tmp_path / "r_TRAIN.ts", 30, 0)
    config = RunConfig(data=str(tmp_path / "r_TRAIN.ts"), body=tiny_bert_dir, init="random", fit="auto", steps=2,
                       eval_every=2, batch_size=8, cf_members=2, device="cpu")
    closed = choose_fit(config, 2, choice=dataclasses.replace(AUTO, gradient_budget_s=0.0))
    assert closed.config.cf_gains is None and closed.experiment.config.cf_gains == "0.25,4"
    told = choose_fit(dataclasses.replace(config, cf_gains="1"), 2, choice=dataclasses.replace(AUTO, gradient_budget_s=0.0))
    assert told.experiment.config.cf_gains == "1" and told.experiment.model.gains == (1.0, 1.0)


def test_the_scikit_learn_estimators_give_a_series_its_gains_and_a_table_none(tiny_bert_dir):
    from tests.test_closed_form_difference import updown_series

    from fpt.sklearn import FPTClassifier

    X, y = updown_series()
    small = {"body": tiny_bert_dir, "init": "random", "device": "cpu", "fitting": "closed-form"}
    clf = FPTClassifier(**small, options={"cf_members": 2}).fit(X, y)
    assert clf.experiment_.config.cf_gains == "0.25,4" and clf.experiment_.model.gains == (0.25, 0.25)
    off = FPTClassifier(**small, options={"cf_members": 2, "cf_gains": "1"}).fit(X, y)
    assert off.experiment_.config.cf_gains == "1"
    table = FPTClassifier(**small, options={"cf_members": 2}).fit(X[:, 0], y)  # a 2-D X: a table by default
    assert table.experiment_.config.cf_gains == "1"

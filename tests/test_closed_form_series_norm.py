"""cf_series_norm: the odd members of a series' closed-form fit read each series normalised by its own mean and std,
or both ways with the head keeping the reading of the lower leave-one-out error (round 18's study,
bench/closed_form_study.py's ``norm_choice``): the normalisation, the reads and their columns, the choice, a series'
default and a table's, the reading budget, runs saved before it, ONNX."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch
from tests.test_closed_form_data import _unequal_ts
from tests.test_predictor import _table

import fpt
from fpt.closed_form import fit_head, fold_scores
from fpt.config import RunConfig, from_saved
from fpt.data.tokenisers import SeriesTokens
from fpt.errors import ConfigError
from fpt.feature_map import DEFAULTS, FeatureMap, member_reads, member_tokens, options, per_series, resolve
from fpt.model import InputSpec
from fpt.pipeline import build_model


def test_per_series_is_the_tokenisers_own_normalisation_of_each_series_and_channel():
    rng = np.random.default_rng(0)
    series = [rng.normal(3, 5, size=(2, 12)) * [[1], [0.1]], rng.normal(-1, 2, size=(2, 8))]
    global_, own = (SeriesTokens.fit(series, 4, None, norm) for norm in ("global", "series"))
    x, lengths = global_(series)
    want, _ = own(series)
    got = per_series(x, lengths, 4)
    assert torch.allclose(got, want, atol=1e-5)  # lengths a multiple of the patch: exactly the tokeniser's
    assert (got[1, 2:] == 0).all()  # zeros past the end, as the tokeniser pads
    # an affine map of each channel (another global normalisation) changes nothing; a constant channel goes to 0
    assert torch.allclose(per_series(x * 3 - 2, lengths, 4), got, atol=1e-5)
    flat = per_series(torch.ones(1, 3, 4), None, 4)
    assert torch.equal(flat, torch.zeros(1, 3, 4))
    constant = torch.full((1, 63, 16), 123.456)  # its float32 mean is off by rounding: a spread of ~3e-5
    assert per_series(constant, None, 16).abs().max() < 1e-4  # its rounding left as it is, not blown up to +-1
    two = per_series(torch.cat([constant, constant + torch.tensor([0.0, 1.0]).repeat(8)], -1), None, 16)
    assert torch.allclose(two[..., 16:].abs(), torch.ones(1, 63, 16), atol=1e-3)  # a channel of two values: +-1


def test_the_reads_and_the_column_sets_the_head_chooses_between(tiny_bert_dir):
    assert member_reads(4, "global") == ((0, False), (1, False), (2, False), (3, False))
    assert member_reads(4, "alternate") == ((0, False), (1, True), (2, False), (3, True))
    assert member_reads(4, "choose") == ((0, False), (1, False), (2, False), (3, False), (1, True), (3, True))
    with pytest.raises(ConfigError, match="cf_series_norm"):
        options(RunConfig(fit="closed-form", cf_series_norm="each"))
    spec = InputSpec(seq_len=6, num_classes=2, token_dim=4)  # 2 channels x 2 points per token
    body = build_model(RunConfig(body=tiny_bert_dir, init="random", fit="closed-form"), spec).body

    def feature_map(norm: str) -> FeatureMap:
        design = dataclasses.replace(DEFAULTS, members=4, scales="1,2", hop="one", series_norm=norm)
        return FeatureMap(body, spec, design, seed=2, input_init="gpt2", padding="mask", series_patch=2).eval()

    both, alternate, plain = feature_map("choose"), feature_map("alternate"), feature_map("global")
    assert both.num_features == 6 * 32 + 6 * 4 and plain.num_features == alternate.num_features == 4 * 32 + 24
    x = torch.randn(3, 6, 4) * 4 + 1
    lengths = torch.tensor([6, 4, 2])
    with torch.no_grad():
        f, a, g = (m.features(x, lengths)[:, 0] for m in (both, alternate, plain))
    columns = both.norm_columns()
    assert list(columns) == ["global", "alternate"]
    assert torch.allclose(f[:, columns["global"]], g, atol=1e-5)  # the same seeded layers, the same reads
    assert torch.allclose(f[:, columns["alternate"]], a, atol=1e-5)
    assert not torch.allclose(a[:, 32:64], g[:, 32:64])  # member 1 reads another series
    assert plain.norm_columns() is None and alternate.norm_columns() is None
    with pytest.raises(ConfigError, match="cf_series_norm"):  # symbol ids, or no points per channel: not a series
        FeatureMap(body, spec, dataclasses.replace(DEFAULTS, series_norm="choose"), 2, "gpt2", "mask")


def test_the_head_keeps_the_reading_of_the_lower_leave_one_out_error_and_the_folds_reuse_it():
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 15)[:, None]
    noise, signal, tokens = rng.normal(size=(30, 5)), rng.normal(size=(30, 5)) + 3 * y, rng.normal(size=(30, 2))
    x = np.concatenate([rng.normal(size=(30, 5)), noise, signal, tokens], 1)  # reads: member 0, member 1, 1 again
    columns = {"global": np.r_[0:10, 15:17], "alternate": np.r_[0:5, 10:17]}
    w, b, info = fit_head(x, y, True, 2, DEFAULTS, 0, 2, member_widths=[5, 5, 5], norm_columns=columns)
    assert info["series_norm_kept"] == "alternate" and set(info["series_norm_loo"]) == {"global", "alternate"}
    assert info["series_norm_loo"]["alternate"] > info["series_norm_loo"]["global"]
    assert (w[:, 5:10] == 0).all() and (w[:, 10:15] != 0).any()  # the reading not kept weighs nothing
    swapped = {"global": columns["alternate"], "alternate": columns["global"]}
    assert fit_head(x, y, True, 2, DEFAULTS, 0, 2, norm_columns=swapped)[2]["series_norm_kept"] == "global"
    same = {"global": columns["global"], "alternate": columns["global"]}
    assert fit_head(x, y, True, 2, DEFAULTS, 0, 2, norm_columns=same)[2]["series_norm_kept"] == "global"  # a tie
    fixed = fit_head(x, y, True, 2, DEFAULTS, 0, 2, fixed=info, norm_columns=columns)
    assert np.allclose(fixed[0], w) and fixed[2]["series_norm_kept"] == "alternate"
    scores = fold_scores(x, y, True, 2, DEFAULTS, 0, 2, member_widths=[5, 5, 5], norm_columns=columns)
    assert len(scores) == 5 and np.mean(scores) > 0.9


def test_a_series_chooses_its_reading_a_table_reads_as_tokenised_and_the_budget_counts_the_reads(tmp_path,
                                                                                                  tiny_bert_dir):
    _unequal_ts(tmp_path / "r_TRAIN.ts", 30, 0)
    series = fpt.build(data=str(tmp_path / "r_TRAIN.ts"), body=tiny_bert_dir, init="random", fit="closed-form",
                       device="cpu")
    assert series.config.cf_series_norm == "choose" and len(series.model.reads) == 45
    told = fpt.build(data=str(tmp_path / "r_TRAIN.ts"), body=tiny_bert_dir, init="random", fit="closed-form",
                     cf_members=2, cf_series_norm="global", device="cpu")
    assert told.model.reads == ((0, False), (1, False))
    _table(tmp_path / "train.csv", 40, 0)
    table = fpt.build(data=str(tmp_path / "train.csv"), body=tiny_bert_dir, init="random", fit="closed-form",
                      device="cpu")
    assert table.config.cf_series_norm == "global"
    with pytest.raises(ConfigError, match="cf_series_norm"):
        fpt.build(data=str(tmp_path / "train.csv"), body=tiny_bert_dir, init="random", fit="closed-form",
                  cf_series_norm="choose", device="cpu")
    scales = (1, 2, 4, 8, 16)
    assert member_tokens(64, 30, scales, "one", "choose") == member_tokens(64, 30, scales, "one") + sum(
        member_tokens(64, 1, (k,), "one") for k in (2, 8, 1, 4, 16)) * 3  # the odd members' rungs, per draw
    choose = RunConfig(fit="closed-form", cf_hop="one", cf_series_norm="choose")
    per = member_tokens(64, 30, scales, "one", "choose")
    assert resolve(choose, (DEFAULTS.read_budget // per * 64, 50, 64)).cf_members == 30
    assert resolve(choose, ((DEFAULTS.read_budget // per + 1) * 64, 50, 64)).cf_members == 20
    # past E=10 read twice: E=10 at every token read once where that fits (the hop is worth more), else side by side
    ten, once = member_tokens(64, 10, scales, "one", "choose"), member_tokens(64, 10, scales, "one")
    past = resolve(choose, ((DEFAULTS.read_budget // ten + 1) * 64, 50, 64))
    assert (past.cf_members, past.cf_hop, past.cf_series_norm) == (10, "one", "global")
    further = resolve(choose, ((DEFAULTS.read_budget // once + 1) * 64, 50, 64))
    assert (further.cf_members, further.cf_hop, further.cf_series_norm) == (10, "scale", "choose")
    given = resolve(dataclasses.replace(choose, cf_members=10), (10 * DEFAULTS.read_budget, 50, 64))
    assert (given.cf_hop, given.cf_series_norm) == ("one", "choose")


def test_a_series_run_records_its_reading_predicts_as_reported_and_exports_to_onnx(ragged_series_run, request):
    run = ragged_series_run["run"]  # _unequal_ts: the class in a channel's level; predicts as reported (checked)
    assert ragged_series_run["config"]["cf_series_norm"] == "choose"
    record = json.loads((run / "summary.json").read_text())["closed_form"]
    assert record["series_norm"] == "choose" and record["series_norm_kept"] in ("global", "alternate")
    exp = fpt.build(fpt.Run(run).config())
    assert record["member_tokens"] == record["examples_read"] * sum(exp.model.positions[e] for e, _ in exp.model.reads)
    exported = request.getfixturevalue("ragged_series_export")  # skips here without fpt[export]
    assert json.loads((exported / "config.json").read_text())["onnx"]["max_abs_diff"] < 1e-4
    test = str(ragged_series_run["root"] / "r_TEST.ts")
    assert fpt.load(exported).logits(test) == pytest.approx(fpt.load(run).logits(test), abs=1e-5)


def test_a_closed_form_run_saved_before_the_field_existed_reads_the_tokens_as_normalised():
    saved = {"preset": "fast", "fit": "closed-form", "data": "x.ts", "cf_members": 30, "cf_hop": "one"}
    assert from_saved(saved).cf_series_norm == "global"
    assert from_saved({**saved, "cf_series_norm": "choose"}).cf_series_norm == "choose"
    assert from_saved({"preset": "fast", "fit": "gradient"}).cf_series_norm is None


def test_from_500_fitted_examples_the_folds_read_the_full_fits_reading():
    from fpt.closed_form import NORM_PER_FOLD_BELOW

    rng = np.random.default_rng(2)
    n = NORM_PER_FOLD_BELOW
    y = (np.arange(n) % 2)[:, None]
    x = np.concatenate([rng.normal(size=(n, 3)) + y, rng.normal(size=(n, 3)) + 0.5 * y, rng.normal(size=(n, 1))], 1)
    columns = {"global": np.r_[0:3, 6], "alternate": np.r_[3:7]}
    chosen = {"head": "ridge", "alpha": 1.0, "series_norm_kept": "alternate"}
    kept = fold_scores(x, y, True, 2, DEFAULTS, 0, 1, chosen=chosen, norm_columns=columns)
    assert kept == fold_scores(x, y, True, 2, DEFAULTS, 0, 1, norm_columns={"alternate": columns["alternate"]})
    afresh = fold_scores(x[:-2], y[:-2], True, 2, DEFAULTS, 0, 1, chosen=chosen, norm_columns=columns)
    assert afresh == fold_scores(x[:-2], y[:-2], True, 2, DEFAULTS, 0, 1, norm_columns=columns)  # below: per fold
    assert afresh != fold_scores(x[:-2], y[:-2], True, 2, DEFAULTS, 0, 1, norm_columns={"alternate": columns["alternate"]})

"""bench/closed_form_search_rows.py: the rule declared before its figures, and folds whose held-out part never chooses."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from bench_scripts import load

study = load("closed_form_search_rows")


def _rows(cv):
    return [{"dataset": d, "recipe": k, "cv": v} for (d, k), v in cv.items()]


def test_the_subsample_is_adopted_within_both_tolerances_and_not_past_either():
    close = {("a", "all rows"): 0.90, ("a", "2,000 rows"): 0.897, ("b", "all rows"): 0.80, ("b", "2,000 rows"): 0.81}
    got = study.decide(_rows(close))
    assert got["chosen"] == "2,000 rows" and got["worst"] == pytest.approx(-0.003)
    one_set = {**close, ("b", "2,000 rows"): 0.789}  # b 0.011 below: past the set's tolerance
    assert study.decide(_rows(one_set))["chosen"] == "all rows"
    mean = {("a", "all rows"): 0.90, ("a", "2,000 rows"): 0.892, ("b", "all rows"): 0.80, ("b", "2,000 rows"): 0.797}
    assert study.decide(_rows(mean))["chosen"] == "all rows"  # mean -0.0055, each set within 0.01
    partial = {**close, ("c", "all rows"): 0.5}  # c lacks a recipe: not among the sets
    assert study.decide(_rows(partial))["sets"] == ["a", "b"]


def test_each_folds_head_is_chosen_on_its_training_part_alone():
    from fpt.closed_form import fit_head, folds_of
    from fpt.feature_map import DEFAULTS

    rng = np.random.default_rng(0)
    x = rng.normal(size=(120, 12)).astype(np.float32)
    y = (x[:, :3].sum(1) > 0).astype(np.int64)[:, None]
    scores, chosen = study.nested_folds(x, y, True, 2, 2, search_rows=50)
    assert len(scores) == study.FOLDS and all(0.5 <= s <= 1 for s in scores)
    for (train, _), got in zip(folds_of(y, True, study.FOLDS, study.FOLD_SEED), chosen, strict=True):
        info = fit_head(x[train], y[train], True, 2, replace(DEFAULTS, search_rows=50), study.FOLD_SEED, 2)[2]
        assert got["alpha"] == info["alpha"] and got["search"]["of"] == len(train) == 96

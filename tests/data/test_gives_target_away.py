"""gives_target_away (a feature column whose every value comes with one target: a long-format series id, a copy of the
target) agrees with its definition in pandas' groupby, on numbers, texts, missing values and several targets."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from fpt.data.base import gives_target_away, target_codes


def _by_groupby(col: np.ndarray, y: np.ndarray) -> tuple[int, int, int] | None:
    n = len(col)
    if n < 20:
        return None
    keys, _ = pd.factorize(pd.Series(col, dtype=object))
    targets, _ = pd.factorize(pd.Series([tuple(r) for r in np.asarray(y, dtype=object).reshape(n, -1)]))
    table = pd.DataFrame({"key": keys[keys >= 0], "target": targets[keys >= 0]})
    if table.empty or table["target"].nunique() < 2:
        return None
    sizes = table.groupby("key").size()
    if not 2 <= len(sizes) <= n / 3 or table.groupby("key")["target"].nunique().max() != 1:
        return None
    return len(sizes), int(sizes.min()), int(sizes.max())


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_agrees_with_the_groupby_definition(data):
    n = data.draw(st.integers(0, 60))
    groups = data.draw(st.integers(1, 12))
    key = np.asarray(data.draw(st.lists(st.integers(0, groups - 1), min_size=n, max_size=n)), dtype=np.int64)
    per_group = np.asarray(data.draw(st.lists(st.integers(0, 2), min_size=groups, max_size=groups)))
    y = per_group[key]
    if data.draw(st.booleans()):  # a row whose target breaks its group's
        y = y.copy()
        if n:
            y[data.draw(st.integers(0, n - 1))] = 3
    kind = data.draw(st.sampled_from(["int", "float", "text", "missing", "two targets"]))
    col: np.ndarray = key
    if kind == "float":
        col = key * 0.5
    elif kind == "text":
        col = np.asarray([f"id{k}" for k in key], dtype=object)
    elif kind == "missing":
        col = np.where(key % 3 == 0, np.nan, key.astype(np.float64))
    if kind == "two targets":
        y = np.stack([y, np.asarray(["a", "b"], dtype=object)[key % 2]], axis=1)
    assert gives_target_away(col, target_codes(y)) == _by_groupby(col, y)


def test_a_series_id_and_a_copy_of_the_target_give_it_away_and_a_feature_does_not():
    ids = np.repeat(np.arange(10), 4)
    y = np.repeat(np.arange(10) % 2, 4)
    assert gives_target_away(ids, target_codes(y)) == (10, 4, 4)
    assert gives_target_away(np.asarray(["x", "y"], dtype=object)[y], target_codes(y)) == (2, 20, 20)
    assert gives_target_away(np.arange(40) % 5, target_codes(y)) is None  # each value with both targets
    assert gives_target_away(ids, target_codes(np.zeros(40))) is None  # one target: nothing to give away

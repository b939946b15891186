"""The tabular tokeniser's category slots come from a pandas lookup of each value's name among the saved categories
(scikit-learn's OneHotEncoder checked each value in Python: seconds at 200,000 rows), and its names of numbers from
each distinct number. Its tokens equal the old path's, kept here as the reference, on mixed random columns."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from fpt.data.base import is_missing, plain_value
from fpt.data.tokenisers import TabularTokens, _one_hot, category_texts


def _old_category_texts(col: np.ndarray) -> np.ndarray:
    numbers = col.dtype.kind in "iubf"
    return np.array([str(plain_value(v)) if numbers else str(v) for v in col], dtype=object)


def _old_one_hot(col: np.ndarray, missing: np.ndarray, categories: list[str]) -> np.ndarray:
    from sklearn.preprocessing import OneHotEncoder

    known = np.zeros((len(col), 0), dtype=np.float32)
    if categories:
        kept = np.array(categories, dtype=object)[:, None]
        encoder = OneHotEncoder(categories=[kept[:, 0]], handle_unknown="ignore", sparse_output=False,
                                dtype=np.float32).fit(kept)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            known = encoder.transform(_old_category_texts(col)[:, None])
    other = known.sum(axis=1, keepdims=True) == 0
    return np.where(missing[:, None], 0.0, np.concatenate([known, other], axis=1))


POOL = ["a", "b", "1", "1.0", "1.5", "True", "nan", "None", "", "  ", "-0", "0", "é", "<NA>", "2"]


def _columns(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    objects = [rng.choice(POOL), int(rng.integers(-2, 3)), float(rng.integers(-2, 3)), 1.5, True, False, None,
               float("nan"), pd.NA, np.int64(2), np.float32(1.0), np.str_("a")]
    mixed = np.empty(n, dtype=object)
    mixed[:] = [objects[i] if i else rng.choice(POOL) for i in rng.integers(0, len(objects), n)]
    text = np.empty(n, dtype=object)
    text[:] = [None if r < 0.1 else rng.choice(POOL) for r in rng.random(n)]
    floats = rng.integers(-3, 4, n).astype(np.float64)
    floats[rng.random(n) < 0.2] = 1.5
    floats[rng.random(n) < 0.1] = np.nan
    floats[rng.random(n) < 0.05] = -0.0
    return {"mixed": mixed, "text": text, "floats": floats, "ints": rng.integers(-3, 4, n), "bools": rng.random(n) < 0.5,
            "unicode": np.array(rng.choice(POOL, n), dtype=str), "float32": floats.astype(np.float32),
            "empty": np.array([], dtype=object)}


@pytest.mark.parametrize("seed", range(4))
def test_one_hot_slots_equal_the_one_hot_encoder_path(seed):
    rng = np.random.default_rng(seed)
    for name, col in _columns(rng, 400).items():
        assert category_texts(col).tolist() == _old_category_texts(col).tolist(), name
        missing = is_missing(col)
        for categories in ([], list(rng.choice(POOL, 5, replace=False)), POOL, ["1", "-1", "0", "True", "False", "2"]):
            new = _one_hot(col, missing, categories)
            if not len(col) and categories:  # OneHotEncoder refused no rows ('Found array with 0 sample(s)')
                assert new.shape == (0, len(categories) + 1)
                continue
            old = _old_one_hot(col, missing, categories)
            assert new.shape == old.shape and np.array_equal(new, old), (name, categories)


def test_tokens_equal_the_old_path_and_unseen_names_share_the_last_slot():
    rng = np.random.default_rng(7)
    cols = _columns(rng, 500)
    del cols["empty"]
    tok = TabularTokens.fit({k: v[:200] for k, v in cols.items() if k in ("text", "mixed", "unicode")}, 4)
    x, _ = tok(cols)
    for j, f in enumerate(tok.features):
        col = cols[f["name"]]
        slots = x[:, j, 2 + f["offset"]: 3 + f["offset"] + len(f["categories"])].numpy()
        assert np.array_equal(slots, _old_one_hot(col, is_missing(col), f["categories"]))
    unseen = tok({"text": np.array(["zz", None], dtype=object), "mixed": np.array([3.25, "a"], dtype=object),
                  "unicode": np.array(["new", "a"])})[0]
    j, f = next((j, f) for j, f in enumerate(tok.features) if f["name"] == "text")
    slots = unseen[:, j, 2 + f["offset"]: 3 + f["offset"] + len(f["categories"])]
    assert slots.tolist() == [[0.0] * len(f["categories"]) + [1.0], [0.0] * (len(f["categories"]) + 1)]


def test_duplicate_saved_categories_are_refused_as_before():
    col = np.array(["a", "b"], dtype=object)
    with pytest.raises(ValueError, match="predefined categories contain duplicate elements") as new:
        _one_hot(col, is_missing(col), ["a", "a", "b"])
    with pytest.raises(ValueError) as old:
        _old_one_hot(col, is_missing(col), ["a", "a", "b"])
    assert str(new.value) == str(old.value)


def test_numbers_are_named_once_per_distinct_value(monkeypatch):
    from fpt.data import tokenisers

    calls = []
    monkeypatch.setattr(tokenisers, "plain_value", lambda v: calls.append(v) or plain_value(v))
    col = np.tile(np.array([1.0, 2.5, np.nan, 1.0, -0.0]), 1000)
    assert category_texts(col).tolist()[:5] == ["1", "2.5", "nan", "1", "0"]
    assert len(calls) <= 4  # 1, 2.5, nan, 0: not one per row


def test_no_rows_give_no_slots():  # OneHotEncoder refused them ('Found array with 0 sample(s)')
    col = np.array([], dtype=object)
    assert _one_hot(col, is_missing(col), ["a", "b"]).shape == (0, 3)


def test_a_saved_tokeniser_with_repeated_categories_is_refused_when_read_back():
    # the one-hot's duplicate check raised a bare ValueError (a traceback) on a data.json with repeated categories
    from fpt.data.tokenisers import TabularTokens
    from fpt.errors import DataError

    tok = TabularTokens.fit({"text": np.array(["a", "b", "a"], dtype=object)}, 20)
    saved = json.loads(json.dumps(tok.to_json()))
    f = next(f for f in saved["features"] if f["name"] == "text")
    f["categories"] = [f["categories"][0], *f["categories"]]
    with pytest.raises(DataError, match=r"tokeniser field 'features\[0\] \(text\)\.categories' .* distinct category"):
        TabularTokens.check_json(saved)

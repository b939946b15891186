"""A column's plain values (``fpt.data.plain.plain_values``), the input columns written back beside the predictions
(``fpt.data.written.as_written``) and declared categories' names (``fpt.data.categories.category_names``) are made by
passes over the column, not a Python call per value. Each equals the per-value path it replaced, kept here as the
reference, object for object (type and value), on columns of edge values: NaN, None, pandas' NA, whole floats, -0.0,
infinities, ints past int64, bools beside 1 and 1.0, unicode, numeric-looking text, dates, numpy scalars among
objects."""

from __future__ import annotations

import datetime
import decimal
import math

import numpy as np
import pandas as pd
import pytest

from fpt.data.base import is_missing, plain_value
from fpt.data.categories import as_category_names, category_names
from fpt.data.plain import plain_values
from fpt.data.written import as_written as _as_written


def _old_as_written(col: np.ndarray) -> list:
    missing = is_missing(col)
    if col.dtype.kind == "M":
        text = np.datetime_as_string(col, unit="auto")
        return [None if m else str(t) for t, m in zip(text, missing, strict=True)]
    return [None if m else plain_value(v) for v, m in zip(col, missing, strict=True)]


def _old_category_names(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values)
    missing = is_missing(values)
    return np.array([None if m else v if isinstance(v, str) else str(plain_value(v))
                     for v, m in zip(values, missing, strict=True)], dtype=object)


def _objects(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _mixed(seed: int, n: int = 2000) -> np.ndarray:
    """An object column of plain types (str, int, bool, float, None) with their edge values, shuffled."""
    pool = ["x", "", "  ", "é", "😀", "007", "1.50", "1e3", "-0", "NaN", "True", 1, 0, -7, 2**63, 10**30, -(10**40),
            True, False, 1.0, -0.0, 0.0, 2.5, 1e300, 1e30, 2.0**53, float("nan"), float("inf"), float("-inf"), None]
    rng = np.random.default_rng(seed)
    return _objects([pool[i] for i in rng.integers(0, len(pool), n)])


COLUMNS = {
    "floats": np.array([1.0, -0.0, 0.0, np.nan, np.inf, -np.inf, 1e300, 2.5, 2.0**53, -3.0, 1e-300]),
    "float32": np.array([1.5, 2.0, np.nan, 16777217.0, 0.1], dtype=np.float32),
    "float16": np.array([1.0, 0.5, np.nan], dtype=np.float16),
    "ints": np.array([0, -1, 2**62, -(2**63)], dtype=np.int64),
    "uints": np.array([0, 2**64 - 1], dtype=np.uint64),
    "bools": np.array([True, False, True]),
    "unicode": np.array(["a", "é", "", " ", "10"]),
    "dates": np.array(["2024-01-01", "NaT", "2024-03-15T10:30"], dtype="datetime64[ns]"),
    "days": np.array(["2024-01-01", "2023-12-31"], dtype="datetime64[D]"),
    "durations": np.array([5, 0, "NaT"], dtype="timedelta64[s]"),
    "complex": np.array([1 + 2j, 3.0]),
    "long double": np.array([1.0, 2.5], dtype=np.longdouble),
    "text": _objects(["a", None, "", "  ", "10", "1.0", "é", "😀"]),
    "text and nan": _objects(["a", float("nan"), "b", None]),
    "numbers among objects": _objects([1, 1.0, True, 2.5, -0.0, 10**30, 1e30, None, float("nan"), False, 0]),
    "numpy scalars and others": _objects([np.float64(2.0), np.int64(3), np.float32(0.5), pd.NA, pd.NaT,
                                          decimal.Decimal("1.0"), datetime.date(2024, 1, 2), np.str_("s"), "t", 4.0,
                                          None, np.bool_(True), (1, 2)]),
    "empty objects": _objects([]),
    "empty floats": np.array([], dtype=np.float64),
    "mixed 0": _mixed(0),
    "mixed 1": _mixed(1),
}


def _same(new: list, old: list) -> None:
    assert len(new) == len(old)
    for i, (a, b) in enumerate(zip(new, old, strict=True)):
        assert type(a) is type(b), (i, a, b)
        assert a is b or a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b)), (i, a, b)
        if isinstance(a, float):
            assert math.copysign(1, a) == math.copysign(1, b), (i, a, b)


@pytest.mark.parametrize("name", list(COLUMNS))
def test_plain_values_are_plain_value_of_each(name):
    col = COLUMNS[name]
    out = plain_values(col)
    assert out.dtype == object and out.shape == col.shape
    _same(out.tolist(), [plain_value(v) for v in col])


# values no writer holds as they are (a duration, a Decimal, a date among objects, complex, long double): the text
# every writer writes for them (fpt.data.written), where the per-value path handed JSON a TypeError
_AS_TEXT = {"durations": ["PT5S", "PT0S", None], "complex": ["(1+2j)", "(3+0j)"], "long double": ["1.0", "2.5"]}


def _expected_written(name: str, col: np.ndarray) -> list:
    if name in _AS_TEXT:
        return _AS_TEXT[name]
    old = _old_as_written(col)
    if name == "numpy scalars and others":
        old[5:7] = ["1.0", "2024-01-02"]  # Decimal('1.0'), datetime.date(2024, 1, 2)
    return old


@pytest.mark.parametrize("name", list(COLUMNS))
def test_written_columns_equal_the_per_value_path(name):
    col = COLUMNS[name]
    _same(_as_written(col), _expected_written(name, col))
    _same(_as_written(col, is_missing(col)), _expected_written(name, col))  # the reader's mask, where it kept one


@pytest.mark.parametrize("name", [n for n in COLUMNS if n not in ("complex", "long double")])
def test_category_names_equal_the_per_value_path(name):
    col = COLUMNS[name]
    new, old = category_names(col), _old_category_names(col)
    assert new.dtype == object and new.shape == old.shape
    _same(new.tolist(), old.tolist())


def test_the_cases_hold_what_they_claim():
    """The edge values are there and come out as the per-value path writes them (not only equal to it)."""
    written = _as_written(COLUMNS["numbers among objects"])
    assert written == [1, 1, True, 2.5, 0, 10**30, int(1e30), None, None, False, 0]
    assert [type(v) for v in written[:4]] == [int, int, bool, float]
    assert _as_written(COLUMNS["floats"])[:6] == [1, 0, 0, None, math.inf, -math.inf]
    assert _as_written(COLUMNS["dates"]) == ["2024-01-01", None, "2024-03-15T10:30"]  # the shortest exact
    assert category_names(COLUMNS["numbers among objects"]).tolist() == [
        "1", "1", "True", "2.5", "0", str(10**30), str(int(1e30)), None, None, "False", "0"]
    assert category_names(COLUMNS["text"]).tolist() == ["a", None, None, None, "10", "1.0", "é", "😀"]
    assert category_names(COLUMNS["floats"]).tolist()[:6] == ["1", "0", "0", None, "inf", "-inf"]
    scalars = category_names(COLUMNS["numpy scalars and others"])
    assert scalars[7] is COLUMNS["numpy scalars and others"][7]  # np.str_ text kept as the very value
    assert scalars.tolist()[:6] == ["2", "3", "0.5", None, None, "1.0"]


def test_a_declared_category_frame_names_its_categories_as_before():
    frame = pd.DataFrame({"code": pd.Categorical([10, 20, None, 10, 30]),
                          "word": pd.Categorical(["a", "é", None, "10", "a"]),
                          "x": [1.0, 2.0, 3.0, 4.0, 5.0]})
    expected = frame.copy(deep=False)
    for i in (0, 1):
        expected.isetitem(i, _old_category_names(frame.iloc[:, i].to_numpy(dtype=object)))
    named = as_category_names(frame)
    pd.testing.assert_frame_equal(named, expected)
    assert named["code"].tolist()[:2] == ["10", "20"] and named["word"].tolist()[:2] == ["a", "é"]

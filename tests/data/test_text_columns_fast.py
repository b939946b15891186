"""A big table's text columns are checked by passes over the column, not a Python test per cell (is_missing, the
text columns' number check, the complex check): each finds what the test per cell found, and the per-cell helpers
are not called once per row."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fpt.data import base, tables
from fpt.errors import DataError


def _objects(items: list) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def _missing_per_value(values: np.ndarray) -> np.ndarray:  # is_missing's test per value, as it was
    return np.array([v is None or (isinstance(v, float) and np.isnan(v)) or (isinstance(v, str) and not v.strip())
                     or type(v).__name__ in ("NAType", "NaTType") for v in values], dtype=bool)


class _Counting:
    def __init__(self, real) -> None:  # noqa: ANN001 (a builtin)
        self.real, self.calls = real, 0

    def __call__(self, *args):  # noqa: ANN002, ANN204
        self.calls += 1
        return self.real(*args)


POOL = [None, "", " ", "\u3000", "\x1c", "\t\n", "a", " a ", "0", float("nan"), 1.5, 0.0, 3, True, False, "nan"]


def test_is_missing_of_plain_objects_matches_the_test_per_value() -> None:
    rng = np.random.default_rng(0)
    for _ in range(500):
        values = _objects([POOL[i] for i in rng.integers(0, len(POOL), rng.integers(0, 9))])
        np.testing.assert_array_equal(base.is_missing(values), _missing_per_value(values))
    np.testing.assert_array_equal(base.is_missing(_objects(["x", None, "  ", "", "y"])),
                                  [False, True, True, True, False])


def test_is_missing_of_text_makes_no_type_test_per_value(monkeypatch: pytest.MonkeyPatch) -> None:
    counting = _Counting(isinstance)
    monkeypatch.setattr(base, "isinstance", counting, raising=False)
    values = _objects(["c1", None, " ", "c2"] * 500)
    assert base.is_missing(values).sum() == 1000
    assert counting.calls == 0  # the test per value made two per cell: 4,000


def test_text_column_tries_float_once_per_distinct_text_that_may_be_a_number(monkeypatch: pytest.MonkeyPatch) -> None:
    counting = _Counting(float)
    monkeypatch.setattr(base, "float", counting, raising=False)  # reads_as_float lives there
    codes = _objects(["c1", "c2", None, "c3 "] * 500)
    out = tables._check_text_column(codes, "code", Path("t.csv"))
    assert counting.calls == 0  # no code starts as a number does; a float() per present cell was 1,500 calls
    assert out.tolist() == ["c1", "c2", None, "c3 "] * 500
    mixed = _objects(["1", "x", "2.5", ""] * 500)  # two of three present texts numbers: under MIXED_SHARE, text
    out = tables._check_text_column(mixed, "mixed", Path("t.csv"))
    assert counting.calls == 2  # "1" and "2.5", once each
    assert out.tolist() == ["1", "x", "2.5", None] * 500


def test_text_numbers_match_float_per_value() -> None:
    texts = ["1_000", "1__0", "_1", "infinity", "-Infinity", "+nan", "inf5", " 1 ", ".5", "5.", ".", "1e5", "e5",
             "\u0661\u0662", "\u3000-1\u3000", "1E-5", "--1", "0x10", "ⅷ", "²", "1,5", "i", "n", "-", "+.5e-3", "c17"]
    values = _objects(texts + [None])
    present = ~base.is_missing(values)
    np.testing.assert_array_equal(tables._text_numbers(values, present), tables._numbers_per_value(values, present))
    assert tables._text_numbers(values, present).sum() == 12


def test_mostly_numbers_text_column_names_its_stray_cells_as_before() -> None:
    values = _objects([str(i) for i in range(40)] + ["oops", "", "n/a?"])
    with pytest.raises(DataError, match=r"column 'a' mixes numbers and text \(row 41: 'oops', row 43: 'n/a\?'\)"):
        tables._check_text_column(values, "a", Path("t.csv"))


def test_complex_check_makes_no_type_test_per_value(monkeypatch: pytest.MonkeyPatch) -> None:
    counting = _Counting(isinstance)
    monkeypatch.setattr(tables, "isinstance", counting, raising=False)
    text = _objects(["a", "b"] * 500)
    tables._complex(text, text, "t.csv: column 'a'")
    assert counting.calls == 0
    with pytest.raises(DataError, match=r"holds complex numbers \(1j\)"):  # the first complex value, not 'a'
        tables._complex(_objects(["a", 1j]), _objects(["a", 1j]), "t.csv: column 'a'")

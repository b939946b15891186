"""``fpt.data.json_lines.json_lines``: a table of columns as JSON lines, each column encoded once, equals the row
by row ``json.dumps`` it replaced (kept here as the reference) byte for byte on columns of every type it meets and
their edges, and fails as it did."""

from __future__ import annotations

import datetime
import json
import math

import numpy as np
import pytest

from fpt.data.json_lines import json_lines, json_value


def _per_row(columns: dict) -> str:
    names = list(columns)
    return "".join(json.dumps(dict(zip(names, [json_value(v) for v in row], strict=True)), allow_nan=False) + "\n"
                   for row in zip(*columns.values(), strict=True))


def _mixed(seed: int, n: int = 3000) -> dict:
    rng = np.random.default_rng(seed)
    pool = ["x", "", "é", "😀", 'q"t', "a\nb", "\\", "{}", "007", "1e3", 1, 0, -7, 2**63, 10**30, True, False, 1.0,
            -0.0, 2.5, 1e300, 1e-300, 5e-324, float("nan"), float("inf"), float("-inf"), None]
    pick = rng.integers(0, len(pool), (n, 3))
    floats = rng.normal(size=n) * 10.0 ** rng.integers(-30, 30, n)
    floats[:3] = [math.nan, math.inf, -math.inf]
    return {
        "": list(range(n)),  # an empty key, as the row index is named
        "a{b}": [pool[i] for i in pick[:, 0]],  # braces in a key, every type in a column
        "é key": [pool[i] for i in pick[:, 1]],
        "text": [None if i % 5 == 0 else f"r{i}é" for i in range(n)],
        "ints": [int(v) for v in rng.integers(-(2**62), 2**62, n)],
        "floats": floats.tolist(),
        "float or None": [None if i % 3 == 0 else float(v) for i, v in enumerate(floats)],
        "bools": [bool(v) for v in rng.integers(0, 2, n)],
        "nothing": [None] * n,
        "numpy": [np.float32(v) if i % 2 else np.int64(i) for i, v in enumerate(floats)],
        "nested": [[1, 2.5, "é"] if i % 2 else {"k": None, "n": i} for i in range(n)],
    }


@pytest.mark.parametrize("seed", [0, 1])
def test_json_lines_equal_json_dumps_per_row(seed):
    columns = _mixed(seed)
    text = json_lines(columns)
    assert text.encode() == _per_row(columns).encode()
    first = json.loads(text.splitlines()[2])
    assert first["floats"] is None and first[""] == 2  # -inf: null
    assert "\\u00e9" in text and "\\ud83d\\ude00" in text  # json's ASCII escapes


def test_edges_of_the_table_itself():
    assert json_lines({}) == _per_row({}) == ""
    assert json_lines({"x": []}) == _per_row({"x": []}) == ""
    assert json_lines({"{x}": [1], "}": [None]}) == '{"{x}": 1, "}": null}\n'
    with pytest.raises(ValueError, match="zip\\(\\) argument 2 is shorter than argument 1"):
        json_lines({"a": [1, 2], "b": [1]})


def test_what_json_cannot_hold_fails_as_it_did():
    for bad in ([datetime.date(2024, 1, 1)], [[math.nan]]):
        with pytest.raises((TypeError, ValueError)) as new:
            json_lines({"a": bad})
        with pytest.raises(type(new.value)) as old:
            _per_row({"a": bad})
        assert str(new.value) == str(old.value)

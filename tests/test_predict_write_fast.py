"""The prediction table is built and written column by column (200,000 rows took 5-9 s value by value); its bytes
equal the old path's, kept here as the reference, on mixed columns: classes, probabilities, regression values at
several spreads, NaN and infinities, carried row index and text columns with formula-like cells and gaps."""

from __future__ import annotations

import csv
import io
import math

import numpy as np
import pytest

from fpt.predictor import Prediction, _cell, _plain, _plain_column, _six_digits


def _old_delimited(columns: dict, delimiter: str) -> str:
    """Prediction._delimited before the change: a csv row of ``_cell`` per value."""
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter, lineterminator="\n")
    writer.writerow(list(columns))
    for row in zip(*columns.values(), strict=True):
        writer.writerow([_cell(v) for v in row])
    return buf.getvalue()


def _mixed(seed: int, n: int = 3000) -> tuple[dict, dict]:
    """(old columns, new columns) as predict_file builds them, from the same arrays."""
    rng = np.random.default_rng(seed)
    proba = rng.dirichlet(np.ones(3), size=n).astype(np.float32)
    proba[:5] = [[1, 0, 0], [0, 1, 0], [1e-30, 1 - 1e-7, 1e-7], [np.float32(1e-45), 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]]
    scores = (rng.normal(size=(n, 3)) * 10.0 ** rng.integers(-8, 9, size=(n, 1))).astype(np.float32)
    scores[:4, 0] = [np.inf, -np.inf, np.nan, -0.0]
    labels = np.array(["yes", "no", "=cmd|x", "-1", "+x", "", "a,b", 'q"t', "l\nf", "@a"])[rng.integers(0, 10, n)]
    ints = rng.integers(-5, 5, n)
    mixed = np.empty(n, dtype=object)
    mixed[:] = [["x", 1, 2.5, None, True, "-7", "=1+1", float("nan")][i] for i in rng.integers(0, 8, n)]
    regression = rng.normal(1.7e9, 3.0, n)
    regression[:4] = [np.nan, np.inf, -np.inf, 0.0]
    small = rng.normal(0, 1e-6, n)
    carried_index = list(range(n))
    carried_text = [None if i % 7 == 0 else f"-r{i}" if i % 5 == 0 else f"r{i}" for i in range(n)]
    carried_float = [None if i % 11 == 0 else float(v) for i, v in enumerate(rng.normal(size=n))]
    old, new = {"row_index": carried_index, "id": carried_text, "w": carried_float}, {}
    new.update(old)
    cases = [("prediction", labels, None), ("prediction_i", ints, None), ("prediction_o", mixed, None),
             ("prediction_r", regression, 3.0), ("prediction_s", small, 1e-6), ("prediction_z", regression, 0.0)]
    for name, values, scale in cases:
        old[name] = [_plain(v, scale) for v in values]
        new[name] = _plain_column(values, scale)
    for c in range(3):
        old[f"proba_{c}"] = [float(f"{p:.6g}") for p in proba[:, c]]
        new[f"proba_{c}"] = _six_digits(proba[:, c])
        old[f"score_{c}"] = [float(f"{p:.6g}") for p in scores[:, c]]
        new[f"score_{c}"] = _six_digits(scores[:, c])
    return old, new


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("delimiter", [",", "\t"])
def test_written_bytes_equal_the_value_by_value_path(seed, delimiter):
    old, new = _mixed(seed)
    expected = _old_delimited(old, delimiter)
    got = Prediction(new, None, len(new["prediction"]), "t")._delimited(delimiter)
    assert got.encode() == expected.encode()
    assert "'=cmd|x" in got and "nan" in got and "inf" in got  # the cases are there
    for name in new:  # the Python API's columns too: same values, same Python types
        assert [type(v) for v in new[name]] == [type(v) for v in old[name]], name
        same = [a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))
                for a, b in zip(new[name], old[name], strict=True)]
        assert all(same), name


def test_the_stream_gets_the_same_bytes():
    old, new = _mixed(3, 200)
    stream = io.StringIO()
    Prediction(new, None, 200, "t")._delimited(",", stream)
    assert stream.getvalue() == _old_delimited(old, ",")


def test_the_probabilities_of_every_float32_exponent_read_back_as_before():
    rng = np.random.default_rng(4)
    bits = rng.integers(0, 2**31, 40_000, dtype=np.uint32)  # every exponent, denormals, inf and nan
    values = np.concatenate([bits.view(np.float32), -bits[:1000].view(np.float32)])
    old = [float(f"{p:.6g}") for p in values]
    new = _six_digits(values)
    assert np.array_equal(np.array(new), np.array(old), equal_nan=True)
    assert [math.copysign(1, v) for v in new] == [math.copysign(1, v) for v in old]


def test_six_digits_is_computed_on_the_column_and_reads_as_the_text_did(monkeypatch):
    """_six_digits formatted every probability as '.6g' text in a Python loop (0.46 s per class column at 200,000
    rows); now computed on the column, the text kept only for values whose rounding the arithmetic cannot settle (a
    digit near a half, |exponent| beyond 10**22's). Same floats as the text gives, on tricky values and ties."""
    import fpt.predictor

    def old(values: np.ndarray) -> list[float]:
        return [float(f"{p:.6g}") for p in values.tolist()]

    tricky = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-7, 123456789.0, 1, 2, -3, 1234565.0, 1234575.0,
                       123456.5, 0.1, 1.0, 0.9999995, 0.99999949999, 999999.5, 9999995.0, 1e5, 1e6, 1e22, 1e23, 1e-22,
                       1e-23, 5e-324, 1.7976931348623157e308, 2**53 + 1.0, 0.333333333, 2 / 3])
    rng = np.random.default_rng(5)
    ties = (rng.integers(10**5, 10**6, 2000) + 0.5) * 10.0 ** rng.integers(-12, 12, 2000)  # decimal halves
    spread = rng.normal(size=5000) * 10.0 ** rng.integers(-30, 30, 5000)
    ints = rng.integers(-10**9, 10**9, 5000).astype(np.float64)
    for values in (tricky, ties, spread, ints, rng.dirichlet(np.ones(4), 1250).astype(np.float32).reshape(-1)):
        new, ref = _six_digits(values), old(values)
        assert np.array_equal(np.array(new), np.array(ref), equal_nan=True)
        assert [math.copysign(1, v) for v in new if not math.isnan(v)] == \
            [math.copysign(1, v) for v in ref if not math.isnan(v)]
        assert all(type(v) is float for v in new)
    texts = []
    monkeypatch.setattr(fpt.predictor, "_six_digits_text", lambda p: texts.append(p) or float(f"{p:.6g}"))
    probabilities = rng.dirichlet(np.ones(3), 20_000).astype(np.float32).reshape(-1)
    assert _six_digits(probabilities) == old(probabilities)
    assert len(texts) < 60  # was one per value (60,000)

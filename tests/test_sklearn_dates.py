"""The scikit-learn estimators read dates written other than ISO (03/15/2024) and durations written as text (1:07:00)
as a table file's reader does (fpt.data.date_formats, fpt.data.durations), whether X is a DataFrame, a NumPy object
array of its rows or a list of them. A DataFrame's such columns were text categories (a category per date); an
object array or a list holding any text was refused by scikit-learn's float conversion ('could not convert string
to float')."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fpt
from fpt.errors import DataError
from fpt.sklearn import FPTClassifier, FPTRegressor

CLOSED = {"init": "random", "fitting": "closed-form", "device": "cpu"}
N = 40
WHEN = pd.date_range("2024-01-01 06:00", periods=N, freq="37h")


def _frame(when: list[str] | None = None) -> pd.DataFrame:
    return pd.DataFrame({"x": np.arange(N) * 0.5, "when": list(WHEN.strftime("%m/%d/%Y")) if when is None else when,
                         "wait": [f"{h}:{m:02d}:00" for h, m in zip(np.arange(N) % 30, np.arange(N) * 7 % 60,
                                                                    strict=True)],
                         "iso": list(WHEN.strftime("%Y-%m-%d"))})


def _reading(features: list[dict]) -> list[tuple]:
    """How each token's column was read: kind, date part, the text's date format and duration kind."""
    return [(f["kind"], f.get("part"), f.get("format"), f.get("duration")) for f in features]


def test_an_array_or_list_of_rows_reads_text_dates_and_durations_as_the_frame_and_the_file_do(tiny_bert_dir, tmp_path):
    df, y = _frame(), np.arange(N) * 0.25
    fitted = {kind: FPTRegressor(body=tiny_bert_dir, **CLOSED).fit(X, y)
              for kind, X in (("frame", df), ("array", df.to_numpy(dtype=object)),
                              ("list", df.to_numpy(dtype=object).tolist()))}
    features = {kind: est.preprocessing_.tokeniser.features for kind, est in fitted.items()}
    assert features["array"] == features["frame"] == features["list"]  # the same reading, the same figures
    df.assign(label=y).to_csv(tmp_path / "t.csv", index=False)
    exp = fpt.build(data=str(tmp_path / "t.csv"), body=tiny_bert_dir, init="random", fit="closed-form",
                    baselines="none", device="cpu", objective="regression")
    assert _reading(features["array"]) == _reading(exp.data.fitted["tokeniser"]["features"])
    when = [f for f in features["array"] if f["name"] == "x1"]
    assert [f["part"] for f in when] == ["time", "year", "month", "day", "weekday"] and when[0]["format"] == "%m/%d/%Y"
    wait = [f for f in features["array"] if f["name"] == "x2"]
    assert len(wait) == 1 and wait[0]["duration"] == "duration"
    # new rows read by the training text's format, and the same rows as a frame or an array predict alike
    new = _frame()[:5].assign(when=["12/25/2024", "01/02/2025", "", "03/04/2024", "07/30/2024"],
                              wait=["P1DT2H", "3:00:00", "0:00:05", "", "1 day 02:00:00"])
    reg = fitted["array"]
    np.testing.assert_allclose(reg.predict(new.to_numpy(dtype=object)), fitted["frame"].predict(new), rtol=1e-6)
    with pytest.raises(ValueError, match=r"FPTRegressor\.predict: X\[:, 1\] holds text that is not a date written "
                                         r"'%m/%d/%Y', as the column's training dates are \(X\[0\]: '2024-12-25'\)"):
        reg.predict(new.assign(when=["2024-12-25"] * 5).to_numpy(dtype=object))


def test_an_array_of_dates_no_value_orders_is_refused_naming_its_column_and_the_fix(tiny_bert_dir):
    X = _frame(when=[f"01/{m % 12 + 1:02d}/2024" for m in range(N)]).to_numpy(dtype=object)
    with pytest.raises(DataError, match=r"FPTClassifier\.fit \(X, y\), X\[:, 1\] holds dates written day or month "
                                        r"first \('01/01/2024'\) and no value tells which: .* or leave the column out "
                                        r"with X\[:, keep\] \(keep: the indices of the columns to keep\)"):
        FPTClassifier(body=tiny_bert_dir, **CLOSED).fit(X, np.arange(N) % 2)


def test_an_object_array_of_numbers_still_fits_as_numbers(tiny_bert_dir):
    X = np.array([[float(i), i % 3] for i in range(N)], dtype=object)
    clf = FPTClassifier(body=tiny_bert_dir, **CLOSED).fit(X, np.arange(N) % 2)
    assert [f["kind"] for f in clf.preprocessing_.tokeniser.features] == ["numeric", "numeric"]
    assert clf.predict(X[:3]).shape == (3,)

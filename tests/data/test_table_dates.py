"""Dates and decimals in a table as practitioners have them: a CSV's ISO dates, a DataFrame's or Parquet's datetime
columns (with a timezone or without, with gaps), dates beyond the training range at predict time, a column only
partly dates, a date target; and a database's decimals in Parquet. Dates were read as a text category per date (a
new date at predict an unseen category), decimals from Parquet as a category per amount."""

from __future__ import annotations

import decimal
import json
import warnings

import numpy as np
import pandas as pd
import pytest

import fpt
from fpt.cli import main
from fpt.data import load
from fpt.data.base import ColumnNote
from fpt.data.dates import date_parts, read_dates
from fpt.data.inputs import DatesBeyondWarning
from fpt.data.modalities import from_json
from fpt.data.tokenisers import TabularTokens
from fpt.errors import DataError, SchemaError

CLOSED = {"init": "random", "fit": "closed-form", "baselines": "none", "device": "cpu"}


def _days(n: int = 60, start: str = "2024-01-01", freq: str = "D", seed: int = 0) -> pd.DataFrame:
    """A table whose label is the weekend: only a date's weekday tells it."""
    rng = np.random.default_rng(seed)
    when = pd.date_range(start, periods=n, freq=freq)
    return pd.DataFrame({"x": rng.normal(size=n).round(3), "when": when,
                         "label": np.where(when.day_of_week >= 5, "weekend", "week")})


def _tokens_by_part(tok: TabularTokens, name: str) -> dict[str, dict]:
    return {f["part"]: f for f in tok.features if f["name"] == name}


def test_a_csv_column_of_iso_dates_is_read_as_dates_and_tokenised_as_time_and_calendar_parts(tmp_path):
    frame = _days(30)
    frame.assign(when=frame.when.dt.strftime("%Y-%m-%d")).to_csv(tmp_path / "t.csv", index=False)
    raw = load(str(tmp_path / "t.csv"))
    when = raw.splits["train"].x["when"]
    assert when.dtype == np.dtype("datetime64[us]") and raw.notes["dates"] == {"when": "naive"}
    assert str(when[0]) == "2024-01-01T00:00:00.000000"
    tok = TabularTokens.fit(raw.splits["train"].x, 50)
    parts = _tokens_by_part(tok, "when")
    assert list(parts) == ["time", "year", "month", "day", "weekday"]  # days: no clock parts
    assert parts["time"]["low"] == 19723 and parts["time"]["high"] == 19723 + 29  # days since 1970-01-01
    assert parts["weekday"]["mean"] == pytest.approx(np.mean(np.arange(30) % 7))  # 2024-01-01 was a Monday
    x, _ = tok(raw.splits["train"].x)
    assert x.shape == (30, 6, 2)
    weekday = list(parts).index("weekday") + 1
    sunday = (6 - parts["weekday"]["mean"]) / parts["weekday"]["std"]
    assert float(x[6, weekday, 0]) == pytest.approx(sunday, rel=1e-6)  # 2024-01-07


def test_times_make_clock_parts_down_to_the_finest_the_training_times_have():
    hours = read_dates(np.array(["2024-01-01 10:00", "2024-01-01 11:00"], dtype=object), None, "c", DataError)
    seconds = read_dates(np.array(["2024-01-01T10:00:00", "2024-01-01T10:00:05.5"], dtype=object), None, "c",
                         DataError)
    assert [f["part"] for f in TabularTokens.fit({"c": hours}, 50).features][5:] == ["hour"]
    assert [f["part"] for f in TabularTokens.fit({"c": seconds}, 50).features][5:] == ["hour", "minute", "second"]
    assert date_parts(seconds, None)["second"].tolist() == [0.0, 5.5]


def test_dates_train_and_predict_new_dates_beyond_the_training_range_without_allow_unseen(tmp_path, tiny_bert_dir,
                                                                                         capsys):
    frame = _days(60)
    frame.assign(when=frame.when.dt.strftime("%Y-%m-%d")).to_csv(tmp_path / "t.csv", index=False)
    fpt.fit(fpt.build(data=str(tmp_path / "t.csv"), body=tiny_bert_dir, **CLOSED), out=tmp_path / "run",
            progress=False)
    saved = json.loads((tmp_path / "run" / "data.json").read_text())["tokeniser"]["features"]
    assert [f["part"] for f in saved if f["name"] == "when"] == ["time", "year", "month", "day", "weekday"]
    model = fpt.load(tmp_path / "run")
    # the dates as written in a CSV and as datetimes in a DataFrame are one input: the same tokens
    train_rows = frame.drop(columns="label")
    from_file, _, _ = model.tokens(str(tmp_path / "t.csv"))
    from_frame, _, _ = model.tokens(train_rows)
    assert from_file.tolist() == from_frame.tolist()
    new = pd.DataFrame({"x": [0.1, 0.2, 0.3], "when": ["2030-06-01", "2024-01-06", ""]})
    new.to_csv(tmp_path / "new.csv", index=False)
    assert main(["predict", str(tmp_path / "run"), str(tmp_path / "new.csv"), "--out", str(tmp_path / "p.csv")]) == 0
    assert len(pd.read_csv(tmp_path / "p.csv")) == 3
    err = capsys.readouterr().err
    assert "column 'when' holds 1 of 3 dates beyond the training dates (2024-01-01 .. 2024-02-29)" in err
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tokens, _, _ = model.tokens(new)
    assert [w.category for w in caught] == [DatesBeyondWarning]
    time, year, weekday = 1, 2, 5  # x, then the date's parts in order
    assert float(tokens[0, time, 0]) == pytest.approx(float(from_frame[59, time, 0]))  # read as the last training day
    assert float(tokens[0, year, 0]) == pytest.approx(float(from_frame[59, year, 0]))
    assert float(tokens[0, weekday, 0]) == pytest.approx(float(from_frame[5, weekday, 0]))  # a Saturday, as 01-06
    assert tokens[2, 1:, 1].tolist() == [1.0] * 5 and tokens[2, 1:, 0].tolist() == [0.0] * 5  # missing: indicator
    with pytest.raises(SchemaError, match=r"inputs: column 'when' holds values that are not dates \(inputs\.iloc\[0\]: 'soon'\)"):
        model.predict(pd.DataFrame({"x": [0.1], "when": ["soon"]}))


def test_a_parquet_column_with_a_timezone_is_read_in_its_zone_and_new_inputs_must_give_one(tmp_path, tiny_bert_dir):
    n = 48
    when = pd.date_range("2024-03-30", periods=n, freq="h", tz="Europe/Paris")  # across the spring DST change
    frame = pd.DataFrame({"when": when, "x": np.arange(n) % 5 * 1.0,
                          "label": np.where((when.hour >= 9) & (when.hour < 17), "open", "closed")})
    frame.to_parquet(tmp_path / "t.parquet")
    raw = load(str(tmp_path / "t.parquet"))
    assert raw.notes["dates"] == {"when": "Europe/Paris"}
    tok = TabularTokens.fit(raw.splits["train"].x, 50)
    parts = _tokens_by_part(tok, "when")
    assert list(parts) == ["time", "year", "month", "day", "weekday", "hour"] and parts["hour"]["tz"] == "Europe/Paris"
    hours = date_parts(raw.splits["train"].x["when"], "Europe/Paris")["hour"]
    assert hours.tolist() == when.hour.tolist()  # the wall-clock hour in Paris, not UTC's (23 for midnight)
    fpt.fit(fpt.build(data=str(tmp_path / "t.parquet"), body=tiny_bert_dir, **CLOSED), out=tmp_path / "run",
            progress=False)
    model = fpt.load(tmp_path / "run")
    inputs = frame.drop(columns="label")
    utc = inputs.assign(when=inputs.when.dt.tz_convert("UTC"))  # the same instants in another zone: the same tokens
    assert model.tokens(utc)[0].tolist() == model.tokens(inputs)[0].tolist()
    as_text = inputs.assign(when=[t.isoformat() for t in when])  # a CSV's text with offsets too
    assert model.tokens(as_text)[0].tolist() == model.tokens(inputs)[0].tolist()
    with pytest.raises(SchemaError, match=r"column 'when' holds a time without a timezone \(inputs\.iloc\[0\]: "
                                          r"Timestamp\(.*\), but its training dates are times in Europe/Paris; "
                                          r".*tz_localize\('Europe/Paris'\)"):
        model.predict(inputs.assign(when=inputs.when.dt.tz_localize(None)))


def test_text_with_utc_offsets_is_read_as_utc_and_a_column_mixing_offsets_and_none_is_refused(tmp_path):
    n = 20
    stamps = [f"2024-01-{d:02d}T10:00:00+02:00" for d in range(1, n + 1)]
    pd.DataFrame({"when": stamps, "x": np.arange(n) * 1.0, "label": ["ab"[i % 2] for i in range(n)]}).to_csv(
        tmp_path / "t.csv", index=False)
    raw = load(str(tmp_path / "t.csv"))
    assert raw.notes["dates"] == {"when": "UTC"}
    assert date_parts(raw.splits["train"].x["when"], "UTC")["hour"].tolist() == [8.0] * n
    stamps[3] = "2024-01-04 10:00"
    pd.DataFrame({"when": stamps, "x": np.arange(n) * 1.0, "label": ["ab"[i % 2] for i in range(n)]}).to_csv(
        tmp_path / "m.csv", index=False)
    with pytest.raises(DataError, match=r"m\.csv: column 'when' mixes times with a timezone or UTC offset \(row 1: "
                                        r"'2024-01-01T10:00:00\+02:00'\) and times without one \(row 4: "
                                        r"'2024-01-04 10:00'\); give every value its offset, or none"):
        load(str(tmp_path / "m.csv"))


def test_a_column_of_dates_with_stray_text_or_an_impossible_date_is_one_line_naming_the_rows(tmp_path):
    when = [f"2024-01-{d:02d}" for d in range(1, 21)]
    frame = pd.DataFrame({"when": when, "x": np.arange(20) * 1.0, "label": ["ab"[i % 2] for i in range(20)]})
    frame.assign(when=when[:18] + ["unknown", ""]).to_csv(tmp_path / "stray.csv", index=False)
    with pytest.raises(DataError, match=r"stray\.csv: column 'when' holds dates but also other values \(row 19: "
                                        r"'unknown'\); fix those values"):
        load(str(tmp_path / "stray.csv"))
    frame.assign(when=when[:19] + ["2024-02-30"]).to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(DataError, match=r"bad\.csv: column 'when' holds text that reads as no date \(row 20: "
                                        r"'2024-02-30': no such day"):
        load(str(tmp_path / "bad.csv"))
    # a split file's column must hold dates too, as the training file's does
    (tmp_path / "d").mkdir()
    frame.to_csv(tmp_path / "d" / "train.csv", index=False)
    frame.assign(when=["soon"] * 20).to_csv(tmp_path / "d" / "test.csv", index=False)
    with pytest.raises(DataError, match=r"test\.csv: column 'when' holds values that are not dates \(row 1: 'soon'"):
        load(str(tmp_path / "d"))


def test_dates_fpt_does_not_read_as_dates_are_noted(tmp_path, tiny_bert_dir):
    n = 30
    # written two ways (01/03/2024, 2.3.2024): no one format reads the column (one that does: test_date_formats.py)
    frame = pd.DataFrame({"dayfirst": [f"{d:02d}/03/2024" if d % 2 else f"{d}.3.2024" for d in range(1, n + 1)],
                          "half": [f"2024-01-{d:02d}" if d % 3 else "later" for d in range(1, n + 1)],
                          "x": np.arange(n) * 1.0, "label": ["ab"[i % 2] for i in range(n)]})
    frame.to_csv(tmp_path / "t.csv", index=False)
    raw = load(str(tmp_path / "t.csv"))
    assert "dates" not in raw.notes and raw.splits["train"].x["dayfirst"].dtype == object
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fpt.build(data=str(tmp_path / "t.csv"), body=tiny_bert_dir, **CLOSED)
    notes = [str(w.message) for w in caught if issubclass(w.category, ColumnNote)]
    assert any("column 'dayfirst' holds dates written day or month first ('01/03/2024') but not all in one way" in n
               for n in notes), notes
    assert any("column 'half' holds dates on 67% of its rows and other text on the rest" in n for n in notes), notes


def test_a_date_target_is_refused_unless_classification_is_asked_then_its_dates_are_labels(tmp_path, tiny_bert_dir):
    frame = _days(40).rename(columns={"label": "kind", "when": "target"})
    frame.to_parquet(tmp_path / "t.parquet")
    for objective in ("auto", "regression"):
        with pytest.raises(DataError, match=r"t\.parquet: target column 'target' holds dates \(2024-01-01\), which "
                                            r"fpt predicts neither as numbers nor, unasked, as classes: .* "
                                            "objective='classification'"):
            fpt.build(data=str(tmp_path / "t.parquet"), body=tiny_bert_dir, objective=objective, **CLOSED)
    few = frame.assign(target=pd.to_datetime(np.where(frame.x > 0, "2024-01-01", "2024-06-30")))
    few.to_parquet(tmp_path / "few.parquet")
    exp = fpt.build(data=str(tmp_path / "few.parquet"), body=tiny_bert_dir, objective="classification", **CLOSED)
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    assert exp.data.info["classes"] == {"target": ["2024-01-01", "2024-06-30"]}
    result = fpt.load(tmp_path / "run").predict_file(few)  # the target given as datetimes: scored as its labels
    assert set(result.columns["prediction"]) <= {"2024-01-01", "2024-06-30"} and "accuracy" in result.metrics


def test_parquet_decimals_are_numbers_not_a_category_per_amount(tmp_path, tiny_bert_dir):
    n = 40
    amounts = [decimal.Decimal(f"{i * 7 % 40}.25") for i in range(n)]
    frame = pd.DataFrame({"amount": amounts, "label": ["big" if a > 20 else "small" for a in amounts]})
    frame.to_parquet(tmp_path / "t.parquet")
    import pyarrow.parquet as pq

    assert str(pq.read_schema(tmp_path / "t.parquet").field("amount").type) == "decimal128(4, 2)"
    raw = load(str(tmp_path / "t.parquet"))
    assert raw.splits["train"].x["amount"].dtype == np.float64
    assert raw.splits["train"].x["amount"].tolist() == [float(a) for a in amounts]
    exp = fpt.build(data=str(tmp_path / "t.parquet"), body=tiny_bert_dir, **CLOSED)
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    (feature,) = model.preprocessing.tokeniser.features
    assert feature["kind"] == "numeric" and 15 < feature["mean"] < 25  # of the training split's amounts, 0.25..39.25
    new = pd.DataFrame({"amount": [decimal.Decimal("99.99")]})  # an amount never seen: a number, not a category
    new.to_parquet(tmp_path / "new.parquet")
    assert len(model.predict(str(tmp_path / "new.parquet"))) == 1
    regression = pd.DataFrame({"x": np.arange(n) * 1.0, "price": amounts})  # a decimal target is a quantity
    regression.to_parquet(tmp_path / "r.parquet")
    assert load(str(tmp_path / "r.parquet")).splits["train"].y.dtype == np.float64


def test_a_saved_date_part_is_checked_when_a_run_is_read_back():
    tok = TabularTokens.fit({"c": np.array(["2024-01-01", "2024-02-01"], dtype="datetime64[us]")}, 50)
    again = from_json(json.loads(json.dumps(tok.to_json())))
    assert again.features == tok.features
    bad = tok.to_json()
    bad["features"][1]["part"] = "fortnight"
    with pytest.raises(DataError, match=r"features\[1\] \(c\)\.part"):
        from_json(bad)


def test_scikit_learn_estimators_read_a_dataframe_date_column_as_dates(tiny_gpt2_dir):
    from fpt.sklearn import FPTClassifier

    frame = _days(60)
    X, y = frame[["x", "when"]], frame["label"]
    clf = FPTClassifier(body=tiny_gpt2_dir, init="random", device="cpu", fitting="closed-form").fit(X, y)
    assert [f.get("part") for f in clf.preprocessing_.tokeniser.features] == [None, "time", "year", "month", "day",
                                                                                "weekday"]
    later = pd.DataFrame({"x": [0.0, 0.0], "when": pd.to_datetime(["2031-01-04", "2031-01-06"])})  # beyond training
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DatesBeyondWarning)
        assert clf.predict(later).shape == (2,)

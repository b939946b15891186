"""Dates and durations written as text other than ISO dates, as spreadsheets and other tools export them: 03/15/2024,
15.03.2024, 2024/03/15, 15-Mar-2024, Mar 15, 2024 (with times or not); 1 day 02:00:00, 02:30:00, PT5M. Each was a
text category per value (fpt data: 'holds a different value on every training row ... read as categories'), a new
date or duration at predict an unseen category."""

from __future__ import annotations

import json
import re
import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import fpt
from fpt.data import load
from fpt.data.base import ColumnNote
from fpt.data.dates import date_notes
from fpt.data.modalities import from_json
from fpt.data.tokenisers import TabularTokens
from fpt.errors import DataError, SchemaError

CLOSED = {"init": "random", "fit": "closed-form", "baselines": "none", "device": "cpu"}
WHEN = pd.date_range("2024-01-01 06:00", periods=40, freq="37h")  # days 1-31 of the month, hours of the day


def _table(path, when: list, **more) -> None:
    n = len(when)
    pd.DataFrame({"x": np.arange(n) * 0.5, "when": when, **more,
                  "label": ["ab"[i % 2] for i in range(n)]}).to_csv(path, index=False)


@pytest.mark.parametrize("fmt", ["%m/%d/%Y %H:%M", "%d.%m.%Y %H:%M", "%Y/%m/%d %H:%M", "%d-%b-%Y %H:%M",
                                 "%b %d %Y %H:%M", "%b %d, %Y %I:%M %p", "%d/%m/%y %H:%M:%S"])
def test_text_dates_of_one_format_read_as_the_iso_dates_they_are(fmt, tmp_path):
    _table(tmp_path / "t.csv", list(WHEN.strftime(fmt)))
    _table(tmp_path / "iso.csv", list(WHEN.strftime("%Y-%m-%d %H:%M")))
    raw, iso = load(str(tmp_path / "t.csv")), load(str(tmp_path / "iso.csv"))
    assert raw.notes["date_formats"] == {"when": fmt} and raw.notes["dates"] == {"when": "naive"}
    when = raw.splits["train"].x["when"]
    assert when.dtype == np.dtype("datetime64[us]")
    np.testing.assert_array_equal(when, iso.splits["train"].x["when"])
    tok = TabularTokens.fit_from(raw.splits["train"].x, SimpleNamespace(max_categories=50), raw.notes)
    parts = [f for f in tok.features if f["name"] == "when"]
    assert [f["part"] for f in parts] == ["time", "year", "month", "day", "weekday", "hour"]
    assert {f["format"] for f in parts} == {fmt}
    same = TabularTokens.fit(iso.splits["train"].x, 50).features
    assert [{k: v for k, v in f.items() if k != "format"} for f in tok.features] == same


def test_day_and_month_that_no_value_tells_apart_are_refused_naming_the_file_column_and_fix(tmp_path):
    monthly = [f"01/{m:02d}/2024" for m in range(1, 13)]  # the first of each month: either order reads every value
    _table(tmp_path / "monthly.csv", monthly)
    with pytest.raises(DataError, match=r"monthly\.csv: column 'when' holds dates written day or month first "
                                        r"\('01/01/2024'\) and no value tells which: .* '%d/%m/%Y' and '%m/%d/%Y' "
                                        r"read them as different dates; write them as ISO dates .*--drop-columns"):
        load(str(tmp_path / "monthly.csv"))
    _table(tmp_path / "decided.csv", monthly[:-1] + ["13/12/2024"])  # one day above 12: the day comes first
    when = load(str(tmp_path / "decided.csv")).splits["train"].x["when"]
    assert str(when[1])[:10] == "2024-02-01" and str(when[-1])[:10] == "2024-12-13"


@pytest.mark.parametrize("versions", [["3.8.10", "3.9.18", "3.10.12", "1.2.33"] * 10,  # every field <= 12 at first
                                      ["3.8.10", "15.2.10", "1.2.33", "2.1.11"] * 10])  # a field over 12: "day first"
def test_version_numbers_are_not_dates(versions, tmp_path):
    # %m.%d.%y and %d.%m.%y read 3.11.7 and 1.2.33: version numbers were refused as ambiguous dates, or read as days
    _table(tmp_path / "v.csv", versions)
    raw = load(str(tmp_path / "v.csv"))
    assert "when" not in raw.notes.get("date_formats", {})
    assert raw.splits["train"].x["when"].dtype == object
    _table(tmp_path / "d.csv", [f"{d:02d}.{m:02d}.24" for d, m in zip(range(10, 30), [3, 4] * 10, strict=True)])
    assert load(str(tmp_path / "d.csv")).notes["date_formats"] == {"when": "%d.%m.%y"}  # two-digit fields: dates


def test_text_dates_of_one_format_with_a_few_other_values_are_one_line_naming_the_rows(tmp_path):
    written = list(WHEN.strftime("%m/%d/%Y"))
    _table(tmp_path / "t.csv", written[:38] + ["2024-03-01", "n/a?"])
    with pytest.raises(DataError, match=r"t\.csv: column 'when' holds dates written '%m/%d/%Y' \('01/01/2024'\) but "
                                        r"also other values \(row 39: '2024-03-01', row 40: 'n/a\?'\)"):
        load(str(tmp_path / "t.csv"))
    _table(tmp_path / "mixed.csv", written[:20] + list(WHEN[20:].strftime("%d.%m.%Y")))  # two ways: text, as before
    assert load(str(tmp_path / "mixed.csv")).splits["train"].x["when"].dtype == object


DURATIONS = {"1 day 02:00:00": 93600.0, "02:30:00": 9000.0, "00:05:12.5": 312.5, "PT5M": 300.0, "P1DT2H": 93600.0,
             "26:00:00": 93600.0, "1 day, 0:00:01": 86401.0, "-1 days +23:59:59": -1.0, "P1W": 604800.0}


def test_text_durations_are_read_as_seconds_and_two_fields_only_when_every_value_has_two(tmp_path):
    texts = list(DURATIONS) * 3
    _table(tmp_path / "t.csv", list(WHEN[:len(texts)].strftime("%Y-%m-%d")), wait=texts,
           other=["5 months"] + texts[1:])  # a month has no one length: not read, the column stays text
    raw = load(str(tmp_path / "t.csv"))
    assert raw.notes["durations"] == {"wait": "duration"}
    assert raw.splits["train"].x["wait"].tolist() == [DURATIONS[t] for t in texts]
    assert raw.splits["train"].x["other"].dtype == object
    _table(tmp_path / "hm.csv", list(WHEN[:3].strftime("%Y-%m-%d")), start=["08:30", "14:05", ""])
    hm = load(str(tmp_path / "hm.csv"))
    assert hm.notes["durations"] == {"start": "h:mm"}
    np.testing.assert_array_equal(hm.splits["train"].x["start"], [30600.0, 50700.0, np.nan])
    _table(tmp_path / "race.csv", list(WHEN[:3].strftime("%Y-%m-%d")), time=["59:10", "1:02:30", "58:01"])
    with pytest.raises(DataError, match=r"race\.csv: column 'time' holds durations of two fields \(row 1: '59:10'\), "
                                        r"which could be hours and minutes or minutes and seconds, beside longer ones "
                                        r"\(row 2: '1:02:30'\); write every value with hours, minutes and seconds"):
        load(str(tmp_path / "race.csv"))


def test_times_of_day_read_as_seconds_since_midnight_are_noted(tmp_path, tiny_bert_dir):
    _table(tmp_path / "t.csv", list(WHEN.strftime("%Y-%m-%d")), opens=list(WHEN.strftime("%H:%M:%S")))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exp = fpt.build(data=str(tmp_path / "t.csv"), body=tiny_bert_dir, **CLOSED)
    notes = [str(w.message) for w in caught if issubclass(w.category, ColumnNote)]
    assert any("column 'opens' holds times written H:MM:SS, read as seconds: since midnight if they are times of day"
               in n for n in notes), notes
    assert not any("'opens'" in n and "different value" in n for n in notes), notes
    opens = [f for f in exp.data.fitted["tokeniser"]["features"] if f["name"] == "opens"]
    assert [(f["kind"], f["duration"]) for f in opens] == [("numeric", "clock")]
    assert opens[0]["mean"] == pytest.approx(np.mean(WHEN.hour * 3600.0), rel=0.2)  # of the training split's


def test_predict_reads_text_dates_and_durations_as_training_did_and_refuses_other_writing(tmp_path, tiny_bert_dir):
    n = 40
    wait = [f"{h}:{m:02d}:00" for h, m in zip(np.arange(n) % 30, np.arange(n) * 7 % 60, strict=True)]
    _table(tmp_path / "t.csv", list(WHEN.strftime("%m/%d/%Y %H:%M")), wait=wait)
    fpt.fit(fpt.build(data=str(tmp_path / "t.csv"), body=tiny_bert_dir, **CLOSED), out=tmp_path / "run",
            progress=False)
    saved = json.loads((tmp_path / "run" / "data.json").read_text())["tokeniser"]["features"]
    assert {f.get("format") for f in saved if f["name"] == "when"} == {"%m/%d/%Y %H:%M"}
    assert [f.get("duration") for f in saved if f["name"] == "wait"] == ["duration"]
    model = fpt.load(tmp_path / "run")
    typed = pd.DataFrame({"x": np.arange(n) * 0.5, "when": WHEN, "wait": pd.to_timedelta(wait)})
    assert model.tokens(str(tmp_path / "t.csv"))[0].tolist() == model.tokens(typed)[0].tolist()
    new = typed.iloc[:2].assign(when=["12/25/2024 10:00", ""], wait=["P1DT2H", "3:00:00"])
    assert model.tokens(new)[0][0, 7, 0] == pytest.approx((93600 - saved[7]["mean"]) / saved[7]["std"], rel=1e-5)
    for column, value, said in (("when", "2024-12-25 10:00", r"holds text that is not a date written '%m/%d/%Y %H:%M', "
                                                             r"as the column's training dates are \(inputs\.iloc\[1\]: "
                                                             r"'2024-12-25 10:00'\)"),
                                ("wait", "02:30", r"holds values that are not durations written as the column's "
                                                  r"training values are \(inputs\.iloc\[1\]: '02:30'\)"),
                                ("wait", 3600, r"holds values that are not durations .*\(inputs\.iloc\[1\]: 3600\)")):
        given = typed.iloc[:2].astype({"when": object, "wait": object})
        given.loc[1, column] = value
        with pytest.raises(SchemaError, match=rf"inputs: column '{column}' {said}"):
            model.predict(given)


def test_a_saved_format_or_duration_kind_is_checked_when_a_run_is_read_back():
    when = np.array(["2024-01-01", "2024-02-01"], dtype="datetime64[us]")
    tok = TabularTokens.fit({"c": when, "d": np.array([1.0, 2.0])}, 50, {"c": "%m/%d/%Y"}, {"d": "clock"})
    assert from_json(json.loads(json.dumps(tok.to_json()))).features == tok.features
    for i, key, value in ((0, "format", "%s"), (5, "duration", "hours")):
        bad = json.loads(json.dumps(tok.to_json()))
        bad["features"][i][key] = value
        with pytest.raises(DataError, match=rf"features\[{i}\] \((c|d)\)\.{key}"):
            from_json(bad)


ES = ["ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sep", "oct", "nov", "dic"]


@pytest.mark.parametrize(("when", "unread"), [
    ([f"{d} {ES[d % 12]} 2024" for d in range(1, 29)], r"\d+ (ene|abr|ago|dic) 2024"),  # Spanish: 'feb' reads
    ([f"{d} {m} 2024" for d, m in zip(range(1, 29), ["marzo", "abril", "mayo", "junio"] * 7, strict=True)],
     r"\d+ [a-z]+ 2024"),
    ([f"{d} {m} 2024" for d, m in zip(range(1, 29), ["janv.", "févr.", "mars", "avr."] * 7, strict=True)],
     r"\d+ [a-zé]+\.? 2024"),
    ([f"{d}. {m} 2024" for d, m in zip(range(1, 29), ["Feb", "Mär", "Okt", "Dez"] * 7, strict=True)],
     r"\d+\. [A-Za-zä]+ 2024"),  # 'Feb' too: a day written '1.' reads by no format
])
def test_month_names_fpt_does_not_read_stay_text_and_the_note_says_so(when, unread, tmp_path):
    # strptime reads English month names only (15 Mar 2024): other languages' were text categories with no word of
    # why, beside dates fpt reads; they stay text (no language is guessed), and a note says what is not read
    _table(tmp_path / "t.csv", when)
    raw = load(str(tmp_path / "t.csv"))
    assert "when" not in raw.notes.get("date_formats", {}) and raw.splits["train"].x["when"].tolist() == when
    (note,) = [n for n in date_notes(raw) if "'when'" in n]
    assert re.fullmatch(re.escape(f"{tmp_path / 't.csv'}: column 'when' holds what look like dates written with a "
                                  "month's name, in a form fpt does not read ('") + unread + re.escape(
        "'; it reads English month names: 15 Mar 2024, 15-Mar-2024, Mar 15, 2024), so it is read as text categories; "
        "write them as ISO dates (2024-03-15) to read them as dates"), note), note


def test_month_names_spelt_as_english_ones_read_as_those_months_and_a_few_others_are_named(tmp_path):
    # mar, may, jun, jul, sep, oct, nov are these months' names in Spanish (and Italian, Portuguese...) too
    _table(tmp_path / "march.csv", [f"{d} mar 2024" for d in range(1, 29)])
    when = load(str(tmp_path / "march.csv")).splits["train"].x["when"]
    assert [str(v)[:10] for v in when[:2]] == ["2024-03-01", "2024-03-02"]
    spring = [f"{d} {ES[m]} 2024" for d, m in zip(range(1, 29), [2, 4, 5, 6] * 7, strict=True)]
    _table(tmp_path / "april.csv", spring[:27] + ["28 abr 2024"])  # one April among 28: a stray, named
    with pytest.raises(DataError, match=r"holds dates written '%d %b %Y' \('1 mar 2024'\) but also other values "
                                        r"\(row 28: '28 abr 2024'\); write those so too \(month names are read in "
                                        r"English\), or leave them empty"):
        load(str(tmp_path / "april.csv"))

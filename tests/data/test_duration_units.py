"""Durations written with unit words (5 min, 2 hours, 1.5h, 2 weeks) are read as seconds, as 02:30:00 and PT5M are;
they were a text category per value. A unit of one letter alone (90s, 3d, 5 m) is not taken as a duration: decades,
identifiers and metres are written so."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import fpt
from fpt.data import load
from fpt.errors import SchemaError

CLOSED = {"init": "random", "fit": "closed-form", "baselines": "none", "device": "cpu"}
UNITS = {"5 min": 300.0, "2 hours": 7200.0, "3 days": 259200.0, "1.5h": 5400.0, "90s": 90.0, "2 weeks": 1209600.0,
         "1h30m": 5400.0, "1 day 2 hours": 93600.0, "3 days, 2 hours": 266400.0, "120 ms": 0.12, "45 mins": 2700.0,
         "2 hrs": 7200.0, "5 Hours": 18000.0, "-5 min": -300.0, "10 sec": 10.0}


def _table(path, **columns) -> None:
    n = len(next(iter(columns.values())))
    pd.DataFrame({"x": np.arange(n) * 0.5, **columns, "label": ["ab"[i % 2] for i in range(n)]}).to_csv(path, index=False)


def test_durations_written_with_unit_words_are_seconds_as_pandas_reads_those_it_reads(tmp_path):
    texts = list(UNITS) * 2
    _table(tmp_path / "t.csv", wait=texts + [""])
    raw = load(str(tmp_path / "t.csv"))
    assert raw.notes["durations"] == {"wait": "duration"}
    np.testing.assert_array_equal(raw.splits["train"].x["wait"], [UNITS[t] for t in texts] + [np.nan])
    with warnings.catch_warnings():  # pandas' deprecation of some of its own letters
        warnings.simplefilter("ignore")
        for text, seconds in UNITS.items():
            try:
                read = pd.to_timedelta(text) / pd.Timedelta(seconds=1)
            except ValueError:  # 2 weeks, 2 hrs, 45 mins, 10 sec... pandas reads not
                continue
            assert read == pytest.approx(seconds), text


@pytest.mark.parametrize("values", [
    ["60s", "70s", "80s", "90s"],  # decades
    ["1d", "2d", "3d", "12d"],  # identifiers: one letter throughout
    ["5 m", "10 m", "2.5 m", "7 m"],  # metres (or minutes? not guessed)
    ["S1", "2h", "3d", "XL"],  # product codes, two of them written as durations would be
    ["3D", "2H", "4H", "1D"],  # upper case: codes and sizes, never units
    ["3 months", "1 year", "2 weeks", "5 days"],  # months and years have no one length
    ["5 min", "1,000 ms", "2 hours", "3 days"],  # a thousands separator: not read (pandas reads 1,000 ms as 1 s)
    ["1h 2h", "30m 1h", "1.5h 30m", "2h"],  # a unit twice, smallest first, a fraction before another unit
])
def test_text_that_is_not_durations_stays_text(values, tmp_path):
    _table(tmp_path / "t.csv", code=values * 5)
    raw = load(str(tmp_path / "t.csv"))
    assert "code" not in raw.notes.get("durations", {})
    assert raw.splits["train"].x["code"].tolist() == values * 5


@pytest.mark.parametrize(("values", "seconds"), [
    (["2h", "30m", "1h", "45m"], [7200.0, 1800.0, 3600.0, 2700.0]),  # two letters: the column says it
    (["1m30s", "45s", "2m", "10s"], [90.0, 45.0, 120.0, 10.0]),
    (["90s", "01:30:00", "45s", "00:00:10"], [90.0, 5400.0, 45.0, 10.0]),  # beside durations of another form
    (["120ms", "80ms", "95ms", "1ms"], [0.12, 0.08, 0.095, 0.001]),  # ms: a word
])
def test_units_of_one_letter_are_durations_where_the_column_says_so(values, seconds, tmp_path):
    _table(tmp_path / "t.csv", wait=values * 5)
    raw = load(str(tmp_path / "t.csv"))
    assert raw.notes["durations"] == {"wait": "duration"}
    np.testing.assert_allclose(raw.splits["train"].x["wait"], seconds * 5)


def test_predict_reads_unit_words_in_a_trained_duration_column_and_refuses_others(tmp_path, tiny_bert_dir):
    texts = list(UNITS) * 3
    _table(tmp_path / "t.csv", wait=texts)
    fpt.fit(fpt.build(data=str(tmp_path / "t.csv"), body=tiny_bert_dir, **CLOSED), out=tmp_path / "run",
            progress=False)
    model = fpt.load(tmp_path / "run")
    wait = next(f for f in model.preprocessing.tokeniser.features if f["name"] == "wait")
    assert wait["duration"] == "duration"
    tokens = model.tokens(pd.DataFrame({"x": [0.0, 0.5], "wait": ["2d", "02:00:00"]}))[0]
    np.testing.assert_allclose(tokens[:, 1, 0], (np.array([172800.0, 7200.0]) - wait["mean"]) / wait["std"], rtol=1e-5)
    with pytest.raises(SchemaError, match=r"inputs: column 'wait' holds values that are not durations written as the "
                                          r"column's training values are \(inputs\.iloc\[1\]: '3 months'\); write them so \(.*'5 "
                                          r"min'\)"):
        model.predict(pd.DataFrame({"x": [0.0, 0.5], "wait": ["2 hours", "3 months"]}))

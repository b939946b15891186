"""Round 9 of the hostile-input cases: a practitioner's habits and values that broke fpt with a raw traceback or a
silent wrong result. Each case failed before its fix (the commit that added it says how)."""

from __future__ import annotations

import datetime
import decimal
import json
import warnings

import numpy as np
import pytest
from hostile_helpers import FAST


@pytest.fixture(scope="module")
def id_run(tiny_bert_dir, tmp_path_factory):
    """A table model trained with an id column left out (drop_columns): predict writes the id back."""
    import pandas as pd

    import fpt

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"id": range(24), "x1": rng.normal(size=24) + 2 * (np.arange(24) % 2),
                          "x2": rng.normal(size=24), "label": ["ab"[i % 2] for i in range(24)]})
    out = tmp_path_factory.mktemp("id-run") / "run"
    fpt.fit(fpt.build(data=frame, target="label", drop_columns="id", body=tiny_bert_dir, **FAST), out=out,
            progress=False)
    return fpt.load(out)


def test_ids_of_decimals_dates_and_periods_are_written_by_every_writer(id_run, tmp_path):
    """A DataFrame's id column of Decimals, dates, pandas Periods, zoned Timestamps or timedeltas gave predict's
    table Python objects that json cannot hold: Prediction.write('p.jsonl') raised json's raw TypeError (and Parquet
    refused a Period as 'mixed value types'). Now each is written as the same text by every writer: dates ISO 8601, a
    Decimal its exact text, a duration ISO 8601's."""
    import pandas as pd
    import pyarrow.parquet as pq

    ids = {
        "decimal": ([decimal.Decimal("1.10"), decimal.Decimal("12345678901234567890.5"), decimal.Decimal("NaN")],
                    ["1.10", "12345678901234567890.5", None]),
        "date": ([datetime.date(2024, 1, 1), datetime.date(2024, 2, 29), None], ["2024-01-01", "2024-02-29", None]),
        "datetime": ([datetime.datetime(2024, 1, 1, 5), pd.Timestamp("2024-01-02"), pd.Timestamp("2024-01-02 00:00:01.5")],
                     ["2024-01-01T05:00", "2024-01-02", "2024-01-02T00:00:01.500"]),
        "zoned": (pd.to_datetime(["2024-01-01", "2024-07-01", None]).tz_localize("Europe/Paris"),
                  ["2024-01-01T00:00:00+01:00", "2024-07-01T00:00:00+02:00", None]),
        "period": (pd.period_range("2024-01", periods=3, freq="M"), ["2024-01", "2024-02", "2024-03"]),
        "duration": (pd.to_timedelta(["1 day 02:00:00", "30 min", "1.5 s"]).astype("m8[ns]"),
                     ["P1DT2H", "PT30M", "PT1.5S"]),
        "time": ([datetime.time(1, 2), datetime.time(23, 59, 59, 5), datetime.time(0)],
                 ["01:02:00", "23:59:59.000005", "00:00:00"]),
    }
    for kind, (values, written) in ids.items():
        frame = pd.DataFrame({"id": values, "x1": [0.1, 2.0, -1.0], "x2": [0.3, 0.4, 0.5]})
        prediction = id_run.predict_file(frame)
        assert prediction.columns["id"] == written, kind
        for suffix in ("jsonl", "json", "csv", "parquet"):
            path = tmp_path / f"{kind}.{suffix}"
            prediction.write(path)
            if suffix in ("jsonl", "json"):
                read = [json.loads(line)["id"] for line in path.read_text().splitlines()]
            elif suffix == "csv":
                read = [v or None for v in pd.read_csv(path, dtype=str, keep_default_na=False)["id"]]
            else:
                read = pq.read_table(path).column("id").to_pylist()
            assert read == written, (kind, suffix, read)


def test_as_written_durations_are_exact_iso_8601():
    """A nanosecond duration column's tolist is integers of nanoseconds: a day was written as 86400000000000."""
    from fpt.data.written import as_written, iso_duration

    col = np.array([86_400 * 10**9, 1, -90 * 10**9, 0, "NaT"], dtype="m8[ns]")
    assert as_written(col) == ["P1D", "PT0.000000001S", "-PT1M30S", "PT0S", None]
    assert iso_duration(((3 * 24 + 4) * 3600 + 5 * 60 + 6) * 10**9 + 700_000) == "P3DT4H5M6.0007S"
    assert as_written(np.array([datetime.timedelta(hours=25, microseconds=3)], dtype=object)) == ["P1DT1H0.000003S"]


def test_a_list_of_records_and_a_row_of_a_frame_are_read_as_rows(tab_run):
    """A list of records (df.to_dict('records'), a JSON API's body) and one row of a DataFrame (df.iloc[0], a
    Series indexed by the column names) were read as arrays: a 1-D array of dicts, a row's values in its own order,
    each refused as "inputs: shape (n,)", while a .json file of the same records and a dict of one record were read.
    Now read by their names, as those are."""
    import pandas as pd

    import fpt
    from fpt.errors import SchemaError

    model = fpt.load(tab_run)
    frame = pd.DataFrame({"x1": [0.5, 2.1, -1.0], "x2": [0.1, np.nan, 0.3], "label": ["a", "b", "b"]})
    expected = model.predict_proba(frame[["x1", "x2"]])
    records = frame[["x2", "x1"]].to_dict("records")  # another key order
    np.testing.assert_array_equal(model.predict_proba(records), expected)
    # a key a record lacks is missing there, as NaN is (another batch: float32's last digit may differ)
    np.testing.assert_allclose(model.predict_proba([{"x1": 2.1}, {"x2": 0.3, "x1": -1.0}]), expected[1:], atol=1e-6)
    assert model.score(frame.to_dict("records")) == model.score(frame)
    for i in range(3):
        np.testing.assert_allclose(model.predict_proba(frame[["x2", "x1"]].iloc[i]), expected[i:i + 1], atol=1e-6)
    assert model.predict_file(frame.iloc[1]).metrics == model.predict_file(frame.iloc[[1]]).metrics  # scored
    with pytest.raises(SchemaError, match=r"inputs: column 'x3' was not a feature when the model was trained; drop it"):
        model.predict([{"x1": 1.0, "x2": 2.0, "x3": 3.0}])
    with pytest.raises(SchemaError, match=r"shape \(2,\)"):  # a row without names is still an array, refused as one
        model.predict(pd.Series([0.5, 0.1]))


def test_booleans_with_gaps_in_a_file_are_numbers_as_in_a_frame(tmp_path, tiny_bert_dir):
    """A Parquet boolean with nulls, or a CSV's True/False beside blank cells, was read as the categories 'True' and
    'False', while the same column without a gap, and a DataFrame's nullable boolean with gaps, are numbers (0/1 and
    a missing indicator): one blank cell changed what the model read, and its predict then refused 1/0 (and a CSV's
    'true') as unseen categories. Now every one reads as numbers."""
    import pandas as pd

    from fpt.tasks import build_task
    from fpt.tasks.user_data import Preprocessing

    n = 30
    rng = np.random.default_rng(0)
    flags = [None if i % 5 == 0 else bool(i % 3) for i in range(n)]
    frame = pd.DataFrame({"x1": rng.normal(size=n), "flag": pd.array(flags, dtype="boolean"),
                          "label": ["ab"[i % 2] for i in range(n)]})
    frame.to_parquet(tmp_path / "t.parquet")
    (tmp_path / "t.csv").write_text("x1,flag,label\n" + "".join(
        f"{x!r},{'' if f is None else f},{lab}\n" for x, f, lab in zip(frame.x1, flags, frame.label, strict=True)))
    readings = []
    for data in (str(tmp_path / "t.parquet"), str(tmp_path / "t.csv")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            task = build_task("data", {"data": data}, 0)
        tok = Preprocessing.from_json(task.fitted).tokeniser
        (flag,) = [f for f in tok.features if f["name"] == "flag"]
        assert flag["kind"] == "numeric", (data, flag)
        readings.append((flag["mean"], flag["std"]))
    import fpt

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exp = fpt.build(data=frame, target="label", body=tiny_bert_dir, **FAST)
    (flag,) = [f for f in Preprocessing.from_json(exp.data.fitted).tokeniser.features if f["name"] == "flag"]
    assert readings[0] == readings[1] == (flag["mean"], flag["std"]) and 0 < flag["mean"] < 1


def test_texts_given_as_bytes_are_read_as_their_text(tmp_path, tiny_bert_dir):
    """A symbol-sequence model read texts given as bytes (numpy's dtype S, h5py's strings) as their repr: b'ACGT' was
    "b'ACGT'", three symbols the model never saw beside its own, predicted without a word (training on bytes made a
    vocabulary of b, ' and the bases). Now bytes are the UTF-8 text they hold; bytes that are not UTF-8 are refused."""
    import pandas as pd

    import fpt
    from fpt.data.tokenisers import text_of
    from fpt.errors import DataError
    from fpt.tasks.user_data import Preprocessing

    rng = np.random.default_rng(0)
    seqs = ["".join(rng.choice(list("ACGT"), size=rng.integers(10, 30))) for _ in range(30)]
    (tmp_path / "dna.csv").write_text("seq,label\n" + "".join(f"{s},{'ab'[i % 2]}\n" for i, s in enumerate(seqs)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fpt.fit(fpt.build(data=str(tmp_path / "dna.csv"), body=tiny_bert_dir, **FAST), out=tmp_path / "run",
                progress=False)
    model = fpt.load(tmp_path / "run")
    texts = ["ACGTTGCA", "GGA"]
    expected_tokens = model.tokens(texts)[0]
    for given in ([t.encode() for t in texts], np.array(texts, dtype="S"), np.array([t.encode() for t in texts],
                                                                                   dtype=object)):
        np.testing.assert_array_equal(model.tokens(given)[0], expected_tokens)
        np.testing.assert_array_equal(model.predict_proba(given), model.predict_proba(texts))
    assert int((expected_tokens == 1).sum()) == 0  # no unknown symbol
    frame = pd.DataFrame({"seq": [s.encode() for s in seqs], "label": ["ab"[i % 2] for i in range(30)]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exp = fpt.build(data=frame, target="label", body=tiny_bert_dir, **FAST)
    assert sorted(Preprocessing.from_json(exp.data.fitted).tokeniser.vocab) == ["A", "C", "G", "T"]
    assert text_of("é".encode()) == "é" and text_of(None) == "" and text_of(7) == "7"
    with pytest.raises(DataError, match=r"a text given as bytes is not UTF-8 \(b'\\xe9t\\xe9'.*decode the texts"):
        text_of("été".encode("latin-1"))

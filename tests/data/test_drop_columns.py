"""--drop-columns (RunConfig.drop_columns): a table's columns that are not features, and the notes that point to it."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import fpt
from fpt.cli import main
from fpt.data import load
from fpt.data.base import ColumnNote, column_notes, is_missing
from fpt.errors import ConfigError, DataError, SchemaError
from fpt.experiments.runner import config_key


def _table(path, n=60, extra=None):
    """row,x1,x2,label: row counts 0..n-1; label follows x1; ``extra``: more columns (name -> values)."""
    rng = np.random.default_rng(0)
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    frame = pd.DataFrame({"row": np.arange(n), "x1": x1.round(3), "x2": x2.round(3), **(extra or {}),
                          "label": np.where(x1 > 0, "hi", "lo")})
    frame.to_csv(path, index=False)
    return frame


def _build(path, body, **kw):
    fields = dict(data=str(path), body=body, init="random", steps=4, batch_size=8, eval_every=2, device="cpu",
                  fit="gradient", baselines="none")
    return fpt.build(**{**fields, **kw})


def test_dropped_columns_are_not_features_and_predict_reads_past_them(tmp_path, tiny_bert_dir):
    frame = _table(tmp_path / "t.csv")
    exp = _build(tmp_path / "t.csv", tiny_bert_dir, drop_columns="row")
    assert exp.config.drop_columns == "row" and exp.data.spec.seq_len == 2  # x1 and x2, one token each
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    fitted = json.loads((tmp_path / "run" / "data.json").read_text())
    assert fitted["features"] == ["x1", "x2"] and fitted["dropped"] == ["row"]
    model = fpt.load(tmp_path / "run")
    with_row, without_row = model.predict(frame.drop(columns="label")), model.predict(frame[["x1", "x2"]])
    assert (with_row == without_row).all() and len(with_row) == 60
    with pytest.raises(SchemaError, match="'other' was not a feature"):  # a column never seen is still refused
        model.predict(frame.drop(columns="label").assign(other=1.0))
    assert model.schema.describe()["dropped_columns"] == ["row"]
    # from the command line, into a CSV of predictions
    frame.drop(columns="label").to_csv(tmp_path / "new.csv", index=False)
    assert main(["predict", str(tmp_path / "run"), str(tmp_path / "new.csv"), "--out", str(tmp_path / "p.csv")]) == 0
    assert len(pd.read_csv(tmp_path / "p.csv")) == 60


def test_without_drop_columns_the_row_number_is_a_feature_and_the_key_is_unchanged(tmp_path, tiny_bert_dir):
    _table(tmp_path / "t.csv")
    exp = _build(tmp_path / "t.csv", tiny_bert_dir)
    assert exp.config.drop_columns is None and exp.data.spec.seq_len == 3
    plain = fpt.config.RunConfig(task="bit-xor")
    assert config_key(plain) == config_key(fpt.config.RunConfig(task="bit-xor", drop_columns=None))


def test_a_dataframe_drops_columns_and_arrays_refuse_them(tiny_bert_dir, tmp_path):
    frame = _table(tmp_path / "t.csv")
    exp = fpt.build(data=frame, target="label", drop_columns="row, x2", body=tiny_bert_dir, init="random", steps=2,
                    eval_every=2, device="cpu", fit="gradient", baselines="none")
    assert exp.data.spec.seq_len == 1
    with pytest.raises(ConfigError, match=r"drop_columns='row'.*data=tuple has none"):
        fpt.build(data=(frame[["x1", "x2"]].to_numpy(), frame["label"].to_numpy()), drop_columns="row",
                  body=tiny_bert_dir)


def test_dropping_every_column_but_one_text_column_reads_it_as_a_sequence(tmp_path):
    _table(tmp_path / "t.csv", extra={"dna": ["ACGT"[i % 4] * 3 + "GA" for i in range(60)]})
    assert load(str(tmp_path / "t.csv")).modality == "tabular"
    raw = load(str(tmp_path / "t.csv"), drop_columns="row,x1,x2")
    assert raw.modality == "sequence" and raw.notes["features"] == ["dna"] and raw.notes["dropped"] == ["row", "x1", "x2"]


def test_a_split_file_may_lack_a_dropped_column(tmp_path):
    (tmp_path / "d").mkdir()
    _table(tmp_path / "d" / "train.csv")
    _table(tmp_path / "d" / "test.csv", n=20).drop(columns="row").to_csv(tmp_path / "d" / "test.csv", index=False)
    raw = load(str(tmp_path / "d"), drop_columns="row")
    assert set(raw.splits) == {"train", "test"} and set(raw.splits["test"].x) == {"x1", "x2"}
    with pytest.raises(DataError, match=r"test.csv: no column\(s\) 'row'"):
        load(str(tmp_path / "d"))  # without --drop-columns every split file needs the training file's columns


@pytest.mark.parametrize(("drop", "target", "words"), [
    ("rowz", None, ["--drop-columns names 'rowz', which is not a column", "row, x1, x2, label"]),
    ("label", None, ["'label' is the target (chosen by default", "name the target with --target"]),
    ("x1", "x1", ["'x1' is the target and in --drop-columns"]),
    ("row,x1,x2", None, ["every column is a target (label) or dropped (row, x1, x2)"]),
])
def test_drop_columns_that_cannot_apply_are_one_line_errors(tmp_path, drop, target, words):
    _table(tmp_path / "t.csv")
    with pytest.raises(DataError) as err:
        load(str(tmp_path / "t.csv"), target, drop_columns=drop)
    assert str(tmp_path / "t.csv") in str(err.value)
    for word in words:
        assert word in str(err.value)


def test_drop_columns_on_data_without_columns_and_empty_names_are_errors(tmp_path, capsys):
    np.savez(tmp_path / "d.npz", X=np.zeros((20, 3)), y=np.arange(20) % 2)
    assert main(["data", "--data", str(tmp_path / "d.npz"), "--drop-columns", "x0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("fpt data: error: ") and "d.npz" in err and "but this is an npz file" in err
    assert "leaves out named columns of a table file" in err and "drop the option" in err
    assert len(err.splitlines()) == 1
    with pytest.raises(ConfigError, match="'drop_columns'=' , ' must name columns"):
        fpt.config.RunConfig(data="x.csv", task="data", drop_columns=" , ")


def test_fpt_data_names_what_was_dropped(tmp_path, capsys):
    _table(tmp_path / "t.csv")
    assert main(["data", "--data", str(tmp_path / "t.csv"), "--drop-columns", "row"]) == 0
    out = capsys.readouterr()
    assert "  features: x1, x2\n" in out.out and "  dropped: row\n" in out.out
    assert "note" not in out.err  # the row number is gone, so nothing is noted


def _notes(path, **kw):
    return column_notes(load(str(path), **kw))  # the data as read, before the held-out splits


def test_a_row_number_and_all_different_text_are_noted_and_measurements_are_not(tmp_path, capsys):
    n = 40
    when = [f"2020-01-{i % 28 + 1:02d}T{i:02d}" if i != 5 else "" for i in range(n)]  # one gap
    _table(tmp_path / "t.csv", n=n, extra={"when": when,
                                           "count": np.random.default_rng(1).permutation(n) * 7,
                                           "kind": ["ab"[i % 2] for i in range(n)]})
    notes = _notes(tmp_path / "t.csv")
    assert [n.split("column ")[1].split(" ")[0] for n in notes] == ["'row'", "'when'"]
    assert "whole numbers counting through the rows" in notes[0] and "--drop-columns row" in notes[0]
    assert "a different value on every training row that has one" in notes[1] and "--drop-columns when" in notes[1]
    # count: whole numbers all different, but not counting through a range (0, 7, 14, ...): a measurement
    assert main(["data", "--data", str(tmp_path / "t.csv")]) == 0
    err = capsys.readouterr().err
    assert err.count("fpt data: note: ") == 2 and "--drop-columns row" in err


def test_few_rows_are_not_noted_and_sequences_never(tmp_path):
    _table(tmp_path / "small.csv", n=12)
    assert _notes(tmp_path / "small.csv") == []
    _table(tmp_path / "s.csv", extra={"dna": [f"ACGT{i:03d}" for i in range(60)]})
    assert _notes(tmp_path / "s.csv", drop_columns="row,x1,x2") == []  # every sequence differs: it is the input


def test_a_datetime_column_with_a_gap_is_read_as_dates_not_noted_and_its_gap_is_missing(tmp_path):
    """A different time on every row is not an identifier once the column is read as dates (fpt.data.dates): it was
    noted as one while it was read as a category per time."""
    n = 30
    when = pd.Series(pd.date_range("2021-01-01", periods=n, freq="h"))
    when[4] = pd.NaT
    pd.DataFrame({"when": when, "x": np.arange(n) % 5 * 1.5, "label": ["ab"[i % 2] for i in range(n)]}).to_parquet(
        tmp_path / "t.parquet")
    raw = load(str(tmp_path / "t.parquet"))
    assert raw.splits["train"].x["when"].dtype.kind == "M" and raw.notes["dates"] == {"when": "naive"}
    assert is_missing(raw.splits["train"].x["when"]).tolist() == [i == 4 for i in range(n)]
    assert column_notes(raw) == []


@pytest.mark.parametrize(("values", "example", "plain"), [
    ([f"{1000 + 250 * i:,}" for i in range(12)], "1,000", "1000"),
    ([f"${1000 + 250 * i:,}.50" for i in range(12)], "$1,000.50", "1000.50"),
    ([f"{5 * i}%" for i in range(12)], "0%", "0"),
    ([f"{i}" if i % 2 else f"€{i}" for i in range(12)], "€0", "0"),
])
def test_numbers_written_for_people_are_noted(tmp_path, values, example, plain):
    _table(tmp_path / "t.csv", n=12, extra={"amount": values})
    (note,) = _notes(tmp_path / "t.csv")
    assert f"column 'amount' holds numbers written with signs or separators ({example!r})" in note
    assert f"e.g. {plain})" in note


def test_codes_and_plain_text_are_not_numbers_written_for_people(tmp_path):
    # a decimal comma ("3,5") is named, as 3.5: tests/hostile/test_hostile_round7.py
    _table(tmp_path / "t.csv", n=12, extra={"code": [f"A{i},{i}" for i in range(12)], "word": ["3 or 5"] * 12})
    assert _notes(tmp_path / "t.csv") == []


def test_a_target_of_numbers_written_for_people_names_the_fix(tmp_path):
    rng = np.random.default_rng(0)
    pd.DataFrame({"a": rng.normal(size=40), "price": [f"${rng.integers(1000, 99999):,}" for _ in range(40)]}).to_csv(
        tmp_path / "p.csv", index=False)
    for objective in ("auto", "regression"):
        with pytest.raises(DataError) as err:
            _build(tmp_path / "p.csv", "minilm", objective=objective)
        text = str(err.value)
        assert "p.csv: " in text and "target 'price' holds numbers written with signs or separators ('$" in text
        assert "write them as plain numbers (e.g. " in text, text


def test_the_notes_come_once_as_fpt_warnings_when_the_task_is_built(tmp_path, tiny_bert_dir):
    _table(tmp_path / "t.csv")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _build(tmp_path / "t.csv", tiny_bert_dir)
    notes = [w for w in caught if issubclass(w.category, ColumnNote)]
    assert len(notes) == 1 and "'row'" in str(notes[0].message)


def test_fpt_train_prints_each_note_once_though_fit_auto_builds_the_task_per_fold(tmp_path, tiny_bert_dir, capsys):
    frame = _table(tmp_path / "t.csv")
    frame.assign(label=(frame["label"] == "hi").astype(int)).to_csv(tmp_path / "t.csv", index=False)  # 0/1: inferred
    assert main(["train", "--data", str(tmp_path / "t.csv"), "--body", tiny_bert_dir, "--init", "random",
                 "--fit", "auto", "--steps", "4", "--eval-every", "2", "--baselines", "none",
                 "--out", str(tmp_path / "run"), "--quiet"]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("fpt train: note: ")]
    assert len(notes) == 2 and "objective classification, inferred" in notes[0] and "column 'row'" in notes[1]
    assert main(["data", "--data", str(tmp_path / "t.csv")]) == 0  # a new command says them again
    assert sum(line.startswith("fpt data: note: ") for line in capsys.readouterr().err.splitlines()) == 2


def test_dropped_columns_of_new_inputs_are_written_beside_the_predictions(tmp_path, tiny_bert_dir):
    """A Kaggle habit: train with the id left out, predict test.csv, submit id + prediction without pasting."""
    frame = _table(tmp_path / "t.csv")
    fpt.fit(_build(tmp_path / "t.csv", tiny_bert_dir, drop_columns="row", fit="closed-form"), out=tmp_path / "run",
            progress=False)
    new = frame.drop(columns="label").assign(row=lambda f: f.row + 1000)
    new.loc[3, "row"] = None
    new.to_csv(tmp_path / "new.csv", index=False)
    assert main(["predict", str(tmp_path / "run"), str(tmp_path / "new.csv"), "--out", str(tmp_path / "p.csv")]) == 0
    out = pd.read_csv(tmp_path / "p.csv")
    assert list(out.columns[:2]) == ["row", "prediction"]
    assert out.row.isna().tolist() == [i == 3 for i in range(60)]  # a missing id stays missing
    assert out.row.dropna().astype(int).tolist() == [r for r in range(1000, 1060) if r != 1003]
    # without the column, the predictions alone, as before
    frame[["x1", "x2"]].to_csv(tmp_path / "bare.csv", index=False)
    assert main(["predict", str(tmp_path / "run"), str(tmp_path / "bare.csv"), "--out", str(tmp_path / "b.csv")]) == 0
    assert pd.read_csv(tmp_path / "b.csv").columns[0] == "prediction"


def test_a_dropped_datetime_column_is_written_as_a_date(tmp_path, tiny_bert_dir):
    frame = _table(tmp_path / "t.csv").assign(when=pd.date_range("2024-01-01", periods=60, freq="D"))
    frame.to_parquet(tmp_path / "t.parquet")
    fpt.fit(_build(tmp_path / "t.parquet", tiny_bert_dir, drop_columns="row,when", fit="closed-form"),
            out=tmp_path / "run", progress=False)
    out = fpt.load(tmp_path / "run").predict_file(frame.drop(columns="label"))
    assert out.columns["when"][:2] == ["2024-01-01", "2024-01-02"]
    assert out.columns["row"][:3] == [0, 1, 2]

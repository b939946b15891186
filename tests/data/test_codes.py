"""Codes written in digits (zip codes '02139', labels '007') were read from a CSV as numbers: a zip code became a
magnitude (2139), a label column '007', '010', '100' the classes 7, 10, 100, and fpt predict wrote '7' where the file
said '007'. A column whose every value is whole digits, some written with a leading zero, is now read as text, as
written (fpt.data.codes), said once at training, and read the same at predict."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import fpt
from fpt.cli import main
from fpt.data import load, tables
from fpt.data.base import column_notes
from fpt.data.codes import written_as_codes
from fpt.errors import PYTHON, wording

CLOSED = {"init": "random", "fit": "closed-form", "baselines": "none", "device": "cpu"}
ZIPS = ["02139", "00501", "10001", "94105", "02140", "60601", "33101"]
LABELS = ["007", "010", "100"]
N = 42


def _rows(n: int = N, labels: bool = True) -> pd.DataFrame:
    """x, zip (7 zip codes, unrelated to the label) and a label of codes; all text, as written."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": [f"{v:.3f}" for v in rng.normal(size=n) + np.arange(n) % 3],
                          "zip": [ZIPS[i % 7] for i in range(n)]})
    if labels:
        frame["label"] = [LABELS[i % 3] for i in range(n)]
    return frame


def _write(frame: pd.DataFrame, path, sep: str = ","):
    path.write_text("\n".join([sep.join(frame.columns), *(sep.join(r) for r in frame.itertuples(index=False))]) + "\n")
    return path


@pytest.mark.parametrize(("values", "code"), [
    (["02139", "00501", "10001"], "02139"),
    (["007", None, "", "100"], "007"),  # gaps are no values
    ([" 0001", "0002 "], "0001"),
    (["0", "10", "3"], None),  # a zero alone is a number
    (["0.5", "00.5", "1"], None),  # a point: a number written to a width
    (["-01", "02"], None),  # a sign: a number
    (["1e05", "007"], None),
    (["007", "abc"], None),  # text among them: a text column, as before
    (["²07", "007"], None),  # ASCII digits only
])
def test_the_rule(values, code):
    assert written_as_codes(np.array(values, dtype=object)) == code
    assert written_as_codes(np.array([7.0, 10.0])) is None


@pytest.mark.parametrize("name", ["t.csv", "t.tsv", "t.csv.gz"])
def test_a_csv_reads_codes_as_written_and_numbers_as_numbers(tmp_path, name):
    frame = _rows().assign(pad=["-01", "00.5", "0"] * (N // 3), n=[str(i) for i in range(N)])
    path = tmp_path / name
    text_path = _write(frame, tmp_path / "plain.txt", "\t" if name.endswith(".tsv") else ",")
    if name.endswith(".gz"):
        import gzip

        path.write_bytes(gzip.compress(text_path.read_bytes()))
    else:
        text_path.rename(path)
    cols = tables.read_columns(path)
    assert cols["zip"].tolist() == frame["zip"].tolist()
    assert cols["label"].tolist() == frame["label"].tolist()
    assert cols["pad"].dtype.kind == "f" and cols["pad"][:3].tolist() == [-1.0, 0.5, 0.0]
    assert cols["n"].dtype.kind in "iu" and cols["x"].dtype.kind == "f"


def test_codes_with_gaps_and_in_datasets_reader(tmp_path, monkeypatch):
    """A code column with missing cells (pandas reads floats there), read by fpt's reader or datasets' (the reference,
    where fpt's chunks differ in types: here 4-row chunks of ints then floats)."""
    path = tmp_path / "t.csv"
    path.write_text("a,zip\n1,02139\n2,\n3,00501\n4,10001\n5.5,\n6.5,00501\n")
    monkeypatch.setattr(tables, "CSV_CHUNK_ROWS", 4)
    assert tables._csv_table(path, ",") is None  # the chunks differ: datasets reads it
    cols = tables.read_columns(path)
    assert cols["zip"].tolist() == ["02139", None, "00501", "10001", None, "00501"]
    assert cols["a"].tolist() == [1, 2, 3, 4, 5.5, 6.5]


def test_training_reads_codes_as_categories_and_labels_as_written_with_a_note(tmp_path):
    path = _write(_rows(), tmp_path / "t.csv")
    raw = load(str(path))
    assert raw.splits["train"].x["zip"].tolist()[:3] == ZIPS[:3]
    assert sorted(set(raw.splits["train"].y[:, 0])) == LABELS
    notes = column_notes(raw)
    assert f"{path}: column 'zip': values written with leading zeros ('02139') are read as codes (text categories), " \
           "not numbers; if they are quantities, write them without the leading zeros" in notes


def test_codes_alone_are_a_sequence_as_any_text_alone_is_and_say_so(tmp_path):
    path = _write(_rows().drop(columns="x"), tmp_path / "t.csv")
    raw = load(str(path))
    assert raw.modality == "sequence" and raw.splits["train"].x["zip"].tolist()[:2] == ZIPS[:2]
    assert f"{path}: column 'zip': values written with leading zeros ('02139') are read as text: the table's only " \
           "feature, a symbol sequence of its digits (--modality tabular reads them as categories), not numbers; if " \
           "they are quantities, write them without the leading zeros" in column_notes(raw)
    with wording(PYTHON):  # fpt.build's words, where it reads the data: its argument, not the flag
        assert "(modality='tabular' reads them as categories)" in " ".join(column_notes(raw))
    assert load(str(path), modality="tabular").modality == "tabular"


def test_many_codes_as_labels_classify(tmp_path, tiny_bert_dir):
    """More than 20 distinct integers were a regression ('001'..'030' read as 1..30, and the labels lost)."""
    frame = _rows(60).assign(label=[f"{i % 30:03d}" for i in range(60)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        task = fpt.build(data=str(_write(frame, tmp_path / "t.csv")), body=tiny_bert_dir, **CLOSED).data
    assert task.info["objective"] == "classification"
    assert task.info["classes"]["label"][:3] == ["000", "001", "002"]
    assert any("'label' holds labels written with leading zeros ('000'), read as written" in str(w.message)
               for w in caught)
    frame = frame.astype(str)  # a DataFrame of text (pd.read_csv(dtype=str)) reads the same
    task = fpt.build(data=frame, body=tiny_bert_dir, **CLOSED).data
    assert task.info["objective"] == "classification" and task.info["classes"]["label"][:2] == ["000", "001"]


def test_train_and_predict_keep_codes_as_written(tmp_path, tiny_bert_dir, capsys):
    path = _write(_rows(), tmp_path / "t.csv")
    run = tmp_path / "run"
    args = ["train", "--data", str(path), "--body", tiny_bert_dir, "--out", str(run), "--init", "random",
            "--fit", "closed-form", "--baselines", "none", "--device", "cpu"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "column 'zip': values written with leading zeros ('02139') are read as codes" in err, err
    data = json.loads((run / "data.json").read_text())
    assert data["classes"] == [LABELS]
    kinds = {f["name"]: f for f in data["tokeniser"]["features"]}
    assert kinds["zip"]["kind"] == "categorical" and set(kinds["zip"]["categories"]) == set(ZIPS)
    new = _write(_rows(6, labels=False), tmp_path / "new.csv")
    assert main(["predict", str(run), str(new), "--out", str(tmp_path / "p.csv")]) == 0
    lines = (tmp_path / "p.csv").read_text().splitlines()
    assert lines[0].split(",")[0] == "prediction" and len(lines) == 7
    assert {line.split(",")[0] for line in lines[1:]} <= set(LABELS), lines  # '007' as written, never '7'
    # a file whose codes hold no leading zero reads them as numbers: the saved reading (codes) wins
    plain = tmp_path / "plain.csv"
    plain.write_text("x,zip,label\n0.5,10001,100\n1.5,94105,100\n")
    assert main(["predict", str(run), str(plain), "--out", str(tmp_path / "q.csv")]) == 0
    err = capsys.readouterr().err
    assert "label 100 is not one of" not in err, err
    assert fpt.load(run).predict(str(plain)).tolist() == fpt.load(run).predict(
        pd.DataFrame({"x": [0.5, 1.5], "zip": ["10001", "94105"]})).tolist()
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("x,zip,label\n0.5,10001,7\n")  # '7' is no class '007': refused, not matched
    assert main(["predict", str(run), str(wrong), "--out", str(tmp_path / "r.csv")]) == 2
    assert "label '7' is not one of the model's classes ('007', '010', '100')" in capsys.readouterr().err


def test_sklearn_keeps_a_frame_of_texts(tiny_bert_dir):
    """A DataFrame the user read with dtype=str keeps its texts: the zip codes categories, the labels as written."""
    from fpt.sklearn import FPTClassifier

    frame = _rows()
    clf = FPTClassifier(body=tiny_bert_dir, init="random", steps=2, device="cpu")
    clf.fit(frame[["x", "zip"]], frame["label"])
    assert clf.classes_.tolist() == LABELS
    kinds = {f["name"]: f["kind"] for f in clf.preprocessing_.tokeniser.features}
    assert kinds["x1"] == "categorical"
    assert set(clf.predict(frame[["x", "zip"]].head(6))) <= set(LABELS)

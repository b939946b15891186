"""Table files as practitioners have them: compressed as downloaded (.csv.gz, .bz2, .xz, a one-file .zip, .jsonl.gz),
saved without a header row (numpy.savetxt, to_csv(header=False)), saved in another encoding than UTF-8 (Excel's
Windows-1252), and labels or categories that differ only in spaces or letter case."""

from __future__ import annotations

import bz2
import gzip
import lzma
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest
import torch

import fpt
from fpt.cli import main
from fpt.data import detect, load
from fpt.data.base import ColumnNote, column_notes
from fpt.data.tables import read_columns, split_files, table_stem, table_suffix
from fpt.errors import DataError


def _frame(n: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    x1, x2 = rng.normal(size=n).round(3), rng.normal(size=n).round(3)
    return pd.DataFrame({"x1": x1, "x2": x2, "kind": ["ab"[i % 2] for i in range(n)],
                         "label": np.where(x1 > 0, "hi", "lo")})


def _compress(text: str, path):
    data = text.encode()
    if path.suffix.lower() == ".zip":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr(path.stem, data)
    else:
        path.write_bytes({".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}[path.suffix.lower()](data))
    return path


@pytest.mark.parametrize("name", ["t.csv.gz", "t.csv.bz2", "t.csv.xz", "t.csv.zip", "t.tsv.gz", "t.jsonl.gz",
                                  "T.CSV.GZ"])
def test_compressed_tables_read_as_the_plain_file(tmp_path, name):
    frame = _frame()
    plain = tmp_path / "plain.csv"
    frame.to_csv(plain, index=False)
    text = frame.to_json(orient="records", lines=True) if ".jsonl" in name else \
        frame.to_csv(index=False, sep="\t" if ".tsv" in name else ",")
    path = _compress(text, tmp_path / name)
    assert detect(str(path)) == "tables"
    got, want = read_columns(path), read_columns(plain)
    assert list(got) == list(want)
    for c in want:
        assert got[c].tolist() == want[c].tolist(), c
    raw = load(str(path))
    kind = "JSON lines" if ".jsonl" in name else "CSV"
    assert raw.targets == ["label"] and raw.source == f"{kind} file {path}"


def test_suffix_and_stem_read_past_compression_only_of_text_tables(tmp_path):
    from pathlib import Path

    assert table_suffix(Path("a/train.csv.gz")) == ".csv" and table_stem(Path("a/train.csv.gz")) == "train"
    assert table_suffix(Path("x.TSV.bz2")) == ".tsv" and table_stem(Path("x.TSV.bz2")) == "x"
    assert table_suffix(Path("x.parquet.gz")) == ".gz"  # Parquet compresses inside its own format
    assert table_suffix(Path("x.npz.gz")) == ".gz" and table_suffix(Path("data.gz")) == ".gz"
    assert table_suffix(Path("my.data.csv")) == ".csv" and table_stem(Path("train.csv")) == "train"


def test_compressed_split_files_and_predict_from_a_compressed_file(tmp_path, tiny_bert_dir):
    frame = _frame(60)
    (tmp_path / "d").mkdir()
    _compress(frame[:45].to_csv(index=False), tmp_path / "d" / "train.csv.gz")
    _compress(frame[45:].to_csv(index=False), tmp_path / "d" / "test.csv.gz")
    assert {k: v.name for k, v in split_files(tmp_path / "d").items()} == {"train": "train.csv.gz",
                                                                           "test": "test.csv.gz"}
    exp = fpt.build(data=str(tmp_path / "d"), body=tiny_bert_dir, init="random", fit="closed-form",
                    baselines="none", device="cpu")
    assert len(exp.data.eval_sets["test"].y) == 15
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    _compress(frame.drop(columns="label").to_csv(index=False), tmp_path / "new.csv.gz")
    assert main(["predict", str(tmp_path / "run"), str(tmp_path / "new.csv.gz"), "--out", str(tmp_path / "p.csv")]) == 0
    plain = fpt.load(tmp_path / "run").predict(frame.drop(columns="label"))
    assert pd.read_csv(tmp_path / "p.csv")["prediction"].tolist() == list(plain)


def test_a_zip_of_several_files_or_not_a_zip_is_one_line(tmp_path):
    with zipfile.ZipFile(tmp_path / "t.csv.zip", "w") as z:
        z.writestr("train.csv", "a,label\n1,x\n")
        z.writestr("test.csv", "a,label\n1,x\n")
    with pytest.raises(DataError, match=r"t\.csv\.zip: a zip archive of 2 files .*unzip it"):
        read_columns(tmp_path / "t.csv.zip")
    (tmp_path / "u.csv.zip").write_text("a,label\n1,x\n")
    # text under a zip's name: what it is, and the name that reads it (fpt.data.sniff)
    with pytest.raises(DataError, match=r"u\.csv\.zip: text \(it begins 'a,label'\), not a zip archive; rename it u\.csv$"):
        read_columns(tmp_path / "u.csv.zip")


def test_a_file_without_a_header_row_is_refused_not_read_with_its_first_example_as_names(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    np.savetxt(tmp_path / "saved.csv", np.c_[X, np.arange(30) % 2], delimiter=",")
    with pytest.raises(DataError, match=r"saved\.csv: the first row looks like data, not column names .*header=True"):
        load(str(tmp_path / "saved.csv"))
    # pandas without its header: text labels in the last column, numbers before them; and a .tsv
    frame = _frame()
    frame[["x1", "x2", "label"]].to_csv(tmp_path / "nohead.csv", index=False, header=False)
    frame[["x1", "x2", "label"]].to_csv(tmp_path / "nohead.tsv", index=False, header=False, sep="\t")
    for name in ("nohead.csv", "nohead.tsv"):
        assert main(["data", "--data", str(tmp_path / name)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and f"{name}: the first row looks like data" in err, err
        # two numbers are always in some order: the label, one of its column's values, gives the row away
        assert f"({frame.x1[0]}, {frame.x2[0]}, {frame.label[0]}: values like the rows under it)" in err


@pytest.mark.parametrize("names", [
    ["0", "1", "2", "3"],  # a wide series table's time points (pandas' default column names)
    ["2019", "2020", "2021", "2022"],  # years
    ["400.0", "400.5", "401.0", "401.5"],  # a spectrum's wavelengths
    ["4000", "3998", "3996", "3994"],  # an infrared spectrum's wavenumbers, falling
    ["a", "b", "c", "d"],
    ["x", "3", "y", "7"],  # names that are not all numbers
    ["0", "1", "label", "3"],  # in order; a name above the text column that none of its values is
])
def test_headers_of_numbers_that_name_columns_are_read(tmp_path, names):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.normal(size=(20, 4)).round(2), columns=names).assign(kind=["ab"[i % 2] for i in
                                                                                        range(20)])
    if "label" in names:
        frame["label"] = ["xy"[i % 2] for i in range(20)]
    frame.to_csv(tmp_path / "t.csv", index=False)
    assert list(read_columns(tmp_path / "t.csv")) == list(frame.columns)


def test_text_in_another_encoding_names_the_line_and_utf8(tmp_path, capsys):
    frame = _frame()
    frame.loc[5, "label"] = "élevé"
    frame.to_csv(tmp_path / "t.csv", index=False, encoding="cp1252")
    assert main(["data", "--data", str(tmp_path / "t.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "t.csv: line 7 is not UTF-8 text (byte 0xe9 at column" in err and "save the file as UTF-8" in err
    # the same slip in a compressed file, and in JSON lines
    _compress(frame.to_csv(index=False), tmp_path / "u.csv.gz")  # UTF-8: reads
    assert read_columns(tmp_path / "u.csv.gz")["label"][5] == "élevé"
    (tmp_path / "t.jsonl").write_bytes(frame.to_json(orient="records", lines=True, force_ascii=False)
                                       .encode("cp1252"))
    with pytest.raises(DataError, match=r"t\.jsonl: line 6 is not UTF-8 text"):
        read_columns(tmp_path / "t.jsonl")


def test_labels_and_categories_that_differ_only_in_spaces_or_case_are_noted(tmp_path, capsys):
    frame = _frame()
    frame.loc[::7, "label"] = frame.loc[::7, "label"] + " "
    frame.loc[3, "kind"] = "A"
    frame.to_csv(tmp_path / "t.csv", index=False)
    notes = column_notes(load(str(tmp_path / "t.csv")))
    assert len(notes) == 2
    assert "target 'label' holds labels that differ only in spaces or letter case ('hi ' and 'hi')" in notes[0] \
        or "target 'label' holds labels that differ only in spaces or letter case ('lo ' and 'lo')" in notes[0]
    assert "column 'kind' holds categories that differ only in spaces or letter case ('a' and 'A')" in notes[1]
    assert main(["data", "--data", str(tmp_path / "t.csv")]) == 0
    assert capsys.readouterr().err.count("fpt data: note: ") == 2
    _frame().to_csv(tmp_path / "clean.csv", index=False)  # written one way: nothing to say
    assert column_notes(load(str(tmp_path / "clean.csv"))) == []


def test_labels_and_categories_that_differ_only_in_unicode_form_are_noted(tmp_path):
    """'café' composed (NFC) and decomposed (NFD, as macOS writes it) print alike and were two classes, silently."""
    nfc, nfd = "caf\u00e9", "cafe\u0301"
    frame = _frame()
    frame["label"] = [nfc if i % 2 else "tea" for i in range(len(frame))]
    frame.loc[::5, "label"] = nfd
    frame["kind"] = [nfd if i % 3 else "b" for i in range(len(frame))]
    frame.loc[1, "kind"] = nfc
    frame.to_csv(tmp_path / "t.csv", index=False)
    notes = column_notes(load(str(tmp_path / "t.csv")))
    assert len(notes) == 2, notes
    assert "target 'label' holds labels that differ only in Unicode form" in notes[0]
    assert "'caf\\xe9'" in notes[0] and "'cafe\\u0301'" in notes[0] and "unicodedata.normalize('NFC'" in notes[0]
    assert "column 'kind' holds categories that differ only in Unicode form" in notes[1]


def test_class_folders_that_differ_only_in_case_are_noted(tmp_path, tiny_bert_dir):
    from PIL import Image

    for c in ("Cat", "cat", "dog"):
        (tmp_path / "img" / c).mkdir(parents=True)
        for i in range(4):
            Image.fromarray(np.full((8, 8), 30 * i + len(c), dtype=np.uint8)).save(tmp_path / "img" / c / f"{i}.png")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fpt.build(data=str(tmp_path / "img"), body=tiny_bert_dir, init="random", fit="closed-form", baselines="none",
                  device="cpu", image_size=8, patch_size=4)
    notes = [str(w.message) for w in caught if issubclass(w.category, ColumnNote)]
    assert len(notes) == 1 and "('Cat' and 'cat')" in notes[0] and "different classes" in notes[0]


def test_an_empty_last_column_as_the_default_target_says_to_name_the_target(tmp_path):
    frame = _frame().rename(columns={"label": "species"}).assign(notes="")  # a spreadsheet's trailing empty column
    frame.to_csv(tmp_path / "t.csv", index=False)
    with pytest.raises(DataError, match=r"t\.csv: target column 'notes' \(chosen by default: .*\) is empty on every "
                                        r"row, so it cannot be predicted; name the column to predict with --target"):
        load(str(tmp_path / "t.csv"))
    assert load(str(tmp_path / "t.csv"), target="species").targets == ["species"]  # the empty feature trains


def test_a_default_target_with_gaps_says_it_was_chosen_by_default(tmp_path):
    """A Titanic-like table: the label is not the last column and has no conventional name; the user forgot --target,
    and the last column (a port of embarkation) has gaps."""
    frame = _frame().rename(columns={"label": "Survived"})
    frame["Embarked"] = ["S", "C", None, "Q"] * 10
    frame.to_csv(tmp_path / "t.csv", index=False)
    with pytest.raises(DataError, match=r"target column 'Embarked' \(chosen by default: .* else the last\) is missing "
                                        r"on row\(s\) 3, 7, .*if it is not the target, name the target with --target"):
        load(str(tmp_path / "t.csv"))
    with pytest.raises(DataError) as named:  # named by the user: no word of defaults
        load(str(tmp_path / "t.csv"), target="Embarked")
    assert "chosen by default" not in str(named.value) and "drop those rows or fill them in" in str(named.value)


def _long(n_series=40, length=25, seed=0):
    """tsfresh's / sktime's long format: a row per time point, the series' id and its label on every row."""
    rng = np.random.default_rng(seed)
    rows = [(sid, t, np.sin(t * (1 + sid % 2)) + rng.normal(0, 0.3), "ab"[sid % 2])
            for sid in range(n_series) for t in range(length)]
    return pd.DataFrame(rows, columns=["series_id", "time", "value", "label"])


def test_a_long_format_series_table_names_the_id_that_gives_the_target_away(tmp_path, capsys):
    _long().to_csv(tmp_path / "long.csv", index=False)
    (note,) = column_notes(load(str(tmp_path / "long.csv")))
    assert "column 'series_id' gives the target away: each of its 40 values comes with one target value on all of " \
           "its rows (25-25 rows each)" in note
    # fpt's internals called directly speak as the command line does (fpt.build's words: test_surface_words.py)
    assert "long format" in note and "--series-id series_id," in note and "Python" not in note
    assert "--drop-columns series_id" in note
    assert main(["data", "--data", str(tmp_path / "long.csv")]) == 0
    assert capsys.readouterr().err.count("gives the target away") == 1
    # a regression target constant per series, and an id of text
    frame = _long().assign(series_id=lambda f: "s" + f.series_id.astype(str),
                           label=lambda f: f.series_id.str[1:].astype(float) * 0.5)
    frame.to_csv(tmp_path / "r.csv", index=False)
    (note,) = column_notes(load(str(tmp_path / "r.csv")))
    assert "column 'series_id' gives the target away" in note


@pytest.mark.parametrize("case", ["a predictor that is not a copy", "few rows", "values all different",
                                  "one target value"])
def test_what_does_not_give_the_target_away_is_not_named(tmp_path, case):
    frame = _frame(60)
    frame["grade"] = list("ABC") * 20
    if case == "few rows":
        frame = frame[:15].assign(grade=lambda f: f.label)
    elif case == "values all different":
        frame["grade"] = [f"{v}{i}" for i, v in enumerate(frame.label)]  # noted as an identifier instead
    elif case == "one target value":
        frame = frame.assign(label="hi", grade=list("AB") * 30)
    frame.to_csv(tmp_path / "t.csv", index=False)
    if case == "one target value":  # a constant target is its own error; the columns are not asked
        with pytest.raises(DataError, match="one class"):
            fpt.build(data=str(tmp_path / "t.csv"), fit="closed-form", baselines="none")
        return
    notes = column_notes(load(str(tmp_path / "t.csv")))
    assert not any("gives the target away" in n for n in notes), notes
    assert len(notes) == (1 if case == "values all different" else 0), notes


@pytest.mark.parametrize(("name", "words"), [
    ("sheet.xlsx", "a spreadsheet: save its sheet as CSV"), ("sheet.XLS", "a spreadsheet"),
    ("iris.data", "numpy.savetxt's default"), ("x.txt", "named .csv or .tsv"),
    ("x.npy", "numpy.savez('d.npz', X=X, y=y)"), ("df.pkl", "fpt never reads"),
    ("set.arff", "NAME_TRAIN.ts"), ("a.h5", "HDF5"), ("x.weird", "unknown format '.weird'; give a .csv"),
])
def test_files_of_kinds_fpt_does_not_read_say_how_to_convert_them(tmp_path, name, words, capsys):
    (tmp_path / name).write_bytes(b"1 2 3\n")
    assert main(["data", "--data", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err and name in err, err


def test_a_header_only_file_of_new_inputs_predicts_nothing(tmp_path, tiny_bert_dir, capsys):
    """A batch job on a day with nothing new: the header and no rows is an empty table of predictions, not an error
    (it was a traceback from the category encoder, which refuses 0 rows); training on it is still an error."""
    frame = _frame()
    fpt.fit(fpt.build(data=frame, body=tiny_bert_dir, init="random", fit="closed-form", baselines="none",
                      device="cpu"), out=tmp_path / "run", progress=False)
    for name, cols in (("new.csv", "x1,x2,kind"), ("scored.csv", "x1,x2,kind,label")):
        (tmp_path / name).write_text(cols + "\n")
        out = tmp_path / f"p-{name}"
        assert main(["predict", str(tmp_path / "run"), str(tmp_path / name), "--out", str(out)]) == 0
        assert out.read_text() == "prediction,score_hi,score_lo\n"
    assert fpt.load(tmp_path / "run").predict_file(str(tmp_path / "scored.csv")).metrics is None
    with pytest.raises(DataError, match="a header row and no data rows"):
        load(str(tmp_path / "new.csv"))


@pytest.mark.parametrize("index", ["range", "names"])
def test_a_row_index_written_by_to_csv_is_left_out_and_written_back_beside_predictions(tmp_path, tiny_bert_dir, index,
                                                                                       capsys):
    """df.to_csv('x.csv') (pandas' default index=True) and R's write.csv put the row index first under an empty
    header cell; it was an error ('column 1 of the header has no name'). It is the row index, never a feature (a
    counting column that only tells the training rows apart): left out with a note, and written back first beside
    each prediction, so that pd.read_csv(predictions, index_col=0) lines up with the input."""
    frame = _frame()
    if index == "names":  # R's row names, such as mtcars' car models
        frame.index = [f"row-{i}" for i in range(len(frame))]
    frame.to_csv(tmp_path / "train.csv")
    assert (tmp_path / "train.csv").read_text().startswith(",x1,x2,kind,label")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exp = fpt.build(data=str(tmp_path / "train.csv"), body=tiny_bert_dir, init="random", fit="closed-form",
                        baselines="none", device="cpu")
    assert exp.data.info["features"] == ["x1", "x2", "kind"] and exp.data.info["row_index"] == [
        str(tmp_path / "train.csv")]
    notes = [str(w.message) for w in caught if issubclass(w.category, ColumnNote)]
    assert len(notes) == 1 and "first column has no name" in notes[0] and "row index" in notes[0], notes
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    new = frame.drop(columns="label").iloc[5:12]
    new.to_csv(tmp_path / "new.csv")
    assert main(["predict", str(tmp_path / "run"), str(tmp_path / "new.csv"), "--out", str(tmp_path / "p.csv")]) == 0
    got = pd.read_csv(tmp_path / "p.csv", index_col=0)
    assert got.index.astype(str).tolist() == new.index.astype(str).tolist()
    assert got["prediction"].tolist() == list(fpt.load(tmp_path / "run").predict(new.reset_index(drop=True)))
    # a file without the index predicts the same, without it
    new.to_csv(tmp_path / "plain.csv", index=False)
    assert main(["predict", str(tmp_path / "run"), str(tmp_path / "plain.csv"), "--out", str(tmp_path / "q.csv")]) == 0
    assert pd.read_csv(tmp_path / "q.csv").columns[0] == "prediction"


def test_an_unnamed_column_other_than_the_first_is_still_refused(tmp_path):
    (tmp_path / "t.csv").write_text("a,,label\n1,2,x\n3,4,y\n")
    with pytest.raises(DataError, match="column 2 of the header has no name"):
        read_columns(tmp_path / "t.csv")


def test_a_json_object_of_columns_says_to_write_records(tmp_path, capsys):
    """pandas' to_json default (orient='columns') read as one row of nested objects; the error printed the nested
    type of every row (thousands of characters)."""
    _frame(200).to_json(tmp_path / "t.json")
    assert main(["data", "--data", str(tmp_path / "t.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err) < 300 and "orient='records', lines=True" in err and "object of columns" in err, err


def test_a_split_files_codes_read_as_numbers_are_the_categories_fpt_predict_reads(tmp_path, tiny_gpt2_dir):
    """train.csv's column of codes is text ('a', '1', ...); test.csv's holds only numbers and a gap, so pandas
    reads it as floats (1.0). Training tokenised the test split's 1.0 as the unseen category '1.0' (the shared slot)
    while fpt predict reads the same file's 1.0 as the category '1': the test figure was not the model's on that file
    (0.375 against fpt predict's 0.975 on one such table)."""
    from fpt.data.inputs import Schema, read_inputs
    from fpt.tasks.user_data import Preprocessing

    rng = np.random.default_rng(0)
    codes = ["a", "b", "1", "2", "3"]
    train = pd.DataFrame({"x": rng.normal(size=40).round(3), "code": [codes[i % 5] for i in range(40)],
                          "label": ["yes" if codes[i % 5] in "13" else "no" for i in range(40)]})
    test = pd.DataFrame({"x": rng.normal(size=8).round(3), "code": ["1", "2", "3", "", "1", "2", "3", "1"],
                         "label": ["yes", "no", "yes", "no", "yes", "no", "yes", "yes"]})
    train.to_csv(tmp_path / "train.csv", index=False)
    test.to_csv(tmp_path / "test.csv", index=False)
    assert read_columns(tmp_path / "test.csv")["code"].dtype.kind == "f"
    exp = fpt.build(data=str(tmp_path), body=tiny_gpt2_dir, init="random", fit="closed-form", device="cpu",
                    baselines="none")
    prep = Preprocessing.from_json(exp.data.fitted)
    read = read_inputs(tmp_path / "test.csv", Schema(prep, exp.data.info, exp.config.max_categories))
    tokens, _ = prep.tokeniser(read.x)
    assert torch.equal(exp.data.eval_sets["test"].x, tokens)

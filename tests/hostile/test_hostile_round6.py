"""Hostile inputs, round 6: files as practitioners have them. Something else under a data file's name (a Git LFS
pointer, an HTML error page, gzip bytes the browser did or did not decompress, an Excel workbook renamed .csv), a
.zip named for no format, CSV exports with Excel's habits (trailing empty columns, a 'sep=' line), a header that is
shorter than its rows or is repeated mid-file, a TSV named .csv, and a run directory inside the data it reads."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hostile_helpers import files, one_line, table

from fpt.cli import main

LFS = ("version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca"
       "24d17e2393\nsize 12345\n")
HTML = "<!DOCTYPE html>\n<html><head><title>Sign in</title></head>\n<body>Access denied</body></html>\n"
ROWS = [(f"{i * 0.5:.1f}", f"{(i * 7) % 5}", "ab"[i % 2]) for i in range(20)]
CSV = "x1,x2,label\n" + "".join(",".join(r) + "\n" for r in ROWS)


def _xlsx() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:  # Office Open XML: a zip of these members
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("xl/workbook.xml", "<workbook/>")
    return buf.getvalue()


def _parquet() -> bytes:
    import pandas as pd

    buf = io.BytesIO()
    pd.read_csv(io.StringIO(CSV)).to_parquet(buf)
    return buf.getvalue()


def _npz() -> bytes:
    buf = io.BytesIO()
    np.savez(buf, X=np.zeros((4, 2)), y=np.arange(4) % 2)
    return buf.getvalue()


def _images(root: Path, odd: str) -> Path:
    from PIL import Image

    for c in ("cat", "dog"):
        (root / "img" / c).mkdir(parents=True)
        for i in range(3):
            Image.fromarray(np.full((4, 4), 40 * i, dtype=np.uint8)).save(root / "img" / c / f"{i}.png")
    (root / "img" / "cat" / "3.png").write_text(odd)
    return root / "img"


# name: (file name, its bytes, words the one line holds). Before fpt.data.sniff each failed on a symptom: the NUL bytes
# of 'damaged or UTF-16 text', '1 column(s) (version https://git-lfs...)', '2 training example(s) cannot spare 1 for
# a test split' (an HTML page read as a table of two rows), 'Parquet magic bytes not found', 'before @data'.
SOMETHING_ELSE = {
    "LFS pointer as .csv": ("d.csv", LFS, ["d.csv", "a Git LFS pointer", "not CSV", "git lfs pull"]),
    "LFS pointer as .npz": ("d.npz", LFS, ["d.npz", "a Git LFS pointer", "not an .npz archive", "git lfs pull"]),
    "LFS pointer as .ts": ("T_TRAIN.ts", LFS, ["T_TRAIN.ts", "a Git LFS pointer", "not a .ts file", "git lfs pull"]),
    "LFS pointer as .parquet": ("d.parquet", LFS, ["d.parquet", "a Git LFS pointer", "not Parquet", "git lfs pull"]),
    "LFS pointer as .csv.gz": ("d.csv.gz", LFS, ["d.csv.gz", "a Git LFS pointer", "git lfs pull"]),
    "HTML page as .csv": ("d.csv", HTML, ["d.csv", "an HTML page", "not CSV", "download the file itself again"]),
    "HTML page as .jsonl": ("d.jsonl", HTML, ["d.jsonl", "an HTML page", "not JSON lines", "download"]),
    "HTML page as a UCR .tsv": ("T_TRAIN.tsv", HTML, ["T_TRAIN.tsv", "an HTML page", "not a UCR .tsv file"]),
    "gzip bytes as .csv": ("d.csv", gzip.compress(CSV.encode()), ["d.csv", "gzip-compressed data, not CSV",
                                                                  "name it d.csv.gz"]),
    "xz bytes as .csv": ("d.csv", lzma.compress(CSV.encode()), ["d.csv", "xz-compressed data", "name it d.csv.xz"]),
    "an xlsx renamed .csv": ("d.csv", _xlsx(), ["d.csv", "an Excel workbook (.xlsx), not CSV", "save its sheet as CSV"]),
    "an xls renamed .csv": ("d.csv", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504),
                            ["d.csv", "Excel 97-2003 workbook", "save its sheet as CSV"]),
    "a parquet renamed .csv": ("d.csv", _parquet(), ["d.csv", "a Parquet file, not CSV", "rename it d.parquet"]),
    "an npz renamed .csv": ("d.csv", _npz(), ["d.csv", "an .npz archive of NumPy arrays", "rename it d.npz"]),
    "UTF-16 with its byte order mark": ("d.csv", CSV.encode("utf-16"), [
        "d.csv", "UTF-16 text (little-endian, with its byte order mark), not CSV", "save it again as UTF-8"]),
    "a CSV renamed .parquet": ("d.parquet", CSV, ["d.parquet", "text (it begins 'x1,x2,label'), not a Parquet file",
                                                  "rename it d.csv"]),
    # browsers decompress a download served gzip-encoded and keep its .gz name: this one was a BadGzipFile traceback
    "plain text named .csv.gz": ("d.csv.gz", CSV, ["d.csv.gz", "text (it begins 'x1,x2,label'), not gzip-compressed "
                                                   "data (decompressed on download?)", "rename it d.csv"]),
    "plain text named .csv.bz2": ("d.csv.bz2", CSV, ["d.csv.bz2", "not bz2-compressed data", "rename it d.csv"]),
    "plain text named .jsonl.xz": ("d.jsonl.xz", '{"a": 1, "label": "x"}\n', ["d.jsonl.xz", "not xz-compressed data",
                                                                              "rename it d.jsonl"]),
}


@pytest.mark.parametrize("name", SOMETHING_ELSE)
def test_a_file_that_is_something_else_under_its_name_says_what_it_is(name, tmp_path, capsys):
    file, content, words = SOMETHING_ELSE[name]
    path = tmp_path / file
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    assert main(["data", "--data", str(path)]) == 2
    one_line(capsys, "data", *words)


def test_the_formats_read_as_before_under_their_own_names(tmp_path):
    """The signatures refuse only what the name contradicts: each kind under its own name reads the same table."""
    from fpt.data.tables import read_columns

    payloads = {"d.csv": CSV.encode(), "d.csv.gz": gzip.compress(CSV.encode()), "d.csv.bz2": bz2.compress(CSV.encode()),
                "d.csv.xz": lzma.compress(CSV.encode()), "d.parquet": _parquet(),
                "f.csv": ("PAR1,x2,label\n" + CSV.split("\n", 1)[1]).encode(),
                "e.csv": ("FEA1,BZh91AY&SY,label\n" + CSV.split("\n", 1)[1]).encode()}  # names that begin like magic
    for file, content in payloads.items():
        (tmp_path / file).write_bytes(content)
        cols = read_columns(tmp_path / file)
        assert list(cols)[-1] == "label" and cols["label"].tolist() == [r[2] for r in ROWS], file
        assert np.allclose(cols[list(cols)[0]], [float(r[0]) for r in ROWS]), file


def test_an_lfs_pointer_among_class_images_is_named(tmp_path, capsys):
    assert main(["data", "--data", str(_images(tmp_path, LFS))]) == 2
    one_line(capsys, "data", "3.png", "a Git LFS pointer", "not an image", "git lfs pull")


def test_fpt_predict_names_a_plain_text_csv_gz_in_one_line(tab_run, tmp_path, capsys):
    (tmp_path / "new.csv.gz").write_text("x1,x2\n0.1,0.2\n")  # was a BadGzipFile traceback, exit status 1
    assert main(["predict", str(tab_run), str(tmp_path / "new.csv.gz"), "--out", str(tmp_path / "p.csv")]) == 2
    one_line(capsys, "predict", "new.csv.gz", "not gzip-compressed data", "rename it new.csv")
    assert not (tmp_path / "p.csv").exists()


@pytest.mark.parametrize("members, words", [
    ({"data.csv": CSV}, ["data.zip", "a zip archive of one table, data.csv", "name it data.csv.zip"]),
    ({"train.csv": CSV, "test.csv": CSV, "sample_submission.csv": "id\n"},  # a Kaggle competition's download
     ["data.zip", "a zip archive of 3 files (train.csv, test.csv, sample_submission.csv)", "unzip it"]),
])
def test_a_zip_named_for_no_format_says_what_it_holds(members, words, tmp_path, capsys):
    with zipfile.ZipFile(tmp_path / "data.zip", "w") as z:  # was "unknown format '.zip'", .zip listed as readable
        for name, text in members.items():
            z.writestr(name, text)
    assert main(["data", "--data", str(tmp_path / "data.zip")]) == 2
    one_line(capsys, "data", *words)


def _rows(sep: str = ",", end: str = "") -> str:
    return "".join(sep.join(r) + end + "\n" for r in ROWS)


def test_an_excel_export_with_empty_columns_of_no_name_reads_its_cells(tmp_path):
    """Excel's 'CSV UTF-8': a byte order mark, CRLF line ends, and ',,,' after the last column where cells were once
    formatted. The columns of no name and no value were refused ('column 4 of the header has no name; name every
    column', which would have made three empty features); they are left out, and the table reads as the clean one."""
    from fpt.data.tables import read_columns

    (tmp_path / "clean.csv").write_text(CSV)
    (tmp_path / "excel.csv").write_bytes(("\ufeffx1,x2,label,,,\r\n" + _rows(end=",,,").replace("\n", "\r\n"))
                                         .encode("utf-8"))
    clean, excel = read_columns(tmp_path / "clean.csv"), read_columns(tmp_path / "excel.csv")
    assert list(excel) == ["x1", "x2", "label"]
    for name in clean:
        assert clean[name].tolist() == excel[name].tolist(), name


def test_a_column_of_no_name_that_holds_a_value_is_still_refused(tmp_path, capsys):
    rows = _rows(end=",,").splitlines(keepends=True)
    rows[6] = rows[6].rstrip("\n") + "oops\n"  # one cell under the last unnamed column
    (tmp_path / "d.csv").write_text("x1,x2,label,,\n" + "".join(rows))
    assert main(["data", "--data", str(tmp_path / "d.csv")]) == 2
    one_line(capsys, "data", "d.csv", "column 5 of the header has no name but holds values (row 7: 'oops')",
             "name every column")


@pytest.mark.parametrize("text, words", [
    # an exporter's ',' at the end of every row: 'label' was read as empty on every row (the values shifted left)
    ("x1,x2,label\n" + _rows(end=","), ["4 fields but the header names 3", "each row ends with a ','? remove it"]),
    # a title line: the error named a column '__index_level_0__' that is not in the file
    ("Exported 2024-05-01\n" + CSV, ["3 fields but the header names 1", "a title or comment line above the header"]),
    # R's write.table(df, sep=','): its row names under no header cell; 'x1' held x2's values, the row names became a
    # feature '__index_level_0__', and it trained without a word
    ("x1,label\n" + _rows(), ["3 fields but the header names 2", "R's write.table", "row.names=FALSE"]),
], ids=["a comma ending each row", "a title line", "R's write.table"])
def test_a_header_shorter_than_its_rows_is_refused_not_shifted(text, words, tmp_path, capsys):
    (tmp_path / "d.csv").write_text(text)
    assert main(["data", "--data", str(tmp_path / "d.csv")]) == 2
    one_line(capsys, "data", "d.csv", "every value would be read under the wrong column", *words)


def test_new_inputs_with_a_comma_at_the_end_of_each_row_name_it(tab_run, tmp_path, capsys):
    # fpt predict said "column '__index_level_0__' was not a feature when the model was trained; drop it"
    (tmp_path / "new.csv").write_text("x1,x2\n0.1,0.2,\n1.5,-0.3,\n")
    assert main(["predict", str(tab_run), str(tmp_path / "new.csv"), "--out", str(tmp_path / "p.csv")]) == 2
    one_line(capsys, "predict", "new.csv", "3 fields but the header names 2", "each row ends with a ','")
    assert not (tmp_path / "p.csv").exists()


@pytest.mark.parametrize("numbers", [False, True])
def test_rows_that_repeat_the_header_are_refused(numbers, tmp_path, capsys):
    """Two exports joined with `cat`: each keeps its header. In a table of text columns the second header was an
    example whose class was 'label' (3 classes where there are 2, without a word)."""
    text = "x1,x2,label\n" + _rows() if numbers else "colour,size,label\n" + "".join(
        f"{['red', 'blue', 'green'][i % 3]},{'SM'[i % 2]},{'ab'[i % 2]}\n" for i in range(20))
    (tmp_path / "d.csv").write_text(text + text)
    assert main(["data", "--data", str(tmp_path / "d.csv")]) == 2
    one_line(capsys, "data", "d.csv", "row(s) 21 (1 in all) repeat the header row", "delete those lines")


def test_a_header_of_numbers_repeated_is_refused_and_a_label_named_like_its_column_is_not(tmp_path, capsys):
    from fpt.data.tables import read_columns

    header = "400,410,420,label\n"  # a spectra table: wavelengths as names, numbers as values
    body = "".join(f"{i},{i + 1},{i + 2},{'ab'[i % 2]}\n" for i in range(20))
    (tmp_path / "d.csv").write_text(header + body + header + body)
    assert main(["data", "--data", str(tmp_path / "d.csv")]) == 2
    one_line(capsys, "data", "d.csv", "row(s) 21 (1 in all) repeat the header row")
    (tmp_path / "e.csv").write_text("kind,label\n" + "".join(f"{'ab'[i % 2]},{['label', 'x'][i % 2]}\n" for i in range(20)))
    assert read_columns(tmp_path / "e.csv")["label"].tolist()[:2] == ["label", "x"]  # one column alone is no header


@pytest.mark.parametrize("name, text, words", [
    ("d.csv", "x1\tx2\tlabel\n" + _rows("\t"), ["header looks like tab-separated columns", "name it d.tsv"]),
    ("d.csv.gz", None, ["header looks like tab-separated columns", "name it d.tsv.gz"]),
    ("d.tsv", CSV, ["header looks like ','-separated columns", "name it d.csv"]),
    ("d.csv", "sep=,\n" + CSV, ["its first line ('sep=,') is Excel's separator hint", "delete that line"]),
], ids=["tsv as csv", "tsv as csv.gz", "csv as tsv", "excel's sep line"])
def test_a_table_named_for_another_separator_says_which_name_reads_it(name, text, words, tmp_path, capsys):
    # were '1 column(s) (x1\tx2\tlabel); a table needs a target column' and 'column 2 of the header has no name'
    path = tmp_path / name
    if text is None:
        path.write_bytes(gzip.compress(("x1\tx2\tlabel\n" + _rows("\t")).encode()))
    else:
        path.write_text(text)
    assert main(["data", "--data", str(path)]) == 2
    one_line(capsys, "data", name, *words)


def _class_images(root: Path, n: int = 6) -> Path:
    from PIL import Image

    for k, c in enumerate(("cat", "dog")):
        (root / "img" / c).mkdir(parents=True)
        for i in range(n):
            Image.fromarray(np.full((8, 8), 30 * i + 100 * k, dtype=np.uint8)).save(root / "img" / c / f"{i}.png")
    return root / "img"


@pytest.mark.parametrize("where", ["cat/run1", "run1"])
def test_a_run_inside_an_image_folder_is_not_read_as_images(where, tab_run, tmp_path, capsys):
    """`fpt train --data img --out img/cat/run1`, then `fpt plot img/cat/run1` (it writes RUN/curves.png): the next
    reading of img took the plot for an image of class cat, without a word (21 examples where there are 20); a run
    beside the class folders became a class of its own, its plot its one image (without the plot: 'an empty class
    folder; add its images or remove it', the run)."""
    import shutil

    from PIL import Image

    img = _class_images(tmp_path)
    run = Path(shutil.copytree(tab_run, img / where))
    Image.fromarray(np.zeros((8, 8), dtype=np.uint8)).save(run / "curves.png")
    assert main(["data", "--data", str(img)]) == 2
    one_line(capsys, "data", str(run), "an fpt run directory inside the image folder", "move it out of the image folder")


def test_fpt_train_refuses_an_out_inside_the_image_folder_it_reads(tmp_path, capsys):
    img = _class_images(tmp_path)
    before = sorted(p.relative_to(img) for p in img.rglob("*"))
    assert main(["train", "--data", str(img), "--out", str(img / "runs" / "r1"), "--quiet"]) == 2
    one_line(capsys, "train", f"--out {img / 'runs' / 'r1'} lies inside --data {img}", "choose an --out outside")
    assert sorted(p.relative_to(img) for p in img.rglob("*")) == before


def test_an_out_holding_a_users_controls_folder_is_refused_before_any_work(tiny_bert_dir, tmp_path, capsys):
    """A lab's folder with its own controls/: fpt train trained into it, fitted its random-body control into
    controls/random-body/ beside the user's files, and took the user's controls/no-lm/summary.json for the finished
    no-language-model control (a closed-form run resumes its controls): exit 0, that control's figures none, and it
    left out of the 'did the language model help' line without a word."""
    out = tmp_path / "experiment"
    (out / "controls" / "no-lm").mkdir(parents=True)
    (out / "controls" / "no-lm" / "summary.json").write_text('{"note": "the negative control of our assay"}\n')
    (out / "controls" / "random-body").mkdir()
    (out / "controls" / "random-body" / "notes.txt").write_text("mine\n")
    before = files(out)
    assert main(["train", "--data", str(table(tmp_path / "d.csv")), "--out", str(out), "--body", tiny_bert_dir, "--quiet",
                 "init=random"]) == 2
    one_line(capsys, "train", f"{out} holds controls but no config.yaml written by fpt train", "choose another --out")
    assert files(out) == before and sorted(p.name for p in out.iterdir()) == ["controls"]


def test_resuming_a_finished_closed_form_run_with_another_config_is_refused(tiny_bert_dir, tmp_path):
    """fpt.fit(exp, out, resume=True) returned the summary found in out as exp's whatever run wrote it: the run of
    another data file, or a user's summary.json. The same experiment still reads back its finished run."""
    import fpt
    from fpt.errors import ConfigError

    fields = dict(body=tiny_bert_dir, init="random", fit="closed-form", baselines="none", device="cpu")
    first = fpt.fit(fpt.build(data=str(table(tmp_path / "a.csv", seed=0)), **fields), out=tmp_path / "run",
                    progress=False)
    same = fpt.fit(fpt.build(data=str(table(tmp_path / "a.csv", seed=0)), **fields), out=tmp_path / "run", resume=True,
                   progress=False)
    assert same == first
    other = fpt.build(data=str(table(tmp_path / "b.csv", seed=1)), **fields)
    with pytest.raises(ConfigError, match="holds a run of another config than the one resumed"):
        fpt.fit(other, out=tmp_path / "run", resume=True, progress=False)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "summary.json").write_text('{"test_accuracy": 0.99}\n')
    with pytest.raises(ConfigError, match="holds summary.json but no config.yaml written by fpt train"):
        fpt.fit(other, out=tmp_path / "mine", resume=True, progress=False)


def test_resuming_a_gradient_run_from_python_with_another_config_is_refused(tiny_bert_dir, tmp_path):
    """fpt.fit(exp, out, resume=True) of a stopped gradient run loaded its checkpoint into another experiment whenever
    the shapes matched (here another lr and seed), training on under the other config's name; the command line's
    --resume checked the config, Python did not. The same experiment still resumes and trains further."""
    import fpt
    from fpt.errors import ConfigError

    fields = dict(body=tiny_bert_dir, init="random", fit="gradient", baselines="none", device="cpu", batch_size=8,
                  eval_every=2)
    data = str(table(tmp_path / "a.csv", seed=0))
    fpt.fit(fpt.build(data=data, steps=2, lr=1e-3, **fields), out=tmp_path / "run", progress=False)
    (tmp_path / "run" / "summary.json").unlink()  # as a run killed after its checkpoint leaves it
    with pytest.raises(ConfigError, match="holds a run of another config than the one resumed"):
        fpt.fit(fpt.build(data=data, steps=4, lr=3e-4, seed=1, **fields), out=tmp_path / "run", resume=True,
                progress=False)
    resumed = fpt.fit(fpt.build(data=data, steps=4, lr=1e-3, **fields), out=tmp_path / "run", resume=True,
                      progress=False)
    assert resumed["steps"] == 4


def test_a_number_column_with_a_few_excel_errors_or_markers_is_noted(tmp_path):
    """A fifth of the cells '#DIV/0!' or '?' (Excel's formula errors, UCI's missing marker): under nine in ten numbers
    the column is read as text categories, its numbers unordered, and nothing said so. From nine in ten it is an error
    naming the rows (unchanged); a column of codes that are all numbers but for a category is noted the same way."""
    from fpt.data import load
    from fpt.data.base import column_notes
    from fpt.errors import DataError

    rows = [f"{['#DIV/0!', '?'][i % 2] if i % 5 == 0 else i * 1.5},{i * 0.1:.1f},{'ab'[i % 2]}" for i in range(30)]
    (tmp_path / "d.csv").write_text("x1,x2,label\n" + "\n".join(rows) + "\n")
    notes = [n for n in column_notes(load(str(tmp_path / "d.csv"))) if "'x1'" in n]
    assert notes == [f"{tmp_path / 'd.csv'}: column 'x1' holds numbers and a few texts ('#DIV/0!', '?'), so it is read as "
                     "text categories, its numbers unordered; if those texts mean missing (an Excel error, '?', '-'), "
                     "leave the cells empty to read the column as numbers"]
    (tmp_path / "e.csv").write_text("x1,x2,label\n" + "\n".join(r if i == 5 else r.replace("#DIV/0!", "").replace("?", "")
                                                                  for i, r in enumerate(rows)) + "\n")
    with pytest.raises(DataError, match=r"column 'x1' mixes numbers and text \(row 6: '\?'\)"):
        load(str(tmp_path / "e.csv"))  # one stray text in 30: refused, naming its row

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
from hostile_helpers import one_line

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


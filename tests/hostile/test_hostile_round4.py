"""Hostile inputs, round 4: bytes a table reader would take in silence or choke on (NUL bytes, UTF-16 without a
byte order mark, a decompression bomb, a field longer than the csv module's limit), arrays of no values, values on
a scale a saved model cannot standardise by, and class folders made of links."""

from __future__ import annotations

import gzip
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hostile_helpers import FAST

from fpt.data import tables
from fpt.data.images import _images_below
from fpt.data.tables import read_columns
from fpt.errors import DataError

ROWS = "x1,x2,label\n" + "".join(f"{i},{i * 2},{'ab'[i % 2]}\n" for i in range(20))


def test_nul_bytes_in_a_csv_name_their_line_not_missing_values(tmp_path):
    # a write cut short leaves a zero-filled block: pandas' C parser ended the cell at the NUL, read it as missing
    data = ROWS.encode()
    at = data.index(b"\n5,10")
    (tmp_path / "d.csv").write_bytes(data[:at] + b"\0" * 300 + data[at:])
    with pytest.raises(DataError, match=r"d\.csv: line 6 holds NUL bytes .* UTF-8 CSV"):
        read_columns(tmp_path / "d.csv")


def test_utf16_without_a_byte_order_mark_is_named_not_an_empty_target(tmp_path):
    # before: "target column 'Unnamed: 2' ... is empty on every row"
    (tmp_path / "d.csv").write_bytes(ROWS.encode("utf-16-le"))
    with pytest.raises(DataError, match=r"d\.csv: line 1 holds NUL bytes .*UTF-16"):
        read_columns(tmp_path / "d.csv")


@pytest.mark.parametrize("name", ["d.csv.gz", "d.jsonl.zip"])
def test_a_decompression_bomb_is_refused_before_a_reader_holds_it(name, tmp_path, monkeypatch):
    # 4 MiB of rows in a few KB; the floor lowered from 1 GiB so the test stays small (the ratio is the bomb's)
    monkeypatch.setattr(tables, "EXPANDED_FLOOR", 1 << 20)
    rows = (b'{"x1": 1, "label": "a"}\n' if name.endswith("zip") else b"1,a\n") * (4 << 20 >> 4)
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(b"x1,label\n" + rows, compresslevel=9))
    else:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("d.jsonl", rows)  # datasets extracts a zip to disk before reading it
    with pytest.raises(DataError, match=rf"{name}: expands to more than 1 MiB, over 100 times .*decompress it yourself"):
        read_columns(path)


def test_a_compressed_table_of_ordinary_ratio_reads(tmp_path, monkeypatch):
    monkeypatch.setattr(tables, "EXPANDED_FLOOR", 1 << 10)  # past the floor, but not 100 times its size
    rng = np.random.default_rng(0)
    text = "x1,label\n" + "".join(f"{v:.6f},{'ab'[i % 2]}\n" for i, v in enumerate(rng.normal(size=500)))
    (tmp_path / "d.csv.gz").write_bytes(gzip.compress(text.encode()))
    assert len(read_columns(tmp_path / "d.csv.gz")["x1"]) == 500


def test_a_field_past_the_csv_modules_limit_reads(tmp_path):
    # a 200 KB text cell and a 20,000-column header were `_csv.Error: field larger than field limit (131072)`
    (tmp_path / "long.csv").write_text("x1,note,label\n" + "".join(
        f"{i},{'w' * (200_000 if i == 0 else 3)},{'ab'[i % 2]}\n" for i in range(6)))
    assert len(read_columns(tmp_path / "long.csv")["note"][0]) == 200_000
    header = ",".join(f"column{i}" for i in range(20_000)) + ",label\n"
    (tmp_path / "wide.csv").write_text(header + ("1," * 20_000 + "a\n") * 2)
    assert tables._check_header(tmp_path / "wide.csv", ",") == (False, set())  # no row index, no blank columns


@pytest.mark.parametrize("arrays, words", [
    (dict(X=np.zeros((20, 0)), y=np.arange(20) % 2), "X has shape (20, 0), no values per example"),
    (dict(X=np.ones((20, 3)), y=np.zeros((20, 0))), "y has shape (20, 0), no target per example"),
])
def test_arrays_of_no_values_are_one_line(arrays, words, tmp_path):
    # before: IndexError in infer_objective (y) or StopIteration in the tokeniser (X): "this is a bug in fpt"
    from fpt.data.arrays import read_npz

    np.savez(tmp_path / "d.npz", **arrays)
    with pytest.raises(DataError, match=r"d\.npz \(X, y\): " + words.replace("(", r"\(").replace(")", r"\)")):
        read_npz(tmp_path / "d.npz", "auto", "auto", 32)


@pytest.mark.parametrize("scale, kind", [(1e-40, "table"), (1e-315, "table"), (1e-40, "series")])
def test_values_too_small_to_standardise_are_refused_at_fit(scale, kind, tiny_bert_dir, tmp_path):
    # 1e-40 trained, then fpt.load refused the run as corrupt ("train the run again"); subnormal 1e-315 trained as
    # a constant column (its variance underflows to 0): chance accuracy on separable data, without a word
    import fpt

    rng = np.random.default_rng(0)
    y = np.arange(24) % 2
    X = (rng.normal(size=(24, 3)) + y[:, None]) if kind == "table" else (rng.normal(size=(24, 1, 8)) + y[:, None, None])
    # a series below float32's smallest normal number is refused as it is read (fpt.data.timeseries.narrowed), before
    # its spread is measured; a table's column, read as float64, at its standardisation
    with pytest.raises(DataError, match=r"data arrays \(X, y\): ((column 'x0'|channel 0) varies by only .*rescale it|"
                                        r"192 of 192 values below float32's smallest normal number .*rescale the values)"):
        fpt.fit(fpt.build(data=(X * scale, y), body=tiny_bert_dir, **FAST), out=tmp_path / "run", progress=False)


def test_a_constant_column_and_a_small_scale_still_train():
    from fpt.data.tokenisers import SeriesTokens, TabularTokens, fitted_std

    tok = TabularTokens.fit({"c": np.full(10, 1e-40), "s": np.arange(10) * 1e-20}, 50)
    assert [f["std"] for f in tok.features] == [1.0, pytest.approx(np.arange(10).std() * 1e-20)]
    with pytest.warns(RuntimeWarning):  # numpy's mean of no values: a channel missing throughout
        assert SeriesTokens.fit([np.full((2, 5), np.nan)], None, None, "series").std == [1.0, 1.0]
    assert fitted_std(0.0, float("nan"), "x") == 1.0


def _png(path: Path, value: int) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((4, 4), value, dtype=np.uint8)).save(path)


def test_a_linked_subfolder_of_a_class_is_read(tmp_path):
    # `ln -s /data/cats-2023 cat/2023`: os.walk did not follow it, and its images were left out without a word
    _png(tmp_path / "elsewhere" / "a.png", 1)
    _png(tmp_path / "img" / "cat" / "0.png", 2)
    os.symlink(tmp_path / "elsewhere", tmp_path / "img" / "cat" / "2023")
    assert [p.name for p in _images_below(tmp_path / "img" / "cat", [])] == ["0.png", "a.png"]


def test_a_link_back_up_neither_loops_nor_reads_another_class(tmp_path):
    for c in ("cat", "dog"):
        _png(tmp_path / "img" / c / "0.png", 3)
    os.symlink("..", tmp_path / "img" / "cat" / "loop")  # cat/loop/dog/0.png would be a dog read as a cat
    os.symlink(".", tmp_path / "img" / "dog" / "self")
    assert [str(p.relative_to(tmp_path)) for p in _images_below(tmp_path / "img" / "cat", [])] == ["img/cat/0.png"]
    assert [str(p.relative_to(tmp_path)) for p in _images_below(tmp_path / "img" / "dog", [])] == ["img/dog/0.png"]

"""A CSV is read without importing ``datasets`` (fpt.data.tables._csv_table) and must read exactly as
``datasets.load_dataset("csv", ...)`` reads it: the same columns, dtypes and values, or the same error."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from fpt.data import tables
from fpt.errors import DataError

CHUNK = tables.CSV_CHUNK_ROWS


def _rows(n: int, cell) -> str:  # noqa: ANN001 (a function of the row index)
    return "".join(f"{cell(i)}\n" for i in range(n))


CASES = {
    "numbers": "a,b,label\n1,2.5,x\n3,4.5,y\n5,6.25,x\n",
    "missing numbers and text": "a,b,c,label\n1,,u,0\n,2.0,,1\n3,4.0,v,0\nNA,n/a,null,1\n",
    "booleans": "f,g,label\nTrue,true,1\nFalse,,0\nTrue,false,1\n",
    "quoted commas and newlines": 'name,n,label\n"a, b",1,p\n"c\nd",2,q\n"e ""f""",3,p\n',
    "an all-empty column": "a,e,label\n1,,0\n2,,1\n3,,0\n",
    "spaces and signs": "a,b,label\n 1.5 ,-2,x\n+3, 4e2 ,y\n",
    "large integers": "a,label\n12345678901234567890,1\n1,0\n",
    "a byte-order mark": "\ufeffa,label\n1,0\n2,1\n",
    "mixed numbers and text": "a,label\n" + _rows(30, lambda i: f"{i},{i % 2}") + "oops,1\n",
    "ragged rows": "a,b,label\n1,2,x\n3,y\n4,5,6,x\n",
    "two chunks of the same types": "a,b,label\n" + _rows(CHUNK + 7, lambda i: f"{i},{i / 3:.3f},c{i % 3}"),
    "two chunks whose types differ": "a,label\n" + _rows(CHUNK + 5, lambda i: f"{i if i < CHUNK else i + 0.5},{i % 2}"),
    "a second chunk with missing integers": "a,label\n" + _rows(CHUNK + 5, lambda i: f"{'' if i == CHUNK + 2 else i},1"),
}


def _read(path, through_datasets: bool, monkeypatch):  # noqa: ANN001, ANN202
    with monkeypatch.context() as m:
        if through_datasets:
            m.setattr(tables, "_csv_table", lambda *a: None)
        try:
            return tables.read_columns(path)
        except DataError as exc:
            return str(exc)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_a_csv_reads_as_datasets_reads_it(case, suffix, tmp_path, monkeypatch):
    pytest.importorskip("datasets")
    text = CASES[case] if suffix == ".csv" else CASES[case].replace(",", "\t")
    path = tmp_path / f"t{suffix}"
    path.write_text(text, encoding="utf-8")
    ours, reference = _read(path, False, monkeypatch), _read(path, True, monkeypatch)
    if isinstance(reference, str):  # an error: the same words
        assert ours == reference
        return
    assert list(ours) == list(reference)
    for name, ref in reference.items():
        got = ours[name]
        assert got.dtype == ref.dtype, name
        if ref.dtype.kind == "f":
            np.testing.assert_array_equal(got, ref)  # NaN where NaN
        else:
            assert got.tolist() == ref.tolist(), name


def test_the_fast_reader_hands_over_where_datasets_would_cast(tmp_path):
    """Chunks of different types (datasets casts them to the first's) and files pandas cannot read go to datasets."""
    drift = tmp_path / "drift.csv"
    drift.write_text("a,label\n" + CASES["two chunks whose types differ"].split("\n", 1)[1])
    assert tables._csv_table(drift, ",") is None
    ragged = tmp_path / "ragged.csv"
    ragged.write_text(CASES["ragged rows"])
    assert tables._csv_table(ragged, ",") is None
    same = tmp_path / "same.csv"
    same.write_text(CASES["two chunks of the same types"])
    table = tables._csv_table(same, ",")
    assert table.num_rows == CHUNK + 7 and table.column_names == ["a", "b", "label"]


def test_reading_a_csv_for_a_run_imports_no_datasets(tmp_path):
    """A plain fpt train --data on a CSV reaches its data without importing datasets (nor pandas' arrow dataset
    layer through it): the command's parser, the training stack, reading and tokenising the table."""
    path = tmp_path / "t.csv"
    path.write_text("a,b,label\n" + _rows(40, lambda i: f"{i},{i % 7},{'xy'[i % 2]}"))
    code = (
        "import sys\n"
        "from fpt.cli import parser\n"
        "parser()\n"
        "import fpt.distributed\n"
        "from fpt.data import load\n"
        "from fpt.tasks.user_data import DataOptions, task_from_loaded\n"
        f"raw = load({str(path)!r})\n"
        f"task = task_from_loaded(raw, DataOptions(data={str(path)!r}), 0)\n"
        "assert len(task.train.data.y) + sum(len(b.y) for b in task.eval_sets.values()) == 40\n"
        "print(sorted(m for m in ('datasets', 'pyarrow.dataset') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_whole_numbers_beyond_64_bits_read_as_text_as_written(tmp_path):
    """A column of 2**70 values (hashes, long ids or labels) was `cannot be read as CSV (OverflowError: Python int
    too large to convert to C long)`, naming no column: it reads as text, as written (labels, categories), in every
    chunk; a target of them is classification, and regression on them says to write a decimal point."""
    big = 2**70
    path = tmp_path / "t.csv"
    path.write_text("a,b,label\n" + _rows(CHUNK + 30, lambda i: f"{i},{big + i % 3 if i > CHUNK else i % 3},{big + i % 2}"))
    cols = tables.read_columns(path)
    assert cols["a"].dtype.kind == "i"
    assert cols["label"][:2].tolist() == [str(big), str(big + 1)]
    assert cols["b"][0] == "0" and cols["b"][-1] == str(big + (CHUNK + 29) % 3)  # the second chunk made it text
    from fpt.data.base import infer_objective

    y = cols["label"].reshape(-1, 1)
    assert infer_objective(y, ["label"], "auto", "t")[0] == "classification"
    with pytest.raises(DataError, match="beyond 64 bits .*decimal point"):
        infer_objective(y, ["label"], "regression", "t")


def test_whole_numbers_beyond_64_bits_where_datasets_reads_name_the_column(tmp_path, monkeypatch):
    pytest.importorskip("datasets")
    path = tmp_path / "t.csv"
    path.write_text("a,label\n" + _rows(30, lambda i: f"{i},{2**70 + i % 2}"))
    monkeypatch.setattr(tables, "_csv_table", lambda *a: None)
    words = r"t.csv: column 'label' holds whole numbers beyond 64 bits \(1180591620717411303424\).*decimal point"
    with pytest.raises(DataError, match=words):
        tables.read_columns(path)

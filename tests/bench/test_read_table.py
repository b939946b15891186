"""bench/read_table.py's table: the columns the profile was taken on (codes as text, numbers, a label), as fpt reads
them; no timing here."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench_scripts import load
from fpt.data import tables

bench = load("read_table")


def test_written_table_reads_as_codes_numbers_and_a_label(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    bench.write_table(path, 400)
    cols = tables.read_columns(path)
    assert list(cols) == [f"t{j}" for j in range(5)] + [f"x{j}" for j in range(5)] + ["label"]
    for j in range(5):
        codes = cols[f"t{j}"]
        assert codes.dtype == object and len(codes) == 400
        assert {v for v in codes if v is not None} <= {f"c{k}" for k in range(bench.CODES)}
        assert cols[f"x{j}"].dtype == np.float64
    assert set(cols["label"]) == {"yes", "no"}

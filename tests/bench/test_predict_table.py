"""bench/predict_table.py's inputs: the copy of bench/read_table.py's table with its label written as 1 and 0 (the
label check's timing reads it), as fpt reads it; no timing here."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench_scripts import load
from fpt.data import tables

bench = load("predict_table")


def test_numeric_label_copy_holds_the_same_rows_with_labels_as_1_and_0(tmp_path: Path) -> None:
    path, copy = tmp_path / "t.csv", tmp_path / "t01.csv"
    bench._read_table_module().write_table(path, 300)
    bench.numeric_labels(path, copy)
    words, numbers = tables.read_columns(path), tables.read_columns(copy)
    assert list(words) == list(numbers)
    np.testing.assert_array_equal(numbers["label"], (words["label"] == "yes").astype(np.int64))
    np.testing.assert_array_equal(numbers["x0"], words["x0"])
    tables.label_text_check([copy], ["label"])  # 0 and 1: no two texts of one number

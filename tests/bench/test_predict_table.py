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


def test_each_run_appends_its_section_with_its_command_line(tmp_path: Path) -> None:
    import datetime

    assert bench.default_out(datetime.datetime(2026, 11, 28, 23, 59)).parts[-4:] == (
        "docs", "results", "bench", "predict_table-2026-11-28.txt")
    out = tmp_path / "results" / "p.txt"
    bench.append(out, ["bench/predict_table.py", "--label", "before"], ["## before", "load: 1.00 s"])
    bench.append(out, ["bench/predict_table.py", "--label", "after"], ["## after", "load: 0.50 s"])
    bench.append(out, ["bench/predict_table.py", "--only", "JSON lines", "--note", "lane's load"], ["## notes"])
    assert out.read_text() == ("# python bench/predict_table.py --label before\n## before\nload: 1.00 s\n\n"
                               "# python bench/predict_table.py --label after\n## after\nload: 0.50 s\n\n"
                               "# python bench/predict_table.py --only 'JSON lines' --note 'lane'\"'\"'s load'\n"
                               "## notes\n\n")


def test_row_index_copy_holds_the_same_rows_after_an_index_column(tmp_path: Path) -> None:
    path, copy = tmp_path / "t.csv", tmp_path / "ti.csv"
    bench._read_table_module().write_table(path, 300)
    bench.with_row_index(path, copy)
    plain, indexed = tables.read_columns(path), tables.read_columns(copy)
    assert list(indexed) == [tables.ROW_INDEX, *plain]
    np.testing.assert_array_equal(indexed[tables.ROW_INDEX], np.arange(300))
    for name, values in plain.items():
        assert indexed[name].tolist() == values.tolist(), name

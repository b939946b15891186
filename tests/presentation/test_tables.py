"""report.py on hand-written summaries: comparability, baselines, seeds, derived and counted rows."""

from __future__ import annotations

import csv

import pytest

from fpt.config import RunConfig
from fpt.experiments import expand
from fpt.experiments.grid import Cell, Derived, Table
from fpt.presentation.tables import cell_text, count_rows, write_report


def summary(test, val=None, *, majority=None, chance=0.1, paper_split=None, steps_to_converge=None, **extra):
    """A summary.json as fpt.train writes it (the fields the report reads)."""
    val = test if val is None else val
    return {"val_set": "val", "test_set": "test", "val_accuracy": val, "test_accuracy": test,
            "val_accuracy_last": val, "test_accuracy_last": test, "selected_step": 100, "steps": 200,
            "eval": {"val_accuracy": val, "test_accuracy": test}, "train_accuracy": 0.99,
            "steps_to_converge": steps_to_converge, "stopped": "steps", "wall_seconds": 1.5,
            "baselines": {"chance": chance, "majority": majority or {"val": 0.2, "test": 0.25}},
            "task_info": {"paper_split": paper_split} if paper_split else {}, **extra}


CONFIG = RunConfig(task="bit-xor")


def results_for(cells_and_summaries, tmp_path):
    out = []
    for cell, summaries in cells_and_summaries:
        for seed, s in enumerate(summaries):
            out.append({"cell": cell, "seed": seed, "summary": s, "status": "done", "note": "",
                        "run_dir": tmp_path / "runs" / f"{cell.row}-{seed}"})
    return out


def read_csv(path):
    with open(path, newline="") as f:
        return {(r["row"], r["column"]): r for r in csv.DictReader(f)}


def test_difference_only_where_the_task_is_the_papers_and_majority_marked(tmp_path):
    same = Cell("fpt", "bit-xor", CONFIG, "test_accuracy", 100.0, paper_column="bit-xor")
    other = Cell("fpt", "digits-patch", CONFIG, "test_accuracy", 72.1, paper_column="cifar10",
                 compare="a different dataset")
    weak = Cell("random", "bit-xor", CONFIG, "test_accuracy", 100.0, paper_column="bit-xor")
    table = Table("table9", "T", "quick", ["fpt", "random"], ["bit-xor", "digits-patch"], [same, other, weak],
                  column_keys=["bit-xor", "cifar10"])
    results = results_for([(same, [summary(0.9)]), (other, [summary(0.8)]), (weak, [summary(0.25)])], tmp_path)
    rows = write_report(table, results, tmp_path, "cmd")
    by = {(r["row"], r["column"]): r for r in rows}
    assert by[("fpt", "bit-xor")]["difference"] == pytest.approx(-10.0)
    assert by[("fpt", "digits-patch")]["difference"] is None and by[("fpt", "digits-patch")]["paper"] == 72.1
    assert by[("fpt", "digits-patch")]["compared"] == "no: a different dataset"
    assert by[("random", "bit-xor")]["above_majority"] == "no" and by[("fpt", "bit-xor")]["above_majority"] == "yes"
    assert (by[("fpt", "bit-xor")]["chance"], by[("fpt", "bit-xor")]["majority"]) == (10.0, 25.0)
    md = (tmp_path / "report.md").read_text()
    assert "| fpt | **90.0** / 100.0 (-10.0) | **80.0** / 72.1 † |" in md
    assert "**25.0** / 100.0 (-75.0) ⚠ not above majority" in md
    assert "| chance / majority class | 10.0 / 25.0 (test) | 10.0 / 25.0 (test) |" in md
    assert "| compared with the paper | yes | no |" in md and "† a different dataset (fpt/digits-patch)" in md
    saved = read_csv(tmp_path / "results.csv")
    assert saved[("fpt", "digits-patch")]["paper_column"] == "cifar10"
    assert saved[("fpt", "bit-xor")]["run_dir"] == "runs/fpt-0"


def test_seeds_report_mean_std_n_and_one_seed_just_the_value(tmp_path):
    multi = Cell("fpt", "bit-xor", CONFIG, "test_accuracy", 100.0, paper_column="bit-xor")
    single = Cell("random", "bit-xor", CONFIG, "test_accuracy", 100.0, paper_column="bit-xor")
    table = Table("table2", "T", "quick", ["fpt", "random"], ["bit-xor"], [multi, single])
    results = results_for([(multi, [summary(0.8), summary(0.9), summary(1.0)]), (single, [summary(0.7)])], tmp_path)
    rows = write_report(table, results, tmp_path, "cmd")
    assert (rows[0]["ours"], rows[0]["ours_std"], rows[0]["n"], rows[0]["seeds"]) == (90.0, 10.0, 3, "0;1;2")
    assert rows[0]["run_dir"] == "runs/fpt-0;runs/fpt-1;runs/fpt-2"
    assert cell_text(rows[0]) == "**90.0** ± 10.0 (n=3) / 100.0 (-10.0)"
    assert cell_text(rows[1]) == "**70.0** / 100.0 (-30.0)"
    saved = read_csv(tmp_path / "results.csv")
    assert saved[("fpt", "bit-xor")]["ours_std"] == "10.0" and saved[("random", "bit-xor")]["ours_std"] == ""
    # a seed that failed leaves the cell partial: the mean of the finished ones, and how many
    failed = [*results[:2], {**results[2], "summary": None, "status": "failed", "note": "boom"}, results[3]]
    rows = write_report(table, failed, tmp_path, "cmd")
    assert rows[0]["status"] == "partial" and rows[0]["n"] == 2 and "[2 of 3 seeds]" in cell_text(rows[0])


def test_compared_on_the_split_the_paper_measured(tmp_path):
    cell = Cell("fpt", "listops", CONFIG, "test_accuracy", 38.4, paper_column="listops")
    table = Table("table2", "T", "paper", ["fpt"], ["listops"], [cell])
    s = summary(0.30, 0.36, paper_split="val", majority={"val": 0.17, "test": 0.18})
    rows = write_report(table, results_for([(cell, [s])], tmp_path), tmp_path, "cmd")
    assert (rows[0]["ours"], rows[0]["split"], rows[0]["test_accuracy"], rows[0]["majority"]) == (36.0, "val", 30.0,
                                                                                                   17.0)
    assert "compared on `val`, the split the paper measured (our test accuracy 30.0)" in (
        tmp_path / "report.md").read_text()
    not_same = Cell("fpt", "listops-small", CONFIG, "test_accuracy", 38.4, paper_column="listops", compare="other set")
    rows = write_report(Table("table2", "T", "quick", ["fpt"], ["listops-small"], [not_same]),
                        results_for([(not_same, [s])], tmp_path), tmp_path, "cmd")
    assert (rows[0]["ours"], rows[0]["split"]) == (30.0, "test")  # not the paper's task: our test set


def test_speedup_row_from_the_two_rows(tmp_path):
    cells = [Cell(row, col, CONFIG, "steps_to_converge", paper, paper_column=col)
             for row, col, paper in (("fpt", "bit-xor", 500.0), ("random", "bit-xor", 20000.0),
                                     ("fpt", "mnist", 5000.0), ("random", "mnist", 20000.0))]
    table = Table("table6", "T", "paper", ["fpt", "random"], ["bit-xor", "mnist"], cells,
                  derived=[Derived("speedup", "ratio", "random", "fpt", {"bit-xor": 40, "mnist": 4}, "speed-up")])
    steps = {("fpt", "bit-xor"): 400, ("random", "bit-xor"): 10000, ("fpt", "mnist"): 1000, ("random", "mnist"): 1000}
    results = results_for([(c, [summary(1.0, steps_to_converge=steps[(c.row, c.column)])]) for c in cells], tmp_path)
    rows = write_report(table, results, tmp_path, "cmd")
    speed = {r["column"]: r for r in rows if r["row"] == "speedup"}
    assert speed["bit-xor"]["ours"] == 25.0 and speed["bit-xor"]["difference"] == -15.0
    assert speed["mnist"]["ours"] == 1.0 and speed["bit-xor"]["status"] == "derived"
    assert "| speedup | **25** / 40 (-15.0) | **1** / 4 (-3.0) |" in (tmp_path / "report.md").read_text()
    rows = write_report(table, results[:1], tmp_path, "cmd")  # random not finished: no speed-up
    assert {r["status"] for r in rows if r["row"] == "speedup"} == {"not derived"}


def test_table10_epoch_speedup_is_a_cell(tmp_path):
    table = expand("table10", "paper")
    probe = next(c for c in table.cells if c.row == "output_only" and c.key == "listops")
    s = summary(0.3, feature_cache_seconds=50.0, epoch_seconds=0.05)
    rows = write_report(table, results_for([(probe, [s])], tmp_path), tmp_path, "cmd")
    cell = next(r for r in rows if r["row"] == "epoch_speedup" and r["column"] == "listops")
    assert cell["ours"] == 1000.0 and cell["paper"] == "500-2000x" and cell["difference"] is None
    assert "**1e+03x** / 500-2000x" in (tmp_path / "report.md").read_text()


def test_table8_parameter_columns_are_counted_by_fpt():
    rows = {(r["row"], r["column"]): r for r in count_rows(expand("table8", "quick"))}
    # GPT-2 base on CIFAR-10 (64 tokens of 48): input 48*768+768, positions 64*768, layer norm 25*2*768, head 768*10+10
    assert rows[("base", "trained_params")]["ours"] == 37632 + 49152 + 38400 + 7690
    assert rows[("base", "trained_params")]["paper"] == "106K" and rows[("large", "total_params")]["paper"] == "774M"
    totals = [rows[(size, "total_params")]["ours"] for size in ("base", "medium", "large")]
    assert totals == sorted(totals) and 80e6 < totals[0] < 90e6
    assert cell_text({**rows[("base", "total_params")]}) == "**85.2M** / 117M †"


def test_quoted_cells_show_their_source(tmp_path):
    table = expand("table7", "paper")
    results = [{"cell": c, "seed": None, "summary": None, "status": "quoted" if c.quoted else "not run",
                "note": c.quoted or "", "run_dir": None} for c in table.cells]
    rows = write_report(table, results, tmp_path, "cmd")
    quoted = [r for r in rows if r["status"] == "quoted"]
    assert {r["row"] for r in quoted} == {"vanilla_transformer_3_layers", "linformer_3_layers"}
    md = (tmp_path / "report.md").read_text()
    assert "| vanilla_transformer_3_layers | quoted: 42.0 | quoted: 70.0 |" in md
    assert "linformer_3_layers / train: 97.0 from Long Range Arena" in md

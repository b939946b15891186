"""Per-cell lr chosen on validation (fpt reproduce --tuned-lr): the grid's runs, the choice, the dry run."""

from __future__ import annotations

import json

from fpt.cli import main
from fpt.experiments import expand
from fpt.experiments.runner import Store, choose_lr, tuned_table
from fpt.pipeline import with_task


def test_tables_declare_a_grid_and_keep_their_fixed_lr():
    table = expand("table13", "quick")
    cell = next(c for c in table.cells if c.row == "plus_attention" and c.column == "mnist-5k")
    assert cell.lr_grid == (1e-4, 3e-4, 1e-3, 3e-3) and cell.config.lr is None  # the paper's lr stays
    tuned = tuned_table(table)
    assert tuned.name == "table13-tuned" and "control_no_lm" in tuned.rows and "control_full_finetune" in tuned.rows


def test_grid_runs_are_store_runs_and_the_choice_reads_validation_only(tmp_path):
    table = expand("table13", "quick")
    cell = next(c for c in table.cells if c.row == "fpt" and c.column == "bit-xor")
    store = Store(tmp_path)
    plans = {lr: store.plan(table, cell, 0, lr) for lr in cell.lr_grid}
    assert plans[with_task(cell.config).lr].key == store.plan(table, cell, 0).key  # 1e-3: the fixed-lr run, shared
    assert len({p.key for p in plans.values()}) == 4
    summaries = {lr: {"val_accuracy": v, "test_accuracy": t} for lr, v, t in
                 [(1e-4, 0.6, 0.99), (3e-4, 0.8, 0.5), (1e-3, 0.7, 0.7), (3e-3, 0.5, 0.5)]}
    choice = choose_lr(cell, summaries)
    assert choice["chosen"] == 3e-4 and choice["val"][1e-4] == 60.0  # the best validation, never the best test
    assert choose_lr(cell, {**summaries, 3e-3: None})["chosen"] is None  # grid unfinished: nothing chosen yet


def test_dry_run_lists_the_grid(tmp_path, capsys):
    assert main(["reproduce", "table14", "--scale", "quick", "--tuned-lr", "--dry-run", "--store", str(tmp_path),
                 "--seeds", "0,1,2"]) == 0
    out = capsys.readouterr().out
    assert out.count("lr grid: lr=") == 5 * 4 and "at the lr the grid chooses" in out


def test_results_csv_records_the_grid(tmp_path):
    from fpt.presentation.tables import aggregate

    table = tuned_table(expand("table14", "quick"))
    cell = table.cells[0]
    choice = {"grid": list(cell.lr_grid), "val": {1e-4: 50.0, 3e-4: 60.0, 1e-3: None, 3e-3: 40.0}, "chosen": 3e-4}
    runs = [{"cell": cell, "seed": s, "summary": None, "status": "not run", "note": "", "run_dir": None,
             "lr": 3e-4, "lr_search": choice} for s in (0, 1, 2)]
    row = aggregate(table, cell, runs, tmp_path)
    assert row["lr_grid"] == "0.0001;0.0003;0.001;0.003" and row["lr_chosen"] == "0.0003"
    assert row["lr_val"].startswith("0.0001:50.00;0.0003:60.00;0.001:–")
    json.dumps(row, default=str)


def test_the_seed_that_chose_the_lr_is_not_reported(tmp_path):
    """--tuned-lr --seeds 0,1,2,3: seed 0's validation figure chose the lr; the cell reports seeds 1-3 (n = 3),
    its provenance still counts seed 0's run (the choice came from it)."""
    from fpt.presentation.tables import aggregate

    table = tuned_table(expand("table14", "quick"))
    cell = table.cells[0]
    choice = {"grid": list(cell.lr_grid), "val": {lr: 50.0 for lr in cell.lr_grid}, "chosen": 3e-4, "seed": 0}

    def summary(test, dirty):
        return {"test_accuracy": test, "val_accuracy": 0.5, "test_set": "test", "val_set": "val",
                "environment": {"commit": "abc1234", "dirty": dirty}}

    runs = [{"cell": cell, "seed": s, "summary": summary(t, s == 0), "status": "done", "note": "", "run_dir": None,
             "lr": 3e-4, "lr_search": choice} for s, t in ((0, 0.99), (1, 0.90), (2, 0.92), (3, 0.94))]
    row = aggregate(table, cell, runs, tmp_path)
    assert row["seeds"] == "1;2;3" and row["n"] == 3 and row["ours"] == 92.0 and row["lr_seed"] == 0
    assert row["dirty"] == "1 of 4"  # the chooser's run is part of what the cell rests on
    only = aggregate(table, cell, runs[:1], tmp_path)
    assert only["status"] == "not run" and only["n"] == 0 and "give --seeds 0,1,2,3" in only["note"]

"""Running a table's grid: resumable, errors kept per cell, runs shared through a content-addressed store.

Every run lives in ``STORE/<key>/`` where ``key`` is a short hash of the run's resolved
config (every RunConfig field, the seed included). The same config in several tables
(pretrained MiniLM, freeze paper, on bit-xor appears in Tables 1, 2, 9, 17, 19, ...) is one
run, trained once. A body pretrained for Table 2 lives in ``STORE/pretrain-<key>/`` and the
cells that use it are keyed by the pretraining run's key (not by where it lies on disk).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fpt import rundir
from fpt.config import RunConfig
from fpt.experiments.grid import Cell, Table
from fpt.experiments.planned import Planned, pretrain_config
from fpt.rundir import read_summary

# train_eval_accuracy: the training split evaluated at the selected step (fpt.train); train_accuracy: the last
# window's minibatch figure, dropout on
ACCURACIES = ("test_accuracy", "val_accuracy", "train_accuracy", "train_eval_accuracy", "test_accuracy_last",
              "val_accuracy_last")
METRIC_SCALE = dict.fromkeys(ACCURACIES, 100.0)  # summary fractions -> percent, as the paper prints them
KEY_LENGTH = 12


STORE_VERSION = 1

# What run-store keys are taken against: RunConfig's defaults when the store began. Only ever
# extended, never edited: a new RunConfig field is added here with the value that keeps the
# behaviour runs had before it existed (a test checks every field is here). Changing a default in
# RunConfig then changes the key of every run that uses the new default, so a finished run is
# never reused for a config that now means something else, and runs with the old value keep theirs.
KEY_BASELINE: dict[str, Any] = {
    "task": "bit-xor", "task_options": {}, "data_dir": "data", "download": False, "data": None,
    "target_column": None, "objective": "auto", "modality": "auto", "val_fraction": 0.2, "test_fraction": 0.2,
    "folds": None, "fold": None,  # the val_fraction hold-out, as before folds existed
    "split_seed": 0, "train_on_val": False, "max_categories": 50, "image_size": 32, "patch_size": 4, "image_channels": "auto",
    "series_patch": None, "series_stride": None, "series_norm": "series", "sequence_tokens": "auto",
    "sequence_max_len": None, "body": "minilm", "init": "pretrained", "freeze": "paper", "layers": None,
    "dropout": 0.1, "input_init": "gpt2", "input_dropout": False, "padding": "mask", "vit_positions": "resized",
    "lstm_variant": "fpt", "steps": 2000, "batch_size": 16, "grad_accum": 1, "lr": None, "clip": 1.0, "seed": 0,
    "ensemble": 1,  # one model, as before ensembles existed
    "lora_rank": 8, "lora_alpha": 16.0,  # read only under a policy with the lora group, which did not exist before
    "eval_every": 50, "eval_subset": None, "eval_batch_size": 256, "target": None, "stop_at_target": True,
    "patience": None, "tie_break": "first", "diverge_loss": 100.0, "last_block_rows": True, "trim_padding": True,
    "bucket_batches": 50,
    "precision": "auto", "compile": False, "cache_features": "auto", "device": "auto", "readout": "last",
    "baselines": "auto",  # what else is fitted beside a --data run (fpt.baselines): trains nothing of the run itself
    "fit": "gradient",  # gradient steps, as every run before the closed-form fit existed
    "cf_members": None, "cf_blocks": None, "cf_poolings": None, "cf_standardise": None, "cf_head": None,
    "cf_inputs": None, "cf_scales": None, "cf_difference": None, "cf_gains": None, "cf_hop": None,
    "cf_series_norm": None,
    "drop_columns": None,  # every column but the target a feature, as before the field existed
    "series_id": None,  # a row per example, as before the field existed
    "preset": "paper",  # the defaults of fields not given: runs keyed before presets existed ran the field defaults, paper
}


def config_key(config: RunConfig, **extra: Any) -> str:
    """A short hash of ``config``'s fields that differ from KEY_BASELINE (and ``extra``).

    Equal configs share a run directory. Leaving baseline values out keeps the keys of finished
    runs when a field is added (with the value that keeps the old behaviour) and when a default
    changes (runs with the new default get new keys). STORE_VERSION is for changes of what an
    existing value does.
    """
    missing = sorted(set(config.to_dict()) - set(KEY_BASELINE))
    if missing:
        raise RuntimeError(f"RunConfig field(s) {missing} are not in runner.KEY_BASELINE: add each with the value "
                           "that keeps the behaviour runs had before the field existed")
    data = {**{k: v for k, v in config.to_dict().items() if v != KEY_BASELINE[k]}, **extra}
    if STORE_VERSION > 1:
        data["store_version"] = STORE_VERSION
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:KEY_LENGTH]


@dataclass(frozen=True)
class Store:
    root: Path

    def plan_config(self, config: RunConfig) -> Planned:
        """Where a run of ``config`` lives (``fpt sweep``'s trials, and every cell without a pretrained body)."""
        key = config_key(config)
        return Planned(config, self.root / key, key)

    def plan(self, table: Table, cell: Cell, seed: int | None = None, lr: float | None = None) -> Planned:
        """``lr``: the cell's config at that learning rate (an lr grid's run: an ordinary run of the store)."""
        from fpt.pipeline import with_task

        config = cell.config if seed is None else dataclasses.replace(cell.config, seed=seed)
        if lr is not None and lr != with_task(config).lr:  # the cell's own lr: its fixed-lr run, shared
            config = dataclasses.replace(config, lr=lr)
        if cell.pretrain_task is None:
            return self.plan_config(config)
        pre = pretrain_config(table.scale, cell.pretrain_task, config)
        pre_dir = self.root / f"pretrain-{config_key(pre, purpose='pretrained body')}"
        key = config_key(config, init=f"pretrain:{pre_dir.name}")  # where the body lies on disk is not part of it
        return Planned(dataclasses.replace(config, init=f"checkpoint:{pre_dir / rundir.BODY_DIR}"), self.root / key, key,
                       (pre, pre_dir))


def metric_value(summary: dict[str, Any], metric: str) -> float | None:
    value = summary.get(metric)
    if value is None:
        return None
    return float(value) * METRIC_SCALE.get(metric, 1.0)


def selected(cell: Cell, only: str | None) -> bool:
    return only is None or only in f"{cell.row}/{cell.column}" or only in f"{cell.row}/{cell.key}"


def choose_lr(cell: Cell, summaries: dict[float, dict[str, Any] | None]) -> dict[str, Any]:
    """The lr of ``cell.lr_grid`` whose seed-0 run has the best VALIDATION figure (never test; ties: the first
    in the grid). {grid, val: {lr: val figure in % or None}, chosen: lr or None while a grid run is missing}."""
    val = {lr: metric_value(summaries[lr], "val_accuracy") if summaries.get(lr) else None for lr in cell.lr_grid or ()}
    done = {lr: v for lr, v in val.items() if v is not None}
    complete = all(summaries.get(lr) for lr in cell.lr_grid or ())
    chosen = max(done, key=lambda lr: (done[lr], -list(val).index(lr))) if complete and done else None
    return {"grid": list(cell.lr_grid or ()), "val": val, "chosen": chosen}


def tuned_table(table: Table) -> Table:
    """The table under per-cell tuned lr (``fpt reproduce --tuned-lr``): its cells with an lr_grid, as TABLE-tuned."""
    cells = [c for c in table.cells if c.lr_grid or c.quoted or c.skip]
    rows = [r for r in table.rows if any(c.row == r and c.lr_grid and c.config is not None for c in cells)]
    cells = [c for c in cells if c.row in rows]
    return dataclasses.replace(table, name=f"{table.name}{TUNED_SUFFIX}", title=f"{table.title} (lr tuned per cell)",
                               rows=rows, cells=cells, derived=[], counts=None)


TUNED_SUFFIX = "-tuned"


def _lr_search(table: Table, store: Store, seeds: list[int], only: str | None, executor: Any, progress: bool,
               report_only: bool) -> dict[int, dict[str, Any]]:
    """Seed ``seeds[0]`` of every lr-grid cell at each lr of its grid (run unless ``report_only``); the choices."""
    from fpt.experiments.executors import InProcessExecutor, Trial

    jobs, plans = [], {}
    for cell in table.cells:
        if not cell.lr_grid or cell.config is None:
            continue
        for lr in cell.lr_grid:
            planned = store.plan(table, cell, seeds[0], lr)
            plans[(id(cell), lr)] = planned
            if not report_only and selected(cell, only) and read_summary(planned.run_dir) is None:
                jobs.append(Trial(planned, f"{table.name} {cell.row}/{cell.column} seed {seeds[0]} lr {lr:g} (lr grid)"))
    if jobs:
        (executor or InProcessExecutor("fpt reproduce")).run(jobs, progress)
    # "seed": the chooser, which the report leaves out of the cell's reported seeds (its validation figure chose)
    return {id(cell): {**choose_lr(cell, {lr: read_summary(plans[(id(cell), lr)].run_dir) for lr in cell.lr_grid}),
                       "seed": seeds[0]}
            for cell in table.cells if cell.lr_grid and cell.config is not None}


def run_table(table: Table, store: Store, seeds: list[int] | None = None, progress: bool = True,
              only: str | None = None, executor: Any = None, report_only: bool = False,
              tuned_lr: bool = False) -> list[dict[str, Any]]:
    """Run every cell for every seed (or the cells whose ``row/column`` contains ``only``; none with ``report_only``).

    One result per cell and seed: {cell, seed, summary, status, note, run_dir}; status is
    done, failed, not run, skipped or quoted. Cells left out by ``only`` are still reported
    with their finished run if the store has one. A failing cell never stops the table.
    The table's runs are handed to ``executor`` as a list of trials (fpt.experiments.executors;
    default: one after another in this process), the same executors ``fpt sweep`` uses.
    """
    from fpt.experiments.executors import InProcessExecutor, Trial

    # --tuned-lr: first seed 0 at every lr of each cell's grid, then every seed at the lr chosen on validation.
    search = _lr_search(table, store, seeds or [0], only, executor, progress, report_only) if tuned_lr else {}
    results, jobs = [], []
    for cell in table.cells:
        if cell.quoted or cell.skip:
            status = "quoted" if cell.quoted else "skipped"
            results.append({"cell": cell, "seed": None, "summary": None, "status": status,
                            "note": cell.quoted or cell.skip or "", "run_dir": None})
            continue
        choice = search.get(id(cell))
        for seed in seeds or [cell.config.seed]:
            lr = choice["chosen"] if choice else None
            planned = store.plan(table, cell, seed, lr)
            row = {"cell": cell, "seed": seed, "summary": None, "status": "done", "note": "",
                   "run_dir": planned.run_dir, "lr": planned.config.lr}
            if choice:
                row["lr_search"] = choice
            if choice and lr is None:
                row["status"], row["note"] = "not run", "lr grid not finished: no lr chosen yet"
            elif report_only or not selected(cell, only):
                row["summary"] = read_summary(planned.run_dir)
                if row["summary"] is None:
                    row["status"] = "not run"
                    row["note"] = "no finished run yet" if report_only else f"not selected by --only {only!r}"
            else:
                jobs.append((row, Trial(planned, f"{table.name} {cell.row}/{cell.column} seed {seed}")))
            results.append(row)
    outcomes = (executor or InProcessExecutor("fpt reproduce")).run([t for _, t in jobs], progress)
    for (row, _), outcome in zip(jobs, outcomes, strict=True):
        row["summary"], row["status"], row["note"] = outcome.summary, outcome.status, outcome.note
    return results


def prune_checkpoints(root: Path) -> list[Path]:
    """Delete checkpoint/ and best/ of every finished run under ``root`` (a pretrained body/ is kept).

    A run directory another process is writing (its lock held) is left alone.
    """
    removed = []
    for summary in sorted(Path(root).glob(f"*/{rundir.SUMMARY}")):
        try:
            with rundir.lock(summary.parent, what="fpt reproduce --prune-checkpoints"):
                for path in rundir.checkpoint_paths(summary.parent):
                    shutil.rmtree(path)
                    removed.append(path)
        except rundir.RunDirBusyError as exc:
            print(f"fpt reproduce: not pruned: {exc}", file=sys.stderr)
    return removed

"""Running a table's grid: resumable, errors kept per cell, runs shared through a content-addressed store.

Every run lives in ``STORE/<key>/`` where ``key`` is a short hash of the run's resolved
config (every RunConfig field, the seed included). The same config in several tables
(pretrained MiniLM, freeze paper, on bit-xor appears in Tables 1, 2, 9, 17, 19, ...) is one
run, trained once. A body pretrained for Table 2 lives in ``STORE/pretrain-<key>/`` and the
cells that use it are keyed by the pretraining run's key (not by where it lies on disk).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fpt import rundir
from fpt.config import RunConfig, from_dict, merge
from fpt.experiments.grid import Cell, Table, tasks_spec
from fpt.runs import SUMMARY

ACCURACIES = ("test_accuracy", "val_accuracy", "train_accuracy", "test_accuracy_last", "val_accuracy_last")
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
    "split_seed": 0, "train_on_val": False, "max_categories": 50, "image_size": 32, "patch_size": 4, "image_channels": "auto",
    "series_patch": None, "series_stride": None, "series_norm": "series", "sequence_tokens": "auto",
    "sequence_max_len": None, "body": "minilm", "init": "pretrained", "freeze": "paper", "layers": None,
    "dropout": 0.1, "input_init": "gpt2", "input_dropout": False, "padding": "mask", "vit_positions": "resized",
    "lstm_variant": "fpt", "steps": 2000, "batch_size": 16, "grad_accum": 1, "lr": None, "clip": 1.0, "seed": 0,
    "eval_every": 50, "eval_subset": None, "eval_batch_size": 256, "target": None, "stop_at_target": True,
    "patience": None, "diverge_loss": 100.0, "last_block_rows": True, "trim_padding": True, "bucket_batches": 50,
    "precision": "auto", "compile": False, "cache_features": "auto", "device": "auto", "readout": "last",
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
class Planned:
    """Where one cell's run for one seed lives, and what it runs."""

    config: RunConfig  # with init checkpoint:PATH for cells whose body is pretrained first
    run_dir: Path
    key: str
    pretrain: tuple[RunConfig, Path] | None = None  # (config, run directory) of the body pretraining


@dataclass(frozen=True)
class Store:
    root: Path

    def plan_config(self, config: RunConfig) -> Planned:
        """Where a run of ``config`` lives (``fpt sweep``'s trials, and every cell without a pretrained body)."""
        key = config_key(config)
        return Planned(config, self.root / key, key)

    def plan(self, table: Table, cell: Cell, seed: int | None = None) -> Planned:
        config = cell.config if seed is None else dataclasses.replace(cell.config, seed=seed)
        if cell.pretrain_task is None:
            return self.plan_config(config)
        pre = pretrain_config(table.scale, cell.pretrain_task, config)
        pre_dir = self.root / f"pretrain-{config_key(pre, purpose='pretrained body')}"
        key = config_key(config, init=f"pretrain:{pre_dir.name}")  # where the body lies on disk is not part of it
        return Planned(dataclasses.replace(config, init=f"checkpoint:{pre_dir / 'body'}"), self.root / key, key,
                       (pre, pre_dir))


def pretrain_config(scale: str, task_column: str, config: RunConfig) -> RunConfig:
    """Pretraining a body on a task column: every parameter trained, the cell's body, seed and dropout."""
    base = {k: v for k, v in tasks_spec()[scale][task_column].items() if k not in ("skip", "name", "compare")}
    fields = merge(base, {"body": config.body, "init": "random", "freeze": "none", "seed": config.seed,
                          "dropout": config.dropout})
    return from_dict(RunConfig, fields, where=f"pretraining on {task_column}")


def ensure_pretrained_body(pre: RunConfig, run_dir: Path, progress: bool) -> Path:
    """Train (or reuse) a body with every parameter trained; returns the body directory."""
    import fpt
    from fpt.bodies import BodySpec
    from fpt.bodies.init import save_body
    from fpt.checkpoint import has_checkpoint

    body_dir = run_dir / "body"
    if (body_dir / "body.safetensors").is_file():
        return body_dir
    with rundir.lock(run_dir, what="fpt reproduce pretrain"):  # held from training to the saved body
        if (body_dir / "body.safetensors").is_file():  # another worker saved it while this one waited to look
            return body_dir
        exp = fpt.build(pre)
        fpt.fit(exp, out=run_dir, resume=has_checkpoint(run_dir), progress=progress)
        save_body(exp.model.body, BodySpec(pre.body, pre.init, exp.data.spec.seq_len, pre.dropout, pre.seed), body_dir)
    return body_dir


def read_summary(run_dir: Path) -> dict[str, Any] | None:
    file = run_dir / SUMMARY
    return json.loads(file.read_text()) if file.is_file() else None


def run_planned(planned: Planned, progress: bool = True) -> dict[str, Any]:
    """Run one planned cell (or reuse its finished run); returns its summary."""
    import fpt
    from fpt.checkpoint import has_checkpoint
    from fpt.train import resume_config

    done = read_summary(planned.run_dir)
    if done is not None:
        return done
    if planned.pretrain is not None:
        ensure_pretrained_body(*planned.pretrain, progress)
    # Decided under the lock: another `fpt reproduce` on the same store may have finished or started
    # this run since the look above (two workers share a store by skipping each other's runs).
    created = not planned.run_dir.exists()
    try:
        with rundir.lock(planned.run_dir, what="fpt reproduce"):
            done = read_summary(planned.run_dir)
            if done is not None:
                return done
            resume = has_checkpoint(planned.run_dir)
            if resume and resume_config(planned.run_dir) != planned.config:
                raise ValueError(f"{planned.run_dir} was started with a different config than {planned.key} gives; "
                                 "delete that directory to rerun the cell")
            exp = fpt.build(planned.config)
            return fpt.fit(exp, out=planned.run_dir, resume=resume, progress=progress)
    except BaseException:
        if created:  # a run that failed before writing anything (no body, no data) leaves no directory behind
            with contextlib.suppress(OSError):
                planned.run_dir.rmdir()  # only when empty
        raise


def metric_value(summary: dict[str, Any], metric: str) -> float | None:
    value = summary.get(metric)
    if value is None:
        return None
    return float(value) * METRIC_SCALE.get(metric, 1.0)


def selected(cell: Cell, only: str | None) -> bool:
    return only is None or only in f"{cell.row}/{cell.column}" or only in f"{cell.row}/{cell.key}"


def run_table(table: Table, store: Store, seeds: list[int] | None = None, progress: bool = True,
              only: str | None = None, executor: Any = None, report_only: bool = False) -> list[dict[str, Any]]:
    """Run every cell for every seed (or the cells whose ``row/column`` contains ``only``; none with ``report_only``).

    One result per cell and seed: {cell, seed, summary, status, note, run_dir}; status is
    done, failed, not run, skipped or quoted. Cells left out by ``only`` are still reported
    with their finished run if the store has one. A failing cell never stops the table.
    The table's runs are handed to ``executor`` as a list of trials (fpt.experiments.executors;
    default: one after another in this process), the same executors ``fpt sweep`` uses.
    """
    from fpt.experiments.executors import InProcessExecutor, Trial

    results, jobs = [], []
    for cell in table.cells:
        if cell.quoted or cell.skip:
            status = "quoted" if cell.quoted else "skipped"
            results.append({"cell": cell, "seed": None, "summary": None, "status": status,
                            "note": cell.quoted or cell.skip or "", "run_dir": None})
            continue
        for seed in seeds or [cell.config.seed]:
            planned = store.plan(table, cell, seed)
            row = {"cell": cell, "seed": seed, "summary": None, "status": "done", "note": "",
                   "run_dir": planned.run_dir}
            if report_only or not selected(cell, only):
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
    from fpt.checkpoint import checkpoint_paths

    removed = []
    for summary in sorted(Path(root).glob("*/summary.json")):
        try:
            with rundir.lock(summary.parent, what="fpt reproduce --prune-checkpoints"):
                for path in checkpoint_paths(summary.parent):
                    shutil.rmtree(path)
                    removed.append(path)
        except rundir.RunDirBusyError as exc:
            print(f"fpt reproduce: not pruned: {exc}", file=sys.stderr)
    return removed

"""Running a table's grid: resumable, one run directory per cell, errors kept per cell."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import yaml

from fpt.config import RunConfig, from_dict, merge
from fpt.experiments.grid import Cell, Table

METRIC_SCALE = {"test_accuracy": 100.0, "train_accuracy": 100.0, "best_test_accuracy": 100.0}


def cell_dir(out: Path, cell: Cell) -> Path:
    return out / cell.row / cell.column


def _pretrain_config(table: Table, cell: Cell) -> RunConfig:
    from importlib import resources

    tasks = yaml.safe_load((resources.files("fpt.experiments") / "tasks.yaml").read_text())
    base = {k: v for k, v in tasks[table.scale][cell.pretrain_task].items() if k != "skip"}
    fields = merge(base, {"body": cell.config.body, "init": "random", "freeze": "none", "seed": cell.config.seed,
                          "dropout": cell.config.dropout})
    return from_dict(RunConfig, fields, where=f"pretraining on {cell.pretrain_task}")


def ensure_pretrained_body(table: Table, cell: Cell, out: Path, progress: bool) -> Path:
    """Train (or reuse) a body on ``cell.pretrain_task`` with every parameter trained."""
    import fpt
    from fpt.bodies import BodySpec
    from fpt.bodies.init import save_body

    config = _pretrain_config(table, cell)
    run_dir = out / "_pretrain" / f"{cell.pretrain_task}-{Path(config.body).name}-seed{config.seed}"
    body_dir = run_dir / "body"
    if (body_dir / "body.safetensors").is_file():
        return body_dir
    exp = fpt.build(config)
    fpt.fit(exp, out=run_dir, resume=(run_dir / "checkpoint").exists(), progress=progress)
    save_body(exp.model.body, BodySpec(config.body, config.init, exp.data.spec.seq_len, config.dropout, config.seed),
              body_dir)
    return body_dir


def resolved_config(table: Table, cell: Cell, out: Path, progress: bool, create: bool = True) -> RunConfig:
    if cell.pretrain_task is None:
        return cell.config
    body_dir = ensure_pretrained_body(table, cell, out, progress) if create else out / "_pretrain" / "<to be trained>"
    return dataclasses.replace(cell.config, init=f"checkpoint:{body_dir}")


def run_cell(table: Table, cell: Cell, out: Path, progress: bool = True) -> dict[str, Any]:
    """Run one cell (or reuse its finished run); returns its summary."""
    import fpt
    from fpt.train import resume_config

    run_dir = cell_dir(out, cell)
    summary_file = run_dir / "summary.json"
    if summary_file.is_file():
        return json.loads(summary_file.read_text())
    config = resolved_config(table, cell, out, progress)
    resume = (run_dir / "checkpoint").is_dir()
    if resume and resume_config(run_dir) != config:
        raise ValueError(f"{run_dir} was started with a different config than table {table.name} now gives; "
                         "delete that directory to rerun the cell")
    exp = fpt.build(config)
    return fpt.fit(exp, out=run_dir, resume=resume, progress=progress)


def metric_value(summary: dict[str, Any], metric: str) -> float | None:
    value = summary.get(metric)
    if value is None:
        return None
    return float(value) * METRIC_SCALE.get(metric, 1.0)


def run_table(table: Table, out: Path, progress: bool = True, only: str | None = None) -> list[dict[str, Any]]:
    """Run every cell (or those whose ``row/column`` contains ``only``); one result row per cell.

    Cells left out by ``only`` are still reported: with their finished run if there is one.
    """
    from fpt.cli import USER_ERRORS

    rows = []
    for cell in table.cells:
        row = {"cell": cell, "summary": None, "status": "skipped", "note": cell.skip or ""}
        finished = cell_dir(out, cell) / "summary.json"
        if cell.skip is None and only is not None and only not in f"{cell.row}/{cell.column}":
            if finished.is_file():
                row["summary"], row["status"] = json.loads(finished.read_text()), "done"
            else:
                row["status"], row["note"] = "not run", f"not selected by --only {only!r}"
        elif cell.skip is None:
            try:
                row["summary"] = run_cell(table, cell, out, progress)
                row["status"] = "done"
            except USER_ERRORS as exc:  # one cell's missing data or weights must not sink the table
                row["status"], row["note"] = "failed", str(exc)
        rows.append(row)
    return rows

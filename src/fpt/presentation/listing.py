"""``fpt runs``: one row per run directory under a folder, with its state, metrics and config.

State is read from the files alone, so it works on runs made by any process (or machine):
``running`` (a live process holds the run's lock), ``finished``, ``diverged`` (stopped on a
NaN/inf or exploding loss), ``stopped`` (a checkpoint to resume from, no summary, nobody
holding it; or trained, then stopped while fitting its baselines: summary.json's ``baselines_pending``),
``failed`` (no summary, no checkpoint: it ended before its first checkpoint),
``interrupted`` (only its config.yaml: killed or interrupted before its first evaluation),
``unreadable`` (a file of it is damaged: its row says which, and the other runs in the folder are listed as
ever; a damaged run named itself is a one-line error).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from fpt import rundir
from fpt.errors import ConfigError, FptError
from fpt.rundir import find_runs, read_config, read_metrics, read_metrics_so_far, read_summary

STATES = ("running", "finished", "diverged", "stopped", "failed", "interrupted", "unreadable")
CONFIG_FIELDS = ("task", "data", "body", "init", "freeze", "layers", "fit", "lr", "batch_size", "seed")
GRADIENT_ONLY = ("lr", "batch_size", "steps")  # fields a closed-form fit never reads: blank in its row
METRICS = ("val_accuracy", "test_accuracy", "test_accuracy_last", "val_r2", "test_r2")
COLUMNS = ("run", "state", *CONFIG_FIELDS, "step", "steps", *METRICS, "wall_seconds")


def _has_checkpoint(run_dir: Path) -> bool:
    from fpt.checkpoint import has_checkpoint

    return has_checkpoint(run_dir)


def _task_lr(data: Any, task: Any) -> float | None:
    """The lr task ``task`` declares (``fpt.tasks.task_defaults``); None for a task this fpt does not know."""
    from fpt.errors import RegistryError
    from fpt.settings import DATA_TASK
    from fpt.tasks import task_defaults

    try:
        return task_defaults(DATA_TASK if data is not None else str(task)).lr
    except RegistryError:
        return None


def run_row(run_dir: Path, root: Path) -> dict[str, Any]:
    """The listing row of one run directory."""
    config = read_config(run_dir)
    summary = read_summary(run_dir)
    running = rundir.holder(run_dir) is not None
    # a live run may be mid-way through appending its metrics line: the rows so far, not a damaged file
    metrics = read_metrics_so_far(run_dir) if running else read_metrics(run_dir)
    last = metrics[-1] if metrics else {}
    if running:
        state = "running"
    elif summary is not None and rundir.BASELINES_PENDING in summary:
        state = "stopped"  # trained, but stopped while fitting its baselines: its resume fits them
    elif summary is not None:
        state = "diverged" if summary.get("stopped") == "diverged" or summary.get("diverged_at") else "finished"
    elif _has_checkpoint(run_dir):
        state = "stopped"
    else:
        state = "failed" if (run_dir / rundir.METRICS).is_file() else "interrupted"
    name = str(run_dir.relative_to(root)) if run_dir != root else run_dir.name
    row: dict[str, Any] = {"run": name, "state": state}
    for field in CONFIG_FIELDS:
        value = config.get(field)
        row[field] = None if value is None else value
    if row["lr"] is None:  # a config.yaml written before the lr used was recorded: its task's, as it trained at
        row["lr"] = _task_lr(config.get("data"), config.get("task"))
    row["step"] = (summary or {}).get("steps", last.get("step"))
    row["steps"] = config.get("steps")
    if config.get("fit") == "closed-form":  # its config still holds the preset's lr and steps: it read none of them
        row.update(dict.fromkeys(GRADIENT_ONLY))
    source = summary if summary is not None else {k: last.get(k) for k in ("val_accuracy", "val_r2")}
    for metric in METRICS:
        row[metric] = source.get(metric)
    row["wall_seconds"] = (summary or {}).get("wall_seconds", last.get("wall_seconds"))
    return row


def list_runs(root: str | Path) -> list[dict[str, Any]]:
    """Rows for every run directory at or below ``root`` (sorted by path)."""
    root = Path(root)
    if not root.exists():
        raise FileNotFoundError(f"{root} does not exist: give a directory holding fpt runs")
    found = find_runs(root, started=True)
    if found == [root]:  # the run named itself: its damage is the answer, a one-line error
        return [run_row(root, root)]
    return [_row_or_damage(path, root) for path in found]


def _row_or_damage(run_dir: Path, root: Path) -> dict[str, Any]:
    """``run_row``, or for a run whose files cannot be read (a truncated summary.json, a half-written metrics line,
    a file it may not read) an ``unreadable`` row whose ``error`` says which and the fix: one damaged run in a
    folder of hundreds must not hide the others."""
    try:
        return run_row(run_dir, root)
    except (FptError, OSError, UnicodeDecodeError) as exc:
        name = str(run_dir.relative_to(root)) if run_dir != root else run_dir.name
        return {"run": name, "state": "unreadable", "error": str(exc)}


def parse_filter(text: str) -> tuple[str, str, str]:
    """``FIELD=VALUE``, ``FIELD!=VALUE``, ``FIELD>=NUMBER``, ``FIELD<=NUMBER``, ``FIELD>N``, ``FIELD<N``."""
    for op in ("!=", ">=", "<=", "=", ">", "<"):
        if op in text:
            field, value = text.split(op, 1)
            if field not in COLUMNS:
                raise ConfigError(f"--filter {text!r}: unknown field {field!r}; fields: {', '.join(COLUMNS)}")
            return field, op, value
    raise ConfigError(f"--filter {text!r}: write FIELD=VALUE (or !=, >=, <=, >, <), e.g. state=finished")


def _matches(row: dict[str, Any], field: str, op: str, value: str) -> bool:
    have = row.get(field)
    if op in ("=", "!="):
        equal = str(have) == value or (have is not None and _number(have) is not None
                                       and _number(have) == _number(value))
        return equal if op == "=" else not equal
    a, b = _number(have), _number(value)
    if b is None:
        raise ConfigError(f"--filter {field}{op}{value}: {value!r} is not a number; {op} compares numbers "
                          "(= and != compare text)")
    if a is None:
        return False
    return {">=": a >= b, "<=": a <= b, ">": a > b, "<": a < b}[op]


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def select(rows: list[dict[str, Any]], filters: list[str] = (), sort: str | None = None,
           descending: bool = False) -> list[dict[str, Any]]:
    """Rows matching every filter, sorted by ``sort`` (numbers as numbers; missing values last)."""
    for text in filters:
        field, op, value = parse_filter(text)
        rows = [r for r in rows if _matches(r, field, op, value)]
    if sort is not None:
        if sort not in COLUMNS:
            raise ConfigError(f"--sort {sort!r}: unknown field; fields: {', '.join(COLUMNS)}")
        present = [r for r in rows if r.get(sort) is not None]
        missing = [r for r in rows if r.get(sort) is None]

        def key(r: dict[str, Any]) -> tuple[int, Any]:
            number = _number(r[sort])
            return (0, number) if number is not None else (1, str(r[sort]))

        rows = sorted(present, key=key, reverse=descending) + missing
    return rows

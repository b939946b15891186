"""The files fpt reads back, checked as fpt wrote them: one schema check per kind of stored file.

A run directory, an export or a results folder may have been edited, truncated or replaced by hand. Every
reader of a stored file goes through ``read_bytes`` (a size limit: a file far larger than fpt ever writes is
refused before it is read) and the file kind's check below (types, finiteness, sizes), so a tampered file
is a one-line ``CheckpointError`` naming the file, the field and the fix, never a traceback deep in a report
or a silent wrong figure.

- ``metrics_row``: one metrics.jsonl row (a mapping; ``step`` a whole number >= 0; ``wall_seconds`` a finite
  number >= 0; every metric a number or null).
- ``summary``: summary.json (a mapping; its metrics numbers or null; its counts whole numbers; ``task_info``,
  ``eval`` and ``eval_last`` mappings).
- ``task_info``: the facts about the training data (a mapping; ``split_sizes`` of whole numbers).
- ``selection``: selection.json of ``fpt train --choose`` (``winner`` an index into ``candidates``, one score
  row per candidate of ``folds`` entries).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fpt import bounded
from fpt.bounded import CONFIG_LIMIT
from fpt.errors import CheckpointError, option
from fpt.rundir.names import CONFIG, DATA, ENSEMBLE, METRICS, SELECTION_FILE, SUMMARY

# Larger than fpt writes by orders of magnitude (a data.json with a 100,000-word vocabulary is a few MB).
LIMITS = {CONFIG: CONFIG_LIMIT, SUMMARY: 64 << 20, METRICS: 512 << 20, SELECTION_FILE: 16 << 20, DATA: 256 << 20,
          "config.json": 64 << 20, "results.csv": 256 << 20, ENSEMBLE: 16 << 20}
DEFAULT_LIMIT = 64 << 20

_METRIC = re.compile(r"(^|_)(accuracy|loss|r2|mae|rmse|mse)(_last)?$")
_SECONDS = re.compile(r"(^|_)seconds$|_per_second$")
_COUNTS = ("step", "steps", "selected_step", "steps_to_target", "steps_to_converge", "diverged_at", "world_size",
           "global_batch_size", "train_examples")


def read_bytes(path: str | Path, limit: int | None = None, error: type[Exception] = CheckpointError) -> bytes:
    """``path``'s bytes, unless it is larger than ``limit`` (default: the file kind's in ``LIMITS``)."""
    return bounded.read_bytes(path, limit if limit is not None else LIMITS.get(Path(path).name, DEFAULT_LIMIT), error)


def _bad(path: Any, field: str, value: Any, expected: str, fix: str) -> CheckpointError:
    shown = repr(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return CheckpointError(f"{path}: field {field!r} is {shown}, expected {expected}; {fix}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _numbers(doc: Mapping[str, Any], path: Any, fix: str, prefix: str = "") -> None:
    """Every metric, duration and count of ``doc`` of its type (null allowed: a run that evaluated nothing)."""
    for key, value in doc.items():
        if value is None or not isinstance(key, str):
            continue
        if (_METRIC.search(key) or _SECONDS.search(key)) and not _is_number(value):
            raise _bad(path, prefix + key, value, "a number", fix)
        if key in _COUNTS and not _is_count(value):
            raise _bad(path, prefix + key, value, "a whole number >= 0", fix)


def metrics_row(row: Any, path: Any, line: int) -> dict[str, Any]:
    """One metrics.jsonl row as fpt train writes it (``line``: its line number, for the message)."""
    where = f"{path}, line {line}"
    fix = "repair or delete that line (fpt train writes one mapping per evaluation)"
    if not isinstance(row, dict):
        raise CheckpointError(f"{where}: a JSON {type(row).__name__}, not a metrics row (a mapping); {fix}")
    if not _is_count(row.get("step")):
        raise _bad(where, "step", row.get("step"), "a whole number >= 0", fix)
    wall = row.get("wall_seconds")
    if not _is_number(wall) or not math.isfinite(wall) or wall < 0:
        raise _bad(where, "wall_seconds", wall, "a finite number of seconds >= 0", fix)
    _numbers(row, where, fix)
    return row


# What runs trained on a list of series of different lengths recorded as X_shape's second item until fpt recorded none.
RAGGED = "series of different lengths"


def task_info(info: Any, path: Any, field: str = "task_info") -> dict[str, Any]:
    """The facts about the training data (``{}`` when absent)."""
    fix = "restore the file, or train the run again"
    if info is None:
        return {}
    if not isinstance(info, dict):
        raise _bad(path, field, info, "a mapping of facts about the training data", fix)
    sizes = info.get("split_sizes")
    if sizes is not None and (not isinstance(sizes, dict) or not all(_is_count(v) for v in sizes.values())):
        raise _bad(path, f"{field}.split_sizes", sizes, "a mapping of split names to example counts", fix)
    for key in ("X_shape",):
        value = info.get(key)
        # a run trained on a list of series of different lengths before fpt stopped recording a shape for it
        legacy = isinstance(value, list) and len(value) == 2 and _is_count(value[0]) and value[1] == RAGGED
        if value is not None and not legacy and (not isinstance(value, list) or not all(_is_count(v) for v in value)):
            raise _bad(path, f"{field}.{key}", value, "a list of whole numbers", fix)
    for key in ("train_lengths",):
        value = info.get(key)
        if value is not None and not isinstance(value, (str, int)):
            raise _bad(path, f"{field}.{key}", value, "text such as '24..24'", fix)
    return info


def summary(doc: Any, path: Any) -> dict[str, Any]:
    """summary.json as fpt writes it (an ensemble's and a refit's included)."""
    fix = "restore it, or delete it and re-evaluate with fpt eval"
    if not isinstance(doc, dict):
        raise CheckpointError(f"{path} holds a JSON {type(doc).__name__}, not fpt's summary (a mapping of scores); {fix}")
    _numbers(doc, path, fix)
    for key in ("eval", "eval_last"):
        value = doc.get(key)
        if value is None:
            continue
        if not isinstance(value, dict):
            raise _bad(path, key, value, "a mapping of held-out figures", fix)
        _numbers(value, path, fix, prefix=f"{key}.")
    task_info(doc.get("task_info"), path)
    for key in ("task", "body", "init", "freeze", "val_set", "test_set", "stopped"):
        value = doc.get(key)
        if value is not None and not isinstance(value, str):
            raise _bad(path, key, value, "text", fix)
    return doc


def selection(doc: Any, path: Any) -> dict[str, Any]:
    """selection.json of ``fpt train --choose``: the candidates, their fold figures and the winner's index."""
    fix = (f"move it out of the run directory to resume without it (or train with {option('choose')} again into a "
           f"new {option('out')})")
    if not isinstance(doc, dict):
        raise CheckpointError(f"{path}: a JSON {type(doc).__name__}, not a selection (a mapping); {fix}")
    metric = doc.get("metric")
    if metric not in ("accuracy", "r2"):
        raise _bad(path, "metric", metric, "'accuracy' or 'r2'", fix)
    folds, candidates, winner = doc.get("folds"), doc.get("candidates"), doc.get("winner")
    if not _is_count(folds) or folds < 1:  # 1: fit=auto compared on the validation split
        raise _bad(path, "folds", folds, "a whole number >= 1", fix)
    if not isinstance(candidates, list) or not candidates or not all(isinstance(c, dict) for c in candidates):
        raise _bad(path, "candidates", candidates, "a list of mappings of config fields", fix)
    if not _is_count(winner) or winner >= len(candidates):
        raise _bad(path, "winner", winner, f"an index into the {len(candidates)} candidates (0..{len(candidates) - 1})",
                   fix)
    for key in (f"val_{metric}", "val_loss", "selected_steps"):
        rows = doc.get(key)
        if not isinstance(rows, list) or len(rows) != len(candidates) or \
                not all(isinstance(r, list) and len(r) == folds for r in rows):
            raise _bad(path, key, rows, f"one list of {folds} fold figures per candidate", fix)
        if key != "selected_steps" and not all(v is None or _is_number(v) for r in rows for v in r):
            raise _bad(path, key, rows, "numbers (or null for a fold that evaluated nothing)", fix)
    given = doc.get("choose")
    if not isinstance(given, list) or len(given) != len(candidates) or not all(isinstance(g, str) for g in given):
        raise _bad(path, "choose", given, f"the {option('choose')} texts, one per candidate", fix)
    return doc


__all__ = ["LIMITS", "metrics_row", "read_bytes", "selection", "summary", "task_info"]

"""Reading and writing a run directory's files (the layout: fpt.rundir)."""

from __future__ import annotations

import json
import math
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from fpt.errors import CheckpointError, option
from fpt.rundir import stored
from fpt.rundir.atomic import append_line, write_text, write_with
from fpt.rundir.names import (
    BODY_DIR,
    BODY_FILE,
    CONFIG,
    DATA,
    DATA_FINGERPRINT,
    ENSEMBLE,
    METRICS,
    SELECTION_FILE,
    SLOTS,
    SUMMARY,
)

# Directories inside a run (or a results tree) that never hold runs of their own.
# mlruns/mlartifacts: MLflow's stores, whose artifact copies of config.yaml and summary.json are no runs.
_OLD_SLOTS = (".tmp", ".old")  # what a killed save of the pre-versioning layout left beside a slot
_NOT_RUNS = {slot + suffix for slot in SLOTS for suffix in ("", *_OLD_SLOTS)} | {BODY_DIR, "mlruns", "mlartifacts"}


def _mlflow_artifacts(path: Path) -> bool:
    """An MLflow run's artifact folder in a store of any name (``EXPERIMENT/RUN_ID/artifacts``)."""
    return path.name == "artifacts" and ((path.parent / "meta.yaml").is_file()
                                         or re.fullmatch(r"[0-9a-f]{32}", path.parent.name) is not None)


def is_run_dir(path: str | Path) -> bool:
    """Whether ``path`` holds a run written by fpt train (its config and its metrics or summary)."""
    return (Path(path) / CONFIG).is_file() and (
        (Path(path) / METRICS).is_file() or (Path(path) / SUMMARY).is_file())


def is_started_run(path: str | Path) -> bool:
    """Whether ``path`` holds a run that fpt train started and that wrote nothing but its config.yaml (killed or
    interrupted before its first evaluation): a config with the run's own fields."""
    if not (Path(path) / CONFIG).is_file():
        return False
    try:
        config = read_config(path)
    except (ValueError, OSError):  # not fpt's YAML: not a run
        return False
    return isinstance(config, dict) and {"task", "body", "seed", "steps"} <= set(config)


def find_runs(root: str | Path, started: bool = False) -> list[Path]:
    """Run directories at or below ``root``, sorted by path; ``started``: also runs that wrote only their config
    (``is_started_run``: fpt runs lists them as interrupted)."""
    root = Path(root)
    if is_run_dir(root) or (started and is_started_run(root)):
        return [root]
    found = [p.parent for p in root.rglob(CONFIG) if not _NOT_RUNS & set(p.relative_to(root).parts[:-1])]
    return sorted(p for p in found if (is_run_dir(p) or (started and is_started_run(p))) and not _mlflow_artifacts(p))


def read_config(run_dir: str | Path) -> dict[str, Any]:
    """config.yaml as a plain mapping (``fpt.run.Run.config`` gives the typed RunConfig)."""
    from fpt.config import load_yaml  # one-line errors for a tag (!!python/object), bad YAML or a non-mapping

    path = Path(run_dir) / CONFIG
    if not path.is_file():
        if _is_export(Path(run_dir)):  # fpt eval EXPORT: what it is, and the command that reads it
            raise FileNotFoundError(f"{path} does not exist: {run_dir} is an export (fpt export), which holds the model "
                                    "but not the run's data or held-out sets; fpt predict and fpt.load read it (fpt "
                                    f"predict {run_dir} test.csv scores it on a labelled file)")
        raise FileNotFoundError(f"{path} does not exist: {run_dir} is not a run directory written by fpt train"
                                f"{not_a_run(Path(run_dir))}")
    return load_yaml(path)


def not_a_run(path: Path) -> str:
    """What a path given as a run (fpt predict/eval/export RUN, fpt.load) is instead, and which to give: a file (the
    inputs named first?), or a folder of runs (their names). "" for anything else."""
    if path.is_file():
        return "; it is a file: give a run directory (fpt predict takes the run first, then the inputs)"
    if not path.is_dir():
        return ""
    inside = sorted(p.name for p in path.iterdir() if p.is_dir() and ((p / CONFIG).is_file() or _is_export(p)))
    if not inside:
        return ""
    names = ", ".join(str(path / n) for n in inside[:5]) + (f" and {len(inside) - 5} more" if len(inside) > 5 else "")
    return f"; it holds runs: give one of them ({names})"


def _is_export(path: Path) -> bool:
    """Whether ``path`` holds an fpt export (its config.json names the format in its first bytes; fpt.export reads
    it fully)."""
    try:
        with open(path / "config.json", "rb") as f:
            return b'"fpt-export-' in f.read(200)
    except OSError:
        return False


def read_metrics(run_dir: str | Path) -> list[dict[str, Any]]:
    """metrics.jsonl's rows ([] before the first evaluation)."""
    path = Path(run_dir) / METRICS
    if not path.is_file():
        return []
    rows = []
    for number, line in enumerate(stored.read_bytes(path).decode("utf-8", errors="replace").splitlines(), start=1):
        if line.strip():
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise CheckpointError(f"{path}, line {number}: not a JSON row ({exc}): truncated or corrupt; delete that "
                                      "line (or the run) and resume or train again") from None
            rows.append(stored.metrics_row(row, path, number))
    return rows


def _read_json(path: Path, fix: str) -> Any:
    """A JSON file of the run (None when it is not there); a damaged one is a CheckpointError saying ``fix``."""
    if not path.is_file():
        return None
    try:
        return json.loads(stored.read_bytes(path))
    except (ValueError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{path} is not valid JSON ({exc}): truncated or corrupt; {fix}") from None


def read_summary(run_dir: str | Path) -> dict[str, Any] | None:
    """summary.json (None while the run has not finished)."""
    path = Path(run_dir) / SUMMARY
    data = _read_json(path, "re-evaluate with fpt eval or train again")
    return None if data is None else stored.summary(data, path)  # fpt's mapping of scores, of its types


def read_data(run_dir: str | Path) -> dict[str, Any] | None:
    """data.json as a mapping (None for a run of a paper task: it has none)."""
    return _read_json(Path(run_dir) / DATA, "train the run again (it holds the fitted tokeniser)")


def read_data_fingerprint(run_dir: str | Path) -> dict[str, Any] | None:
    """data_fingerprint.json (None for a run of a paper task, or one started before fpt recorded it)."""
    found = _read_json(Path(run_dir) / DATA_FINGERPRINT, "delete it to resume without the check of the data's content")
    return found if isinstance(found, dict) else None


def read_selection(run_dir: str | Path) -> dict[str, Any] | None:
    """selection.json (None when the run chose nothing)."""
    path = Path(run_dir) / SELECTION_FILE
    return json.loads(stored.read_bytes(path)) if path.is_file() else None


def read_ensemble(path: str | Path) -> list[str]:
    """The members (run directories relative to ``path``) that ensemble.json lists."""
    file = Path(path) / ENSEMBLE
    try:
        members = json.loads(file.read_text())["members"]
        if not (isinstance(members, list) and members and all(isinstance(m, str) for m in members)):
            raise TypeError("not a list of run directories")
    except (OSError, ValueError, KeyError, TypeError):
        raise CheckpointError(f"{file}: not an ensemble file written by fpt train (a 'members' list of "
                              f"run directories); train the ensemble again into a new {option('out')}") from None
    return members


def is_ensemble(path: str | Path) -> bool:
    return (Path(path) / ENSEMBLE).is_file()


def read_metrics_so_far(run_dir: str | Path) -> list[dict[str, Any]]:
    """metrics.jsonl's rows while a run writes it: a half-written last line (or any unreadable one) is skipped."""
    try:
        text = (Path(run_dir) / METRICS).read_text(errors="replace")
    except OSError:
        return []
    rows = []
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and isinstance(row.get("step"), int):
            rows.append(row)
    return rows


def has_body(run_dir: str | Path) -> bool:
    """Whether ``run_dir/body`` holds a complete saved body (its tensors are written last)."""
    return (Path(run_dir) / BODY_DIR / BODY_FILE).is_file()


def checkpoint_paths(run_dir: str | Path) -> list[Path]:
    """Every checkpoint directory of a run that exists (what pruning a finished run deletes)."""
    run_dir = Path(run_dir)
    names = [slot + suffix for slot in SLOTS for suffix in ("", *_OLD_SLOTS)]
    return [run_dir / n for n in names if (run_dir / n).is_dir()]


# --- writing run directories (the caller holds the lock) -----------------------------------------------

def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def summary_json(summary: dict[str, Any]) -> str:
    """summary.json's text (and selection.json's, ensemble.json's): strict JSON, a non-finite metric (a diverged
    or overflowing run) written as null; json.dumps would write Infinity/NaN, which other JSON readers refuse."""
    return json.dumps(_finite(summary), indent=1, allow_nan=False)


def write_config(run_dir: str | Path, config: Any) -> None:
    """config.yaml: every field of ``config`` (a RunConfig)."""
    from fpt.config import save_yaml

    write_with(Path(run_dir) / CONFIG, lambda tmp: save_yaml(config, tmp))


def write_summary(run_dir: str | Path, summary: dict[str, Any]) -> None:
    write_text(Path(run_dir) / SUMMARY, summary_json(summary))


def write_data(run_dir: str | Path, fitted: dict[str, Any]) -> None:
    write_text(Path(run_dir) / DATA, json.dumps(fitted, indent=1))


def write_data_fingerprint(run_dir: str | Path, fingerprint: dict[str, Any]) -> None:
    write_text(Path(run_dir) / DATA_FINGERPRINT, json.dumps(fingerprint, indent=1))


def write_selection(run_dir: str | Path, selection: dict[str, Any]) -> None:
    write_text(Path(run_dir) / SELECTION_FILE, summary_json(selection))


def record_selection(run_dir: str | Path, selection: dict[str, Any], summary: dict[str, Any]) -> dict[str, Any]:
    """selection.json (``selection``: a --choose or fit=auto record, as fpt.select writes it) beside a finished run,
    and the summary with a ``selection`` block (the winner and each candidate's mean and spread) written as
    summary.json; returns that summary. The caller holds the run directory's lock."""
    metric = selection["metric"]
    block = {"file": SELECTION_FILE, **{k: selection[k] for k in (
        "metric", "folds", "winner", "winner_fields", "choose", f"mean_val_{metric}", f"std_val_{metric}")}}
    if selection.get("auto"):  # fit=auto: how the fits were compared, and what was not compared
        block.update(auto=True, protocol=selection.get("protocol"), notes=selection.get("notes", []))
    summary = {**summary, "selection": block}
    write_selection(run_dir, selection)
    write_summary(run_dir, summary)
    return summary


def write_ensemble(path: str | Path, doc: dict[str, Any]) -> None:
    write_text(Path(path) / ENSEMBLE, summary_json(doc))


def append_metrics(run_dir: str | Path, row: dict[str, Any]) -> None:
    append_line(Path(run_dir) / METRICS, json.dumps(row))


def truncate_metrics(run_dir: str | Path, step: int) -> list[dict[str, Any]]:
    """The evaluations up to the checkpoint a run resumes from (``step``); later ones are dropped from the file.

    A corrupt last line (a kill while it was written) is dropped when the checkpoint's own
    row comes before it; anywhere else it is an error naming the line. Rows of an earlier
    attempt that a restart appended to (steps going back) are superseded by the later ones.
    """
    path = Path(run_dir) / METRICS
    if not path.exists():
        return []
    lines = path.read_bytes().decode("utf-8", errors="replace").split("\n")
    numbered = [(i, line) for i, line in enumerate(lines, 1) if line.strip()]
    rows: list[dict[str, Any]] = []
    for pos, (i, line) in enumerate(numbered):
        try:
            row = json.loads(line)
            if not isinstance(row, dict) or isinstance(row.get("step"), bool) or not isinstance(row.get("step"), int):
                raise ValueError("no integer step")
        except ValueError as exc:
            last = pos == len(numbered) - 1
            if last and rows and rows[-1]["step"] >= step:
                break  # written after the checkpoint was: replayed on resume
            where = "the last line, but the checkpoint's evaluation is not before it" if last else "not the last line"
            raise CheckpointError(
                f"{path}, line {i}: not a metrics row ({exc}); it is {where}, so resuming from step {step} cannot "
                "drop it safely: repair or delete that line, then resume again") from None
        while rows and rows[-1]["step"] >= row["step"]:
            rows.pop()  # a restarted attempt's rows replace the earlier attempt's
        rows.append(row)
    kept = [r for r in rows if r["step"] <= step]
    text = "".join(json.dumps(r) + "\n" for r in kept)
    if text != path.read_text(errors="replace"):
        write_text(path, text)
    return kept


def written_by_fpt(run_dir: str | Path) -> bool:
    """Whether the run files in ``run_dir`` are fpt's: fpt train writes config.yaml (every RunConfig field) before
    any other file, so metrics.jsonl, best/ or checkpoint/ without such a config.yaml are someone else's."""
    from fpt.config import RunConfig, from_dict, load_yaml
    from fpt.errors import ConfigError

    path = Path(run_dir) / CONFIG
    if not path.is_file():
        return False
    try:
        saved = load_yaml(path)
        from_dict(RunConfig, saved, where=str(path))
    except ConfigError:
        return False
    return {"task", "body", "init", "freeze", "seed", "steps"} <= set(saved)


def start_clean(run_dir: str | Path) -> None:
    """Remove what a run stopped before its first checkpoint left (evaluations, best/).

    Only from a directory fpt wrote (``written_by_fpt``): files of the same names in an ordinary folder are
    refused, never deleted or overwritten."""
    run_dir = Path(run_dir)
    ours = [n for n in (CONFIG, METRICS, SUMMARY, DATA) if (run_dir / n).exists()]
    ours += [p.name + "/" for p in checkpoint_paths(run_dir)]
    if ours and not written_by_fpt(run_dir):
        raise CheckpointError(
            f"{run_dir} holds {', '.join(ours)} but no config.yaml written by fpt train, so it is not an fpt run "
            f"and fpt will not replace those files: choose another {option('out')} (a new or empty folder)")
    removed = []
    if (run_dir / METRICS).exists():
        (run_dir / METRICS).unlink()
        removed.append(METRICS)
    for path in checkpoint_paths(run_dir):
        shutil.rmtree(path)
        removed.append(path.name + "/")
    if removed:
        print(f"fpt: {run_dir} held {', '.join(removed)} of a run stopped before its first checkpoint; "
              "starting it afresh", file=sys.stderr)

"""A run directory's two safety rules: one writer at a time, and no half-written files.

``lock(run_dir)`` takes an OS-level lock (``fcntl.flock``) on ``run_dir/run.lock`` for as
long as the ``with`` block lasts; the file records the holder's pid, host and start time,
and is removed when the lock is released.
A second writer, in this or any other process, is refused with a one-line
``RunDirBusyError`` naming the holder. The OS releases a flock when its process exits,
however it exits, so a ``run.lock`` left behind by a killed run is not a lock: the next
writer simply takes it. Within one process the lock is re-entrant (``fpt reproduce``
holds it around ``fit`` and writing the pretrained body; ``fit`` takes it again).

``write_bytes`` / ``write_text`` / ``write_with`` write a file atomically: to a temporary
name in the same directory, fsynced, renamed over the target, and the directory fsynced.
A kill at any moment leaves the old file or the new one, never a mix. ``append_line``
appends one line and fsyncs it. A full disk (or quota) is a one-line ``CheckpointError``
that says nothing was replaced.

This module is the one owner of a run directory's layout: every file name below, and every reader
and writer of those files (``fpt.checkpoint`` writes the inside of a checkpoint slot; ``fpt.run.Run``
is the object over the directory). ``fpt train --out DIR`` writes::

    DIR/config.yaml      the resolved RunConfig                        write_config / read_config
    DIR/metrics.jsonl    one row per evaluation                        append_metrics / read_metrics
    DIR/summary.json     the final scores, when training ends          write_summary / read_summary
    DIR/data.json        --data runs: tokeniser, class map, scaler     write_data / read_data
    DIR/selection.json   --choose: what was compared and what won      write_selection / read_selection
    DIR/selection/       --refit: the run that chose the step count
    DIR/checkpoint/      the latest trained parameters (for --resume)  fpt.checkpoint
    DIR/best/            the validation-selected trained parameters    fpt.checkpoint
    DIR/body/            fpt pretrain / a Table 9 pretraining run: the whole trained body
    DIR/run.lock         the writer lock while a process writes it     lock

A seed ensemble's directory holds ``ensemble.json`` (write_ensemble / read_ensemble) and its members'
runs in ``members/seedS``. The training state a checkpoint saves for ``--resume`` is ``TrainState``.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import math
import os
import re
import shutil
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from fpt.errors import CheckpointError, RunDirBusyError  # noqa: F401  (re-exported: raised here)

# The files of a run directory (the layout above).
CONFIG = "config.yaml"  # the resolved RunConfig
METRICS = "metrics.jsonl"  # one row per evaluation
SUMMARY = "summary.json"  # the final scores, written when training ends
DATA = "data.json"  # --data runs: the fitted tokeniser, class map and target scaler
SELECTION_FILE = "selection.json"  # --choose: what was compared and what won
SELECTION_RUN = "selection"  # --refit: the first run (it chose the step count), inside the refit run's directory
LOCK_FILE = "run.lock"  # the writer lock while a process writes the run
ENSEMBLE = "ensemble.json"  # a seed ensemble's directory: its members' runs, in MEMBERS/seedS
MEMBERS = "members"
BODY_DIR = "body"  # a whole trained body (fpt pretrain, Table 9's pretraining runs): BODY_META and BODY_FILE
BODY_FILE, BODY_META = "body.safetensors", "body.json"
# The checkpoint slots and the files of one checkpoint version (fpt.checkpoint reads and writes them).
LATEST, BEST = "checkpoint", "best"
SLOTS = (LATEST, BEST)
POINTER = "current"  # a slot's committed version
STATE = "state.json"
TRAINABLE, OPTIMIZER, RNG = "trainable.safetensors", "optimizer.safetensors", "rng.safetensors"
_NO_SPACE = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


_held: dict[str, list] = {}  # realpath of the lock file -> [fd, depth]
_held_guard = threading.Lock()


def _describe_holder(path: Path) -> str:
    for _ in range(5):  # the holder writes its line right after locking: give it a moment
        try:
            text = path.read_text().strip()
        except OSError:
            text = ""
        if text:
            info = dict(part.split("=", 1) for part in text.split() if "=" in part)
            return (f"pid {info.get('pid', '?')} on {info.get('host', '?')}, since {info.get('since', '?')}"
                    + (f", {info['what']}" if info.get("what") else ""))
        time.sleep(0.05)
    return "a process that has not yet written its pid"


def holder(run_dir: str | Path) -> dict[str, str] | None:
    """Who holds ``run_dir``'s lock (pid, host, since, what), or None when nobody does.

    Read without touching the lock: probing it with flock could make a writer starting at that
    instant fail as busy. A lock file left by a killed process names a pid that is gone: on
    this host that reads as not held; a holder on another host is taken at its word.
    """
    path = Path(run_dir) / LOCK_FILE
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    info = dict(part.split("=", 1) for part in text.split() if "=" in part)
    if info.get("host") == socket.gethostname():
        try:
            os.kill(int(info.get("pid", "")), 0)
        except ProcessLookupError:
            return None
        except (ValueError, PermissionError):
            pass  # no pid written yet, or alive under another user
    return info


@contextlib.contextmanager
def lock(run_dir: str | Path, what: str = "") -> Iterator[Path]:
    """Hold ``run_dir``'s writer lock for the ``with`` block (creating ``run_dir``)."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / LOCK_FILE
    key = os.path.realpath(path)
    with _held_guard:
        if key in _held:
            _held[key][1] += 1
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield path
        finally:
            with _held_guard:
                _held[key][1] -= 1
        return
    fd = _acquire(run_dir, path)
    try:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        line = f"pid={os.getpid()} host={socket.gethostname()} since={stamp}"
        line += f" what={what.replace(' ', '_')}" if what else ""
        os.ftruncate(fd, 0)
        os.pwrite(fd, (line + "\n").encode(), 0)
        os.fsync(fd)
    except OSError:
        pass  # the flock is the lock; the text only names the holder
    with _held_guard:
        _held[key] = [fd, 1]
    try:
        yield path
    finally:
        with _held_guard:
            del _held[key]
        with contextlib.suppress(OSError):
            path.unlink()  # while still holding it (a process that opened it meanwhile sees it gone and retries)
        os.close(fd)  # releases the flock


def _acquire(run_dir: Path, path: Path) -> int:
    """Open and flock ``path``; retried when the file was removed by a releasing holder meanwhile."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RunDirBusyError(
                f"{run_dir} is in use by another fpt process ({_describe_holder(path)}); wait for it to finish, "
                "or use another --out") from None
        except BaseException:
            os.close(fd)
            raise
        try:
            now = os.stat(path)
        except FileNotFoundError:
            now = None
        mine = os.fstat(fd)
        if now is not None and (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
            return fd
        os.close(fd)  # we locked a file that its holder had just removed: take the new one


def holds_lock(run_dir: str | Path) -> bool:
    """Whether this process holds ``run_dir``'s lock."""
    with _held_guard:
        return os.path.realpath(Path(run_dir) / LOCK_FILE) in _held


def fsync_dir(path: str | Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot fsync a directory
    finally:
        os.close(fd)


def no_space(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in _NO_SPACE


def write_error(path: Path, exc: OSError, kept: str = "") -> CheckpointError:
    """The one-line error for a failed write of ``path``."""
    why = "the disk is full" if no_space(exc) else (exc.strerror or str(exc))
    return CheckpointError(f"cannot write {path}: {why} ({type(exc).__name__} errno {exc.errno}); "
                           f"{kept or 'the previous version of the file is unchanged'}")


def tmp_name(path: Path) -> Path:
    """Where a file or directory is written before it is renamed to ``path``."""
    return path.with_name(f".{path.name}.tmp-{os.getpid()}")


_DEBRIS = re.compile(r"^\..+\.tmp-(\d+)$")


def clear_debris(directory: str | Path, pattern: re.Pattern[str] = _DEBRIS, keep_own: bool = False) -> None:
    """Remove temporary files and directories that a killed process left in ``directory``: the names
    ``pattern`` matches (group 1: the writer's pid; default ``tmp_name``'s) whose process is gone, and this
    process's own leftovers unless ``keep_own`` (a writer of this process may be using them)."""
    directory = Path(directory)
    if not directory.is_dir():
        return
    for p in directory.iterdir():
        m = pattern.match(p.name)
        if not m:
            continue
        pid = int(m.group(1))
        if pid == os.getpid():
            if keep_own:
                continue
        else:
            try:
                os.kill(pid, 0)
                continue  # a live process is writing it
            except ProcessLookupError:
                pass
            except (PermissionError, OverflowError):
                continue
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                p.unlink()


def write_with(path: str | Path, writer: Callable[[Path], None], kept: str = "") -> None:
    """Atomically replace ``path`` by what ``writer(tmp_path)`` writes."""
    path = Path(path)
    tmp = tmp_name(path)
    try:
        writer(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise write_error(path, exc, kept) from None
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)


def _write_file(tmp: Path, data: bytes) -> None:
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()


def write_bytes(path: str | Path, data: bytes, kept: str = "") -> None:
    write_with(path, lambda tmp: _write_file(tmp, data), kept)


def write_text(path: str | Path, text: str, kept: str = "") -> None:
    write_bytes(path, text.encode(), kept)


def append_line(path: str | Path, line: str) -> None:
    """Append one line (a newline is added) and fsync it."""
    path = Path(path)
    try:
        with open(path, "a") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        raise write_error(path, exc, "the run can be resumed from its last checkpoint once the cause is fixed") \
            from None



# --- reading run directories ------------------------------------------------------------------------

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
        raise FileNotFoundError(f"{path} does not exist: {run_dir} is not a run directory written by fpt train")
    return load_yaml(path)


def read_metrics(run_dir: str | Path) -> list[dict[str, Any]]:
    """metrics.jsonl's rows ([] before the first evaluation)."""
    from fpt import stored

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


def read_summary(run_dir: str | Path) -> dict[str, Any] | None:
    """summary.json (None while the run has not finished)."""
    from fpt import stored

    path = Path(run_dir) / SUMMARY
    if not path.is_file():
        return None
    try:
        data = json.loads(stored.read_bytes(path))
    except (ValueError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{path} is not valid JSON ({exc}): truncated or corrupt; "
                              "re-evaluate with fpt eval or train again") from None
    return stored.summary(data, path)  # every reader takes it for fpt's mapping of scores, of its types


def read_data(run_dir: str | Path) -> dict[str, Any] | None:
    """data.json as a mapping (None for a run of a paper task: it has none)."""
    from fpt import stored

    path = Path(run_dir) / DATA
    if not path.is_file():
        return None
    try:
        return json.loads(stored.read_bytes(path))
    except (ValueError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{path} cannot be read ({type(exc).__name__}: {exc}): truncated or corrupt; train the "
                              "run again (it holds the fitted tokeniser)") from None


def read_selection(run_dir: str | Path) -> dict[str, Any] | None:
    """selection.json (None when the run chose nothing)."""
    from fpt import stored

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
                              "run directories); train the ensemble again into a new --out") from None
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


def write_selection(run_dir: str | Path, selection: dict[str, Any]) -> None:
    write_text(Path(run_dir) / SELECTION_FILE, summary_json(selection))


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
            "and fpt will not replace those files: choose another --out (a new or empty folder)")
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


# --- the training state ----------------------------------------------------------------------------------

@dataclass
class TrainState:
    """Where a training run stands: what ``fit`` updates each step and a checkpoint saves for ``--resume``
    (state.json's ``state``, one key per field, as the plain dict of older versions wrote it)."""

    step: int = 0
    best_score: float = -1.0  # the selection metric's best: validation accuracy, or R² for regression
    best_loss: float | None = None  # the validation loss there (tie_break=loss); None: unknown (saved before it)
    best_step: int = 0
    steps_to_target: int | None = None
    wall_seconds: float = 0.0
    train_seconds: float = 0.0
    train_examples: int = 0
    evals_since_best: int = 0
    diverged_at: int | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: Any, where: str) -> TrainState:
        """A saved state, checked field by field (a CheckpointError naming ``where`` and the field)."""
        if not isinstance(doc, dict):
            raise CheckpointError(f"{where}: the training state is not a JSON object")
        if "best_score" not in doc and "best_accuracy" in doc:  # written before it was named for R² too
            doc = {("best_score" if k == "best_accuracy" else k): v for k, v in doc.items()}
        missing = sorted(set(_STATE_TYPES) - _OPTIONAL_STATE - set(doc))
        if missing:
            raise CheckpointError(f"{where}: the training state lacks {missing}: not a resumable checkpoint")
        values = {}
        for name, types in _STATE_TYPES.items():
            value = doc.get(name)
            if isinstance(value, bool) or not isinstance(value, types):
                raise CheckpointError(f"{where}: {name} is {value!r}, expected {' or '.join(t.__name__ for t in types)}")
            values[name] = value
        if values["step"] < 0 or not 0 <= values["best_step"] <= values["step"]:
            raise CheckpointError(f"{where}: step {values['step']} / best_step {values['best_step']} are inconsistent")
        return cls(**values)


# A saved state's fields and their JSON types (a float field accepts an int); best_loss may be absent.
_JSON_TYPES = {"int": (int,), "float": (float, int), "int | None": (int, type(None)),
               "float | None": (float, int, type(None))}
_STATE_TYPES: dict[str, tuple[type, ...]] = {f.name: _JSON_TYPES[f.type] for f in fields(TrainState)}
_OPTIONAL_STATE = {"best_loss"}


__all__ = ["BEST", "BODY_DIR", "BODY_FILE", "BODY_META", "CONFIG", "DATA", "ENSEMBLE", "LATEST", "LOCK_FILE", "MEMBERS",
           "METRICS", "OPTIMIZER", "POINTER", "RNG", "SELECTION_FILE", "SELECTION_RUN", "SLOTS", "STATE", "SUMMARY",
           "TRAINABLE", "CheckpointError", "RunDirBusyError", "TrainState", "append_line", "append_metrics",
           "checkpoint_paths", "clear_debris", "find_runs", "fsync_dir", "has_body", "holds_lock", "is_ensemble",
           "is_run_dir", "lock", "no_space", "read_config", "read_data", "read_ensemble", "read_metrics",
           "read_metrics_so_far", "read_selection", "read_summary", "start_clean", "summary_json", "tmp_name",
           "truncate_metrics", "write_bytes", "write_config", "write_data", "write_ensemble", "write_error",
           "write_selection", "write_summary", "write_text", "write_with", "written_by_fpt"]

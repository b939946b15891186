"""One planned run of a table cell or sweep trial: where it lives, what it runs, and running it
(reusing a finished run, resuming a stopped one). Every executor (in-process, local workers, Ray)
runs trials through ``run_planned``; the tables' grids and the run store are ``fpt.experiments.runner``'s.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fpt import rundir
from fpt.config import RunConfig, from_dict, merge
from fpt.experiments.grid import tasks_spec
from fpt.rundir import read_summary


@dataclass(frozen=True)
class Planned:
    """Where one cell's run for one seed lives, and what it runs."""

    config: RunConfig  # with init checkpoint:PATH for cells whose body is pretrained first
    run_dir: Path
    key: str
    pretrain: tuple[RunConfig, Path] | None = None  # (config, run directory) of the body pretraining
    trackers: tuple[str, ...] = ()  # live tracking of the run (fpt.tracking names: fpt sweep --log); not in the key



def pretrain_config(scale: str, task_column: str, config: RunConfig) -> RunConfig:
    """Pretraining a body on a task column: every parameter trained, the cell's body, seed and dropout."""
    base = {k: v for k, v in tasks_spec()[scale][task_column].items() if k not in ("skip", "name", "compare")}
    fields = merge({"preset": config.preset, **base}, {"body": config.body, "init": "random", "freeze": "none",
                                                       "seed": config.seed, "dropout": config.dropout})
    return from_dict(RunConfig, fields, where=f"pretraining on {task_column}")


def ensure_pretrained_body(pre: RunConfig, run_dir: Path, progress: bool) -> Path:
    """Train (or reuse) a body with every parameter trained; returns the body directory."""
    from fpt.bodies import BodySpec
    from fpt.bodies.init import save_body
    from fpt.checkpoint import has_checkpoint
    from fpt.data.readings import as_run
    from fpt.pipeline import build
    from fpt.train import fit

    body_dir = run_dir / rundir.BODY_DIR
    if rundir.has_body(run_dir):
        return body_dir
    with rundir.lock(run_dir, what="fpt reproduce pretrain"):  # held from training to the saved body
        if rundir.has_body(run_dir):  # another worker saved it while this one waited to look
            return body_dir
        resume = has_checkpoint(run_dir)
        with as_run(run_dir if resume else None):  # a stopped pretraining's data read as it started
            exp = build(pre)
        fit(exp, out=run_dir, resume=resume, progress=progress)
        save_body(exp.model.body, BodySpec(pre.body, pre.init, exp.data.spec.seq_len, pre.dropout, pre.seed), body_dir)
    return body_dir


def run_planned(planned: Planned, progress: bool = True) -> dict[str, Any]:
    """Run one planned cell (or reuse its finished run); returns its summary."""
    from fpt.data.readings import as_run
    from fpt.pipeline import build
    from fpt.run import Run
    from fpt.train import fit

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
            resume = Run(planned.run_dir).resumable(planned.config, f"run key {planned.key}")
            with as_run(planned.run_dir if resume else None):  # a stopped run's data read as it started (fpt.data.readings)
                exp = build(planned.config)
            return fit(exp, out=planned.run_dir, resume=resume, progress=progress, trackers=planned.trackers)
    except BaseException:
        if created:  # a run that failed before writing anything (no body, no data) leaves no directory behind
            with contextlib.suppress(OSError):
                planned.run_dir.rmdir()  # only when empty
        raise

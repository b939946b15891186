"""``fpt train --refit``: choose how long to train on validation, then train again on train + validation.

With a few dozen training examples (UCR's small TRAIN files), holding a fifth of them out for
validation costs the model examples it needs, and a 10-example validation split can only
choose between coarse candidates. The usual remedy, scikit-learn's ``refit=True`` after a
search, is this, with the search over the length of training:

1. ``OUT/selection`` is an ordinary run of the given config: validation selects step ``S``.
2. ``OUT`` trains a fresh model (the same config and seed) on train + validation for as many
   epochs, ``round(S * (n_train + n_val) / n_train)`` steps, evaluating once, at the end
   (config ``train_on_val``). Nothing is selected on validation there, so its validation
   figures are left out of its summary; its test figures are the reported ones.

The test split is evaluated by both runs but read by neither's choices. ``OUT/summary.json``
has a ``refit`` block with the selection run's step, validation figures and wall time (and its test
figures, for comparing the two protocols; ``test_*`` at the top are the refit model's).
``OUT`` is a run directory like any other: ``fpt predict/export/eval`` use the refit model.
Resuming (``fpt train --resume OUT``) continues whichever of the two runs was stopped.

The classic models beside a refit run (``fpt.baselines.beside_refit``, which ``fpt train --refit``
calls) follow the same protocol: hyper-parameters chosen on validation, then refitted on train +
validation before test.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fpt.config import DATA_TASK, RunConfig
from fpt.data import read_once
from fpt.errors import ConfigError, RunError, option, speaks_flags
from fpt.rundir import SELECTION_RUN


def check(config: RunConfig) -> None:
    """Why ``config`` cannot be refitted, as a ConfigError naming the fix."""
    if config.task != DATA_TASK:
        raise ConfigError(f"{option('refit')} trains again on train + validation, which needs your own data "
                          f"({option('data', 'PATH', placeholder=True)}); task {config.task!r} has its own splits: drop "
                          f"{option('refit')}")
    if config.train_on_val:
        raise ConfigError(f"{option('refit')} chooses the number of steps on validation, then sets train_on_val "
                          "itself: drop train_on_val")


def refit_steps(selected_step: int, n_train: int, n_val: int) -> int:
    """As many epochs on train + validation as the selected step made on train."""
    return max(1, round(selected_step * (n_train + n_val) / n_train))


def refit_config(config: RunConfig, selection: dict[str, Any]) -> RunConfig:
    """The second run's config, from the selection run's summary."""
    step = selection.get("selected_step")
    if not step:
        raise RunError(f"the selection run selected no step (stopped: {selection.get('stopped')}); "
                       "nothing to refit — see its metrics.jsonl")
    sizes = selection["task_info"]["split_sizes"]
    steps = refit_steps(int(step), int(sizes["train"]), int(sizes["val"]))
    # one evaluation, at the end: patience (the selection run's, recorded as it is) cannot stop it
    return dataclasses.replace(config, train_on_val=True, steps=steps, eval_every=steps, eval_subset=None)


def _block(selection: dict[str, Any], steps: int) -> dict[str, Any]:
    scores = {k: v for k, v in selection.items()
              if (k.startswith("val_") or k.startswith("test_")) and k != "val_set" and k != "test_set"
              and not k.endswith("_last")}
    sizes = selection["task_info"]["split_sizes"]
    return {"selection_run": SELECTION_RUN, "selected_step": selection["selected_step"], "steps": steps,
            "train_examples": int(sizes["train"]) + int(sizes["val"]),
            "selection_wall_seconds": selection.get("wall_seconds"),  # the refit's cost is both runs' time
            **{f"selection_{k}": v for k, v in scores.items()}}


@read_once()  # both runs read the data's files, and hash them, once: the refit trains on what the selection read
def fit(config: RunConfig, out: str | Path, resume: bool = False, progress: bool = True,
        trackers: Sequence[Any] = ()) -> dict[str, Any]:
    """Both runs (see the module's text); returns the refit run's summary, with its ``refit`` block.

    The selection run resolves what ``config`` leaves unset as a plain ``--data`` run would (its budget fitted to
    the training examples); the refit run keeps the selection run's every other field."""
    from fpt import rundir
    from fpt.checkpoint import has_checkpoint
    from fpt.pipeline import build
    from fpt.run import Run
    from fpt.train import check_joined_run, fit

    check(config)
    out = Path(out)
    chosen = out / SELECTION_RUN
    if not resume and Run(out).summary() is not None:
        raise FileExistsError(rundir.already_a_run(out))
    # progress in the command line's words to its user; a Python caller (fpt.train_run) asked for refit=True
    stage = "fpt train --refit" if speaks_flags() else "refit=True"
    with rundir.lock(out, what="fpt train --refit"):
        selection = Run(chosen).summary()
        base = config
        if selection is None:
            if progress:
                print(f"{stage}: 1/2, choosing the number of steps on validation -> {chosen}")
            exp = build(config)
            base = exp.config  # resolved: the refit keeps the selection run's every other field
            selection = fit(exp, out=chosen, resume=resume and has_checkpoint(chosen), progress=progress,
                            trackers=trackers)
        else:  # ``config`` may leave fields unset; the finished selection run resolved them
            base = Run(chosen).config()
        second = refit_config(base, selection)
        summary = Run(out).summary()
        if summary is None:
            # a selection run finished before (this is a resume): its step count was chosen on the data it recorded
            check_joined_run(base, chosen, f"the selection run {chosen} chose the refit's step count on it")
            if progress:
                print(f"{stage}: 2/2, {second.steps} steps on train + validation "
                      f"(selected step {selection['selected_step']}) -> {out}")
            summary = fit(build(second), out=out, resume=resume and has_checkpoint(out),
                              progress=progress, trackers=trackers)
        if "refit" not in summary:
            summary["refit"] = _block(selection, second.steps)
            rundir.write_summary(out, summary)
    return summary


__all__ = ["check", "fit", "refit_config", "refit_steps"]

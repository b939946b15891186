"""fpt train: train an FPT on a task and write a run directory.

Data-parallel: ``torchrun --nproc-per-node N -m fpt -- train ...`` or ``fpt train --nproc N ...``
(see fpt.distributed); live tracking: ``--log tensorboard,mlflow`` (see fpt.tracking).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from fpt.errors import ConfigError

HELP = "train a frozen pretrained transformer on a task (or --resume a stopped run)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from fpt.cli._args import add_config_arguments

    groups = add_config_arguments(p)
    run_group = groups["run and output"]
    run_group.add_argument("--out", metavar="DIR", help="run directory (default: runs/TASK-BODY-INIT-TIME)")
    run_group.add_argument("--resume", metavar="DIR", help="continue the run in DIR from its last checkpoint")
    run_group.add_argument("--quiet", action="store_true", help="no progress bar (nor progress lines)")
    run_group.add_argument("--nproc", type=int, metavar="N",
                           help="train data-parallel in N processes on this machine (torchrun's launcher; gloo on "
                                "CPU, NCCL with one GPU per process); batch_size is the global batch and must "
                                "divide by N")
    run_group.add_argument("--refit", action="store_true",
                           help="--data: choose the number of steps on validation (a first run in OUT/selection), "
                                "then train a fresh model on train + validation for as many epochs and report that "
                                "one (for small datasets; see fpt.refit); the baselines are refitted on train + "
                                "validation likewise")
    run_group.add_argument("--choose", action="append", default=[], metavar="FIELDS",
                           help="--data: a candidate to choose between, as space-separated key=value fields (e.g. "
                                "--choose 'readout=last' --choose 'readout=flatten'); repeat for each. The candidates "
                                "are cross-validated on --folds folds (default 5, fewer for small data) of the "
                                "training examples that are not test, the best mean fold validation score wins, and "
                                "the run trains the winner on the usual split (OUT/selection.json; see fpt.select)")
    tracking = p.add_argument_group("tracking")
    tracking.add_argument("--log", action="append", default=[], metavar="NAME",
                          help="live tracking: tensorboard (events in RUN/tensorboard) and/or mlflow "
                               "(MLFLOW_TRACKING_URI, else ./mlflow.db, as mlflow ui reads); repeat or join with ','. "
                               "Optional extras: pip install 'fpt[tensorboard]' / 'fpt[mlflow]'")
    tracking.add_argument("--log-every-seconds", type=float, default=30.0, metavar="S",
                          help="when stdout is not a terminal (or is one 0 columns wide), print a progress line "
                               "every S seconds (0: never; default: 30)")


def run(args: argparse.Namespace) -> int:
    """The command line's arguments handed to ``fpt.modes.train_run``, which decides the mode; errors name a setting
    read from --config FILE by its key and the file (``config_wording``)."""
    from fpt.cli._args import config_wording
    from fpt.errors import wording

    with wording(config_wording(args)):
        return _train(args)


def _train(args: argparse.Namespace) -> int:
    from fpt import tracking
    from fpt.cli._args import config_file, config_from_args, given_fields
    from fpt.data import check_present, read_config, read_once
    from fpt.modes import check_tracked, default_out, resumed_config
    from fpt.settings import train_config, train_fit

    if args.nproc is not None and args.nproc < 1:
        raise ConfigError(f"--nproc {args.nproc}: give a number of processes >= 1")
    if args.resume and args.out and Path(args.out) != Path(args.resume):
        raise ConfigError("--resume DIR continues DIR; do not also give a different --out")
    given = {**(config_file(args.config) if args.config else {}), **given_fields(args)}
    other_mode = bool(args.refit or args.choose or args.resume or args.fold is not None)
    # --choose and fit=auto: --folds is the number of cross-validation folds, not the run's own (that needs --fold)
    folds = _cross_validation_folds(args) if args.choose or train_fit(given, other_mode) == "auto" else None
    if args.resume:
        config = resumed_config(args.resume, given_fields(args))
    else:  # own data: the fit is chosen, not assumed (fpt.settings.train_fit)
        config = train_config(config_from_args(args), given, other_mode)
        if isinstance(config.data, str):  # a missing file, before torch's import (seconds) and --nproc's processes
            check_present(config.data)
    out = Path(args.resume or args.out or default_out(config))
    check_tracked(config, args.log)
    trackers: list = tracking.check(args.log)
    with read_once():
        # The data read (and refused: a mistyped --target, a bad cell) before torch's import, a few seconds sooner
        # and once before --nproc starts its processes; the run's build shares this read.
        if not args.resume:  # a finished run resumed answers without its data (which may have moved since)
            read_config(config)
        return _launch_or_train(args, config, out, trackers, folds)


def _launch_or_train(args: argparse.Namespace, config: Any, out: Path, trackers: list, folds: int | None) -> int:
    from fpt import distributed, tracking  # distributed imports torch: after the checks that need none
    from fpt.cli._args import given_fields
    from fpt.modes import (
        check_modes,
        check_new_before_launch,
        check_out,
        check_parallel_resume,
        finished_before_launch,
        train_run,
    )
    from fpt.stops import stopped_how, terminated_as_interrupt

    if args.nproc and args.nproc > 1 and distributed.launched():  # was: --nproc ignored, one process trained
        raise ConfigError(f"--nproc {args.nproc}: this process counts as started by torchrun "
                          f"(its environment has {distributed.launch_marks()}), which starts the processes itself: drop --nproc "
                          "under torchrun, or unset those variables to have fpt start them")
    if args.nproc and args.nproc > 1:
        check_modes(config, resume=bool(args.resume), choose=bool(args.choose), refit=args.refit, parallel=True)
        if not args.resume:
            check_out(out)
            check_new_before_launch(out)
        else:
            check_parallel_resume(out)
            if (done := finished_before_launch(out, config)) is not None:
                _print_summary(done, out)
                return 0
        distributed.Group(size=args.nproc).per_rank(config.batch_size, config.grad_accum)  # before starting them
        argv = distributed.strip_option(args.argv, "--nproc")
        if not args.out and not args.resume:
            argv += ["--out", str(out)]  # one name for every process
        return distributed.launch(args.nproc, argv)
    # A bar on a live terminal, plain lines elsewhere (a log, a pipe, a terminal 0 columns wide, where a bar
    # redrawn with \r shows nothing).
    bar = not args.quiet and tracking.live_terminal(sys.stdout)
    lines = args.log_every_seconds if not args.quiet and not bar else 0.0
    try:
        # SIGTERM (kill, timeout, a batch system's stop) as Ctrl-C: the same line and resumable run, trackers closed
        with terminated_as_interrupt(enabled=not distributed.launched()):
            summary = train_run(None if args.resume else config, out, resume=bool(args.resume),
                                overrides=given_fields(args), choose=args.choose, folds=folds, refit=args.refit,
                                progress=bar, trackers=trackers, progress_lines=lines,
                                say=print, verbose=not args.quiet)
    except distributed.MainFailed as exc:
        print(f"fpt train: rank {os.environ.get('RANK', '?')}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        if args.choose or args.refit or config.ensemble > 1:  # several runs under OUT: the generic line (rerun resumes)
            raise
        how, status = stopped_how(exc)
        print(f"fpt train: {how}; {_what_was_kept(out)}", file=sys.stderr)
        return status
    if summary is not None:  # None: a data-parallel rank other than the first
        _print_summary(summary, out)
    return 0


def _what_was_kept(out: Path) -> str:
    """After Ctrl-C: the step a run's latest checkpoint holds and the command that continues from it, or that there
    is none yet (Ctrl-C alone said "interrupted", and the user had to know --resume and that a checkpoint exists)."""
    from fpt import rundir
    from fpt.checkpoint import committed_step

    summary = rundir.read_summary(out) if (out / rundir.SUMMARY).is_file() else None
    if summary is not None and rundir.BASELINES_PENDING in summary:
        return (f"{out} finished training (step {summary.get('steps')}), but not its baselines "
                f"({summary[rundir.BASELINES_PENDING]}): fit them with fpt train --resume {out}")
    step = committed_step(out)
    if step is None:
        return f"no checkpoint was saved in {out} yet: the same command starts it again"
    return f"its latest checkpoint (step {step}) is in {out}: continue with fpt train --resume {out}"


def _cross_validation_folds(args: argparse.Namespace) -> int | None:
    """--folds as the number of cross-validation folds (taken out of the run's own fields)."""
    if args.folds is None:
        return None
    wanted, args.folds = args.folds, None
    try:
        return int(wanted)
    except ValueError:
        raise ConfigError(f"--folds {wanted}: give a whole number of folds >= 2 (e.g. --folds 5)") from None


def _print_summary(summary: dict, out: Path) -> None:
    scores = ("val_accuracy", "test_accuracy", "test_accuracy_last") if "val_accuracy" in summary else \
        ("val_r2", "test_r2", "test_mae", "test_r2_last")  # regression
    shown = {k: summary.get(k) for k in (*scores, "selected_step", "steps", "steps_to_target", "stopped",
                                         "wall_seconds", "train_samples_per_second")
             if k in summary and not (k == "train_samples_per_second" and summary[k] is None)}
    if "ensemble" in summary:  # figures of the members' averaged predictions; the members' own are in the summary
        shown = {"ensemble_of": summary["ensemble"]["size"], **shown}
    if "refit" in summary:  # the refit model has no validation figures: the selection run's say how it was chosen
        shown = {**shown, **{k: v for k, v in summary["refit"].items() if k.startswith("selection_val_")},
                 "selection_step": summary["refit"]["selected_step"]}
    print(json.dumps(shown))
    compared = summary.get("baselines_models")
    if compared:
        from fpt.baselines import table_rows

        for row in table_rows(summary):
            print(f"  {row['name']:<22} {row['kind']:<14} val {_num(row['val'])}  test {_num(row['test'])}  "
                  f"{_num(row['seconds'], 1)} s  ({row['chosen']})")
        for note in compared.get("notes", []):
            print(f"  note: {note}")
    print(f"run directory: {out}")
    if compared:
        print(compared["line"])
        if compared.get("language_model"):
            print(compared["language_model"]["line"])


def _num(value: object, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"

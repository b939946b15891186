"""fpt train: train an FPT on a task and write a run directory.

Data-parallel: ``torchrun --nproc-per-node N -m fpt -- train ...`` or ``fpt train --nproc N ...``
(see fpt.distributed); live tracking: ``--log tensorboard,mlflow`` (see fpt.tracking).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path

HELP = "train a frozen pretrained transformer on a task (or --resume a stopped run)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from fpt.cli._args import add_config_arguments

    add_config_arguments(p)
    p.add_argument("--out", help="run directory (default: runs/TASK-BODY-INIT-TIME)")
    p.add_argument("--resume", metavar="DIR", help="continue the run in DIR from its last checkpoint")
    p.add_argument("--quiet", action="store_true", help="no progress bar (nor progress lines)")
    p.add_argument("--nproc", type=int, metavar="N", help="train data-parallel in N processes on this machine "
                   "(torchrun's launcher; gloo on CPU, NCCL with one GPU per process); batch_size is the global "
                   "batch and must divide by N")
    p.add_argument("--refit", action="store_true",
                   help="--data: choose the number of steps on validation (a first run in OUT/selection), then train "
                        "a fresh model on train + validation for as many epochs and report that one (for small "
                        "datasets; see fpt.refit)")
    p.add_argument("--log", action="append", default=[], metavar="NAME",
                   help="live tracking: tensorboard (events in RUN/tensorboard) and/or mlflow (MLFLOW_TRACKING_URI, "
                        "else RUN/mlruns); repeat or join with ','. Optional extras: "
                        "pip install 'fpt[tensorboard]' / 'fpt[mlflow]'")
    p.add_argument("--log-every-seconds", type=float, default=30.0, metavar="S",
                   help="when stdout is not a terminal, print a progress line every S seconds (0: never; "
                        "default: 30)")


def run(args: argparse.Namespace) -> int:
    import fpt
    from fpt import distributed, rundir, tracking
    from fpt.cli._args import config_from_args, given_fields
    from fpt.paths import safe_run_name
    from fpt.refit import SELECTION
    from fpt.train import resume_config

    refit = bool(args.refit or (args.resume and (Path(args.resume) / SELECTION).is_dir()))
    if args.resume:
        if args.out and Path(args.out) != Path(args.resume):
            raise ValueError("--resume DIR continues DIR; do not also give a different --out")
        # A refit run continues from its selection run's config (the refit run's own follows from it).
        config = resume_config(Path(args.resume) / SELECTION if refit else Path(args.resume), given_fields(args))
        out = Path(args.resume)
    else:
        config = config_from_args(args)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        # The default name is built from user text (--init checkpoint:../..): one safe path component under runs/.
        name = config.task if config.data is None else f"{config.task}-{Path(config.data).stem}"
        out = Path(args.out or Path("runs") / safe_run_name(name, Path(config.body).name, config.init, stamp))
    trackers: list = tracking.check(args.log)
    if args.nproc is not None and args.nproc < 1:
        raise ValueError(f"--nproc {args.nproc}: give a number of processes >= 1")
    if refit:
        from fpt import refit as refitting

        if args.nproc and args.nproc > 1 or distributed.launched():
            raise ValueError("--refit runs in one process; drop --nproc (or torchrun)")
        summary = refitting.fit(config, out, resume=bool(args.resume), progress=not args.quiet, trackers=trackers)
        _print_summary(summary, out)
        return 0
    if args.nproc and args.nproc > 1 and not distributed.launched():
        distributed.Group(size=args.nproc).per_rank(config.batch_size, config.grad_accum)  # before starting them
        argv = distributed.strip_option(args.argv, "--nproc")
        if not args.out and not args.resume:
            argv += ["--out", str(out)]  # one name for every process
        return distributed.launch(args.nproc, argv)
    if not args.quiet and args.log_every_seconds > 0 and not sys.stdout.isatty():
        trackers.append(tracking.ProgressLine(args.log_every_seconds))
    group = distributed.init_from_env(config.device)  # under torchrun: joins the process group
    try:
        # An existing run directory is locked before the (slow) build, so that a second writer is refused at once;
        # in a data-parallel run, by rank 0 only (the only writer).
        with rundir.lock(out, what="fpt train") if out.is_dir() and group.is_main else contextlib.nullcontext():
            exp = fpt.build(config)
            summary = fpt.fit(exp, out=out, resume=bool(args.resume), progress=not args.quiet, trackers=trackers)
    except distributed.MainFailed as exc:
        print(f"fpt train: rank {group.rank}: {exc}", file=sys.stderr)
        return 2
    finally:
        distributed.shutdown()
    if not group.is_main:
        return 0
    _print_summary(summary, out)
    return 0


def _print_summary(summary: dict, out: Path) -> None:
    scores = ("val_accuracy", "test_accuracy", "test_accuracy_last") if "val_accuracy" in summary else \
        ("val_r2", "test_r2", "test_mae", "test_r2_last")  # regression
    shown = {k: summary[k] for k in (*scores, "selected_step", "steps", "steps_to_target", "stopped",
                                     "wall_seconds", "train_samples_per_second")}
    if "refit" in summary:  # the refit model has no validation figures: the selection run's say how it was chosen
        shown = {**shown, **{k: v for k, v in summary["refit"].items() if k.startswith("selection_val_")},
                 "selection_step": summary["refit"]["selected_step"]}
    print(json.dumps(shown))
    print(f"run directory: {out}")

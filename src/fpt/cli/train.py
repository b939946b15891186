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
    tracking = p.add_argument_group("tracking")
    tracking.add_argument("--log", action="append", default=[], metavar="NAME",
                          help="live tracking: tensorboard (events in RUN/tensorboard) and/or mlflow "
                               "(MLFLOW_TRACKING_URI, else ./mlflow.db, as mlflow ui reads); repeat or join with ','. "
                               "Optional extras: pip install 'fpt[tensorboard]' / 'fpt[mlflow]'")
    tracking.add_argument("--log-every-seconds", type=float, default=30.0, metavar="S",
                          help="when stdout is not a terminal (or is one 0 columns wide), print a progress line "
                               "every S seconds (0: never; default: 30)")


def run(args: argparse.Namespace) -> int:
    from fpt import distributed, rundir, tracking
    from fpt.cli._args import config_from_args, given_fields
    from fpt.config import load_yaml
    from fpt.paths import safe_run_name
    from fpt.pipeline import BUDGET_FIELDS, build
    from fpt.refit import SELECTION
    from fpt.train import fit, resume_config

    scale: tuple[str, ...] = ()
    refit = bool(args.refit or (args.resume and (Path(args.resume) / SELECTION).is_dir()))
    if args.resume:
        if args.out and Path(args.out) != Path(args.resume):
            raise ConfigError("--resume DIR continues DIR; do not also give a different --out")
        # A refit run continues from its selection run's config (the refit run's own follows from it).
        config = resume_config(Path(args.resume) / SELECTION if refit else Path(args.resume), given_fields(args))
        out = Path(args.resume)
    else:
        config = config_from_args(args)
        given = {*given_fields(args), *(load_yaml(args.config) if args.config else {})}
        scale = tuple(f for f in BUDGET_FIELDS if f not in given)  # --data: fitted to the data's size (pipeline)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        # The default name is built from user text (--init checkpoint:../..): one safe path component under runs/.
        name = config.task if config.data is None else f"{config.task}-{Path(config.data).stem}"
        out = Path(args.out or Path("runs") / safe_run_name(name, Path(config.body).name, config.init, stamp))
    trackers: list = tracking.check(args.log)
    if args.nproc is not None and args.nproc < 1:
        raise ConfigError(f"--nproc {args.nproc}: give a number of processes >= 1")
    if refit:
        from fpt import refit as refitting

        if args.nproc and args.nproc > 1 or distributed.launched():
            raise ConfigError("--refit runs in one process; drop --nproc (or torchrun)")
        from fpt.baselines import beside_refit

        summary = refitting.fit(config, out, resume=bool(args.resume), progress=not args.quiet, trackers=trackers,
                                scale_budget=scale)
        summary = beside_refit(summary, out, progress=not args.quiet, baselines=config.baselines)
        _print_summary(summary, out)
        return 0
    if args.nproc and args.nproc > 1 and not distributed.launched():
        distributed.Group(size=args.nproc).per_rank(config.batch_size, config.grad_accum)  # before starting them
        argv = distributed.strip_option(args.argv, "--nproc")
        if not args.out and not args.resume:
            argv += ["--out", str(out)]  # one name for every process
        return distributed.launch(args.nproc, argv)
    # A bar on a live terminal, plain lines elsewhere (a log, a pipe, a terminal 0 columns wide, where a bar
    # redrawn with \r shows nothing).
    bar = not args.quiet and tracking.live_terminal(sys.stdout)
    if not args.quiet and args.log_every_seconds > 0 and not bar:
        trackers.append(tracking.ProgressLine(args.log_every_seconds))
    group = distributed.init_from_env(config.device)  # under torchrun: joins the process group
    try:
        # An existing run directory is locked before the (slow) build, so that a second writer is refused at once;
        # in a data-parallel run, by rank 0 only (the only writer).
        with rundir.lock(out, what="fpt train") if out.is_dir() and group.is_main else contextlib.nullcontext():
            exp = build(config, scale_budget=scale)
            summary = fit(exp, out=out, resume=bool(args.resume), progress=bar, trackers=trackers)
        if group.is_main and not distributed.launched():  # a data-parallel run's classic models: not yet
            from fpt.baselines import beside_run

            summary = beside_run(exp, summary, out, progress=bar)
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


def _num(value: object, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"

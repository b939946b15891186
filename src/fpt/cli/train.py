"""fpt train: train an FPT on a task and write a run directory."""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from pathlib import Path

HELP = "train a frozen pretrained transformer on a task (or --resume a stopped run)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from fpt.cli._args import add_config_arguments

    add_config_arguments(p)
    p.add_argument("--out", help="run directory (default: runs/TASK-BODY-INIT-TIME)")
    p.add_argument("--resume", metavar="DIR", help="continue the run in DIR from its last checkpoint")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    import fpt
    from fpt import rundir
    from fpt.cli._args import config_from_args, given_fields
    from fpt.paths import safe_run_name
    from fpt.train import resume_config

    if args.resume:
        if args.out and Path(args.out) != Path(args.resume):
            raise ValueError("--resume DIR continues DIR; do not also give a different --out")
        config = resume_config(Path(args.resume), given_fields(args))
        out = Path(args.resume)
    else:
        config = config_from_args(args)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        # The default name is built from user text (--init checkpoint:../..): one safe path component under runs/.
        name = config.task if config.data is None else f"{config.task}-{Path(config.data).stem}"
        out = Path(args.out or Path("runs") / safe_run_name(name, Path(config.body).name, config.init, stamp))
    # An existing run directory is locked before the (slow) build, so that a second writer is refused at once.
    with rundir.lock(out, what="fpt train") if out.is_dir() else contextlib.nullcontext():
        exp = fpt.build(config)
        summary = fpt.fit(exp, out=out, resume=bool(args.resume), progress=not args.quiet)
    scores = ("val_accuracy", "test_accuracy", "test_accuracy_last") if "val_accuracy" in summary else \
        ("val_r2", "test_r2", "test_mae", "test_r2_last")  # regression
    print(json.dumps({k: summary[k] for k in (*scores, "selected_step", "steps", "steps_to_target", "stopped",
                                               "wall_seconds", "train_samples_per_second")}))
    print(f"run directory: {out}")
    return 0

"""fpt eval: re-evaluate a run's checkpoint on every held-out set."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HELP = "re-evaluate a run directory's checkpoint on its held-out sets"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", help="a directory written by fpt train")
    p.add_argument("--which", choices=["best", "checkpoint"], default="best",
                   help="best: the validation-selected parameters (what summary.json reports); checkpoint: the latest")
    p.add_argument("--device", default=None, help="override the device (auto, cpu, cuda)")


def run(args: argparse.Namespace) -> int:
    import fpt
    from fpt.checkpoint import find, load_trainable
    from fpt.train import resume_config

    overrides = {"device": args.device} if args.device else None
    config = resume_config(Path(args.run_dir), overrides)
    exp = fpt.build(config)
    load_trainable(find(Path(args.run_dir), args.which), exp.model, exp.body_fingerprint)
    print(json.dumps(fpt.evaluate(exp), indent=1))
    return 0

"""fpt eval: re-evaluate a run's checkpoint on every held-out set."""

from __future__ import annotations

import argparse
import json

HELP = "re-evaluate a run directory's checkpoint on its held-out sets"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", help="a directory written by fpt train")
    p.add_argument("--which", choices=["best", "checkpoint"], default="best",
                   help="best: the validation-selected parameters (what summary.json reports); checkpoint: the latest")
    p.add_argument("--device", default=None, help="override the device (auto, cpu, cuda)")


def run(args: argparse.Namespace) -> int:
    from fpt.checkpoint import load_trainable
    from fpt.pipeline import build
    from fpt.run import Run
    from fpt.train import evaluate

    run = Run(args.run_dir)
    config = run.config({"device": args.device} if args.device else None)
    exp = build(config)
    load_trainable(run.checkpoint(args.which), exp.model, exp.body_fingerprint)
    print(json.dumps(evaluate(exp), indent=1))
    return 0

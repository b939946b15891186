"""fpt eval: re-evaluate a run's checkpoint on every held-out set."""

from __future__ import annotations

import argparse
import json

HELP = "re-evaluate a run directory's checkpoint on its held-out sets"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from fpt.cli._args import add_which_argument

    p.add_argument("run_dir", help="a directory written by fpt train")
    add_which_argument(p)
    p.add_argument("--device", default=None, help="override the device (auto, cpu, cuda)")


def run(args: argparse.Namespace) -> int:
    from fpt.run import Run
    from fpt.train import evaluate

    exp = Run(args.run_dir).experiment(args.which, args.device)
    print(json.dumps(evaluate(exp), indent=1))
    return 0

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

    run = Run(args.run_dir)
    exp = run.experiment(args.which, args.device)
    scores: dict = evaluate(exp)
    learnt = run.fitted_sets()
    if learnt:  # a figure on examples the model was fitted on is a training figure: printed as held out, it misleads
        scores = {k: None if any(k.startswith(f"{s}_") for s in learnt) else v for k, v in scores.items()}
        scores["note"] = (f"{', '.join(f'{s}_*' for s in learnt)}: null, the model was fitted on those examples (a "
                          "closed-form fit on train + validation, or --refit's model); summary.json holds the run's "
                          "estimate")
    print(json.dumps(scores, indent=1))
    return 0

"""fpt predict: a trained model's predictions for new inputs (a run directory or an fpt export)."""

from __future__ import annotations

import argparse
import json

HELP = "predict with a trained run or export on new inputs (the training formats); scores them if they hold targets"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", metavar="RUN_OR_EXPORT", help="a run directory (fpt train) or an export (fpt export)")
    p.add_argument("inputs", metavar="INPUT",
                   help="examples in a format --data reads: a CSV/TSV/JSON lines/Parquet table, a folder of images "
                        "(DIR/*.png or DIR/<class>/*.png), a UCR/UEA .ts/.tsv file, or an .npz (X, optionally y); "
                        "a paper task's model: an .npz of its tokens X (optionally y, lengths)")
    p.add_argument("--out", default="predictions.csv",
                   help="CSV to write: prediction (and proba_<class>) per example (default: predictions.csv)")
    p.add_argument("--which", choices=["best", "checkpoint"], default=None,
                   help="run directories: best (the validation-selected parameters; the default when the run has "
                        "them) or checkpoint (the latest)")
    p.add_argument("--device", default=None, help="override the device (auto, cpu, cuda)")
    p.add_argument("--allow-unseen", action="store_true",
                   help="tables: map categories never seen in training to the shared unknown slot instead of "
                        "stopping with an error")


def run(args: argparse.Namespace) -> int:
    from fpt.predictor import load

    model = load(args.model, which=args.which, device=args.device)
    result = model.predict_file(args.inputs, allow_unseen=args.allow_unseen)
    result.to_csv(args.out)
    # One JSON line (as fpt train prints): the count, and the metrics when the inputs held their targets.
    print(json.dumps({"rows": result.rows, **(result.metrics or {})}))
    print(f"predictions: {args.out}")
    return 0

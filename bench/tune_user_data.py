"""Choose --data options on validation only: each candidate trains on a tuning split of the training data.

    python bench/tune_user_data.py data/user/GunPoint/GunPoint_TRAIN.ts --name gunpoint \\
        --candidate "series_patch=10" --candidate "series_patch=10 series_stride=5" ... \\
        --out docs/results/data/tuning.jsonl

Every candidate (``key=value`` config fields) trains with ``--val-fraction 0.4 --split-seed 1`` (``--fraction``,
``--split-seed``): a larger validation hold-out of the training data than the final run's, so that candidates
differ on it, and never the test split. The candidates are ranked by validation accuracy at the selected step
(regression: validation R²), ties by the lower validation loss there; the first best wins. Only validation
figures are printed and written (one JSON line per candidate, appended to ``--out``): the test set of these
tuning runs is not looked at. The final run is then ``fpt train`` with the winner's options and the default
split, whose test figure is the one reported.
"""

from __future__ import annotations

import argparse
import json
import time


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("data")
    p.add_argument("--name", required=True)
    p.add_argument("--candidate", action="append", required=True, help="space-separated key=value config fields")
    p.add_argument("--fraction", type=float, default=0.4, help="validation share of the training data while tuning")
    p.add_argument("--split-seed", type=int, default=1)
    p.add_argument("--round", type=int, default=1, help="tag of this tuning round in the output lines")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    import fpt
    from fpt.config import RunConfig, from_dict, parse_overrides

    rows = []
    for text in args.candidate:
        fields = parse_overrides(text.split())
        config = from_dict(RunConfig, {"data": args.data, "val_fraction": args.fraction, "split_seed": args.split_seed,
                                       **fields}, where=f"candidate {text!r}")
        started = time.perf_counter()
        summary = fpt.fit(fpt.build(config), progress=False)
        metric = "val_accuracy" if "val_accuracy" in summary else "val_r2"
        val_loss = summary["eval"]["val_loss"]  # at the selected step
        row = {"dataset": args.name, "round": args.round, "data": args.data, "candidate": text, "tuning_split":
               {"val_fraction": args.fraction, "split_seed": args.split_seed, **summary["task_info"]["split_sizes"]},
               metric: summary[metric], "val_loss": val_loss, "selected_step": summary["selected_step"],
               "steps": summary["steps"], "stopped": summary["stopped"]}
        rows.append(row)
        print(json.dumps(row), f"({time.perf_counter() - started:.0f}s)", flush=True)
        if args.out:
            with open(args.out, "a") as f:
                f.write(json.dumps(row) + "\n")
    metric = "val_accuracy" if "val_accuracy" in rows[0] else "val_r2"
    best = max(rows, key=lambda r: (r[metric], -r["val_loss"]))
    print(f"chosen on validation: {best['candidate']!r}")
    if args.out:
        with open(args.out, "a") as f:
            rule = f"highest {metric}, then lowest val_loss, at the selected step, on the tuning split"
            f.write(json.dumps({"dataset": args.name, "round": args.round, "chosen": best["candidate"], "rule": rule}) + "\n")


if __name__ == "__main__":
    main()

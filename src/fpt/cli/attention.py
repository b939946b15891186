"""fpt attention: attention maps of a trained run and how much attention lands where the task needs it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HELP = "attention heatmaps (per head and averaged) of one block of a trained run, with a task-aware score"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from fpt.cli._args import add_which_argument
    from fpt.rundir import LATEST

    p.add_argument("run_dir", help="a directory written by fpt train")
    p.add_argument("--layer", type=int, default=0, help="block whose attention to read, from 0 (default: 0)")
    p.add_argument("--examples", type=int, default=16, help="held-out examples to average over (default: 16)")
    add_which_argument(p, default=LATEST)  # RUN_DIR/attention/WHICH-layerL names the slot
    p.add_argument("--out", default=None, help="output directory (default: RUN_DIR/attention/WHICH-layerL)")
    p.add_argument("--device", default=None, help="override the device (auto, cpu, cuda)")


def run(args: argparse.Namespace) -> int:
    from fpt.analysis.attention import analyse_run, default_out, write

    if not args.out:  # before the maps are computed
        from fpt.outputs import check_writable

        check_writable(args.run_dir, "fpt attention writes its maps without --out", "give --out DIR elsewhere")
    result = analyse_run(Path(args.run_dir), args.layer, args.examples, args.which, args.device)
    out = Path(args.out) if args.out else default_out(Path(args.run_dir), args.which, args.layer)
    doc = write(result, out)
    if doc["headline"] is not None:
        h = doc["headline"]
        print(f"{doc['what']}: {h['mean']:.3f} (uniform attention would give {h['uniform_baseline']:.3f})")
        print("per head: " + " ".join(f"{v:.3f}" for v in h["per_head"]))
    else:
        print(f"task {doc['task']!r} names no positions that matter, so there is no score; maps written")
    print(json.dumps({k: v["mean"] for k, v in doc["scores"].items()}))
    print(f"attention maps: {out}")
    return 0

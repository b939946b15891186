"""fpt plot: learning curves of one or more runs, overlaid."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "plot accuracy and loss vs steps and wall time for runs (overlaid); optionally TensorBoard event files"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dirs", nargs="+", help="run directories written by fpt train (or folders holding them)")
    p.add_argument("--out", default=None, help="PNG file (default: RUN_DIR/curves.png for one run, else curves.png)")
    p.add_argument("--title", default="", help="figure title (default: a line saying which curves are training and "
                                                   "which held-out)")
    p.add_argument("--force", action="store_true", help="replace --out if it exists and fpt did not write it")
    p.add_argument("--tensorboard", nargs="?", const="", default=None, metavar="LOGDIR",
                   help="also write TensorBoard event files: to LOGDIR/<run name>, or RUN_DIR/tensorboard if no "
                        "LOGDIR is given (needs: pip install tensorboard)")


def run(args: argparse.Namespace) -> int:
    from fpt.presentation.curves import TensorBoardUnavailable, plot_curves, write_tensorboard
    from fpt.rundir import find_runs

    runs = []
    for given in map(Path, args.run_dirs):
        found = find_runs(given)
        if not found:
            raise FileNotFoundError(f"{given} holds no run directory (config.yaml with metrics.jsonl)")
        runs += found
    out = Path(args.out) if args.out else (runs[0] / "curves.png" if len(runs) == 1 else Path("curves.png"))
    from fpt.outputs import check_file, check_writable, starts_with
    from fpt.presentation.curves import SOFTWARE

    if not args.out:
        check_writable(out.parent, "fpt plot writes curves.png without --out",
                       f"give --out FILE elsewhere (e.g. --out {out.parent.resolve().name}-curves.png)")
    if args.tensorboard == "":  # RUN_DIR/tensorboard of each run
        for run_dir in runs:
            check_writable(run_dir, "--tensorboard without a LOGDIR writes its events",
                           "give it a folder elsewhere: --tensorboard LOGDIR")
    check_file(out, force=args.force, fpt_wrote=starts_with(SOFTWARE.encode()))
    if args.tensorboard:  # before curves.png is written: a LOGDIR that is a file is refused with nothing written
        from fpt.tracking import check_log_dir

        check_log_dir(Path(args.tensorboard), "--tensorboard")
    plotted = plot_curves(runs, out, args.title)
    print(f"curves of {len(plotted)} run(s): {out}")
    if args.tensorboard is not None:
        try:
            logs = write_tensorboard(runs, Path(args.tensorboard) if args.tensorboard else None)
        except TensorBoardUnavailable as exc:
            print(f"fpt plot: error: {exc}", file=sys.stderr)
            return 2
        print(f"TensorBoard event files: {', '.join(map(str, logs))} (view with: tensorboard --logdir "
              f"{args.tensorboard or logs[0].parent})")
    return 0

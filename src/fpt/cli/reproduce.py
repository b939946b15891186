"""fpt reproduce: run a paper table's grid and write report.md and results.csv."""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import sys
from pathlib import Path

HELP = "run one of the paper's tables (resumable) and compare with the paper; --dry-run lists the runs"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("table", help="table1 ... table21, or 'list'")
    p.add_argument("--scale", default="quick", choices=["quick", "paper"],
                   help="quick: CPU-sized stand-ins; paper: the full protocol (GPU, hub, datasets)")
    p.add_argument("--out", default=None, help="results directory (default: results/TABLE-SCALE)")
    p.add_argument("--dry-run", action="store_true", help="list the runs and their parameter counts; train nothing")
    p.add_argument("--only", default=None, help="run only cells whose 'row/column' contains this text")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def _counts(config, cache: dict) -> str:
    """Trainable / total parameters, counted on the meta device (no memory, no weights)."""
    import torch

    from fpt.config import from_dict
    from fpt.experiment import build_model
    from fpt.freeze import count_parameters
    from fpt.tasks import TASKS, build_task
    from fpt.tasks.base import DataSource

    from_dict(TASKS.get(config.task).Options, config.task_options, where=f"task {config.task!r} options")
    # A dry run never writes data: generation is left to the real run.
    options = {**config.task_options, "generate": False} if "generate" in config.task_options else config.task_options
    try:
        spec = build_task(config.task, options, config.seed,
                          DataSource(Path(config.data_dir), False)).spec
    except (OSError, ValueError) as exc:  # missing data is reported, not fatal, in a dry run
        return f"counts need the task's data ({str(exc).splitlines()[0][:90]})"
    key = (config.body, config.layers, config.freeze, spec)
    if key not in cache:
        arch = dataclasses.replace(config, init="random")  # same architecture as pretrained/stats/checkpoint
        try:
            with torch.device("meta"):
                counts = count_parameters(build_model(arch, spec))
            trainable = sum(c.trainable for c in counts.values())
            total = sum(c.total for c in counts.values())
            cache[key] = f"{trainable:,} trained of {total:,}"
        except (OSError, RuntimeError) as exc:  # e.g. a hub id whose config is not cached
            cache[key] = f"counts need the body's config ({str(exc).splitlines()[0][:90]})"
    return cache[key]


def run(args: argparse.Namespace) -> int:
    from fpt.experiments import expand, table_names
    from fpt.experiments.runner import cell_dir, resolved_config, run_table
    from fpt.report import write_report

    if args.table == "list":
        for name in table_names():
            print(name)
        return 0
    table = expand(args.table, args.scale)
    out = Path(args.out or f"results/{args.table}-{args.scale}")
    if args.dry_run:
        if args.only:
            table = dataclasses.replace(table, cells=[c for c in table.cells if args.only in f"{c.row}/{c.column}"])
        cache: dict = {}
        print(f"{table.title} [{args.scale}] -> {out}")
        for cell in table.cells:
            name = f"{cell.row}/{cell.column}"
            if cell.skip:
                print(f"  skip {name:<48} {cell.skip}")
                continue
            done = (cell_dir(out, cell) / "summary.json").is_file()
            c = resolved_config(table, cell, out, progress=False, create=False)
            pre = f" after pretraining on {cell.pretrain_task}" if cell.pretrain_task else ""
            print(f"  {'done' if done else 'run '} {name:<48} task={c.task} {c.task_options or ''} body={c.body} "
                  f"init={c.init}{pre} freeze={c.freeze}{f' layers={c.layers}' if c.layers else ''} "
                  f"steps={c.steps} | {_counts(c, cache)}")
        return 0
    results = run_table(table, out, progress=not args.quiet, only=args.only)
    command = "fpt " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[0].endswith("fpt") else \
        f"fpt reproduce {args.table} --scale {args.scale}"
    rows = write_report(table, results, out, command)
    done = sum(r["status"] == "done" for r in rows)
    print(f"{done} of {len(rows)} cells done; report: {out / 'report.md'}, {out / 'results.csv'}")
    return 0

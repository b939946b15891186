"""fpt data: describe a task's data before training on it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HELP = "print a task's statistics: split sizes, tokens per example, truncation/drops, class balance"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("task", help="a registered task (fpt list)")
    p.add_argument("options", nargs="*", metavar="task.key=value", help="task options, e.g. task.tokenisation=lra")
    p.add_argument("--data-dir", default="data", help="where the task's files are (default: data)")
    p.add_argument("--download", action="store_true", help="download missing files where the task knows how")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    _options_anywhere(p)


def _options_anywhere(p: argparse.ArgumentParser) -> None:
    """Let task options follow flags too (``fpt data listops --data-dir D task.tokenisation=lra``), as
    ``fpt train`` takes them: argparse fills the positionals from their first run of words only."""
    parse = p.parse_known_args

    def parse_known_args(args=None, namespace=None):  # noqa: ANN001, ANN202 (argparse's signature)
        ns, extras = parse(args, namespace)
        words = [e for e in extras if not e.startswith("-")]
        if words and hasattr(ns, "options"):
            ns.options = [*(ns.options or []), *words]
            extras = [e for e in extras if e.startswith("-")]
        return ns, extras

    p.parse_known_args = parse_known_args  # type: ignore[method-assign]


def run(args: argparse.Namespace) -> int:
    from fpt.config import parse_overrides
    from fpt.data_stats import task_stats
    from fpt.tasks import build_task
    from fpt.tasks.base import DataSource

    options = parse_overrides([o if o.startswith("task.") else f"task.{o}" for o in args.options])
    data = build_task(args.task, options.get("task_options", {}), args.seed, DataSource(Path(args.data_dir), args.download))
    stats = task_stats(data)
    if args.json:
        print(json.dumps(stats, indent=1, default=str))
        return 0
    print(f"task {args.task}: {stats['spec']}")
    for name, s in stats["splits"].items():
        t = s["tokens"]
        top = sorted(s["class_balance"].items(), key=lambda kv: -kv[1])[:10]
        balance = ", ".join(f"{c}: {100 * share:.1f}%" for c, share in top)
        more = " ..." if len(s["class_balance"]) > 10 else ""
        print(f"  {name:<26} {str(s['examples']):>22} examples  tokens min/median/max "
              f"{t['min']}/{t['median']:g}/{t['max']}  classes: {balance}{more}")
    for key, value in stats["info"].items():
        if key != "vocab":
            print(f"  {key}: {value}")
    return 0

"""The same table cells run twice, side by side: one store against another (e.g. fp32 against bf16).

    python bench/side_by_side.py --a "CPU fp32" docs/results/quick/runs \\
        --b "CPU bf16" docs/results/precision/cpu-bf16 --out docs/results/precision/cpu-bf16.md

A cell is a run's config.yaml without the fields that may differ between the two sides (``seed``,
``precision``, ``device``, ``compile``): runs of one cell on one side are its seeds. Only cells with finished
runs on both sides are compared, on the test accuracy at the selected step (x100, as the tables show it).
Each compared cell gets both sides' mean ± std (n), the difference b - a, Welch's t-test p (unequal variances,
on the seeds' mean, std and n; none with n < 2 on a side), and whether the difference is within the seeds'
spread: |b - a| <= 2 x the larger of the two sides' std (with both stds 0, only an equal mean is). A cell
where any run collapsed or sat at chance (``fpt.convergence.run_health``) is marked: its figure is the
majority class, whatever the precision.

Writes ``OUT`` (markdown) and ``OUT`` with ``.jsonl`` (one line per cell); prints the markdown.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from fpt.errors import FptError

VARYING = ("seed", "precision", "device", "compile")  # what the two sides may differ in, besides the code
SPREAD = 2.0  # "within the seeds' spread": |difference| <= SPREAD x the larger std


@functools.cache
def _field_defaults() -> dict[str, Any]:
    import dataclasses

    from fpt.config import RunConfig

    return {f.name: f.default for f in dataclasses.fields(RunConfig) if f.default is not dataclasses.MISSING}


def cell_key(config: dict[str, Any]) -> str:
    """The config as every RunConfig field's value (a field added since the run was written: its default, which
    is what that run had), without the fields the sides may differ in."""
    full = {**_field_defaults(), **config}
    return json.dumps({k: v for k, v in full.items() if k not in VARYING}, sort_keys=True, default=str)


def read_store(root: Path) -> dict[str, list[dict[str, Any]]]:
    """cell key -> the finished runs under ``root`` (any folder holding config.yaml and summary.json)."""
    from fpt.convergence import run_health
    from fpt.rundir import read_config, read_summary

    cells: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for summary_path in sorted(root.glob("**/summary.json")):
        run = summary_path.parent
        if not (run / "config.yaml").is_file():
            continue
        config = read_config(run)  # fpt's strict readers: a tampered file is one line naming it
        summary = read_summary(run)
        if not summary or summary.get("test_accuracy") is None:
            continue
        flags = run_health(run, summary)
        cells[cell_key(config)].append({"run": str(run), "seed": config.get("seed"), "config": config,
                                        "test": 100 * float(summary["test_accuracy"]),
                                        "collapsed": bool(flags.get("collapsed")),
                                        "at_chance": bool(flags.get("at_chance")),
                                        "commit": (summary.get("environment") or {}).get("commit"),
                                        "device": summary.get("device")})
    return cells


def describe(config: dict[str, Any]) -> str:
    """A cell's name: task (and its tokens), body, init, freeze and any set lr / layers."""
    options = config.get("task_options") or {}
    task = config["task"] + (f"-{options['tokens']}" if "tokens" in options else "")
    parts = [task, str(config.get("body")), str(config.get("init")), f"freeze={config.get('freeze')}"]
    parts += [f"{k}={config[k]}" for k in ("lr", "layers") if config.get(k) is not None]
    return " ".join(parts)


def _stats(values: list[float]) -> tuple[float, float | None]:
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else None


def compare(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> dict[str, Any]:
    from scipy.stats import ttest_ind_from_stats

    (ma, sa), (mb, sb) = _stats([r["test"] for r in a]), _stats([r["test"] for r in b])
    p = None
    if sa is not None and sb is not None:
        if sa == 0 and sb == 0:
            p = 1.0 if ma == mb else 0.0
        else:
            p = float(ttest_ind_from_stats(mb, sb, len(b), ma, sa, len(a), equal_var=False).pvalue)
    spread = max(sa or 0.0, sb or 0.0)
    within = None if sa is None or sb is None else abs(mb - ma) <= SPREAD * spread
    flagged = sorted({("collapsed" if r["collapsed"] else "at chance") for r in a + b if r["collapsed"] or r["at_chance"]})
    return {"cell": describe(a[0]["config"]), "a_mean": ma, "a_std": sa, "a_n": len(a), "b_mean": mb, "b_std": sb,
            "b_n": len(b), "difference": mb - ma, "welch_p": p, "within_spread": within, "flags": flagged,
            "a_seeds": sorted(r["seed"] for r in a), "b_seeds": sorted(r["seed"] for r in b),
            "paired": _paired(a, b)}


def _paired(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The seeds run on both sides, each with its two figures (one run per seed a side: the first found)."""
    by_a, by_b = {}, {}
    for side, runs in ((by_a, a), (by_b, b)):
        for r in runs:
            side.setdefault(r["seed"], r)
    return [{"seed": s, "a": by_a[s]["test"], "b": by_b[s]["test"],
             "healthy": not any(r["collapsed"] or r["at_chance"] for r in (by_a[s], by_b[s]))}
            for s in sorted(by_a.keys() & by_b.keys(), key=str)]


def _figure(mean: float, std: float | None, n: int) -> str:
    return f"{mean:.2f}" + (f" ± {std:.2f}" if std is not None else "") + f" (n={n})"


def table(rows: list[dict[str, Any]], a: str, b: str) -> str:
    lines = [f"| cell | {a} | {b} | {b} - {a} | Welch p | within the seeds' spread | flags |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        p = "-" if r["welch_p"] is None else f"{r['welch_p']:.2f}"
        within = {None: "- (n < 2)", True: "yes", False: "**no**"}[r["within_spread"]]
        lines.append(f"| {r['cell']} | {_figure(r['a_mean'], r['a_std'], r['a_n'])} | "
                     f"{_figure(r['b_mean'], r['b_std'], r['b_n'])} | {r['difference']:+.2f} | {p} | {within} | "
                     f"{', '.join(r['flags']) or '-'} |")
    decided = [r for r in rows if r["within_spread"] is not None]
    healthy = [r for r in decided if not r["flags"]]
    lines += ["", f"{len(rows)} cells on both sides; {len(decided)} with n >= 2 on both; within the seeds' spread: "
              f"{sum(r['within_spread'] for r in decided)} of {len(decided)} "
              f"({sum(r['within_spread'] for r in healthy)} of {len(healthy)} cells with no collapsed or at-chance "
              f"run); Welch p < 0.05: {sum((r['welch_p'] or 1) < 0.05 for r in decided)} of {len(decided)}."]
    gaps = sorted(abs(pair["b"] - pair["a"]) for r in rows for pair in r["paired"] if pair["healthy"])
    if gaps:
        lines.append(f"The same seed on both sides, runs neither collapsed nor at chance: {len(gaps)} pairs, |{b} - {a}| "
                     f"median {statistics.median(gaps):.2f}, 90th percentile {gaps[int(0.9 * (len(gaps) - 1))]:.2f}, "
                     f"largest {gaps[-1]:.2f} points; {sum(g == 0 for g in gaps)} of them equal.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--a", nargs=2, required=True, metavar=("NAME", "STORE"), help="the reference side")
    p.add_argument("--b", nargs=2, required=True, metavar=("NAME", "STORE"), help="the side compared with it")
    p.add_argument("--out", required=True, type=Path, help="markdown file to write (and OUT.jsonl beside it)")
    p.add_argument("--force", action="store_true", help="replace --out (and OUT.jsonl) if they exist and are not "
                                                        "this script's (never a run's own files)")
    args = p.parse_args(argv)
    try:
        return _main(args)
    except FptError as exc:
        print(f"side_by_side.py: error: {exc}", file=sys.stderr)
        return 2


def _main(args: argparse.Namespace) -> int:
    from fpt.outputs import check_file, starts_with, write_text

    ours = starts_with(b"cell by cell", 400)
    for path in (args.out, args.out.with_suffix(".jsonl")):  # before reading the stores
        check_file(path, force=args.force, fpt_wrote=lambda p: ours(args.out))
    (name_a, store_a), (name_b, store_b) = args.a, args.b
    for store in (store_a, store_b):
        if not Path(store).is_dir():
            print(f"side_by_side.py: {store} is not a folder of runs; give a run store (e.g. docs/results/quick/runs)",
                  file=sys.stderr)
            return 2
    cells_a, cells_b = read_store(Path(store_a)), read_store(Path(store_b))
    rows = sorted((compare(cells_a[k], cells_b[k]) for k in cells_a.keys() & cells_b.keys()),
                  key=lambda r: r["cell"])
    if not rows:
        print(f"side_by_side.py: no cell has finished runs in both {store_a} and {store_b}", file=sys.stderr)
        return 2
    text = table(rows, name_a, name_b)
    command = " ".join(["python bench/side_by_side.py", "--a", repr(name_a), store_a, "--b", repr(name_b), store_b,
                        "--out", str(args.out)])
    write_text(args.out.with_suffix(".jsonl"), "".join(json.dumps(r) + "\n" for r in rows), force=True)
    write_text(args.out, f"# {name_a} against {name_b}, cell by cell\n\n`{command}`\n\n{text}\n", force=True)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

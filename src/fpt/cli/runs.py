"""fpt runs: a table of the runs under a directory (state, config, metrics), sortable and filterable."""

from __future__ import annotations

import argparse
import csv
import json
import sys

from fpt.errors import ConfigError
from fpt.presentation.listing import STATES

HELP = f"list the runs under a directory: state ({'/'.join(STATES)}), config, metrics"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", help="a run directory or a folder holding runs (searched recursively)")
    p.add_argument("--sort", default=None, help="sort by this field (e.g. val_accuracy, wall_seconds, state)")
    p.add_argument("--desc", action="store_true", help="sort descending")
    p.add_argument("--filter", action="append", default=[], metavar="EXPR",
                   help="keep rows where EXPR holds: FIELD=VALUE, FIELD!=VALUE, FIELD>=N, FIELD<=N, FIELD>N, "
                        "FIELD<N (repeatable), e.g. --filter state=finished --filter 'val_accuracy>=0.9'")
    p.add_argument("--columns", default=None, help="comma-separated fields to show (default: those with a value)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--csv", action="store_true", help="write CSV to stdout")
    fmt.add_argument("--json", action="store_true", help="write a JSON list to stdout")


def _finite(value: object) -> object:
    import math

    return None if isinstance(value, float) and not math.isfinite(value) else value


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def run(args: argparse.Namespace) -> int:
    from fpt.presentation.listing import COLUMNS, list_runs, select

    rows = select(list_runs(args.dir), args.filter, args.sort, args.desc)
    for row in rows:
        if row.get("error"):  # listed as unreadable; what is damaged, once, beside the table
            print(f"fpt runs: warning: {row['run']}: {row['error']}", file=sys.stderr)
    if args.columns:
        columns = [c.strip() for c in args.columns.split(",") if c.strip()]
        unknown = [c for c in columns if c not in COLUMNS]
        if unknown:
            raise ConfigError(f"--columns: unknown field(s) {', '.join(unknown)}; fields: {', '.join(COLUMNS)}")
    else:
        columns = [c for c in COLUMNS if c in ("run", "state") or any(r.get(c) is not None for r in rows)]
    if args.json:
        # strict JSON: a NaN or infinite figure (a diverged run) is null, as summary.json writes it
        json.dump([{c: _finite(r.get(c)) for c in columns} for r in rows], sys.stdout, indent=1, allow_nan=False)
        print()
        return 0
    if args.csv:
        writer = csv.DictWriter(sys.stdout, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return 0
    if not rows:
        print(f"no runs under {args.dir}" + (" match the filters" if args.filter else ""))
        return 0
    table = [columns] + [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(columns))]
    for n, line in enumerate(table):
        print("  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))
    counts = {s: sum(r["state"] == s for r in rows) for s in STATES}
    print(f"{len(rows)} run(s): " + ", ".join(f"{n} {s}" for s, n in counts.items() if n))
    return 0

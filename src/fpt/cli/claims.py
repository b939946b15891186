"""fpt claims: the paper's qualitative claims checked against reproduced tables (claims.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "check the paper's qualitative claims against fpt reproduce all results; writes claims.md"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--results", required=True, help="an fpt reproduce all output (RESULTS/tableN/results.csv)")
    p.add_argument("--out", default=None, help="where to write (default: RESULTS/claims.md)")
    p.add_argument("--commit", default=None,
                   help="the commit the verdicts' runs must come from (default: RESULTS/COMMIT when there is one; "
                        "without either, a verdict's cells must all share one commit)")
    p.add_argument("--force", action="store_true", help="replace an --out file that fpt claims did not write")


def run(args: argparse.Namespace) -> int:
    from fpt.errors import ConfigError
    from fpt.presentation.claims import evaluate
    from fpt.presentation.claims_md import write_claims

    root = Path(args.results)
    if not root.is_dir():
        raise ConfigError(f"--results {root} is not a directory: give an fpt reproduce all output")
    path = write_claims(root, Path(args.out) if args.out else None, commit=args.commit, force=args.force)
    for item in evaluate(root, args.commit):
        print(f"{item['verdict']:<14} tuned lr: {item['tuned_verdict']:<14} {item['claim'].text}")
    print(f"claims: {path}")
    return 0

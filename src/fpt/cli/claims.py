"""fpt claims: the paper's qualitative claims checked against reproduced tables (claims.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "check the paper's qualitative claims against fpt reproduce all results; writes claims.md"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--results", required=True, help="an fpt reproduce all output (RESULTS/tableN/results.csv)")
    p.add_argument("--out", default=None, help="where to write (default: RESULTS/claims.md)")


def run(args: argparse.Namespace) -> int:
    from fpt.presentation.claims import evaluate, write_claims

    root = Path(args.results)
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is not a directory: give an fpt reproduce all output")
    path = write_claims(root, Path(args.out) if args.out else None)
    for item in evaluate(root):
        print(f"{item['verdict']:<14} tuned lr: {item['tuned_verdict']:<14} {item['claim'].text}"
              + ("" if item["clean"] else f" [provenance: {item['provenance']}]"))
    print(f"claims: {path}")
    return 0

"""fpt listops-generate: write ListOps TSV files as Long Range Arena's generator does."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from fpt.errors import ConfigError

HELP = "generate ListOps basic_{train,val,test}.tsv (Long Range Arena's spec) into a directory"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="data/listops", help="directory for the files (default: data/listops)")
    p.add_argument("--train", type=int, default=96_000, help="training examples (default 96000)")
    p.add_argument("--val", type=int, default=2_000, help="validation examples (default 2000)")
    p.add_argument("--test", type=int, default=2_000, help="test examples (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    p.add_argument("--min-len", type=int, default=500, help="keep examples longer than this (default 500)")
    p.add_argument("--max-len", type=int, default=2000, help="keep examples shorter than this (default 2000)")
    p.add_argument("--force", action="store_true", help="overwrite existing files")


def run(args: argparse.Namespace) -> int:
    from fpt.data import listops as lo

    out = Path(args.out)
    counts = {"train": args.train, "val": args.val, "test": args.test}
    if min(counts.values()) < 1:
        raise ConfigError("--train, --val and --test must be >= 1")
    existing = [str(out / lo.file_name(s)) for s in counts if (out / lo.file_name(s)).exists()]
    if existing and not args.force:
        raise FileExistsError(f"{', '.join(existing)} already exist; pass --force to overwrite")
    paths = lo.generate_files(out, counts, args.seed, min_len=args.min_len, max_len=args.max_len)
    print(json.dumps({"files": [str(p) for p in paths], **counts, "seed": args.seed}))
    return 0

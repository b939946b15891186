"""fpt report: a self-contained HTML report (and Markdown) for a run, a folder of runs, or a reproduced table."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

HELP = "write DIR/report.html (self-contained) and DIR/report.md for a run, a folder of runs, or fpt reproduce output"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", help="a run directory, a directory of runs, or an fpt reproduce output directory")
    p.add_argument("--attention", choices=["auto", "existing", "never"], default="auto",
                   help="auto: show saved attention maps and compute missing ones for bit tasks (layer 0, written "
                        "to RUN_DIR/attention); existing: only saved ones; never: no attention section (default: auto)")
    p.add_argument("--attention-examples", type=int, default=16, help="examples per computed attention map "
                                                                              "(default: 16)")
    p.add_argument("--device", default="cpu", help="device for computing attention maps (default: cpu)")
    p.add_argument("--force", action="store_true",
                   help="replace a report.html in DIR that fpt did not write (never a run's own files)")


def run(args: argparse.Namespace) -> int:
    from fpt.outputs import check_writable
    from fpt.presentation.html import Options, write

    copy = shlex.quote(f"/tmp/{Path(args.dir).resolve().name}-copy")
    check_writable(args.dir, "fpt report writes report.html and report.md",
                   f"copy it to a folder you can write and report the copy (cp -r {shlex.quote(args.dir)} {copy} && "
                   f"fpt report {copy})")
    options = Options(attention=args.attention, attention_examples=args.attention_examples, device=args.device)
    html_path, md_path = write(Path(args.dir), options, force=args.force)
    for note in options.notes:
        print(f"note: {note}")
    print(f"report: {html_path} (self-contained) and {md_path}")
    return 0

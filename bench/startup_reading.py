"""What a plain ``fpt train --data DATA`` does before its first body is built, as one process to time from outside:
the command's parser and the training stack imported, then the data read and tokenised as fit=auto builds it (the
closed-form candidate, then gradient training's probe: two builds, one reading where the tree has
``fpt.data.read_once``). Issue 40's speed target counts this stage in "rest" (bench/closed_form_speed.py).

    farm-bench -n 5 --vs 'env PYTHONPATH=OLD/src python bench/startup_reading.py DATA' \\
        -- env PYTHONPATH=NEW/src python bench/startup_reading.py DATA

DATA: any file ``--data`` reads (bench/closed_form_speed.py --synthetic writes the issue's table and series).
Prints the modules it imported that a plain run on DATA need not import (datasets, for a CSV).
"""

from __future__ import annotations

import contextlib
import os
import sys


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit("usage: python bench/startup_reading.py DATA")
    path = sys.argv[1]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from fpt.cli import parser

    parser()  # every subcommand's module, as fpt train imports them
    import fpt.distributed  # noqa: F401 (fpt train's first import: the training stack)
    from fpt import data
    from fpt.tasks.user_data import DataOptions, task_from_loaded

    once = getattr(data, "read_once", contextlib.nullcontext)  # trees before it read the file per build
    with once():
        sizes = [len(task_from_loaded(data.load(path), DataOptions(data=path), 0).train.data.y) for _ in range(2)]
    print(f"{path}: {sizes[0]} training examples, built twice; datasets imported: {'datasets' in sys.modules}")


if __name__ == "__main__":
    main()

"""How long reading a big table takes at PREDICT time, and the label check at training, beside training's read.

    python bench/predict_table.py --rows 200000 --repeats 3 --label after --note "lane running (machine not idle)"

The table is bench/read_table.py's (5 text columns of short codes with a few missing, 5 numbers, a yes/no label).
A tiny model (a random GPT-2 body of one block of width 8, so that the forward pass is small beside the reading; a
few steps) is trained on its first 2,000 rows, then each figure is the median of ``--repeats`` timings of:

- ``load``: ``fpt.data.load`` of the big table (training's read, as bench/read_table.py times it);
- ``label check``: ``tables.label_text_check`` of a 0/1 target column (the copy of the table with the label written as
  0 and 1, as a CSV of numeric classes holds it) and of the column x0 (a number on every row, nearly every one distinct: the
  check's worst case);
- ``predict read``: ``Predictor.tokens`` of the table (reading, checking every column against the model and
  tokenising: all of ``predict`` but the forward pass);
- ``predict``: ``Predictor.predict`` of the table, forward pass included;
- ``fpt predict``: the command (in this process), with the target column scored and the predictions written;
- the steps of predict after reading, one at a time: ``encode_targets`` (the label's class codes, to score), the
  columns written back beside the predictions (``_as_written`` of the copy of the table with a row index as its first
  column, as pandas' ``to_csv`` writes one: the index, t0 with its gaps, x0), the JSON lines writer (``_jsonl`` of
  that copy's predictions), declared categories' names (``category_names`` of t0..t4, and of x0 as numbers);
- ``fpt predict ... .jsonl``: the command on the copy with a row index, scored, written as JSON lines.

Each run appends its figures (its command line first) to ``--out``, by default the day's
docs/results/bench/predict_table-DATE.txt (UTC), so that the trees compared (each run with its own ``PYTHONPATH``,
alternated) land in one file; ``--out -`` writes none. ``--top N`` adds cProfile's top entries of one
``Predictor.tokens`` (``--profile command``: of one ``fpt predict ... .jsonl``); ``--only WORD`` (repeatable) times
only the figures whose name holds a WORD.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import datetime
import io
import os
import platform
import pstats
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TRAIN_ROWS = 2_000


def _read_table_module() -> Any:
    """bench/read_table.py (not a package) loaded by path: its table is the one timed here."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_read_table", Path(__file__).with_name("read_table.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def processor() -> str:
    """``lscpu``'s model name and the CPUs this process may use."""
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        name = next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Model name")),
                    platform.processor())
    except OSError:
        name = platform.processor()
    return f"{name}, {len(os.sched_getaffinity(0))} CPUs"


def timed(fn: Callable[[], Any], repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def tiny_body(folder: Path) -> str:
    import torch
    from transformers import GPT2Config, GPT2Model

    torch.manual_seed(0)
    GPT2Model(GPT2Config(n_layer=1, n_embd=8, n_head=2, n_positions=16, vocab_size=8)).save_pretrained(folder)
    return str(folder)


def train_tiny(table: Path, folder: Path) -> Path:
    """A tiny model of ``table``'s first TRAIN_ROWS rows (every code of each column among them)."""
    import fpt

    head = folder / "train.csv"
    with open(table) as src, open(head, "w") as dst:
        for i, line in enumerate(src):
            if i > TRAIN_ROWS:
                break
            dst.write(line)
    exp = fpt.build(data=str(head), body=tiny_body(folder / "body"), init="random", steps=2, batch_size=8,
                    eval_every=2, device="cpu", eval_batch_size=4096)
    fpt.fit(exp, out=folder / "run", progress=False)
    return folder / "run"


def numeric_labels(table: Path, out: Path) -> None:
    """``table`` with its yes/no label written as 1/0 (a CSV of numeric classes)."""
    text = table.read_text()
    head, _, body = text.partition("\n")
    out.write_text(head + "\n" + body.replace(",yes\n", ",1\n").replace(",no\n", ",0\n"))


def with_row_index(table: Path, out: Path) -> None:
    """``table`` with a row index as its first column, its header cell empty (pandas' ``to_csv`` default)."""
    with open(table) as src, open(out, "w") as dst:
        dst.write("," + next(src))
        dst.writelines(f"{i},{line}" for i, line in enumerate(src))


def default_out(now: datetime.datetime | None = None) -> Path:
    """The day's results file (UTC) in docs/results/bench."""
    day = (now or datetime.datetime.now(datetime.UTC)).strftime("%Y-%m-%d")
    return Path(__file__).resolve().parents[1] / "docs" / "results" / "bench" / f"predict_table-{day}.txt"


def append(out: Path, argv: list[str], lines: list[str]) -> None:
    """This run's section, its command line first, after the file's earlier sections."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "a") as f:
        f.write(f"# python {shlex.join(argv)}\n" + "\n".join(lines) + "\n\n")  # quoted: it runs again as written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--repeats", type=int, default=3, help="timings per figure; the median is reported")
    ap.add_argument("--label", default="", help="what this run is (e.g. the tree: before, after)")
    ap.add_argument("--note", default="", help="the machine's state, said in the file (idle, lane running, ...)")
    ap.add_argument("--out", default=str(default_out()),
                    help="append the figures to this text file (default: the day's file in docs/results/bench; - none)")
    ap.add_argument("--top", type=int, default=0, help="cProfile entries of one Predictor.tokens, by own time")
    ap.add_argument("--profile", choices=("tokens", "command"), default="tokens",
                    help="what --top profiles: Predictor.tokens, or the fpt predict .jsonl command")
    ap.add_argument("--only", action="append", default=[], help="time only the figures whose name holds this word")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import fpt
    import fpt.data.base as base
    from fpt import data
    from fpt.cli import main as cli_main
    from fpt.data import categories, inputs, tables

    lines = [f"## {args.label or 'run'}: fpt from {Path(base.__file__).resolve().parents[2]}; {processor()}"
             + (f"; {args.note}" if args.note else "") + f"; load average {os.getloadavg()[0]:.1f} at the start"
             + f"; {datetime.datetime.now(datetime.UTC):%Y-%m-%dT%H:%M:%SZ}"]

    def say(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    print(lines[0], flush=True)
    with tempfile.TemporaryDirectory(prefix="fpt-bench-predict-") as tmp:
        folder = Path(tmp)
        path = folder / "table.csv"
        _read_table_module().write_table(path, args.rows)
        numeric = folder / "table01.csv"
        numeric_labels(path, numeric)
        run = train_tiny(path, folder)
        model = fpt.load(run)
        say(f"{path.name}: {args.rows} rows, {path.stat().st_size / 1e6:.1f} MB; model: {run.name} trained on its first "
            f"{TRAIN_ROWS} rows ({model.config.body.rsplit('/', 1)[-1]}, random GPT-2 body, one block of width 8)")
        data.load(str(path))  # warm: imports (pyarrow, pandas) are not the reading
        model.tokens(str(path))
        out_csv = folder / "predictions.csv"
        indexed = folder / "table_index.csv"
        with_row_index(path, indexed)
        out_jsonl = folder / "predictions.jsonl"
        labelled = model.tokens(str(path))[2]  # the label column as read, to score
        written = [tables.read_columns(indexed)[c] for c in ("", "t0", "x0")]
        declared = [tables.read_columns(path)[c] for c in ("t0", "t1", "t2", "t3", "t4", "x0")]
        prediction = model.predict_file(str(indexed))

        def command(table: Path = path, out: Path = out_csv) -> None:
            with contextlib.redirect_stdout(io.StringIO()):
                cli_main(["predict", str(run), str(table), "--out", str(out), "--force"])

        figures = {
            "load (training read)": lambda: data.load(str(path)),
            "label check, 0/1 label": lambda: tables.label_text_check([numeric], ["label"]),
            "label check, x0 (distinct numbers)": lambda: tables.label_text_check([path], ["x0"]),
            "predict read (Predictor.tokens)": lambda: model.tokens(str(path)),
            "Predictor.predict": lambda: model.predict(str(path)),
            "fpt predict (scored, written)": command,
            "encode_targets (label, to score)": lambda: model.preprocessing.encode_targets(labelled.y, labelled.where),
            "_as_written (index, t0, x0)": lambda: [inputs._as_written(c) for c in written],
            "JSON lines writer (Prediction._jsonl)": prediction._jsonl,
            "category_names (t0..t4, x0)": lambda: [categories.category_names(c) for c in declared],
            "fpt predict (row index, scored, .jsonl)": lambda: command(indexed, out_jsonl),
        }
        figures = {k: v for k, v in figures.items() if not args.only or any(w in k for w in args.only)}
        for name, fn in figures.items():
            times = timed(fn, args.repeats)
            say(f"{name}: {statistics.median(times):.2f} s (median of {len(times)}; all: "
                f"{', '.join(f'{t:.2f}' for t in times)})")
        if args.top:
            profile = cProfile.Profile()
            if args.profile == "command":
                profile.runcall(command, indexed, out_jsonl)
            else:
                profile.runcall(model.tokens, str(path))
            text = io.StringIO()
            pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(args.top)
            say(text.getvalue().rstrip())
    if args.out != "-":
        append(Path(args.out), sys.argv, lines)


if __name__ == "__main__":
    main()

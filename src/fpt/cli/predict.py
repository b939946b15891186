"""fpt predict: a trained model's predictions for new inputs (a run directory or an fpt export)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

HELP = "predict with a trained run or export on new inputs (the training formats); scores them if they hold targets"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from fpt.cli._args import add_which_argument

    p.add_argument("model", metavar="RUN_OR_EXPORT", help="a run directory (fpt train) or an export (fpt export)")
    from fpt.data.formats import predict_kinds

    p.add_argument("inputs", metavar="INPUT",
                   help=f"examples in a format --data reads: {predict_kinds()}; - reads a table (CSV, TSV or JSON "
                        "lines) from standard input; a paper task's model: an .npz of its tokens X (optionally y, "
                        "lengths)")
    p.add_argument("--out", default="predictions.csv",
                   help="file to write: prediction (and proba_<class>, or a ridge head's score_<class>) per example, as "
                        "its suffix says: .csv, .tsv, "
                        ".jsonl, .parquet or .feather; - writes CSV to standard output (default: predictions.csv)")
    p.add_argument("--force", action="store_true",
                   help="replace --out if it exists (never the input file or a file inside the run or export)")
    add_which_argument(p, where="run directories: ")
    p.add_argument("--device", default=None, help="override the device (auto, cpu, cuda)")
    p.add_argument("--allow-unseen", action="store_true",
                   help="tables: map categories never seen in training to the shared unknown slot instead of "
                        "stopping with an error; sequences: read a text of no symbol seen in training as the "
                        "unknown symbol")
    p.add_argument("--no-targets", action="store_true",
                   help="INPUT holds no targets: every field is a value (a UCR .tsv of the series alone, whose first "
                        "field would otherwise be read as the label where the training series varied in length; a "
                        ".ts whose lines end without ':label'); predicted, not scored. A file whose layout shows "
                        "targets (a target column, class folders, an .npz's y) is then an error")


def check_out(out: str | Path, model: str | Path, inputs: str | Path, force: bool) -> None:
    """Refuse an --out that would destroy something: the inputs, a file of the run/export, a link out of its
    folder, or (without --force) any existing file (fpt.outputs); or whose suffix names a format fpt does not write
    (a .xlsx would get CSV text). ``-`` (standard output) destroys nothing."""
    from fpt.outputs import check_file
    from fpt.predictor import STDOUT, output_format

    output_format(out)
    if str(out) != STDOUT:
        check_file(out, force=force, never=(inputs, model))


STDIN = "-"
STDIN_NAME = "standard input"


@contextlib.contextmanager
def _inputs(inputs: str) -> Iterator[str]:
    """The path fpt reads the inputs from: ``inputs`` itself, or for ``-`` (a pipe: ``... | fpt predict RUN -``) a
    temporary file of standard input's table, named by its first line (CSV, TSV or JSON lines), removed after; fpt's
    errors about it name standard input, not the temporary file."""
    if inputs != STDIN:
        yield inputs
        return
    from fpt.errors import DataError, FptError

    if sys.stdin is None or sys.stdin.isatty():
        raise DataError(f"INPUT -: {STDIN_NAME} is a terminal, not a table; pipe one in (cat new.csv | fpt predict "
                        "RUN -) or name the file")
    data = sys.stdin.buffer.read()
    first = data.lstrip()[:1000].split(b"\n", 1)[0]
    suffix = ".jsonl" if first.startswith(b"{") else ".tsv" if b"\t" in first and b"," not in first else ".csv"
    with tempfile.TemporaryDirectory(prefix="fpt-stdin-") as tmp:
        path = Path(tmp) / f"stdin{suffix}"
        path.write_bytes(data)
        try:
            yield str(path)
        except FptError as exc:
            if str(path) not in str(exc):
                raise
            raise type(exc)(str(exc).replace(str(path), STDIN_NAME)) from None


PER_CLASS_SHOWN = 30  # classes printed; a model of hundreds of classes prints its worst by F1


def _print_per_class(rows: list[dict], stream: TextIO) -> None:
    """scikit-learn's classification_report rows, as a labelled file is scored: the classes by the model's order, or
    for more than PER_CLASS_SHOWN classes the worst by F1 (the ones to look at)."""
    shown = rows if len(rows) <= PER_CLASS_SHOWN else sorted(rows, key=lambda r: (r["f1"], -r["support"]))[:PER_CLASS_SHOWN]
    width = max(5, *(len(str(r["class"])) for r in shown))
    head = "per class" if len(shown) == len(rows) else f"the {len(shown)} classes of lowest F1 of {len(rows)}"
    print(f"{head}:\n  {'class':<{width}}  precision  recall     f1  support", file=stream)
    for r in shown:
        print(f"  {str(r['class']):<{width}}  {r['precision']:9.3f}  {r['recall']:6.3f}  {r['f1']:5.3f}  {r['support']:7d}",
              file=stream)


def run(args: argparse.Namespace) -> int:
    from fpt.data.inputs import CutInputWarning
    from fpt.data.timeseries import TargetsRead
    from fpt.predictor import STDOUT
    from fpt.run import load

    model = load(args.model, which=args.which, device=args.device)  # first: a wrong model path is the first error
    model.progress = True  # a bar on a terminal's stderr while large inputs run (none into a file or a pipe)
    check_out(args.out, args.model, args.inputs, args.force)  # before predicting: nothing computed for nothing
    with warnings.catch_warnings(), _inputs(args.inputs) as inputs:
        warnings.simplefilter("ignore", CutInputWarning)  # said below as one plain line, and in the JSON's notes
        warnings.simplefilter("ignore", TargetsRead)  # the same
        result = model.predict_file(inputs, allow_unseen=args.allow_unseen, no_targets=args.no_targets)
    for note in result.notes:
        print(f"fpt predict: warning: {note}", file=sys.stderr)
    result.write(args.out)
    # One JSON line (as fpt train prints): the count, the metrics when the inputs held their targets, and notes on
    # what was done to the inputs (series cut to the trained length). With --out -, standard output is the table
    # alone (a pipe into another tool reads CSV only), so the line goes to standard error.
    said = sys.stderr if str(args.out) == STDOUT else sys.stdout
    print(json.dumps({"rows": result.rows, **(result.metrics or {}), **({"notes": result.notes} if result.notes else {})}),
          file=said)
    if result.per_class:  # after the JSON line, which scripts read first
        _print_per_class(result.per_class, said)
    if str(args.out) != STDOUT:
        print(f"predictions: {args.out}")
    return 0

"""A table's results.csv read back strictly: every field a verdict reads is checked, and a bad one is one fpt error
naming the file, the line and the field (a hand-edited or damaged file never gives a traceback or a silent figure).
"""

from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path

from fpt.errors import DataError

NUMBERS = ("ours", "ours_std", "majority", "majority_margin")  # a figure, or empty
COUNT = "n"
LISTS = ("values",)  # figures joined by ';' (an empty entry: a seed with no figure)
DIRTY = re.compile(r"^(\d+) of (\d+)$")
FIX = "regenerate it with fpt reproduce TABLE --report-only"


def _number(path: Path, line: int, field: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise DataError(f"{path}: line {line}, field {field}: {text[:40]!r} is not a number; {FIX}") from None
    if not math.isfinite(value):
        raise DataError(f"{path}: line {line}, field {field}: {text!r} is not a finite number; {FIX}")
    return value


def check_row(path: Path, line: int, row: dict[str, str | None]) -> None:
    """Raise DataError at the first field of ``row`` a verdict cannot read."""
    if None in row:  # csv.DictReader's key for cells beyond the header
        raise DataError(f"{path}: line {line} has more fields than the header; {FIX}")
    for field in NUMBERS:
        if row.get(field):
            _number(path, line, field, row[field])
    if row.get(COUNT):
        n = _number(path, line, COUNT, row[COUNT])
        if n < 0 or not n.is_integer():
            raise DataError(f"{path}: line {line}, field n: {row[COUNT]!r} is not a count of seeds; {FIX}")
    for field in LISTS:
        for part in (row.get(field) or "").split(";"):
            if part:
                _number(path, line, field, part)
    dirty = row.get("dirty")
    if dirty:
        found = DIRTY.match(dirty)
        if not found or int(found.group(1)) > int(found.group(2)):
            raise DataError(f"{path}: line {line}, field dirty: {dirty[:40]!r} is not 'k of n' runs; {FIX}")


def read_results(path: Path) -> list[dict[str, str]]:
    """The rows of a results.csv ([] when there is none), each checked by ``check_row``."""
    path = Path(path)
    if not path.is_file():
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text (byte {exc.start}); {FIX}") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows = []
    for row in reader:
        check_row(path, reader.line_num, row)
        rows.append(row)
    return rows


__all__ = ["check_row", "read_results"]

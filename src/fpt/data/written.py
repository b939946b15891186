"""An input column written back beside the predictions (a row index, a ``drop_columns`` id), as every writer of the
prediction table holds it: CSV, TSV, JSON lines and Parquet/Feather then write the same value, never a TypeError of
one writer (``json`` holds no Decimal or date) or a number that is not the value (a nanosecond duration's integer).

- dates and times as ISO 8601 text: a datetime64 column's shortest exact text (``2024-01-01``, ``2024-01-02T03:00``),
  and the same for Python's and pandas' naive datetimes among objects; a datetime with a zone keeps its offset
  (``2024-01-01T00:00:00+01:00``); ``datetime.date`` and ``datetime.time`` their ``isoformat``;
- durations as ISO 8601 durations (``P1DT2H``, ``PT1.5S``), exact to the nanosecond, which pandas and fpt read back;
- anything else JSON holds no value of (a Decimal, a pandas Period or Interval, a complex number) as its ``str``,
  the very text the CSV writer wrote for it; bytes as the UTF-8 text they hold.

A Decimal is written as its text, not a float: an id is a name, not a quantity, and ``str`` keeps every digit and
the written scale (``Decimal('1.10')`` stays ``1.10``; an id of 20 digits is not rounded to float's 17), where a float
would join ids that differ past its precision. A Decimal NaN is missing, as a float NaN is.
"""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import numpy as np

from fpt.data.base import is_missing
from fpt.data.plain import plain_values

# what every writer holds as it is (JSON's scalars and containers; Parquet infers a type for each)
_HELD = frozenset({str, int, float, bool, type(None), list, tuple, dict})
_NS = {"D": 86_400 * 10**9, "H": 3_600 * 10**9, "M": 60 * 10**9}


def as_written(col: np.ndarray, missing: np.ndarray | None = None) -> list[Any]:
    """``col``'s values for the prediction table (see the module docstring), missing as None. ``missing``: the
    reader's mask of the column's missing cells, where kept."""
    missing = is_missing(col) if missing is None else missing
    if col.dtype.kind == "M":
        # the shortest exact: 2024-01-01, or with the time; an object array of Python str, as str() of each gave
        out = np.datetime_as_string(col, unit="auto").astype(object)
    elif col.dtype.kind == "m":
        # tolist of a nanosecond duration is an integer of nanoseconds, which was written as if it were the value
        out = np.empty(len(col), dtype=object)
        out[:] = [None if n is None else iso_duration(n) for n in _nanoseconds(col)]
    else:
        out = plain_values(col)
        if not set(map(type, out)) <= _HELD:  # one pass over the types; the usual column is done here
            out[:] = [v if type(v) in _HELD else _text(v) for v in out]
    out[missing] = None
    return out.tolist()


def _nanoseconds(col: np.ndarray) -> list[int | None]:
    at_ns = col.astype("m8[ns]")
    return [None if np.isnat(v) else int(v.astype(np.int64)) for v in at_ns]


def iso_duration(ns: int) -> str:
    """``ns`` nanoseconds as an ISO 8601 duration: ``P1DT2H``, ``PT1.5S``, ``-PT30M``, ``PT0S``."""
    sign, ns = ("-" if ns < 0 else ""), abs(ns)
    parts = []
    for unit in ("D", "H", "M"):
        whole, ns = divmod(ns, _NS[unit])
        parts.append(f"{whole}{unit}" if whole else "")
    seconds, fraction = divmod(ns, 10**9)
    second = f"{seconds}.{fraction:09d}".rstrip("0") + "S" if fraction else (f"{seconds}S" if seconds else "")
    time = "".join(parts[1:]) + second
    if not parts[0] and not time:
        time = "0S"
    return f"{sign}P{parts[0]}" + (f"T{time}" if time else "")


def _text(value: Any) -> Any:
    """A value no writer holds as it is, as text (None: a missing Decimal)."""
    if isinstance(value, datetime.datetime):  # pandas' Timestamp among them
        if value.tzinfo is None:  # as a datetime64 column of the same instant is written
            return str(np.datetime_as_string(np.datetime64(value.isoformat()), unit="auto"))
        return value.isoformat()
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):  # pandas' Timedelta holds nanoseconds beyond Python's microseconds
        return iso_duration(int(getattr(value, "value", None) or _micro(value) * 1000))
    if isinstance(value, decimal.Decimal):
        return None if value.is_nan() else str(value)
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return str(value)
    return str(value)


def _micro(value: datetime.timedelta) -> int:
    return (value.days * 86_400 + value.seconds) * 10**6 + value.microseconds


__all__ = ["as_written", "iso_duration"]

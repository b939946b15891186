"""Durations in a table's column, read as seconds: typed as durations (timedelta64: a DataFrame's, Parquet's duration
type; Python's or pandas' timedeltas among objects), or written as text in one of the forms pandas writes or reads
exactly: ``02:30:00``, ``00:05:12.5``, ``1 day 02:00:00`` (``1 days 02:00:00``, Python's ``1 day, 2:00:00``), ISO
8601's ``PT5M``, ``P1DT2H``; or with unit words, ``5 min``, ``1.5h``, ``2 weeks`` (``fpt.data.duration_units``,
which says when a unit of one letter is one). A duration is a quantity: read as a category per value, a new one at
predict was an unseen category, and 1 and 2 hours as far apart as 1 hour and 1 day.

Times of a clock and durations are written alike. ``08:30:00`` is read as 30,600 seconds either way: the seconds
since midnight of a time of day, or the length of a duration; the column is then a number (a note says so when every
value could be a time of day: hours 0-23, no days). Two fields (``02:30``) are hours and minutes when every value of
the column has two (``14:30``, as times of day are written); since a column is standardised, minutes and seconds
(a lap time) read the same to the model. A column mixing two fields and three (``59:10`` beside ``1:02:30``, a race's
times) is refused: its two fields would be read as hours where they are minutes.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

import numpy as np

from fpt.data.base import is_missing, plain_value
from fpt.data.duration_units import column_says_durations, unit_seconds, units_of
from fpt.errors import column_word, option, row_word

_CLOCK = r"\d+:[0-5]\d:[0-5]\d(?:\.\d{1,9})?"
# Each form of text read as a duration, by the regex that says a value is written in it. Minutes and seconds
# below 60 and fractions on seconds alone: pandas reads 00:75:00 as 1:15 and P1.5D as 5 days and 1 second.
_FORMS = {
    "two": re.compile(r"\d{1,3}:[0-5]\d"),  # H:MM
    "clock": re.compile(_CLOCK),
    "days": re.compile(rf"-?\d+ days?(?:,? [-+]?{_CLOCK})?"),
    "iso": re.compile(r"-?P(?!$)(?:\d+W)?(?:\d+D)?(?:T(?=\d)(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d{1,9})?S)?)?"),
}
# What a column's text was read as, kept with the model (its tokeniser's "duration") to read new text by:
# "h:mm", every value two fields; "clock", H:MM:SS of hours 0-23 (times of day, perhaps); "duration", the rest.
KINDS = ("h:mm", "clock", "duration")
_LOOK = 1000  # rows looked at for a first value


def as_seconds(values: np.ndarray) -> np.ndarray | None:
    """A column typed as durations (timedelta64, or Python/pandas timedeltas among objects) as float64 seconds
    (missing: NaN), else None. The unit is numpy's or Arrow's, never the user's, so it is not kept: seconds, at
    predict too."""
    if values.dtype.kind == "m":
        return values / np.timedelta64(1, "s")  # NaT: NaN
    if values.dtype.kind != "O":
        return None
    head = values[:_LOOK]  # text or numbers: a look at the first values, not a pass over every one
    if not any(isinstance(v, datetime.timedelta | np.timedelta64) for v in head[~is_missing(head)][:1]):
        return None
    missing = is_missing(values)
    present = values[~missing]
    if not len(present) or not all(isinstance(v, datetime.timedelta | np.timedelta64) for v in present):
        return None
    out = np.full(len(values), np.nan)
    out[~missing] = [v / np.timedelta64(1, "s") if isinstance(v, np.timedelta64) else v.total_seconds()
                     for v in present]
    return out


def _form(v: Any) -> str | None:
    """The form of ``_FORMS`` a value is written in, "units" for unit words (fpt.data.duration_units), else None."""
    if not isinstance(v, str):
        return None
    text = v.strip()
    return next((name for name, rx in _FORMS.items() if rx.fullmatch(text)),
                "units" if units_of(text) is not None else None)


def _distinct(values: np.ndarray, missing: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a code per row, -1 where missing; the distinct present values; the first row of each)."""
    import pandas as pd

    codes, uniques = pd.factorize(pd.Series(np.where(missing, None, values), dtype=object), use_na_sentinel=True)
    seen, first = np.unique(codes, return_index=True)
    rows = first[seen >= 0]
    return codes, np.asarray(uniques, dtype=object), rows


def _row(values: np.ndarray, i: int) -> str:
    return f"{row_word(int(i))}: {plain_value(values[i])!r}"


def find_durations(values: np.ndarray, where: str, error: type[Exception]) -> str | None:
    """The ``KINDS`` a text column of durations is read as, or None: not text, or some value not a duration. A column
    mixing two fields (H:MM or MM:SS?) with longer durations is an ``error`` naming a row of each."""
    if values.dtype.kind != "O":
        return None
    head = values[:_LOOK][~is_missing(values[:_LOOK])]
    if not len(head) or _form(head[0]) is None:  # text (names, codes) is not read through
        return None
    missing = is_missing(values)
    _, uniques, rows = _distinct(values, missing)
    forms = [_form(v) for v in uniques]
    if None in forms:
        return None
    if "units" in forms and not column_says_durations(
            [units_of(v.strip()) or [] for v, f in zip(uniques, forms, strict=True) if f == "units"],
            any(f != "units" for f in forms)):  # one unit of one letter throughout: 90s, 3d (decades, codes)
        return None
    two = [i for i, f in zip(rows, forms, strict=True) if f == "two"]
    longer = [i for i, f in zip(rows, forms, strict=True) if f != "two"]
    if two and longer:
        raise error(f"{where} holds durations of two fields ({_row(values, min(two))}), which could be hours and "
                    f"minutes or minutes and seconds, beside longer ones ({_row(values, min(longer))}); write every "
                    "value with hours, minutes and seconds (0:59:10), or leave the column out with "
                    f"{option('drop_columns')}")
    if two:
        return "h:mm"
    day = all(f == "clock" for f in forms) and max(int(v.strip().split(":")[0]) for v in uniques) <= 23
    return "clock" if day else "duration"


def read_durations(values: np.ndarray, kind: str, where: str, error: type[Exception]) -> np.ndarray:
    """A column of durations as float64 seconds (missing: NaN), by what its training text was read as (``kind``, of
    ``KINDS``): text in the forms ``find_durations`` reads (two fields only where ``kind`` is "h:mm"), or typed as
    durations. Any other value (text, a number with no unit) is an ``error`` naming its row and the fix."""
    import pandas as pd

    if (seconds := as_seconds(values)) is not None:
        return seconds
    missing = is_missing(values)
    out = np.full(len(values), np.nan)
    if values.dtype.kind != "O" and missing.all():  # a column of nothing but gaps, read as floats
        return out
    codes, uniques, rows = _distinct(np.asarray(values, dtype=object), missing)
    typed = np.array([isinstance(v, datetime.timedelta | np.timedelta64) for v in uniques], dtype=bool)
    forms = [_form(v) for v in uniques]
    bad = [i for i, f, t in zip(rows, forms, typed, strict=True)
           if not t and (f is None or (f == "two") != (kind == "h:mm"))]
    if bad:
        written = "hours and minutes, H:MM" if kind == "h:mm" else "H:MM:SS, '1 day 02:00:00', ISO's PT5M or '5 min'"
        raise error(f"{where} holds values that are not durations written as the column's training values are "
                    f"({', '.join(_row(values, i) for i in sorted(bad)[:3])}); write them so ({written}), or leave "
                    "them empty (missing)")
    units = np.array([f == "units" for f in forms], dtype=bool)  # read by fpt.data.duration_units, not pandas
    texts = [None if u else v if t else v.strip() + (":00" if f == "two" else "")
             for v, f, t, u in zip(uniques, forms, typed, units, strict=True)]
    read = pd.to_timedelta(pd.Series(texts, dtype=object), errors="coerce")
    unread = rows[read.isna().to_numpy() & ~units]
    if len(unread):  # pandas' own limits (beyond about 292 years)
        raise error(f"{where} holds text that reads as no duration ({_row(values, int(unread[0]))}); fix it or "
                    "leave it empty (missing)")
    seconds = (read / pd.Timedelta(seconds=1)).to_numpy(dtype=np.float64, copy=True)
    seconds[units] = [unit_seconds(v.strip()) for v in uniques[units]]
    out[codes >= 0] = seconds[codes[codes >= 0]]
    return out


def duration_notes(raw: Any) -> list[str]:
    """One line per text column of a table read as durations whose every value could be a time of day (H:MM, or
    H:MM:SS of hours 0-23): read as seconds since midnight, a number, not its cycle."""
    if raw.modality != "tabular":
        return []
    where = raw.splits["train"].where
    return [f"{where}: {column_word(name)} holds times written {'H:MM' if kind == 'h:mm' else 'H:MM:SS'}, read as "
            "seconds: since midnight if they are times of day (23:59 then reads far from 00:00; if that cycle "
            "matters, give the hour as a column of its own), the length if they are durations"
            for name, kind in raw.notes.get("durations", {}).items() if kind != "duration"]


__all__ = ["KINDS", "as_seconds", "duration_notes", "find_durations", "read_durations"]

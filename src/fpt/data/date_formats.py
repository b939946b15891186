"""Dates written other than as ISO 8601 (``03/15/2024``, ``15.03.2024``, ``2024/03/15``, ``15-Mar-2024``,
``Mar 15, 2024``, each with or without a time): which one format a text column is written in, so that it is read as
the ISO dates of ``fpt.data.dates`` are, and new inputs by that same format.

A column is read so only when every present value reads by one format of ``FORMATS`` (pandas' ``to_datetime`` with
that ``format=``: strict, and quick on a whole column, where dateutil's guess per value reads ``1/2/3`` as anything).
Which field is the day is never guessed: a value with a first field above 12 (``15/03/2024``) says the day comes
first; a column where no value says so (every field 12 or less: ``01/03/2024``, ``02/03/2024``) is refused, as both
orders read every value as a different date.
"""

from __future__ import annotations

import datetime
import re
import warnings
from itertools import product
from typing import Any

import numpy as np

from fpt.errors import option, row_word

# A date written day, month or year first with one separator, or with its month's name; then a time, or none.
_DAYS: tuple[tuple[str, str], ...] = (
    *((f"%Y{s}%m{s}%d", "year first") for s in "/.-"),  # 2024/03/15 (ISO's 2024-03-15 is read before this module)
    *((f"%m{s}%d{s}%{y}", "month first") for s, y in product("/.-", "Yy")),
    *((f"%d{s}%m{s}%{y}", "day first") for s, y in product("/.-", "Yy")),
    *((f, "month name") for f in ("%d-%b-%Y", "%d-%b-%y", "%d %b %Y", "%d %B %Y", "%b %d %Y", "%b %d, %Y", "%B %d %Y",
                                   "%B %d, %Y")),
)
_TIMES = ("", " %H:%M", " %H:%M:%S", " %H:%M:%S.%f", " %I:%M %p", " %I:%M:%S %p")
# format -> the order of its day and month fields: two orders that both read a column are a guess, refused
FORMATS: dict[str, str] = {day + time: order for (day, order), time in product(_DAYS, _TIMES)}
# What could be one of FORMATS, looked for on a column's first value before any format is tried on it: text
# columns (names, codes) are many, a table's date columns few.
_LOOKS = re.compile(r"\s*(?:\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4}|\d{1,2}[ -][A-Za-z]{3,9}[ -]\d{2,4}"
                    r"|[A-Za-z]{3,9} \d{1,2},? \d{4})(?: \d{1,2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?: ?[AaPp][Mm])?)?\s*")
_LOOK = 1000  # rows looked at for a first value
# A date with a month's name in any language (15 marzo 2024, 15. März 2024, 3 janv. 2024, Okt 15, 2024): strptime
# reads English names only, so one that does not read by FORMATS is said to be text, not guessed at.
NAMED = re.compile(r"\s*(?:\d{1,2}\.?[ -][^\W\d_]{3,12}\.?[ -]\d{2,4}|[^\W\d_]{3,12}\.? \d{1,2},? \d{4})"
                   r"(?: \d{1,2}:\d{2}(?::\d{2})?)?\s*")


def _first_text(values: np.ndarray, missing: np.ndarray) -> str | None:
    head = values[:_LOOK][~missing[:_LOOK]]
    return head[0].strip() if len(head) and isinstance(head[0], str) else None


def looks_written(values: np.ndarray, missing: np.ndarray) -> bool:
    """Whether a column's first present value could be a date of ``FORMATS`` (a quick look, before any is tried)."""
    first = _first_text(values, missing)
    return first is not None and _LOOKS.fullmatch(first) is not None


def _reads(first: str) -> list[str]:
    """The formats of ``FORMATS`` that read ``first`` (Python's strptime, as pandas' reads one value)."""
    out = []
    for fmt in FORMATS:
        try:
            datetime.datetime.strptime(first, fmt)
        except ValueError:
            continue
        out.append(fmt)
    return out


def readable(text: str) -> bool:
    """Whether some format of ``FORMATS`` reads ``text``."""
    return bool(_reads(text.strip()))


_PADDED = r"\d{2}[/.-]\d{2}[/.-]\d{2}(?:\s.*)?"


def _padded(texts: list[str]) -> bool:
    """Whether every text's date is three two-digit fields (a two-digit year's dates, not 3.11.7)."""
    import pandas as pd

    return bool(pd.Series(texts, dtype=object).str.fullmatch(_PADDED).all())


def parse(texts: list[str], fmt: str) -> Any:
    """``texts`` (stripped) read by ``fmt`` as a pandas Series of datetime64, NaT where a text does not read so."""
    import pandas as pd

    with warnings.catch_warnings():  # pandas' note that a format without a day of month infers one
        warnings.simplefilter("ignore")
        return pd.to_datetime(pd.Series(texts, dtype=object), format=fmt, errors="coerce")


def written_format(values: np.ndarray, missing: np.ndarray, codes: np.ndarray, uniques: np.ndarray, share: float,
                   where: str, error: type[Exception]) -> str | None:
    """The one format of ``FORMATS`` every present value of ``values`` reads by, or None: the column is not dates
    written one way (text, numbers, several formats). ``codes`` and ``uniques`` are the column's distinct values (a
    code per row, -1 where ``missing``), each read once. A column that reads by formats of two orders of day and
    month is an ``error`` naming the fix; one whose rows read by a format on ``share`` of its present rows or more,
    but not all, an ``error`` naming the rows that do not."""
    first = _first_text(values, missing)
    if first is None or not looks_written(values, missing) or not all(isinstance(v, str) for v in uniques):
        return None
    texts = [v.strip() for v in uniques]
    candidates = _reads(first)
    if any("%y" in f for f in candidates) and not _padded(texts):
        # a two-digit year read only where every field is two digits (15.03.24): version numbers (3.11.7,
        # 1.2.33) read as dates otherwise, refused as ambiguous or, with a field over 12, read as days
        candidates = [f for f in candidates if "%y" not in f]
    reads = {fmt: parse(texts, fmt).notna().to_numpy() for fmt in candidates}
    whole = [fmt for fmt, ok in reads.items() if ok.all()]
    if len({FORMATS[f] for f in whole}) > 1:
        both = {FORMATS[f]: f for f in reversed(whole)}
        raise error(f"{where} holds dates written day or month first ({first!r}) and no value tells which: every "
                    f"first and second field is 12 or less, so {both['day first']!r} and {both['month first']!r} "
                    "read them as different dates; write them as ISO dates (2024-03-01; pandas: "
                    f"pd.to_datetime(s, format={both['day first']!r}).dt.strftime('%Y-%m-%d')), or leave the column "
                    f"out with {option('drop_columns')}")
    if whole:
        return whole[0]
    if not reads:
        return None
    present = codes[codes >= 0]
    fmt, ok = max(reads.items(), key=lambda kv: kv[1][present].mean())
    if ok[present].mean() < share:
        return None
    rows = np.flatnonzero((codes >= 0) & ~ok[np.maximum(codes, 0)])
    shown = ", ".join(f"{row_word(int(i))}: {values[i]!r}" for i in rows[:3])  # X[2] of an estimator's X
    named = ("%b" in fmt or "%B" in fmt) and all(NAMED.fullmatch(str(values[i])) for i in rows[:3])
    raise error(f"{where} holds dates written {fmt!r} ({first!r}) but also other values ({shown}); write those so "
                f"too{' (month names are read in English)' if named else ''}, or leave them empty (missing)")


__all__ = ["FORMATS", "NAMED", "looks_written", "parse", "readable", "written_format"]

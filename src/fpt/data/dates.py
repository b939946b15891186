"""Date and time columns of a table: which columns hold dates, their values read as one kind of datetime, and the
numbers a date becomes in the tabular tokeniser (``fpt.data.tokenisers.TabularTokens``: one token per part).

A column holds dates when its type says so (datetime64: a DataFrame's, Parquet's timestamp and date types) or when
every present value is a date: Python's ``datetime``/``date``, pandas' ``Timestamp``, numpy's ``datetime64``, or text
in ISO 8601's form as a CSV holds it (``2024-03-01``, ``2024-03-01 14:30``, ``2024-03-01T14:30:05.25Z``,
``2024-03-01T14:30+01:00``), or text written one other way throughout (``03/15/2024``, ``15-Mar-2024``: a format
of ``fpt.data.date_formats``, kept with the model to read new inputs by). Text written day or month first where no
value tells which (``01/03/2024``, ``02/03/2024``) is refused: that is never guessed.

As read: times without a timezone ("naive") are datetime64[us] wall-clock times; times with one ("aware") are an
object array of pandas Timestamps in the column's zone (a DataFrame's or Parquet's zone; text with UTC offsets: UTC).
One column never mixes the two: that is an error naming a row of each.

A date becomes ``PARTS``: ``time`` (days since 1970-01-01, of the instant for aware times: the trend) and the
calendar parts of the wall-clock time in the column's zone (what seasons, weekly cycles and opening hours are read
from); the clock parts only down to the finest the training dates have. Each is standardised on the training split,
missing (NaT) as the other numbers are; a date beyond the training dates reads as their range's nearest end in its
trend parts (``TRENDS``).
"""

from __future__ import annotations

import datetime
import re
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from fpt.data.base import is_missing
from fpt.data.date_formats import NAMED, looks_written, parse, readable, written_format
from fpt.errors import column_word, row_word

# A date as ISO 8601 writes it, as pandas' to_csv and most databases export one; the zone only after a time.
ISO_DATE = re.compile(r"\s*\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?\s*(?P<zone>Z|[+-]\d{2}"
                      r"(?::?\d{2})?)?)?\s*", re.IGNORECASE)
# day and month in an order the text does not say (01/03/2024, 1.3.24), with an optional time: left as text
ORDERLESS_DATE = re.compile(r"\s*\d{1,2}[/.]\d{1,2}[/.]\d{2,4}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?\s*")
DATE_SHARE = 0.9  # a column at least this share dates (tables.MIXED_SHARE's rule) has stray entries, named
CALENDAR = ("year", "month", "day", "weekday")  # weekday: Monday 0
CLOCK = ("hour", "minute", "second")
PARTS = ("time", *CALENDAR, *CLOCK)
# The parts that grow with time, without a cycle. A date beyond the training dates reads as the training range's
# nearest end in these (as a tree ensemble reads it), its cycles (month, weekday, hour) as they are: standardised,
# six years past a training quarter was a value of 90 standard deviations, which a model trained on values within
# two answers with anything; fpt predict says how many dates it read so.
TRENDS = ("time", "year")
_NOT, _NAIVE, _AWARE = 0, 1, 2
_DAY_US = 86_400e6
_LOOK = 1000  # rows looked at first: a column without a date among them is text, not read through


@dataclass(frozen=True)
class DateKind:
    """A column found to hold dates: its zone (None: naive wall-clock times), and the format its text is written in
    when not ISO 8601 (``fpt.data.date_formats``; None: ISO, or dates typed as dates)."""

    zone: str | None
    format: str | None = None


def _kind(v: Any) -> int:
    if isinstance(v, str):
        m = ISO_DATE.fullmatch(v)
        return _NOT if m is None else _AWARE if m["zone"] else _NAIVE
    if isinstance(v, datetime.datetime):  # pandas' Timestamp too
        return _AWARE if v.tzinfo is not None else _NAIVE
    return _NAIVE if isinstance(v, (datetime.date, np.datetime64)) else _NOT


def _kinds(values: np.ndarray, missing: np.ndarray) -> np.ndarray:
    return np.array([-1 if m else _kind(v) for v, m in zip(values, missing, strict=True)], dtype=np.int8)


def _shown(values: np.ndarray, at: np.ndarray, limit: int = 3) -> str:
    return ", ".join(f"{row_word(int(i))}: {values[i]!r}" for i in at[:limit])


def _distinct(values: np.ndarray, missing: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a code per row, -1 where missing; the distinct present values): each read once, as a daily table repeats its
    dates on many rows."""
    import pandas as pd

    codes, uniques = pd.factorize(pd.Series(np.where(missing, None, values), dtype=object), use_na_sentinel=True)
    return codes, np.asarray(uniques, dtype=object)


def date_share(values: np.ndarray) -> float:
    """The share of an object column's present values that are dates (0 for any other column)."""
    if values.dtype.kind != "O":
        return 0.0
    missing = is_missing(values)
    kinds = _kinds(values, missing)[~missing]
    return float((kinds != _NOT).mean()) if len(kinds) else 0.0


def find_dates(values: np.ndarray, where: str, error: type[Exception], written: bool = True) -> DateKind | None:
    """The column's ``DateKind`` when it holds dates, else None (numbers, text). A text column of dates with a few
    other entries (``DATE_SHARE``), of times with and without a timezone, or of dates whose day and month no value
    tells apart, is an ``error`` naming rows or the fix. ``written`` False: ISO text only, not other formats."""
    if values.dtype.kind == "M":
        return DateKind(None)
    if values.dtype.kind != "O":
        return None
    head = values[:_LOOK]
    iso = (_kinds(head, is_missing(head)) > _NOT).any()
    if not iso and not (written and looks_written(head, is_missing(head))):  # text (names, codes): not read through
        return None
    missing = is_missing(values)
    codes, uniques = _distinct(values, missing)
    kinds = np.where(codes >= 0, _kinds(uniques, np.zeros(len(uniques), dtype=bool))[np.maximum(codes, 0)], -1)
    present = kinds >= 0
    dated = present & (kinds != _NOT)
    if not dated[present].all():
        if dated[present].mean() >= DATE_SHARE:
            raise error(f"{where} holds dates but also other values ({_shown(values, np.flatnonzero(present & ~dated))}); "
                        "fix those values (ISO dates such as 2024-03-01) or leave them empty (missing)")
        # written one other way throughout (a stray ISO date among them is named as the format's stray)
        fmt = written_format(values, missing, codes, uniques, DATE_SHARE, where, error) if written else None
        return None if fmt is None else DateKind(None, fmt)
    aware, naive = np.flatnonzero(kinds == _AWARE), np.flatnonzero(kinds == _NAIVE)
    if len(aware) and len(naive):
        raise error(f"{where} mixes times with a timezone or UTC offset ({_shown(values, aware, 1)}) and times "
                    f"without one ({_shown(values, naive, 1)}); give every value its offset, or none")
    return DateKind(_zone(values[aware]) if len(aware) else None)


def _zone(aware: np.ndarray) -> str:
    """The one zone of aware values (a DataFrame's column: Europe/Paris), else UTC: text with offsets, several zones,
    or a zone pandas cannot name again when the model reads new inputs."""
    import pandas as pd

    zones = {"UTC" if isinstance(v, str) else str(v.tzinfo) for v in aware}
    if len(zones) != 1:
        return "UTC"
    (zone,) = zones
    try:
        pd.Timestamp(0, tz=zone)
    except Exception:  # noqa: BLE001 (a zone object whose name pandas does not read back: dateutil's tzfile(...))
        return "UTC"
    return zone


def _naive_for_aware(where: str, shown: str, zone: str, error: type[Exception]) -> Exception:
    """A time without a timezone where training read times in ``zone``: one wording of a datetime64 column (a
    Predictor's DataFrame: 'holds times without a timezone', naming no row) and of the same column as objects (an
    estimator's, which named the row and no pandas fix)."""
    return error(f"{where} holds a time without a timezone ({shown}), but its training dates are times in {zone}; give "
                 f"each its UTC offset (2024-03-01T14:30+01:00) or zone (pandas: s.dt.tz_localize({zone!r}))")


def read_dates(values: np.ndarray, zone: str | None, where: str, error: type[Exception],
               fmt: str | None = None) -> np.ndarray:
    """A column's values as dates of the column's kind: naive (``zone`` None) as datetime64[us], aware as Timestamps
    in ``zone`` (pandas' NaT where missing); its text as ISO 8601, or written in ``fmt`` (the training text's
    ``DateKind.format``) and only so. A value that is not a date, or not one of the kind (a naive time for a column
    of aware ones, or the other way), is an ``error`` naming its row and the fix."""
    import pandas as pd

    missing = is_missing(values)
    if values.dtype.kind == "M":
        if zone is not None and not missing.all():
            first = np.flatnonzero(~missing)[:1]
            raise _naive_for_aware(where, _shown(np.array([pd.Timestamp(v) for v in values], dtype=object), first, 1),
                                   zone, error)
        out = values.astype("datetime64[us]")
        return out if zone is None else np.array([pd.NaT] * len(out), dtype=object)
    values = np.asarray(values, dtype=object)
    codes, uniques = _distinct(values, missing)
    seen, first = np.unique(codes, return_index=True)
    row = np.zeros(len(uniques), dtype=np.int64)  # each distinct value's first row, for messages
    row[seen[seen >= 0]] = first[seen >= 0]
    kinds = _kinds(uniques, np.zeros(len(uniques), dtype=bool))
    if fmt is not None:  # text is read by the format alone (below); an ISO date is not one written so
        kinds[[isinstance(v, str) for v in uniques]] = _NAIVE

    def rows_of(mask: np.ndarray) -> np.ndarray:
        return np.sort(row[mask])

    bad = rows_of(kinds == _NOT)
    if len(bad):
        written = f"written {fmt!r}" if fmt else "ISO: 2024-03-01, 2024-03-01 14:30"
        raise error(f"{where} holds values that are not dates ({_shown(values, bad)}), but the column's training values "
                    f"are dates; give dates ({written}) or leave them empty (missing)")
    other = rows_of(kinds == (_NAIVE if zone is not None else _AWARE))
    if len(other) and zone is not None:
        raise _naive_for_aware(where, _shown(values, other, 1), zone, error)
    if len(other):
        raise error(f"{where} holds a time with a timezone or UTC offset ({_shown(values, other, 1)}), but its training "
                    "dates have none (wall-clock times); give them without (pandas: s.dt.tz_localize(None))")
    text = np.array([isinstance(v, str) for v in uniques], dtype=bool)
    parsed = pd.Series(pd.NaT, index=range(len(uniques)), dtype="datetime64[us, UTC]" if zone else "datetime64[us]")
    with warnings.catch_warnings():  # pandas' notes on mixed inputs: every value is checked just below
        warnings.simplefilter("ignore")
        for mask, given, kwargs in ((text, [v.strip() for v in uniques[text]], {"format": "ISO8601"}),
                                    (~text, list(uniques[~text]), {})):
            if mask.any() and fmt is not None and kwargs:
                parsed[mask] = parse(given, fmt).astype(parsed.dtype).to_numpy()
            elif mask.any():
                got = pd.to_datetime(pd.Series(given, dtype=object), errors="coerce", utc=zone is not None, **kwargs)
                parsed[mask] = got.astype(parsed.dtype).to_numpy()
    unread = rows_of(parsed.isna().to_numpy())
    if len(unread) and fmt is not None and text.any():
        raise error(f"{where} holds text that is not a date written {fmt!r}, as the column's training dates are "
                    f"({_shown(values, unread)}); write it so, or leave it empty (missing)")
    if len(unread):
        raise error(f"{where} holds text that reads as no date ({_shown(values, unread)}: no such day, or beyond the "
                    "years pandas reads); fix it or leave it empty (missing)")
    if zone is None:
        read = parsed.to_numpy(dtype="datetime64[us]")
        return np.where(codes >= 0, read[np.maximum(codes, 0)], np.datetime64("NaT", "us"))
    read = parsed.dt.tz_convert(zone).to_numpy(dtype=object)
    out = np.array([pd.NaT] * len(values), dtype=object)
    out[codes >= 0] = read[codes[codes >= 0]]
    return out


def held_dates(values: np.ndarray) -> DateKind | None:
    """The ``DateKind`` of a column as ``read_dates`` gives it (datetime64, or Timestamps of one zone), else None."""
    if values.dtype.kind == "M":
        return DateKind(None)
    if values.dtype.kind != "O" or not len(values):
        return None
    if not any(issubclass(k, datetime.datetime) for k in set(map(type, values))):  # text, numbers: no pass per value
        return None
    present = values[~is_missing(values)]
    if not len(present) or not all(isinstance(v, datetime.datetime) and v.tzinfo is not None for v in present):
        return None
    return DateKind(str(present[0].tzinfo))


def date_parts(values: np.ndarray, zone: str | None) -> dict[str, np.ndarray]:
    """Each of ``PARTS`` of dates as ``read_dates`` gives them: float64, NaN where missing."""
    import pandas as pd

    missing = is_missing(values)
    if zone is None:
        stamps = pd.DatetimeIndex(values.astype("datetime64[us]"))
        instants = values.astype("datetime64[us]")
    else:
        stamps = pd.DatetimeIndex(pd.to_datetime(pd.Series(values, dtype=object), utc=True)).tz_convert(zone)
        instants = stamps.tz_convert("UTC").tz_localize(None).to_numpy(dtype="datetime64[us]")
    out = {"time": np.where(missing, 0, instants.astype(np.int64)) / _DAY_US,
           "year": stamps.year, "month": stamps.month, "day": stamps.day, "weekday": stamps.day_of_week,
           "hour": stamps.hour, "minute": stamps.minute, "second": stamps.second + stamps.microsecond / 1e6}
    return {k: np.where(missing, np.nan, np.asarray(v, dtype=np.float64)) for k, v in out.items()}


def used_parts(parts: dict[str, np.ndarray]) -> list[str]:
    """The parts a column's training dates make tokens of: the time and the calendar always; the hour, minute and
    second down to the finest that is not zero on some training date (a column of days has no clock)."""
    clock = [p for p in CLOCK if np.nan_to_num(parts[p]).any()]
    finest = CLOCK.index(clock[-1]) + 1 if clock else 0
    return ["time", *CALENDAR, *CLOCK[:finest]]


def day_text(days: float) -> str:
    """A ``time`` part (days since 1970-01-01) as the ISO date and time it is, for messages."""
    return str(np.datetime_as_string(np.datetime64(round(days * _DAY_US), "us"), unit="auto"))


def beyond_note(where: str, beyond: dict[str, dict[str, tuple[int, float, float]]], sizes: dict[str, int]) -> str | None:
    """One line for the held-out splits' dates beyond the training dates, which their evaluation read as the training
    range's nearest end in the trend parts, as predict reads such dates (``beyond``: split -> column -> (count, low,
    high), the tokeniser's ``beyond`` after each split); None when there are none."""
    columns: dict[str, list[str]] = {}
    ranges: dict[str, tuple[float, float]] = {}
    for split, found in beyond.items():
        for name, (count, low, high) in found.items():
            columns.setdefault(name, []).append(f"{count} of {sizes[split]} in {split}")
            ranges[name] = (low, high)
    if not columns:
        return None
    said = "; ".join(f"{column_word(name)}: {', '.join(counts)} beyond the training dates ({day_text(ranges[name][0])} .. "
                     f"{day_text(ranges[name][1])})" for name, counts in columns.items())
    return (f"{where}: {said}; the model reads their time and year as that range's nearest end (their calendar parts as "
            "they are), as predict will: it learnt no trend beyond it, and their splits' figures are of that reading")


def date_notes(raw: Any) -> list[str]:
    """One line per text feature column of a table's training split that holds dates fpt did not read as dates:
    written day or month first (01/03/2024, every present value) but in several ways (01/03/2024, 1.3.24), with month
    names of another language than English (15 marzo 2024, every present value), or dates on half its rows or more
    beside other text (fewer than ``DATE_SHARE``, which is an error): each read as text categories."""
    if raw.modality != "tabular":
        return []
    train = raw.splits["train"]
    notes = []
    for name in raw.notes.get("features", []):
        col = train.x[name]
        if col.dtype.kind != "O" or name in raw.notes.get("dates", {}) or name in raw.notes.get("as_started", {}):
            continue  # (a resumed run's text, as it started: fpt.data.readings says so)
        present = [v for v, m in zip(col, is_missing(col), strict=True) if not m]
        if present and all(isinstance(v, str) and ORDERLESS_DATE.fullmatch(v) for v in present):
            notes.append(f"{train.where}: {column_word(name)} holds dates written day or month first ({present[0]!r}) "
                         "but not all in one way (separators, year of 2 or 4 digits, times), so it is read as text "
                         "categories; write them all one way, or as ISO dates (2024-03-01, pandas: "
                         "pd.to_datetime(s, format=...).dt.strftime('%Y-%m-%d')) to read them as dates")
        elif present and all(isinstance(v, str) and NAMED.fullmatch(v) for v in present):
            unread = next((v for v in present[:_LOOK] if not readable(v)), present[0])  # 'ene', not 'feb'
            notes.append(f"{train.where}: {column_word(name)} holds what look like dates written with a month's name, in a "
                         f"form fpt does not read ({unread!r}; it reads English month names: 15 Mar 2024, 15-Mar-2024, "
                         "Mar 15, 2024), so it is read as text categories; write them as ISO dates (2024-03-15) to "
                         "read them as dates")
        elif (share := date_share(col)) >= 0.5:
            notes.append(f"{train.where}: {column_word(name)} holds dates on {share:.0%} of its rows and other text on "
                         "the rest, so it is read as text categories; give dates alone (other values empty) to read "
                         "it as dates")
    return notes


def as_labels(values: np.ndarray) -> np.ndarray:
    """Dates given as class labels (a target column, --objective classification) as the text they are written as:
    ISO, the shortest exact (2024-03-01, 2024-03-01T14:30), with the offset where aware; missing as None."""
    missing = is_missing(values)
    if values.dtype.kind == "M":
        text = np.datetime_as_string(values.astype("datetime64[us]"), unit="auto")
        return np.array([None if m else str(t) for t, m in zip(text, missing, strict=True)], dtype=object)
    return np.array([None if m else v if isinstance(v, str) else v.isoformat() for v, m in
                     zip(values, missing, strict=True)], dtype=object)


__all__ = ["CALENDAR", "CLOCK", "DATE_SHARE", "ISO_DATE", "ORDERLESS_DATE", "PARTS", "TRENDS", "DateKind", "as_labels",
           "beyond_note", "date_notes", "date_parts", "date_share", "day_text", "find_dates", "held_dates", "read_dates",
           "used_parts"]

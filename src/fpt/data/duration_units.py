"""Durations written with unit words: ``5 min``, ``2 hours``, ``3 days``, ``1.5h``, ``90s``, ``2 weeks``, ``1h30m``,
``1 day 2 hours``, read as seconds (``fpt.data.durations`` reads a column of them).

Units of one length only: weeks, days, hours, minutes, seconds, milliseconds. Months and years (``3 months``) are
not a number of seconds and are never read. fpt reads the words itself, not through ``pandas.to_timedelta``: pandas
reads ``5 min`` and ``2 hours`` but not ``2 weeks``, ``2 hrs`` or ``90 secs``, reads ``5 m`` as minutes and ``2W``
as weeks, and its letters change between versions (``T`` and ``L`` gone in 3.0; ``d``, ``w`` and ``MIN``
deprecated with a warning). Where pandas reads a value written here, it reads the same number of seconds.

A word (``min``, ``hours``, ``day``) says what it is, in any letter case; ``ms`` only so written. A unit of one
letter (``h``, ``m``, ``s``, ``d``; lower case: ``3D``, ``2H`` and ``5M`` are codes, sizes and millions) says
little on its own: ``90s`` is also a decade, ``5m`` five metres, ``3d`` an identifier. A column whose units are
all one such letter is not read as durations (``column_says_durations``); two letters (``2h`` beside ``30m``), a
value of two units (``1h30m``), a word, or a duration of another form (``02:30:00``) beside them say it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_WEEK, _DAY, _HOUR, _MINUTE = 604_800.0, 86_400.0, 3_600.0, 60.0
# unit -> seconds, for units written as words (read in any letter case)
WORDS = {**dict.fromkeys(("week", "weeks", "wk", "wks"), _WEEK), **dict.fromkeys(("day", "days"), _DAY),
         **dict.fromkeys(("hour", "hours", "hr", "hrs"), _HOUR),
         **dict.fromkeys(("minute", "minutes", "min", "mins"), _MINUTE),
         **dict.fromkeys(("second", "seconds", "sec", "secs"), 1.0),
         **dict.fromkeys(("millisecond", "milliseconds"), 1e-3)}
# units read only as written here (lower case): one letter, and "ms" (MS is no unit)
LETTERS = {"d": _DAY, "h": _HOUR, "m": _MINUTE, "s": 1.0, "ms": 1e-3}
_TERM = re.compile(r"(\d+(?:\.\d+)?|\.\d+) ?([A-Za-z]+)")
_VALUE = re.compile(r"\s*(-?)\s*((?:\d+(?:\.\d+)?|\.\d+) ?[A-Za-z]+(?:,? ?(?:\d+(?:\.\d+)?|\.\d+) ?[A-Za-z]+)*)\s*")


def _seconds_of(unit: str) -> float | None:
    if unit in LETTERS:
        return LETTERS[unit]
    return None if len(unit) == 1 or unit.lower() == "ms" else WORDS.get(unit.lower())


def units_of(text: str) -> list[str] | None:
    """The units of ``text`` written as durations with unit words (``1h30m``: ["h", "m"]), each once, largest
    first, a fraction on the last only; None for any other text."""
    whole = _VALUE.fullmatch(text)
    if whole is None:
        return None
    terms = _TERM.findall(whole[2])
    sizes = [_seconds_of(unit) for _, unit in terms]
    if None in sizes or sizes != sorted(set(sizes), reverse=True) or any("." in n for n, _ in terms[:-1]):
        return None
    return [unit for _, unit in terms]


def unit_seconds(text: str) -> float:
    """The seconds of a text ``units_of`` reads (a value it reads not: a KeyError, a caller's bug)."""
    whole = _VALUE.fullmatch(text)
    if whole is None or units_of(text) is None:
        raise KeyError(text)
    seconds = sum(float(n) * _seconds_of(unit) for n, unit in _TERM.findall(whole[2]))  # type: ignore[operator]
    return -seconds if whole[1] else seconds


def column_says_durations(units: Iterable[list[str]], other_forms: bool) -> bool:
    """Whether a column's values written with units (``units``: each value's ``units_of``) are durations: some unit
    is a word, or the column holds two units of one letter (in one value or in two), or ``other_forms`` (durations
    written otherwise, 02:30:00, beside them)."""
    used = {unit for value in units for unit in value}
    return other_forms or any(len(u) > 1 for u in used) or len(used) > 1


__all__ = ["LETTERS", "WORDS", "column_says_durations", "unit_seconds", "units_of"]

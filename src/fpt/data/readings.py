"""How a run read its table's columns, as its data.json's tabular tokeniser keeps it, so that a resumed run reads its
data as it started: fpt's reading of text changes between versions (dates written 03/15/2024 and durations written
02:30:00 were text categories before fpt read them as dates and seconds), and a run resumed under the new reading
would train the checkpoint's parameters on tokens of another shape and meaning.

``as_saved`` holds a run's readings while its data is read again (``fpt.modes.train_run`` resuming); the table
reader (``fpt.data.tables.columns_to_raw``) takes a column's saved reading where there is one instead of finding it
anew: text stays text, dates read by the saved format (or as ISO), durations by the saved kind, numbers as numbers.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Reading:
    """One column's reading: ``kind`` "text", "dates", "durations" or "numbers"; a date's ``zone`` and ``format`` (None:
    naive, ISO or typed), a duration's ``duration`` (``fpt.data.durations.KINDS``)."""

    kind: str
    zone: str | None = None
    format: str | None = None
    duration: str | None = None

    def words(self) -> str:
        """The reading as a message says it: 'text categories', "dates written '%m/%d/%Y'", 'durations (seconds)'."""
        if self.kind == "dates":
            return f"dates written {self.format!r}" if self.format else "dates"
        return {"text": "text categories", "durations": "durations (seconds)"}.get(self.kind, self.kind)


_SAVED: contextvars.ContextVar[Mapping[str, Reading] | None] = contextvars.ContextVar("fpt_saved_readings",
                                                                                      default=None)


def readings(tokeniser: Mapping[str, Any] | None) -> dict[str, Reading]:
    """Each column's ``Reading`` as a tabular tokeniser's JSON (data.json's "tokeniser") records it; {} for another
    tokeniser (images, series: nothing of theirs is read another way)."""
    if not tokeniser or tokeniser.get("kind") != "tabular":
        return {}
    out: dict[str, Reading] = {}
    for f in tokeniser.get("features", []):
        if not isinstance(f, Mapping) or f.get("name") in out:  # a date's parts: one entry per part
            continue
        if f.get("kind") == "categorical":
            out[f["name"]] = Reading("text")
        elif f.get("kind") == "datetime":
            out[f["name"]] = Reading("dates", f.get("tz"), f.get("format"))
        elif f.get("kind") == "numeric":
            out[f["name"]] = Reading("durations", duration=f["duration"]) if "duration" in f else Reading("numbers")
    return out


@contextlib.contextmanager
def as_saved(saved: Mapping[str, Reading]) -> Iterator[None]:
    """Inside the block, a table's columns named in ``saved`` are read as it says (``saved_reading``)."""
    token = _SAVED.set(dict(saved))
    try:
        yield
    finally:
        _SAVED.reset(token)


def saved_reading(column: str) -> Reading | None:
    """The reading ``as_saved`` holds for ``column``, or None: none held, or not for this column (found anew)."""
    saved = _SAVED.get()
    return None if saved is None else saved.get(column)


def holding() -> bool:
    """Whether an ``as_saved`` block is in force."""
    return _SAVED.get() is not None


def held_key() -> tuple:
    """The readings in force as a key (``fpt.data.read_once``: data read under them is not data read without)."""
    saved = _SAVED.get()
    return () if saved is None else tuple(sorted(saved.items()))


def read_otherwise(before: Mapping[str, Any] | None, now: Mapping[str, Any] | None) -> str | None:
    """The columns a tokeniser fitted now reads otherwise than the run's saved one (``before``), in words ("column
    'when' as dates written '%m/%d/%Y' where the run read it as text categories"), or None: none."""
    saved, found = readings(before), readings(now)
    differ = [name for name in saved if name in found and saved[name] != found[name]]
    if not differ:
        return None
    return "; ".join(f"column {name!r} as {found[name].words()} where the run read it as {saved[name].words()}"
                     for name in differ)


def as_started_notes(raw: Any) -> list[str]:
    """One line per column a resumed run read as text, as it started, that fpt now reads otherwise (the table
    reader's ``as_started`` note: column -> what fpt finds it to be)."""
    where = raw.splits["train"].where
    return [f"{where}: column {name!r} is read as text categories, as the run read it when it started; fpt reads it "
            f"as {found} since (a new run reads it so)" for name, found in raw.notes.get("as_started", {}).items()]


__all__ = ["Reading", "as_saved", "as_started_notes", "held_key", "holding", "read_otherwise", "readings",
           "saved_reading"]

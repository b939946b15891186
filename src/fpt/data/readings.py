"""How a run read its table's columns, as its data.json's tabular tokeniser keeps it, so that a resumed run reads its
data as it started: fpt's reading of text changes between versions (dates written 03/15/2024 and durations written
02:30:00 were text categories before fpt read them as dates and seconds), and a run resumed under the new reading
would train the checkpoint's parameters on tokens of another shape and meaning.

``as_run`` holds a run's readings while its data is read again to resume it (every path that resumes a run:
``fpt.modes.train_run``, ``fpt reproduce``'s and ``fpt sweep``'s planned runs, their Ray trials, ``fpt pretrain
--resume``); the table reader (``fpt.data.tables.columns_to_raw``) takes a column's saved reading where there is one
instead of finding it anew: text stays text, dates read by the saved format (or as ISO), durations by the saved kind,
numbers as numbers (codes written with leading zeros, '02139', that a run read as numbers before fpt.data.codes).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
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


def run_readings(out: str | Path) -> dict[str, Reading]:
    """How the run in ``out`` read its table's columns, from its data.json (a refit run's selection run's, an
    ensemble's first member's); {} for a run with none (a paper task, or a run not started yet)."""
    from fpt.rundir import DATA, MEMBERS, SELECTION_RUN, read_data

    out = Path(out)
    for where in (out, out / SELECTION_RUN, *sorted(p for p in (out / MEMBERS).glob("*") if p.is_dir())):
        if (where / DATA).is_file():
            doc = read_data(where) or {}
            return {**readings(doc.get("tokeniser")), **target_readings(doc)}
    return {}


def target_readings(doc: Mapping[str, Any]) -> dict[str, Reading]:
    """The targets a run's data.json shows it read as numbers: a regression's, and class labels saved as numbers (7,
    10, 100: codes '007', '010', '100' a run read as numbers before fpt.data.codes); others are found anew."""
    targets, classes = doc.get("targets") or [], doc.get("classes")
    if not isinstance(targets, list):
        return {}
    if classes is None:  # a regression: every target a number
        return {str(t): Reading("numbers") for t in targets}
    return {str(t): Reading("numbers") for t, labels in zip(targets, classes, strict=False)
            if isinstance(labels, list) and labels
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in labels)}


@contextlib.contextmanager
def as_run(out: str | Path | None) -> Iterator[None]:
    """Inside the block, a table is read as the run in ``out`` read it (``run_readings``): the one way every path
    that resumes a run reads its data, so that a column fpt reads otherwise since the run started (text dates,
    durations, codes) is not taken for changed data. ``out`` None (a run started afresh), or a run with no data.json,
    reads anew."""
    saved = run_readings(out) if out is not None else {}
    if not saved:
        yield
        return
    with as_saved(saved):
        yield


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
    """One line per column a resumed run reads as it started where fpt now reads it otherwise (the table reader's
    ``as_started`` note: column -> [how the run read it, what fpt finds it to be], in words)."""
    where = raw.splits["train"].where
    return [f"{where}: column {name!r} is read as {was}, as the run read it when it started; fpt reads it as {found} "
            "since (a new run reads it so)" for name, (was, found) in raw.notes.get("as_started", {}).items()]


__all__ = ["Reading", "as_run", "as_saved", "as_started_notes", "held_key", "holding", "read_otherwise", "readings",
           "run_readings", "saved_reading", "target_readings"]

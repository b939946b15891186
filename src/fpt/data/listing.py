"""Folder listings shared by everything that reads one set of data (``listed_once``): the formats' claims (which
layout is this folder?) and then the reader each list the same folders, and a folder of 100,000 images listed once
to say what it is and again to read it doubled the time before the first image was decoded. Within a
``listed_once`` block each folder is listed once; outside one, ``children`` lists it every time."""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

_LISTED: contextvars.ContextVar[dict[str, list[Entry]] | None] = contextvars.ContextVar("fpt_listed", default=None)


@contextlib.contextmanager
def listed_once() -> Iterator[None]:
    """Within the block, each folder ``children`` is asked about is listed once (a block inside another shares its
    listings). Only for reading: a folder written to within the block would be read as it was."""
    token = _LISTED.set({}) if _LISTED.get() is None else None
    try:
        yield
    finally:
        if token is not None:
            _LISTED.reset(token)


class Entry(NamedTuple):
    """One entry of a folder: its path, and whether it is a folder (through a link; as ``os.DirEntry.is_dir`` says,
    from the listing itself, without a stat per entry)."""

    path: Path
    is_dir: bool


def _is_dir(entry: os.DirEntry) -> bool:
    """As ``Path.is_dir`` answers: a link that loops or dangles is not a folder (``DirEntry.is_dir`` raises ELOOP), and
    the reader that opens it names it."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def children(directory: Path) -> list[Entry]:
    """The entries directly in ``directory``, sorted (OSError as ``os.scandir`` raises it)."""
    listed = _LISTED.get()
    key = str(directory)
    if listed is not None and key in listed:
        return listed[key]
    with os.scandir(directory) as it:
        found = sorted(Entry(directory / e.name, _is_dir(e)) for e in it)
    if listed is not None:
        listed[key] = found
    return found


__all__ = ["Entry", "children", "listed_once"]

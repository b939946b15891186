"""Codes written in digits: a column whose every value is whole digits and some written with a leading zero before
another digit (zip codes '02139', ids '0001', labels '007') names things; it is not a quantity. A CSV reader types it
as numbers (2139, 1, 7): the zeros, and the user's labels as written, were lost without a word. fpt reads such a
column as text, as pandas with dtype=str and readr's guessing keep it (readr reads '01' as text, '0.5' as a number).

The rule is kept narrow, so a column of numbers stays one: '0', '0.5', '-0.3' and '-01' (a sign), '00.5' and '1e05' (a
point or an exponent: a number written to a width) are not codes; nor is a column that holds any value but digits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import numpy as np

from fpt.errors import column_word, option

DIGITS = re.compile(r"[0-9]+")  # ASCII digits only: str.isdigit() also takes '²' and other scripts' digits
LEADING_ZERO = re.compile(r"0[0-9]")
# where a field of a CSV/TSV may start with a zero before a digit (after a separator or a line's start, spaces, a
# quote): a file with none holds no codes, and is not read a second time (a later match may be a false alarm)
_MAY_START_CODE = re.compile(rb'(?:^|[,\t])[ \t]*"?0[0-9]', re.MULTILINE)


def written_as_codes(values: np.ndarray) -> str | None:
    """The first value written with a leading zero where every present value (text) is whole digits and one is so
    written: the column is codes; else None. Missing values (None, NaN, blank) are skipped."""
    values = np.asarray(values)
    if values.dtype.kind != "O":
        return None  # numbers, or numpy's fixed-width text (never a file's column)
    texts = [v.strip() for v in values if isinstance(v, str) and v.strip()]
    if len(texts) != sum(not _missing(v) for v in values):
        return None  # a number, or another object, among the values: not a column of text
    first = None
    for text in dict.fromkeys(texts):  # each distinct text once
        if not DIGITS.fullmatch(text):
            return None
        if first is None and LEADING_ZERO.match(text):
            first = text
    return first


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and v != v) or (isinstance(v, str) and not v.strip()) \
        or type(v).__name__ in {"NAType", "NaTType"}


def may_start_code(block: bytes, before: bytes = b"") -> bool:
    """Whether a CSV/TSV's bytes hold a field that begins with '0' and a digit (``_MAY_START_CODE``); ``before``:
    the end of the block read before, so that a field cut at a block's end is found."""
    return _MAY_START_CODE.search(before[-8:] + block) is not None


def code_columns(chunks: Iterable[Any]) -> dict[str, np.ndarray]:
    """The columns that are codes (``written_as_codes``), each as its text (an object array, missing as None), of a
    table read in pandas chunks with dtype=str (so each value is its text as written, or NaN where missing)."""
    kept: dict[str, list[np.ndarray]] = {}  # the texts of the columns that may still be codes
    ruled_out: set[str] = set()
    zero: set[str] = set()
    for df in chunks:
        for name in map(str, df.columns):
            if name in ruled_out:
                continue
            present = df[name].dropna().str.strip()
            present = present[present != ""]
            if not present.str.fullmatch(DIGITS.pattern).all():
                ruled_out.add(name)
                kept.pop(name, None)
                continue
            kept.setdefault(name, []).append(df[name].to_numpy(dtype=object))
            if name not in zero and present.str.match(LEADING_ZERO.pattern).any():
                zero.add(name)
    return {name: np.array([None if _missing(v) else v.strip() for v in np.concatenate(kept[name])], dtype=object)
            for name in kept if name in zero}


def codes_as_numbers(values: np.ndarray) -> np.ndarray:
    """A column of codes as a CSV reader typed it before fpt read codes as written (a run started then resumes on
    them so: fpt.data.readings): whole numbers, int64 where none is missing, else float64 with NaN where missing."""
    texts = [None if _missing(v) else str(v).strip() for v in np.asarray(values, dtype=object)]
    if None not in texts:
        try:
            return np.array([int(t) for t in texts], dtype=np.int64)
        except OverflowError:  # beyond 64 bits: a float each
            pass
    return np.array([np.nan if t is None else float(t) for t in texts], dtype=np.float64)


def one_number(values: np.ndarray) -> tuple[str, str] | None:
    """Two distinct codes that are one number ('2139' and '02139': a spreadsheet dropped the zeros of some), or None."""
    seen: dict[int, str] = {}
    for text in dict.fromkeys(v.strip() for v in values if isinstance(v, str) and v.strip()):
        first = seen.setdefault(int(text), text)
        if first != text:
            return first, text
    return None


def codes_note(where: str, name: str, values: np.ndarray, sequence: bool = False) -> str | None:
    """The training note for a feature column read as codes (``written_as_codes``), or None for any other column.
    ``sequence``: the table's only feature, read as a symbol sequence (a text column alone is one)."""
    example = written_as_codes(values)
    if example is None:
        return None
    read = "text: the table's only feature, a symbol sequence of its digits " \
           f"({option('modality', 'tabular')} reads them as categories)" if sequence else "codes (text categories)"
    note = (f"{where}: {column_word(name)}: values written with leading zeros ({example!r}) are read as {read}, not "
            "numbers; if they are quantities, write them without the leading zeros")
    pair = one_number(values)
    if pair is not None:
        note += (f"; {pair[0]!r} and {pair[1]!r} are two categories (a spreadsheet drops the zeros of some): if one, "
                 "write them the same way")
    return note


__all__ = ["code_columns", "codes_as_numbers", "codes_note", "one_number", "may_start_code", "written_as_codes"]

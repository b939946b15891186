"""A column's values as ``plain_value`` gives each one (a numpy scalar as its ``item``, a whole float as an int: 1.0
is 1), by passes over the column rather than a Python call per value: fpt predict spent seconds at 200,000 rows on
that call where it writes an input column back beside the predictions and names declared categories.

Only the types whose ``plain_value`` is known here (numpy's numbers, dates and text; among objects str, int, bool,
None and float) go by passes; a column holding anything else takes ``plain_value`` per value, so that the result is
the same object for object either way."""

from __future__ import annotations

import itertools

import numpy as np

from fpt.data.base import plain_value

# the kinds of numpy array whose ``tolist`` is each value's ``item`` as a scalar (never a tuple of a record or a
# nested list), which ``plain_value`` takes before its one other step, whole floats to ints
_SCALAR_KINDS = "biufcmMUS"
# the object types plain_value returns as they are; float is the one whose whole values it changes (to int)
_KEPT = frozenset({str, int, bool, type(None)})
# long double's ``item`` is numpy's own scalar, no Python float: plain_value keeps it whole, so it goes per value
_WIDE = (np.dtype(np.longdouble), np.dtype(np.clongdouble))


def plain_values(col: np.ndarray) -> np.ndarray:
    """``[plain_value(v) for v in col]`` as an object array of the same Python objects (types and values)."""
    n = len(col)
    out = np.empty(n, dtype=object)
    if col.dtype.kind in _SCALAR_KINDS and col.ndim == 1 and col.dtype not in _WIDE:
        out[:] = col.tolist()
        if col.dtype.kind == "f":
            _whole_floats_as_ints(out, col)
        return out
    if col.dtype.kind == "O" and col.ndim == 1:
        kinds = set(map(type, col))
        if kinds <= _KEPT | {float}:
            out[:] = col
            if float in kinds:
                floats = np.fromiter(map(isinstance, col, itertools.repeat(float)), dtype=bool, count=n)
                at = np.flatnonzero(floats)
                values = col[at].astype(np.float64)
                whole = np.isfinite(values) & (values == np.floor(values))
                out[at[whole]] = list(map(int, values[whole].tolist()))
            return out
    for i, v in enumerate(col):  # any other type: plain_value's own answer
        out[i] = plain_value(v)
    return out


def _whole_floats_as_ints(out: np.ndarray, col: np.ndarray) -> None:
    """In ``out`` (``col.tolist()``), each whole finite float of ``col`` as the int ``plain_value`` makes of it."""
    whole = np.isfinite(col) & (col == np.floor(col))
    if whole.any():
        out[whole] = list(map(int, out[whole].tolist()))


__all__ = ["plain_values"]

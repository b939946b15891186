"""Cells no table column may hold, refused in the same words wherever a column is read (a file's, a DataFrame's, an
estimator's X): nested values (a dict, a set: str() of each was read as a category, or pandas raised TypeError:
unhashable type) and infinite numbers (refused after the split as 'example 1 gives values beyond float32's range',
naming no column)."""

from __future__ import annotations

from typing import Any

import numpy as np

from fpt.data.base import rows
from fpt.errors import DataError, show

NESTED = dict | set | frozenset


def nested_cells(values: np.ndarray, kinds: set[type]) -> np.ndarray | None:
    """The cells of ``values`` that are nested (``NESTED``), or None where none is; ``kinds``: the types of its
    values, tested first, so that a column of none (most) is not read value by value."""
    if not any(issubclass(k, NESTED) for k in kinds):
        return None
    return np.fromiter((isinstance(v, NESTED) for v in values), bool, len(values))


def refuse_nested(values: np.ndarray, kinds: set[type], where: str, leave_out: str = "") -> None:
    """A one-line DataError naming the rows (``fpt.data.base.rows``) of ``values``' nested cells, if any; ``where``:
    the column (``the DataFrame: column 'c'``), ``leave_out``: how the reader leaves a column out, where it can."""
    nested = nested_cells(values, kinds)
    if nested is None:
        return
    first = values[int(np.flatnonzero(nested)[0])]
    raise DataError(f"{where} holds nested values ({type(first).__name__}s, on {rows(nested)}); give it one type "
                    "(numbers or text) per column: spread a dict's keys into columns of their own "
                    f"(pd.json_normalize), or leave the column out{leave_out}")


def refuse_infinite(infinite: np.ndarray, where: str, missing: str = "missing (NaN)") -> None:
    """A one-line DataError naming the rows ``infinite`` marks, if any; ``missing``: how a missing cell is written
    where the values were given (``empty (missing)`` in a file)."""
    if infinite.any():
        raise DataError(f"{where} holds infinite values on {rows(infinite)}; replace them with finite numbers or leave "
                        f"them {missing}")


def refuse_infinite_cells(X: np.ndarray, given: Any, where: str, series: bool = False) -> None:
    """A one-line DataError naming the first infinite cell of an estimator's 2-D X (as scikit-learn's check_array read
    it: ``given``, what the caller passed, made float64) as the caller indexes it, from 0: ``X[2, 1]``, or
    ``X.iloc[2]['c']`` of a DataFrame; check_array said 'Input X contains infinity or a value too large for
    dtype('float64')', a traceback naming no cell. A value too large for float64 ('1e400') is named as given.
    ``series``: ``given`` is the list of a pandas Series' cells (one list of points each), which the caller indexes
    by position, ``X.iloc[2][1]`` (X[2, 1] reads the Series' index, which a filter leaves as 5, 9, 12)."""
    if X.dtype.kind != "f" or X.ndim != 2:  # images and series are checked, example by example, by their modality
        return
    infinite = np.isinf(X)
    if not infinite.any():
        return
    i, j = (int(k) for k in np.argwhere(infinite)[0])
    frame = hasattr(given, "columns") and hasattr(given, "iloc")
    value = given.iloc[i, j] if frame else np.asarray(given, dtype=object)[i, j]
    written = str(float(value)) if isinstance(value, float | np.floating) and np.isinf(value) else \
        f"{show(value)}, beyond float64's range"
    cell = f"X.iloc[{i}][{given.columns[j]!r}]" if frame else f"X.iloc[{i}][{j}]" if series else f"X[{i}, {j}]"
    n = int(infinite.sum())
    raise DataError(f"{where}: {cell} is {written} ({n} infinite value{'s' if n > 1 else ''} in all); replace them with "
                    "finite numbers or leave them missing (NaN)")


__all__ = ["nested_cells", "refuse_infinite", "refuse_infinite_cells", "refuse_nested"]

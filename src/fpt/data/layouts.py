"""The layouts in which scikit-learn's, aeon's and pandas' users hand over examples of one kind, read as the one
fit read (``fpt.sklearn``): one-channel series as (n, L) rows, (n, 1, L) or a list of (L,) arrays, and symbol
sequences as one text per example."""

from __future__ import annotations

from typing import Any

import numpy as np

from fpt.data.base import is_missing

TEXT = "text"  # the column texts given as X are read as (a table's one text column: symbol sequences)


def one_text_each(X: Any, sequence: bool) -> tuple[np.ndarray, str | None] | None:
    """(X's texts (n,) as objects, a DataFrame's column name or None) where X is one text per example: a list, a 1-D
    array or a pandas Series of str; with ``sequence`` (modality='sequence') also a column of them, (n, 1) or a
    DataFrame of one column. None for anything else. scikit-learn's check refused a list of texts ('Expected 2D
    array, got 1D array'), and its advice, X.reshape(-1, 1), fitted each whole text as one category of a table, as
    modality='sequence' refused it ('arrays of numbers hold tabular, image or timeseries data')."""
    name = None
    if hasattr(X, "columns"):
        if not sequence or len(X.columns) != 1:
            return None
        name, X = str(X.columns[0]), X.iloc[:, 0]
    if not isinstance(X, list | tuple | np.ndarray) and not (hasattr(X, "to_numpy") and getattr(X, "ndim", 0) == 1):
        return None
    try:
        values = np.asarray(X.to_numpy() if hasattr(X, "to_numpy") else X, dtype=object)
    except ValueError:
        return None
    if sequence and values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    if values.ndim != 1 or not len(values):
        return None
    texts = np.fromiter((isinstance(v, str | bytes) for v in values), dtype=bool, count=len(values))
    # texts, some missing (None, NaN, pandas' NA: no text, as in a table's text column); bytes and numbers among them
    # are read as a DataFrame's text column reads them, and a Predictor's list (b'ab' as 'ab', 3 as '3'): the
    # estimators raised scikit-learn's 'Expected 2D array, got 1D array' and fpt.build advised X.reshape(-1, 1)
    scalar = np.fromiter((isinstance(v, int | float | np.integer | np.floating) for v in values), dtype=bool,
                         count=len(values))
    # a list of words (a tuple, a dict, an array) among texts: the reader of a text column refuses it naming it (the
    # estimators' fit said 'could not convert string to float: 'ab'', their predict 'give a list ... of str, not
    # Series', fpt.build 'arrays hold numbers')
    nested = np.fromiter((isinstance(v, list | tuple | dict | set | frozenset | np.ndarray) for v in values),
                         dtype=bool, count=len(values))
    return (values, name) if texts.any() and (texts | scalar | nested | is_missing(values)).all() else None


def series_layout(X: Any, n_features: int) -> Any:
    """One-channel series in the layout fit saw (``n_features``: n_features_in_, the channels of a 3-D X or a list of
    series, the points of a 2-D X): (n, L) rows as (n, 1, L), or (n, 1, L) as (n, L). aeon reads the two, and a list of
    (L,) arrays, as the same univariate series, as fpt.load(run).predict does; scikit-learn's feature count refused
    the other layout ('X has 20 features, but FPTClassifier is expecting 1'). Anything else as it is."""
    if hasattr(X, "columns") or not isinstance(X, np.ndarray | list | tuple):
        return X
    try:
        values = np.asarray(X)
    except ValueError:  # series of different lengths: a list fit reads as it is
        return X
    if values.dtype.kind not in "iufb":
        return X
    if values.ndim == 2 and n_features == 1 and values.shape[1] != 1:
        return values[:, None, :]
    if values.ndim == 3 and values.shape[1] == 1 and n_features != 1:
        return values[:, 0, :]
    return X


__all__ = ["TEXT", "one_text_each", "series_layout"]

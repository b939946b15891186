"""Columns declared categorical by their type (a pandas ``category`` dtype, ``df[c].astype("category")``; an Arrow
``dictionary`` type, as ``df.to_parquet`` and ``to_feather`` write a category column) read as categories whatever
their values are: ``pd.Categorical([10, 20, 30])`` holds codes, not quantities, and read by its values (ints) it was
standardised as a number. scikit-learn's HistGradientBoosting (``categorical_features="from_dtype"``) reads such a
column as categorical too. An ordered categorical is one-hot like any other: the order is not read (a table's text
categories are unordered, and one-hot keeps a code's neighbours apart, as the declared type asks).

A category is named as the tabular tokeniser names the categories of numbers (``fpt.data.tokenisers.category_texts``:
``plain_value``, so 10 and 10.0 are both '10'), so that new inputs given as plain numbers find it
(``fpt.data.tables._check_feature``)."""

from __future__ import annotations

import base64
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np

from fpt.data.base import is_missing, plain_value
from fpt.data.plain import plain_values

ARROW_SCHEMA = b"ARROW:schema"  # the Arrow schema pyarrow stores in a Parquet file's metadata (base64 IPC)
PANDAS_SCHEMA = b"pandas"  # the pandas metadata beside it (each column's pandas_type, 'categorical' for a category)


def is_declared(dtype: Any) -> bool:
    """Whether a DataFrame column's dtype declares categories: pandas' ``category``, or pandas' ArrowDtype of an Arrow
    dictionary (``pd.ArrowDtype(pa.dictionary(...))``). Read by name, so that pandas need not be imported."""
    name = str(getattr(dtype, "name", ""))
    return name == "category" or name.startswith("dictionary<")


def frame_categories(frame: Any) -> frozenset[str]:
    """The names (as text) of a DataFrame's columns whose dtype declares categories (``is_declared``)."""
    dtypes = getattr(frame, "dtypes", None)
    if dtypes is None or not hasattr(frame, "columns"):
        return frozenset()
    return frozenset(str(c) for c, d in zip(frame.columns, dtypes, strict=True) if is_declared(d))


def category_names(values: np.ndarray) -> np.ndarray:
    """A declared-categorical column's values as an object array of category names: text as it is, a number or a
    bool as ``plain_value`` writes it (10.0 is '10'), anything else as ``str``; missing (NaN, None, pandas' NA) as
    None, which the tokeniser reads as missing."""
    values = np.asarray(values)
    missing = is_missing(values)
    if values.dtype.kind not in "iubfO" or values.ndim != 1:  # numpy's text keeps its np.str_ values: per value
        return np.array([None if m else v if isinstance(v, str) else str(plain_value(v))
                         for v, m in zip(values, missing, strict=True)], dtype=object)
    # by passes over the column (a Python step per value took seconds at 200,000 rows): text as it is (np.str_ among
    # objects too), anything else present named by str of its plain value
    out = values.astype(object)
    named = ~missing
    if values.dtype.kind == "O":
        named &= ~np.fromiter(map(isinstance, values, itertools.repeat(str)), dtype=bool, count=len(values))
    out[named] = list(map(str, plain_values(values[named])))
    out[missing] = None
    return out


def as_category_names(frame: Any) -> Any:
    """A DataFrame with each declared-categorical column (``frame_categories``) as an object column of its category
    names (``category_names``): what reaches a plain array then still reads as categories (fpt.sklearn passes X to
    scikit-learn's validate_data, which keeps values, not dtypes). A pyarrow Table's dictionary columns likewise, as
    text columns. Anything else as it is."""
    types = getattr(getattr(frame, "schema", None), "types", None)
    if types is not None and hasattr(frame, "column_names") and hasattr(frame, "set_column"):  # a pyarrow Table
        import pyarrow as pa

        for i, kind in enumerate(types):
            if pa.types.is_dictionary(kind):
                names = category_names(frame.column(i).to_numpy(zero_copy_only=False))
                frame = frame.set_column(i, frame.column_names[i], pa.array(names, type=pa.string()))
        return frame
    # a pandas Series' dtypes is one dtype, not one per column (FPTClassifier.fit(pd.Series(...)) raised TypeError)
    at = [i for i, d in enumerate(frame.dtypes) if is_declared(d)] if hasattr(frame, "columns") else []
    if not at or not hasattr(frame, "isetitem"):
        return frame
    frame = frame.copy(deep=False)
    for i in at:
        frame.isetitem(i, category_names(frame.iloc[:, i].to_numpy(dtype=object)))
    return frame


def file_categories(path: Path, builder: str) -> frozenset[str]:
    """The columns of a Parquet or Arrow/Feather file whose declared type is an Arrow dictionary. pyarrow reads a
    Parquet dictionary of numbers back as plain numbers (and ``datasets`` every dictionary as its values), so the
    declaration is read from the Arrow schema the writer stored beside the data, else from pandas' metadata. A file
    whose schema cannot be read declares nothing here (reading its data names what is wrong with it)."""
    import pyarrow as pa

    try:
        if builder == "arrow":
            import pyarrow.ipc

            with pa.memory_map(str(path)) as source:
                schema = pyarrow.ipc.open_file(source).schema
            return frozenset(f.name for f in schema if pa.types.is_dictionary(f.type))
        if builder != "parquet":
            return frozenset()
        import pyarrow.parquet as pq

        stored = pq.ParquetFile(path).metadata.metadata or {}
    except (OSError, pa.ArrowException, ValueError):
        return frozenset()
    if ARROW_SCHEMA in stored:
        schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(stored[ARROW_SCHEMA])))
        return frozenset(f.name for f in schema if pa.types.is_dictionary(f.type))
    if PANDAS_SCHEMA in stored:
        columns = json.loads(stored[PANDAS_SCHEMA]).get("columns", [])
        return frozenset(str(c.get("field_name", c.get("name"))) for c in columns
                         if c.get("pandas_type") == "categorical")
    return frozenset()


__all__ = ["as_category_names", "category_names", "file_categories", "frame_categories", "is_declared"]

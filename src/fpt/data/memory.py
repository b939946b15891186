"""Your own data in memory (``fpt.build(data=...)``): a pandas DataFrame, a Hugging Face ``datasets.Dataset``,
or NumPy arrays, read as the files of the same shape are (a table; an .npz's ``X``/``y``)."""

from __future__ import annotations

import contextlib
import contextvars
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from fpt.data.arrays import (
    CHANNEL_NAMES,
    SPLIT_KEYS,
    frame_channels,
    from_arrays,
    is_multiindex_frame,
    is_nested_frame,
    refuse_missing_series,
    series_cells,
    series_frame,
    series_list,
)
from fpt.data.base import (
    SEEDED,
    RawData,
    as_written,
    beyond_int64,
    choose_targets,
    column_names,
    lazy_frame,
    one_kind_of_label,
    record_columns,
    refuse_missing_targets,
    sparse_matrix,
    unique_names,
)
from fpt.data.categories import frame_categories
from fpt.data.cells import refuse_infinite, refuse_nested
from fpt.data.frames import flattened, tuple_target
from fpt.data.host import inputs_array, is_tensor, targets_array, tensor_pair
from fpt.data.hub import from_datasets, is_datasets, streamed
from fpt.data.layouts import TEXT, one_text_each
from fpt.data.modalities import AUTO, requested
from fpt.data.tables import FRAME, columns_to_raw
from fpt.errors import ConfigError, DataError, caller_examples, frame_rows, is_pandas_series, option, show

NPZ_INPUTS = {x for x, _ in SPLIT_KEYS.values()}


def is_in_memory(data: Any) -> bool:
    """Whether ``data`` is in-memory data rather than a path or dataset id."""
    from pathlib import Path

    return data is not None and not isinstance(data, (str, Path))


def describe(data: Any) -> str:
    """What the run's ``data`` field records for in-memory data (it cannot be read again from there)."""
    shape = getattr(data, "shape", None) or (getattr(data[0], "shape", None) if isinstance(data, tuple) and data else None)
    return f"in-memory {type(data).__name__}" + (f" {tuple(shape)}" if shape is not None else "")


def _inputs(X: Any, where: str, targets: int | None, name: str = "X") -> Any:
    """An input array; series of different lengths (a list, or an object array) stay a list of (C, L) arrays, and
    sktime's DataFrames of series (nested, or multi-indexed by instance and time, ``targets`` not one per row) are
    read as series; a nested frame's rows named as the caller indexes ``name`` (X.iloc[1])."""
    sparse_matrix(X, where, DataError)
    named = f"{name}.iloc" if is_pandas_series(X) else name
    X = series_cells(inputs_array(X, where, DataError))
    refuse_missing_series(X, where, named)
    frame = series_frame(X, where, targets, f"{name}.iloc")  # a nested frame's rows as the caller indexes X
    if frame is not None:
        return frame
    series = series_list(X)
    if series is not None:
        return series
    try:
        return np.asarray(X)
    except ValueError:  # numpy's 'inhomogeneous shape' traceback named no example: images of two sizes, say
        shapes = [np.shape(x) for x in X] if isinstance(X, (list, tuple)) else []
        odd = next((i for i, shape in enumerate(shapes) if shape != shapes[0]), None)
        if odd is None:
            raise
        raise DataError(f"{where}: {name}[{odd}] has shape {shapes[odd]}, but {name}[0] has shape {shapes[0]}; give "
                        "examples of one shape (images resized to one size, or their folder, which fpt resizes)"
                        ) from None


def _texts_frame(X: Any, modality: str) -> Any:
    """X of ``data=(X, y)`` as a DataFrame of its one text column, ``TEXT``, where X is one text per example (a list, a
    1-D array or a Series of strings; ``one_text_each``) and the modality is auto or sequence: read as the estimators
    read texts given as X (a table's one text column: symbol sequences), which fpt.build refused ('arrays hold
    numbers'). None for anything else (a DataFrame is read as one already)."""
    if hasattr(X, "columns") or modality not in (AUTO, "sequence"):
        return None
    texts = one_text_each(X, modality == "sequence")
    if texts is None:
        return None
    import pandas as pd

    return pd.DataFrame({TEXT: texts[0]})


def _no_texts(X: Any, where: str) -> None:
    """Refuse X of one text per example (a list, a 1-D array or a Series of strings: symbol sequences), naming the
    table column that reads them: arrays are numbers, and the fix said (X.reshape(-1, 1)) was refused in turn for its
    dtype, or, as objects, read each text as one category."""
    # np.ndim is not asked of a list: a list of series of unequal lengths is ragged, which numpy refuses to shape; an
    # array's ndim is asked before its len, which a scipy sparse matrix refuses (it is refused on its own later)
    if isinstance(X, (str, bytes)) or getattr(X, "ndim", 1) != 1 or not hasattr(X, "__len__") or not len(X):
        return
    first = next(iter(X.values if hasattr(X, "values") else X))
    if isinstance(first, (str, np.str_)):
        raise DataError(f"{where}: one text per example ({show(str(first))}, ...); arrays hold numbers: give the texts as a "
                        "table's column, data=pd.DataFrame({'text': X, 'label': y}), whose one text column is read "
                        f"as symbol sequences ({option('modality', 'sequence')}), as a file's is")


def _targets(y: Any, where: str) -> np.ndarray:
    """Targets as an array, of one kind (``one_kind_of_label``) checked before np.asarray makes [1, "1"] two texts."""
    y = targets_array(y, where, DataError)
    one_kind_of_label(y, where)
    return np.asarray(y)


def _long_index(data: Any, target: str | None) -> bool:
    """Whether a DataFrame is series in long format under a two-level (series, time) index, as sktime's pd-multiindex
    with the target beside the channels: every first-level group of several rows has one target value. A table
    that only has such an index (a panel of stores by date, a target per row) stays a table."""
    if not is_multiindex_frame(data) or data.index.nlevels != 2 or len(data) < 2:
        return False
    names = [str(c) for c in data.columns]
    try:
        targets = choose_targets(names, target, "the DataFrame")
    except DataError:
        return False  # the table's reading says what is wrong with the target
    column = data[[c for c, n in zip(data.columns, names, strict=True) if n in targets]]
    per_series = column.groupby(level=0, sort=False).nunique(dropna=False)
    return bool((per_series <= 1).all().all()) and data.index.get_level_values(0).has_duplicates


def _is_columns(data: Any) -> bool:
    """A dict of a table's columns (``{"age": [...], "label": [...]}``, numpy arrays, lists or torch tensors): two or
    more equal-length one-dimensional columns, none named as an .npz's inputs (X, X_val, X_test: a dict of those is
    arrays, and a misspelt one beside them an error). A column named y is a table's target (y is one of the names
    the target is chosen by), not an .npz's y without its X."""
    if not isinstance(data, Mapping) or len(data) < 2 or any(str(k) in NPZ_INPUTS for k in data):
        return False
    shapes = {tuple(np.shape(v)) if isinstance(v, (list, tuple, np.ndarray)) or hasattr(v, "to_numpy") or is_tensor(v)
              else None for v in data.values()}
    return len(shapes) == 1 and None not in shapes and len(next(iter(shapes))) == 1


def _is_bunch(data: Any) -> bool:
    """A scikit-learn dataset as its loaders return it (a ``Bunch``: data, target, feature_names, ...)."""
    return isinstance(data, Mapping) and "data" in data and "target" in data and not any(
        str(k).startswith(("X", "y")) for k in data)


def _from_bunch(bunch: Any, target: str | None) -> tuple[Any, str | None]:
    """A scikit-learn ``Bunch`` as the table it describes: its ``frame`` when it has one (``as_frame=True``), else its
    ``data`` under its ``feature_names`` beside its ``target``; and the target's column(s) unless one was named."""
    import pandas as pd

    y = bunch["target"]
    names = list(y.columns) if hasattr(y, "columns") else [str(getattr(y, "name", None) or "target")]
    if bunch.get("frame") is not None:
        return bunch["frame"], target if target is not None else ",".join(names)
    X = np.asarray(bunch["data"])
    if X.ndim != 2:
        raise DataError(f"a scikit-learn Bunch whose data has shape {X.shape}; pass (X, y) arrays instead")
    features = [str(f) for f in bunch.get("feature_names", [])] or [f"x{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=features)
    y = np.asarray(y)
    if y.ndim == 1:
        frame[names[0]] = y
    else:
        names = [f"target{j}" for j in range(y.shape[1])]
        for j, name in enumerate(names):
            frame[name] = y[:, j]
    return frame, target if target is not None else ",".join(names)


def _frame_pair(X: Any, y: Any) -> tuple[Any, str] | None:
    """``data=(X, y)`` with X a pandas DataFrame of a row per example, as (the DataFrame with y's column(s) beside
    its own, the target's name(s)): y a Series by its name (else ``y``), a DataFrame by its columns, a 2-D array as
    y0, y1, ... (an .npz's names). Read as arrays, X lost its column names (features x0, x1, ..., so that the trained
    model refused the same DataFrame at predict: 'no column x0') and its dtypes. None for anything else (arrays; a
    DataFrame of series, sktime's, read as series by ``_inputs``; a multi-indexed X with one y per row is a table, as
    the estimators read it: as arrays it lost its column names and y's, and trained on features never recorded). A y
    whose name is one of X's columns (the target left in X: the model would read the answer) and a y whose index
    holds X's rows in another order (pandas pairs by label, fpt by position) are refused naming the fix."""
    pd = sys.modules.get("pandas")
    if pd is None or not isinstance(X, pd.DataFrame) or is_nested_frame(X):
        return None
    if is_multiindex_frame(X) and (not hasattr(y, "__len__") or len(y) != len(X)):
        return None  # sktime's series, indexed by (instance, time), one y per instance: read as series by ``_inputs``
    where = "data=(X, y)"
    if isinstance(y, pd.Series | pd.DataFrame):
        _same_rows(X, y, where)
        columns = {str(c): y[c].array for c in y.columns} if isinstance(y, pd.DataFrame) else \
            {"y" if y.name is None else str(y.name): y.array}
        given = [f"y[{c!r}]" for c in y.columns] if isinstance(y, pd.DataFrame) else ["y"]
    else:
        values = np.asarray(targets_array(y, f"{where}: y", DataError))
        if values.ndim == 2 and values.shape[1] > 1:
            columns = {f"y{j}": values[:, j] for j in range(values.shape[1])}
        else:
            columns = {"y": values.reshape(len(values)) if values.ndim == 2 else values}
        given = [f"y[:, {j}]" for j in range(len(columns))] if len(columns) > 1 else ["y"]
    if len(y) != len(X):
        raise DataError(f"{where}: X has {len(X)} rows but y has {len(y)} targets; they must match one to one")
    # a y given apart is named as given, in the words of arrays' and the estimators' y ('target column 'y' is
    # missing on X.iloc[2]' named a column of the DataFrame that the caller never had)
    for values, said in zip(columns.values(), given, strict=True):
        refuse_missing_targets(np.asarray(values, dtype=object), f"{where}: {said}")
    taken = [name for name in columns if name in {str(c) for c in X.columns}]
    if taken:
        raise DataError(f"{where}: y is named {taken[0]!r}, as X's column {taken[0]!r} is, so the target would also be "
                        f"a feature; leave it out of X (X.drop(columns={taken[0]!r})), or rename y")
    frame = X.copy(deep=False)
    for name, values in columns.items():
        frame[name] = values  # by position (an array, not a Series that pandas would align by label)
    return frame, ",".join(columns)


def _same_rows(X: Any, y: Any, where: str) -> None:
    """Refuse a y whose index holds X's row labels in another order: pandas would pair them by label, fpt pairs by
    position, and each row would train on another row's target without a word."""
    if len(X) != len(y) or X.index.equals(y.index) or not (X.index.is_unique and y.index.is_unique):
        return
    if X.index.nlevels != y.index.nlevels:  # not the same labels (and pandas' isin of the two raises ValueError)
        return
    if X.index.isin(y.index).all():
        raise DataError(f"{where}: y's index holds X's row labels in another order (X starts {list(X.index[:3])}, y "
                        f"{list(y.index[:3])}); fpt pairs X and y by position: give y.loc[X.index] to pair them by label")


def from_memory(data: Any, target: str | None, modality: str, image_channels: str, image_size: int,
                drop_columns: str | None = None, series_id: str | None = None) -> RawData:
    """``RawData`` (one training split: validation and test are held out as for a file) of in-memory data;
    ``drop_columns`` (comma-separated) leaves a table's columns out; ``series_id`` (ID or ID,ORDER) reads a
    long-format table as series."""
    requested(modality)
    drop = column_names(drop_columns)
    if is_datasets(data):
        # read by its features, as a saved one is: through pandas an Image column would be dicts of PNG bytes (trained
        # on as text) and a ClassLabel its integers, not its names
        return from_datasets(data, "the Dataset", f"a datasets.{type(data).__name__}", target, modality,
                             image_channels, image_size, drop, column_names(series_id))
    streamed(data, f"data={type(data).__name__}")
    if _is_bunch(data):
        data, target = _from_bunch(data, target)
    data = tensor_pair(data, f"data={type(data).__name__}", ConfigError) or data
    lazy_frame(data, f"data={type(data).__name__}", DataError)
    records = record_columns(data, f"data={type(data).__name__}", DataError)
    if records is not None:  # a record array's fields: a table's columns
        import pandas as pd

        data = pd.DataFrame(records)
    given = tuple(data) if isinstance(data, tuple) and len(data) == 2 else \
        (data["X"], data["y"]) if isinstance(data, Mapping) and set(data) == {"X", "y"} else None
    # what the caller calls a DataFrame it gave, whose rows errors name by position from 0 (X.iloc[2]): data=df, or
    # the X of (X, y); a dict of columns made one below keeps rows counted from 1
    frame = "data" if hasattr(data, "columns") and hasattr(data, "to_numpy") else None
    texts = _texts_frame(given[0], modality) if given is not None and target is None else None
    # texts of a pandas Series are X.iloc[2] (its index may be a filter's 5, 9, 12), of a list X[2]; y alike
    named = {n: f"{n}.iloc" if is_pandas_series(v) else n for n, v in zip("Xy", given, strict=True)} \
        if texts is not None else {}
    if texts is not None:
        given = (texts, given[1])
    if given is not None and target is None and (pair := _frame_pair(*given)) is not None:
        data, target = pair  # (DataFrame, y): the table with y beside it, read as a DataFrame is, below
        frame = "X"
    if _is_columns(data):  # {column: values}, as predict reads one: a table
        import pandas as pd

        # a column of torch tensors as its values (on any device, requiring grad), as X=tensor is read
        data = pd.DataFrame({k: np.asarray(inputs_array(v, f"data={type(data).__name__}: column {k!r}", DataError))
                             for k, v in data.items()})
    if hasattr(data, "columns") and hasattr(data, "to_numpy"):  # a pandas DataFrame, without importing pandas
        target = tuple_target(data, target, "the DataFrame", DataError)
        data = flattened(data, "the DataFrame", DataError)  # MultiIndex columns by flat names, ('y', '') as y
        unique_names(data.columns, "the DataFrame", DataError, "df.columns = [...]")
        if series_id is None and frame != "X" and _long_index(data, target):  # (X, y): one y per row, a table
            # a row per time point indexed by (series, time), the series' target on each row: the long format, its
            # index the id and order columns (read by its columns alone, each time point was a table row of its own)
            data = data.reset_index()
            series_id = ",".join(str(c) for c in data.columns[:2])
        # sktime's nested frame (a cell per series and channel) is read by its columns too: fpt.data.tables reads
        # columns of series cells as channels, its target beside them by name
        columns = {str(c): data[c].to_numpy() for c in data.columns}
        # whole numbers of 2**63 and up (uint64 hashes, long ids) as the text they are written as, as a file's are:
        # as float64 they would merge
        columns |= {c: as_written(v) for c, v in columns.items() if beyond_int64(v)}
        # texts given as a list are X[2], their targets y[2]; a DataFrame's rows X.iloc[2]
        words = frame_rows("X", {c: named["X" if c == TEXT else "y"] for c in columns}, ("X[{r}]", "{c}[{r}]")) \
            if texts is not None else frame_rows(frame, list(columns)) if frame is not None else \
            contextlib.nullcontext()
        with words:
            for name, values in columns.items():
                _frame_cells(values, name)
            # a category column's to_numpy() is its values (the ints of pd.Categorical([10, 20])): its dtype says
            # categories
            return columns_to_raw({"train": (columns, "the DataFrame")}, target, modality, FRAME, SEEDED,
                                  drop, column_names(series_id), categorical=frame_categories(data))
    if series_id is not None:
        raise ConfigError(f"series_id={series_id!r} groups the rows of a long-format table into series, but "
                          f"data={type(data).__name__} has no columns: drop the argument (or pass a pandas DataFrame)")
    if drop:
        raise ConfigError(f"drop_columns={drop_columns!r} leaves out a table's columns, but data={type(data).__name__} "
                          "has none: drop the argument (or pass a pandas DataFrame)")
    channels = None
    if isinstance(data, tuple) and len(data) == 2:
        _no_texts(data[0], "data arrays: X")
        arrays = {"X": _inputs(data[0], "data arrays: X", len(data[1])), "y": _targets(data[1], "data arrays: y")}
        if series_frame_read(data[0], arrays["X"]):  # a DataFrame of series: new frames' channels read by name
            channels = frame_channels(data[0])
    elif isinstance(data, Mapping):
        for k, v in data.items():
            if str(k).startswith("X"):
                _no_texts(v, f"data arrays: {k}")
        arrays = {str(k): _inputs(v, f"data arrays: {k}", len(data.get(k.replace("X", "y", 1), ())) or None,
                                     str(k))
                  if str(k).startswith("X") else _targets(v, f"data arrays: {k}")
                  for k, v in data.items()}
    else:
        raise ConfigError(f"data={type(data).__name__}: give a path, a pandas or polars DataFrame, a datasets.Dataset, a "
                          "NumPy record array, a dict of columns, a tuple "
                          "(X, y) of arrays or a dict of arrays named as in an .npz (X, y, X_val, ...)")
    # a DataFrame of series' rows are X.iloc[3] to its caller, not the array's X[3]
    with caller_examples("X.iloc") if channels is not None else contextlib.nullcontext():
        raw = from_arrays(arrays, modality, image_channels, image_size, "data arrays",
                          "NumPy arrays passed to fpt.build", indexed=True)
    if channels is not None and raw.modality == "timeseries":
        raw.notes[CHANNEL_NAMES] = channels
    return raw


def series_frame_read(X: Any, read: Any) -> bool:
    """Whether ``read`` (what ``_inputs`` made of ``X``) is a DataFrame of series read as series, not a table."""
    return frame_channels(X) is not None and not hasattr(read, "columns") and (isinstance(read, list) or
                                                                               np.ndim(read) == 3)


# In-memory data readable by its recorded name (``describe``) for the duration of a ``held`` block: fpt.select's
# choice between fits builds its candidates and folds from a config, and a config names its data by that text.
_HELD: contextvars.ContextVar[dict[str, RawData] | None] = contextvars.ContextVar("fpt_held_data", default=None)


@contextlib.contextmanager
def held(name: str, raw: RawData) -> Iterator[None]:
    """Inside the block, ``fpt.data.load(name)`` returns ``raw`` (read once, with the config's target and modality):
    what reads a config's data by name (fpt.select.choose_fit) reads the in-memory data the config records."""
    token = _HELD.set({**(_HELD.get() or {}), name: raw})
    try:
        yield
    finally:
        _HELD.reset(token)


def held_data(name: str) -> RawData | None:
    """The data a ``held`` block names ``name``, or None outside one."""
    return (_HELD.get() or {}).get(name)


__all__ = ["describe", "from_memory", "held", "held_data", "is_in_memory"]


def _frame_cells(values: np.ndarray, name: str) -> None:
    """Refuse a DataFrame column's infinite values and nested cells, as a file's reader refuses them
    (fpt.data.tables.read_table): an inf was refused after the split as 'example 1 gives values beyond float32's range
    once standardised' (an example of a split, no column), and a column of dicts raised TypeError: unhashable type."""
    where = f"the DataFrame: column {name!r}"
    if values.dtype.kind == "f":
        infinite = np.isinf(values)
    elif values.dtype.kind == "O":
        # a test per distinct type first, then per value only where one is needed: a 500,000-row column of text
        # took 0.3 s and one of floats held as objects 0.8 s value by value
        kinds = set(map(type, values))
        refuse_nested(values, kinds, where, f" ({option('drop_columns')})")
        if not any(issubclass(k, float | np.floating) for k in kinds):
            return
        if all(issubclass(k, int | float | np.number) or k is type(None) for k in kinds):
            infinite = np.isinf(values.astype(np.float64))  # None -> nan; no text here for astype to parse
        else:
            infinite = np.fromiter((isinstance(v, float | np.floating) and np.isinf(v) for v in values), bool,
                                   len(values))
    else:
        return
    refuse_infinite(infinite, where)

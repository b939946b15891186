"""NumPy ``.npz`` files with ``X`` and ``y`` (and optionally ``X_val``/``y_val``, ``X_test``/``y_test``),
read with ``numpy.load(allow_pickle=False)`` (``datasets`` has no reader for them).

The shape of ``X`` decides the modality unless ``--modality`` says otherwise: (n, d) a table of
d numeric features; (n, H, W) uint8 or (n, H, W, C)/(n, C, H, W) images; (n, C, L) float
time series (channels first, as sktime). ``y`` is (n,) or (n, m) for m targets.
"""

from __future__ import annotations

import math
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from fpt.data.base import (
    SEEDED,
    Checks,
    Inputs,
    RawData,
    Split,
    beyond_int64,
    check_target_values,
    plain_value,
    refuse_infinite_targets,
    refuse_missing_targets,
    shown,
)
from fpt.data.images import refuse_nonfinite_pixels
from fpt.data.timeseries import CHANNEL_NAMES, caller_head, is_series_cell, missing_series, series_of_cells
from fpt.errors import ARRAY_CELLS, DataError, SchemaError, caller_examples, example_word, frame_rows, option

_FLOAT32_MAX = float(np.finfo(np.float32).max)
SPLIT_KEYS = {"train": ("X", "y"), "val": ("X_val", "y_val"), "test": ("X_test", "y_test")}


def modality_of(X: Any, where: str = "X") -> str:
    """The modality arrays hold by their shape (--modality auto): a list of series of different lengths
    (``series_list``) and (n, C, L) floats are series, (n, d) a table, (n, H, W) uint8 or (n, H, W, C) images.
    ``where`` names the array in the error (the file and its key, or the estimator's argument)."""
    if isinstance(X, list):
        return "timeseries"
    if X.ndim == 2:
        return "tabular"
    if X.ndim == 3 and X.dtype == np.uint8 and 1 in X.shape[1:]:
        # an image one pixel tall or wide is no image (it was stretched to 32x32): most likely series of small counts
        raise DataError(f"{where} has shape {X.shape} of uint8, which auto reads as images, here {X.shape[1]}x"
                        f"{X.shape[2]} pixels; if it is series (n, channels, length), give modality timeseries (or "
                        "X as floats); if images, modality image")
    if X.ndim == 4 or (X.ndim == 3 and X.dtype == np.uint8):
        return "image"
    if X.ndim == 3:
        return "timeseries"
    fix = "a column of one feature per example is X.reshape(-1, 1)" if X.ndim == 1 else \
        "use (n, features), (n, H, W[, C]) images or (n, channels, length) series"
    raise DataError(f"{where} has shape {X.shape}; {fix}")


def read_npz(path: Path, modality: str, image_channels: str, image_size: int) -> RawData:
    arrays = load_npz(path)
    check_names(arrays, [k for pair in SPLIT_KEYS.values() for k in pair], path)
    return from_arrays(arrays, modality, image_channels, image_size, str(path), f".npz file {path}")


def check_names(arrays: dict[str, np.ndarray], known: list[str], path: Path | str) -> None:
    """Refuse arrays fpt would not read: a misspelt X_test would otherwise drop the user's own test split."""
    from fpt.config import near

    unknown = sorted(k for k in arrays if k not in known)
    if unknown:
        raise DataError(f"{path}: unknown array {unknown[0]!r}{near(unknown[0], known)}; an .npz holds "
                        f"{', '.join(known)}: rename or drop it")


def _check_headers(path: Path) -> None:
    """Read each member's .npy header before numpy allocates it: a header that declares more data than the member
    holds (10^12 elements in a few bytes) would be a MemoryError, not a message."""
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            if not info.filename.endswith(".npy"):
                continue
            with z.open(info) as f:
                try:
                    version = np.lib.format.read_magic(f)
                    reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                        np.lib.format.read_array_header_2_0
                    shape, _, dtype = reader(f)
                except (ValueError, TypeError, OSError, EOFError) as exc:
                    raise DataError(f"{path}: array {info.filename[:-4]!r} has an unreadable header ({exc}); write the "
                                    "file again with np.savez") from None
            declared = math.prod(shape) * dtype.itemsize
            if declared > info.file_size:
                raise DataError(f"{path}: array {info.filename[:-4]!r} declares shape {shape} ({declared:,} bytes) but "
                                f"holds {info.file_size:,} bytes: truncated or corrupt; write the file again with np.savez")


def load_npz(path: Path) -> dict[str, np.ndarray]:
    """Every array of an .npz, refusing pickles, other formats and corrupt headers with a one-line DataError."""
    from fpt.data.sniff import check

    check(path, ".npz", "an .npz archive")
    try:
        with open(path, "rb") as f:
            head = f.read(6)
        if head == b"\x93NUMPY":
            raise DataError(f"{path}: a single .npy array (np.save), not an .npz archive; save the arrays with "
                            "np.savez(path, X=..., y=...)")
        if not zipfile.is_zipfile(path):
            raise DataError(f"{path}: not an .npz file (not a zip archive); write it with np.savez(path, X=..., y=...)")
        _check_headers(path)
        with np.load(path, allow_pickle=False) as f:
            return {k: f[k] for k in f.files}
    except ValueError as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(f"{path}: holds Python objects or unreadable arrays ({exc}); save plain numeric arrays "
                        "(np.savez(path, X=..., y=...))") from None
    except MemoryError:
        raise DataError(f"{path}: its arrays do not fit in memory; give fewer examples per file") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError) as exc:
        raise DataError(f"{path}: not a readable .npz file ({type(exc).__name__}: {exc}); write it with np.savez") from None


def from_arrays(arrays: dict[str, np.ndarray], modality: str, image_channels: str, image_size: int, name: str,
                source: str, indexed: bool = False) -> RawData:
    """``RawData`` from in-memory arrays named as in an .npz (``X``, ``y``, optionally ``X_val``, ...);
    ``name`` starts every error message, ``source`` says what was read. fpt.sklearn passes its fit() arrays.
    ``indexed``: the caller's own arrays (fpt.build's data=(X, y)), whose table's rows and cells errors name as the
    caller indexes them, from 0 (X[2], X[:, 1]; 'column 1' and 'row(s) 3' were a file's words)."""
    check_names(arrays, [k for pair in SPLIT_KEYS.values() for k in pair], name)  # X_tset in a dict, as in an .npz
    if "X" not in arrays or "y" not in arrays:
        raise DataError(f"{name}: arrays {sorted(arrays)}; an .npz needs X (inputs) and y (targets), optionally "
                        "X_val/y_val and X_test/y_test")
    kind = modality_of(arrays["X"], f"{name}: X") if modality == "auto" else modality
    held = _held(kind, name)  # how arrays hold this modality (fpt.data.modalities: its entry's ``arrays``)
    channels = held.channels(arrays["X"], image_channels)
    if kind == "timeseries":
        from fpt.data.timeseries import check_series_layout

        check_series_layout(arrays["X"], f"{name}: X")
    splits = {}
    shared: dict[str, Any] = {}  # how every split is read, as the training X is (Arrays.shared)
    for split, (xk, yk) in SPLIT_KEYS.items():
        if (xk in arrays) != (yk in arrays):
            raise DataError(f"{name}: {xk if xk in arrays else yk} without {yk if xk in arrays else xk}; give both")
        if xk not in arrays:
            continue
        X, y = arrays[xk], arrays[yk]
        where = f"{name} ({xk}, {yk})"
        if len(X) != len(y):
            raise DataError(f"{where}: {len(X)} inputs but {len(y)} targets; they must match one to one")
        if len(X) == 0:
            raise DataError(f"{where}: no examples")
        if isinstance(X, list):  # series of different lengths (series_list): checked here, read as they are
            with caller_examples(xk, keep=True):
                _check_series_list(X, kind, held.ragged, where, xk, arrays["X"])
        elif X.dtype.kind not in "iubf" and not (held.text and X.dtype.kind == "O"):
            raise DataError(f"{where}: {xk} has dtype {X.dtype}; inputs must be numbers")
        if not isinstance(X, list) and not held.missing:  # images: no pixel is missing, as predict refuses them
            with caller_examples(xk):
                refuse_nonfinite_pixels(X, where)
        elif not isinstance(X, list) and X.dtype.kind == "f" and np.isinf(X).any():
            n = int(np.isinf(X).sum())
            raise DataError(f"{where}: {_cell(xk, np.isinf(X))} is infinite ({n} value{'s' if n > 1 else ''} in all); "
                            "replace them with finite numbers, or NaN where a value is missing")
        if not isinstance(X, list) and X.dtype.kind == "f" and X.size \
                and float(np.nanmax(np.abs(np.where(np.isfinite(X), X, 0)))) > _FLOAT32_MAX:
            beyond = _cell(xk, np.abs(np.nan_to_num(X, nan=0.0)) > _FLOAT32_MAX)
            raise DataError(f"{where}: {beyond} holds a value beyond float32's range (±3.4e38), which the model "
                            "computes in; rescale the inputs (e.g. divide by a power of ten)")
        if not isinstance(X, list) and beyond_int64(X):  # uint64 hashes or ids: as values, neighbours merge
            wide = X >= np.uint64(2**63)
            raise DataError(f"{where}: {_cell(xk, wide)} is {int(X[wide][0])}, a whole number of 2**63 or more, "
                            "which float64 (and the model's float32) cannot tell from its neighbours: such numbers are "
                            "ids or hashes, not quantities; leave them out, or give a pandas DataFrame, which reads "
                            "them as categories")
        if held.ragged and not isinstance(X, list) and X.ndim >= 2 and X.shape[-1] == 0:
            raise DataError(f"{where}: {xk} has series of 0 points (shape {X.shape}); give at least one point per series")
        if not isinstance(X, list) and X.size == 0:  # (n, 0) features or (n, 0, 0) images: nothing to make tokens of
            raise DataError(f"{where}: {xk} has shape {X.shape}, no values per example; give at least one feature, "
                            "pixel or point per example")
        if not isinstance(X, list) and X.shape[1:] != arrays["X"].shape[1:] and not held.ragged:
            raise DataError(f"{where}: {xk} has shape {X.shape[1:]} per example but X has {arrays['X'].shape[1:]}")
        y = decoded(y, where, yk)
        y = y.reshape(len(y), -1) if y.ndim > 1 else y[:, None]
        if y.shape[1] == 0:  # y of shape (n, 0): no target to learn (each output is a column of y)
            raise DataError(f"{where}: {yk} has shape {y.shape}, no target per example; give one target per example "
                            "(shape (n,)) or one column per output (n, k)")
        for j in range(y.shape[1]):
            column = f"{where}: {yk}" + (f"[:, {j}]" if y.shape[1] > 1 else "")
            refuse_missing_targets(y[:, j], column)
            refuse_infinite_targets(y[:, j], column)
        y = y.astype(object) if y.dtype.kind not in "iubf" else y
        table = indexed and kind == "tabular" and not isinstance(X, list) and X.ndim == 2
        # an image's or a series' refusal names it as the caller indexes the array, X[3] (it said 'series 3')
        with frame_rows(xk, {f"x{j}": j for j in range(X.shape[1])}, ARRAY_CELLS) if table else \
                caller_examples(xk, keep=True):
            if split == "train" and not isinstance(X, list):
                shared = held.shared(X, where)
            splits[split] = Split(held.read(X, channels, image_size, where, **shared), y, where)
    targets = [f"y{j}" for j in range(splits["train"].y.shape[1])] if splits["train"].y.shape[1] > 1 else ["y"]
    how = "the data's own arrays (" + ", ".join(SPLIT_KEYS[s][0] for s in splits) + ")" if len(splits) > 1 else \
        SEEDED
    # a list of series has no shape: its channels and lengths are in the modality's notes (a shape of [n, text] made
    # the run directory unreadable: fpt.rundir.stored reads X_shape as whole numbers)
    notes: dict[str, Any] = {} if isinstance(arrays["X"], list) else {"X_shape": list(np.shape(arrays["X"]))}
    notes |= held.notes(splits, channels) | shared  # the input contract a trained model checks new inputs against
    return RawData(kind, splits, targets, source, how, notes)


def decoded(y: np.ndarray, where: str, key: str) -> np.ndarray:
    """Labels stored as bytes (numpy's 'S' arrays, as h5py and Python 2 pickles give them) as text: kept as bytes,
    the class b'cat' is a different class from the 'cat' of new inputs, and predictions print "b'cat'"."""
    if y.dtype.kind != "S" and not (y.dtype.kind == "O" and any(isinstance(v, bytes) for v in y.ravel())):
        return y
    try:
        return np.array([v.decode("utf-8") if isinstance(v, bytes) else v for v in y.ravel()],
                        dtype=object).reshape(y.shape)
    except UnicodeDecodeError as exc:
        raise DataError(f"{where}: {key} holds bytes that are not UTF-8 text ({exc.reason}); give labels as "
                        "text or numbers") from None


def series_cells(X: Any) -> Any:
    """A pandas Series of series (a cell per example: a list or an array of points, as a DataFrame's list column
    holds them) as the list of its cells, which every reader of X takes; anything else as it is. The estimators
    raised TypeError ('numpy.dtypes.ObjectDType' object is not iterable) and fpt.build read it as one feature per
    example, where a Predictor reads it as the list of series."""
    if not (hasattr(X, "iloc") and hasattr(X, "dtype") and not hasattr(X, "columns")) or X.dtype != object:
        return X
    first = next((c for c in X if c is not None and not isinstance(c, float)), None)
    return list(X) if is_series_cell(first) else X


def refuse_missing_series(X: Any, where: str, name: str = "X") -> None:
    """Refuse a missing example (None, NaN, pandas' NA) among series given as a list of them (or a pandas Series of
    them: ``series_cells``), naming the first as the caller indexes ``name`` (X[0], X.iloc[0] of a Series): the
    estimators raised scikit-learn's 'Expected 2D array, got 1D array instead' and fpt.build said 'X[1] has shape
    (12,), but X[0] has shape (); give examples of one shape (images resized ...)' (a DataFrame's column of lists
    with a NaN row after a merge holds one)."""
    said = missing_series(X, lambda i: f"{name}[{i}]") if isinstance(X, list | tuple) else None
    if said:
        raise DataError(f"{where}: {said}")


def series_list(X: Any) -> list[np.ndarray] | None:
    """Series of different lengths, given as a list (or tuple) of (L,) or (C, L) arrays or as an object array of
    them: each as a (C, L) float array (float64 ones kept, so that fpt.data.timeseries.narrowed counts the values
    float32 cannot hold before the cast). None when ``X`` is not one: a regular array, or a list of equal-length rows
    (np.asarray reads those, as before)."""
    if isinstance(X, np.ndarray) and X.dtype != object:
        return None
    if not isinstance(X, (list, tuple, np.ndarray)) or not len(X) or hasattr(X, "columns"):
        return None
    try:
        items = [np.asarray(s) for s in X]
    except (ValueError, TypeError):
        return None
    if not all(s.ndim in (1, 2) and s.dtype.kind in "iubf" for s in items):
        return None
    if len({s.shape for s in items}) == 1 and not isinstance(X, np.ndarray):
        return None
    return [(s[None, :] if s.ndim == 1 else s).astype(_wide(s.dtype)) for s in items]


def _wide(dtype: np.dtype) -> type:
    """float64 for float64 values (narrowed to float32 where their values are checked), float32 for the rest."""
    return np.float64 if dtype.kind == "f" and dtype.itemsize > 4 else np.float32


def is_nested_frame(X: Any) -> bool:
    """sktime's "nested_univ" DataFrame: a row per series, a column per channel, each cell the channel's points."""
    return hasattr(X, "columns") and hasattr(X, "iloc") and len(X) > 0 and len(X.columns) > 0 and \
        any(is_series_cell(c) for c in X.iloc[0])


def is_multiindex_frame(X: Any) -> bool:
    """sktime's "pd-multiindex" DataFrame: a row per time point, indexed by (instance, time), a column per channel."""
    return hasattr(X, "columns") and getattr(getattr(X, "index", None), "nlevels", 1) >= 2


def series_frame(X: Any, where: str, targets: int | None = None,
                 indexed: str | None = None) -> np.ndarray | list[np.ndarray] | None:
    """sktime's DataFrames of series (``is_nested_frame``, ``is_multiindex_frame``) as (n, C, L) float64 series (as
    their columns hold them; narrowed where their values are checked, fpt.data.timeseries.narrowed), a
    list of (C, L) ones where their lengths differ; None for any other ``X``, and for a multi-index frame with one of
    ``targets`` per row (a table that happens to have a two-level index). Read as a table, a nested frame was a table
    of text categories (each cell a Series) and a multi-index frame a table of a row per time point. ``indexed``: what
    the caller calls X's rows ('X.iloc'), which name a nested frame's rows from 0 (``series_of_cells``)."""
    if is_nested_frame(X):
        flat = [str(c) for c, cell in zip(X.columns, X.iloc[0], strict=True) if not is_series_cell(cell)]
        if flat:
            raise DataError(f"{where}: column {flat[0]!r} holds one value per row beside columns of series (sktime's "
                            "nested DataFrame: a column per channel, each cell a series); pass the target apart, "
                            "as (X, y), or name it with target=")
        series = series_of_cells(X.itertuples(index=False), [str(c) for c in X.columns], where, indexed=indexed)
    elif is_multiindex_frame(X) and targets != len(X):
        text = [str(c) for c in X.columns if getattr(X[c].dtype, "kind", "O") not in "iufb"]
        if text:
            raise DataError(f"{where}: column {text[0]!r} is not numbers; a multi-index DataFrame of series (sktime's "
                            "pd-multiindex: rows indexed by instance and time) holds a channel per column")
        levels = list(range(X.index.nlevels - 1))  # every level but the last names the series; the last is time
        series = []
        for key, rows in X.groupby(level=levels, sort=False):  # the series in order of first appearance, as y is
            times = rows.index.get_level_values(-1)
            if times.has_duplicates:
                at = _series_key(key, indexed)
                head = caller_head(where, indexed) if indexed is not None else where  # 'X: X.loc['b']': X twice
                raise DataError(f"{head}: {at} has two rows at time {plain_value(times[times.duplicated()][0])!r}; "
                                "give one row per time point")
            series.append(rows.sort_index(level=-1).to_numpy(dtype=np.float64).T)
    else:
        return None
    # a series of no points is refused where its row is read (series_of_cells): a multi-index one has a row per point
    return np.stack(series) if len({s.shape for s in series}) == 1 else series


def _series_key(key: Any, indexed: str | None) -> str:
    """A multi-index DataFrame's series as its caller selects it, X.loc['b'] (X.loc[(0, 1)] under two levels), by the
    name the caller gives X (``indexed``'s 'X' of 'X.iloc'); 'the series indexed 'b'' where the name is unknown."""
    key = key[0] if isinstance(key, tuple) and len(key) == 1 else key
    shown_key = tuple(plain_value(k) for k in key) if isinstance(key, tuple) else plain_value(key)
    if indexed is None:
        return f"the series indexed {shown_key!r}"
    return f"{indexed.rsplit('.', 1)[0]}.loc[{shown_key!r}]"


def frame_channels(X: Any) -> list[str] | None:
    """The channel names (columns) of a DataFrame of series (``series_frame`` reads one), or None."""
    return [str(c) for c in X.columns] if is_nested_frame(X) or is_multiindex_frame(X) else None


def in_trained_order(X: Any, names: list[str] | None, where: str) -> Any:
    """A DataFrame of series with its channel columns in the order training read them (``names``, recorded as
    ``CHANNEL_NAMES``): a frame whose columns were in another order was read channel by channel as it came, each
    channel where another was trained, without a word. Columns of other names are an error naming both; any other
    ``X`` (arrays carry no names), or a model that recorded none, is returned as it is."""
    given = frame_channels(X)
    if given is None or not names or given == list(names):
        return X
    if sorted(given) != sorted(names):
        raise SchemaError(f"{where}: channels (columns) {shown(given)}, but the model was trained on {shown(names)}; "
                          "give the same channels, by the same names")
    return X[[X.columns[given.index(n)] for n in names]]


def _cell(xk: str, marked: np.ndarray) -> str:
    """The first cell ``marked`` marks of the array called ``xk``, as its caller indexes it, from 0 (X[7, 1],
    X[3, 2, 2, 0] of images): 'X is infinite in example 7' named the row alone."""
    return f"{xk}[{', '.join(str(int(k)) for k in np.argwhere(marked)[0])}]"


def _check_series_list(X: list[np.ndarray], kind: str, ragged: bool, where: str, xk: str, train: Any) -> None:
    if not ragged:
        raise DataError(f"{where}: {xk} is a list of series of different lengths, which only modality timeseries "
                        f"reads, not {kind}; give one array of equal rows, or modality timeseries")
    for i, s in enumerate(X):  # each as the caller indexes the list, X[3] ('series 3 of X' beside X[3]'s neighbours)
        if not s.shape[1]:
            raise DataError(f"{where}: {example_word('series', i)} has no values (no points); give it values or "
                            "drop it")  # as series_from_array says of one of every point missing, and predict of both
        first = np.shape(train[0])[0] if isinstance(train, list) else None  # a list's series are (C, L)
        if first is not None and s.shape[0] != first:  # said after the read as 'series 3' (from 0) of X[3]
            raise DataError(f"{where}: {example_word('series', i)} has {s.shape[0]} channel(s), but X[0] has {first}; "
                            "give every series the same channels")
        if np.isinf(s).any():
            raise DataError(f"{where}: {example_word('series', i)} is infinite at point "
                            f"{int(np.flatnonzero(np.isinf(s).any(0))[0])}; replace it with a finite number, or NaN "
                            "where a value is missing")


def _held(kind: str, name: str) -> Any:
    """``kind``'s entry's ``Arrays`` (fpt.data.modalities), or a DataError naming the modalities arrays hold."""
    from fpt.data.modalities import MODALITIES

    entry = MODALITIES.get(kind)
    if entry is None or entry.arrays is None:
        held = [m for m, e in MODALITIES.items() if e.arrays is not None]
        raise DataError(f"{name}: arrays of numbers hold {', '.join(held[:-1])} or {held[-1]} data, not {kind}: give "
                        f"{option('modality')} one of those, or auto")
    return entry.arrays


def read_npz_inputs(path: Path, checks: Checks) -> Inputs:
    """``fpt predict``'s reader of an .npz: ``X`` (and optionally ``y``, to score), or ``X_test``/``y_test``."""
    arrays = load_npz(path)
    check_names(arrays, ["X", "y", "X_test", "y_test"], path)
    xk, yk = ("X", "y") if "X" in arrays else ("X_test", "y_test")
    if xk not in arrays:
        raise DataError(f"{path}: arrays {sorted(arrays)}; give X (and optionally y, to score), or X_test/y_test")
    X, y = arrays[xk], arrays.get(yk)
    targets = checks.schema.targets
    if y is not None:
        if len(y) != len(X):
            raise DataError(f"{path}: {len(X)} inputs in {xk} but {len(y)} targets in {yk}; they must match one to one")
        y = decoded(y, str(path), yk)
        y = y.reshape(len(y), -1) if y.ndim > 1 else y[:, None]
        if y.shape[1] != len(targets):
            raise SchemaError(f"{path}: {yk} has {y.shape[1]} target(s) per example, the model predicts "
                              f"{len(targets)}; give {len(targets)} or drop {yk}")
        y = y.astype(object)
        for j, t in enumerate(targets):
            check_target_values(y[:, j], t, f"{path} ({yk})")
        checks.labels(y, f"{path} ({yk})")
    # its examples and cells as its arrays are indexed, X[2] and X[2, 1] from 0, as fpt.build names the same file's
    # ('image 3' of X[2], where fpt.build said X[2, 0, 1, 1])
    schema = checks.schema
    named = frame_rows(xk, {name: j for j, name in enumerate(schema.features)}, ARRAY_CELLS) \
        if schema.modality == "tabular" else caller_examples(xk)
    with named:
        return Inputs(checks.arrays(X, f"{path} ({xk})"), y, str(path))


__all__ = ["CHANNEL_NAMES", "check_names", "decoded", "frame_channels", "from_arrays", "in_trained_order", "series_cells",
           "is_multiindex_frame", "is_nested_frame", "load_npz", "modality_of", "read_npz", "read_npz_inputs",
           "series_frame", "series_list"]

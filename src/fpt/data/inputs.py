"""New inputs for a trained model (``fpt predict``, ``fpt.load(...).predict``), checked against its schema.

A trained model's schema is what its run saved (``data.json``: the modality, the fitted tokeniser,
the feature and target columns, the class map) plus facts its training summary recorded about the
training files (``X_shape`` of an .npz, ``train_lengths`` of time series). New inputs come in the
formats ``--data`` reads, one set of examples at a time:

==========================================  =====================================================
input                                        read as
==========================================  =====================================================
``x.csv``/``.tsv``/``.jsonl``/``.parquet``   a table: the training feature columns, optionally the
                                             target column(s) (then the predictions are scored)
``DIR/*.png`` or ``DIR/<class>/*.png``       images, unlabelled or labelled by their class folder
``NAME.ts``/``NAME_TEST.tsv`` (UCR/UEA)      time series with their labels
``x.npz``                                    ``X`` (and optionally ``y``), or ``X_test``/``y_test``
==========================================  =====================================================

Nothing is refitted: the tokeniser, class map and target scaler are the training run's. What
does not match (a missing or extra column, text in a numeric column, a category never seen in
training, an image of other channels or array shape, a series of other channels or length) is a
one-line ``SchemaError`` naming the file, the column or example, and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fpt.data.base import SPLIT_COLUMN, check_target_values, is_missing
from fpt.data.modalities import modality
from fpt.data.tokenisers import plain_value
from fpt.errors import DataError, SchemaError


class CutInputWarning(UserWarning):
    """Inputs longer than the model reads were cut, as training cut its own longer examples."""


ALLOW_UNSEEN_FIX = "or pass --allow-unseen (Python: allow_unseen=True) to map unseen categories to the shared unknown slot"


@dataclass
class Inputs:
    """Examples in the modality's raw form (what the tokeniser takes), with their targets when given."""

    x: Any  # tabular/sequence: {column: (n,) array}; image: [(S, S, C) uint8]; timeseries: [(C, L) float]
    y: np.ndarray | None  # (n, m) raw target values, or None when the input has no targets
    where: str  # the file (or "inputs"), for messages
    names: list[str] | None = None  # per example, e.g. image files: written beside the predictions
    notes: list[str] = field(default_factory=list)  # what was done to the inputs (e.g. series cut), for the user

    def __len__(self) -> int:
        if isinstance(self.x, dict):
            return len(next(iter(self.x.values()))) if self.x else 0
        return len(self.x)


@dataclass(frozen=True)
class Schema:
    """What a model was trained on: the run's fitted preprocessing and facts about its training data."""

    prep: Any  # fpt.tasks.user_data.Preprocessing
    info: dict[str, Any] = field(default_factory=dict)  # the summary's task_info (X_shape, train_lengths, ...)
    max_categories: int = 50  # the run's --max-categories: a shorter category list is every training category

    @property
    def modality(self) -> str:
        return self.prep.modality

    @property
    def features(self) -> list[str]:
        """The feature columns; a table from arrays (an .npz, the scikit-learn estimators) names them x0, x1, ...
        in its tokeniser only."""
        if not self.prep.features and self.modality == "tabular":
            return [f["name"] for f in self.prep.tokeniser.features]
        return list(self.prep.features)

    @property
    def targets(self) -> list[str]:
        return list(self.prep.targets)

    def describe(self) -> dict[str, Any]:
        """The input schema in words and numbers (the model card and config.json show it)."""
        out: dict[str, Any] = {"modality": self.modality, "targets": self.targets,
                               **modality(self.modality).describe(self.prep.tokeniser, self.features, self.info)}
        if "X_shape" in self.info:
            out["npz_X_shape"] = self.info["X_shape"]
        return out


def _shown(names: list[str], limit: int = 12) -> str:
    return ", ".join(map(str, names[:limit])) + (" ..." if len(names) > limit else "")


# ---------------------------------------------------------------------------------------------- files


def read_inputs(path: str | Path, schema: Schema, allow_unseen: bool = False) -> Inputs:
    """Read and check the examples in ``path`` (one set: a file, or a folder of images)."""
    from fpt.data.tables import BUILDERS

    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file or folder")
    suffix = p.suffix.lower()
    if p.is_dir():
        if schema.modality == "image":
            return _image_folder(p, schema)
        from fpt.data.tables import split_files

        hint = modality(schema.modality).predict_input
        found = " (it holds split files " + ", ".join(f.name for f in split_files(p).values()) + ")" \
            if schema.modality != "timeseries" and split_files(p) else ""
        raise DataError(f"{p}: a folder{found}; the model takes {schema.modality} data: give {hint}")
    if suffix == ".npz":
        return _npz(p, schema, allow_unseen)
    if schema.modality == "timeseries":
        if suffix not in {".ts", ".tsv"}:
            raise SchemaError(f"{p}: the model was trained on time series; give a UCR/UEA .ts or .tsv file or an .npz "
                              f"of X (n, channels, length), not {suffix or 'a file without suffix'}")
        return _series_file(p, schema)
    if suffix == ".ts":
        raise SchemaError(f"{p}: a time series file, but the model was trained on {schema.modality} data; give "
                          + ("a folder of images" if schema.modality == "image" else "a table (.csv, .tsv, ...)")
                          + " or an .npz")
    if suffix in BUILDERS:
        if schema.modality not in {"tabular", "sequence"}:
            raise SchemaError(f"{p}: a table, but the model was trained on {schema.modality} data; give "
                              + ("a folder of images" if schema.modality == "image" else "a .ts/.tsv file") + " or an .npz")
        from fpt.data.tables import read_columns

        return check_columns(read_columns(p), schema, str(p), allow_unseen)
    raise DataError(f"{p}: unknown format {suffix or '(no suffix)'!r}; give a .csv, .tsv, .jsonl, .parquet, .npz, .ts "
                    "file or a folder of images")


# ---------------------------------------------------------------------------------------------- tables


def check_columns(columns: Mapping[str, Any], schema: Schema, where: str, allow_unseen: bool = False) -> Inputs:
    """Table columns as the model's inputs: the training features (and, if every one is there, its targets)."""
    if schema.modality not in {"tabular", "sequence"}:
        raise SchemaError(f"{where}: columns of a table, but the model was trained on {schema.modality} data")
    cols = {str(k): np.asarray(v) for k, v in columns.items() if str(k) != SPLIT_COLUMN}
    if not cols:
        raise SchemaError(f"{where}: no columns; the model needs {_shown(schema.features)}")
    lengths = {len(v) for v in cols.values()}
    if len(lengths) > 1:
        raise SchemaError(f"{where}: columns of different lengths {sorted(lengths)}; give one value per row in each")
    features, targets = schema.features, schema.targets
    missing = [f for f in features if f not in cols]
    if missing:
        raise SchemaError(f"{where}: no column {missing[0]!r}" + (f" (nor {_shown(missing[1:], 5)})" if len(missing) > 1
                                                                  else "")
                          + f", which the model was trained on; add it (empty values count as missing). The model's "
                          f"feature columns: {_shown(features)}")
    extra = [c for c in cols if c not in features and c not in targets]
    if extra:
        raise SchemaError(f"{where}: column {extra[0]!r}" + (f" (and {_shown(extra[1:], 5)})" if len(extra) > 1 else "")
                          + f" was not a feature when the model was trained; drop it. The model's feature columns: "
                          f"{_shown(features)}; target(s): {', '.join(targets)}")
    given = [t for t in targets if t in cols]
    if given and len(given) != len(targets):
        absent = [t for t in targets if t not in cols]
        raise SchemaError(f"{where}: target column(s) {', '.join(map(repr, given))} but not {', '.join(map(repr, absent))}; "
                          "give every target column (to score the predictions) or none")
    x: dict[str, np.ndarray] = {}
    if schema.modality == "sequence":
        (name,) = features
        col = cols[name]
        x[name] = col if col.dtype.kind == "O" else np.array([None if m else str(plain_value(v)) for v, m in
                                                              zip(col, is_missing(col), strict=True)], dtype=object)
    else:
        for f in schema.prep.tokeniser.features:
            x[f["name"]] = _check_feature(cols[f["name"]], f, where, schema.max_categories, allow_unseen)
    y = None
    if given:
        for t in targets:
            check_target_values(cols[t], t, where)
        y = np.stack([cols[t].astype(object) for t in targets], axis=1)
        _check_labels(y, schema, where)
    return Inputs(x, y, where)


def _check_feature(col: np.ndarray, f: dict[str, Any], where: str, max_categories: int, allow_unseen: bool) -> np.ndarray:
    name = f["name"]
    missing = is_missing(col)
    if f["kind"] == "numeric":
        if col.dtype.kind in "iubf":
            return col
        out = np.full(len(col), np.nan)
        for i in np.flatnonzero(~missing):
            try:
                out[i] = float(col[i])
            except (TypeError, ValueError):
                raise SchemaError(f"{where}: column {name!r}, row {i + 1}: {col[i]!r} is not a number, but the model "
                                  "was trained on numbers in this column; fix the value or leave it empty "
                                  "(missing)") from None
        return out
    values = np.array([None if m else str(plain_value(v)) if col.dtype.kind in "iubf" else str(v)
                       for v, m in zip(col, missing, strict=True)], dtype=object)
    categories = f["categories"]
    # Training kept the max_categories most frequent categories; a shorter list holds every category it saw,
    # so anything else is new to the model (a longer one may have dropped rare ones into the unknown slot).
    complete = len(categories) < max_categories
    if complete and not allow_unseen:
        known = set(categories)
        for i in np.flatnonzero(~missing):
            if values[i] not in known:
                raise SchemaError(f"{where}: column {name!r}, row {i + 1}: category {values[i]!r} was not seen in "
                                  f"training (the model knows {_shown([repr(c) for c in categories], 10)}); fix the "
                                  f"value, {ALLOW_UNSEEN_FIX}")
    return values


def _check_labels(y: np.ndarray, schema: Schema, where: str) -> None:
    """Classification targets must be among the model's classes; regression targets must be numbers."""
    classes = schema.prep.classes
    for j, target in enumerate(schema.targets):
        if classes is None:
            for i, v in enumerate(y[:, j]):
                try:
                    float(v)
                except (TypeError, ValueError):
                    raise SchemaError(f"{where}: target {target!r}, row {i + 1}: {v!r} is not a number, but the model "
                                      "predicts numbers; fix it, or drop the target column to predict without "
                                      "scoring") from None
            continue
        known = set(classes[j])
        for i, v in enumerate(y[:, j]):
            if plain_value(v) not in known:
                raise SchemaError(f"{where}: target {target!r}, row {i + 1}: label {v!r} is not one of the model's "
                                  f"classes ({_shown([repr(c) for c in classes[j]], 10)}); fix it, or drop the target "
                                  "column to predict without scoring")


# ---------------------------------------------------------------------------------------------- images


def _image_folder(path: Path, schema: Schema) -> Inputs:
    """``DIR/*.png`` (unlabelled) or ``DIR/<class>/*.png`` (labelled by folder), decoded as training did."""
    from fpt.data.images import HF_SPLITS, IMAGE_SUFFIXES

    flat = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
    folders = sorted(d for d in path.iterdir() if d.is_dir() and not d.name.startswith("."))
    splits = [d.name for d in folders if d.name.lower() in HF_SPLITS]
    if splits:
        raise DataError(f"{path}: split folders ({', '.join(splits)}); give one split's folder, e.g. {path / splits[-1]}")
    if flat and folders:
        raise DataError(f"{path}: both images and class folders ({folders[0].name}/); give a folder of images "
                        "(unlabelled) or of class folders (labelled), not both")
    files: list[tuple[Path, str | None]] = [(p, None) for p in flat]
    for d in folders:
        files += [(p, d.name) for p in sorted(d.iterdir()) if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES]
    if not files:
        raise DataError(f"{path}: no images (.png/.jpg/...) in it or in class folders DIR/<class>/")
    images = [_load_image(p, schema) for p, _ in files]
    y = None
    if folders:
        y = np.array([label for _, label in files], dtype=object)[:, None]
        _check_labels(y, schema, f"{path}/<class>/")
    return Inputs(images, y, str(path), [str(p.relative_to(path)) for p, _ in files])


def _load_image(file: Path, schema: Schema) -> np.ndarray:
    from fpt.data.images import _has_colour, load_image

    tok = schema.prep.tokeniser
    # Training converted every image to the channels it chose; colour given to a grayscale model would be
    # silently dropped, so it is refused (grayscale to an RGB model is lossless, as training did it).
    if tok.channels == "gray" and _has_colour(str(file)):
        raise SchemaError(f"{file}: a colour image, but the model was trained on grayscale images; convert it to "
                          "grayscale, or train a model on colour images (--image-channels rgb)")
    # Files of any size are resized to image_size, as the training images were.
    return load_image(file, tok.channels, tok.image_size)


def check_images(X: Any, schema: Schema, where: str) -> list[np.ndarray]:
    """Image arrays, (n, H, W[, C]) or a list of (H, W[, C]): the training array shape, or the model's own."""
    tok = schema.prep.tokeniser
    c = 3 if tok.channels == "rgb" else 1
    own = {(tok.image_size, tok.image_size, c), (c, tok.image_size, tok.image_size)} | \
        ({(tok.image_size, tok.image_size)} if c == 1 else set())
    trained = tuple(schema.info["X_shape"][1:]) if "X_shape" in schema.info else None
    arrays = [np.asarray(img) for img in X] if isinstance(X, (list, tuple)) else list(np.asarray(X))
    if not arrays:
        raise SchemaError(f"{where}: no images")
    for i, img in enumerate(arrays):
        if img.shape != trained and img.shape not in own:
            expected = " or ".join(str(s) for s in ([trained] if trained else []) + sorted(own))
            raise SchemaError(f"{where}: image {i + 1} has shape {img.shape}, but the model takes {expected} "
                              f"({tok.channels}, {tok.image_size}x{tok.image_size} pixels); resize or convert it")
        if img.dtype.kind not in "iubf":
            raise SchemaError(f"{where}: image {i + 1} has dtype {img.dtype}; give numbers (uint8 0-255 or floats 0-1)")
    from fpt.data.arrays import _as_images

    return [im for img in arrays for im in _as_images(img[None], tok.channels, tok.image_size, where)]


# ---------------------------------------------------------------------------------------------- time series


def _series_file(path: Path, schema: Schema) -> Inputs:
    from fpt.data.timeseries import read_ts, read_ucr_tsv

    reader = read_ts if path.suffix.lower() == ".ts" else read_ucr_tsv
    series, y, _ = reader(path)
    checked = check_series(series, schema, str(path))
    y2 = y[:, None].astype(object)
    _check_labels(y2, schema, str(path))
    return Inputs(checked, y2, str(path))


def _train_lengths(schema: Schema) -> tuple[int, int] | None:
    text = schema.info.get("train_lengths")
    try:
        lo, hi = (int(v) for v in str(text).split(".."))
        return lo, hi
    except ValueError:
        return None


def check_series(X: Any, schema: Schema, where: str) -> list[np.ndarray]:
    """Series (n, C, L), (n, L) or a list of (C, L) / (L,) arrays: the training channels and lengths."""
    tok = schema.prep.tokeniser
    if isinstance(X, np.ndarray) and X.ndim == 2:
        X = X[:, None, :]
    out = []
    lengths = _train_lengths(schema)
    for i, s in enumerate(X):
        s = np.asarray(s, dtype=np.float32)
        s = s[None, :] if s.ndim == 1 else s
        if s.ndim != 2:
            raise SchemaError(f"{where}: series {i + 1} has shape {s.shape}; give (channels, length)")
        if np.isinf(s).any():
            raise SchemaError(f"{where}: series {i + 1} holds an infinite value; replace it with a finite number, or "
                              "NaN where a value is missing")
        if s.shape[0] != tok.channels:
            raise SchemaError(f"{where}: series {i + 1} has {s.shape[0]} channel(s), but the model was trained on "
                              f"{tok.channels}; give series of {tok.channels} channel(s) in the training order")
        n = s.shape[1]
        if lengths is not None and lengths[0] == lengths[1] and n != lengths[0]:
            raise SchemaError(f"{where}: series {i + 1} has {n} points, but every training series had {lengths[0]}; "
                              f"resample or pad it to {lengths[0]} points")
        # Training of varied lengths: a series longer than the model reads (max_points) is kept, and the tokeniser
        # cuts it to its first windows, as it cut the longer series of the run's own test split (JapaneseVowels'
        # TEST file has series longer than any training one); Predictor.tokens says so in a warning and the notes.
        out.append(s)
    if not out:
        raise SchemaError(f"{where}: no series")
    return out


# ---------------------------------------------------------------------------------------------- arrays


def _npz(path: Path, schema: Schema, allow_unseen: bool) -> Inputs:
    arrays = load_npz(path)
    from fpt.data.arrays import check_names

    check_names(arrays, ["X", "y", "X_test", "y_test"], path)
    xk, yk = ("X", "y") if "X" in arrays else ("X_test", "y_test")
    if xk not in arrays:
        raise DataError(f"{path}: arrays {sorted(arrays)}; give X (and optionally y, to score), or X_test/y_test")
    X, y = arrays[xk], arrays.get(yk)
    where = f"{path} ({xk})"
    if y is not None:
        if len(y) != len(X):
            raise DataError(f"{path}: {len(X)} inputs in {xk} but {len(y)} targets in {yk}; they must match one to one")
        y = y.reshape(len(y), -1) if y.ndim > 1 else y[:, None]
        if y.shape[1] != len(schema.targets):
            raise SchemaError(f"{path}: {yk} has {y.shape[1]} target(s) per example, the model predicts "
                              f"{len(schema.targets)}; give {len(schema.targets)} or drop {yk}")
        y = y.astype(object)
        for j, t in enumerate(schema.targets):
            check_target_values(y[:, j], t, f"{path} ({yk})")
        _check_labels(y, schema, f"{path} ({yk})")
    return Inputs(check_arrays(X, schema, where, allow_unseen), y, str(path))


def load_npz(path: Path) -> dict[str, np.ndarray]:
    from fpt.data.arrays import load_npz as load

    return load(path)


def check_arrays(X: Any, schema: Schema, where: str, allow_unseen: bool = False) -> Any:
    """An input array (or list) in the modality's raw form, checked; tables take (n, features) in feature order."""
    if schema.modality == "image":
        return check_images(X, schema, where)
    if schema.modality == "timeseries":
        return check_series(X, schema, where)
    if schema.modality == "sequence":
        texts = np.asarray(X, dtype=object).reshape(-1)
        return check_columns({schema.features[0]: texts}, schema, where, allow_unseen).x
    X = np.asarray(X)
    if X.ndim != 2:
        raise SchemaError(f"{where}: shape {X.shape}; a table model takes (n, {len(schema.features)}) values, one column "
                          f"per feature ({_shown(schema.features)})")
    if X.shape[1] != len(schema.features):
        raise SchemaError(f"{where}: {X.shape[1]} column(s), but the model was trained on {len(schema.features)} "
                          f"features ({_shown(schema.features)}); give them in that order")
    return check_columns({name: X[:, j] for j, name in enumerate(schema.features)}, schema, where, allow_unseen).x


def as_inputs(data: Any, schema: Schema, allow_unseen: bool = False) -> Inputs:
    """In-memory inputs (Python API): a file path, a pandas DataFrame, a dict of columns, or arrays / lists."""
    if isinstance(data, (str, Path)):
        return read_inputs(data, schema, allow_unseen)
    if hasattr(data, "columns") and hasattr(data, "to_numpy"):  # a pandas DataFrame, without importing pandas
        data = {str(c): data[c].to_numpy() for c in data.columns}
    if isinstance(data, Mapping):
        return check_columns(data, schema, "inputs", allow_unseen)
    return Inputs(check_arrays(data, schema, "inputs", allow_unseen), None, "inputs")


__all__ = ["CutInputWarning", "Inputs", "Schema", "as_inputs", "check_arrays", "check_columns", "check_images", "check_series",
           "load_npz", "read_inputs"]

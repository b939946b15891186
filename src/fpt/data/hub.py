"""Hugging Face datasets: a hub id (``imdb``, ``owner/name``) or a local directory written by
``Dataset.save_to_disk`` / ``DatasetDict.save_to_disk``, through ``datasets`` itself.

A hub id that cannot be fetched fails within seconds, naming the cause: an offline switch set (``HF_DATASETS_OFFLINE``,
``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE``, read as datasets reads them: ``fpt.hub``) and the dataset not in the
local cache, or the hub unreachable (checked with one short TCP
connection before ``datasets`` would retry for minutes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from fpt.data.base import SEEDED, RawData, Split
from fpt.data.images import HF_SPLITS, level_notes, load_image, shows_colour, spread
from fpt.data.pixel_depth import white_level
from fpt.data.tables import _cause, arrow_values, columns_to_raw, quiet_datasets
from fpt.errors import ConfigError, DataError, option

# A dataset's label column, where none is named: the first of these it has (Hugging Face's image sets call it "label")
LABEL_COLUMNS = ("label", "labels", "target", "class", "y")


def is_saved_dataset(path: Path) -> bool:
    return path.is_dir() and ((path / "dataset_dict.json").exists() or (path / "state.json").exists())


def load_hub(name: str, target: str | None, modality: str, image_channels: str, image_size: int,
             drop: tuple[str, ...] = (), series: tuple[str, ...] = ()) -> RawData:
    datasets = quiet_datasets()
    path = Path(name)
    if is_saved_dataset(path):
        try:
            dd = datasets.load_from_disk(str(path))
        except Exception as exc:
            raise DataError(f"{path}: not a readable saved dataset ({_cause(exc)}); write it with "
                            "save_to_disk()") from None
        source = f"saved Hugging Face dataset {path}"
    else:
        from fpt.hub import DATASETS_OFFLINE, hub_reachable, offline_switch

        offline = offline_switch(DATASETS_OFFLINE)  # offline, datasets reads its cache: no connection to try first
        if offline is None:
            reachable, why = hub_reachable()
            if not reachable:
                raise DataError(f"{option('data', name)} is not a file or folder here, and as a Hugging Face "
                                f"dataset id it cannot be fetched: the hub cannot be reached ({why}); give a local file "
                                "or folder")
        try:
            dd = datasets.load_dataset(name)
        except Exception as exc:
            cause = (f"{offline} is set and it is not in the local Hugging Face cache" if offline is not None
                     else _cause(exc))
            raise DataError(f"{option('data', name)} is not a file or folder here, and as a Hugging Face dataset "
                            f"id it cannot be loaded ({cause}); give a local file or folder, or a saved dataset "
                            "directory (save_to_disk)") from None
        source = f"Hugging Face dataset {name}"
    raw = from_datasets(dd, name, source, target, modality, image_channels, image_size, drop, series)
    if not is_saved_dataset(path):  # a saved dataset's folder is hashed as any --data folder is (fpt.data.load)
        from fpt.data.digest import of_datasets

        raw.fingerprint = of_datasets(dd)  # what was loaded: the cache's revision, where of_path sees no such file
    return raw


def is_datasets(data: Any) -> bool:
    """Whether ``data`` is a ``datasets.Dataset`` or ``DatasetDict`` (without importing ``datasets`` when it is not
    loaded: nothing else can be one then)."""
    import sys

    datasets = sys.modules.get("datasets")
    return datasets is not None and isinstance(data, (datasets.Dataset, datasets.DatasetDict))


def streamed(data: Any, where: str) -> None:
    """A streaming ``datasets.IterableDataset`` (or ``IterableDatasetDict``) is refused naming how to make it a
    ``Dataset``: fpt reads every example to split, standardise and cross-validate, which a stream does not hold
    (a dict of its splits was read as arrays named train, test, ...)."""
    import sys

    datasets = sys.modules.get("datasets")
    if datasets is None or not isinstance(data, (datasets.IterableDataset, datasets.IterableDatasetDict)):
        return
    raise ConfigError(f"{where}: a streaming datasets.{type(data).__name__} has no rows in memory, and fpt reads every "
                      "example; load it without streaming (load_dataset(..., streaming=False)), or take some: "
                      "datasets.Dataset.from_list(list(ids.take(N)))")


def from_datasets(dd: Any, name: str, source: str, target: str | None, modality: str, image_channels: str,
                  image_size: int, drop: tuple[str, ...] = (), series: tuple[str, ...] = ()) -> RawData:
    """A ``datasets.Dataset`` (one split, held out as for a file) or ``DatasetDict`` (its own splits), saved or in
    memory, read by its features: an ``Image`` column makes images, a ``ClassLabel`` gives its names as the labels."""
    datasets = quiet_datasets()
    if isinstance(dd, datasets.Dataset):
        dd = {"train": dd}
    splits = {HF_SPLITS.get(k, k): v for k, v in dd.items()}
    unknown = sorted(set(splits) - {"train", "val", "test"})
    if unknown or "train" not in splits:
        raise DataError(f"{name}: splits {sorted(dd)}; fpt reads train (and validation/test); save the dataset with "
                        "those split names")
    readable = {k: _readable(v) for k, v in splits.items()}
    splits = {k: ds for k, (ds, _) in readable.items()}
    image = readable["train"][1]
    how = "the dataset's own splits" if len(splits) > 1 else SEEDED
    if image is not None:
        return _images(splits, image, target, image_channels, image_size, source, how)
    parts = {}
    for split, ds in splits.items():
        cols = {}
        for col, feat in ds.features.items():
            values = arrow_values(ds.data.column(col))
            if isinstance(feat, datasets.ClassLabel):
                values = _class_names(feat, values, col, f"{source} [{split}]")
            cols[col] = values
        parts[split] = (cols, f"{name} [{split}]")
    return columns_to_raw(parts, target, modality, source, how, drop, series)


def _class_names(feat: Any, values: Any, column: str, where: str) -> np.ndarray:
    """A ClassLabel column's values as its class names. -1 is datasets' "no label" (a benchmark's hidden test labels,
    GLUE's and Kaggle's): indexing the names with it would give every such row the last class, and a test split
    scored against it."""
    codes = np.asarray(values, dtype=np.int64)
    unlabelled = np.flatnonzero(codes < 0)
    if unlabelled.size:
        raise DataError(f"{where}: column {column!r} is -1 (no label) on {unlabelled.size} of {codes.size} rows (first "
                        f"row {int(unlabelled[0])}); leave those rows out (ds.filter(lambda r: r[{column!r}] != -1)), or "
                        "the split if none has a label, and predict them with fpt.load(RUN).predict")
    return np.array([feat.names[int(v)] for v in codes], dtype=object)


def _readable(ds: Any) -> tuple[Any, str | None]:
    """A ``datasets.Dataset`` as fpt reads it, and its first ``Image`` column (None without one). A view (select,
    shuffle, train_test_split) is written out first: its Arrow table ``.data`` is the whole underlying table, in its
    own order. An ``Image(decode=False)`` column (dicts of bytes and path) is decoded as any image column is."""
    datasets = quiet_datasets()
    if getattr(ds, "_indices", None) is not None:
        ds = ds.flatten_indices()
    image = next((c for c, f in ds.features.items() if isinstance(f, datasets.Image)), None)
    if image is not None and not ds.features[image].decode:
        ds = ds.cast_column(image, datasets.Image())
    return ds, image


def dataset_columns(ds: Any, where: str) -> tuple[dict[str, Any], str | None]:
    """A ``datasets.Dataset`` given to a trained model, as (columns, its Image column or None): a ClassLabel's names
    for its integers, and a ClassLabel of -1 throughout (a benchmark's unlabelled test split) left out, so that the
    examples are predicted without scoring."""
    datasets = quiet_datasets()
    if isinstance(ds, datasets.DatasetDict):
        raise DataError(f"{where}: a DatasetDict of splits {sorted(ds)}; give one split, e.g. dd[{sorted(ds)[-1]!r}]")
    ds, image = _readable(ds)
    cols: dict[str, Any] = {}
    for col, feat in ds.features.items():
        if col == image:
            cols[col] = list(ds[col])
            continue
        values = ds.data.column(col).to_numpy(zero_copy_only=False)
        if isinstance(feat, datasets.ClassLabel):
            if len(values) and (np.asarray(values, dtype=np.int64) < 0).all():
                continue  # no labels at all: nothing to score
            values = _class_names(feat, values, col, where)
        cols[col] = values
    return cols, image


def _images(splits, column: str, target: str | None, channels: str, size: int, source: str, how: str) -> RawData:  # noqa: ANN001
    train = splits["train"]
    label = target or next((c for c in LABEL_COLUMNS if c in train.features), None)
    if label is None or label not in train.features:
        raise DataError(f"{source}: no label column among {list(train.features)}; give "
                        f"{option('target', 'NAME', placeholder=True)}")
    if channels == "auto":
        # as for an image folder: colour shown, not the mode (a grayscale photo saved as RGB, a palette PNG)
        sample = train.select(spread(list(range(len(train)))))[column]  # through every class, not the first's
        channels = "rgb" if any(img is not None and shows_colour(img) for img in sample) else "gray"
    columns = {}
    for split, ds in splits.items():
        columns[split] = ds[column]  # the PIL images, decoded once
        missing = [i for i, img in enumerate(columns[split]) if img is None]
        if missing:
            raise DataError(f"{source} [{split}]: column {column!r} has no image on {len(missing)} row(s) (first row "
                            f"{missing[0]}); leave those rows out (ds.filter(lambda r: r[{column!r}] is not None))")
    # 16-bit images (I;16: a 12-bit scan in a 16-bit PNG) on the white level their pixels need, as image files are
    # read: on the 16-bit range they trained nearly black, and predict read them on the level the run kept (none)
    level = white_level(img for images in columns.values() for img in images)
    out = {}
    for split, ds in splits.items():
        feat = ds.features[label]
        images = [load_image(img, channels, size, level and level[0]) for img in columns[split]]
        labels = ds[label]
        if hasattr(feat, "names") and hasattr(feat, "str2int"):  # a ClassLabel (datasets is imported by the caller)
            labels = _class_names(feat, labels, label, f"{source} [{split}]")
        out[split] = Split(images, np.array(labels, dtype=object)[:, None], f"{source} [{split}]")
    return RawData("image", out, [label], source, how, {"image_channels": channels, **level_notes(source, level)})


__all__ = ["LABEL_COLUMNS", "dataset_columns", "from_datasets", "is_datasets", "is_saved_dataset", "load_hub",
           "streamed"]

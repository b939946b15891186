"""File readers: the paper's datasets, your own data per format, and the tokenisers fitted on train.

The paper's datasets, read by their tasks (``fpt.tasks``): ``image_files`` (MNIST's IDX files,
CIFAR-10's pickled batches), ``listops`` (Long Range Arena's generator and TSV files), ``tape``
(TAPE's LMDB and JSON splits), all unpickling through ``safe_pickle``.

Your own data (``--data``):

``load(path, ...)`` recognises what ``--data`` names and calls its reader:

==========================================  =================  ==========================
``--data``                                   module             read with
==========================================  =================  ==========================
``x.csv``/``.tsv``/``.jsonl``/``.parquet``   ``tables``         ``datasets`` (Arrow)
directory of ``train.csv`` + ``test.csv``    ``tables``         ``datasets``
``DIR/<class>/*.png`` (``DIR/train/...``)    ``images``         ``datasets`` imagefolder + Pillow
``NAME_TRAIN.ts``/``.tsv`` (UCR/UEA)         ``timeseries``     own parser (see its docstring)
``x.npz`` (``X``, ``y``, ``X_test``, ...)    ``arrays``         ``numpy.load``
saved dataset dir or hub id                  ``hub``            ``datasets``
==========================================  =================  ==========================

Every reader returns ``fpt.data.base.RawData``; ``fpt.tasks.user_data`` splits, encodes the
targets and tokenises it into ``TaskData``.
"""

from __future__ import annotations

import re
from pathlib import Path

from fpt.data.base import RawData
from fpt.errors import DataError

# Formats whose target is fixed by the layout, so --target has nothing to name.
BUILT_IN_TARGETS = {"images": "each image's class folder", "timeseries": "the label after each series' last ':' (or "
                    "first field of a .tsv line)", "npz": "the array y"}
BUILT_IN_NAMES = {"images": "class", "timeseries": "target", "npz": "y"}  # what --target may say there (the default)
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


def detect(path: str) -> str:
    """Which reader handles ``path``: tables | images | timeseries | npz | hub."""
    from fpt.data.hub import is_saved_dataset
    from fpt.data.images import has_images
    from fpt.data.tables import BUILDERS, split_files
    from fpt.data.timeseries import is_ucr

    p = Path(path)
    if p.is_file():
        if is_ucr(p):
            return "timeseries"
        if p.suffix.lower() == ".npz":
            return "npz"
        if p.suffix.lower() in BUILDERS:
            return "tables"
        raise DataError(f"{p}: unknown format {p.suffix or '(no suffix)'!r}; give a .csv, .tsv, .jsonl, .parquet, .npz, "
                        "*_TRAIN.ts or *_TRAIN.tsv file, or a folder")
    if p.is_dir():
        if is_saved_dataset(p):
            return "hub"
        if is_ucr(p):
            return "timeseries"
        if split_files(p):
            return "tables"
        if has_images(p, 2) or has_images(p, 3) or any(d.is_dir() for d in p.iterdir()):
            return "images"
        raise DataError(f"{p}: an empty folder or one fpt cannot read; give train.csv (+ test.csv), class folders "
                        "of images (DIR/<class>/*.png), *_TRAIN.ts, or a dataset saved with save_to_disk()")
    if path.startswith((".", "/", "~")) or p.suffix.lower() in {".csv", ".tsv", ".jsonl", ".parquet", ".npz", ".ts"} \
            or not HUB_ID.match(path):
        where = "" if Path(path).expanduser().is_absolute() else f" (relative to the current directory {Path.cwd()})"
        raise DataError(f"--data {path}: no such file or folder{where}; run from the directory it is relative to, or "
                        "give its absolute path")
    return "hub"


def load(path: str, target: str | None = None, modality: str = "auto", image_channels: str = "auto",
         image_size: int = 32) -> RawData:
    """Read ``path`` into ``RawData`` (splits as the data defines them; none carved out yet)."""
    kind = detect(str(path))
    if target is not None and kind in BUILT_IN_TARGETS and str(target) != BUILT_IN_NAMES[kind]:
        raise DataError(f"{path}: --target names a table column, but here the target is {BUILT_IN_TARGETS[kind]}; "
                        "drop --target")
    if kind == "tables":
        from fpt.data.tables import read_tables

        return read_tables(Path(path), target, modality)
    if kind == "images":
        from fpt.data.images import read_image_folder

        _only(modality, "image", path)
        return read_image_folder(Path(path), image_channels, image_size)
    if kind == "timeseries":
        from fpt.data.timeseries import read_timeseries

        _only(modality, "timeseries", path)
        return read_timeseries(Path(path))
    if kind == "npz":
        from fpt.data.arrays import read_npz

        return read_npz(Path(path), modality, image_channels, image_size)
    from fpt.data.hub import load_hub

    return load_hub(str(path), target, modality, image_channels, image_size)


def _only(modality: str, expected: str, path: str) -> None:
    if modality not in {"auto", expected}:
        raise DataError(f"{path}: holds {expected} data; --modality {modality} cannot apply (drop it or use {expected})")


__all__ = ["RawData", "detect", "load"]

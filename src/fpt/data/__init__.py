"""File readers: the paper's datasets, your own data per format, and the tokenisers fitted on train.

The paper's datasets, read by their tasks (``fpt.tasks``): ``image_files`` (MNIST's IDX files,
CIFAR-10's pickled batches), ``listops`` (Long Range Arena's generator and TSV files), ``tape``
(TAPE's LMDB and JSON splits), all unpickling through ``safe_pickle``.

Your own data (``--data``):

``load(path, ...)`` recognises what ``--data`` names and calls its reader (the entries of
``fpt.data.formats``; the modalities they hold: ``fpt.data.modalities``):

==========================================  =================  ==========================
``--data``                                   module             read with
==========================================  =================  ==========================
``x.csv``/``.tsv``/``.jsonl``/``.parquet``   ``tables``         ``datasets`` (Arrow)
directory of ``train.csv`` + ``test.csv``    ``tables``         ``datasets``
``DIR/<class>/*.png`` (``DIR/train/...``)    ``images``         Pillow (listed by fpt)
``DIR/labels.csv`` + ``DIR/train/*.png``     ``image_table``    a table naming the images
``NAME_TRAIN.ts``/``.tsv`` (UCR/UEA)         ``timeseries``     own parser (see its docstring)
``x.npz`` (``X``, ``y``, ``X_test``, ...)    ``arrays``         ``numpy.load``
saved dataset dir or hub id                  ``hub``            ``datasets``
==========================================  =================  ==========================

Every reader returns ``fpt.data.base.RawData``; ``fpt.tasks.user_data`` splits, encodes the
targets and tokenises it into ``TaskData``.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
from collections.abc import Iterator
from pathlib import Path

from fpt.data.base import RawData, column_names
from fpt.errors import DataError, option
from fpt.settings import RunConfig

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
_READ: contextvars.ContextVar[dict[tuple, RawData] | None] = contextvars.ContextVar("fpt_read_once", default=None)


@contextlib.contextmanager
def read_once() -> Iterator[None]:
    """Inside the block (or a function it decorates), ``load`` reads a path once per set of options and hands the
    same ``RawData`` to every later call: a choice between fits builds its data once per candidate, once per fold
    run and once to count the folds (fpt.select), each of which read the file again (a 1,000-series set is a million
    numbers to parse). Nothing downstream writes into ``RawData``: splits and tokens are new arrays. A nested block
    shares the outer one's."""
    if _READ.get() is not None:
        yield
        return
    token = _READ.set({})
    try:
        yield
    finally:
        _READ.reset(token)


def detect(path: str) -> str:
    """Which format (``fpt.data.formats.FORMATS``) reads ``path``: the first entry that claims it."""
    from fpt.data.formats import claiming, file_kinds, folder_kinds, unknown_format

    p = Path(path)
    if p.exists():
        found = claiming(p)
        if found is not None:
            return found.name
        if p.is_file():
            raise DataError(unknown_format(p, f"a {file_kinds()} file, or a folder"))
        raise DataError(f"{p}: an empty folder or one fpt cannot read; give {folder_kinds()}")
    check_present(path)
    return "hub"


def check_present(path: str) -> None:
    """A DataError when ``path`` is no file or folder here and cannot be a Hugging Face dataset id (it starts with
    ., / or ~, ends in a data file's suffix, or is no id at all): reading nothing, importing nothing heavy, so that
    fpt train refuses it before torch is imported and before --nproc starts its processes (each of which said it)."""
    from fpt.data.formats import SUFFIXES
    from fpt.data.tables import table_suffix

    p = Path(path)
    if p.exists() or not (path.startswith((".", "/", "~")) or table_suffix(p) in SUFFIXES or not HUB_ID.match(path)):
        return
    where = "" if p.expanduser().is_absolute() else f" (relative to the current directory {Path.cwd()})"
    raise DataError(f"{option('data', path)}: no such file or folder{where}; run from the directory it is relative "
                    "to, or give its absolute path")


def load(path: str, target: str | None = RunConfig.target_column, modality: str = RunConfig.modality,
         image_channels: str = RunConfig.image_channels, image_size: int = RunConfig.image_size,
         drop_columns: str | None = RunConfig.drop_columns, series_id: str | None = RunConfig.series_id) -> RawData:
    """Read ``path`` into ``RawData`` (splits as the data defines them; none carved out yet); inside a
    ``fpt.data.memory.held`` block, the in-memory data of that name. The options are the RunConfig fields of the
    same names (--target, --modality, --image-channels, --image-size, --drop-columns), their defaults RunConfig's."""
    from fpt.data.listing import listed_once
    from fpt.data.memory import held_data
    from fpt.data.modalities import requested
    from fpt.data.readings import held_key

    requested(modality)
    held = held_data(str(path))
    if held is not None:
        return held
    # a relative path and the absolute one the resolved config records (fpt.pipeline.with_paths_absolute) share a read
    where = os.path.abspath(os.path.expanduser(path)) if os.path.exists(os.path.expanduser(path)) else str(path)
    read = _READ.get()
    key = (where, target, modality, image_channels, image_size, drop_columns, series_id, held_key())
    if read is not None and key in read:
        return read[key]
    with listed_once():  # the format's claim and its reader list a folder (of many images) once, not once each
        return _read(path, target, modality, image_channels, image_size, drop_columns, series_id, read, key)


def read_config(config: RunConfig) -> RawData | None:
    """``config``'s ``--data`` read as its task reads it (the same options, so inside ``read_once`` the run's build
    shares the read); None for a paper task."""
    from fpt.settings import DATA_TASK

    if config.task != DATA_TASK or config.data is None:
        return None
    return load(config.data, config.target_column, config.modality, config.image_channels, config.image_size,
                config.drop_columns, config.series_id)


def _read(path: str, target: str | None, modality: str, image_channels: str, image_size: int,
          drop_columns: str | None, series_id: str | None, read: dict | None, key: tuple) -> RawData:
    from fpt.data.formats import FORMATS, Request

    fmt = FORMATS[detect(str(path))]
    if target is not None and fmt.target is not None and str(target) != fmt.target_name:
        named = option("target", str(target))
        raise DataError(f"{path}: {named} names a table column, but here the target is {fmt.target}; drop {named}")
    if fmt.modality is not None and modality not in {"auto", fmt.modality}:
        raise DataError(f"{path}: holds {fmt.modality} data; {option('modality', modality)} cannot apply (drop it or use "
                        f"{fmt.modality})")
    drop = column_names(drop_columns)
    series = column_names(series_id)
    raw = fmt.read(path, Request(target, modality, image_channels, image_size, drop, series))
    if series and "series_id" not in raw.notes:  # only a table's readers group rows into series
        raise DataError(f"{path}: {option('series_id')} groups the rows of a long-format table (CSV, TSV, JSON "
                        f"lines, Parquet, Feather) into series, but this is {raw.source}; drop the option")
    if drop and "dropped" not in raw.notes:  # only a table's readers leave columns out
        kind = f"an {fmt.name} file" if fmt.name == "npz" else raw.source
        raise DataError(f"{path}: {option('drop_columns')} leaves out named columns of a table file (CSV, TSV, "
                        f"JSON lines, Parquet, Feather) or a saved dataset, but this is {kind}; drop the option")
    if raw.fingerprint is None:  # a file or folder's (a hub dataset's reader hashes what it loaded)
        from fpt.data.fingerprint import of_path

        # the bytes', whatever reading of the columns is in force (a run's rebuild reads them as it saved them,
        # fpt.data.readings): hashed once in a read_once block, so each run of one command records one fingerprint
        hashed = read.get(("fingerprint", key[0])) if read is not None else None
        raw.fingerprint = hashed if hashed is not None else of_path(path)
        if read is not None:
            read[("fingerprint", key[0])] = raw.fingerprint
    if read is not None:
        read[key] = raw
        if target is None and raw.notes.get("features"):
            # the target chosen among a table's columns: the resolved config names it (target_column, as
            # fpt.pipeline.data_facts records it), and reading with that name gives this same data
            read[(key[0], ",".join(raw.targets), *key[2:])] = raw
    return raw


__all__ = ["RawData", "check_present", "detect", "load", "read_once"]

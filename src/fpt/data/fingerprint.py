"""A content fingerprint of a run's own data (``--data`` files and folders, or arrays given in Python), recorded when
the run starts and compared when it resumes: a CSV edited in place (same shape, same name, other values) resumed
without a word, its first steps trained on one dataset and the rest on another.

Files are hashed with SHA-256 (OpenSSL's, with the processor's SHA instructions where it has them): on this
project's 2-core Xeon, other jobs sharing it, ``bench/read_table.py --rows 200000`` hashed the 13.8 MB CSV in 17-50
ms, 0.7-1.6% of ``fpt.data.load``'s 2.0-3.4 s on it, where blake2b took 75-90 ms. Data larger than ``WHOLE_BYTES``
is not hashed whole: each file's size, and blocks spread evenly through it up to that many bytes in all, are; an
edit that keeps a file's size and falls between its blocks then goes unseen (``sampled`` says so in the record).
Modification times are not used: a copy or a checkout of the same bytes would read as a change.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from fpt.data.digest import FORMAT, HASH, of_datasets, of_files


def of_path(path: str | Path) -> dict[str, Any] | None:
    """The fingerprint of the local file or folder ``path`` (None where it is neither: a hub dataset id)."""
    root = Path(path).expanduser()
    if root.is_file():
        return of_files([(root.name, root)], "file")
    if root.is_dir():
        return of_files(sorted(_files(root)), "folder")
    return None


def _files(root: Path) -> Iterator[tuple[str, Path]]:
    """(relative path, path) of every file below ``root`` a reader may read: of a suffix some format reads (tables,
    arrays, series, images; a notes file or README beside them is no data, and adding one refused nothing); hidden and
    system entries (``.git``, ``.DS_Store``, ``__pycache__``) and fpt run directories (an ``--out`` inside ``--data``,
    written as the run goes) left out; a linked folder is followed once."""
    from fpt import rundir
    from fpt.data.formats import SUFFIXES
    from fpt.data.images import IMAGE_SUFFIXES, SYSTEM_FILES
    from fpt.data.listing import children
    from fpt.data.tables import table_suffix

    read = {*SUFFIXES, *IMAGE_SUFFIXES}

    seen, stack = set(), [root]
    while stack:
        folder = stack.pop()
        real = os.path.realpath(folder)
        if real in seen or (folder != root and (rundir.is_run_dir(folder) or rundir.is_started_run(folder))):
            continue
        seen.add(real)
        try:  # the listing the reader made (fpt.data.listing, inside the read's listed_once): a folder is listed once
            entries = children(folder)
        except OSError:  # unreadable: its reader names it
            continue
        for entry in entries:
            name = entry.path.name
            if name.startswith((".", "__")) or name.lower() in SYSTEM_FILES:
                continue
            try:
                if entry.is_dir:
                    stack.append(entry.path)
                elif table_suffix(entry.path) in read and entry.path.is_file():
                    yield entry.path.relative_to(root).as_posix(), entry.path
            except OSError:  # a link that loops or dangles: not data here either
                continue


def of_memory(data: Any) -> dict[str, Any] | None:
    """The fingerprint of data given in Python (NumPy arrays, pandas frames, torch tensors, a ``datasets.Dataset``,
    and tuples, lists and dicts of them), or None for a kind it cannot hash cheaply."""
    h = hashlib.new(HASH)
    try:
        _update(h, data)
    except (_Unhashable, TypeError, ValueError):  # e.g. a frame's cells holding lists: not hashed, not checked
        return None
    return {"format": FORMAT, "hash": HASH, "kind": "memory", "digest": h.hexdigest()}


class _Unhashable(Exception):
    pass


def _update(h: Any, obj: Any) -> None:
    import pandas as pd

    from fpt.data.host import is_tensor

    h.update(f"<{type(obj).__name__}>".encode())
    if isinstance(obj, (pd.DataFrame, pd.Series)):
        frame = obj.to_frame() if isinstance(obj, pd.Series) else obj
        h.update(repr([(str(c), str(t)) for c, t in frame.dtypes.items()]).encode("utf-8", "surrogatepass"))
        h.update(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes())
    elif isinstance(obj, np.ndarray):
        _array(h, obj)
    elif is_tensor(obj):
        tensor = obj.detach().cpu()
        if str(tensor.dtype) == "torch.bfloat16":  # NumPy has no bf16: its bits as int16
            import torch

            tensor = tensor.view(torch.int16)
        _array(h, tensor.numpy())
    elif isinstance(obj, dict):
        for key, value in obj.items():
            h.update(repr(key).encode("utf-8", "surrogatepass"))
            _update(h, value)
    elif isinstance(obj, (list, tuple)):
        values = None
        # (X, y) of arrays, tensors or frames: each by its own branch (np.asarray of a tensor that requires grad
        # raises, and of a frame loses its dtypes); a list of plain values as one array
        if not any(is_tensor(o) or isinstance(o, (np.ndarray, pd.DataFrame, pd.Series, dict)) for o in obj):
            try:
                values = np.asarray(obj)
            except (ValueError, TypeError):  # ragged: element by element
                values = None
        if values is not None and values.dtype != object:
            _array(h, values)
        else:
            for item in obj:
                _update(h, item)
    elif isinstance(obj, (str, bytes, int, float, bool, type(None), np.generic)):
        h.update(repr(obj).encode("utf-8", "surrogatepass"))
    elif hasattr(obj, "_fingerprint") and isinstance(obj._fingerprint, str):  # datasets.Dataset: its content's
        h.update(obj._fingerprint.encode())
    elif hasattr(obj, "tensors") and isinstance(obj.tensors, tuple):  # torch's TensorDataset
        _update(h, obj.tensors)
    else:
        raise _Unhashable(type(obj).__name__)


def _array(h: Any, a: np.ndarray) -> None:
    h.update(f"{a.dtype.str}{a.shape}".encode())
    if a.dtype == object:
        import pandas as pd

        h.update(pd.util.hash_array(a.ravel(), categorize=False).tobytes())
    elif np.ma.isMaskedArray(a):
        h.update(np.ascontiguousarray(np.ma.getmaskarray(a)).tobytes())
        h.update(np.ascontiguousarray(np.ma.getdata(a)).tobytes())
    else:
        h.update(np.ascontiguousarray(a).reshape(-1).view(np.uint8))  # no copy where it is contiguous already


def changed(saved: dict[str, Any], now: dict[str, Any]) -> str | None:
    """What differs between two fingerprints of one data set, as a phrase naming the file where the records can
    ("train.csv changed", "test.csv was added"), else None when they agree."""
    if saved.get("digest") == now.get("digest"):
        return None
    before, after = saved.get("digests"), now.get("digests")
    if isinstance(before, dict) and isinstance(after, dict):
        for name in sorted(set(before) | set(after)):
            if name not in after:
                return f"{name} was removed"
            if name not in before:
                return f"{name} was added"
            if before[name] != after[name]:
                return f"{name} changed"
    return "its content changed"


def check_unchanged(saved: dict[str, Any], now: dict[str, Any], data: str, since: str, record: Path) -> None:
    """Refuse, in one line naming ``data`` and what changed, data whose fingerprint ``now`` differs from ``saved``,
    the one ``record`` (a data_fingerprint.json) holds from when ``since`` ("the run in OUT started on it")."""
    from fpt.errors import DataError, option

    what = changed(saved, now)
    if what is None:
        return
    hashed = f"its content hash differs from {record.name}'s"
    if now.get("kind") == "hub":
        raise DataError(f"{data}: {what} since {since} ({hashed}: the datasets cache holds another revision of it "
                        f"now); train it into a new {option('out')}, or, offline, remove the newer revision's folder from the "
                        "datasets cache (the newest is read)")
    where = f"{data}: {'the file changed' if now.get('kind') == 'file' else what}"
    raise DataError(f"{where} since {since} ({hashed}); restore the data it started with, or train the changed data "
                    f"into a new {option('out')}")


__all__ = ["changed", "check_unchanged", "of_datasets", "of_memory", "of_path"]

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
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

FORMAT = 1
HASH = "sha256"
WHOLE_BYTES = 1 << 30  # data up to 1 GiB is hashed whole: ~3 s at 350 MB/s, where reading it as a table takes minutes
BLOCK = 1 << 20  # sampled data: blocks of up to 1 MiB
MIN_SAMPLE = 8 << 10  # sampled data: at least this much of each file (its first and last 4 KiB)
NAMED_FILES = 2000  # a folder of up to this many files keeps each file's digest, to name the one that changed


def of_path(path: str | Path) -> dict[str, Any] | None:
    """The fingerprint of the local file or folder ``path`` (None where it is neither: a hub dataset id)."""
    root = Path(path).expanduser()
    if root.is_file():
        return _of_files([(root.name, root)], "file")
    if root.is_dir():
        return _of_files(sorted(_files(root)), "folder")
    return None


def of_datasets(dd: Any) -> dict[str, Any]:
    """The fingerprint of a Hugging Face dataset as ``datasets.load_dataset`` loaded it (a ``DatasetDict``, or one
    ``Dataset``): the Arrow files its splits read from the cache, by ``split/file name``, so another revision (which
    ``datasets`` caches in a folder of its own and reads, the newest, in its place) reads as a change and the same
    content in another cache folder does not; a split held in memory (no cache file), by its Arrow table's buffers."""
    splits = dict(dd) if isinstance(dd, dict) else {"train": dd}  # a DatasetDict is a dict of its splits
    if all(splits[name].cache_files for name in splits):
        return _of_files([(f"{name}/{Path(f['filename']).name}", Path(f["filename"]))
                          for name in sorted(splits) for f in splits[name].cache_files], "hub")
    digests = {}
    for name in sorted(splits):
        h = hashlib.new(HASH)
        _table(h, splits[name].data.table)
        digests[name] = h.hexdigest()
    whole = hashlib.new(HASH)
    whole.update("".join(f"{name}\0{digest}\n" for name, digest in digests.items()).encode("utf-8", "surrogatepass"))
    return {"format": FORMAT, "hash": HASH, "kind": "hub", "splits": len(digests),
            "bytes": sum(splits[name].data.table.nbytes for name in splits), "sampled": False,
            "digest": whole.hexdigest(), "digests": digests}


def _table(h: Any, table: Any) -> None:
    """An Arrow table's schema and every buffer of its columns (memory it holds: no copy)."""
    h.update(str(table.schema).encode("utf-8", "surrogatepass"))
    for column in table.columns:
        for chunk in column.chunks:
            h.update(f"{chunk.offset},{len(chunk)}".encode())
            for buffer in chunk.buffers():
                if buffer is not None:
                    h.update(buffer)


def _of_files(files: list[tuple[str, Path]], kind: str) -> dict[str, Any]:
    """The fingerprint of ``files`` ((name, path) pairs, in order): each file's digest, and one of them all."""
    sizes = [p.stat().st_size for _, p in files]
    total = sum(sizes)
    sampled = total > WHOLE_BYTES
    whole = hashlib.new(HASH)
    digests = {}
    for (name, p), size in zip(files, sizes, strict=True):
        # each file's share of WHOLE_BYTES: a folder of 100,000 small images over the limit reads about that much,
        # not every byte (a file moved between class folders is a new name, seen whatever is sampled)
        budget = max(MIN_SAMPLE, math.ceil(WHOLE_BYTES * size / total)) if sampled else size
        digest = _file_digest(p, size, budget)
        whole.update(f"{name}\0{size}\0{digest}\n".encode("utf-8", "surrogatepass"))
        digests[name] = digest
    return {"format": FORMAT, "hash": HASH, "kind": kind, "files": len(files),
            "bytes": total, "sampled": sampled, "digest": whole.hexdigest(),
            "digests": digests if len(digests) <= NAMED_FILES else None}


def _files(root: Path) -> Iterator[tuple[str, Path]]:
    """(relative path, path) of every file below ``root`` a reader may read: of a suffix some format reads (tables,
    arrays, series, images; a notes file or README beside them is no data, and adding one refused nothing); hidden and
    system entries (``.git``, ``.DS_Store``, ``__pycache__``) and fpt run directories (an ``--out`` inside ``--data``,
    written as the run goes) left out; a linked folder is followed once."""
    from fpt import rundir
    from fpt.data.formats import SUFFIXES
    from fpt.data.images import IMAGE_SUFFIXES, SYSTEM_FILES
    from fpt.data.tables import table_suffix

    read = {*SUFFIXES, *IMAGE_SUFFIXES}

    seen, stack = set(), [root]
    while stack:
        folder = stack.pop()
        real = os.path.realpath(folder)
        if real in seen or (folder != root and (rundir.is_run_dir(folder) or rundir.is_started_run(folder))):
            continue
        seen.add(real)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:  # unreadable: its reader names it
            continue
        for entry in entries:
            if entry.name.startswith((".", "__")) or entry.name.lower() in SYSTEM_FILES:
                continue
            path = Path(entry.path)
            try:
                if entry.is_dir():
                    stack.append(path)
                elif entry.is_file() and table_suffix(path) in read:
                    yield path.relative_to(root).as_posix(), path
            except OSError:  # a link that loops or dangles: not data here either
                continue


def _file_digest(path: Path, size: int, budget: int) -> str:
    """``path``'s bytes hashed whole (``budget`` >= ``size``), else its size and ``budget`` bytes of it in blocks
    spread evenly from its first byte to its last."""
    with open(path, "rb") as f:
        if budget >= size:
            return hashlib.file_digest(f, HASH).hexdigest()
        h = hashlib.new(HASH)
        h.update(str(size).encode())
        block = min(BLOCK, budget // 2)
        blocks = budget // block
        for i in range(blocks):
            f.seek((size - block) * i // (blocks - 1))
            h.update(f.read(block))
    return h.hexdigest()


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
    from fpt.errors import DataError

    what = changed(saved, now)
    if what is None:
        return
    hashed = f"its content hash differs from {record.name}'s"
    if now.get("kind") == "hub":
        raise DataError(f"{data}: {what} since {since} ({hashed}: the datasets cache holds another revision of it "
                        "now); train it into a new --out, or, offline, remove the newer revision's folder from the "
                        "datasets cache (the newest is read)")
    where = f"{data}: {'the file changed' if now.get('kind') == 'file' else what}"
    raise DataError(f"{where} since {since} ({hashed}); restore the data it started with, or train the changed data "
                    "into a new --out")


__all__ = ["changed", "check_unchanged", "of_datasets", "of_memory", "of_path"]

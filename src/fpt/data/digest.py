"""Hashing the bytes a run's data was read from (fpt.data.fingerprint records and compares the result): files,
whole up to ``WHOLE_BYTES`` and in sampled blocks beyond, and a Hugging Face dataset's cached Arrow files or, held in
memory, its Arrow buffers. Apart from fpt.data.fingerprint because a reader (fpt.data.hub) hashes what it loaded, and
fingerprint's folder listing reads the formats' suffixes, which import the readers.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any

FORMAT = 1
HASH = "sha256"
WHOLE_BYTES = 1 << 30  # data up to 1 GiB is hashed whole: ~3 s at 350 MB/s, where reading it as a table takes minutes
BLOCK = 1 << 20  # sampled data: blocks of up to 1 MiB
MIN_SAMPLE = 8 << 10  # sampled data: at least this much of each file (its first and last 4 KiB)
NAMED_FILES = 2000  # a folder of up to this many files keeps each file's digest, to name the one that changed


def of_datasets(dd: Any) -> dict[str, Any]:
    """The fingerprint of a Hugging Face dataset as ``datasets.load_dataset`` loaded it (a ``DatasetDict``, or one
    ``Dataset``): the Arrow files its splits read from the cache, by ``split/file name``, so another revision (which
    ``datasets`` caches in a folder of its own and reads, the newest, in its place) reads as a change and the same
    content in another cache folder does not; a split held in memory (no cache file), by its Arrow table's buffers."""
    splits = dict(dd) if isinstance(dd, dict) else {"train": dd}  # a DatasetDict is a dict of its splits
    if all(splits[name].cache_files for name in splits):
        return of_files([(f"{name}/{Path(f['filename']).name}", Path(f["filename"]))
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


def of_files(files: list[tuple[str, Path]], kind: str) -> dict[str, Any]:
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


__all__ = ["of_datasets", "of_files"]

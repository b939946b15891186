"""TAPE's remote homology files, read strictly, and TAPE's amino-acid vocabulary.

TAPE (songlab-cal/tape, ``tape/datasets.py``) keeps each split of its remote homology task
as ``remote_homology/remote_homology_{split}.lmdb``: an LMDB directory (``data.mdb``,
``lock.mdb``) whose key ``b"num_examples"`` holds a pickled int and whose keys ``b"0"``,
``b"1"``, ... hold pickled dicts (``id``, ``primary``, ``protein_length``, ``class_label``,
``fold_label``, ``superfamily_label``, ``family_label`` and per-residue numpy arrays). The
raw release keeps the same records as a JSON list in ``remote_homology_{split}.json``.

Pickle runs code named by the file, so records are decoded only by
``fpt.data.safe_pickle``, which rebuilds plain Python values and numpy scalars and arrays
and refuses anything else.
Readers return TAPE's ids (``encode``); what to do with long sequences is the task's business
(``fpt.tasks.remote_homology``).
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fpt.data.safe_pickle import safe_loads
from fpt.errors import DataError

SPLITS = ("train", "valid", "test_fold_holdout", "test_superfamily_holdout", "test_family_holdout")
NUM_FOLDS = 1195  # fold_label is 0..1194 (TAPE registers the task with num_labels=1195)

# TAPE's IUPAC vocabulary (tape/tokenizers.py IUPAC_VOCAB): five specials, then 25 letters (no J).
SPECIALS = ("<pad>", "<mask>", "<cls>", "<sep>", "<unk>")
RESIDUES = "ABCDEFGHIKLMNOPQRSTUVWXYZ"
VOCAB = (*SPECIALS, *RESIDUES)
PAD, MASK, CLS, SEP, UNK = range(len(SPECIALS))

LMDB_URL = "http://s3.amazonaws.com/songlabdata/proteindata/data_pytorch/remote_homology.tar.gz"
JSON_URL = "http://s3.amazonaws.com/songlabdata/proteindata/data_raw_pytorch/remote_homology.tar.gz"

# Byte -> token id; 255 marks a byte TAPE's tokenizer rejects (it raises KeyError, no <unk>
# fallback), so an odd letter is an error here too rather than a silent <unk>.
_BAD = 255
_LUT = np.full(256, _BAD, dtype=np.uint8)
_LUT[np.frombuffer(RESIDUES.encode(), dtype=np.uint8)] = np.arange(len(SPECIALS), len(VOCAB))


def file_names(split: str) -> tuple[str, str]:
    """The names TAPE gives a split: the LMDB directory, then the raw JSON list."""
    return f"remote_homology_{split}.lmdb", f"remote_homology_{split}.json"


def encode(primary: str, where: str) -> np.ndarray:
    """TAPE's ids for ``<cls> residues <sep>`` (int32); DataError, prefixed by ``where``, for a bad letter."""
    raw = primary.encode("ascii", errors="replace")  # non-ASCII becomes '?', which the table rejects
    codes = _LUT[np.frombuffer(raw, dtype=np.uint8)]
    bad = np.flatnonzero(codes == _BAD)
    if bad.size:
        at = int(bad[0])
        raise DataError(f"{where}: residue {primary[at]!r} at position {at} is not in TAPE's alphabet "
                        f"({RESIDUES}, upper case)")
    out = np.empty(len(codes) + 2, dtype=np.int32)
    out[0], out[1:-1], out[-1] = CLS, codes, SEP
    return out


# --- records -------------------------------------------------------------------------------

@dataclass
class Split:
    """The parts of a split the task uses, in file order."""

    path: Path
    ids: list[str]
    tokens: list[np.ndarray]  # TAPE ids of <cls> residues <sep> (int32), see ``encode``
    fold_label: np.ndarray  # (N,) int64


def _label(value: Any, where: str) -> int:
    # Real records hold ints or numpy int64; a 1-element integer array is tolerated as TAPE's
    # torch.LongTensor(...) collation would accept it.
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.reshape(()).item() if np.issubdtype(value.dtype, np.integer) else value
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise DataError(f"{where}: fold_label is {value!r} ({type(value).__name__}); expected an integer 0..{NUM_FOLDS - 1}")
    if not 0 <= int(value) < NUM_FOLDS:
        raise DataError(f"{where}: fold_label {int(value)} is outside 0..{NUM_FOLDS - 1} (TAPE's {NUM_FOLDS} folds)")
    return int(value)


def _check_record(item: Any, where: str) -> tuple[str, np.ndarray, int]:
    """``(id, tokens, fold_label)`` of one record; DataError for anything the task cannot use."""
    if not isinstance(item, dict):
        raise DataError(f"{where}: record is a {type(item).__name__}; expected a dict with 'primary' and 'fold_label'")
    for key in ("primary", "fold_label"):
        if key not in item:
            raise DataError(f"{where}: record has no {key!r} (keys: {', '.join(map(str, item))})")
    primary = item["primary"]
    if not isinstance(primary, str) or not primary:
        raise DataError(f"{where}: primary is {primary!r}; expected a non-empty string of amino-acid letters")
    ident = str(item.get("id", ""))
    label = _label(item["fold_label"], where)
    return ident, encode(primary, f"{where} (id {ident!r})" if ident else where), label


def _collect(path: Path, records: list[tuple[str, np.ndarray, int]]) -> Split:
    ids, tokens, labels = zip(*records, strict=True) if records else ((), (), ())
    return Split(path, list(ids), list(tokens), np.asarray(labels, dtype=np.int64))


# LMDB's file format (lmdb.h / mdb.c, 64-bit builds): pages 0 and 1 are meta pages; each holds,
# after a 16-byte page header, the magic number (byte 16), the format version (byte 20), ..., the page
# size (the free-list database's md_pad) at byte 40, the last page in use at byte 136 and the id of the
# transaction that wrote it at byte 144. LMDB uses the meta page with the larger id.
_MDB_MAGIC, _MDB_VERSION = 0xBEEFC0DE, 1


def check_lmdb_file(path: Path) -> None:
    """DataError unless ``path/data.mdb`` is an LMDB file as long as its header says.

    LMDB maps the file and reads pages where its header points: a truncated file makes those
    reads fault (SIGBUS) and kills the process without a message, so its size is checked first."""
    data = path / "data.mdb"
    if not data.is_file():
        raise DataError(f"{path}: not a readable LMDB directory (expected data.mdb inside, found "
                        f"{', '.join(sorted(p.name for p in path.iterdir())) or 'nothing'})")
    size = data.stat().st_size
    with open(data, "rb") as f:
        head = f.read(152)
        if len(head) < 152:
            raise DataError(f"{data}: truncated: {size} bytes, shorter than an LMDB header; download the dataset again")
        if int.from_bytes(head[16:20], "little") != _MDB_MAGIC:
            raise DataError(f"{data}: not an LMDB file ({size} bytes, no LMDB magic number at byte 16); "
                            "download the dataset again")
        psize = int.from_bytes(head[40:44], "little")
        if psize < 512 or psize & (psize - 1):
            raise DataError(f"{data}: LMDB header gives page size {psize}, not a power of two >= 512; "
                            "the file is corrupted: download the dataset again")
        f.seek(psize)
        second = f.read(152)
    metas = [m for m in (head, second) if len(m) == 152 and int.from_bytes(m[16:20], "little") == _MDB_MAGIC]
    if len(metas) < 2:
        raise DataError(f"{data}: truncated: {size} bytes, shorter than LMDB's two {psize}-byte meta pages; "
                        "download the dataset again")
    for meta in metas:
        if int.from_bytes(meta[20:24], "little") != _MDB_VERSION:
            raise DataError(f"{data}: LMDB format version {int.from_bytes(meta[20:24], 'little')}, expected "
                            f"{_MDB_VERSION}; the file is corrupted or from another LMDB: download the dataset again")
    meta = max(metas, key=lambda m: int.from_bytes(m[144:152], "little"))
    last = int.from_bytes(meta[136:144], "little")
    needed = (last + 1) * psize
    if size < needed:
        raise DataError(f"{data}: truncated: {size:,} bytes, but its header says {last + 1:,} pages of {psize} bytes "
                        f"({needed:,} bytes); the download or copy was cut off: download the dataset again")


# Runs in a child process: a fault inside LMDB (a file corrupted past what check_lmdb_file sees)
# then kills the child, not fpt. It writes each (key, value) as two 8-byte lengths and the bytes.
_LMDB_CHILD = r"""
import struct, sys
try:
    import lmdb
    env = lmdb.open(sys.argv[1], readonly=True, lock=False, readahead=False, meminit=False, subdir=True)
except Exception as exc:
    sys.stderr.write("open: " + str(exc)); sys.exit(3)
out = sys.stdout.buffer
try:
    with env.begin(write=False) as txn:
        for key, value in txn.cursor():
            out.write(struct.pack("<QQ", len(key), len(value))); out.write(key); out.write(value)
    out.flush()
except Exception as exc:
    sys.stderr.write("read: " + str(exc)); sys.exit(4)
"""


def lmdb_items(path: Path) -> list[tuple[bytes, bytes]]:
    """Every (key, value) of the LMDB directory ``path`` in key order, read by a child process."""
    check_lmdb_file(path)
    # -P: the child does not put the working directory on sys.path (a stray lmdb.py there).
    proc = subprocess.run([sys.executable, "-P", "-c", _LMDB_CHILD, str(path)], capture_output=True, check=False)
    if proc.returncode < 0:
        try:
            name = signal.Signals(-proc.returncode).name
        except ValueError:
            name = f"signal {-proc.returncode}"
        raise DataError(f"{path}: reading the LMDB crashed its reader ({name}); data.mdb is truncated or corrupted: "
                        "download the dataset again")
    message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    message = message[-1] if message else f"exit status {proc.returncode}"
    if proc.returncode == 3 and message.startswith("open: "):
        raise DataError(f"{path}: not a readable LMDB directory (expected data.mdb inside): {message[6:]}")
    if proc.returncode != 0:
        raise DataError(f"{path}: LMDB read failed: {message.removeprefix('read: ')}")
    raw, items, at = proc.stdout, [], 0
    view = memoryview(raw)
    while at < len(raw):
        if at + 16 > len(raw):
            raise DataError(f"{path}: LMDB reader output ends early; read it again")
        k, v = int.from_bytes(raw[at:at + 8], "little"), int.from_bytes(raw[at + 8:at + 16], "little")
        at += 16
        if at + k + v > len(raw):
            raise DataError(f"{path}: LMDB reader output ends early; read it again")
        items.append((bytes(view[at:at + k]), bytes(view[at + k:at + k + v])))
        at += k + v
    return items


def read_lmdb(path: Path) -> Split:
    """A TAPE LMDB directory, every record checked, in index order."""
    items = dict(lmdb_items(path))
    raw_n = items.pop(b"num_examples", None)
    if raw_n is None:
        raise DataError(f"{path}: no key b'num_examples'; expected TAPE's LMDB layout "
                        "(num_examples, then records under keys b'0', b'1', ...)")
    n = safe_loads(raw_n, f"{path}: key b'num_examples'")
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
        raise DataError(f"{path}: key b'num_examples' holds {n!r:.80}; expected a non-negative int")
    records: dict[int, tuple[str, np.ndarray, int]] = {}
    for key, value in items.items():  # keys come in byte order ("0", "1", "10", ...): placed by index below
        if not re.fullmatch(rb"0|[1-9][0-9]{0,17}", key):
            raise DataError(f"{path}: unexpected key {key[:40]!r}; TAPE stores only b'num_examples' and record "
                            "keys b'0', b'1', ...")
        where = f"{path}: key {key!r}"
        records[int(key)] = _check_record(safe_loads(value, where), where)
    n = int(n)
    # Not set(range(n)): num_examples comes from the file and may be huge.
    extra = sorted(k for k in records if k >= n)
    n_missing = n - (len(records) - len(extra))
    missing = [i for i in range(min(n, len(records) + 5)) if i not in records][:5] if n_missing else []
    if missing or extra:
        def show(keys: list[int]) -> str:
            return ", ".join(repr(str(k).encode()) for k in keys[:5]) + (" ..." if len(keys) > 5 else "")

        more = " ..." if n_missing > 5 else ""
        detail = "; ".join(part for part in (f"missing {n_missing} record key(s): {show(missing)}{more}" if missing else "",
                                             f"{len(extra)} key(s) beyond it: {show(extra)}" if extra else "") if part)
        raise DataError(f"{path}: num_examples says {n} but {len(records)} records are stored ({detail}); "
                        "the LMDB is incomplete or corrupted, download it again")
    return _collect(path, [records[i] for i in range(n)])


def read_json(path: Path) -> Split:
    """A TAPE JSON list of records, every record checked."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read it as UTF-8 text: {exc}") from exc
    if not isinstance(data, list):
        raise DataError(f"{path}: holds a JSON {type(data).__name__}; expected a list of records (TAPE's raw format)")
    return _collect(path, [_check_record(item, f"{path}: record index {i}") for i, item in enumerate(data)])


def find_split(folder: Path, split: str) -> Path | None:
    """The file holding ``split`` under ``folder``: the LMDB directory if present (TAPE's own default), else JSON."""
    lmdb_name, json_name = file_names(split)
    if (folder / lmdb_name).is_dir():
        return folder / lmdb_name
    if (folder / json_name).is_file():
        return folder / json_name
    return None


def read_split(folder: Path, split: str) -> Split:
    """One split of remote homology from ``folder`` (LMDB or JSON, see ``find_split``)."""
    if split not in SPLITS:
        raise ValueError(f"remote homology: unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    path = find_split(folder, split)
    if path is None:
        raise DataError(missing_message(folder, split))
    return read_lmdb(path) if path.suffix == ".lmdb" else read_json(path)


def missing_message(folder: Path | list[Path], split: str) -> str:
    folders = folder if isinstance(folder, list) else [folder]
    tried = ", ".join(str(f / name) for f in folders for name in file_names(split))
    return (f"remote homology: split {split!r} not found (looked for {tried}). Download TAPE's data and unpack it "
            f"so that DATA_DIR/remote_homology/ holds the files of all five splits: LMDB {LMDB_URL} or "
            f"raw JSON {JSON_URL}")

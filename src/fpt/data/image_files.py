"""Readers for MNIST's IDX files and CIFAR-10's pickled batches, as torchvision keeps them.

Layout under the data directory (``DataSource.root``)::

    MNIST/raw/{train,t10k}-images-idx3-ubyte   (or the same names ending in .gz)
    MNIST/raw/{train,t10k}-labels-idx1-ubyte
    cifar-10-batches-py/data_batch_1 .. data_batch_5, test_batch, batches.meta

Each reader checks everything it reads (magic numbers, counts, shapes, label ranges) and
raises ``DataError`` naming the file, the record and what was expected; it returns only
after a whole split has loaded, so nothing half-loads. We read the files ourselves because
torchvision is optional (and checks md5 sums, which test fixtures cannot match); it is used
only to download.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from fpt.data.safe_pickle import safe_loads
from fpt.errors import DataError

MNIST_DIR = Path("MNIST") / "raw"
CIFAR10_DIR = Path("cifar-10-batches-py")
IDX_IMAGES, IDX_LABELS = 0x803, 0x801  # unsigned bytes, 3 dimensions / 1 dimension
MNIST_SPLITS = {"train": "train", "test": "t10k"}
CIFAR10_SPLITS = {"train": [f"data_batch_{i}" for i in range(1, 6)], "test": ["test_batch"]}
NUM_CLASSES = 10


def _layout(dataset: str, root: Path) -> str:
    where = {"MNIST": f"{root / MNIST_DIR}/{{train,t10k}}-{{images-idx3,labels-idx1}}-ubyte[.gz]",
             "CIFAR10": f"{root / CIFAR10_DIR}/{{data_batch_1..5,test_batch,batches.meta}}"}[dataset]
    return f"place the files as {where}"


def _layout_hint(dataset: str, root: Path) -> str:
    return (f"{_layout(dataset, root)}, or run with download=true (needs torchvision: "
            "`pip install torchvision` matching your torch version)")


# --- MNIST (IDX) -------------------------------------------------------------------------


def _idx_path(path: Path) -> Path | None:
    for candidate in (path, path.with_name(path.name + ".gz")):
        if candidate.is_file():
            return candidate
    return None


def read_idx(path: Path, magic: int) -> np.ndarray:
    """An IDX file of unsigned bytes (plain or gzipped) as a uint8 array of its declared shape."""
    raw = path.read_bytes()
    if path.suffix == ".gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise DataError(f"{path}: not a complete gzip file ({exc}); download it again") from None
    if len(raw) < 4:
        raise DataError(f"{path}: truncated: {len(raw)} bytes, too short for the IDX header")
    found = int.from_bytes(raw[:4], "big")
    if found != magic:
        raise DataError(f"{path}: magic number {found:#06x}, expected {magic:#06x} "
                        f"(IDX of unsigned bytes with {magic & 0xFF} dimension(s)); is this the right file?")
    ndim = magic & 0xFF
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise DataError(f"{path}: truncated inside the header ({len(raw)} of {header} bytes)")
    dims = [int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    body = memoryview(raw)[header:]
    record = int(np.prod(dims[1:], dtype=np.int64))
    expected = dims[0] * record
    if len(body) < expected:
        complete = len(body) // record if record else 0
        raise DataError(f"{path}: truncated: header declares {dims[0]} records of {record} byte(s) but the data "
                        f"ends in record {complete} ({len(body)} of {expected} bytes); download it again")
    if len(body) > expected:
        raise DataError(f"{path}: {len(body) - expected} unexpected bytes after the {dims[0]} declared records")
    if expected == 0:
        raise DataError(f"{path}: holds no data (header declares shape {tuple(dims)}); download it again")
    return np.frombuffer(body, dtype=np.uint8).reshape(dims).copy()  # copy: writable, detached from ``raw``


def mnist_paths(root: Path, split: str) -> tuple[Path, Path]:
    prefix = MNIST_SPLITS[split]
    folder = Path(root) / MNIST_DIR
    return folder / f"{prefix}-images-idx3-ubyte", folder / f"{prefix}-labels-idx1-ubyte"


def mnist_present(root: Path) -> bool:
    return all(_idx_path(p) is not None for split in MNIST_SPLITS for p in mnist_paths(root, split))


def read_mnist(root: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    """MNIST ``split`` ('train' or 'test'): uint8 images (N, 28, 28) and int64 labels (N,)."""
    found = []
    for path in mnist_paths(root, split):
        actual = _idx_path(path)
        if actual is None:
            raise DataError(f"MNIST file {path} (or {path.name}.gz) not found; {_layout_hint('MNIST', Path(root))}")
        found.append(actual)
    image_path, label_path = found
    images = read_idx(image_path, IDX_IMAGES)
    if images.shape[1:] != (28, 28):
        raise DataError(f"{image_path}: images are {images.shape[1]}x{images.shape[2]}, expected 28x28")
    labels = read_idx(label_path, IDX_LABELS)
    if len(labels) != len(images):
        raise DataError(f"{label_path} holds {len(labels)} labels but {image_path} holds {len(images)} images; "
                        "they must be the same split")
    _check_labels(labels, label_path)
    return images, labels.astype(np.int64)


def _check_labels(labels: np.ndarray, path: Path) -> None:
    bad = np.flatnonzero((labels < 0) | (labels >= NUM_CLASSES))
    if bad.size:
        i = int(bad[0])
        raise DataError(f"{path}: label of record {i} is {int(labels[i])}, expected 0-{NUM_CLASSES - 1} "
                        f"({bad.size} bad label(s) in all)")


# --- CIFAR-10 (pickled batches) ------------------------------------------------------------


def safe_load_pickle(path: Path) -> Any:
    """The object pickled in ``path``, read with the restricted unpickler; any failure is a DataError."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path} not found") from None
    # latin1 is how Python 2 strings in the original files must be decoded (numpy arrays included).
    return safe_loads(data, str(path), encoding="latin1",
                      refused_hint="; this is not a CIFAR-10 batch (or it was tampered with)")


def _str_keys(obj: Any, path: Path) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise DataError(f"{path}: holds a {type(obj).__name__}, expected a dict")
    # The original files have bytes keys (b'data'); torchvision decodes them as str. Accept both.
    return {k.decode("latin1") if isinstance(k, bytes) else k: v for k, v in obj.items()}


def read_cifar_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """One CIFAR-10 batch file: uint8 images (N, 3, 32, 32) and int64 labels (N,)."""
    batch = _str_keys(safe_load_pickle(path), path)
    missing = [k for k in ("data", "labels") if k not in batch]
    if missing:
        raise DataError(f"{path}: missing key(s) {missing}; a CIFAR-10 batch has b'data' and b'labels'")
    data = batch["data"]
    if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3 * 32 * 32:
        shape = getattr(data, "shape", None)
        raise DataError(f"{path}: 'data' is {type(data).__name__} {getattr(data, 'dtype', '')} of shape {shape}, "
                        "expected uint8 (N, 3072): 32x32 images, red then green then blue plane, row-major")
    labels = _integer_labels(batch["labels"], path)
    if labels.ndim != 1 or len(labels) != len(data):
        raise DataError(f"{path}: {labels.size} labels for {len(data)} images; expected one label per image")
    if len(data) == 0:
        raise DataError(f"{path}: holds no images (data has shape {data.shape}); a CIFAR-10 batch holds 10,000: "
                        "download it again")
    _check_labels(labels, path)
    return data.reshape(-1, 3, 32, 32), labels


def _integer_labels(value: Any, path: Path) -> np.ndarray:
    """``labels`` as int64, only if every label is an integer: no floats (1.7 is not class 1), no bools."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "iu":
            raise DataError(f"{path}: 'labels' is an array of {value.dtype}; expected integers 0-{NUM_CLASSES - 1}")
        return value.astype(np.int64)
    if not isinstance(value, list | tuple):
        raise DataError(f"{path}: 'labels' is a {type(value).__name__}; expected a list of integers 0-{NUM_CLASSES - 1}")
    bad = []
    for i, label in enumerate(value):
        if isinstance(label, bool | np.bool_) or not isinstance(label, int | np.integer):
            raise DataError(f"{path}: label of record {i} is {label!r:.40} ({type(label).__name__}); expected an "
                            f"integer 0-{NUM_CLASSES - 1}")
        if not 0 <= label < NUM_CLASSES:
            bad.append(i)
    if bad:
        raise DataError(f"{path}: label of record {bad[0]} is {int(value[bad[0]])}, expected 0-{NUM_CLASSES - 1} "
                        f"({len(bad)} bad label(s) in all)")
    return np.asarray(value, dtype=np.int64) if value else np.zeros(0, dtype=np.int64)


def cifar10_present(root: Path) -> bool:
    folder = Path(root) / CIFAR10_DIR
    names = [*CIFAR10_SPLITS["train"], *CIFAR10_SPLITS["test"], "batches.meta"]
    return all((folder / n).is_file() for n in names)


def read_cifar10_classes(root: Path) -> list[str]:
    path = Path(root) / CIFAR10_DIR / "batches.meta"
    if not path.is_file():
        raise DataError(f"CIFAR-10 file {path} not found; {_layout_hint('CIFAR10', Path(root))}")
    meta = _str_keys(safe_load_pickle(path), path)
    names = meta.get("label_names")
    if not isinstance(names, list) or len(names) != NUM_CLASSES:
        raise DataError(f"{path}: 'label_names' should list {NUM_CLASSES} class names, got {names!r}")
    return [n.decode("latin1") if isinstance(n, bytes) else str(n) for n in names]


def read_cifar10(root: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    """CIFAR-10 ``split`` ('train': data_batch_1..5 in order, 'test'): uint8 (N, 3, 32, 32), int64 (N,)."""
    folder = Path(root) / CIFAR10_DIR
    paths = [folder / name for name in CIFAR10_SPLITS[split]]
    for path in paths:
        if not path.is_file():
            raise DataError(f"CIFAR-10 file {path} not found; {_layout_hint('CIFAR10', Path(root))}")
    parts = [read_cifar_batch(p) for p in paths]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


# --- download (optional torchvision) ------------------------------------------------------


def download(dataset: str, root: Path) -> None:
    """Fetch MNIST or CIFAR10 into ``root`` with torchvision, which writes the layout above."""
    try:
        import torchvision.datasets as tv_datasets
    except ImportError:
        raise DataError(f"download=true needs torchvision, which is not installed: `pip install torchvision` "
                        f"matching your torch version, or {_layout(dataset, Path(root))}") from None
    Path(root).mkdir(parents=True, exist_ok=True)
    try:
        getattr(tv_datasets, dataset)(str(root), train=True, download=True)
    except (OSError, RuntimeError) as exc:
        raise DataError(f"downloading {dataset} into {root} failed: {exc}") from None


def ensure(dataset: str, root: Path, allow_download: bool) -> None:
    """Download ``dataset`` when files are missing and that is allowed; readers report what is missing otherwise."""
    present = {"MNIST": mnist_present, "CIFAR10": cifar10_present}[dataset]
    if allow_download and not present(Path(root)):
        download(dataset, Path(root))

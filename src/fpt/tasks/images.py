"""What the image tasks share: uint8 images -> tokens, fixed splits, and assembling TaskData.

Training images stay uint8 in memory (MNIST 47 MB, CIFAR-10 154 MB, instead of 4 bytes per
feature as float tokens) and are tokenised per batch by ``TensorSource.transform``, which
also applies the random augmentation; held-out sets are tokenised once, never augmented.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch

from fpt.model import InputSpec
from fpt.tasks.base import Batch, TaskData, TensorSource
from fpt.transforms import augment_images, normalize, pad_to, patchify

Tensor = torch.Tensor

EVAL_CHUNK = 2048  # images tokenised at a time for held-out sets: bounds the float copy in memory


@dataclass(frozen=True)
class ImageTokens:
    """uint8 images (B, C, H, W) -> float tokens (B, (S/p)^2, p * p * C).

    Steps: scale to [0, 1], zero-pad to ``size`` (if set), augment (training only), per-channel
    normalisation, patchify. Augmentation runs before normalisation as in the official code,
    so the zero fill of crops and rotations is black, not the mean colour.
    """

    patch: int
    size: int | None = None
    mean: tuple[float, ...] = (0.0,)
    std: tuple[float, ...] = (1.0,)
    augment: bool = False

    @property
    def random(self) -> bool:
        """Whether two calls can give different tokens (feature caching needs False)."""
        return self.augment

    def __call__(self, images: Tensor, gen: torch.Generator | None = None) -> Tensor:
        x = images.float() / 255  # (B, C, H, W)
        if self.size is not None:
            x = pad_to(x, self.size)  # (B, C, S, S)
        if self.augment:
            x = augment_images(x, _need(gen))
        return patchify(normalize(x, self.mean, self.std), self.patch)  # (B, T, p * p * C)


@dataclass(frozen=True)
class PixelIds:
    """uint8 single-channel images (B, 1, H, W) -> integer tokens (B, H * W), one per pixel, row-major."""

    augment: bool = False

    @property
    def random(self) -> bool:
        return self.augment

    def __call__(self, images: Tensor, gen: torch.Generator | None = None) -> Tensor:
        if self.augment:
            # Nearest sampling and zero fill keep every value an exact integer 0-255.
            x = augment_images(images.float(), _need(gen))
            images = x.round().to(torch.uint8)
        return images.flatten(1).long()  # (B, H * W)


def _need(gen: torch.Generator | None) -> torch.Generator:
    if gen is None:
        raise ValueError("augmentation needs a torch.Generator (TensorSource passes one per batch)")
    return gen


def tokenize_all(tokens: ImageTokens | PixelIds, images: Tensor) -> Tensor:
    """Tokens for a whole held-out set, without augmentation."""
    plain = replace(tokens, augment=False)
    return torch.cat([plain(images[i: i + EVAL_CHUNK]) for i in range(0, len(images), EVAL_CHUNK)])


def stratified_split(labels: np.ndarray, test_size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices (train, test) with exactly ``test_size`` test examples and each class's share kept.

    Classes get test places in proportion to their size (largest remainders break ties), and
    the examples within a class are drawn with ``seed``; the result depends on nothing else.
    """
    classes, counts = np.unique(labels, return_counts=True)
    if not 0 < test_size < len(labels):
        raise ValueError(f"test_size={test_size} must be between 1 and {len(labels) - 1}")
    share = counts * test_size / len(labels)
    take = np.floor(share).astype(np.int64)
    order = np.argsort(-(share - take), kind="stable")
    take[order[: test_size - take.sum()]] += 1
    rng = np.random.default_rng(seed)
    test = np.concatenate([rng.permutation(np.flatnonzero(labels == c))[:k] for c, k in zip(classes, take, strict=True)])
    test = np.sort(test)
    train = np.setdiff1d(np.arange(len(labels)), test)
    return train, test


VAL_SPLIT_SEED = 0  # the validation hold-out is part of the task's definition, the same for every run seed


Split = tuple[np.ndarray, np.ndarray]  # (images, labels)


def hold_out(train: Split, size: int) -> tuple[Split, Split]:
    """(train, val): ``size`` training examples held out for validation, stratified by class, fixed seed."""
    x, y = train
    keep, val = stratified_split(y, size, VAL_SPLIT_SEED)
    return (x[keep], y[keep]), (x[val], y[val])


def class_counts(labels: np.ndarray) -> dict[int, int]:
    classes, counts = np.unique(labels, return_counts=True)
    return {int(c): int(n) for c, n in zip(classes, counts, strict=True)}


def labels_tensor(labels: np.ndarray) -> Tensor:
    return torch.from_numpy(np.asarray(labels, dtype=np.int64)).view(-1, 1)  # (N, 1): one prediction each


def image_task_data(
    spec: InputSpec,
    train: tuple[np.ndarray, np.ndarray],
    evals: dict[str, tuple[np.ndarray, np.ndarray]],  # must hold "val" and "test"
    tokens: ImageTokens | PixelIds,
    seed: int,
    info: dict[str, Any],
    pretokenize: bool = False,
) -> TaskData:
    """TaskData from uint8 images: training tokenised per batch by ``tokens``; held-out sets once.

    ``pretokenize`` stores the training tokens instead (small sets without augmentation), so a
    run that trains only the head can cache the frozen features.
    """
    x, y = train
    images = torch.from_numpy(np.ascontiguousarray(x))
    if pretokenize:
        if tokens.random:
            raise ValueError("pretokenize would freeze one random augmentation of the training set")
        source = TensorSource(Batch(tokenize_all(tokens, images), labels_tensor(y)), seed)
    else:
        source = TensorSource(Batch(images, labels_tensor(y)), seed, transform=tokens)
    eval_sets = {name: Batch(tokenize_all(tokens, torch.from_numpy(np.ascontiguousarray(ex))), labels_tensor(ey))
                 for name, (ex, ey) in evals.items()}
    sizes = {"train": len(y), **{name: len(ey) for name, (_, ey) in evals.items()}}
    return TaskData(spec, source, eval_sets, target=None, info={**info, "split_sizes": sizes})

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

from fpt.data.base import stratified_split  # noqa: F401  (the tasks' split; kept importable here)
from fpt.data.tokenisers import ImageTokens
from fpt.model import InputSpec
from fpt.tasks.base import Batch, TaskData, TensorSource
from fpt.transforms import augment_images

Tensor = torch.Tensor

EVAL_CHUNK = 2048  # images tokenised at a time for held-out sets: bounds the float copy in memory


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
    return TaskData(spec, source, eval_sets, info={**info, "split_sizes": sizes})

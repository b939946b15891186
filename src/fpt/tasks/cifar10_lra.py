"""CIFAR-10 LRA: the image in grayscale, one pixel per token: 1024 tokens, no 2-D prior.

Grayscale as Long Range Arena makes it: 0.2989 R + 0.5870 G + 0.1140 B, rounded to 0-255.

- ``input=float`` (the paper's code): pixel / 255 normalised to [-1, 1] ((x - 0.5) / 0.5),
  token dimension 1 through a linear layer; trains with the crop/flip/rotation augmentation
  (``augment``, default on) on the training images less a validation hold-out of 5,000
  (stratified, fixed seed; the official code trained on all 50,000), tests on the 10,000. The
  official code converts to grayscale in float without rounding; here it is rounded first,
  a difference below one grey level.
- ``input=int`` (Long Range Arena): the 256 grey levels are integer tokens (an embedding
  table), no augmentation; trains on the first 45,000 training images, validates on the
  last 5,000 (data_batch_5's second half), tests on the 10,000. LRA took its 90%/10% cut
  from TFDS's own ordering of the training set, so its validation images differ from ours.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from fpt.data.image_files import ensure, read_cifar10, read_cifar10_classes
from fpt.errors import ConfigError
from fpt.model import InputSpec
from fpt.tasks.base import TASKS, DataSource, TaskData
from fpt.tasks.images import VAL_SPLIT_SEED, ImageTokens, PixelIds, hold_out, image_task_data
from fpt.transforms import grayscale_lra

LRA_VAL_FRACTION = 10  # 1 in 10 training images validates: 45,000 / 5,000


@dataclass(frozen=True)
class Cifar10LraOptions:
    input: str = field(default="float", metadata={"help": "float: values in [-1, 1], linear input layer (the paper); "
                                                          "int: 256 grey levels as tokens, 45k/5k/10k split (LRA)"})
    augment: bool | None = field(default=None, metadata={"help": "crop/flip/rotation on training batches; "
                                                                  "default: on for float, off for int"})

    def __post_init__(self) -> None:
        if self.input not in {"float", "int"}:
            raise ConfigError(f"cifar10-lra: input={self.input!r} must be float or int")

    @property
    def augmented(self) -> bool:
        return self.augment if self.augment is not None else self.input == "float"


def gray(images: np.ndarray) -> np.ndarray:
    return grayscale_lra(torch.from_numpy(images)).numpy()  # (N, 3, 32, 32) -> (N, 1, 32, 32) uint8


@TASKS.register("cifar10-lra")
class Cifar10Lra:
    Options = Cifar10LraOptions

    def build(self, o: Cifar10LraOptions, seed: int, source: DataSource) -> TaskData:
        ensure("CIFAR10", source.root, source.download)
        classes = read_cifar10_classes(source.root)
        (train_x, train_y), (test_x, test_y) = read_cifar10(source.root, "train"), read_cifar10(source.root, "test")
        train_x, test_x = gray(train_x), gray(test_x)
        augmentation = ("train: random crop (zero pad 4), horizontal flip, rotation +-20 degrees (nearest, zero "
                        "fill); eval: none") if o.augmented else "none"
        info = {"resolution": "32x32 grayscale (LRA: 0.2989 R + 0.5870 G + 0.1140 B, rounded)", "patch": 1,
                "augmentation": augmentation, "classes": classes}
        if o.input == "float":
            tokens = ImageTokens(32, 1, "gray", [0.5], [0.5], augment=o.augmented)
            spec = InputSpec(seq_len=1024, num_classes=10, token_dim=1)
            info |= {"tokenisation": "1024 tokens of 1 grey value, row-major",
                     "normalisation": "(pixel / 255 - 0.5) / 0.5, in [-1, 1]"}
            train, val = hold_out((train_x, train_y), len(train_y) // LRA_VAL_FRACTION)
            info["validation"] = f"{len(val[1])} training images held out (stratified, seed {VAL_SPLIT_SEED})"
            return image_task_data(spec, train, {"val": val, "test": (test_x, test_y)}, tokens, seed, info)
        # Validation is the tail of the training files, whatever the run seed, so every run sees the same split.
        cut = len(train_y) - len(train_y) // LRA_VAL_FRACTION
        train, val = (train_x[:cut], train_y[:cut]), (train_x[cut:], train_y[cut:])
        spec = InputSpec(seq_len=1024, num_classes=10, vocab_size=256)
        info |= {"tokenisation": "1024 integer tokens (grey level 0-255), row-major", "normalisation": "none",
                 "validation": "the last 5,000 training images (LRA's 45k/5k cut)"}
        return image_task_data(spec, train, {"val": val, "test": (test_x, test_y)}, PixelIds(o.augmented), seed, info)

"""CIFAR-10: a 32x32 colour image in 4x4 patches: 64 tokens of 48 values (4x4 pixels x RGB).

Training follows the official code: random crop after zero padding by 4, horizontal flip,
rotation up to 20 degrees, then per-channel normalisation with its mean (0.4914, 0.4822,
0.4465) and std (0.2023, 0.1994, 0.2010). Held-out sets are only normalised. Validation:
``val_size`` (default 5,000) training images held out, stratified, fixed seed, so training sees
45,000 (the official code trained on all 50,000); test on the 10,000 test images.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fpt.data.image_files import ensure, read_cifar10, read_cifar10_classes
from fpt.errors import ConfigError
from fpt.model import InputSpec
from fpt.tasks.base import TASKS, DataSource, TaskData
from fpt.tasks.images import VAL_SPLIT_SEED, ImageTokens, hold_out, image_task_data
from fpt.tasks.mnist import check_val_size

# The official code's constants (commonly quoted for CIFAR-10; the std is not the exact pixel std).
CIFAR10_MEAN = (0.4914, 0.4822, 0.4465)
CIFAR10_STD = (0.2023, 0.1994, 0.2010)


@dataclass(frozen=True)
class Cifar10Options:
    patch_size: int = field(default=4, metadata={"help": "side of the square patch that makes one token"})
    augment: bool = field(default=True, metadata={"help": "crop (pad 4), flip, rotation 20 degrees on training batches"})
    val_size: int = field(default=5000, metadata={"help": "training images held out for validation (selection)"})

    def __post_init__(self) -> None:
        check_val_size("cifar10", self.val_size, 50_000)
        if self.patch_size < 1 or 32 % self.patch_size:
            raise ConfigError(f"cifar10: patch_size={self.patch_size} must divide 32")


@TASKS.register("cifar10")
class Cifar10:
    Options = Cifar10Options

    def build(self, o: Cifar10Options, seed: int, source: DataSource) -> TaskData:
        ensure("CIFAR10", source.root, source.download)
        classes = read_cifar10_classes(source.root)
        train, test = read_cifar10(source.root, "train"), read_cifar10(source.root, "test")
        p = o.patch_size
        tokens = ImageTokens(32, p, "rgb", list(CIFAR10_MEAN), list(CIFAR10_STD), augment=o.augment)
        n = (32 // p) ** 2
        spec = InputSpec(seq_len=n, num_classes=10, token_dim=p * p * 3)
        info = {
            "resolution": "32x32 RGB",
            "patch": p,
            "tokenisation": f"{n} tokens of {p}x{p}x3: patches row-major; inside a patch (row, column, channel), "
                            "channel fastest",
            "normalisation": f"pixel / 255, then per channel (x - {CIFAR10_MEAN}) / {CIFAR10_STD}",
            "augmentation": "train: random crop (zero pad 4), horizontal flip, rotation +-20 degrees (nearest, zero "
                            "fill); test: none" if o.augment else "none",
            "classes": classes,
        }
        train, val = hold_out(train, o.val_size)
        info["validation"] = f"{o.val_size} training images held out (stratified, seed {VAL_SPLIT_SEED})"
        return image_task_data(spec, train, {"val": val, "test": test}, tokens, seed, info)

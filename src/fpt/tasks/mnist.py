"""MNIST: a handwritten digit cut into 4x4 patches, 10 classes.

The paper pads the 28x28 image to 32x32 (64 tokens of 16 values); the official code feeds
28x28 (49 tokens): ``image_size=28``. Pixels are scaled to [0, 1] and not otherwise
normalised (the official code's Normalize(mean=0, std=1) is the identity). No augmentation.
Validation: ``val_size`` (default 5,000) training images held out, stratified by class with a
fixed seed, so training sees 55,000 (the official code trained on all 60,000 and reported the
test set it also watched); test on the 10,000 test images.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fpt.data.image_files import ensure, read_mnist
from fpt.errors import ConfigError
from fpt.model import InputSpec
from fpt.tasks.base import TASKS, DataSource, TaskData
from fpt.tasks.images import VAL_SPLIT_SEED, ImageTokens, hold_out, image_task_data


@dataclass(frozen=True)
class MnistOptions:
    image_size: int = field(default=32, metadata={"help": "32: pad 28x28 to 32x32 (the paper, 64 tokens); "
                                                          "28: as stored (the official code, 49 tokens)"})
    patch_size: int = field(default=4, metadata={"help": "side of the square patch that makes one token"})
    val_size: int = field(default=5000, metadata={"help": "training images held out for validation (selection)"})

    def __post_init__(self) -> None:
        check_image_options("mnist", self.image_size, self.patch_size)
        check_val_size("mnist", self.val_size, 60_000)


def check_val_size(task: str, val_size: int, n_train: int) -> None:
    if not 1 <= val_size < n_train:
        raise ConfigError(f"{task}: val_size={val_size} must be between 1 and {n_train - 1} (validation is held out "
                          "from the training images; selection never reads the test set)")


def check_image_options(task: str, image_size: int, patch_size: int) -> None:
    if image_size < 28:
        raise ConfigError(f"{task}: image_size={image_size} must be >= 28 (digits are padded, never cropped)")
    if patch_size < 1 or image_size % patch_size:
        raise ConfigError(f"{task}: patch_size={patch_size} must divide image_size={image_size}")


def mnist_tokens(image_size: int, patch_size: int) -> tuple[ImageTokens, InputSpec, dict]:
    """The tokeniser, input spec and description shared by the MNIST-digit tasks."""
    tokens = ImageTokens(image_size, patch_size, "gray", [0.0], [1.0])  # 28x28 digits padded to image_size
    n = (image_size // patch_size) ** 2
    spec = InputSpec(seq_len=n, num_classes=10, token_dim=patch_size * patch_size)
    info = {
        "resolution": f"28x28 padded to {image_size}x{image_size}" if image_size != 28 else "28x28",
        "patch": patch_size,
        "tokenisation": f"{n} tokens of {patch_size}x{patch_size} pixels, patches row-major, pixels row-major",
        "normalisation": "pixel / 255, in [0, 1]",
        "augmentation": "none",
    }
    return tokens, spec, info


@TASKS.register("mnist")
class Mnist:
    Options = MnistOptions

    def build(self, o: MnistOptions, seed: int, source: DataSource) -> TaskData:
        ensure("MNIST", source.root, source.download)
        train, test = read_mnist(source.root, "train"), read_mnist(source.root, "test")
        tokens, spec, info = mnist_tokens(o.image_size, o.patch_size)
        train, val = hold_out((train[0][:, None], train[1]), o.val_size)  # (N, 1, 28, 28)
        info["validation"] = f"{o.val_size} training images held out (stratified, seed {VAL_SPLIT_SEED})"
        return image_task_data(spec, train, {"val": val, "test": (test[0][:, None], test[1])}, tokens, seed, info)

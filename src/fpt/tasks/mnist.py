"""MNIST: a handwritten digit cut into 4x4 patches, 10 classes.

The paper pads the 28x28 image to 32x32 (64 tokens of 16 values); the official code feeds
28x28 (49 tokens): ``image_size=28``. Pixels are scaled to [0, 1] and not otherwise
normalised (the official code's Normalize(mean=0, std=1) is the identity). No augmentation.
Train on the 60,000 training images, test on the 10,000 test images.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fpt.model import InputSpec
from fpt.tasks.base import TASKS, DataSource, TaskData
from fpt.tasks.image_files import ensure, read_mnist
from fpt.tasks.images import ImageTokens, image_task_data


@dataclass(frozen=True)
class MnistOptions:
    image_size: int = field(default=32, metadata={"help": "32: pad 28x28 to 32x32 (the paper, 64 tokens); "
                                                          "28: as stored (the official code, 49 tokens)"})
    patch_size: int = field(default=4, metadata={"help": "side of the square patch that makes one token"})

    def __post_init__(self) -> None:
        check_image_options("mnist", self.image_size, self.patch_size)


def check_image_options(task: str, image_size: int, patch_size: int) -> None:
    if image_size < 28:
        raise ValueError(f"{task}: image_size={image_size} must be >= 28 (digits are padded, never cropped)")
    if patch_size < 1 or image_size % patch_size:
        raise ValueError(f"{task}: patch_size={patch_size} must divide image_size={image_size}")


def mnist_tokens(image_size: int, patch_size: int) -> tuple[ImageTokens, InputSpec, dict]:
    """The tokeniser, input spec and description shared by the MNIST-digit tasks."""
    tokens = ImageTokens(patch=patch_size, size=image_size if image_size != 28 else None)
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
        add_channel = [(x[:, None], y) for x, y in (train, test)]  # (N, 1, 28, 28)
        return image_task_data(spec, add_channel[0], {"test": add_channel[1]}, tokens, seed, info)

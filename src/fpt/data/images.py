"""Image folders, ``DIR/<class>/*.png|jpg`` (torchvision's ImageFolder layout), or with split
directories ``DIR/train|val|test/<class>/...``, listed by Hugging Face ``datasets``' imagefolder
builder. Each file is then decoded here with Pillow so that a corrupt one is named; images are
resized (``image_size``) and converted to RGB or grayscale (``image_channels``) as they load.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from fpt.data.base import SEEDED, RawData, Split
from fpt.errors import DataError

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp"}
HF_SPLITS = {"train": "train", "validation": "val", "valid": "val", "val": "val", "dev": "val", "test": "test"}


def has_images(directory: Path, depth: int = 2) -> bool:
    """Whether image files lie ``depth`` levels below ``directory`` (class folders, or split/class)."""
    pattern = "/".join(["*"] * depth)
    return any(p.suffix.lower() in IMAGE_SUFFIXES for p in directory.glob(pattern))


def _empty_class_dirs(directory: Path) -> list[str]:
    out = []
    for split_dir in [directory, *(d for d in directory.iterdir() if d.is_dir() and d.name.lower() in HF_SPLITS)]:
        for d in split_dir.iterdir():
            if d.is_dir() and d.name.lower() not in HF_SPLITS and not any(
                    p.suffix.lower() in IMAGE_SUFFIXES for p in d.iterdir()):
                out.append(str(d))
    return out


def read_image_folder(path: Path, channels: str, size: int) -> RawData:
    if not path.is_dir():
        raise DataError(f"{path}: an image dataset is a folder DIR/<class>/*.png (or DIR/train/<class>/...)")
    if not (has_images(path, 2) or has_images(path, 3)):
        raise DataError(f"{path}: no images (.png/.jpg/...) in DIR/<class>/ or DIR/train/<class>/; put each class's "
                        "images in a folder named after the class")
    empty = _empty_class_dirs(path)
    if empty:
        raise DataError(f"{empty[0]}: empty class folder (no .png/.jpg images); add its images or remove it")
    train_dir = next((d for d in path.iterdir() if d.is_dir() and HF_SPLITS.get(d.name.lower()) == "train"), path)
    classes = sorted(d.name for d in train_dir.iterdir() if d.is_dir() and d.name.lower() not in HF_SPLITS)
    if len(classes) == 1:
        raise DataError(f"{train_dir}: one class folder only ({classes[0]!r}); classification needs a folder of images "
                        "for each of at least two classes")
    from fpt.data.tables import _cause, quiet_datasets

    datasets = quiet_datasets()
    try:
        with tempfile.TemporaryDirectory(prefix="fpt-datasets-") as cache:
            dd = datasets.load_dataset("imagefolder", data_dir=str(path), cache_dir=cache, keep_in_memory=True)
    except Exception as exc:
        raise DataError(f"{path}: cannot be listed as an image folder ({_cause(exc)}); lay it out as "
                        "DIR/<class>/*.png or DIR/train|val|test/<class>/*.png") from None
    names = None
    paths: dict[str, tuple[list[str], np.ndarray]] = {}
    for split, ds in dd.items():
        if "label" not in ds.column_names:
            raise DataError(f"{path}: images must sit in one folder per class (DIR/<class>/*.png); found no class "
                            "folders")
        ds = ds.cast_column("image", datasets.Image(decode=False))
        split_names = ds.features["label"].names
        if names is not None and split_names != names:
            raise DataError(f"{path / split}: class folders {split_names} differ from train's {names}; give every "
                            "split the same class folders")
        names = split_names
        files = [item["path"] for item in ds["image"]]
        paths[HF_SPLITS.get(split, split)] = (files, np.asarray(ds["label"]))
    if "train" not in paths:
        raise DataError(f"{path}: split folders {sorted(paths)} but no train/; name the training folder train")
    if channels == "auto":
        channels = "rgb" if any(_has_colour(f) for f in paths["train"][0][:200]) else "gray"
    splits = {}
    for split, (files, labels) in paths.items():
        images = [load_image(Path(f), channels, size) for f in files]
        label_names = np.array([names[i] for i in labels], dtype=object)[:, None]
        splits[split] = Split(images, label_names, f"{path}/{'' if len(paths) == 1 else split + '/'}<class>/")
    split_from = "the data's own split folders" if len(paths) > 1 else SEEDED
    return RawData("image", {k: splits[k] for k in ("train", "val", "test") if k in splits}, ["class"],
                   f"image folder {path}", split_from, {"image_channels": channels, "class_folders": names})


def _open(path: Path):  # noqa: ANN202 (a PIL image)
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            im.load()
            return _eight_bit(im)
    except Image.DecompressionBombError as exc:  # a tiny compressed file that decodes to billions of pixels
        raise DataError(f"{path}: the image is too large to decode safely ({str(exc).split(' pixels')[0]} pixels); "
                        "resize it (e.g. to a few thousand pixels a side) or delete it") from None
    except MemoryError:
        raise DataError(f"{path}: the image does not fit in memory when decoded; resize it or delete it") from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise DataError(f"{path}: not a readable image ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
                        "; replace or delete the file") from None


def _eight_bit(im):  # noqa: ANN001, ANN202 (PIL images)
    """The image with 16/32-bit integer pixels scaled to 0-255: Pillow's convert("L") clips them at 255,
    which makes every pixel above 255 white (a 16-bit image of 1000 and one of 60000 would be the same)."""
    from PIL import Image

    if not im.mode.startswith("I"):
        return im.copy()
    arr = np.asarray(im).astype(np.float64)
    lo, hi = (float(arr.min()), float(arr.max())) if arr.size else (0.0, 0.0)
    if lo >= 0 and hi <= 65535:
        arr = arr / 257  # the 16-bit range onto the 8-bit one, as for any 16-bit image
    else:  # 32-bit integers outside the 16-bit range: the image's own range
        arr = (arr - lo) * (255 / (hi - lo)) if hi > lo else np.zeros_like(arr)
    return Image.fromarray(np.round(arr).astype(np.uint8), "L")


def _has_colour(path: str) -> bool:
    im = _open(Path(path))
    if im.mode in {"L", "1", "I", "I;16", "F", "LA"}:
        return False
    rgb = np.asarray(im.convert("RGB"), dtype=np.int16)
    return bool(np.abs(rgb - rgb.mean(-1, keepdims=True)).max() > 2)


def load_image(source: Path | np.ndarray | Any, channels: str, size: int) -> np.ndarray:
    """(size, size, C) uint8, the one way every image is read (folders, hub datasets, arrays, new inputs):
    ``source`` an image file (decoded safely: ``_open``), an (H, W, C) uint8 array or a PIL image (a hub
    dataset's); 16/32-bit pixels scaled to 8 bits, converted to RGB (C=3) or grayscale (C=1), resized bilinearly."""
    from PIL import Image

    if isinstance(source, (str, Path)):
        im = _open(Path(source))
    elif isinstance(source, np.ndarray):
        im = Image.fromarray(source[..., 0] if source.shape[-1] == 1 else source[..., :3])
    else:
        im = _eight_bit(source)
    im = im.convert("RGB" if channels == "rgb" else "L")
    if im.size != (size, size):
        im = im.resize((size, size), Image.BILINEAR)
    arr = np.asarray(im, dtype=np.uint8)
    return arr[:, :, None] if arr.ndim == 2 else arr


__all__ = ["IMAGE_SUFFIXES", "has_images", "load_image", "read_image_folder"]

"""Image folders, ``DIR/<class>/*.png|jpg`` (torchvision's ImageFolder layout), or with split
directories ``DIR/train|val|test/<class>/...``, listed by Hugging Face ``datasets``' imagefolder
builder. Each file is then decoded here with Pillow so that a corrupt one is named; images are
resized (``image_size``) and converted to RGB or grayscale (``image_channels``) as they load.
A trained image model's checks of new images (folders and arrays) live here too (``fpt.data.modalities``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from fpt.data.base import SEEDED, Checks, Inputs, RawData, Split
from fpt.errors import DataError, SchemaError

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
    from PIL import Image, ImageOps, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            im.load()
            # a camera's photo is stored as the sensor saw it and its EXIF orientation says how to turn it upright;
            # as transformers' load_image does, apply it, or a phone's portrait photos train lying on their side
            return _eight_bit(ImageOps.exif_transpose(im))
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
    if im.mode in {"RGBA", "LA", "PA", "La", "RGBa"} or (im.mode == "P" and "transparency" in im.info):
        # transparent pixels onto white, as transformers' convert_to_rgb does: convert() alone drops the alpha
        # channel and shows whatever colour the transparent pixels hold (often black)
        rgba = im.convert("RGBA")
        im = Image.alpha_composite(Image.new("RGBA", rgba.size, (255, 255, 255, 255)), rgba)
    im = im.convert("RGB" if channels == "rgb" else "L")
    if im.size != (size, size):
        im = im.resize((size, size), Image.BILINEAR)
    arr = np.asarray(im, dtype=np.uint8)
    return arr[:, :, None] if arr.ndim == 2 else arr


def array_channels(X: Any, channels: str) -> str:
    """The channels of images given as arrays: ``channels``, or with auto rgb when the training X has 3 channels."""
    if channels != "auto":
        return channels
    return "rgb" if (X.ndim == 4 and 3 in (X.shape[-1], X.shape[1])) else "gray"


def array_notes(splits: dict[str, Split], channels: str) -> dict[str, Any]:
    """What a model trained on image arrays records of them: the channels chosen."""
    return {"image_channels": channels}


def as_images(X: np.ndarray, channels: str, size: int, where: str) -> list[np.ndarray]:
    """An image array (n, H, W[, C]) or (n, C, H, W), uint8 0-255 or floats 0-1, as (size, size, C) uint8 images
    (an .npz's X, Python's, and new image arrays)."""
    if X.ndim not in (3, 4):  # a table's rows would otherwise be read as 1-pixel-high images
        raise DataError(f"{where}: --modality image needs X of shape (n, H, W[, C]) or (n, C, H, W), not {X.shape}")
    if X.ndim == 3:
        X = X[..., None]
    if X.shape[-1] not in (1, 3, 4) and X.shape[1] in (1, 3, 4):
        X = np.moveaxis(X, 1, -1)  # (n, C, H, W) -> (n, H, W, C)
    if X.dtype != np.uint8:
        lo, hi = float(np.nanmin(X)), float(np.nanmax(X))
        if lo < 0 or hi > 255:
            raise DataError(f"{where}: image values in [{lo:g}, {hi:g}]; give uint8 0-255 or floats in [0, 1]")
        X = np.round(X * 255 if hi <= 1 else X).astype(np.uint8)
    return [load_image(img, channels, size) for img in X]


# ---------------------------------------------------------------------------------------------- new inputs


def read_image_inputs(path: Path, checks: Checks) -> Inputs:
    """``fpt predict``'s reader of ``DIR/*.png`` (unlabelled) or ``DIR/<class>/*.png`` (labelled by folder),
    decoded as training did."""
    flat = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
    folders = sorted(d for d in path.iterdir() if d.is_dir() and not d.name.startswith("."))
    splits = [d.name for d in folders if d.name.lower() in HF_SPLITS]
    if splits:
        raise DataError(f"{path}: split folders ({', '.join(splits)}); give one split's folder, e.g. {path / splits[-1]}")
    if flat and folders:
        raise DataError(f"{path}: both images and class folders ({folders[0].name}/); give a folder of images "
                        "(unlabelled) or of class folders (labelled), not both")
    files: list[tuple[Path, str | None]] = [(p, None) for p in flat]
    for d in folders:
        files += [(p, d.name) for p in sorted(d.iterdir()) if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES]
    if not files:
        raise DataError(f"{path}: no images (.png/.jpg/...) in it or in class folders DIR/<class>/")
    tok = checks.schema.prep.tokeniser
    images = [_input_image(p, tok.channels, tok.image_size) for p, _ in files]
    y = None
    if folders:
        y = np.array([label for _, label in files], dtype=object)[:, None]
        checks.labels(y, f"{path}/<class>/")
    return Inputs(images, y, str(path), [str(p.relative_to(path)) for p, _ in files])


def _input_image(file: Path, channels: str, size: int) -> np.ndarray:
    # Training converted every image to the channels it chose; colour given to a grayscale model would be
    # silently dropped, so it is refused (grayscale to an RGB model is lossless, as training did it).
    if channels == "gray" and _has_colour(str(file)):
        raise SchemaError(f"{file}: a colour image, but the model was trained on grayscale images; convert it to "
                          "grayscale, or train a model on colour images (--image-channels rgb)")
    # Files of any size are resized to image_size, as the training images were.
    return load_image(file, channels, size)


def check_images(X: Any, schema: Any, where: str, allow_unseen: bool = False) -> list[np.ndarray]:
    """Image arrays, (n, H, W[, C]) or a list of (H, W[, C]): the training array shape, or the model's own."""
    tok = schema.prep.tokeniser
    c = 3 if tok.channels == "rgb" else 1
    own = {(tok.image_size, tok.image_size, c), (c, tok.image_size, tok.image_size)} | \
        ({(tok.image_size, tok.image_size)} if c == 1 else set())
    trained = tuple(schema.info["X_shape"][1:]) if "X_shape" in schema.info else None
    arrays = [np.asarray(img) for img in X] if isinstance(X, (list, tuple)) else list(np.asarray(X))
    if not arrays:
        raise SchemaError(f"{where}: no images")
    for i, img in enumerate(arrays):
        if img.shape != trained and img.shape not in own:
            expected = " or ".join(str(s) for s in ([trained] if trained else []) + sorted(own))
            raise SchemaError(f"{where}: image {i + 1} has shape {img.shape}, but the model takes {expected} "
                              f"({tok.channels}, {tok.image_size}x{tok.image_size} pixels); resize or convert it")
        if img.dtype.kind not in "iubf":
            raise SchemaError(f"{where}: image {i + 1} has dtype {img.dtype}; give numbers (uint8 0-255 or floats 0-1)")
    return [im for img in arrays for im in as_images(img[None], tok.channels, tok.image_size, where)]


__all__ = ["IMAGE_SUFFIXES", "array_channels", "array_notes", "as_images", "check_images", "has_images", "load_image",
           "read_image_folder", "read_image_inputs"]

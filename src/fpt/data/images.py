"""Image folders, ``DIR/<class>/*.png|jpg`` (torchvision's ImageFolder layout), or with split
directories ``DIR/train|val|test/<class>/...``, listed here (``list_image_folder``) by the rules
below and decoded with Pillow so that a corrupt file is named; images are resized (``image_size``)
and converted to RGB or grayscale (``image_channels``) as they load. A trained image model's checks
of new images (folders and arrays) live here too (``fpt.data.modalities``).

The folder is listed by fpt, not by Hugging Face ``datasets``' imagefolder builder, whose listing
silently disagreed with the layout this module documents: it assigns files to splits by their
*file* names (``cat/test_3.png`` went to the test split), reads a class folder named ``train`` or
``dev_board`` as a split, takes ``Train/`` as a class folder (its split names are lower case), so
the user's own test images were trained on, and drops the labels of every image once one lies in a
subfolder. The rules: names starting with ``.`` or ``__`` are skipped (macOS zips' ``__MACOSX/``
and ``._name`` files, ``.DS_Store``, ``.ipynb_checkpoints/``); a folder directly under ``DIR``
named train/training, val/valid/validation/dev or test/testing/eval/evaluation (any case) that
holds folders is a split folder; every other folder is a class, and its images are those anywhere
below it (subfolders included, as torchvision's ImageFolder reads them); files are taken in order
of their paths.
"""

from __future__ import annotations

import os
import unicodedata
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from fpt.data.base import SEEDED, Checks, Inputs, RawData, Split
from fpt.data.listing import children
from fpt.data.pixel_depth import FULL, level_note, to_eight_bits, white_level
from fpt.errors import DataError, FptWarning, SchemaError, example_word, option

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp", ".avif"}
HF_SPLITS = {"train": "train", "validation": "val", "valid": "val", "val": "val", "dev": "val", "test": "test"}
# Split folder names (lower-cased), Hugging Face's split keywords: a folder of one of these names that holds folders.
SPLIT_FOLDERS = {"train": "train", "training": "train", "val": "val", "valid": "val", "validation": "val",
                 "dev": "val", "test": "test", "testing": "test", "eval": "test", "evaluation": "test"}
# photos (an iPhone's) that Pillow does not decode: named when left out, and by fpt.data.formats when given
UNREAD_PHOTOS = {".heic", ".heif"}
SYSTEM_FILES = {"thumbs.db", "desktop.ini"}  # written into folders by Windows Explorer: never data


class SkippedFiles(FptWarning):
    """Files in class folders that are not images fpt decodes (an iPhone's .heic, a .txt) were left out."""


def has_images(directory: Path, depth: int = 2) -> bool:
    """Whether image files lie ``depth`` levels below ``directory`` (class folders, or split/class)."""
    try:
        entries = children(directory)
    except OSError:  # an unreadable folder holds none that can be read (as Path.glob passes over it)
        return False
    if depth <= 1:
        return any(e.path.suffix.lower() in IMAGE_SUFFIXES for e in entries)
    return any(e.is_dir and has_images(e.path, depth - 1) for e in entries)


def _skipped(p: Path) -> bool:
    """Hidden and system entries (Hugging Face's listing skips the same '.' and '__' names)."""
    return p.name.startswith((".", "__")) or p.name.lower() in SYSTEM_FILES


def _entries(directory: Path) -> tuple[list[Path], list[Path], list[Path]]:
    """(folders, image files, other files) directly in ``directory``, hidden and system entries left out, sorted."""
    folders, images, others = [], [], []
    for p, is_dir in children(directory):
        if _skipped(p):
            continue
        if is_dir:
            folders.append(p)
        elif p.suffix.lower() in IMAGE_SUFFIXES:
            images.append(p)
        else:
            others.append(p)
    return folders, images, others


def _images_below(folder: Path, others: list[Path]) -> list[Path]:
    """The images anywhere below ``folder`` (not through hidden folders), in order of their paths; the other files
    found are added to ``others``."""
    found, seen, top = [], set(), os.path.realpath(folder)
    # through linked folders, as torchvision's ImageFolder walks (followlinks=True): a class assembled from links
    # (ln -s /data/cats-2023 cat/) lost their images without a word. Each real folder once, and never one holding the
    # class folder: a link back up (cat/loop -> ..) would walk cat/loop/cat/loop/... until the path is too long, and
    # read the other classes' images as this one's. Top-down, each folder's entries in order (``children``: the
    # listings the layout's claim made are read again, not listed again)
    stack = [folder]
    while stack:
        root = stack.pop()
        _not_a_run(Path(root))
        real = os.path.realpath(root)
        if root != folder and (real in seen or (top + os.sep).startswith(real + os.sep)):
            continue
        seen.add(real)
        try:
            entries = [e for e in children(root) if not _skipped(e.path)]
        except OSError:  # an unreadable folder is passed over, as os.walk passes over it
            continue
        for p, is_dir in entries:
            if not is_dir:
                (found if p.suffix.lower() in IMAGE_SUFFIXES else others).append(p)
        stack += reversed([e.path for e in entries if e.is_dir])
    return sorted(found, key=str)


def _not_a_run(folder: Path) -> None:
    """Refuse an fpt run directory among the images (``fpt train --out`` inside ``--data``): its plots (``fpt plot``
    writes RUN/curves.png) were read as images of the class it lay in, or it became a class of its own."""
    from fpt import rundir

    if rundir.is_run_dir(folder) or rundir.is_started_run(folder):
        raise DataError(f"{folder}: an fpt run directory inside the image folder, whose files would be read as "
                        f"images of a class; move it out of the image folder (give {option('out')} outside {option('data')})")


def _is_split_folder(d: Path) -> bool:
    return d.name.lower() in SPLIT_FOLDERS and any(not _skipped(c) and is_dir for c, is_dir in children(d))


def _class_files(split_dir: Path, where: str, others: list[Path]) -> list[tuple[Path, str]]:
    """(image, class) for every class folder of ``split_dir``, in order of the images' paths."""
    folders, loose, _ = _entries(split_dir)
    if loose:
        raise DataError(f"{loose[0]}: an image outside the class folders of {where}; move it into its class's "
                        f"folder ({split_dir}/<class>/) or delete it")
    below = {d: _images_below(d, others) for d in folders}
    if not any(below.values()):
        raise DataError(f"{split_dir}: no images (.png/.jpg/...) in its class folders ({', '.join(d.name for d in folders)}"
                        "); put each class's images in a folder named after the class")
    empty = next((d for d in folders if not below[d]), None)
    if empty is not None:
        raise DataError(f"{empty}: empty class folder (no .png/.jpg images in it or its subfolders); add its images "
                        "or remove it")
    return sorted(((p, class_name(d)) for d in folders for p in below[d]), key=lambda f: str(f[0]))


def class_name(folder: Path) -> str:
    """A class folder's name as its class, in Unicode's composed form (NFC): macOS writes names decomposed (NFD:
    'e' and a combining accent), Linux and Windows as they were typed (NFC), so one folder name 'café' unzipped on two
    machines would otherwise be two classes that print alike, and a model trained on one refuses the other's."""
    return unicodedata.normalize("NFC", folder.name)


LABEL_FILES = {".csv", ".tsv", ".txt", ".json", ".jsonl", ".parquet"}


def _unlabelled_splits(path: Path, folders: list[Path]) -> None:
    """Refuse split folders of loose images (Kaggle's train/*.jpg, test/*.jpg and a labels.csv): read as class folders
    they would train a model telling the training images from the test images, the classes 'test' and 'train'. A
    split-named class folder beside others (Pascal VOC's 'train' beside 'bus' and 'car') stays a class."""
    tables = [p.name for p in _entries(path)[2] if p.suffix.lower() in LABEL_FILES]
    names = "/, ".join(d.name for d in folders) + "/"
    beside = f", with {tables[0]} beside them" if tables else ""
    train = next((d.name for d in folders if SPLIT_FOLDERS[d.name.lower()] == "train"), "train")
    raise DataError(f"{path}: {names} {'holds' if len(folders) == 1 else 'hold'} images but no class folders{beside}"
                    f"; fpt reads each image's class from its folder: move the training images into "
                    f"{train}/<class>/ (one folder per label), or name each image in a table beside them whose "
                    "rows give its file name and label (labels.csv of id,label: docs/user-data.md), and predict "
                    "unlabelled images with `fpt predict RUN FOLDER`")


def list_image_folder(path: Path) -> tuple[dict[str, list[tuple[Path, str]]], list[Path]]:
    """The images of an image folder by split ('train', and 'val'/'test' when it has split folders), each with its
    class (its class folder's name), and the files in class folders that are not images (left out)."""
    if not path.is_dir():
        raise DataError(f"{path}: an image dataset is a folder DIR/<class>/*.png (or DIR/train/<class>/...)")
    folders, loose, _ = _entries(path)
    split_dirs = [d for d in folders if _is_split_folder(d)]
    others: list[Path] = []
    if not split_dirs:
        if loose:
            raise DataError(f"{loose[0]}: an image directly in {path}, outside the class folders; put each class's "
                            f"images in a folder named after the class ({path}/<class>/*.png)")
        if not folders:
            raise DataError(f"{path}: no images (.png/.jpg/...) in DIR/<class>/ or DIR/train/<class>/; put each "
                            "class's images in a folder named after the class")
        if all(d.name.lower() in SPLIT_FOLDERS for d in folders):
            _unlabelled_splits(path, folders)
        return {"train": _class_files(path, str(path), others)}, others
    names = ", ".join(d.name for d in split_dirs)
    for d in folders:
        if d in split_dirs:
            continue
        if d.name.lower() in SPLIT_FOLDERS:  # e.g. Kaggle's test/ of unlabelled images beside train/<class>/
            raise DataError(f"{d}: images but no class folders, beside split folders with them ({names}); put them in "
                            f"{d}/<class>/, or move the folder out and predict it with `fpt predict RUN {d}`")
        raise DataError(f"{d}: a folder beside the split folders ({names}); move it into a split folder as a class "
                        "folder, or out of the data folder")
    if loose:
        raise DataError(f"{loose[0]}: an image beside the split folders ({names}); move it into a split's class folder "
                        "or delete it")
    splits: dict[str, list[tuple[Path, str]]] = {}
    seen: dict[str, Path] = {}
    for d in split_dirs:
        split = SPLIT_FOLDERS[d.name.lower()]
        if split in seen:
            raise DataError(f"{path}: two {split} folders, {seen[split].name}/ and {d.name}/; merge them or rename one")
        seen[split] = d
        splits[split] = _class_files(d, str(d), others)
    if "train" not in splits:
        raise DataError(f"{path}: split folders {sorted(d.name for d in split_dirs)} but no train/; name the training "
                        "folder train")
    return splits, others


def skipped_note(others: list[Path], where: Path, inside: str = "in class folders") -> str:
    """One line naming the files (``inside`` class folders, or a folder) that were left out because they are not
    images fpt decodes."""
    kinds = Counter(p.suffix.lower() or "(no suffix)" for p in others)
    return (f"{where}: left out {len(others)} file(s) {inside} that are not "
            f"{'/'.join(sorted(s[1:] for s in IMAGE_SUFFIXES))} images ("
            + ", ".join(f"{k}: {n}" for k, n in kinds.most_common(5)) + f"), e.g. {others[0]}; convert them "
            "(an iPhone's .heic to .jpg) to read them")


def read_image_folder(path: Path, channels: str, size: int) -> RawData:
    listed, others = list_image_folder(path)
    names = sorted({label for files in listed.values() for _, label in files})
    if len(names) == 1:
        train_dir = next((d for d in path.iterdir() if SPLIT_FOLDERS.get(d.name.lower()) == "train"
                          and _is_split_folder(d)), path)
        raise DataError(f"{train_dir}: one class folder only ({names[0]!r}); classification needs a folder of images "
                        "for each of at least two classes")
    if others:
        warnings.warn(skipped_note(others, path), SkippedFiles, stacklevel=2)
    paths = {split: ([str(p) for p, _ in files], [label for _, label in files]) for split, files in listed.items()}
    if channels == "auto":
        channels = "rgb" if any(_has_colour(f) for f in spread(paths["train"][0])) else "gray"
    level = white_level(f for files, _ in paths.values() for f in files)
    splits = {}
    for split, (files, labels) in paths.items():
        images = [load_image(Path(f), channels, size, level and level[0]) for f in files]
        label_names = np.array(labels, dtype=object)[:, None]
        splits[split] = Split(images, label_names, f"{path}/{'' if len(paths) == 1 else split + '/'}<class>/")
    split_from = "the data's own split folders" if len(paths) > 1 else SEEDED
    return RawData("image", {k: splits[k] for k in ("train", "val", "test") if k in splits}, ["class"],
                   f"image folder {path}", split_from, {"image_channels": channels, "class_folders": names,
                                                        **level_notes(str(path), level)})


def level_notes(where: str, level: tuple[int, float] | None) -> dict[str, Any]:
    """What image ``RawData`` records of its 16-bit images' white level (``pixel_depth.white_level``): the level, which
    the tokeniser saves, and, below 65535, the note said at training."""
    if level is None:
        return {}
    return {"white_level": level[0], **({"white_note": level_note(where, *level)} if level[0] < FULL else {})}


def spread(items: list, n: int = 200) -> list:  # noqa: ANN001 (any items)
    """``n`` of ``items`` evenly spaced through them: what ``--image-channels auto`` looks at. The first ``n`` of a
    listing in order of paths are the first class's alone (a class of grayscale scans before classes of colour photos
    made a grayscale model, and every colour image was trained on as gray)."""
    if len(items) <= n:
        return list(items)
    return [items[round(i * (len(items) - 1) / (n - 1))] for i in range(n)]


def _open(path: Path, white: int | None = None):  # noqa: ANN202 (a PIL image)
    from PIL import Image, ImageOps, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            im.load()
            # a camera's photo is stored as the sensor saw it and its EXIF orientation says how to turn it upright;
            # as transformers' load_image does, apply it, or a phone's portrait photos train lying on their side
            return _eight_bit(ImageOps.exif_transpose(im), path, white)
    except Image.DecompressionBombError as exc:  # a tiny compressed file that decodes to billions of pixels
        raise DataError(f"{path}: the image is too large to decode safely ({str(exc).split(' pixels')[0]} pixels); "
                        "resize it (e.g. to a few thousand pixels a side) or delete it") from None
    except MemoryError:
        raise DataError(f"{path}: the image does not fit in memory when decoded; resize it or delete it") from None
    except DataError:  # already one line naming the file (_float_pixels), not an unreadable file
        raise
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        from PIL import features

        if path.suffix.lower() == ".avif" and not features.check("avif"):  # Pillow reads AVIF from 11.3 where built so
            raise DataError(f"{path}: this Pillow ({Image.__version__}) cannot decode AVIF; upgrade it (pip install -U "
                            "pillow) or convert the image to .png/.jpg") from None
        if isinstance(path, Path) and path.is_file() and path.stat().st_size == 0:  # Pillow's "cannot identify"
            raise DataError(f"{path}: the file is empty (0 bytes), not an image (a copy or download cut short?); "
                            "copy the image again, or delete the file") from None
        from fpt.data.sniff import what_it_is

        found = what_it_is(path) if isinstance(path, Path) and path.is_file() else None
        if found is not None and found[1] in (".lfs", ".html"):  # the cause, not Pillow's "cannot identify"
            raise DataError(f"{path}: {found[0]}, not an image; "
                            f"{'fetch it with git lfs pull' if found[1] == '.lfs' else 'download it again'}, or delete "
                            "the file") from None
        raise DataError(f"{path}: not a readable image ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
                        "; replace or delete the file") from None


def _eight_bit(im, path: Path | None = None, white: int | None = None):  # noqa: ANN001, ANN202 (PIL images)
    """The image with 16/32-bit integer or float pixels brought to 0-255: Pillow's convert("L") clips them at 255,
    which makes every pixel above 255 white (a 16-bit image of 1000 and one of 60000 would be the same) and rounds
    a float image of 0-1 (a microscope's or a satellite's TIFF) to black and 1/255. 16-bit pixels are read on
    ``white``, the white level of the training images (``fpt.data.pixel_depth``; None: 65535)."""
    from PIL import Image

    if im.mode == "F":
        return Image.fromarray(_float_pixels(np.asarray(im, dtype=np.float64), path), "L")
    if not im.mode.startswith("I"):
        return im.copy()
    arr = np.asarray(im).astype(np.float64)
    lo, hi = (float(arr.min()), float(arr.max())) if arr.size else (0.0, 0.0)
    if lo >= 0 and hi <= FULL:
        arr = to_eight_bits(arr, path if path is not None else "an image", white)
    else:  # 32-bit integers outside the 16-bit range: the image's own range
        arr = (arr - lo) * (255 / (hi - lo)) if hi > lo else np.zeros_like(arr)
    return Image.fromarray(np.round(arr).astype(np.uint8), "L")


def _float_pixels(arr: np.ndarray, path: Path | None) -> np.ndarray:
    """Float pixels as uint8, read as image arrays are (``as_images``): 0-1 scaled to 0-255, 0-255 as they are;
    anything else has no one reading (a depth in metres, a temperature), so it is refused, not clipped."""
    where = path if path is not None else "an image"
    if not np.isfinite(arr).all():
        raise DataError(f"{where}: float pixels that are NaN or infinite ({int((~np.isfinite(arr)).sum())} of "
                        f"{arr.size}); fill them, or save the image as 8- or 16-bit integers")
    lo, hi = (float(arr.min()), float(arr.max())) if arr.size else (0.0, 0.0)
    if lo < 0 or hi > 255:
        raise DataError(f"{where}: float pixels in [{lo:g}, {hi:g}]; fpt reads float images in [0, 1] or [0, 255]: "
                        "rescale it, or save it as 8- or 16-bit integers")
    return np.round(arr * 255 if hi <= 1 else arr).astype(np.uint8)


def _has_colour(path: str) -> bool:
    return shows_colour(_open(Path(path)))


def shows_colour(im: Any) -> bool:
    """Whether a PIL image shows colour: a grayscale photo saved as RGB (equal channels, within JPEG's noise) does not."""
    if im.mode in {"L", "1", "I", "I;16", "F", "LA"}:
        return False
    rgb = np.asarray(im.convert("RGB"), dtype=np.int16)
    return bool(np.abs(rgb - rgb.mean(-1, keepdims=True)).max() > 2)


def load_image(source: Path | np.ndarray | Any, channels: str, size: int, white: int | None = None) -> np.ndarray:
    """(size, size, C) uint8, the one way every image is read (folders, hub datasets, arrays, new inputs):
    ``source`` an image file (decoded safely: ``_open``), an (H, W, C) uint8 array or a PIL image (a hub
    dataset's); 16/32-bit pixels scaled to 8 bits (16-bit ones on ``white``: ``fpt.data.pixel_depth``), converted to
    RGB (C=3) or grayscale (C=1), resized bilinearly."""
    from PIL import Image

    if isinstance(source, (str, Path)):
        im = _open(Path(source), white)
    elif isinstance(source, np.ndarray):
        # (H, W, 2) and (H, W, 4) are LA and RGBA: their transparent pixels go onto white below, as a file's do (an
        # array of a PNG, np.asarray(Image.open(f)), read as its file is at predict)
        c = source.shape[-1]
        im = Image.fromarray(source[..., 0] if c == 1 else source if c in (2, 4) else source[..., :3])
    else:  # a PIL image: upright by its EXIF orientation as a file is (Image.open does not turn it; datasets does)
        from PIL import ImageOps

        im = _eight_bit(ImageOps.exif_transpose(source), None, white)
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


def _is_pil(x: Any) -> bool:
    """Whether ``x`` is a PIL image (without importing Pillow when it is not loaded: nothing else can be one then)."""
    import sys

    pil = sys.modules.get("PIL.Image")
    return pil is not None and isinstance(x, pil.Image)


def array_channels(X: Any, channels: str) -> str:
    """The channels of images given as arrays: ``channels``, or with auto rgb when the training X has 3 channels."""
    if channels != "auto":
        return channels
    # the channel axis as as_images finds it; RGBA (4) is colour too: read as gray, its colour was lost unsaid
    c = 1 if X.ndim != 4 else image_shape(X.shape[1:])[-1]
    return "rgb" if c in (3, 4) else "gray"


def _channels_first(shape: tuple[int, ...]) -> bool:
    """Whether one image of ``shape`` (three axes) is read channels first, (C, H, W): its last axis is no channel count
    (1, 3 or 4) and its first is. A last axis of such a count is the channels whatever the first, so (3, 4, 4) is a
    3x4 RGBA image: one rule, for training's arrays and new ones alike."""
    return len(shape) == 3 and shape[-1] not in (1, 3, 4) and shape[0] in (1, 3, 4)


def image_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """One image's shape as (H, W, C), as as_images reads it: (H, W) is gray (H, W, 1), (C, H, W) by _channels_first."""
    shape = tuple(int(n) for n in shape)
    if len(shape) == 2:
        return (*shape, 1)
    return (*shape[1:], shape[0]) if _channels_first(shape) else shape


def _layouts(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """``shape`` and the other layout of the same image that image_shape reads back as it: (C, H, W) of (H, W, C)."""
    h, w, c = image_shape(shape)
    other = (c, h, w) if shape == (h, w, c) else (h, w, c)
    return [shape] + ([other] if len(shape) == 3 and image_shape(other) == (h, w, c) else [])


def in_layout(X: np.ndarray, trained: tuple[int, ...]) -> np.ndarray:
    """Images (n, ...) of the trained images' shape read in the trained layout: fpt.build reads (n, H, W, C),
    (n, C, H, W) and gray (n, H, W) alike, so a model trained on one is given the same images in another (scikit-
    learn's check of n_features_in_ compares X.shape[1], which the layout moves). Any other X is returned as given."""
    trained = tuple(int(n) for n in trained)
    if X.ndim < 3 or tuple(X.shape[1:]) == trained or image_shape(X.shape[1:]) != image_shape(trained):
        return X
    hwc = X[..., None] if X.ndim == 3 else np.moveaxis(X, 1, -1) if _channels_first(X.shape[1:]) else X
    return hwc[..., 0] if len(trained) == 2 else np.moveaxis(hwc, -1, 1) if _channels_first(trained) else hwc


def array_notes(splits: dict[str, Split], channels: str) -> dict[str, Any]:
    """What a model trained on image arrays records of them: the channels chosen."""
    return {"image_channels": channels}


def pixel_scale(X: np.ndarray) -> dict[str, int]:
    """{"pixel_scale": 1 or 255} of a training image array of floats (or integers other than uint8), by its largest
    value: the scale its every split, and every new image at predict, is read on; {} for uint8."""
    if X.dtype == np.uint8 or not X.size:
        return {}
    return {"pixel_scale": 1 if float(np.nanmax(X)) <= 1 else 255}


def refuse_nonfinite_pixels(images: np.ndarray | list[np.ndarray], where: str, error: type[DataError] = DataError,
                            alone: bool = False) -> None:
    """One refusal of float pixels that are NaN or infinite (a NaN's cast to uint8 is any value, unsaid), wherever
    images are read from arrays (fpt.build's and an .npz's X, an estimator's, a Predictor's inputs): the first one
    named as the caller indexes it (``example_word``: X[2, 0, 1, 1] of an array, inputs[2][0, 1, 1] of a list), and
    the count. fpt.build named the pixel where predict named the image alone ('X[2] has pixels that are NaN')."""
    floats = [(i, img) for i, img in enumerate(images) if img.dtype.kind == "f"] \
        if isinstance(images, list) else ([(0, images)] if images.dtype.kind == "f" else [])
    bad = [(i, ~np.isfinite(img)) for i, img in floats]
    count = sum(int(b.sum()) for _, b in bad)
    if not count:
        return
    i, marked = next((i, b) for i, b in bad if b.any())
    first = tuple(int(k) for k in np.argwhere(marked)[0])
    value = float((images[i] if isinstance(images, list) else images)[first])
    word = "NaN" if np.isnan(value) else "inf" if value > 0 else "-inf"
    if isinstance(images, list):
        pixel = example_word("image", i, alone, first)
    else:  # one array of images, indexed whole: its first axis is the example
        pixel = example_word("image", first[0], at=first[1:], joined=True)
    total = sum(img.size for _, img in floats)
    raise error(f"{where}: {pixel} is {word} ({count} of {total} pixel values NaN or infinite); an image has no "
                "missing pixels: fill them, or leave those images out")


def as_images(X: np.ndarray, channels: str, size: int, where: str, pixel_scale: int | None = None) -> list[np.ndarray]:
    """An image array (n, H, W[, C]) or (n, C, H, W), uint8 0-255 or floats 0-1, as (size, size, C) uint8 images
    (an .npz's X, Python's, and new image arrays). Floats are read as 0-1 when the array's largest value is at most
    1, else as 0-255; ``pixel_scale`` 255 (the training array's, or of a larger array this one is part of) reads them
    as 0-255 however dark (a scale of 1 cannot hold values above 1: those are read as 0-255)."""
    if X.ndim not in (3, 4):  # a table's rows would otherwise be read as 1-pixel-high images
        raise DataError(f"{where}: {option('modality', 'image')} needs X of shape (n, H, W[, C]) or (n, C, H, W), not {X.shape}")
    refuse_nonfinite_pixels(X, where)  # before the axes move: its pixel as the caller indexes it
    if X.ndim == 3:
        X = X[..., None]
    if _channels_first(X.shape[1:]):
        X = np.moveaxis(X, 1, -1)  # (n, C, H, W) -> (n, H, W, C)
    if X.shape[-1] not in (1, 2, 3, 4):
        # load_image reads the first 3 channels of any other count: 5 bands, or (n, 6, H, W), lost the rest unsaid
        last = X.shape[-1] <= X.shape[1]  # the channel axis: the shorter end (an image is wider than its bands)
        raise DataError(f"{where}: images of shape {X.shape[1:]} have {min(X.shape[1], X.shape[-1])} channels (the "
                        f"{'last' if last else 'first'} axis); fpt reads gray (1), gray and alpha (2), RGB (3) or RGBA "
                        "(4) images: give those channels, or other bands as series (n, channels, length) with "
                        f"{option('modality', 'timeseries')}")
    if X.dtype != np.uint8:
        lo, hi = float(np.nanmin(X)), float(np.nanmax(X))
        if lo < 0 or hi > 255:
            raise DataError(f"{where}: image values in [{lo:g}, {hi:g}]; give uint8 0-255 or floats in [0, 1]")
        X = np.round(X if pixel_scale == 255 or hi > 1 else X * 255).astype(np.uint8)
    return [load_image(img, channels, size) for img in X]


# ---------------------------------------------------------------------------------------------- new inputs


def read_image_inputs(path: Path, checks: Checks) -> Inputs:
    """``fpt predict``'s reader of one image file, ``DIR/*.png`` (unlabelled) or ``DIR/<class>/*.png`` (labelled by
    folder), listed by training's rules (hidden files skipped, a class folder's subfolders read) and decoded as
    training did."""
    if path.is_file():
        tok = checks.schema.prep.tokeniser
        return Inputs([_input_image(path, tok.channels, tok.image_size, _white(tok))], None, str(path),
                      [path.name])
    folders, flat, others = _entries(path)
    splits = [d.name for d in folders if _is_split_folder(d)]
    if splits:
        raise DataError(f"{path}: split folders ({', '.join(splits)}); give one split's folder, e.g. {path / splits[-1]}")
    if flat and folders:
        raise DataError(f"{path}: both images and class folders ({folders[0].name}/); give a folder of images "
                        "(unlabelled) or of class folders (labelled), not both")
    files: list[tuple[Path, str | None]] = [(p, None) for p in flat]
    if folders:
        others = []
        files += _class_files(path, str(path), others)
    if not files:
        raise DataError(f"{path}: no images (.png/.jpg/...) in it or in class folders DIR/<class>/")
    tok = checks.schema.prep.tokeniser
    images = [_input_image(p, tok.channels, tok.image_size, _white(tok)) for p, _ in files]
    y = None
    if folders:
        y = np.array([label for _, label in files], dtype=object)[:, None]
        checks.labels(y, f"{path}/<class>/")
    # a folder of unlabelled images may hold anything beside them (a CSV, a README); a class folder holds the class's
    # images, and an iPhone's photo (.heic) among unlabelled ones is a photo the user expects a prediction for
    left_out = others if folders else [p for p in others if p.suffix.lower() in UNREAD_PHOTOS]
    notes = [skipped_note(left_out, path, "in class folders" if folders else "in the folder")] if left_out else []
    return Inputs(images, y, str(path), [str(p.relative_to(path)) for p, _ in files], notes)


def _colour_for_gray(what: str, how: str = "") -> SchemaError:
    """Colour given to a grayscale model (``what``: the image, ending in a verb or a colon): training converted every
    image to the channels it chose, so the colour would be silently dropped; it is refused (grayscale to an RGB model
    is lossless, as training did it). ``how``: the conversion to name, e.g. `` (img.convert('L'))``."""
    return SchemaError(f"{what} a colour image, but the model was trained on grayscale images; convert it to grayscale"
                       f"{how}, or train a model on colour images ({option('image_channels', 'rgb')})")


def _white(tok: Any) -> int | None:
    """The tokeniser's white level of 16-bit files; None where it keeps none (a run saved before, a stand-in's)."""
    return getattr(tok, "white_level", None)


def _input_image(file: Path, channels: str, size: int, white: int | None = None) -> np.ndarray:
    if channels == "gray" and _has_colour(str(file)):
        raise _colour_for_gray(f"{file}:")
    # Files of any size are resized to image_size, as the training images were; 16-bit ones on their white level.
    return load_image(file, channels, size, white)


def check_images(X: Any, schema: Any, where: str, allow_unseen: bool = False) -> list[np.ndarray]:
    """Image arrays, (n, H, W[, C]) or a list of (H, W[, C]): the training array shape, or the model's own."""
    tok = schema.prep.tokeniser
    alone = _is_pil(X)
    if alone:  # one image, as one image file is one example (np.asarray would make its rows the examples)
        X = [X]
    elif not isinstance(X, (np.ndarray, list, tuple)) and hasattr(X, "__len__") and hasattr(X, "__iter__"):
        X = list(X)  # a datasets Column (ds["image"]: PIL images decoded as read), a pandas Series of images
    if isinstance(X, (list, tuple)) and X and any(_is_pil(img) for img in X):
        # PIL images (Image.open's, a datasets.Dataset's) are read as image files are: any size, resized to the
        # model's, converted to its channels; colour for a grayscale model is refused, as for a file
        bad = next((i for i, img in enumerate(X) if not _is_pil(img)), None)
        if bad is not None:
            raise SchemaError(f"{where}: {example_word('image', bad)} is a {type(X[bad]).__name__} among PIL images; give all "
                              "of them as PIL images or all as arrays")
        for i, img in enumerate(X):
            if tok.channels == "gray" and shows_colour(img):
                raise _colour_for_gray(f"{where}: {example_word('image', i, alone)} is", " (img.convert('L'))")
        return [load_image(img, tok.channels, tok.image_size, _white(tok)) for img in X]
    if isinstance(X, (list, tuple)) and X and all(isinstance(img, (str, Path)) for img in X):
        # read as arrays, each path was an image of shape (): "image 1 has shape ()"
        raise SchemaError(f"{where}: {example_word('image', 0)} is a path ({str(X[0])!r}), not an image; give their folder, "
                          "predict('DIR'), or the images, [PIL.Image.open(p) for p in paths]")
    c = 3 if tok.channels == "rgb" else 1
    own = {(tok.image_size, tok.image_size, c), (c, tok.image_size, tok.image_size)} | \
        ({(tok.image_size, tok.image_size)} if c == 1 else set())
    trained = tuple(schema.info["X_shape"][1:]) if "X_shape" in schema.info else None
    # an image is read in any layout fpt.build reads (image_shape's rule): a model trained on (n, H, W, C) refused
    # the same images as (n, C, H, W), which fpt.build trains on alike
    takes = {image_shape(s) for s in own | ({trained} if trained else set())}

    def fits(s: tuple[int, ...]) -> bool:
        return len(s) in (2, 3) and image_shape(s) in takes

    shape = getattr(X, "shape", None)
    # (1, H, W) for a gray model is one channel-first image or a batch of one (H, W) image: read as the batch, as it was
    batch_of_one = shape is not None and len(shape) == 3 and shape[0] == 1 and fits(shape[1:])
    if isinstance(X, np.ndarray) and fits(shape) and not batch_of_one:
        # one image given alone: its rows were read as the images ("image 1 has shape (8, 3)")
        raise SchemaError(f"{where}: one image of shape {shape} given alone, not a batch of images; give a batch of "
                          f"one: [x], or x[None] (shape {(1, *shape)})")
    arrays = [np.asarray(img) for img in X] if isinstance(X, (list, tuple)) else list(np.asarray(X))
    if not arrays:
        raise SchemaError(f"{where}: no images")
    for i, img in enumerate(arrays):
        if not fits(img.shape):
            layouts = _layouts(trained) if trained else []
            expected = " or ".join(str(s) for s in layouts + sorted(own - set(layouts)))
            raise SchemaError(f"{where}: {example_word('image', i)} has shape {img.shape}, but the model takes {expected} "
                              f"({tok.channels}, {tok.image_size}x{tok.image_size} pixels); resize or convert it")
        if img.dtype.kind not in "iubf":
            raise SchemaError(f"{where}: {example_word('image', i)} has dtype {img.dtype}; give numbers (uint8 0-255 or "
                              "floats 0-1)")
    # the pixel as the caller indexes what it gave: X[2, 0, 1, 1] of an array, inputs[2][0, 1, 1] of a list
    whole = None if isinstance(X, (list, tuple)) else np.asarray(X)
    refuse_nonfinite_pixels(whole if whole is not None and whole.dtype != object else arrays, where, SchemaError)
    # float pixels are read on the training array's scale (the tokeniser's pixel_scale): a dark image given alone to
    # a model of 0-255 floats (every pixel below 1) was read as 0-1, 255 times brighter than training read it. Runs
    # that did not record it: by the largest value of the images given, as training read its array
    scale = tok.pixel_scale
    if scale is None:
        floats = [img for img in arrays if img.dtype != np.uint8 and img.size]
        scale = None if not floats else 1 if max(float(np.nanmax(img)) for img in floats) <= 1 else 255
    return [im for img in arrays for im in as_images(img[None], tok.channels, tok.image_size, where, scale)]


__all__ = ["IMAGE_SUFFIXES", "array_channels", "array_notes", "as_images", "check_images", "has_images", "image_shape",
           "in_layout", "load_image", "pixel_scale", "read_image_folder", "read_image_inputs", "refuse_nonfinite_pixels",
           "shows_colour", "spread"]

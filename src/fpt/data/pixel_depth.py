"""The white level of 16-bit image files: the value read as white (255) when their pixels are brought to 8 bits.

A 16-bit PNG or TIFF often holds fewer bits (12-bit medical scans and depth maps: 0-4095). Read on the 16-bit range
(65535 as white, a division by 257) such images trained nearly black, on ~17 grey levels, without a word. The white
level is taken from the images a model is trained on, as the bits their largest pixel needs (4000: 12 bits, 4095), is
saved with the run (``ImageTokens.white_level``) and read at predict, where a brighter pixel is refused, not clipped.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from fpt.errors import DataError

LEVELS = tuple(2 ** bits - 1 for bits in range(8, 17))  # 255 ... 65535
FULL = 65535  # what a 16-bit image was read on before the level was kept (and with no level saved)


def deep(im: Any) -> bool:
    """Whether a PIL image holds integer pixels wider than 8 bits (I;16 and its byte orders, I)."""
    return im.mode.startswith("I")


def level_of(largest: float) -> int:
    """The white level of images whose largest pixel is ``largest``: 2**bits - 1 of the bits it needs (at least 8)."""
    return next(level for level in LEVELS if largest <= level)


def white_level(sources: Iterable[Path | str | Any]) -> tuple[int, float] | None:
    """(white level, largest pixel) of the 16-bit images among ``sources`` (files, or PIL images), or None where there
    are none, or a pixel beyond 16 bits (read on its own range, as before). Files are opened by their header: only a
    16-bit one is decoded here. A file that does not open is passed over (its reading names it)."""
    from PIL import Image

    largest = None
    for source in sources:
        if isinstance(source, str | Path):
            try:
                with Image.open(source) as im:
                    if not deep(im):
                        continue
                    arr = np.asarray(im)
            except Exception:  # noqa: S112 (load_image names the file and the fix)
                continue
        elif hasattr(source, "mode") and deep(source):
            arr = np.asarray(source)
        else:
            continue
        if arr.size:
            lo, hi = float(arr.min()), float(arr.max())
            if lo < 0 or hi > FULL:
                return None
            largest = hi if largest is None else max(largest, hi)
    return None if largest is None else (level_of(largest), largest)


def level_note(where: str, level: int, largest: float) -> str:
    """The training note for 16-bit images read on a white level below 65535."""
    bits = level.bit_length()
    return (f"{where}: 16-bit images whose pixels use {bits} bits (the largest {largest:g}): read with {level} as white, "
            f"not 65535 (saved with the run, used at predict)")


def to_eight_bits(arr: np.ndarray, where: Any, level: int | None) -> np.ndarray:
    """16-bit pixels (0-65535) as 0-255 on ``level`` (None: 65535, a run that saved none); a pixel above it is
    refused: clipped, it would be read as white without a word."""
    top = FULL if level is None else level
    hi = float(arr.max()) if arr.size else 0.0
    if hi > top:
        raise DataError(f"{where}: 16-bit pixels up to {hi:g}, above {top}, the white level of the {top.bit_length()}-bit "
                        "images the model was trained on; give images of that bit depth (e.g. scaled by "
                        f"{top}/{level_of(hi)}), or train on images that hold such values")
    return arr * (255 / top)


__all__ = ["FULL", "LEVELS", "deep", "level_note", "level_of", "to_eight_bits", "white_level"]

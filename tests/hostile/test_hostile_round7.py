"""Round 7 of the hostile-input cases: a practitioner's habits that gave a silent wrong result, or a fix named wrong.

Each case failed before its fix (the commit that added it says how)."""

from __future__ import annotations

import numpy as np
import pytest


def _red_and_blue(n: int = 8, alpha: int = 255) -> tuple[np.ndarray, np.ndarray]:
    """(n, 8, 8, 4) RGBA uint8 images (np.asarray of RGBA PNGs), red for class 0 and blue for class 1, equally bright
    once gray (0.299 * 200 ~ 0.587 * 102): colour alone tells them apart."""
    y = np.arange(n) % 2
    X = np.zeros((n, 8, 8, 4), np.uint8)
    X[y == 0, ..., 0] = 200
    X[y == 1, ..., 1] = 102
    X[..., 3] = alpha
    return X, y


@pytest.mark.parametrize("layout", ["last", "first"])
def test_rgba_image_arrays_are_read_in_colour(layout):
    """Image arrays of four channels (RGBA, as np.asarray(Image.open(png)) gives them) were read as grayscale under
    image_channels auto (only 3 channels counted as colour): red and blue images of one brightness trained as one
    gray, their colour dropped without a word, where a folder of the same PNGs is read in colour."""
    from fpt.data.arrays import from_arrays

    X, y = _red_and_blue()
    if layout == "first":
        X = X.transpose(0, 3, 1, 2)  # (n, 4, H, W)
    raw = from_arrays({"X": X, "y": y}, "image", "auto", 8, "arrays", "arrays")
    assert raw.notes["image_channels"] == "rgb"
    first = raw.splits["train"].x[0]
    assert first.shape == (8, 8, 3) and sorted({tuple(p) for p in first.reshape(-1, 3)}) in ([(200, 0, 0)],
                                                                                             [(0, 102, 0)])


def test_a_transparent_image_array_reads_as_its_png_file_does(tmp_path):
    """An RGBA array's alpha was dropped (its transparent pixels read as the colour they hold, often black), where
    its PNG file, or the PIL image, lays them onto white: a model trained on the arrays was given other pixels by
    fpt predict on the files."""
    from PIL import Image

    from fpt.data.images import load_image

    X, _ = _red_and_blue(2, alpha=0)
    Image.fromarray(X[0]).save(tmp_path / "clear.png")
    from_file = load_image(tmp_path / "clear.png", "rgb", 8)
    assert (from_file == 255).all()  # fully transparent: white
    assert np.array_equal(load_image(X[0], "rgb", 8), from_file)
    assert np.array_equal(load_image(X[0][..., [0, 3]], "gray", 8), load_image(tmp_path / "clear.png", "gray", 8))

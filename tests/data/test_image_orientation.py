"""Image files as a camera or a drawing program writes them: EXIF orientation applied, transparency onto white."""

from __future__ import annotations

import numpy as np
import pytest

from fpt.data.images import load_image

Image = pytest.importorskip("PIL.Image")


def _half_dark(width: int, height: int) -> np.ndarray:
    """A grey image whose left half is black and right half white."""
    arr = np.zeros((height, width), dtype=np.uint8)
    arr[:, width // 2:] = 255
    return arr


@pytest.mark.parametrize(("orientation", "dark"), [(1, "left"), (3, "right"), (6, "top"), (8, "bottom")])
def test_exif_orientation_turns_a_photo_upright(tmp_path, orientation, dark):
    """EXIF 1: as stored; 3: turned 180 degrees; 6: turned 90 degrees clockwise to view; 8: 90 anticlockwise."""
    im = Image.fromarray(_half_dark(8, 8))
    exif = Image.Exif()
    exif[0x0112] = orientation  # the Orientation tag
    path = tmp_path / f"o{orientation}.jpg"
    im.save(path, exif=exif, quality=100)
    arr = load_image(path, "gray", 8)[..., 0].astype(int)
    halves = {"left": arr[:, :4], "right": arr[:, 4:], "top": arr[:4], "bottom": arr[4:]}
    assert halves[dark].mean() < 40, (orientation, arr)
    opposite = {"left": "right", "right": "left", "top": "bottom", "bottom": "top"}[dark]
    assert halves[opposite].mean() > 215, (orientation, arr)


@pytest.mark.parametrize("mode", ["RGBA", "LA", "P"])
def test_transparent_pixels_are_white_not_their_hidden_colour(tmp_path, mode):
    rgba = np.zeros((4, 4, 4), dtype=np.uint8)  # black everywhere; the left half opaque, the right transparent
    rgba[:, :2, 3] = 255
    im = Image.fromarray(rgba, "RGBA")
    if mode == "LA":
        im = im.convert("LA")
    elif mode == "P":  # a palette image with one transparent palette entry (a GIF's or an 8-bit PNG's way)
        im = Image.fromarray(np.where(rgba[..., 3:] > 0, 0, 1)[..., 0].astype(np.uint8), "P")
        im.putpalette([0, 0, 0, 10, 20, 30])
        im.info["transparency"] = 1
    im.save(tmp_path / "t.png", **({"transparency": 1} if mode == "P" else {}))
    for channels in ("rgb", "gray"):
        arr = load_image(tmp_path / "t.png", channels, 4).astype(int)
        assert (arr[:, :2] == 0).all() and (arr[:, 2:] == 255).all(), (mode, channels, arr[..., 0])

"""Image arrays of a channel count fpt does not read (5 bands, (n, 6, H, W)) are refused naming the count; they were
read as their first 3 channels, the others dropped without a word."""

from __future__ import annotations

import numpy as np
import pytest

import fpt
from fpt.cli import main
from fpt.data.arrays import from_arrays
from fpt.errors import DataError


def _arrays(shape: tuple[int, ...]) -> dict[str, np.ndarray]:
    return {"X": np.random.default_rng(0).random(size=shape), "y": np.arange(shape[0]) % 2}


@pytest.mark.parametrize(("shape", "seen"), [((20, 8, 8, 5), "(8, 8, 5) have 5 channels (the last axis)"),
                                             ((20, 6, 8, 8), "(6, 8, 8) have 6 channels (the first axis)")])
def test_images_of_other_channel_counts_are_refused_not_cut_to_three(shape, seen, tmp_path, capsys):
    with pytest.raises(DataError) as err:  # was: trained on channels 0-2 (rgb) or their gray
        fpt.build(data=tuple(_arrays(shape).values()), body="gpt2", device="cpu")
    assert str(err.value).startswith(f"data arrays (X, y): images of shape {seen}; fpt reads gray (1)")
    assert str(err.value).endswith("or other bands as series (n, channels, length) with modality='timeseries'")
    np.savez(tmp_path / "bands.npz", **_arrays(shape))
    assert main(["data", "--data", str(tmp_path / "bands.npz")]) == 2
    assert capsys.readouterr().err.strip().endswith("with --modality timeseries")


@pytest.mark.parametrize("shape", [(20, 8, 8), (20, 8, 8, 2), (20, 3, 8, 8), (20, 8, 8, 4)])
def test_gray_gray_alpha_rgb_and_rgba_arrays_are_still_read(shape):
    raw = from_arrays(_arrays(shape), "image", "auto", 8, "d", "arrays")
    assert len(raw.splits["train"].x) == 20 and raw.splits["train"].x[0].shape[:2] == (8, 8)

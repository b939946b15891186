"""16-bit PNGs holding 12-bit data (0-4095: medical scans, depth maps) were read on the 16-bit range (divided by 257),
so they trained nearly black on ~17 grey levels without a word. The white level is now taken from the training
images (the bits their largest pixel needs), said once, saved with the run and used at predict (fpt.data.pixel_depth)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import fpt
from fpt.cli import main
from fpt.data import load
from fpt.data.base import column_notes
from fpt.data.images import load_image
from fpt.data.pixel_depth import level_of, white_level

TINY = dict(init="random", fit="closed-form", baselines="none", device="cpu", image_size=8, patch_size=4)


def _png16(path: Path, arr: np.ndarray) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    im = Image.fromarray(arr.astype(np.uint16))  # mode I;16, as a scanner or depth camera writes them
    assert im.mode == "I;16"
    im.save(path)
    return path


def _scan(seed: int, bright: bool, top: int = 4095) -> np.ndarray:
    """An 8x8 12-bit scan: a ramp over the whole range, brighter for class b."""
    rng = np.random.default_rng(seed)
    base = np.linspace(0, top, 64).reshape(8, 8)
    return np.clip(base * (0.5 + 0.5 * bright) + rng.integers(0, 40, (8, 8)), 0, top)


def _folder(root: Path, n: int = 8) -> Path:
    for i in range(n):
        _png16(root / "a" / f"{i}.png", _scan(i, False))
        _png16(root / "b" / f"{i}.png", _scan(100 + i, True))
    return root


def test_the_level_is_the_bits_the_largest_pixel_needs(tmp_path):
    assert [level_of(v) for v in (0, 255, 256, 4000, 4095, 4096, 65535)] == [255, 255, 511, 4095, 4095, 8191, 65535]
    a = _png16(tmp_path / "a.png", _scan(0, True))
    Image.fromarray(np.zeros((8, 8), np.uint8)).save(tmp_path / "eight.png")
    assert white_level([a, tmp_path / "eight.png"]) == (4095, 4095.0)
    assert white_level([tmp_path / "eight.png"]) is None  # no 16-bit image: nothing changes


def test_a_12_bit_png_reads_on_its_own_range(tmp_path):
    path = _png16(tmp_path / "s.png", _scan(0, True))
    before = load_image(path, "gray", 8)  # no level: the 16-bit range, as a run saved before reads it
    after = load_image(path, "gray", 8, 4095)
    assert before.max() <= 16 and len(np.unique(before)) <= 17
    assert after.max() == 255 and len(np.unique(after)) > 40
    np.testing.assert_allclose(after[..., 0], np.round(_scan(0, True) * 255 / 4095), atol=1)


def test_training_takes_the_level_from_its_images_and_says_so(tmp_path):
    root = _folder(tmp_path / "scans")
    raw = load(str(root), image_size=8)
    assert raw.notes["white_level"] == 4095
    assert max(int(img.max()) for img in raw.splits["train"].x) == 255
    assert f"{root}: 16-bit images whose pixels use 12 bits (the largest 4095): read with 4095 as white, not 65535 " \
           "(saved with the run, used at predict)" in column_notes(raw)


def test_images_labelled_by_a_table_take_the_level_too(tmp_path):
    root = tmp_path / "k"
    for i in range(8):
        _png16(root / "images" / f"{i}.png", _scan(i, i % 2 == 1, top=1000))  # 10-bit data
    (root / "labels.csv").write_text("id,label\n" + "".join(f"{i}.png,{'ab'[i % 2]}\n" for i in range(8)))
    raw = load(str(root), image_size=8)
    assert raw.notes["white_level"] == 1023 and max(int(img.max()) for img in raw.splits["train"].x) >= 249


def test_the_level_is_saved_and_used_at_predict(tmp_path, tiny_bert_dir, capsys):
    root = _folder(tmp_path / "scans")
    run = tmp_path / "run"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fpt.fit(fpt.build(data=str(root), body=tiny_bert_dir, **TINY), out=run, progress=False)
    assert json.loads((run / "data.json").read_text())["tokeniser"]["white_level"] == 4095
    model = fpt.load(run)
    scan = _scan(7, True)
    deep = _png16(tmp_path / "new" / "deep.png", scan)
    eight = tmp_path / "new8" / "eight.png"
    eight.parent.mkdir()
    Image.fromarray(np.round(scan * 255 / 4095).astype(np.uint8), "L").save(eight)
    np.testing.assert_allclose(model.logits(str(deep)), model.logits(str(eight)), atol=1e-5)
    # a pixel beyond the training images' 12 bits would be clipped to white: refused in one line
    bright = _png16(tmp_path / "bright" / "b.png", _scan(1, True, top=60000))
    assert main(["predict", str(run), str(bright), "--out", str(tmp_path / "p.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(bright) in err and "above 4095, the white level of the 12-bit" in err, err


@pytest.mark.parametrize("level", [4096, "4095", 0])
def test_a_tampered_level_is_refused(level):
    from fpt.data.tokenisers import ImageTokens

    data = {"image_size": 8, "patch_size": 4, "channels": "gray", "mean": [0.5], "std": [0.2], "white_level": level}
    with pytest.raises(Exception, match="white_level"):
        ImageTokens.check_json(data)


def test_a_datasets_dataset_of_16_bit_images_takes_the_level_too(tmp_path, tiny_bert_dir):
    """A datasets.Dataset whose Image column holds 16-bit PNGs (decoded as PIL I;16) was read on the 16-bit range,
    whatever its bits: 12-bit scans trained nearly black (the brightest pixel 16 of 255) and no level was kept for
    predict. Now read as an image folder is: the level from its images, said once, saved and used at predict."""
    import io

    datasets = pytest.importorskip("datasets")

    def png(arr: np.ndarray) -> dict:
        buf = io.BytesIO()
        Image.fromarray(arr.astype(np.uint16)).save(buf, format="PNG")
        return {"bytes": buf.getvalue(), "path": None}

    scans = [_scan(i, i % 2 == 1) for i in range(16)]
    ds = datasets.Dataset.from_dict({"image": [png(s) for s in scans], "label": ["ab"[i % 2] for i in range(16)]})
    ds = ds.cast_column("image", datasets.Image())
    assert ds[0]["image"].mode == "I;16"
    from fpt.data.hub import from_datasets

    raw = from_datasets(ds, "ds", "a datasets.Dataset", None, "auto", "auto", 8)
    assert raw.notes["white_level"] == 4095 and max(int(img.max()) for img in raw.splits["train"].x) == 255
    np.testing.assert_allclose(raw.splits["train"].x[1][..., 0], np.round(scans[1] * 255 / 4095), atol=1)
    assert column_notes(raw) == ["a datasets.Dataset: 16-bit images whose pixels use 12 bits (the largest 4095): read "
                                 "with 4095 as white, not 65535 (saved with the run, used at predict)"]
    run = tmp_path / "run"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fpt.fit(fpt.build(data=ds, body=tiny_bert_dir, **TINY), out=run, progress=False)
    assert json.loads((run / "data.json").read_text())["tokeniser"]["white_level"] == 4095
    model = fpt.load(run)
    eight = np.stack(raw.splits["train"].x[:4])  # (4, 8, 8, 1) uint8: the images as training read them
    np.testing.assert_allclose(model.logits(ds.select(range(4))), model.logits(eight), atol=1e-5)

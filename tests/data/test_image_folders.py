"""Image folders as users hand them over: unzipped on a Mac, exported from Kaggle, sorted into subfolders.

Hugging Face's imagefolder listing, which fpt used, disagreed with the layout fpt documents: ``Train/`` and
``Test/`` (capitalised) were read as class folders, so the user's test images were trained on; a file named
``test_3.png`` went to the test split by its name; a class folder named ``train`` (Pascal VOC's) or ``test tube``
was taken for a split; images in a class folder's subfolder lost every label. These tests fail on that listing.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from fpt.data.images import SkippedFiles, read_image_folder, read_image_inputs
from fpt.errors import DataError

Image = pytest.importorskip("PIL.Image")


def _png(path: Path, value: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((4, 4), value, dtype=np.uint8)).save(path)
    return path


def _tree(root: Path, counts: dict[str, int]) -> Path:
    for folder, n in counts.items():
        for i in range(n):
            _png(root / folder / f"{i}.png", 40 * i)
    return root


def _read(path: Path):  # noqa: ANN202
    return read_image_folder(path, "gray", 4)


def _counts(raw) -> dict[str, dict[str, int]]:  # noqa: ANN001
    return {s: dict(zip(*np.unique(split.y[:, 0].astype(str), return_counts=True), strict=True))
            for s, split in raw.splits.items()}


@pytest.mark.parametrize(("train", "test"), [("Train", "Test"), ("TRAIN", "TEST"), ("training", "testing")])
def test_split_folders_in_any_case_keep_their_test_images_out_of_training(tmp_path, train, test):
    root = _tree(tmp_path / "d", {f"{train}/cat": 3, f"{train}/dog": 3, f"{test}/cat": 2, f"{test}/dog": 2})
    raw = _read(root)
    assert raw.split_from == "the data's own split folders", raw.split_from
    assert _counts(raw)["test"] == {"cat": 2, "dog": 2}
    assert len(raw.splits["train"].y) == 6


def test_file_names_do_not_choose_the_split(tmp_path):
    root = _tree(tmp_path / "d", {"cat": 4, "dog": 4})
    for c in ("cat", "dog"):
        for i in range(2):
            (root / c / f"{i}.png").rename(root / c / f"test_{i}.png")
        (root / c / "2.png").rename(root / c / "train_2.png")
    raw = _read(root)
    assert list(raw.splits) == ["train"] and _counts(raw)["train"] == {"cat": 4, "dog": 4}


@pytest.mark.parametrize("names", [("bus", "car", "train"), ("dev_board", "laptop"), ("beaker", "test tube")])
def test_a_class_named_like_a_split_is_a_class(tmp_path, names):
    raw = _read(_tree(tmp_path / "d", {n: 2 for n in names}))
    assert raw.notes["class_folders"] == list(names) and len(raw.splits["train"].y) == 2 * len(names)


def test_images_in_a_class_folders_subfolders_belong_to_the_class(tmp_path):
    root = _tree(tmp_path / "d", {"cat": 2, "cat/indoor": 2, "dog/2023/june": 3})
    raw = _read(root)
    assert _counts(raw)["train"] == {"cat": 4, "dog": 3}


def test_the_listing_is_in_order_of_the_paths(tmp_path):
    """The seeded split draws from the examples in this order (it is the order Hugging Face's listing gave)."""
    root = tmp_path / "d"
    for c in ("Dog", "cat"):
        for name in ("10.png", "2.png", "B.png", "a.png", "é.png"):
            _png(root / c / name, 3 * len(name))
    raw = read_image_folder(root, "gray", 4)
    assert list(raw.splits["train"].y[:, 0]) == ["Dog"] * 5 + ["cat"] * 5
    order = [int(x[0, 0, 0]) for x in raw.splits["train"].x[:5]]
    assert order == [3 * len(n) for n in sorted(("10.png", "2.png", "B.png", "a.png", "é.png"))]


def _mac_leftovers(root: Path) -> None:
    apple_double = b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        " + b"\0" * 32
    (root / "__MACOSX" / "cat").mkdir(parents=True)
    (root / "__MACOSX" / "cat" / "._0.png").write_bytes(apple_double)
    (root / "cat" / "._0.png").write_bytes(apple_double)
    (root / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
    (root / ".ipynb_checkpoints").mkdir()
    (root / "dog" / "Thumbs.db").write_bytes(b"\xd0\xcf\x11\xe0")


def test_a_zip_unpacked_from_a_mac_trains_and_predicts(tmp_path):
    root = _tree(tmp_path / "d", {"cat": 3, "dog": 3})
    _mac_leftovers(root)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SkippedFiles)  # hidden and system files are not "left out" data
        raw = _read(root)
    assert raw.notes["class_folders"] == ["cat", "dog"] and len(raw.splits["train"].y) == 6
    checks = SimpleNamespace(schema=SimpleNamespace(prep=SimpleNamespace(tokeniser=SimpleNamespace(
        channels="gray", image_size=4))), labels=lambda y, where: None)
    read = read_image_inputs(root, checks)
    assert read.names == [f"{c}/{i}.png" for c in ("cat", "dog") for i in range(3)] and not read.notes
    flat = tmp_path / "new"
    _png(flat / "a.png")
    (flat / "._a.png").write_bytes(b"\x00\x05\x16\x07")
    assert read_image_inputs(flat, checks).names == ["a.png"]


def test_files_that_are_not_images_in_a_class_folder_are_named(tmp_path):
    root = _tree(tmp_path / "d", {"cat": 3, "dog": 3})
    (root / "cat" / "IMG_0001.HEIC").write_bytes(b"\0\0\0\x18ftypheic")
    (root / "README.txt").write_text("not in a class folder: not data")
    with pytest.warns(SkippedFiles, match=r"left out 1 file.*\.heic: 1.*IMG_0001\.HEIC"):
        _read(root)


@pytest.mark.parametrize(("counts", "words"), [
    ({"train/cat": 2, "train/dog": 2, "test": 2}, ["d/test: images but no class folders", "fpt predict RUN"]),
    ({"cat": 2, "dog": 2, ".": 1}, ["d/0.png: an image directly in", "outside the class folders"]),
    ({"train/cat": 2, "train/dog": 2, "val/cat": 1, "validation/cat": 1}, ["two val folders", "val/", "validation/"]),
    ({"train/cat": 2, "train/dog": 2, "extra/cat": 1}, ["d/extra: a folder beside the split folders"]),
    ({"cat": 2, "dog/sub/.hidden": 1}, ["d/dog: empty class folder", "or its subfolders"]),
])
def test_layouts_that_cannot_be_read_are_one_line(tmp_path, counts, words):
    root = _tree(tmp_path / "d", counts)
    with pytest.raises(DataError) as info:
        _read(root)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message, (word, message)


def test_float_images_are_read_as_image_arrays_are_and_never_clipped(tmp_path):
    """Pillow's convert("L") rounds a 0-1 float TIFF to 0/1 (black) and clips one of 0-1000 at 255."""
    from fpt.data.images import load_image

    ramp = np.linspace(0, 1, 16, dtype=np.float32).reshape(4, 4)
    Image.fromarray(ramp).save(tmp_path / "unit.tif")
    assert load_image(tmp_path / "unit.tif", "gray", 4)[..., 0].tolist() == np.round(ramp * 255).astype(int).tolist()
    Image.fromarray(ramp * 200).save(tmp_path / "bytes.tif")
    assert int(load_image(tmp_path / "bytes.tif", "rgb", 4).max()) == 200
    Image.fromarray(ramp * 1000).save(tmp_path / "wide.tif")
    with pytest.raises(DataError, match=r"wide\.tif: float pixels in \[0, 1000\]; .*rescale"):
        load_image(tmp_path / "wide.tif", "gray", 4)
    ramp[0, 0] = np.nan
    Image.fromarray(ramp).save(tmp_path / "nan.tif")
    with pytest.raises(DataError, match=r"nan\.tif: float pixels that are NaN"):
        load_image(tmp_path / "nan.tif", "gray", 4)


def test_one_image_file_is_predicted(tmp_path, tiny_bert_dir):
    """fpt predict RUN photo.jpg: one image, as a folder of one would be (it was 'unknown format .png')."""
    import fpt
    from fpt.cli import main
    from fpt.errors import SchemaError

    root = _tree(tmp_path / "img", {"cat": 6, "dog": 6})
    fpt.fit(fpt.build(data=str(root), body=tiny_bert_dir, init="random", fit="closed-form", baselines="none",
                      device="cpu", image_size=8, patch_size=4), out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    one = root / "dog" / "3.PNG"
    (root / "dog" / "3.png").rename(one)  # any case of the suffix
    (tmp_path / "alone").mkdir()
    _png(tmp_path / "alone" / "3.png", 40 * 3)
    assert list(model.predict(str(one))) == list(model.predict(str(tmp_path / "alone")))
    assert main(["predict", str(tmp_path / "run"), str(one), "--out", str(tmp_path / "p.csv")]) == 0
    assert (tmp_path / "p.csv").read_text().splitlines()[1].startswith("3.PNG,")
    # a table model given an image: said, not read
    (tmp_path / "t.csv").write_text("a,b,label\n" + "".join(f"{i},{i % 3},{'xy'[i % 2]}\n" for i in range(30)))
    fpt.fit(fpt.build(data=str(tmp_path / "t.csv"), body=tiny_bert_dir, init="random", fit="closed-form",
                      baselines="none", device="cpu"), out=tmp_path / "trun", progress=False)
    with pytest.raises(SchemaError, match=r"3\.PNG: an image file or a folder of images .* trained on tabular data"):
        fpt.load(tmp_path / "trun").predict(str(one))


def test_a_class_folder_the_model_does_not_know_names_the_folder(tmp_path, tiny_bert_dir):
    import fpt
    from fpt.errors import SchemaError

    root = _tree(tmp_path / "img", {"cat": 6, "dog": 6})
    fpt.fit(fpt.build(data=str(root), body=tiny_bert_dir, init="random", fit="closed-form", baselines="none",
                      device="cpu", image_size=8, patch_size=4), out=tmp_path / "run", progress=False)
    new = _tree(tmp_path / "new", {"cat": 1, "horse": 1})
    with pytest.raises(SchemaError, match=r"class folder 'horse' is not one of the model's classes \('cat', 'dog'\); "
                                          r"rename it .* \(DIR/\*\.png\) to predict without scoring"):
        fpt.load(tmp_path / "run").predict(str(new))

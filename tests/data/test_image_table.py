"""Images labelled by a table beside them, Kaggle's layout: ``DIR/train/*.png`` + ``DIR/labels.csv`` of ``id,label``
(ids with or without the extension; ``image_id``/``filename`` + ``class`` alike), often a ``test/`` of unlabelled
images and a ``sample_submission.csv`` beside.

Each test failed before the fix: fpt refused the layout (``train/ holds images but no class folders, with labels.csv
beside them``), or read Kaggle's ``train.csv`` of ids as a table; ``fpt predict`` read a folder of images beside its
labels table unscored.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import fpt
from fpt.data import detect, load
from fpt.data.image_table import UnnamedImages
from fpt.errors import DataError

Image = pytest.importorskip("PIL.Image")

TINY = dict(init="random", fit="closed-form", baselines="none", device="cpu", image_size=8, patch_size=4)


def _png(path: Path, value: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((6, 6), value, dtype=np.uint8)).save(path)
    return path


def _kaggle(root: Path, n: int = 12, header: str = "id,label", ext: str = "", folder: str = "train",
            suffix: str = ".png") -> Path:
    """``root/train/<i>.png`` (dark cats, bright dogs), ``root/labels.csv``, Kaggle's ``test/`` and sample submission."""
    rows = [header]
    for i in range(n):
        label = "dog" if i % 2 else "cat"
        _png(root / folder / f"img{i}{suffix}", 200 * (i % 2) + i)
        rows.append(f"img{i}{ext},{label}")
    (root / "labels.csv").write_text("\n".join(rows) + "\n")
    for i in range(3):
        _png(root / "test" / f"t{i}.png", 100)
    (root / "sample_submission.csv").write_text("id,label\n" + "".join(f"t{i},cat\n" for i in range(3)))
    return root


def _load(path: Path, **kw):  # noqa: ANN202 (RawData)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        raw = load(str(path), image_size=8, image_channels="gray", **kw)
    return raw, [str(w.message) for w in caught if issubclass(w.category, UnnamedImages)]


@pytest.mark.parametrize(("header", "ext"), [("id,label", ""), ("id,label", ".png"), ("image_id,class", ""),
                                             ("filename,label", ".png"), ("label,image", "")])
def test_a_folder_of_images_and_their_labels_table_is_read_row_by_row(tmp_path, header, ext):
    root = _kaggle(tmp_path / "k", header=header, ext=ext) if not header.startswith("label") else None
    if root is None:  # the label first, the id last: the id is the column that names the images, wherever it is
        root = _kaggle(tmp_path / "k")
        (root / "labels.csv").write_text("label,image\n" + "".join(f"{'dog' if i % 2 else 'cat'},img{i}\n"
                                                                    for i in range(12)))
    assert detect(str(root)) == "image-table"  # was: images, refused ("images but no class folders")
    raw, notes = _load(root)
    assert raw.modality == "image" and raw.targets == [header.split(",")[1] if not header.startswith("label") else
                                                       "label"]
    y = list(raw.splits["train"].y[:, 0])
    assert y == ["dog" if i % 2 else "cat" for i in range(12)]
    pixels = [int(im.mean()) for im in raw.splits["train"].x]
    assert pixels == [200 * (i % 2) + i for i in range(12)]  # each label with its own image
    assert any("test: a test folder of unlabelled images, left out" in n and "fpt predict RUN" in n for n in notes)


def test_the_table_itself_and_loose_images_and_any_folder_name(tmp_path):
    root = _kaggle(tmp_path / "k", folder="images", ext=".jpg", suffix=".jpg")
    raw, _ = _load(root / "labels.csv")  # --data DIR/labels.csv: the table itself
    assert raw.modality == "image" and len(raw.splits["train"].x) == 12
    loose = tmp_path / "loose"
    for i in range(6):
        _png(loose / f"{i}.png", 200 * (i % 2))
    (loose / "train.csv").write_text("id,target\n" + "".join(f"{i},{i % 2}\n" for i in range(6)))
    raw, _ = _load(loose)  # integer ids, images loose beside the table; was: "an image directly in ..."
    assert list(raw.splits["train"].y[:, 0]) == [i % 2 for i in range(6)] and raw.targets == ["target"]
    raw, _ = _load(loose, target="target")
    assert raw.targets == ["target"]
    with pytest.raises(DataError, match=r"--target id is the id column"):
        _load(loose, target="id")


@pytest.mark.parametrize(("edit", "words"), [
    (lambda r: (r / "labels.csv").write_text((r / "labels.csv").read_text() + "nosuch,cat\n"),
     ["labels.csv, column 'id': 1 of 13 ids name no image in", "(first 'nosuch', row 13)", "add the images"]),
    (lambda r: (r / "labels.csv").write_text((r / "labels.csv").read_text() + "img3,cat\n"),
     ["id 'img3' on rows 4 and 13", "give each image one row"]),
    (lambda r: _png(r / "train" / "img5.jpg", 7),
     ["row 6: id 'img5' names several images", "img5.jpg, img5.png", "give the id with its extension"]),
    (lambda r: (r / "labels.csv").write_text((r / "labels.csv").read_text().replace("img4,cat", "img4,")),
     ["target column 'label'", "missing on row(s) 5"]),
    (lambda r: (r / "train.csv").write_text("id,label\nimg1,dog\n"),
     ["several tables name the images of train/ (labels.csv, train.csv)", "keep the labels' table alone"]),
])
def test_what_cannot_be_read_is_one_line(tmp_path, edit, words):
    root = _kaggle(tmp_path / "k")
    edit(root)
    with pytest.raises(DataError) as info:
        _load(root)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message, (word, message)


def test_images_the_table_does_not_name_are_left_out_with_a_note(tmp_path):
    root = _kaggle(tmp_path / "k")
    _png(root / "train" / "extra.png", 50)
    raw, notes = _load(root)
    assert len(raw.splits["train"].x) == 12
    assert any("left out 1 of 13 images that labels.csv does not name (e.g. extra.png)" in n for n in notes), notes


def test_a_table_that_names_no_image_keeps_the_folder_layout_and_its_message(tmp_path):
    root = tmp_path / "k"
    for s in ("train", "test"):
        for i in range(3):
            _png(root / s / f"{i}.png", 40 * i)
    (root / "labels.csv").write_text("id,label\nzz,cat\n")
    with pytest.raises(DataError, match=r"with labels\.csv beside them.*name each image in a table beside them"):
        _load(root)


def test_trained_on_the_layout_and_predicted_on_it_with_and_without_labels(tmp_path, tiny_bert_dir):
    root = _kaggle(tmp_path / "k", n=16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnnamedImages)
        exp = fpt.build(data=str(root), body=tiny_bert_dir, **TINY)
        fpt.fit(exp, out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    assert [list(c) for c in model.classes] == [["cat", "dog"]]
    scored = model.predict_file(str(root))  # the same layout: scored by its table, each row named by its id
    assert scored.metrics is not None and "accuracy" in scored.metrics and scored.rows == 16
    assert scored.columns["id"] == [f"img{i}" for i in range(16)]
    unlabelled = tmp_path / "new"  # Kaggle's test/ with a test.csv of ids alone: predicted in its order, not scored
    for i in (2, 0, 1):
        _png(unlabelled / "test" / f"t{i}.png", 200 * (i % 2))
    (unlabelled / "test.csv").write_text("id\nt2\nt0\nt1\n")
    result = model.predict_file(str(unlabelled))
    assert result.metrics is None and result.columns["id"] == ["t2", "t0", "t1"]
    assert model.predict_file(str(root / "test")).rows == 3  # a folder of images alone, as before
    (unlabelled / "test.csv").write_text("id,label\nt2,cat\nt0,cat\nt1,horse\n")
    with pytest.raises(DataError, match=r"test\.csv, column 'label': target 'label', row 3: label 'horse' is not one"):
        model.predict_file(str(unlabelled / "test.csv"))

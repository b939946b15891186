"""Each folder of a --data set or of new inputs is listed once (fpt.data.listing): the formats' claims and the reader
share one listing. Before, a folder of loose images given to fpt predict was listed 10 times (the image-table
layout's claim, the image folders' claim, the same claim again in the reader, then the reader), a Kaggle layout's
image folder 6 times, a class folder 3 or 4: on a folder of 100,000 files the listing, not the decoding, set the
time to the first prediction. Counted here as the os.scandir and os.listdir calls (Path.iterdir, Path.glob and
os.walk list through them), never by timing."""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from fpt.config import RunConfig
from fpt.data import load
from fpt.data.inputs import Schema, read_inputs
from fpt.tasks.user_data import DataOptions, fit_preprocessing

Image = pytest.importorskip("PIL.Image")


def _png(path: Path, value: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((6, 6), value, dtype=np.uint8)).save(path)


def _layouts(root: Path) -> dict[str, Path]:
    """A Kaggle layout (train/*.png + labels.csv), class folders (a/, b/, one with a subfolder), loose images."""
    rows = ["id,label"]
    for i in range(8):
        _png(root / "kaggle" / "train" / f"img{i}.png", 30 * i)
        _png(root / "classes" / "ab"[i % 2] / ("deep" if i == 7 else "") / f"{i}.png", 30 * i)
        _png(root / "loose" / f"img{i}.png", 30 * i)
        rows.append(f"img{i},{'ab'[i % 2]}")
    (root / "kaggle" / "labels.csv").write_text("\n".join(rows) + "\n")
    return {name: root / name for name in ("kaggle", "classes", "loose")}


@pytest.fixture
def listings(monkeypatch) -> Counter:
    """Folder -> how often it was listed, from here on."""
    counted: Counter = Counter()
    for name in ("scandir", "listdir"):
        real = getattr(os, name)

        def counting(path=".", _real=real):  # noqa: ANN001, ANN202
            counted[Path(os.fsdecode(path))] += 1
            return _real(path)

        monkeypatch.setattr(os, name, counting)
    return counted


def _schema(path: Path) -> Schema:
    raw = load(str(path), image_size=8, image_channels="gray")
    options = DataOptions(**{**{f.name: getattr(RunConfig(), f.name) for f in dataclasses.fields(DataOptions)},
                             "data": "x", "image_size": 8, "patch_size": 4})
    return Schema(fit_preprocessing(raw, options, "classification"), dict(raw.notes))


def test_predict_lists_each_folder_of_its_inputs_once(tmp_path, listings):
    folders = _layouts(tmp_path)
    schema = _schema(folders["kaggle"])
    expected = {
        "loose": ({folders["loose"]}, 8, None),
        "kaggle": ({folders["kaggle"], folders["kaggle"] / "train"}, 8, ["a", "b"] * 4),
        "classes": ({folders["classes"], *(folders["classes"] / c for c in "ab"), folders["classes"] / "b" / "deep"},
                    8, ["a"] * 4 + ["b"] * 4),
    }
    for name, (listed, n, labels) in expected.items():
        listings.clear()
        read = read_inputs(folders[name], schema)
        assert dict(listings) == dict.fromkeys(listed, 1), name  # loose/ was listed 10 times, kaggle/train/ 6
        assert len(read.x) == n and (read.y is None if labels is None else sorted(read.y[:, 0]) == sorted(labels))
    listings.clear()
    read_inputs(folders["kaggle"] / "labels.csv", schema)  # the table itself: its folder and the images' once each
    assert dict(listings) == dict.fromkeys(expected["kaggle"][0], 1)


def test_training_lists_each_folder_of_its_data_once(tmp_path, listings):
    folders = _layouts(tmp_path)
    for name in ("kaggle", "classes"):
        listings.clear()
        raw = load(str(folders[name]), image_size=8, image_channels="gray")
        assert len(raw.splits["train"].x) == 8
        assert set(listings.values()) == {1}, (name, listings)  # kaggle/ was listed 7 times, its train/ 6
    assert set(listings) == {folders["classes"], *(folders["classes"] / c for c in "ab"),
                             folders["classes"] / "b" / "deep"}


def test_a_class_folder_read_through_a_link_and_an_unreadable_one_as_before(tmp_path):
    # the walk below a class folder (fpt.data.images._images_below) lists through fpt.data.listing now: links are
    # followed, a link back up is not, and the images come in order of their paths
    folders = _layouts(tmp_path)
    (folders["classes"] / "a" / "loop").symlink_to(folders["classes"], target_is_directory=True)
    (folders["classes"] / "b" / "more").symlink_to(folders["loose"], target_is_directory=True)
    raw = load(str(folders["classes"]), image_size=8, image_channels="gray")
    assert sorted(raw.splits["train"].y[:, 0]) == ["a"] * 4 + ["b"] * 12

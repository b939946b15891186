"""Series as practitioners bring them: unlabelled .ts files to predict, tslearn's (n, length, channels) arrays,
labels saved as bytes, a line of nothing but '?', a label with a space."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pytest

from fpt.data.arrays import from_arrays
from fpt.data.timeseries import SeriesLayout, check_series, read_series_inputs, read_ts
from fpt.errors import DataError, SchemaError

HEADER = "@problemName t\n@missing true\n@univariate true\n@classLabel true a b\n@data\n"
SERIES = "".join(f"1,2,{i}:{'ab'[i % 2]}\n" for i in range(6))


def _schema(channels: int = 1, lengths: str = "3..3") -> SimpleNamespace:
    return SimpleNamespace(prep=SimpleNamespace(tokeniser=SimpleNamespace(channels=channels)),
                           info={"train_lengths": lengths})


def test_new_series_without_labels_are_predicted_not_refused(tmp_path):
    """aeon writes series to predict with @classLabel false and no target after the values."""
    path = tmp_path / "new.ts"
    path.write_text("@problemName t\n@univariate false\n@dimensions 2\n@classLabel false\n@data\n"
                    "1,2,3:4,5,6\n?,2,3:4,5,6\n")
    schema = _schema(channels=2)
    checks = SimpleNamespace(schema=schema, arrays=lambda x, where: check_series(x, schema, where),
                             labels=lambda y, where: pytest.fail("no labels to check"), no_targets=False)
    read = read_series_inputs(path, checks)
    assert read.y is None and len(read.x) == 2 and read.x[0].shape == (2, 3)
    assert np.isnan(read.x[1][0, 0]) and read.x[1][1].tolist() == [4, 5, 6]
    with pytest.raises(DataError, match="no @classLabel"):  # training still needs the targets
        read_ts(path)


def test_a_series_of_nothing_but_missing_points_is_one_line(tmp_path):
    """A .tsv line of no values was refused; the same series in a .ts trained as a series of the training mean."""
    path = tmp_path / "T_TRAIN.ts"
    path.write_text(HEADER + SERIES + "?,?,?:a\n")
    with pytest.raises(DataError, match=r"T_TRAIN\.ts, line 12: a series with no values \(every point missing\)"):
        read_ts(path)
    path.write_text(HEADER.replace("true\n@classLabel", "false\n@dimensions 2\n@classLabel") +
                    "1,2,3:?,?,?:a\n4,5,6:1,2,3:b\n")
    series, _, _ = read_ts(path)  # one channel missing throughout (a sensor that dropped out) is missing data
    assert np.isnan(series[0][1]).all()


def test_a_label_with_a_space_says_why_it_cannot_be_declared(tmp_path):
    path = tmp_path / "T_TRAIN.ts"
    path.write_text(HEADER.replace("true a b", "true class one class two") + "1,2,3:class one\n")
    with pytest.raises(DataError) as info:
        read_ts(path)
    assert "('class', 'one', 'class', 'two')" in str(info.value) and "write 'class_one'" in str(info.value)


def _arrays(X: np.ndarray, y: np.ndarray | None = None):  # noqa: ANN202
    return from_arrays({"X": X, "y": np.arange(len(X)) % 2 if y is None else y}, "auto", "auto", 32, "d.npz",
                       ".npz file d.npz")


def test_series_of_one_point_each_are_the_other_layout():
    """tslearn's and Keras' (n, length, 1) was read as (n, channels, length): 100 channels of one point."""
    X = np.random.default_rng(0).normal(size=(10, 100, 1)).astype(np.float32)
    with pytest.raises(DataError, match=r"shape \(10, 100, 1\).*100 channels of 1 point each.*X\.transpose\(0, 2, 1\)"):
        _arrays(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeriesLayout)
        raw = _arrays(X.transpose(0, 2, 1))
    assert raw.modality == "timeseries" and raw.splits["train"].x[0].shape == (1, 100)


def test_more_channels_than_points_is_said():
    X = np.random.default_rng(0).normal(size=(10, 50, 3)).astype(np.float32)
    with pytest.warns(SeriesLayout, match=r"50 channels of 3 points each; if it is \(n, length, channels\)"):
        raw = _arrays(X)
    assert raw.splits["train"].x[0].shape == (50, 3)  # read as documented: a short recording of many sensors


def test_a_series_given_as_length_by_channels_at_predict_says_transpose():
    with pytest.raises(SchemaError, match=r"has 6 channel\(s\), but the model was trained on 2.*transpose it"):
        check_series(np.zeros((3, 6, 2), np.float32), _schema(channels=2, lengths="6..6"), "X")


@pytest.mark.parametrize("y", [np.array([b"cat", b"dog"] * 5), np.array([b"cat", b"dog"] * 5, dtype=object)])
def test_labels_saved_as_bytes_are_text(y):
    """h5py and old pickles give labels as bytes: the classes were "b'cat'", and new 'cat' labels were unknown."""
    raw = _arrays(np.zeros((10, 1, 8), np.float32), y)
    assert sorted(set(raw.splits["train"].y[:, 0])) == ["cat", "dog"]


def test_labels_of_bytes_that_are_not_text_are_one_line():
    with pytest.raises(DataError, match=r"d\.npz \(X, y\): y holds bytes that are not UTF-8 text"):
        _arrays(np.zeros((4, 1, 8), np.float32), np.array([b"\xff", b"a"] * 2))

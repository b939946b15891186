"""Round 17 of the hostile-input cases: what round 16 left (series held in a DataFrame's cells named by rows from 1
where the caller indexes them from 0). Each case failed before its fix (the commit that added it says how)."""

from __future__ import annotations

import numpy as np
import pytest


def _fast(body: str) -> dict:
    return dict(body=body, init="random", steps=2, eval_every=2, batch_size=8, device="cpu")


def test_a_dataframe_of_series_names_its_rows_as_the_caller_indexes_them(tiny_bert_dir, series_run):
    """An sktime-style DataFrame (a series per cell) and a DataFrame's list column said 'row 2' of X.iloc[1] (a file's
    row under its header, from 1), where the estimators' and fpt.build's cells count from 0; a file's rows keep 'row
    N'."""
    import pandas as pd

    import fpt
    from fpt.errors import DataError
    from fpt.sklearn import FPTClassifier

    rng = np.random.default_rng(0)
    n, y = 24, np.arange(24) % 2
    X = pd.DataFrame({"c": [pd.Series(rng.normal(size=12)) for _ in range(n)]})
    bad = X.copy()
    cell = bad.iloc[1, 0].copy()
    cell[11] = np.inf
    bad.iloc[1, 0] = cell
    fix = " is infinite at point 11; replace it with a finite number, or NaN where a value is missing"
    said = {"FPTClassifier.fit: X.iloc[1]['c']": lambda: FPTClassifier(**_fast(tiny_bert_dir),
                                                                       modality="timeseries").fit(bad, y),
            "data arrays: X.iloc[1]['c']": lambda: fpt.build(data=(bad, y), **_fast(tiny_bert_dir)),
            "the DataFrame, data.iloc[1]: column 'c'": lambda: fpt.build(
                data=pd.DataFrame({"c": [list(v) for v in bad["c"]], "label": y}), target="label",
                **_fast(tiny_bert_dir))}
    for words, call in said.items():
        with pytest.raises(DataError) as refused:
            call()
        assert str(refused.value) == words + fix
    fitted = FPTClassifier(**_fast(tiny_bert_dir), modality="timeseries").fit(X, y)
    with pytest.raises(DataError) as refused:
        fitted.predict(bad.iloc[:3])
    assert str(refused.value) == "FPTClassifier.predict: X.iloc[1]['c']" + fix
    assert fitted.predict(X.iloc[:3]).shape == (3,)
    model = fpt.load(series_run)  # trained on (n, 1, 12) arrays: a Predictor's inputs are its caller's
    with pytest.raises(DataError) as refused:
        model.predict(bad.iloc[:3])
    assert str(refused.value) == "inputs: inputs.iloc[1]['c']" + fix



def test_a_datasets_image_column_names_its_images_as_the_caller_indexes_them(tiny_bert_dir, tmp_path):
    """A Predictor given a datasets.Dataset of images said 'the Dataset: image 3' of its third image, where a Dataset's
    other columns' cells are inputs['x1'][2], from 0, and a list of PIL images inputs[2]."""
    datasets = pytest.importorskip("datasets")
    Image = pytest.importorskip("PIL.Image")
    import fpt
    from fpt.errors import SchemaError

    def photo(value: int, colour: bool):  # noqa: ANN202 (a PIL image)
        rgb = np.zeros((8, 8, 3), dtype=np.uint8)
        rgb[...] = (value, 255 - value, value // 2) if colour else value
        return Image.fromarray(rgb)

    features = datasets.Features({"image": datasets.Image(), "label": datasets.ClassLabel(names=["cat", "dog"])})
    gray = datasets.Dataset.from_dict({"image": [photo(200 * (i % 2) + i, False).convert("L") for i in range(12)],
                                       "label": [i % 2 for i in range(12)]}, features=features)
    fpt.fit(fpt.build(data=gray, body=tiny_bert_dir, init="random", fit="closed-form", baselines="none", device="cpu",
                      image_size=8, patch_size=4), out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    mixed = datasets.Dataset.from_dict({"image": [photo(10, False), photo(20, False), photo(30, True)],
                                        "label": [0, 1, 0]}, features=features)
    with pytest.raises(SchemaError) as refused:
        model.predict(mixed)
    assert str(refused.value).startswith("the Dataset: inputs['image'][2] is a colour image, but the model was "
                                         "trained on grayscale images; convert it to grayscale (img.convert('L'))")
    assert model.predict(mixed.select([0, 1])).shape == (2,)


def test_images_of_two_sizes_given_to_build_name_the_first_that_differs():
    """fpt.build(data=(images, y)) of a list of (H, W, C) images of two sizes raised numpy's traceback: 'ValueError:
    setting an array element with a sequence. The requested array has an inhomogeneous shape after 1 dimensions',
    naming no example; a list of series of two lengths is still read as ragged series."""
    import fpt
    from fpt.errors import DataError

    rng = np.random.default_rng(0)
    images = [rng.random((16, 16, 3) if i % 3 else (8, 8, 3)).astype(np.float32) for i in range(24)]
    with pytest.raises(DataError) as refused:
        fpt.build(data=(images, np.arange(24) % 2), init="random", device="cpu", modality="image")
    assert str(refused.value) == ("data arrays: X: X[1] has shape (16, 16, 3), but X[0] has shape (8, 8, 3); give "
                                  "examples of one shape (images resized to one size, or their folder, which fpt "
                                  "resizes)")
    from fpt.data.memory import from_memory

    ragged = [rng.normal(size=(1, 10 + i % 3)) for i in range(24)]
    assert from_memory((ragged, np.arange(24) % 2), None, "auto", "auto", 32).modality == "timeseries"

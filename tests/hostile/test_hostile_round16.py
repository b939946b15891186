"""Round 16 of the hostile-input cases: what round 15 left (an estimator's infinite cell refused by scikit-learn's
check_array, images and series named from 1, fpt.build's arrays' rows from 1 and columns as 'column 1'). Each case
failed before its fix (the commit that added it says how)."""

from __future__ import annotations

import numpy as np
import pytest


def _fast(body: str) -> dict:
    return dict(body=body, init="random", steps=2, eval_every=2, batch_size=8, device="cpu")


def test_an_estimators_infinite_cell_is_refused_naming_it(tiny_bert_dir):
    """fit and predict of an array or a DataFrame holding inf (or text too large for float64, '1e400') were refused by
    scikit-learn's check_array: 'Input X contains infinity or a value too large for dtype('float64')', naming no
    cell. Now fpt's one-line DataError (a ValueError, as scikit-learn's contract wants) names the cell as the caller
    indexes it, from 0, and the fix."""
    import pandas as pd

    from fpt.errors import DataError
    from fpt.sklearn import FPTClassifier, FPTRegressor

    n = 24
    X, y = np.random.default_rng(0).normal(size=(n, 3)), np.arange(n) % 2
    bad = X.copy()
    bad[2, 1], bad[5, 0] = np.inf, -np.inf
    fix = "; replace them with finite numbers or leave them missing (NaN)"
    frame = pd.DataFrame(bad, columns=["a", "b", "c"])
    big = np.full((n, 3), "0.5", dtype=object)  # numbers written as text, read as numbers
    big[3, 2] = "1e400"
    said = {"FPTClassifier.fit: X[2, 1] is inf (2 infinite values in all)": lambda: FPTClassifier(**_fast(
                tiny_bert_dir)).fit(bad, y),
            "FPTRegressor.fit: X.iloc[2]['b'] is inf (2 infinite values in all)": lambda: FPTRegressor(**_fast(
                tiny_bert_dir)).fit(frame, y * 1.0),
            "FPTClassifier.fit: X[3, 2] is '1e400', beyond float64's range (1 infinite value in all)": lambda:
                FPTClassifier(**_fast(tiny_bert_dir)).fit(big, y)}
    for words, call in said.items():
        with pytest.raises(DataError) as refused:
            call()
        assert str(refused.value) == words + fix
    fitted = FPTClassifier(**_fast(tiny_bert_dir)).fit(X, y)
    with pytest.raises(ValueError) as refused:
        fitted.predict(bad[:6])
    assert isinstance(refused.value, DataError)
    assert str(refused.value) == "FPTClassifier.predict: X[2, 1] is inf (2 infinite values in all)" + fix
    assert fitted.predict(np.where(np.isinf(bad), np.nan, bad)).shape == (n,)  # a missing value is still read


def test_images_and_series_given_in_memory_are_named_as_the_caller_indexes_them(tiny_bert_dir, series_run):
    """An estimator's predict and a Predictor's said 'image 3' and 'series 3' of X[2] and inputs[2], where their
    rows and cells count from 0 as the caller indexes them; a file's examples are still counted as read."""
    import fpt
    from fpt.errors import SchemaError
    from fpt.sklearn import FPTClassifier

    rng = np.random.default_rng(0)
    n, y = 24, np.arange(24) % 2
    images = rng.random((n, 3, 8, 8)).astype(np.float32)
    holed = images[:4].copy()
    holed[2, 0, 1, 1] = np.nan
    with pytest.raises(SchemaError) as refused:
        FPTClassifier(**_fast(tiny_bert_dir)).fit(images, y).predict(holed)
    assert str(refused.value) == ("FPTClassifier.predict: X[2, 0, 1, 1] is NaN (1 of 768 pixel values NaN or "
                                  "infinite); an image has no missing pixels: fill them, or leave those images out")
    series = rng.normal(size=(n, 1, 12)).astype(np.float32)
    fitted = FPTClassifier(**_fast(tiny_bert_dir), modality="timeseries").fit(series, y)
    with pytest.raises(SchemaError) as refused:
        fitted.predict([series[0], series[1], series[2, :, :5]])
    assert str(refused.value).startswith("FPTClassifier.predict: X[2] has 5 points, but every training series had 12")
    endless = series[:3].copy()
    endless[1, 0, 11] = np.inf
    with pytest.raises(SchemaError, match=r"^FPTClassifier\.predict: X\[1\] holds an infinite value; replace it"):
        fitted.predict(endless)
    model, X = fpt.load(series_run), rng.normal(size=(3, 1, 12))
    X[1, 0, 4] = np.inf
    with pytest.raises(SchemaError, match=r"^inputs: inputs\[1\] holds an infinite value; replace it"):
        model.predict(X)


def test_builds_arrays_name_rows_and_cells_as_the_caller_indexes_them(tiny_bert_dir, tmp_path):
    """fpt.build(data=(X, y)) of NumPy arrays said 'data arrays (X, y), column 1 holds infinite values on row(s) 3'
    of X[2, 1] (a file's words: rows under a header, from 1) and 'X is infinite in example 2', naming no cell; now
    each names the cell or the column and rows as the caller indexes them, from 0. An .npz file's cell is its X's."""
    import fpt
    from fpt.errors import DataError

    n = 24
    X, y = np.random.default_rng(0).normal(size=(n, 3)), np.arange(n) % 2

    def refusal(X: np.ndarray, data=None) -> str:
        with pytest.raises(DataError) as refused:
            fpt.build(data=(X, y) if data is None else data, **_fast(tiny_bert_dir))
        return str(refused.value)

    def cell(value: object, at: tuple[int, int] = (2, 1)) -> np.ndarray:
        held = X.astype(object)
        held[at] = value
        return held

    assert refusal(cell({"a": 1})) == ("data arrays (X, y), X[:, 1] holds nested values (dicts, on X[2] (1 in all)); "
                                       "give it one type (numbers or text) per column: spread a dict's keys into "
                                       "columns of their own (pd.json_normalize), or leave the column out")
    assert refusal(cell(np.inf)) == ("data arrays (X, y), X[:, 1] holds infinite values on X[2] (1 in all); replace "
                                     "them with finite numbers or leave them missing (NaN)")
    assert refusal(cell(1 + 2j)).startswith("data arrays (X, y), X[:, 1]: holds complex numbers ((1+2j));")
    dates = np.array([["2020-01-01"]] * (n - 1) + [["zz"]], dtype=object)
    assert refusal(dates).startswith("data arrays (X, y), X[:, 0] holds dates but also other values (X[23]: 'zz');")
    val = X[:4].astype(object)
    val[3, 0] = -np.inf  # a validation split's own name
    assert refusal(None, {"X": X, "y": y, "X_val": val, "y_val": y[:4]}).startswith(
        "data arrays (X_val, y_val), X_val[:, 0] holds infinite values on X_val[3] (1 in all)")
    floats = X.copy()
    floats[2, 1], floats[5, 0] = np.inf, 1e300
    assert refusal(floats) == ("data arrays (X, y): X[2, 1] is infinite (1 value in all); replace them with finite "
                               "numbers, or NaN where a value is missing")
    assert refusal(np.where(floats == np.inf, 0.0, floats)).startswith(
        "data arrays (X, y): X[5, 0] holds a value beyond float32's range")
    images = np.random.default_rng(0).random((n, 8, 8, 3))
    images[3, 2, 2, 0] = np.inf  # no NaN offered: an image has no missing pixels
    assert refusal(images) == ("data arrays (X, y): X[3, 2, 2, 0] is inf (1 of 4608 pixel values NaN or infinite); an "
                               "image has no missing pixels: fill them, or leave those images out")
    np.savez(tmp_path / "d.npz", X=cell(np.inf).astype(float), y=y)  # an .npz's: its X's cell
    assert refusal(None, str(tmp_path / "d.npz")) == (f"{tmp_path / 'd.npz'} (X, y): X[2, 1] is infinite (1 value in "
                                                      "all); replace them with finite numbers, or NaN where a value "
                                                      "is missing")


def test_an_estimators_infinite_target_is_refused_naming_its_index(tiny_bert_dir):
    """FPTRegressor.fit(X, y) of a y holding inf was refused by scikit-learn's check_array: 'Input y contains
    infinity or a value too large for dtype('float64')', a traceback naming no example; a missing target already
    named its index (fpt.build's arrays too)."""
    from fpt.errors import DataError
    from fpt.sklearn import FPTClassifier, FPTRegressor

    n = 24
    X, y = np.random.default_rng(0).normal(size=(n, 3)), np.arange(n) * 1.0
    y[[4, 9]] = np.inf
    for estimator, what in ((FPTRegressor, "a regression target"), (FPTClassifier, "a class label")):
        with pytest.raises(DataError) as refused:
            estimator(**_fast(tiny_bert_dir)).fit(X, y)
        assert str(refused.value) == (f"{estimator.__name__}.fit: y is infinite at index 4 (2 of 24 examples); {what} "
                                      "is a finite number: fix those targets or leave those examples out of X and y")

"""The scikit-learn estimators take a DataFrame with text or category columns, as fpt.build(data=df) and
--data x.csv do: such a column is categorical (one-hot slots, a shared slot for rare and unseen categories)
(issue 38, item 2)."""

from __future__ import annotations

import numpy as np
import pytest

from fpt.sklearn import FPTClassifier, FPTRegressor

pd = pytest.importorskip("pandas")
TINY = {"init": "random", "steps": 30, "eval_every": 10, "device": "cpu", "freeze": "none", "layers": 1}


def frame(n: int = 60, seed: int = 0):
    rng = np.random.default_rng(seed)
    kind = np.array(["a", "b", "c"])[np.arange(n) % 3]
    y = (kind == "b").astype(int)  # the label is the text column alone
    return pd.DataFrame({"x": rng.normal(size=n), "kind": kind,
                         "size": pd.Categorical(np.array(["S", "M", "L"])[rng.integers(0, 3, n)]),
                         "w": np.where(np.arange(n) % 7 == 0, np.nan, rng.normal(size=n))}), y


def test_classifier_fits_and_predicts_a_frame_with_text_and_category_columns(tiny_gpt2_dir):
    X, y = frame()
    clf = FPTClassifier(body=tiny_gpt2_dir, **TINY).fit(X, y)
    kinds = {f["name"]: f["kind"] for f in clf.preprocessing_.tokeniser.features}
    assert kinds == {"x0": "numeric", "x1": "categorical", "x2": "categorical", "x3": "numeric"}
    assert list(clf.feature_names_in_) == ["x", "kind", "size", "w"]
    X_test, y_test = frame(30, seed=1)
    assert clf.predict(X_test).shape == (30,) and clf.score(X_test, y_test) >= 0.9
    new = X_test.assign(kind=["d"] * 30)  # a category fit never saw: the shared slot, as for fpt train's rare ones
    assert clf.predict_proba(new).shape == (30, 2)
    with pytest.raises(ValueError, match="not a number"):
        clf.predict(X_test.assign(x=["text"] * 30))


def test_regressor_takes_a_frame_with_a_text_column(tiny_gpt2_dir):
    X, _ = frame()
    target = (X["kind"] == "c") * 3.0 + X["x"]
    reg = FPTRegressor(body=tiny_gpt2_dir, **TINY).fit(X, target)
    assert reg.predict(X.iloc[:5]).shape == (5,)
    with pytest.raises(ValueError, match="feature names"):
        reg.predict(X.rename(columns={"kind": "other"}))

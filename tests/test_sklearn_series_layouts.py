"""fpt.sklearn's estimators read one-channel series in every layout aeon takes for them, at predict as at fit: (n, 1,
L), (n, L) rows, and a list of (L,) arrays are the same series, as fpt.load(run).predict reads them."""

from __future__ import annotations

import numpy as np
import pytest

from fpt.sklearn import FPTClassifier

ARGS = {"init": "random", "device": "cpu", "fitting": "gradient", "steps": 3, "eval_every": 3, "batch_size": 8,
        "options": {"dropout": 0.0}}


def _series(n: int = 24, length: int = 16) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    y = np.array(["up", "down"])[np.arange(n) % 2]
    return (rng.normal(size=(n, 1, length)) + (y == "up")[:, None, None]).astype(np.float32), y


def test_one_channel_series_predict_alike_in_each_layout_whatever_fit_saw(tiny_bert_dir):
    """A model fitted on (n, 1, L) (aeon's layout) or on a list of series refused (n, L) rows and a list of (L,)
    arrays at predict ('X has 16 features, but FPTClassifier is expecting 1 features as input'); one fitted on (n, L)
    rows (modality='timeseries') refused (n, 1, L) ('X has 1 features, ... expecting 16')."""
    X, y = _series()
    fits = {"3-D": (X, {}, 16), "rows": (X[:, 0], {"modality": "timeseries"}, 16),
            "ragged": ([s[0, : 12 + i % 4] for i, s in enumerate(X)], {}, 12)}  # (L,) arrays of lengths 12..15
    for name, (fitted_on, extra, length) in fits.items():
        clf = FPTClassifier(body=tiny_bert_dir, **ARGS, **extra).fit(fitted_on, y)
        assert clf.preprocessing_.modality == "timeseries", name
        series = X[:6, :, :length]  # six series of a training length
        expected = clf.predict_proba(series)
        for layout, given in {"2-D": series[:, 0], "list": list(series[:, 0])}.items():
            assert clf.predict_proba(given) == pytest.approx(expected, abs=1e-6), (name, layout)
        assert (clf.predict(series[:, 0]) == clf.predict(series)).all()
    # two channels stay two: (n, L) rows are no two-channel series
    clf = FPTClassifier(body=tiny_bert_dir, **ARGS).fit(np.concatenate([X, X], axis=1), y)
    with pytest.raises(ValueError, match="X has 16 features, but FPTClassifier is expecting 2"):
        clf.predict(X[:6, 0])

"""Round 20 of the hostile-input cases: images given at predict in the other layout fpt.build reads, and the inputs
probed after them (texts, series, tables at predict, labels at scoring, huge targets). Each case failed before its
fix (the commit that added it says how)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest


def _fast(body: str) -> dict:
    return dict(body=body, init="random", steps=2, eval_every=2, batch_size=8, device="cpu")


def test_images_are_predicted_in_either_layout_fpt_build_reads(tiny_bert_dir, tmp_path):
    """fpt.build trains on (n, H, W, C) and (n, C, H, W) alike, but a model trained on one refused the other at predict:
    a Predictor's and fpt predict's 'X[0] has shape (3, 8, 8), but the model takes (8, 8, 3) or (3, 32, 32) ...', an
    estimator's scikit-learn 'X has 3 features, but FPTClassifier is expecting 8 features as input'. Predict reads
    the layouts build reads, by the same rule (fpt.data.images.image_shape), with the same predictions."""
    import fpt
    from fpt.errors import SchemaError
    from fpt.sklearn import FPTClassifier

    rng = np.random.default_rng(0)
    X, y = rng.random((24, 8, 8, 3)).astype(np.float32), np.arange(24) % 2
    first = np.moveaxis(X, -1, 1)  # (24, 3, 8, 8)
    fpt.fit(fpt.build(data=(X, y), **_fast(tiny_bert_dir)), out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    assert np.array_equal(model.predict_proba(first[:6]), model.predict_proba(X[:6]))
    assert np.array_equal(model.predict(list(first[:3])), model.predict(X[:3]))
    np.savez(tmp_path / "first.npz", X=first[:4])
    done = subprocess.run([sys.executable, "-m", "fpt", "predict", str(tmp_path / "run"), str(tmp_path / "first.npz"),
                           "--out", str(tmp_path / "p.csv")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    import pandas as pd

    written = pd.read_csv(tmp_path / "p.csv")
    assert written.iloc[:, 0].tolist() == model.predict(X[:4]).tolist()
    assert np.allclose(written.iloc[:, 1:].to_numpy(), model.predict_proba(X[:4]), atol=1e-6)
    for trained, other in ((X, first), (first, X)):
        fitted = FPTClassifier(**_fast(tiny_bert_dir)).fit(trained, y)
        assert np.array_equal(fitted.predict_proba(other), fitted.predict_proba(trained))
    bad = first[:4].copy()
    bad[2, 1, 0, 1] = np.nan  # named as the caller indexes it, in the layout given
    with pytest.raises(SchemaError, match=r"^FPTClassifier.predict: X\[2, 1, 0, 1\] is NaN \(1 of 768 "):
        fitted.predict(bad)
    with pytest.raises(SchemaError) as refused:  # an image of another shape names both layouts it takes
        model.predict(X[:2, :6])
    assert str(refused.value) == ("inputs: inputs[0] has shape (6, 8, 3), but the model takes (8, 8, 3) or (3, 8, 8) "
                                  "or (3, 32, 32) or (32, 32, 3) (rgb, 32x32 pixels); resize or convert it")
    with pytest.raises(SchemaError, match=r"one image of shape \(3, 8, 8\) given alone"):
        model.predict(first[0])

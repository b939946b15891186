"""Series of different lengths from memory (a list, or an object array) train in fpt.build and the estimators as
from .ts/.tsv files, and a series model trained from arrays records its input contract (channels, training
lengths), refusing other series on every predict path (issue 38, item 4)."""

from __future__ import annotations

import numpy as np
import pytest

import fpt
from fpt.errors import DataError, SchemaError

TINY = {"init": "random", "steps": 3, "eval_every": 3, "batch_size": 8, "device": "cpu", "baselines": "none"}


def ragged(n: int = 30, channels: int = 2, seed: int = 0) -> tuple[list[np.ndarray], np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    return [rng.normal(y[i], 1, size=(channels, int(rng.integers(8, 20)))).astype(np.float32) for i in range(n)], y


def test_fpt_build_takes_a_list_and_an_object_array_of_series(tiny_bert_dir, tmp_path):
    X, y = ragged()
    exp = fpt.build(data=(X, y), body=tiny_bert_dir, series_patch=4, **TINY)
    assert exp.data.info["modality"] == "timeseries" and exp.data.info["channels"] == 2
    lo, hi = min(s.shape[1] for s in X), max(s.shape[1] for s in X)
    assert exp.data.info["train_lengths"] == f"{lo}..{hi}" and exp.data.spec.seq_len == -(-hi // 4)
    univariate = np.empty(30, dtype=object)
    univariate[:] = [s[0] for s in X]  # aeon's unequal-length collection: an object array of (L,) arrays
    exp = fpt.build(data={"X": univariate, "y": y}, body=tiny_bert_dir, series_patch=4, **TINY)
    assert exp.data.info["channels"] == 1 and exp.data.train.data.lengths is not None
    with pytest.raises(DataError, match=r"^data arrays \(X, y\): X\[3\] has 3 channel\(s\), but X\[0\] has 2"):
        fpt.build(data=(X[:3] + [np.zeros((3, 9))] + X[4:], y), body=tiny_bert_dir, **TINY)
    with pytest.raises(DataError, match="only modality timeseries reads"):
        fpt.build(data=(X, y), body=tiny_bert_dir, modality="tabular", **TINY)


def test_an_array_trained_series_model_refuses_other_lengths_and_channels(tiny_bert_dir, tmp_path):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 2, 25)).astype(np.float32), np.arange(30) % 2
    exp = fpt.build(data=(X, y), body=tiny_bert_dir, **TINY)
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    assert model.predict(X[:4]).shape == (4,)
    with pytest.raises(SchemaError, match="every training series had 25; resample or pad it to 25"):
        model.predict(X[:, :, :20])  # was scored without a word
    with pytest.raises(SchemaError, match="1 channel"):
        model.predict(X[:, :1])
    np.savez(tmp_path / "short.npz", X=X[:, :, :20], y=y)
    from fpt.cli import main

    assert main(["predict", str(tmp_path / "run"), str(tmp_path / "short.npz"), "--out", str(tmp_path / "p.csv")]) == 2


def test_estimators_take_series_of_different_lengths_and_keep_the_contract(tiny_bert_dir):
    from fpt.sklearn import FPTClassifier

    X, y = ragged()
    clf = FPTClassifier(body=tiny_bert_dir, init="random", steps=3, eval_every=3, device="cpu", series_patch=4).fit(X, y)
    assert clf.preprocessing_.modality == "timeseries" and clf.n_features_in_ == 2
    assert clf.predict(X).shape == (30,) and 0 <= clf.score(X, y) <= 1
    with pytest.raises(SchemaError, match="channel"):
        clf.predict([s[:1] for s in X])
    rng = np.random.default_rng(1)
    equal = rng.normal(size=(30, 2, 16)).astype(np.float32)
    clf = FPTClassifier(body=tiny_bert_dir, init="random", steps=3, eval_every=3, device="cpu").fit(equal, y)
    with pytest.raises(SchemaError, match="every training series had 16"):
        clf.predict(equal[:, :, :12])
    with pytest.raises(SchemaError, match="every training series had 16"):
        clf.predict([s[:, :12] for s in equal])

"""The stored input contract (issue 39, silent results): a series model trained from arrays records its channels and
training lengths, and every predict path (Predictor, fpt predict, the estimators) refuses series of another length
or channel count instead of scoring them (the contract itself landed with issue 38 item 4; these are our cases)."""

from __future__ import annotations

import numpy as np
import pytest
from hostile_helpers import one_line, series

import fpt
from fpt.cli import main
from fpt.errors import SchemaError


@pytest.mark.parametrize(("length", "channels"), [(3, 1), (24, 1), (12, 2)])
def test_predictor_refuses_series_off_the_contract(length, channels, series_run):
    X, _ = series(n=4, length=length, channels=channels, seed=3)
    with pytest.raises(SchemaError, match="points|channel"):
        fpt.load(series_run).predict(X)


def test_predictor_takes_series_on_the_contract(series_run):
    X, _ = series(n=4, seed=3)
    assert np.isfinite(fpt.load(series_run).predict_proba(X)).all()


def test_fpt_predict_refuses_an_npz_of_another_length(series_run, tmp_path, capsys):
    X, y = series(n=4, length=3, seed=3)
    np.savez(tmp_path / "x.npz", X=X, y=y)
    assert main(["predict", str(series_run), str(tmp_path / "x.npz"), "--out", str(tmp_path / "p.csv")]) == 2
    one_line(capsys, "predict", "points")
    assert not (tmp_path / "p.csv").exists()


def test_an_estimator_refuses_another_channel_count(tiny_bert_dir):
    from fpt.sklearn import FPTClassifier

    X, y = series(n=24, channels=2)
    model = FPTClassifier(body=tiny_bert_dir, init="random", steps=2, eval_every=2, batch_size=8, device="cpu",
                          modality="timeseries").fit(X, y)
    with pytest.raises((SchemaError, ValueError)):
        model.predict(X[:, :1, :])

"""Silent wrong results, round 2: a saved model's predictions against the figures its own run reported."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import fpt


@pytest.fixture(scope="module")
def linear_npz(tmp_path_factory):
    """y = 500 + 30 a - 5 b exactly, with its own test split: a closed-form head with the tokens fits it to ~1e-7."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(80, 3))
    y = 30 * X[:, 0] - 5 * X[:, 1] + 500
    path = tmp_path_factory.mktemp("silent2") / "linear.npz"
    np.savez(path, X=X[:60], y=y[:60], X_test=X[60:], y_test=y[60:])
    return path


def test_a_closed_form_head_predicts_in_fp32_under_bf16(linear_npz, tiny_bert_dir, tmp_path):
    """Under bf16 (precision auto on a GPU, or on a CPU with native bf16) fpt.load(run).predict ran the closed-form
    head, solved in float64 with its standardisation folded into the bias, under bf16 autocast: its test MSE was
    0.0093 where summary.json (the head in fp32) said 2.5e-10. The head now runs in fp32 wherever it is called."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an explicit bf16 on a CPU warns
        exp = fpt.build(data=str(linear_npz), body=tiny_bert_dir, fit="closed-form", cf_members=2, precision="bf16",
                        device="cpu", baselines="none", objective="regression")
        summary = fpt.fit(exp, out=tmp_path / "run", progress=False)
        arrays = np.load(linear_npz)
        predicted = fpt.load(tmp_path / "run").predict(arrays["X_test"])
    mse = float(np.mean((predicted - arrays["y_test"]) ** 2))
    assert summary["precision"] == "bf16" and summary["test_mse"] < 1e-4
    assert mse == pytest.approx(summary["test_mse"], rel=0.05, abs=1e-9)  # was 0.0093 against 2.5e-10


def test_dark_images_of_a_float_0_255_array_are_read_at_predict_as_training_read_them(tiny_bert_dir, tmp_path):
    """Float pixels are 0-1 or 0-255 by the largest value of the array. Training read its array at once, predict image
    by image: a dark image of a 0-255 array (every pixel below 1) was read as 0-1, 255 times brighter (its tokens
    2.3 standardised units off), though the same array's run had read it dark."""
    rng = np.random.default_rng(0)
    X = (rng.random((40, 8, 8)) * 255).astype(np.float32)
    X[::4] *= 0.003  # every pixel below 1 of 255
    y = np.arange(40) % 2
    np.savez(tmp_path / "images.npz", X=X[:30], y=y[:30], X_test=X[30:], y_test=y[30:])
    exp = fpt.build(data=str(tmp_path / "images.npz"), body=tiny_bert_dir, modality="image", image_size=8,
                    patch_size=4, fit="gradient", init="random", steps=2, eval_every=2, batch_size=8, device="cpu",
                    baselines="none")
    summary = fpt.fit(exp, out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    tokens, _, _ = model.tokens(X[30:])
    assert torch.equal(tokens, exp.data.eval_sets["test"].x)  # were 2.3 apart on the two dark images
    assert model.score(X[30:], y[30:]) == summary["test_accuracy"]

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


def test_resuming_a_run_whose_data_changed_is_refused(tiny_bert_dir, tmp_path, capsys):
    """--resume rebuilt the data from the file as it is now and rewrote data.json without a word: rows appended since
    the run started moved examples between the splits (test rows into training) and the standardisation, so one
    model trained its first steps on one dataset and the rest on another. The same data resumes as before."""
    from fpt.cli import main

    rng = np.random.default_rng(0)
    rows = ["x1,x2,label"] + [f"{rng.normal() + 2 * (i % 2):.3f},{rng.normal():.3f},{'ab'[i % 2]}" for i in range(40)]
    data = tmp_path / "d.csv"
    data.write_text("\n".join(rows) + "\n")
    common = ["--body", tiny_bert_dir, "--init", "random", "--batch-size", "8", "--eval-every", "2", "--device", "cpu",
              "--baselines", "none", "--quiet"]
    for out in ("same", "changed"):
        assert main(["train", "--data", str(data), *common, "--steps", "2", "--out", str(tmp_path / out)]) == 0
    assert main(["train", "--resume", str(tmp_path / "same"), "--steps", "4"]) == 0
    assert fpt.Run(tmp_path / "same").summary()["steps"] == 4
    saved = (tmp_path / "changed" / "data.json").read_text()
    data.write_text("\n".join(rows + [f"{rng.normal() + 2 * (i % 2):.3f},0.5,{'ab'[i % 2]}" for i in range(10)]) + "\n")
    capsys.readouterr()
    assert main(["train", "--resume", str(tmp_path / "changed"), "--steps", "4"]) == 2  # was 0, data.json rewritten
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "the data changed since the run started" in err and "data.json" in err
    assert (tmp_path / "changed" / "data.json").read_text() == saved and fpt.Run(tmp_path / "changed").summary()["steps"] == 2

"""Finiteness at the float32 boundary (issue 39, silent results): values that leave float32's range once read or
standardised are an error naming the example, in training and in predict, never "diverged at step 1" with exit 0
or NaN probabilities; a tampered training std and series of 0 points are refused."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch
from hostile_helpers import FAST, one_line, series, table

import fpt
from fpt.cli import main
from fpt.data.tokenisers import SeriesTokens, check_finite
from fpt.errors import DataError, FptError


@pytest.mark.parametrize("value", [1e40, -1e40, 3.5e38])
def test_series_arrays_beyond_float32_do_not_train(value, tiny_bert_dir):
    X, y = series()
    X = X.astype(np.float64)
    X[3, 0, 5] = value
    with pytest.raises(DataError, match="float32's range"):
        fpt.build(data=(X, y), body=tiny_bert_dir, **FAST)


def test_table_arrays_beyond_float32_do_not_train(tiny_bert_dir):
    X = np.random.default_rng(0).normal(size=(24, 3))
    X[7, 1] = 1e300
    with pytest.raises(DataError, match=r"X\[7, 1\] holds a value beyond float32's range"):
        fpt.build(data=(X, np.arange(24) % 2), body=tiny_bert_dir, **FAST)


@pytest.mark.parametrize("shape", [(24, 1, 0), (24, 0)])
def test_series_of_zero_points_do_not_train(shape, tiny_bert_dir):
    with pytest.raises(DataError, match="0 points"):
        fpt.build(data=(np.zeros(shape), np.arange(24) % 2), body=tiny_bert_dir, modality="timeseries", **FAST)


def test_the_series_tokeniser_refuses_an_empty_series():
    with pytest.raises(DataError, match="training series 2 has 0 points"):
        SeriesTokens.fit([np.ones((1, 5)), np.ones((1, 0))], None, None, "global")


@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), float("nan")])
def test_check_finite_names_the_first_bad_example(bad):
    x = torch.zeros(4, 3, 2)
    x[2, 1, 0] = bad
    with pytest.raises(DataError, match="example 3 "):
        check_finite(x, "inputs")


@pytest.mark.parametrize("value", [np.inf, -np.inf, 1e40])
def test_predict_on_series_beyond_float32_is_an_error_not_nan(value, series_run):
    model = fpt.load(series_run)
    X, _ = series(n=4, seed=5)
    X = X.astype(np.float64)
    X[1, 0, 2] = value
    # X[1] as the caller indexes it; 1e40 (inf once cast to float32) was called "an infinite value"
    shown = "an infinite value" if np.isinf(value) else "a value beyond float32's range"
    with pytest.raises(FptError, match=rf"^inputs: inputs\[1\] holds {shown}"):
        model.predict_proba(X)


def test_predict_with_a_missing_point_still_predicts(series_run):
    model = fpt.load(series_run)
    X, _ = series(n=4, seed=5)
    X[1, 0, 2] = np.nan  # a missing point: the mean, as training read them
    assert np.isfinite(model.predict_proba(X)).all()


def test_fpt_predict_on_a_table_far_outside_float32_is_one_line(tab_run, tmp_path, capsys):
    data = table(tmp_path / "new.csv", n=4, seed=2)
    text = data.read_text().splitlines()
    text[2] = "1e39," + text[2].split(",", 1)[1]
    data.write_text("\n".join(text) + "\n")
    out = tmp_path / "p.csv"
    assert main(["predict", str(tab_run), str(data), "--out", str(out)]) == 2
    one_line(capsys, "predict", "example 2", "float32")
    assert not out.exists()


@pytest.mark.parametrize("std", [1e-300, 1e-31])
def test_a_tampered_training_std_is_refused_not_nan_rows(std, run_copy, tmp_path, capsys):
    doc = json.loads((run_copy / "data.json").read_text())
    doc["tokeniser"]["features"][0]["std"] = std
    (run_copy / "data.json").write_text(json.dumps(doc))
    assert main(["predict", str(run_copy), str(table(tmp_path / "n.csv", n=4)), "--out", str(tmp_path / "p.csv")]) == 2
    one_line(capsys, "predict", "std")


def test_fpt_train_on_a_ts_file_beyond_float32_is_one_line(tiny_bert_dir, tmp_path, capsys):
    lines = ["@problemName x", "@timeStamps false", "@univariate true", "@classLabel true a b", "@data"]
    lines += [f"{','.join(str(v) for v in [1.0, 2.0, 1e40 if i == 3 else 3.0])}:{'ab'[i % 2]}" for i in range(12)]
    path = tmp_path / "X_TRAIN.ts"
    path.write_text("\n".join(lines) + "\n")
    shutil.copy(path, tmp_path / "X_TEST.ts")
    assert main(["train", "--data", str(path), "--body", tiny_bert_dir, "--init", "random", "--steps", "2",
                 "--baselines", "none", "--quiet", "--out", str(tmp_path / "r")]) == 2
    one_line(capsys, "train", "1e+40")

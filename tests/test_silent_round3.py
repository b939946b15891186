"""Silent wrong results, round 3: baselines, pixel scales, dates, float32 series and MLflow's record."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import torch

import fpt
from fpt.train import baselines


def _labels(counts: dict[int, int]) -> np.ndarray:
    return np.concatenate([np.full(n, k) for k, n in counts.items()])


def test_the_majority_baseline_answers_the_training_sets_class(tiny_bert_dir, tmp_path):
    """summary.json's baselines.majority was each held-out set's own most frequent class's accuracy: training 70%
    class 0, validation 70% class 1 gave a 'majority class' of 0.70 on validation, though always answering the
    training set's majority (class 0) scores 0.30 there; a baseline known only from the labels it is scored on."""
    rng = np.random.default_rng(0)
    y = _labels({0: 28, 1: 12})
    y_val, y_test = _labels({0: 6, 1: 14}), _labels({0: 8, 1: 12})
    np.savez(tmp_path / "d.npz", X=rng.normal(size=(40, 3)), y=y, X_val=rng.normal(size=(20, 3)), y_val=y_val,
             X_test=rng.normal(size=(20, 3)), y_test=y_test)
    exp = fpt.build(data=str(tmp_path / "d.npz"), body=tiny_bert_dir, init="random", fit="gradient", steps=2,
                    eval_every=2, batch_size=8, device="cpu", baselines="none", objective="classification")
    base = baselines(exp)
    assert base["majority"] == {"val": 0.3, "test": 0.4}  # were 0.7 and 0.6: each set's own class 1
    assert base["majority_class"] == [0]
    summary = fpt.fit(exp, out=tmp_path / "run", progress=False)
    assert summary["baselines"]["majority"] == {"val": 0.3, "test": 0.4}


def test_a_tie_in_training_answers_the_first_class(tiny_bert_dir, tmp_path):
    rng = np.random.default_rng(1)
    np.savez(tmp_path / "d.npz", X=rng.normal(size=(40, 3)), y=_labels({0: 20, 1: 20}), X_val=rng.normal(size=(10, 3)),
             y_val=_labels({1: 10}), X_test=rng.normal(size=(10, 3)), y_test=_labels({0: 3, 1: 7}))
    exp = fpt.build(data=str(tmp_path / "d.npz"), body=tiny_bert_dir, init="random", fit="gradient", steps=2,
                    eval_every=2, batch_size=8, device="cpu", baselines="none", objective="classification")
    base = baselines(exp)
    assert base["majority"] == {"val": 0.0, "test": 0.3}  # were 1.0 and 0.7
    assert base["majority_class"] == [0]


def test_a_generated_task_answers_its_training_streams_class():
    """bit-xor draws its training examples: the majority is of a draw of the training stream, per output bit."""
    exp = fpt.build(task="bit-xor", body="lstm-3-w384", init="random", device="cpu", task_options={"eval_size": 64})
    base = baselines(exp)
    train_y = exp.data.train.batch(0, 64).y
    answer = (train_y.float().mean(0) > 0.5).long()  # 0 on a tie, as the first class
    for name, held_out in exp.data.eval_sets.items():
        assert base["majority"][name] == pytest.approx(float((held_out.y == answer).float().mean()), abs=1e-4)
    assert base["majority_class"] == answer.tolist()


def _image_run(tmp_path, body, X, y, X_test, y_test):
    np.savez(tmp_path / "images.npz", X=X, y=y, X_test=X_test, y_test=y_test)
    exp = fpt.build(data=str(tmp_path / "images.npz"), body=body, modality="image", image_size=8,
                    patch_size=4, fit="gradient", init="random", steps=2, eval_every=2, batch_size=8, device="cpu",
                    baselines="none", objective="classification")
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    return exp, fpt.load(tmp_path / "run")


def test_a_dark_image_alone_is_read_on_the_training_arrays_pixel_scale(tiny_bert_dir, tmp_path):
    """Float pixels are 0-1 or 0-255 by the largest value of what is given: one dark image (every pixel below 1)
    given alone to a model trained on 0-255 floats was read as 0-1, 255 times brighter (its tokens 2-3
    standardised units off the tokens training made of it). data.json's tokeniser now keeps the training scale."""
    rng = np.random.default_rng(0)
    X = (rng.random((40, 8, 8)) * 255).astype(np.float32)
    X[::4] *= 0.003  # every pixel below 1 of 255
    y = np.arange(40) % 2
    exp, model = _image_run(tmp_path, tiny_bert_dir, X[:30], y[:30], X[30:], y[30:])
    dark = 32 - 30  # X[32] is dark
    alone, _, _ = model.tokens(X[32:33])
    trained = exp.data.eval_sets["test"].x[dark:dark + 1]
    assert float((alone - trained).abs().max()) == 0.0  # were 2-3 apart
    tokeniser = json.loads((tmp_path / "run" / "data.json").read_text())["tokeniser"]
    assert tokeniser["pixel_scale"] == 255
    # a run saved before the scale was recorded reads as it did: by the largest value given
    del tokeniser["pixel_scale"]
    saved = json.loads((tmp_path / "run" / "data.json").read_text())
    (tmp_path / "run" / "data.json").write_text(json.dumps({**saved, "tokeniser": tokeniser}))
    old, _, _ = fpt.load(tmp_path / "run").tokens(X[32:33])
    assert float((old - trained).abs().max()) > 1.0


def test_a_dark_held_out_split_is_read_on_the_training_arrays_scale(tiny_bert_dir, tmp_path):
    """Training read each split of an .npz by its own largest value: X_test of dark 0-255 images (all below 1) was
    read as 0-1, 255 times brighter than X's, and the test figure was of other images than X's scale holds."""
    rng = np.random.default_rng(1)
    X = (rng.random((40, 8, 8)) * 255).astype(np.float32)
    X_test = (rng.random((10, 8, 8)) * 0.9).astype(np.float32)
    y = np.arange(40) % 2
    exp, model = _image_run(tmp_path, tiny_bert_dir, X, y, X_test, np.arange(10) % 2)
    as_0_255, _ = model.preprocessing.tokeniser([img[..., None] for img in np.round(X_test).astype(np.uint8)])
    assert torch.equal(exp.data.eval_sets["test"].x, as_0_255)  # were read as X_test * 255
    tokens, _, _ = model.tokens(X_test)
    assert torch.equal(tokens, as_0_255)


def test_held_out_dates_beyond_the_training_range_are_said_at_training(tiny_bert_dir, tmp_path):
    """A table split by time (train on January-February, test on March): training evaluated the test split with its
    dates read as the last training day in their trend parts (as predict does) without a word; predict says so
    (DatesBeyondWarning). Training now says it once, with the counts, and records them in task_info."""
    import pandas as pd

    from fpt.data.base import ColumnNote

    rng = np.random.default_rng(0)
    when = pd.date_range("2024-01-01", periods=80, freq="D")
    frame = pd.DataFrame({"x": rng.normal(size=80).round(3), "when": when.strftime("%Y-%m-%d"),
                          "label": np.where(when.day_of_week >= 5, "weekend", "week")})
    (tmp_path / "d").mkdir()
    frame[:60].to_csv(tmp_path / "d" / "train.csv", index=False)
    frame[60:].to_csv(tmp_path / "d" / "test.csv", index=False)  # 20 days after the last training day
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exp = fpt.build(data=str(tmp_path / "d"), body=tiny_bert_dir, init="random", fit="gradient", steps=2,
                        eval_every=2, batch_size=8, device="cpu", baselines="none")
    notes = [str(w.message) for w in caught if w.category is ColumnNote and "beyond the training dates" in str(w.message)]
    assert len(notes) == 1
    assert "column 'when': 20 of 20 in test beyond the training dates (2024-01-01 .. " in notes[0]
    assert exp.data.info["dates_beyond_training"] == {"test": {"when": 20}}


def test_a_small_variation_on_a_large_offset_survives_the_reading_of_series(tiny_bert_dir, tmp_path):
    """Series were float32 from the moment they were read: a sensor at 1e6 varying by 0.001 (float32's steps there
    are 0.0625) read as a constant, every token 0 after per-series normalisation, and nothing to learn (1-NN: 0.5).
    A series float32 cannot carry now stays float64 until the tokeniser has normalised it, at training and predict."""
    from fpt import baselines as classic

    rng = np.random.default_rng(0)
    t = np.linspace(0, 1, 32)
    y = np.arange(80) % 2
    shapes = np.stack([np.sin(2 * np.pi * (1 + k) * t) for k in y]) + 0.1 * rng.normal(size=(80, 32))
    X = (1e6 + 0.001 * shapes)[:, None, :]  # (n, 1, L) float64
    np.savez(tmp_path / "s.npz", X=X[:60], y=y[:60], X_test=X[60:], y_test=y[60:])
    exp = fpt.build(data=str(tmp_path / "s.npz"), body=tiny_bert_dir, init="random", fit="gradient", steps=2,
                    eval_every=2, batch_size=8, device="cpu", baselines="none", series_norm="series", series_patch=4,
                    objective="classification")
    test = exp.data.eval_sets["test"].x  # (20, 8, 4)
    own = X[60:, 0] - X[60:, 0].mean(1, keepdims=True)
    expected = torch.from_numpy((own / own.std(1, keepdims=True)).reshape(20, 8, 4).astype(np.float32))
    assert float((test - expected).abs().max()) < 1e-4  # were all 0
    assert classic.fit_models(exp.data)["models"]["1-NN Euclidean"]["test"] == 1.0  # was 0.5
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    tokens, _, _ = model.tokens(X[60:])
    alone, _, _ = model.tokens(X[60:61])
    assert torch.equal(tokens, test) and torch.equal(alone, test[:1])


def test_series_float32_carries_stay_float32():
    from fpt.data.timeseries import float32_carries, narrowed

    rng = np.random.default_rng(0)
    plain, offset = rng.normal(size=(2, 50)), 1e6 + 0.001 * rng.normal(size=(2, 50))
    assert float32_carries(plain) and not float32_carries(offset)
    assert [s.dtype for s in narrowed([plain, offset], "X")] == [np.float32, np.float64]


def test_a_resumed_run_with_more_steps_says_its_steps_in_mlflow(tiny_gpt2_dir, tmp_path, monkeypatch):
    """MLflow params cannot change, and fpt skipped the keys already logged: a finished 4-step run resumed to 6 steps
    read params.steps = 4 in MLflow, with no other field saying what it trained under. The tag fpt.config.steps (which
    can change) now holds 6, and summary.steps (a metric) the steps trained."""
    pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    from fpt import tracking

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    monkeypatch.chdir(tmp_path)
    fields = dict(task="bit-xor", body=tiny_gpt2_dir, init="random", batch_size=4, eval_every=2,
                  task_options={"eval_size": 16}, device="cpu")
    run = tmp_path / "run"
    fpt.fit(fpt.build(**fields, steps=4), out=run, progress=False, trackers=["mlflow"])
    for steps in (6, 8):
        fpt.fit(fpt.build(fpt.train.resume_config(run, {"steps": steps})), out=run, resume=True, progress=False,
                trackers=["mlflow"])
        client = MlflowClient(tracking_uri=tracking.mlflow_store_uri())
        (found,) = client.search_runs([client.get_experiment_by_name("fpt").experiment_id])
        assert found.data.tags.get("fpt.config.steps") == str(steps)  # was missing: only params.steps = 4
        assert found.data.metrics["summary.steps"] == steps and found.data.params["steps"] == "4"
    assert not [k for k in found.data.tags if k.startswith("fpt.config.") and k != "fpt.config.steps"]

"""Silent wrong results, round 3: baselines, pixel scales, dates, float32 series and MLflow's record."""

from __future__ import annotations

import numpy as np
import pytest

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

"""Several target columns of different class counts: the head has the largest count's slots for every target, and
a slot a target has no class for is never its answer. The predictions written never gave it; the metrics (training's
val/test accuracy, which selects the step, and fpt predict's on a labelled file) scored the raw argmax, which could
pick it, so they disagreed with the predictions they were reported beside."""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

import fpt
from fpt.train import baselines, evaluate


def _table(n: int = 72, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    return pd.DataFrame({"x0": x[:, 0], "x1": x[:, 1], "x2": x[:, 2],
                         "two": np.array(["n", "y"])[np.arange(n) % 2],
                         "four": np.array(["p", "q", "r", "s"])[np.arange(n) % 4]})


def _favour_missing_slots(model: torch.nn.Module) -> None:
    """The head's bias toward target 'two''s slots 2 and 3, which it has no class for (the head is (m * C) wide,
    target j's slots j * C .. j * C + C - 1): an unmasked argmax answers them for every example."""
    with torch.no_grad():
        model.head.bias[2:4] += 1e3


def test_metrics_score_the_predictions_of_targets_with_fewer_classes(tmp_path, tiny_gpt2_dir):
    df = _table()
    exp = fpt.build(data=df, target_column="two,four", body=tiny_gpt2_dir, init="random", fit="gradient", steps=2,
                    eval_every=2, batch_size=8, device="cpu", baselines="none")
    assert exp.data.spec.num_classes == 4 and exp.data.spec.per_token == 2
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    _favour_missing_slots(exp.model)
    test = exp.data.eval_sets["test"]
    predicted = fpt.predict(exp, test.x)  # class indices, (n, 2)
    assert int(predicted[:, 0].max()) <= 1  # target 'two' is answered with one of its own two classes
    assert evaluate(exp, sets=["test"])["test_accuracy"] == float((predicted == test.y).double().mean())
    # the chance level of two targets of 2 and 4 classes is their mean, 3/8, not 1/4
    assert baselines(exp)["chance"] == 0.375

    # fpt predict's figures on a labelled file are those of the predictions it writes
    model = fpt.load(tmp_path / "run")
    _favour_missing_slots(model.model)
    labelled = df.iloc[:24]
    result = model.predict_file(labelled)
    two, four = np.array(result.columns["prediction_two"]), np.array(result.columns["prediction_four"])
    assert set(two) <= {"n", "y"}
    written = np.mean(np.r_[two == labelled["two"].to_numpy(), four == labelled["four"].to_numpy()])
    assert result.metrics["accuracy"] == written

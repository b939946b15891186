"""Training on --data: classification and regression end to end, data.json, the CLI."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
import torch

import fpt
from fpt.cli import main
from fpt.data.tables import read_columns
from fpt.tasks.user_data import Preprocessing


def _build(path, body, **kw):
    fields = dict(data=str(path), body=body, init="random", steps=6, batch_size=8, eval_every=2, device="cpu")
    return fpt.build(**{**fields, **kw})


def test_classification_run_keeps_the_summary_keys_and_saves_data_json(tmp_path, tiny_bert_dir, tiny_tables):
    exp = _build(tiny_tables.classification("c.csv", labels=("low", "high"), kinds="pq"), tiny_bert_dir, target="label")
    assert exp.config.task == "data" and exp.config.target_column == "label" and exp.config.target is None
    summary = fpt.fit(exp, out=tmp_path / "run", progress=False)
    for key in ("val_accuracy", "test_accuracy", "val_accuracy_last", "test_accuracy_last", "train_accuracy"):
        assert key in summary
    assert summary["baselines"]["chance"] == 0.5
    rows = [json.loads(r) for r in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert set(rows[0]) == {"step", "wall_seconds", "train_loss", "train_accuracy", "val_accuracy", "val_loss"}
    # data.json alone re-tokenises raw rows exactly as training did, and maps class indices back to labels
    fitted = json.loads((tmp_path / "run" / "data.json").read_text())
    prep = Preprocessing.from_json(fitted)
    cols = read_columns(tmp_path / "c.csv")
    x, _ = prep.tokeniser({name: cols[name] for name in prep.features})
    assert prep.features == ["x1", "x2", "kind"] and prep.classes == [["high", "low"]]
    train_x = exp.data.train.data.x
    assert any(torch.allclose(x[i], train_x[0]) for i in range(len(x)))
    assert fpt.predict(exp, x[:5]).shape == (5, 1)


def test_regression_selects_on_validation_r2_and_reports_mae(tmp_path, tiny_bert_dir, tiny_tables):
    exp = _build(tiny_tables.regression("r.csv"), tiny_bert_dir, steps=8)
    assert exp.data.objective.name == "regression" and exp.data.spec.num_classes == 1
    summary = fpt.fit(exp, out=tmp_path / "run", progress=False)
    for key in ("val_r2", "test_r2", "test_mae", "test_mse", "val_r2_last", "test_r2_last", "train_r2"):
        assert isinstance(summary[key], float), key
    assert "val_accuracy" not in summary and "train_mean" in summary["baselines"]
    assert abs(summary["baselines"]["train_mean"]["test"]["r2"]) < 0.5
    rows = [json.loads(r) for r in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert {"train_r2", "val_r2", "val_mae", "val_mse", "val_loss"} <= set(rows[0])
    best = max(rows, key=lambda r: r["val_r2"])
    assert summary["selected_step"] == best["step"] and summary["val_r2"] == best["val_r2"]
    # predictions come back in the target's own units (standardised targets inverted)
    test = exp.data.eval_sets["test"]
    pred = fpt.predict(exp, test.x)
    truth = test.y * torch.tensor(exp.data.objective.scale) + torch.tensor(exp.data.objective.mean)
    assert pred.shape == truth.shape and abs(float((pred - truth).abs().mean()) - summary["test_mae"]) < 1e-3
    assert json.loads((tmp_path / "run" / "data.json").read_text())["objective"]["objective"] == "regression"


def test_regression_metrics_match_sklearn():
    from sklearn.metrics import r2_score

    from fpt.objectives import Regression

    rng = np.random.default_rng(0)
    y, pred = rng.normal(size=(50, 2)), rng.normal(size=(50, 2))
    obj = Regression((3.0, -1.0), (2.0, 0.5))
    sums = obj.tally(torch.tensor(pred[:20]), torch.tensor(y[:20])) + obj.tally(torch.tensor(pred[20:]),
                                                                                 torch.tensor(y[20:]))
    m = obj.summarise(sums)
    assert m["r2"] == pytest.approx(r2_score(y, pred), abs=1e-9)
    assert m["mae"] == pytest.approx(np.mean(np.abs(y - pred).mean(0) * np.array([2.0, 0.5])), abs=1e-9)


def test_cli_train_and_data_on_a_csv(tmp_path, tiny_bert_dir, capsys, tiny_tables):
    path = tiny_tables.classification("c.csv", labels=("low", "high"), kinds="pq")
    assert main(["data", "--data", str(path), "--target", "label"]) == 0
    out = capsys.readouterr().out
    for words in ("modality:   tabular", "objective:  classification", "classes:    label: 2", "splits:",
                  "tokeniser options: --max-categories 50", "model input: 3 tokens of"):
        assert words in out, out
    rc = main(["train", "--data", str(path), "--target", "label", "--body", tiny_bert_dir, "--init", "random",
               "--steps", "4", "--eval-every", "2", "--out", str(tmp_path / "run"), "--quiet"])
    assert rc == 0 and '"test_accuracy"' in capsys.readouterr().out
    assert (tmp_path / "run" / "data.json").exists()
    assert main(["train", "--resume", str(tmp_path / "run"), "--steps", "6", "--quiet"]) == 0


@pytest.mark.slow
def test_breast_cancer_csv_reaches_95_percent(tmp_path, capsys):
    from sklearn.datasets import load_breast_cancer

    load_breast_cancer(as_frame=True).frame.to_csv(tmp_path / "bc.csv", index=False)
    start = time.perf_counter()
    # The default command but for --baselines fast: fit=auto's choice (k-fold over its candidates) and the chosen fit
    # are the defaults', and the classic models are fitted beside it; the controls that fit=auto's closed-form winner
    # adds by default (random body, no language model: two more closed-form fits, ~2/3 of the command's CPU) are not
    # asserted here (tests/test_baselines.py runs them) and change nothing in the run's own figures.
    rc = main(["train", "--data", str(tmp_path / "bc.csv"), "--target", "target", "--out", str(tmp_path / "run"),
               "--baselines", "fast", "--quiet"])
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    print(f"breast cancer: test accuracy {summary['test_accuracy']:.4f} at step {summary['selected_step']}, "
          f"{summary['steps']} steps, {time.perf_counter() - start:.0f} s")
    # The acceptance target is 95% (95.6% with this command: docs/results/data/breast-cancer-idle); the assert
    # keeps one point of room for float summation order across thread counts, so CI does not hinge on the last
    # test example.
    assert rc == 0 and summary["test_accuracy"] >= 0.94

"""Hangs (issue 39): the classic baselines have a budget. 10,000 classes hung the default baselines for minutes: a
model whose size rule says it would take too long is skipped before it starts, and a grid stops at the first point
past the time budget; a note says what was skipped."""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from fpt import baselines


def _data(n: int, classes: int, features: int = 2, modality: str = "tabular", seed: int = 0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    x = rng.normal(size=(n, features)).astype(np.float32) + y[:, None] % 3
    sets = {"train": (x, y), "val": (x[: n // 4], y[: n // 4]), "test": (x[: n // 4], y[: n // 4])}
    data = SimpleNamespace(objective=SimpleNamespace(name="classification"),
                           train=SimpleNamespace(data=SimpleNamespace(y=torch.as_tensor(y)[:, None])))
    return data, (modality, sets)


def test_ten_thousand_classes_skip_the_slow_models_at_once(monkeypatch):
    data, feats = _data(20_000, 10_000)
    monkeypatch.setattr(baselines, "features", lambda d: feats)
    import sklearn.ensemble  # noqa: F401 (imported before the clock starts: the rule, not the import, is timed)
    import sklearn.linear_model  # noqa: F401

    started = time.perf_counter()
    result = baselines.fit_models(data)
    assert time.perf_counter() - started < 5
    assert result["models"] == {}
    skipped = [n for n in result["notes"] if "skipped" in n and "budget" in n]
    assert any(n.startswith("logistic regression skipped") for n in skipped)
    assert any(n.startswith("gradient boosting skipped") for n in skipped)
    assert "examples x classes is 200,000,000" in skipped[0]


@pytest.mark.parametrize("name", ["logistic regression", "gradient boosting", "ridge regression", "1-NN Euclidean"])
def test_small_data_is_within_every_budget(name):
    _, (_, sets) = _data(40, 2)
    assert baselines.over_budget(name, sets, classify=True) is None


def test_a_grid_stops_at_the_time_budget_and_says_so(monkeypatch):
    data, feats = _data(40, 2)
    monkeypatch.setattr(baselines, "features", lambda d: feats)
    monkeypatch.setattr(baselines, "BUDGET_SECONDS", 0.0)
    result = baselines.fit_models(data)
    assert result["models"]["logistic regression"]["chosen"] == {"C": baselines.C_GRID[0]}  # the first point only
    assert any(f"{len(baselines.C_GRID) - 1} of {len(baselines.C_GRID)} grid points skipped" in n for n in result["notes"])


@pytest.mark.parametrize(("name", "shape"), [("1-NN Euclidean", (200_000, 1, 200)), ("MiniRocket", (100_000, 3, 500)),
                                             ("ridge regression", (10_000_000, 1_000))])
def test_each_models_size_rule_skips_before_fitting(name, shape):
    x = np.zeros((2, *shape[1:]), dtype=np.float32)  # the rule reads the sizes; a stand-in of the real count
    sets = {"train": (np.broadcast_to(x[:1], shape), np.zeros(shape[0])), "val": (x, np.zeros(2)),
            "test": (x, np.zeros(2))}
    if name == "1-NN Euclidean":
        sets["val"] = (np.broadcast_to(x[:1], shape), np.zeros(shape[0]))
    note = baselines.over_budget(name, sets, classify=name != "ridge regression")
    assert note is not None and note.startswith(f"{name} skipped") and "--baselines none" in note

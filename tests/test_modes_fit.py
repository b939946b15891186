"""The Python entry points choose own data's fit as fpt train --data does (fpt.settings.train_fit): fpt.build
(fpt.modes.build) and fpt.train_run given fields; the choice's record in exp.fit_choice and the run's selection.json."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import fpt
import fpt.select
from fpt.config import RunConfig
from fpt.select import AUTO
from fpt.settings import train_fit

SMALL = {"init": "random", "device": "cpu", "cf_members": 1}


def _frame(n: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"x1": rng.normal(size=n) + 3 * (np.arange(n) % 2), "x2": rng.normal(size=n),
                         "label": np.array(["a", "b"])[np.arange(n) % 2]})


@pytest.fixture
def budget(monkeypatch):
    """choose_fit with gradient training's time budget set (0: never compared; inf: always), so that which
    candidates are compared does not depend on how fast this machine measures the closed-form forward pass."""
    real = fpt.select.choose_fit

    def set_budget(seconds: float) -> None:
        monkeypatch.setattr(fpt.select, "choose_fit", lambda config, folds=None, progress=None: real(
            config, folds, progress, choice=replace(AUTO, gradient_budget_s=seconds)))

    return set_budget


def test_python_given_fields_resolve_the_fit_as_the_command_line_does():
    assert train_fit({"data": "x.csv", "body": "minilm", "cf_members": 3}) == "auto"
    assert train_fit({"data": "x.csv", "steps": 300}) is None and train_fit({"data": "x.csv", "freeze": "none"}) is None
    assert train_fit({"data": "x.csv", "fit": "gradient"}) is None
    assert train_fit({"data": "x.csv", "fit": "auto", "steps": 4}) == "auto"
    assert train_fit({"data": "x.csv", "folds": 5, "fold": 0}) is None  # one fold's run is a run of its own


def test_build_on_a_dataframe_chooses_its_fit_and_fit_writes_the_record(tmp_path, tiny_bert_dir, budget):
    budget(0.0)  # gradient training estimated over budget: left out, with a note
    exp = fpt.build(data=_frame(), target="label", body=tiny_bert_dir, **SMALL)
    record = exp.fit_choice
    assert exp.config.fit == "closed-form" and record["auto"] and record["protocol"] == "k-fold"
    assert record["candidates"] == [{"fit": "closed-form"}] and record["winner_fields"] == {"fit": "closed-form"}
    folds = record["folds"]
    assert folds >= 2 and len(record["val_accuracy"][0]) == folds  # a figure per fold
    assert record["mean_val_accuracy"][0] == pytest.approx(np.mean(record["val_accuracy"][0]))
    assert "fit=gradient not compared" in record["notes"][0]
    # fpt.build's caller: fpt.train_run's choose and fpt.build's fit, not fpt train's --choose and --fit
    assert record["notes"][0].endswith("compare it with fpt.train_run(config, out, choose=['fit=closed-form', "
                                       "'fit=gradient']), or train it with fit='gradient'"), record["notes"][0]
    summary = fpt.fit(exp, out=tmp_path / "run", progress=False)
    assert json.loads((tmp_path / "run" / "selection.json").read_text()) == json.loads(json.dumps(record))
    assert summary["selection"]["auto"] and summary["selection"]["winner_fields"] == {"fit": "closed-form"}
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["selection"] == summary["selection"]
    assert "fit: closed-form" in (tmp_path / "run" / "config.yaml").read_text()
    assert fpt.load(tmp_path / "run").predict(_frame().drop(columns="label").head(3)).shape == (3,)


def test_build_compares_both_fits_fold_by_fold_when_gradient_training_is_in_budget(tmp_path, tiny_bert_dir, budget):
    budget(float("inf"))
    path = tmp_path / "t.csv"
    _frame().to_csv(path, index=False)
    exp = fpt.build(data=str(path), body=tiny_bert_dir, fit="auto", steps=4, eval_every=2, **SMALL)
    record = exp.fit_choice
    assert record["candidates"] == [{"fit": "closed-form"}, {"fit": "gradient"}] and not record["notes"]
    assert [len(row) for row in record["val_accuracy"]] == [record["folds"]] * 2
    means = record["mean_val_accuracy"]
    assert record["winner"] == (1 if means[1] > means[0] else 0)  # the better mean; a tie: the closed-form fit
    assert exp.config.fit == record["winner_fields"]["fit"]


def test_build_keeps_gradient_training_where_the_fields_ask_for_it(tiny_bert_dir, monkeypatch):
    monkeypatch.setattr(fpt.select, "choose_fit", lambda *a, **k: pytest.fail("no choice was asked for"))
    for fields in ({"steps": 4}, {"fit": "gradient"}, {"preset": "paper"}):
        exp = fpt.build(data=_frame(), target="label", body=tiny_bert_dir, **SMALL, **fields)
        assert exp.config.fit == "gradient" and exp.fit_choice is None, fields
    config = RunConfig(data="unused.csv", body=tiny_bert_dir, **SMALL)  # a RunConfig: its own fit
    assert fpt.build(config, data=_frame(), target_column="label").config.fit == "gradient"
    assert fpt.build(task="bit-xor", body=tiny_bert_dir, init="random", device="cpu").fit_choice is None


def test_train_run_given_fields_chooses_and_shows_the_controls(tmp_path, tiny_bert_dir, budget):
    budget(0.0)
    path = tmp_path / "t.csv"
    _frame().to_csv(path, index=False)
    lines: list[str] = []
    summary = fpt.train_run({"data": str(path), "body": tiny_bert_dir, **SMALL}, tmp_path / "run", say=lines.append)
    assert summary["selection"]["auto"] and (tmp_path / "run" / "selection.json").exists()
    assert any(line.startswith("fit=auto 1/1 fit=closed-form") for line in lines)
    verdict = summary["baselines_models"]["language_model"]  # the controls ran by default, as on the command line
    assert verdict["line"].startswith("did the language model help")
    # a RunConfig is run as it is (here: gradient training, no choice)
    config = RunConfig(data=str(path), body=tiny_bert_dir, steps=2, eval_every=2, baselines="none", **SMALL)
    assert "selection" not in fpt.train_run(config, tmp_path / "plain", say=None)


def test_fit_of_a_pipeline_built_auto_config_still_refuses(tmp_path, tiny_bert_dir):
    from fpt.errors import ConfigError
    from fpt.pipeline import build

    exp = build(data=_frame(), target="label", body=tiny_bert_dir, fit="auto", **SMALL)  # the primitive: no choice
    with pytest.raises(ConfigError, match="fpt.build"):
        fpt.fit(exp, progress=False)

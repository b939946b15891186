"""fit=auto (fpt.select.choose_fit, fpt train --data's default): the closed-form fit against gradient training."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from fpt.cli import main
from fpt.config import RunConfig
from fpt.select import AUTO, choose_fit


def _csv(path: Path, n: int = 40) -> Path:
    rng = np.random.default_rng(0)
    rows = ["x1,x2,label"] + [f"{rng.normal() + 3 * (i % 2):.3f},{rng.normal():.3f},{'ab'[i % 2]}" for i in range(n)]
    path.write_text("\n".join(rows) + "\n")
    return path


def _config(path, body, **kw):
    return RunConfig(data=str(path), body=body, init="random", fit="auto", steps=4, eval_every=2, batch_size=8,
                     device="cpu", cf_members=1, **kw)


def test_small_data_is_compared_by_k_fold_and_the_winner_recorded(tmp_path, tiny_bert_dir, capsys):
    out = tmp_path / "run"
    assert main(["train", "--data", str(_csv(tmp_path / "c.csv")), "--body", tiny_bert_dir, "--init", "random",
                 "--steps", "4", "--eval-every", "2", "--cf-members", "1", "--folds", "3", "--device", "cpu",
                 "--fit", "auto", "--out", str(out), "--quiet"]) == 0
    record = json.loads((out / "selection.json").read_text())
    assert record["auto"] and record["protocol"] == "k-fold" and record["folds"] == 3
    assert record["candidates"] == [{"fit": "closed-form"}, {"fit": "gradient"}]
    assert all(len(row) == 3 for row in record["val_accuracy"])  # every candidate's figure on each fold
    summary = json.loads((out / "summary.json").read_text())
    winner = record["candidates"][record["winner"]]["fit"]
    assert summary["selection"]["auto"] and summary["selection"]["winner_fields"] == {"fit": winner}
    config = (out / "config.yaml").read_text()
    assert f"fit: {winner}" in config
    printed = capsys.readouterr().out
    assert "fit=auto 1/2 fit=closed-form" in printed and "<- chosen" in printed


def test_large_data_is_compared_on_validation(tmp_path, tiny_bert_dir):
    choice = choose_fit(_config(_csv(tmp_path / "c.csv"), tiny_bert_dir), choice=replace(AUTO, cv_max=10))
    assert choice.protocol == "validation" and choice.selection.folds == 1
    assert [len(row) for row in choice.selection.scores] == [1, 1]
    assert choice.config.fit in ("closed-form", "gradient")


def test_gradient_beyond_the_budget_is_not_compared_and_says_so(tmp_path, tiny_bert_dir):
    choice = choose_fit(_config(_csv(tmp_path / "c.csv"), tiny_bert_dir), 3,
                        choice=replace(AUTO, gradient_budget_s=0.0))
    assert choice.selection.candidates == [{"fit": "closed-form"}] and choice.config.fit == "closed-form"
    assert "not compared" in choice.notes[0] and choice.notes[0].endswith(
        "compare it with --choose 'fit=closed-form' --choose 'fit=gradient', or train it with --fit gradient")
    assert choice.experiment is not None  # the closed-form winner, its features already read


def test_own_data_defaults_to_auto_unless_gradient_training_is_configured():
    from fpt.cli import parser
    from fpt.cli._args import given_fields
    from fpt.settings import train_fit

    top = parser()

    def fit_of(*argv):
        args = top.parse_args(["train", "--data", "x.csv", *argv])
        return train_fit(given_fields(args), bool(args.refit or args.choose or args.resume or args.fold is not None))

    assert fit_of() == "auto" and fit_of("--cf-members", "5") == "auto"
    assert fit_of("--fit", "auto", "--steps", "9") == "auto"
    assert fit_of("--steps", "300") is None and fit_of("--lr", "1e-4") is None and fit_of("--refit") is None
    assert fit_of("--fit", "closed-form") is None and fit_of("--choose", "readout=last") is None


def test_data_with_its_own_validation_split_is_compared_on_it(tmp_path, tiny_bert_dir):
    root = tmp_path / "d"
    root.mkdir()
    for name, n in (("train", 30), ("val", 10), ("test", 10)):
        _csv(root / f"{name}.csv", n)
    choice = choose_fit(_config(root, tiny_bert_dir), choice=replace(AUTO, gradient_budget_s=0.0))
    assert choice.protocol == "validation" and "its own validation split" in choice.notes[0]


def test_a_k_fold_comparison_stops_after_a_first_fold_that_runs_past_the_budget(tmp_path, tiny_bert_dir, monkeypatch):
    import fpt.select

    monkeypatch.setattr(fpt.select, "_fold", _counted(fpt.select._fold))
    # the estimate lets it in (a budget of 1,000 s); the first fold's own time does not (past 1e-6 x the budget)
    choice = choose_fit(_config(_csv(tmp_path / "c.csv"), tiny_bert_dir), 3,
                        choice=replace(AUTO, gradient_budget_s=1000.0, overrun=1e-6))
    assert choice.selection.candidates == [{"fit": "closed-form"}] and choice.config.fit == "closed-form"
    assert "the first fold took" in choice.notes[0] and "all folds would take about" in choice.notes[0]
    assert fpt.select._fold.calls == 1  # stopped after the first fold, not after all three
    assert choice.seconds["fit=gradient"] > 0


def _counted(real):
    def fold(config):
        fold.calls += 1
        return real(config)

    fold.calls = 0
    return fold


def test_a_comparison_by_validation_reads_no_fold_figures(tmp_path, tiny_bert_dir, monkeypatch):
    import fpt.closed_form

    seen = []
    real = fpt.closed_form.fold_scores
    monkeypatch.setattr(fpt.closed_form, "fold_scores", lambda *a, **k: seen.append(1) or real(*a, **k))
    # gradient training compared (an unlimited budget), so the closed-form fit is scored on validation
    choice = choose_fit(_config(_csv(tmp_path / "c.csv"), tiny_bert_dir), choice=replace(AUTO, cv_max=10,
                                                                                         gradient_budget_s=math.inf))
    assert choice.protocol == "validation" and not seen  # the figure is validation's: no folds solved beside it
    assert choice.selection.scores[0][0] is not None


def test_the_closed_form_fit_alone_on_validation_fits_no_head_for_the_choice(tmp_path, tiny_bert_dir, monkeypatch):
    """Nothing to compare it with: the closed-form fit is chosen without its head being fitted on train alone (the
    run fits it on train + validation); the run it gives is the one a choice that scored it would give."""
    import fpt.closed_form
    from fpt.train import fit

    data = _csv(tmp_path / "c.csv")
    alone = replace(AUTO, cv_max=10, gradient_budget_s=0.0)
    solved = []
    real = fpt.closed_form.solve
    monkeypatch.setattr(fpt.closed_form, "solve", lambda *a, **k: solved.append(k) or real(*a, **k))
    choice = choose_fit(_config(data, tiny_bert_dir), choice=alone)
    assert not solved and choice.config.fit == "closed-form" and choice.protocol == "validation"
    assert choice.selection.candidates == [{"fit": "closed-form"}] and choice.selection.scores == [[None]]
    assert "not compared" in choice.notes[0] and "not scored on the validation split" in choice.notes[1]
    summary = fit(choice.experiment, out=None, progress=False)
    assert solved == [{"progress": False}]  # the run's own fit, on train + validation: the only head fitted
    # the same run as after a choice that scored the closed-form fit on validation first
    scored = replace(AUTO, cv_max=10, gradient_budget_s=math.inf, candidates=({"fit": "closed-form"},
                                                                              {"fit": "closed-form", "seed": 0}))
    before = choose_fit(_config(data, tiny_bert_dir), choice=scored)
    assert before.selection.scores[0][0] is not None and before.experiment is not None
    again = fit(before.experiment, out=None, progress=False)
    for key in ("val_accuracy", "test_accuracy"):
        assert summary[key] == again[key]
    assert summary["closed_form"]["fold_scores"] == again["closed_form"]["fold_scores"]
    assert summary["closed_form"]["alpha"] == again["closed_form"]["alpha"]


def test_the_gradient_estimate_is_timed_training_steps_scaled_to_the_runs(tmp_path, tiny_bert_dir, monkeypatch):
    import time

    import fpt.select
    import fpt.train

    real = fpt.train.train_step
    calls = []

    def slow(*args, **kwargs):
        calls.append(1)
        time.sleep(0.05)
        return real(*args, **kwargs)

    monkeypatch.setattr(fpt.train, "train_step", slow)
    config = replace(_config(_csv(tmp_path / "c.csv"), tiny_bert_dir), fit="gradient")  # steps=4, eval_every=2
    estimate = fpt.select._gradient_seconds(config, pool=40, runs=3)
    assert len(calls) == 1 + fpt.select.PROBE_STEPS  # a warm-up, then the timed steps
    assert estimate >= 3 * 4 * 0.05  # 3 runs of 4 steps of at least 0.05 s each
    calls.clear()  # a projection FAR_PAST times past the budget after the first timed step ends the timing there
    assert fpt.select._gradient_seconds(config, pool=40, runs=3, past=0.01) >= 3 * 4 * 0.05
    assert len(calls) == 2

"""Seed ensembles (fpt.ensemble, RunConfig.ensemble, fpt.predictor.EnsemblePredictor, fpt train ensemble=N)."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

import fpt
import fpt.ensemble as ensemble
import fpt.select as select
from fpt.cli import main
from fpt.config import RunConfig, from_dict
from fpt.errors import ConfigError
from fpt.objectives import CLASSIFICATION, Regression
from fpt.predictor import EnsemblePredictor, combine


def _csv(path: Path, n: int = 48, regression: bool = False) -> Path:
    """Two classes the first feature separates (regression: a target linear in it)."""
    rng = np.random.default_rng(0)
    rows = ["x1,x2,label"]
    for i in range(n):
        x1 = rng.normal(scale=0.3) + 2 * (i % 2)
        label = f"{3 * x1 + rng.normal(scale=0.1):.3f}" if regression else "ab"[i % 2]
        rows.append(f"{x1:.3f},{rng.normal():.3f},{label}")
    path.write_text("\n".join(rows) + "\n")
    return path


def _common(path: Path, body: str, steps: str = "20", eval_every: str = "10") -> list[str]:
    return ["train", "--data", str(path), "--body", body, "--init", "random", "--steps", steps, "--batch-size", "8",
            "--eval-every", eval_every, "--device", "cpu", "--baselines", "none", "--quiet", "--lr", "0.02"]


def test_combine_averages_probabilities_for_classes_and_outputs_for_regression():
    a = torch.tensor([[[2.0, 0.0, -1.0]]])
    b = torch.tensor([[[-1.0, 1.0, 0.5]]])
    logits = combine([a, b], CLASSIFICATION)
    mean = (a.softmax(-1) + b.softmax(-1)) / 2
    assert torch.allclose(logits.softmax(-1), mean, atol=1e-6)
    assert torch.allclose(logits.exp(), mean, atol=1e-6)  # log of the mean probability: its loss is the ensemble's NLL
    masked = torch.tensor([[[1.0, float("-inf"), 0.0]]])
    assert combine([masked, masked], CLASSIFICATION)[0, 0, 1] == float("-inf")  # a slot every member masks stays out
    regression = Regression(mean=(0.0,), scale=(1.0,))
    assert torch.equal(combine([torch.tensor([[1.0]]), torch.tensor([[4.0]])], regression), torch.tensor([[2.5]]))


def test_member_seeds_start_at_the_runs_seed():
    assert ensemble.member_seeds(7, 3) == [7, 8, 9]
    with pytest.raises(ConfigError, match="ensemble=0"):
        ensemble.member_seeds(0, 0)


def test_ensemble_field_is_checked_and_fit_refuses_to_train_one_model_for_n(tmp_path, tiny_gpt2_dir):
    path = _csv(tmp_path / "d.csv")
    with pytest.raises(ConfigError, match="'ensemble'=0 must be >= 1"):
        RunConfig(data=str(path), ensemble=0)
    with pytest.raises(ConfigError, match="apply only to your own dataset"):
        RunConfig(ensemble=3)  # a paper task
    exp = fpt.build(data=str(path), body=tiny_gpt2_dir, init="random", steps=2, device="cpu", ensemble=2,
                    baselines="none")
    with pytest.raises(ConfigError, match=r"ensemble=2 trains 2 models: train it with fpt.train_run\(config, out\)"):
        fpt.fit(exp, progress=False)


@pytest.mark.parametrize("regression", [False, True])
def test_fpt_train_ensemble_trains_the_seeds_and_scores_their_averaged_predictions(tmp_path, tiny_gpt2_dir, capsys,
                                                                                   regression):
    path = _csv(tmp_path / "d.csv", regression=regression)
    out = tmp_path / "ens"
    loud = [a for a in _common(path, tiny_gpt2_dir) if a != "--quiet"]  # the members' lines are progress
    assert main([*loud, "--out", str(out), "--seed", "3", "--ensemble", "2", "--log-every-seconds", "0"]) == 0
    printed = capsys.readouterr().out
    assert "ensemble: member 2/2 (seed 4)" in printed and '"ensemble_of": 2' in printed
    members = [out / "members" / "seed3", out / "members" / "seed4"]
    assert [fpt.Run(m).config().seed for m in members] == [3, 4]
    assert all(fpt.Run(m).config().ensemble == 1 for m in members)
    assert json.loads((out / "ensemble.json").read_text())["members"] == ["members/seed3", "members/seed4"]
    summary = json.loads((out / "summary.json").read_text())
    metric = "r2" if regression else "accuracy"
    assert summary["ensemble"]["seeds"] == [3, 4] and summary["ensemble"]["size"] == 2
    assert [r["seed"] for r in summary["ensemble"]["members"]] == [3, 4]
    # the summary's figures are those of the members' averaged predictions on the same held-out sets
    exps = [fpt.Run(m).experiment() for m in members]
    assert summary[f"test_{metric}"] == pytest.approx(ensemble.evaluate(exps, ["test"])[f"test_{metric}"])
    test = exps[0].data.eval_sets["test"]
    outs = [ensemble.member_outputs(e, "test") for e in exps]
    if regression:
        pred = (outs[0] + outs[1]).reshape(test.y.shape) / 2
        sse = float(((pred - test.y) ** 2).sum())
        total = float(((test.y - test.y.mean()) ** 2).sum())
        assert summary["test_r2"] == pytest.approx(1 - sse / total, abs=1e-5)
    else:
        proba = (outs[0].softmax(-1) + outs[1].softmax(-1)) / 2
        expected = float((proba.argmax(-1).reshape(-1) == test.y.reshape(-1)).float().mean())
        assert summary["test_accuracy"] == pytest.approx(expected)
        assert summary["test_loss"] == pytest.approx(float(-proba.log().reshape(-1, 2)[
            torch.arange(test.y.numel()), test.y.reshape(-1)].mean()), abs=1e-5)
    # fpt.load of the directory predicts with the ensemble; every Predictor method goes through it
    model = fpt.load(out)
    assert isinstance(model, EnsemblePredictor) and len(model.members) == 2 and "Ensemble of 2 seeds" in repr(model)
    rows = path.read_text().splitlines()
    new = tmp_path / "new.csv"
    new.write_text("\n".join(rows[:11]) + "\n")
    one, two = (fpt.load(m) for m in members)
    if regression:
        assert np.allclose(model.predict(new), (one.predict(new) + two.predict(new)) / 2, atol=1e-5)
    else:
        proba = model.predict_proba(new)
        assert np.allclose(proba, (one.predict_proba(new) + two.predict_proba(new)) / 2, atol=1e-6)
        assert list(model.predict(new)) == [["a", "b"][i] for i in proba.argmax(-1)]
        assert 0 <= model.score(new)["accuracy"] <= 1
    with pytest.raises(fpt.errors.RunError, match=r"is a seed ensemble .*give a member"):
        fpt.Run(out).export(tmp_path / "export")


def test_an_ensemble_continues_where_it_stopped_and_is_never_overwritten(tmp_path, tiny_gpt2_dir, capsys,
                                                                        monkeypatch):
    path = _csv(tmp_path / "d.csv")
    out = tmp_path / "ens"
    common = [*_common(path, tiny_gpt2_dir), "--out", str(out), "--ensemble", "2"]
    # the first member finished in an earlier, stopped attempt: it is read, not trained again (its config as fpt
    # train resolves it: series_norm from the fast preset)
    first = from_dict(RunConfig, {"data": str(path), "body": tiny_gpt2_dir, "init": "random", "steps": 20,
                                  "batch_size": 8, "eval_every": 10, "device": "cpu", "baselines": "none", "lr": 0.02,
                                  "series_norm": "global"})
    fpt.fit(fpt.build(first), out=ensemble.member_dir(out, 0), progress=False)
    before = (ensemble.member_dir(out, 0) / "summary.json").read_text()
    trained = []
    import fpt.train as train

    original = train.fit

    def counting(exp, **kw):
        trained.append(exp.config.seed)
        return original(exp, **kw)

    monkeypatch.setattr(train, "fit", counting)
    assert main(common) == 0
    assert trained == [1]
    assert (ensemble.member_dir(out, 0) / "summary.json").read_text() == before
    capsys.readouterr()
    assert main(common) == 2  # a finished ensemble is refused, not overwritten
    assert "already holds an ensemble" in capsys.readouterr().err


def test_members_must_be_seeds_of_one_configuration_on_one_split(tmp_path, tiny_gpt2_dir):
    path = _csv(tmp_path / "d.csv")
    fields = {"data": str(path), "body": tiny_gpt2_dir, "init": "random", "steps": 4, "batch_size": 8,
              "eval_every": 2, "device": "cpu", "baselines": "none"}
    a = fpt.build(**fields)
    b = fpt.build(**{**fields, "seed": 1})
    ensemble.check_members([a, b])  # seeds differ: fine
    with pytest.raises(ConfigError, match=r"b: lr=0\.5, but a has 0\.001; an ensemble's members differ only in their seed"):
        ensemble.check_members([a, fpt.build(**{**fields, "lr": 0.5})], ["a", "b"])
    other = fpt.build(**{**fields, "split_seed": 5})
    with pytest.raises(ConfigError, match="split_seed=5"):
        ensemble.check_members([a, other], ["a", "b"])
    moved = dataclasses.replace(other, config=dataclasses.replace(other.config, split_seed=0))
    with pytest.raises(ConfigError, match="must share their data split"):
        ensemble.check_members([a, moved], ["a", "b"])


def test_cross_validation_chooses_an_ensemble_like_any_other_option(tmp_path, tiny_gpt2_dir):
    path = _csv(tmp_path / "d.csv")
    config = from_dict(RunConfig, {"data": str(path), "body": tiny_gpt2_dir, "init": "random", "steps": 20,
                                   "batch_size": 8, "eval_every": 10, "device": "cpu", "baselines": "none",
                                   "lr": 0.02})
    chosen = select.cross_validate(config, [{"ensemble": 1}, {"ensemble": 2}], folds=2)
    assert chosen.candidates == [{"ensemble": 1}, {"ensemble": 2}]
    assert all(isinstance(s, int) for s in chosen.steps[0]) and all(len(s) == 2 for s in chosen.steps[1])
    assert all(v is not None and 0 <= v <= 1 for row in chosen.scores for v in row)
    assert all(v is not None and math.isfinite(v) for row in chosen.losses for v in row)


@pytest.mark.parametrize("regression", [False, True])
def test_sklearn_estimators_average_their_members(tiny_gpt2_dir, regression):
    from fpt.sklearn import FPTClassifier, FPTRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = 3 * X[:, 0] if regression else (X[:, 0] > 0).astype(int)
    kind = FPTRegressor if regression else FPTClassifier
    args = {"body": tiny_gpt2_dir, "init": "random", "steps": 10, "eval_every": 5, "device": "cpu", "lr": 0.02,
            "seed": 2}
    both = kind(**args, ensemble=2).fit(X, y)
    assert [m.config.seed for m in both.members_] == [2, 3] and len(both.summary_["members"]) == 2
    first, second = copy.copy(both), copy.copy(both)
    first.members_, second.members_ = both.members_[:1], both.members_[1:]
    one = kind(**args).fit(X, y)  # the first member is the single model of the same seed and split
    method = "predict" if regression else "predict_proba"
    assert np.allclose(getattr(first, method)(X), getattr(one, method)(X), atol=1e-6)
    assert np.allclose(getattr(both, method)(X), (getattr(first, method)(X) + getattr(second, method)(X)) / 2,
                       atol=1e-5)
    assert not np.allclose(getattr(first, method)(X), getattr(second, method)(X))  # the seeds made two models
    with pytest.raises(ConfigError, match="'ensemble'=0 must be >= 1"):
        kind(**args, ensemble=0).fit(X, y)


def test_an_ensemble_of_targets_with_different_class_counts_scores_the_mean_its_predictions_take(tmp_path,
                                                                                                tiny_gpt2_dir):
    """Targets of 2 and 3 classes share a 3-slot head. fpt.ensemble averaged each member's softmax over all 3 slots,
    the predictor over the slots each target has: with member heads of bias [0, 2, 10] and [1, 0, -10] for the
    2-class target, the summary's figures were of 'p' on every row while fpt.load(run).predict said 'q'."""
    rng = np.random.default_rng(0)
    rows = ["x1,x2,t1,t2"] + [f"{rng.normal():.3f},{rng.normal():.3f},{'pq'[i % 4 != 0]},{'rsu'[i % 3]}"
                              for i in range(48)]
    path = tmp_path / "d.csv"
    path.write_text("\n".join(rows) + "\n")
    out = tmp_path / "ens"
    assert main([*_common(path, tiny_gpt2_dir, steps="2", eval_every="2"), "--target", "t1,t2",
                 "--ensemble", "2", "--out", str(out)]) == 0
    members = [out / "members" / "seed0", out / "members" / "seed1"]
    exps = [fpt.Run(m).experiment() for m in members]
    model = fpt.load(out)
    for bias, exp, member in zip(([0, 2, 10], [1, 0, -10]), exps, model.members, strict=True):
        for head in (exp.model.head, member.model.head):  # every logit its bias: t1's, then t2's zeros
            with torch.no_grad():
                head.weight.zero_()
                head.bias.copy_(torch.tensor([*bias, 0.0, 0.0, 0.0]))
    test = exps[0].data.eval_sets["test"]
    truth = [["pq"[int(a)], "rsu"[int(b)]] for a, b in test.y.tolist()]
    # the mean of the members' probabilities over t1's two classes: [0.425, 0.575], so 'q'; t2's first class, 'r'
    assert (model.predict(test.x) == [["q", "r"]] * len(truth)).all()
    expected = float(np.mean(np.array(truth) == [["q", "r"]] * len(truth)))
    assert ensemble.evaluate(exps, ["test"])["test_accuracy"] == pytest.approx(expected)  # was the accuracy of 'p'

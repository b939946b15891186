"""The closed-form fit (fpt.closed_form): the head against scikit-learn's, the run directory, predict, export."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

import fpt
from fpt.closed_form import fit_head, fold_scores, read_features
from fpt.feature_map import DEFAULTS
from fpt.rundir import METRICS
from fpt.tracking import summary_scalars


def _three_classes(tables):
    return tables.classification("c.csv", labels=("a", "b", "c"), kinds="pqr")


def _build(path, body, **kw):
    return fpt.build(data=str(path), body=body, init="random", fit="closed-form", device="cpu", **kw)


@pytest.mark.parametrize("classes", [2, 3])
def test_ridge_head_with_standardisation_folded_is_sklearns(classes):
    from sklearn.linear_model import RidgeClassifierCV
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(1)
    x = rng.normal(size=(40, 12)) * rng.uniform(0.1, 10, size=12) + 5
    y = rng.integers(0, classes, size=40)
    w, b, info = fit_head(x, y[:, None], True, classes, replace(DEFAULTS, standardise=True), seed=0)
    scaler = StandardScaler().fit(x)
    reference = RidgeClassifierCV(alphas=DEFAULTS.alphas).fit(scaler.transform(x), y)
    assert info["alpha"] == reference.alpha_ and info["cv"] == "leave-one-out"
    ours = x @ w.T + b
    want = reference.decision_function(scaler.transform(x))
    if classes == 2:  # ours scores both classes (+-1 coding): class 1's column is sklearn's decision
        np.testing.assert_allclose(ours[:, 1], want, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_allclose(ours, want, rtol=1e-5, atol=1e-5)
    assert (ours.argmax(1) == reference.predict(scaler.transform(x))).all()


def test_logistic_head_gives_sklearns_probabilities():
    from sklearn.linear_model import LogisticRegressionCV
    from sklearn.model_selection import StratifiedKFold
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(2)
    x = rng.normal(size=(45, 6))
    y = (x[:, 0] + 0.5 * rng.normal(size=45) > 0).astype(int) + (x[:, 1] > 1)
    design = replace(DEFAULTS, head="logistic", standardise=True)
    w, b, info = fit_head(x, y[:, None], True, 3, design, seed=0)
    scaler = StandardScaler().fit(x)
    k = min(design.folds, int(np.bincount(y).min()))
    reference = LogisticRegressionCV(Cs=list(design.cs), cv=StratifiedKFold(k, shuffle=True, random_state=0),
                                     max_iter=2000, scoring="accuracy").fit(scaler.transform(x), y)
    proba = torch.softmax(torch.from_numpy(x @ w.T + b), -1).numpy()
    present = list(reference.classes_)
    np.testing.assert_allclose(proba[:, present], reference.predict_proba(scaler.transform(x)), atol=1e-5)
    assert proba[:, [c for c in range(3) if c not in present]].max(initial=0) < 1e-6  # a class never seen
    assert info["head"] == "logistic" and 0 <= info["cv_score"] <= 1


def test_regression_head_recovers_a_linear_target():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(50, 4))
    y = (2 * x[:, 0] - x[:, 2])[:, None]
    w, b, info = fit_head(x, y, False, 1, DEFAULTS, seed=0)
    assert np.abs(x @ w.T + b - y).max() < 0.05 and info["cv_score"] > 0.99
    scores = fold_scores(x, y, False, 1, DEFAULTS, seed=0)
    assert len(scores) == DEFAULTS.folds and min(scores) > 0.99


def test_one_example_per_class_fits_by_leave_one_out_and_has_no_fold_figures():
    """A fold of PigCVP's --choose holds one series per class: no stratified fold can be made (scikit-learn raised
    ValueError there), so the ridge head is fitted with no fold figures, and the logistic head, whose penalty only
    k-fold chooses, says what to use instead."""
    from fpt.errors import ConfigError

    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(12, 5)), np.arange(12)[:, None]
    assert fold_scores(x, y, True, 12, DEFAULTS, seed=0) == []
    w, _, info = fit_head(x, y, True, 12, DEFAULTS, seed=0)
    assert w.shape == (12, 5) and info["head"] == "ridge"
    with pytest.raises(ConfigError, match="cf_head=ridge"):
        fit_head(x, y, True, 12, replace(DEFAULTS, head="logistic"), seed=0)
    two = np.r_[y, y]  # one class with a pair is enough for two stratified folds
    assert len(fold_scores(np.r_[x, x], np.r_[two[:12], [[0]] * 12], True, 12, DEFAULTS, seed=0)) == 2


def test_many_examples_score_their_folds_at_the_full_fits_penalty(monkeypatch):
    from sklearn.linear_model import Ridge

    import fpt.closed_form

    rng = np.random.default_rng(4)
    x = rng.normal(size=(60, 8))
    y = (x[:, :1] + 0.3 * rng.normal(size=(60, 1)) > 0).astype(np.int64)
    design = replace(DEFAULTS, alphas=(0.01, 10.0, 1e4), standardise=False)  # raw features, as Ridge below reads
    _, _, info = fit_head(x, y, True, 2, design, seed=0)
    searched = fold_scores(x, y, True, 2, design, seed=0, chosen=info)  # 60 examples: each fold searches
    monkeypatch.setattr(fpt.closed_form, "SEARCH_PER_FOLD_BELOW", 50)
    fixed = fold_scores(x, y, True, 2, design, seed=0, chosen=info)
    want = []
    for train, val in fpt.closed_form.folds_of(y, True, design.folds, 0):
        ridge = Ridge(alpha=info["alpha"]).fit(x[train], np.where(y[train] == [[0, 1]], 1.0, -1.0))
        want.append(float((ridge.predict(x[val]).argmax(1) == y[val, 0]).mean()))
    assert fixed == want and len(fixed) == design.folds
    alphas = []
    real = fpt.closed_form.fit_head
    monkeypatch.setattr(fpt.closed_form, "fit_head", lambda *a, **k: alphas.append(k.get("fixed")) or real(*a, **k))
    fold_scores(x, y, True, 2, design, seed=0, chosen=info)
    assert alphas == []  # no fold searched, nor fitted afresh: solved from the examples' Gram matrix
    monkeypatch.setattr(fpt.closed_form, "SEARCH_PER_FOLD_BELOW", 60)  # from the threshold on, not above it: the
    assert fold_scores(x, y, True, 2, design, seed=0, chosen=info) == want  # controls' 2,000 rows reuse the penalty
    monkeypatch.setattr(fpt.closed_form, "SEARCH_PER_FOLD_BELOW", 61)
    alphas.clear()
    assert fold_scores(x, y, True, 2, design, seed=0, chosen=info) == searched and alphas == [None] * design.folds


@pytest.mark.parametrize("classify", [True, False])
def test_fold_figures_at_a_fixed_penalty_are_each_folds_own_fit(classify):
    import fpt.closed_form

    rng = np.random.default_rng(5)
    x = rng.normal(size=(120, 9)) * rng.uniform(0.1, 10, size=9) + rng.normal(size=9) * 4
    x[:, 3] = 2.5  # a constant column: left unscaled, as fit_head leaves it
    score = x[:, 0] - x[:, -1] + 0.5 * rng.normal(size=120)
    y = (np.digitize(score, np.quantile(score, [1 / 3, 2 / 3])) if classify else score)[:, None]
    chosen = {"head": "ridge", "alpha": 3.0, "input_scale": 10.0}  # the last 2 columns (the tokens) scaled
    folds = fpt.closed_form.folds_of(y, classify, 5, 0)
    got = fpt.closed_form._fixed_fold_scores(x, y, classify, 3, DEFAULTS, 2, chosen, folds)
    want = []
    for train, val in folds:
        w, b, _ = fit_head(x[train], y[train], classify, 3, DEFAULTS, 0, 2, fixed=chosen)
        want.append(fpt.closed_form._score(classify, x[val] @ w.T + b, y[val], 3))
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_a_closed_form_run_is_a_normal_run_directory(tmp_path, tiny_bert_dir, tiny_tables):
    exp = _build(_three_classes(tiny_tables), tiny_bert_dir, cf_members=2, cf_blocks="all", cf_poolings="mean,max")
    summary = fpt.fit(exp, out=tmp_path / "run", progress=False)
    assert summary["steps"] == 0 and summary["stopped"] == "closed-form"
    # no step taken: no throughput of 0 examples/s, no batch size (both were logged to trackers as figures)
    assert summary["train_samples_per_second"] is None and summary["global_batch_size"] is None
    assert "summary.train_samples_per_second" not in {f"summary.{k}" for k in summary_scalars(summary)}
    record = summary["closed_form"]
    assert record["fitted_sets"] == ["train", "val"] and record["val_figure"] == "leave-one-out"
    assert summary["val_accuracy"] == record["cv_score"] and len(record["fold_scores"]) == DEFAULTS.folds
    spec = exp.data.spec  # members x blocks x (mean, max) x width, and the tokens themselves
    assert record["features"] == 2 * 2 * 2 * 32 + spec.seq_len * spec.token_dim
    rows = (tmp_path / "run" / METRICS).read_text().splitlines()
    assert len(rows) == 1 and json.loads(rows[0])["step"] == 0
    saved = fpt.Run(tmp_path / "run").config()
    assert (saved.fit, saved.cf_members, saved.cf_poolings) == ("closed-form", 2, "mean,max")
    assert (saved.cf_blocks, saved.cf_standardise) == ("all", DEFAULTS.standardise)

    # predict: the saved model's probabilities are the fitted head's over the features
    model = fpt.load(tmp_path / "run")
    test = exp.data.eval_sets["test"]
    feats = read_features(exp, test)
    want = feats.astype(np.float64) @ exp.model.head.weight.detach().double().numpy().T \
        + exp.model.head.bias.detach().double().numpy()
    np.testing.assert_allclose(model.logits(test.x)[:, 0], want, rtol=1e-4, atol=1e-4)
    assert model.score(str(tmp_path / "c.csv"))["accuracy"] > 0.5
    # a ridge head's class scores are not probabilities: predict_proba says so, predict_file writes them as scores
    from fpt.errors import ConfigError

    with pytest.raises(ConfigError, match="cf_head=ridge.*not probabilities.*cf_head='logistic'"):  # a Python call
        model.predict_proba(test.x)
    table = model.predict_file(str(tmp_path / "c.csv")).columns
    assert [c for c in table if c.startswith(("proba_", "score_"))] == [f"score_{c}" for c in model.classes[0]]
    np.testing.assert_allclose(np.array([table[f"score_{c}"] for c in model.classes[0]]).T,
                               model.logits(str(tmp_path / "c.csv"))[:, 0], rtol=1e-5, atol=1e-5)

    # a finished closed-form run is complete: resuming returns it, a new fit into it is refused
    again = fpt.fit(fpt.build(fpt.Run(tmp_path / "run").config()), out=tmp_path / "run", resume=True, progress=False)
    assert again["test_accuracy"] == summary["test_accuracy"]
    with pytest.raises(FileExistsError, match="already holds a run"):
        fpt.fit(_build(tmp_path / "c.csv", tiny_bert_dir, cf_members=2), out=tmp_path / "run", progress=False)

    # export (the head is one linear layer) and ONNX: the same predictions
    pytest.importorskip("onnxscript")  # fpt[export]
    exported = fpt.Run(tmp_path / "run").export(tmp_path / "export", onnx=True)
    doc = json.loads((exported / "config.json").read_text())
    assert doc["onnx"]["max_abs_diff"] < 1e-4
    np.testing.assert_allclose(fpt.load(exported).logits(test.x), model.logits(test.x), atol=1e-6)
    assert "predict_proba" not in (exported / "README.md").read_text()  # the export's README offers none


def test_regression_through_the_cli_beside_its_baselines(tmp_path, tiny_bert_dir, capsys, tiny_tables):
    from fpt.cli import main

    path = tiny_tables.regression("r.csv")
    assert main(["train", "--data", str(path), "--body", tiny_bert_dir, "--init", "random", "--fit", "closed-form",
                 "--device", "cpu", "--out", str(tmp_path / "run"), "--quiet"]) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["closed_form"]["head"] == "ridge" and summary["test_r2"] > 0.9
    models = summary["baselines_models"]
    assert models["protocol"] == "refit"  # the models learn from train + validation too, as the fit did
    assert "ridge regression" in models["models"]
    # controls by default for a closed-form fit: the same fit on a random body and without a language model, scored
    # on the run's folds, and one line on whether the language model helped
    controls = models["controls"]
    assert set(controls) == {"random body", "no language model"}
    assert all(len(c["fold_scores"]) == len(summary["closed_form"]["fold_scores"]) for c in controls.values())
    verdict = models["language_model"]
    assert set(verdict["controls"]) == set(controls) and 0 <= verdict["controls"]["random body"]["p"] <= 1
    printed = capsys.readouterr().out
    assert f"closed form: {summary['closed_form']['members']} members, ridge" in printed and verdict["line"] in printed
    assert summary["closed_form"]["hop"] == "scale"  # a table's windows side by side
    assert (tmp_path / "run" / "controls" / "random-body" / "summary.json").is_file()


def test_a_fold_run_fits_train_and_scores_its_fold(tmp_path, tiny_bert_dir, tiny_tables):
    exp = _build(_three_classes(tiny_tables), tiny_bert_dir, cf_members=1, folds=3, fold=1)
    summary = fpt.fit(exp, progress=False)
    assert summary["closed_form"]["fitted_sets"] == ["train"]
    assert summary["closed_form"]["val_figure"] == "val" and summary["eval"]["val_loss"] is not None


def test_fit_refuses_auto(tmp_path, tiny_bert_dir, tiny_tables):
    from fpt.errors import ConfigError
    from fpt.pipeline import build

    exp = build(data=str(_three_classes(tiny_tables)), body=tiny_bert_dir, init="random", fit="auto", device="cpu")
    with pytest.raises(ConfigError, match="choose_fit"):
        fpt.fit(exp, progress=False)


def test_the_language_model_line_reads_paired_fold_scores():
    from fpt.baselines import language_model_verdict

    ours = {"closed_form": {"fold_scores": [0.90, 0.92, 0.88, 0.91, 0.93]}}
    low = {"fold_scores": [0.70, 0.71, 0.69, 0.72, 0.70]}
    same = {"fold_scores": [0.91, 0.90, 0.89, 0.92, 0.92]}
    helped = language_model_verdict(ours, {"random body": low, "no language model": low}, "accuracy")
    assert helped["helped"] and helped["line"].startswith("did the language model help on this data? yes")
    assert helped["controls"]["random body"]["p"] < 0.05 and "0.908 ± 0.017" in helped["line"]
    unclear = language_model_verdict(ours, {"random body": low, "no language model": same}, "accuracy")
    assert not unclear["helped"] and not unclear["hurt"] and "not shown" in unclear["line"]
    hurt = language_model_verdict({"closed_form": low}, {"random body": ours["closed_form"]}, "accuracy")
    assert hurt["hurt"] and "no:" in hurt["line"]
    assert language_model_verdict({}, {"random body": low}, "accuracy") is None  # a gradient run: no fold scores
    # PigCVP's two folds: the same difference on both, to rounding (0.1923 - 0.2115 twice): nothing to test
    pig = language_model_verdict({"closed_form": {"fold_scores": [10 / 52, 0.1 + 0.1 / 1.3]}},
                                 {"random body": {"fold_scores": [11 / 52, 0.1 + 0.1 / 1.3 + 1 / 52]}}, "accuracy")
    assert pig["controls"]["random body"]["p"] == 1.0 and not pig["hurt"] and "not shown" in pig["line"]


def test_a_control_above_the_run_is_said_under_holms_correction_over_the_controls():
    """"no: a control is significantly better" claims one of the two controls is: each was tested at 0.05, so the
    chance of a false "no" was nearly doubled. Holm's first step over 2: the smallest p against 0.025."""
    from fpt.baselines import language_model_verdict

    ours = {"closed_form": {"fold_scores": [0.80, 0.82, 0.79, 0.83, 0.81]}}
    above = {"fold_scores": [0.84, 0.83, 0.80, 0.85, 0.86]}  # above the run on every fold by 0.01-0.05
    same = {"fold_scores": list(ours["closed_form"]["fold_scores"])}
    one = language_model_verdict(ours, {"random body": above}, "accuracy")
    p = one["controls"]["random body"]["p"]
    assert 0.025 <= p < 0.05, p  # significant alone, not over two
    assert one["hurt"] and "no:" in one["line"]
    two = language_model_verdict(ours, {"random body": above, "no language model": same}, "accuracy")
    assert not two["hurt"] and "not shown" in two["line"]


def test_holms_second_step_holds_the_other_control_to_the_level():
    """Holm's step-down, not Bonferroni's: once the control the run beats clearly is significant at 0.05 / 2, the
    control above the run is held to 0.05 (it was held to 0.025 as well, and "no" went unsaid)."""
    from fpt.baselines import language_model_verdict

    ours = {"closed_form": {"fold_scores": [0.80, 0.82, 0.79, 0.83, 0.81]}}
    above = {"fold_scores": [0.84, 0.83, 0.80, 0.85, 0.86]}
    below = {"fold_scores": [0.50, 0.53, 0.49, 0.52, 0.515]}
    verdict = language_model_verdict(ours, {"random body": below, "no language model": above}, "accuracy")
    assert verdict["controls"]["random body"]["p"] < 0.025 <= verdict["controls"]["no language model"]["p"] < 0.05
    assert verdict["hurt"] and not verdict["helped"] and "no: a control is significantly better" in verdict["line"]


def test_the_sklearn_estimators_fit_in_closed_form(tiny_bert_dir):
    from sklearn.base import clone

    from fpt.sklearn import FPTClassifier, FPTRegressor

    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] > 0, "up", "down")
    clf = FPTClassifier(body=tiny_bert_dir, init="random", device="cpu", fitting="closed-form",
                        options={"cf_members": 1}).fit(X, y)
    assert clf.summary_["closed_form"]["fitted_examples"] == 40  # every example given: no validation carve-out
    assert clf.score(X, y) > 0.9 and not hasattr(clf, "predict_proba")  # ridge: class scores (tests/test_sklearn_fit)
    assert clone(clf).get_params()["fitting"] == "closed-form"
    reg = FPTRegressor(body=tiny_bert_dir, init="random", device="cpu", fitting="closed-form").fit(X, 3 * X[:, 1])
    assert reg.score(X, 3 * X[:, 1]) > 0.95
    with pytest.raises(Exception, match="fitting"):
        FPTClassifier(fitting="closed form").fit(X, y)


def test_a_few_input_columns_beside_many_body_features_are_not_shrunk_with_them():
    rng = np.random.default_rng(5)
    body, tokens = rng.normal(size=(60, 400)), rng.normal(size=(60, 3))
    y = (tokens @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=60))[:, None]
    x = np.concatenate([body, tokens], axis=1)
    design = replace(DEFAULTS, input_scales=(1.0, 10.0, 100.0), penalty_rule="least")  # round 2's search
    w, b, info = fit_head(x, y, False, 1, design, seed=0, inputs=3)
    assert info["input_scale"] > 1 and info["cv_score"] > 0.9
    plain = fit_head(x, y, False, 1, design, seed=0)[2]  # every column weighted alike
    assert info["cv_score"] > plain["cv_score"]
    test_tokens = rng.normal(size=(20, 3))
    pred = np.concatenate([rng.normal(size=(20, 400)), test_tokens], axis=1) @ w.T + b
    assert np.corrcoef(pred[:, 0], test_tokens @ np.array([1.0, -2.0, 0.5]))[0, 1] > 0.9


@pytest.mark.parametrize("seed", [0, 2])
def test_beside_body_features_that_are_noise_the_default_head_is_ridge_on_the_inputs(seed):
    """Round 5 (docs/results/own-data/closed-form/round5): a diabetes-shaped table (300 examples, 10 columns, R² near
    0.6) whose body features are noise: the default search (tokens x1, x10 or x100, penalties to 1e6) shrinks the
    body's features away and scores on new rows as scikit-learn's ridge on the standardised columns does, its grid
    chosen by leave-one-out (own_data's ridge regression grid)."""
    from sklearn.linear_model import RidgeCV
    from sklearn.metrics import r2_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(seed)
    n, new = 300, 2000
    tokens = rng.normal(size=(n + new, 10)) * rng.uniform(0.5, 3.0, size=10)
    coef = rng.normal(size=10)
    y = tokens @ coef + 1.2 * np.linalg.norm(coef) * rng.normal(size=n + new)
    x = np.concatenate([rng.normal(size=(n + new, 1500)), tokens], axis=1)
    w, b, info = fit_head(x[:n], y[:n, None], False, 1, DEFAULTS, seed=0, inputs=10)
    ridge = make_pipeline(StandardScaler(), RidgeCV(alphas=(0.01, 0.1, 1.0, 10.0, 100.0, 1000.0))).fit(tokens[:n], y[:n])
    assert info["alpha"] >= 1e4 and info["input_scale"] == 100.0  # the body at >= 1e4, the tokens at 1e-4 of it
    got, theirs = r2_score(y[n:], x[n:] @ w[0] + b[0]), ridge.score(tokens[n:], y[n:])
    assert 0.5 < theirs and abs(got - theirs) < 0.01


def test_members_kept_by_leave_one_out_zero_the_dropped_members_weights():
    """member_choices: the head also fitted on the first m members (and the tokens); the better by leave-one-out is
    kept, its weights over every column (the dropped members' zeros), as ridge over those columns alone gives them."""
    from fpt.ridge import ridge_loo_scaled

    rng = np.random.default_rng(6)
    signal = rng.normal(size=(60, 1))
    first = signal + 0.1 * rng.normal(size=(60, 4))  # member 0: the signal
    noise = rng.normal(size=(60, 12)) * 3  # members 1-3: noise
    tokens = rng.normal(size=(60, 2))
    x = np.concatenate([first, noise, tokens], 1)
    y = (signal > 0).astype(np.int64)
    design = replace(DEFAULTS, member_choices=(1, 2), standardise=False, input_scales=(1.0,))
    w, b, info = fit_head(x, y, True, 2, design, seed=0, inputs=2, member_widths=[4, 4, 4, 4])
    assert info["members_kept"] == 1 and set(info["members_loo"]) == {"4", "1", "2"}
    assert info["members_loo"]["1"] == max(info["members_loo"].values())
    kept = np.r_[0:4, 16:18]
    alone = ridge_loo_scaled(x[:, kept], np.where(y == [[0, 1]], 1.0, -1.0), design.alphas, (1.0,), 2,
                             design.penalty_rule)[1]
    np.testing.assert_allclose(w[:, kept], alone.coef, rtol=1e-6, atol=1e-9)
    assert not w[:, 4:16].any() and info["alpha"] == alone.alpha
    without = fit_head(x, y, True, 2, replace(design, member_choices=()), seed=0, inputs=2, member_widths=[4] * 4)[2]
    assert "members_kept" not in without  # nothing to choose from: every member, as before
    refit = fit_head(x, y, True, 2, design, seed=0, inputs=2, member_widths=[4] * 4, fixed=info)[0]
    np.testing.assert_allclose(refit, w, rtol=1e-5, atol=1e-8)  # a fold at the chosen members reads the same columns


@pytest.mark.parametrize("classify", [True, False])
def test_a_penalty_searched_on_a_subsample_is_fitted_on_every_example(classify):
    """search_rows: the penalty and the tokens' scale chosen by leave-one-out over a seeded, stratified subsample
    (the standardised columns' rows), the head then the fit at them on every example, its estimate that fit's own
    leave-one-out figure."""
    from fpt.closed_form import subsample
    from fpt.ridge import ridge_loo_scaled

    rng = np.random.default_rng(11)
    body, tokens = rng.normal(size=(150, 40)), rng.normal(size=(150, 3))
    score = tokens @ np.array([1.0, -2.0, 0.5]) + body[:, :2].sum(1) + 0.3 * rng.normal(size=150)
    y = ((score > 0).astype(np.int64) if classify else score)[:, None]
    x = np.concatenate([body, tokens], axis=1)
    design = replace(DEFAULTS, search_rows=60)
    w, b, info = fit_head(x, y, classify, 2 if classify else 1, design, seed=3, inputs=3)
    rows = subsample(y, classify, 60, 3)
    assert info["search"] == {**info["search"], "examples": 60, "of": 150, "seed": 3}
    z = (x - x.mean(0)) / x.std(0)
    targets = np.where(y == [[0, 1]], 1.0, -1.0) if classify else y.astype(float)
    scale, searched = ridge_loo_scaled(z[rows], targets[rows], design.alphas, design.input_scales, 3,
                                       design.penalty_rule, design.loo_guard)
    assert (info["alpha"], info["input_scale"]) == (searched.alpha, scale)
    fixed = {"alpha": info["alpha"], "input_scale": info["input_scale"]}
    np.testing.assert_allclose(w, fit_head(x, y, classify, 2 if classify else 1, DEFAULTS, 3, 3, fixed=fixed)[0],
                               rtol=1e-6, atol=1e-9)
    exact = fit_head(x, y, classify, 2 if classify else 1,
                     replace(DEFAULTS, alphas=(info["alpha"],), input_scales=(info["input_scale"],)), 3, 3)[2]
    assert info["cv_score"] == pytest.approx(exact["cv_score"], rel=1e-9)
    # at or below search_rows: the search over every example, as before
    assert "search" not in fit_head(x[:60], y[:60], classify, 2 if classify else 1, design, 3, 3)[2]


def test_controls_above_the_cap_are_fitted_on_a_paired_subsample(tmp_path, tiny_bert_dir, tiny_tables, monkeypatch):
    from fpt import closed_form
    from fpt.baselines import beside_run, table_rows

    path = tiny_tables.classification("c.csv", n=90, labels=("a", "b", "c"), kinds="pqr")
    monkeypatch.setattr(closed_form, "CONTROLS_UP_TO", 40)
    exp = _build(path, tiny_bert_dir, cf_members=1)  # init=random: the "random body" control is this very fit
    summary = beside_run(exp, fpt.fit(exp, out=tmp_path / "run", progress=False), tmp_path / "run")
    models = summary["baselines_models"]
    sample = models["controls_subsample"]
    fitted = summary["closed_form"]["fitted_examples"]
    assert fitted > 40 and (sample["examples"], sample["of"], sample["seed"]) == (40, fitted, exp.config.split_seed)
    # the run's own fold figures over every fitted example would be read by nothing: not computed, and said so
    assert summary["closed_form"]["fold_scores"] == [] and "40 fitted examples" in summary["closed_form"]["fold_note"]
    rows = closed_form.subsample(closed_form.fitted_targets(exp), True, 40, exp.config.split_seed)
    y = closed_form.fitted_targets(exp)[rows, 0]
    assert len(rows) == 40 and np.bincount(y).min() >= 13  # stratified: each class keeps its third
    for name, where in (("random body", "random-body"), ("no language model", "no-lm")):
        control = json.loads((tmp_path / "run" / "controls" / where / "summary.json").read_text())["closed_form"]
        assert control["fitted_examples"] == 40 and models["controls"][name]["fitted_examples"] == 40
        assert models["controls"][name]["of"] == fitted
    # the run's compared figure: its own features at the same rows, fold by fold (the random-body control, the
    # same model, then scores exactly the same)
    feats = np.concatenate([read_features(exp, exp.data.train.data), read_features(exp, exp.data.eval_sets["val"])])
    from fpt.feature_map import options

    ours = fold_scores(feats[rows], y[:, None], True, 3, options(exp.config), exp.config.split_seed, exp.model.input_features,
                       member_widths=[exp.model.member_width(0)])
    assert sample["fold_scores"] == pytest.approx(ours)
    assert models["controls"]["random body"]["fold_scores"] == pytest.approx(ours)
    verdict = models["language_model"]
    assert verdict["mean"] == pytest.approx(np.mean(ours)) and verdict["examples"] == 40
    assert f"40 of the {fitted} fitted examples" in verdict["line"]
    assert any(r["chosen"].endswith(f"fitted on 40 of {fitted} rows") for r in table_rows(summary))
    # a control that fitted other rows (finished before the subsample, read back on resume) is not paired with them
    from fpt.baselines import language_model_verdict

    stale = {**models["controls"], "no language model": {**models["controls"]["no language model"], "fitted_examples": fitted}}
    assert set(language_model_verdict(summary, stale, "accuracy", sample)["controls"]) == {"random body"}

    # below the cap: every fitted example, no subsample recorded
    monkeypatch.setattr(closed_form, "CONTROLS_UP_TO", 2000)
    below = fpt.fit(_build(path, tiny_bert_dir, cf_members=1), out=None, progress=False)
    assert len(below["closed_form"]["fold_scores"]) == DEFAULTS.folds and "fold_note" not in below["closed_form"]
    again = beside_run(exp, below, None)["baselines_models"]
    assert "controls_subsample" not in again and "fitted_examples" not in again["controls"]["random body"]
    assert again["controls"]["random body"]["fold_scores"] == pytest.approx(below["closed_form"]["fold_scores"])


def test_ppv_pooling_fits_its_thresholds_saves_them_and_predicts_and_exports_alike(tmp_path, tiny_bert_dir, tiny_tables):
    """ROCKET's proportion of positive values: thresholds from the training examples' real positions, saved with the
    head, so a loaded run, its export and its ONNX graph read new inputs as the fit did."""
    from fpt.closed_form import fit_thresholds

    exp = _build(_three_classes(tiny_tables), tiny_bert_dir, cf_members=2, cf_blocks="all", cf_poolings="max,ppv")
    model = exp.model
    q = len(DEFAULTS.ppv_quantiles)
    spec = exp.data.spec
    assert model.num_features == 2 * 2 * (1 + q) * 32 + spec.seq_len * spec.token_dim
    assert all(float(t.detach().abs().sum()) == 0 for t in model.thresholds)  # unfitted until the fit
    summary = fpt.fit(exp, out=tmp_path / "run", progress=False)
    thresholds = [t.detach().clone() for t in model.thresholds]
    assert all(t.shape == (2, q, 32) for t in thresholds)
    assert all(torch.all(t[:, 0] <= t[:, 1]) and torch.all(t[:, 1] <= t[:, 2]) for t in thresholds)  # quartiles
    # each threshold is that unit's quantile over the real positions of the (seeded) training examples read
    train = exp.data.train.data
    assert len(train) < DEFAULTS.ppv_examples  # so every training example's positions are read
    with torch.no_grad():
        h0 = model.body.block(0, model.body.embed(model.input[0](train.x)), None)  # member 0 (scale 1), block 0
    np.testing.assert_allclose(thresholds[0][0].numpy(),
                               np.quantile(h0.reshape(-1, 32).numpy(), DEFAULTS.ppv_quantiles, axis=0), atol=1e-5)
    # the features: per threshold, the share of positions above it
    feats = read_features(exp, train)
    ppv = feats[:, 32:32 + q * 32].reshape(-1, q, 32)  # member 0, block 0: max (32), then ppv (q x 32)
    want = (h0[:, :, None, :] > thresholds[0][0][None, None]).float().mean(1).numpy()
    np.testing.assert_allclose(ppv, want, atol=1e-6)
    fit_thresholds(exp, train, exp.config.split_seed)  # the same examples again (fit=auto's run after its choice)
    assert all(torch.equal(a, b) for a, b in zip(thresholds, model.thresholds, strict=True))
    with torch.no_grad():
        for t in model.thresholds:
            t.zero_()
    fit_thresholds(exp, train, exp.config.split_seed)  # not read again: the batch and seed they were fitted on
    assert all(float(t.detach().abs().sum()) == 0 for t in model.thresholds)
    fit_thresholds(exp, train, exp.config.split_seed + 1)  # another draw of examples: fitted again
    assert all(torch.equal(a, b) for a, b in zip(thresholds, model.thresholds, strict=True))  # all of them drawn
    fit_thresholds(exp, train, exp.config.split_seed)

    loaded = fpt.load(tmp_path / "run")
    test = exp.data.eval_sets["test"]
    logits = read_features(exp, test).astype(np.float64) @ model.head.weight.detach().double().numpy().T \
        + model.head.bias.detach().double().numpy()
    np.testing.assert_allclose(loaded.logits(test.x)[:, 0], logits, rtol=1e-4, atol=1e-4)
    assert summary["test_accuracy"] > 0.5
    pytest.importorskip("onnxscript")  # fpt[export]
    exported = fpt.Run(tmp_path / "run").export(tmp_path / "export", onnx=True)
    assert json.loads((exported / "config.json").read_text())["onnx"]["max_abs_diff"] < 1e-4
    np.testing.assert_allclose(fpt.load(exported).logits(test.x), loaded.logits(test.x), atol=1e-6)


@pytest.mark.parametrize("signal_in", ["max", "ppv"])
def test_the_head_keeps_ppv_columns_only_where_leave_one_out_prefers_them(signal_in):
    """ppv_choice: the ridge head over every column and over the columns without ppv; the better by leave-one-out
    is kept (without ppv first: a tie keeps it), the dropped columns' weights zeros; folds choose afresh."""
    rng = np.random.default_rng(7)
    signal = rng.normal(size=(80, 1))
    carrier = signal + 0.1 * rng.normal(size=(80, 6))
    other = rng.normal(size=(80, 6)) * 3
    maxes, ppv = (carrier, other) if signal_in == "max" else (other, carrier)
    tokens = rng.normal(size=(80, 2))
    x = np.concatenate([maxes[:, :3], ppv[:, :3], maxes[:, 3:], ppv[:, 3:], tokens], 1)  # 2 members: max, ppv each
    without_ppv = np.r_[0:3, 6:9, 12:14]
    y = (signal > 0).astype(np.int64)
    w, b, info = fit_head(x, y, True, 2, DEFAULTS, seed=0, inputs=2, member_widths=[6, 6], without_ppv=without_ppv)
    assert info["ppv_kept"] is (signal_in == "ppv") and set(info["ppv_loo"]) == {"with", "without"}
    if signal_in == "max":
        assert not w[:, np.r_[3:6, 9:12]].any()  # the ppv columns dropped
    forced = fit_head(x, y, True, 2, replace(DEFAULTS, ppv_choice=False), seed=0, inputs=2, member_widths=[6, 6],
                      without_ppv=without_ppv)[2]
    assert "ppv_kept" not in forced  # every column, nothing chosen
    refit = fit_head(x, y, True, 2, DEFAULTS, seed=0, inputs=2, member_widths=[6, 6], without_ppv=without_ppv,
                     fixed=info)[0]
    np.testing.assert_allclose(refit, w, rtol=1e-5, atol=1e-8)  # at the chosen columns and penalty
    scores = fold_scores(x, y, True, 2, DEFAULTS, 0, 2, member_widths=[6, 6], without_ppv=without_ppv)
    assert len(scores) == DEFAULTS.folds and min(scores) > 0.8


def test_the_printed_closed_form_line_says_whether_the_head_kept_ppv():
    from fpt.baselines import _closed_form_words

    record = {"head": "ridge", "alpha": 0.1, "val_figure": "leave-one-out"}
    assert _closed_form_words(record) == "closed form: ridge alpha=0.1, val: leave-one-out"
    assert _closed_form_words({**record, "ppv_kept": True}) == "closed form: ridge alpha=0.1, ppv kept, val: leave-one-out"
    assert "ppv dropped" in _closed_form_words({**record, "ppv_kept": False})
    assert _closed_form_words({**record, "members": 20, "hop": "one"}) == \
        "closed form: 20 members at every token, ridge alpha=0.1, val: leave-one-out"


def test_a_logistic_head_gives_probabilities_to_predict_proba_and_predict_file(tmp_path, tiny_bert_dir, tiny_tables):
    path = _three_classes(tiny_tables)
    fpt.fit(_build(path, tiny_bert_dir, cf_members=1, cf_head="logistic"), out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    assert model.gives_probabilities
    proba = model.predict_proba(str(path))
    assert np.allclose(proba.sum(axis=1), 1)
    table = model.predict_file(str(path)).columns
    assert [c for c in table if c.startswith(("proba_", "score_"))] == [f"proba_{c}" for c in model.classes[0]]


def test_folds_with_a_one_example_class_are_made_without_a_warning():
    import warnings

    import fpt.closed_form

    y = np.array([0, 0, 0, 1, 1, 1, 2])[:, None]  # class 2 has one fitted example: it can sit in one fold only
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        folds = fpt.closed_form.folds_of(y, True, 2, 0)
    assert len(folds) == 2
    held = np.concatenate([val for _, val in folds])
    assert sorted(held.tolist()) == list(range(7))  # every example held out once
    for _, val in folds:  # stratified: each fold holds out one or two of classes 0 and 1
        assert set(np.bincount(y[val, 0], minlength=3)[:2]) <= {1, 2}


@pytest.mark.parametrize("progress", [True, False])
def test_the_feature_read_shows_a_bar_per_set_on_a_terminal(tiny_tables, tiny_bert_dir, monkeypatch, progress):
    """The one long step of a closed-form fit (minutes on a table of 100,000 rows) printed nothing until it ended;
    gradient training has always shown its bar. A bar per set read, named by the body read, shown on a terminal only
    (tqdm's disable=None) and only when the run shows progress."""
    import tqdm.auto

    bars = []
    real = tqdm.auto.tqdm

    def recording(*args, **kwargs):
        bars.append((kwargs.get("desc"), kwargs.get("disable"), kwargs.get("total")))
        return real(*args, **{**kwargs, "disable": True})

    monkeypatch.setattr(tqdm.auto, "tqdm", recording)
    exp = _build(_three_classes(tiny_tables), tiny_bert_dir, baselines="none")
    fpt.fit(exp, progress=progress)
    sizes = {name: len(batch.y) for name, batch in exp.data.eval_sets.items()}
    if progress:
        assert [(d, t) for d, _, t in bars] == [(f"features {Path(tiny_bert_dir).name}/random {name}", len(exp.data.train.data.y)
                                                 if name == "train" else sizes[name]) for name in ("train", *sizes)]
        assert {disable for _, disable, _ in bars} == {None}
    else:
        assert {disable for _, disable, _ in bars} == {True}


def test_fpt_eval_prints_no_held_out_figure_on_the_examples_the_fit_learnt_from(tmp_path, tiny_bert_dir, tiny_tables,
                                                                               capsys):
    """A closed-form fit learns from train + validation, so `fpt eval` (docs/user-data.md: `fpt train --data bc.csv
    ... # then: fpt eval runs/bc`) cannot call a validation figure held out: it prints val_* as null with a note,
    and the test figures, which it can, as fpt.evaluate gives them."""
    from fpt.cli import main

    exp = _build(_three_classes(tiny_tables), tiny_bert_dir, cf_members=1)
    summary = fpt.fit(exp, out=tmp_path / "run", progress=False)
    assert summary["closed_form"]["fitted_sets"] == ["train", "val"]
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "run")]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["val_accuracy"] is None and printed["val_loss"] is None and "fitted on" in printed["note"]
    assert printed["test_accuracy"] == pytest.approx(fpt.evaluate(exp)["test_accuracy"])
    assert fpt.Run(tmp_path / "run").fitted_sets() == ["val"]

"""fpt.sklearn's ``fitting``: chosen as fpt train --data chooses it when left None (fit=auto, fpt.settings.train_fit),
the choice in ``fit_choice_``; clone and grid search over it; predict_proba where the head gives probabilities."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold

import fpt.select
from fpt.errors import ConfigError
from fpt.select import AUTO
from fpt.sklearn import FPTClassifier, FPTRegressor, NoProbabilities

SMALL = {"init": "random", "device": "cpu", "options": {"cf_members": 1}}


def _data(n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(4)
    X = rng.normal(size=(n, 3))
    return X, np.where(X[:, 0] > 0, "up", "down")


@pytest.fixture
def budget(monkeypatch):
    """choose_fit with gradient training's time budget set (0: never compared; inf: always compared)."""
    real = fpt.select.choose_fit

    def set_budget(seconds: float) -> None:
        monkeypatch.setattr(fpt.select, "choose_fit", lambda config, folds=None, progress=None: real(
            config, folds, progress, choice=replace(AUTO, gradient_budget_s=seconds)))

    return set_budget


def test_left_none_the_fit_is_chosen_and_the_choice_recorded(tiny_bert_dir, budget):
    budget(0.0)
    X, y = _data()
    clf = FPTClassifier(body=tiny_bert_dir, **SMALL).fit(X, y)
    record = clf.fit_choice_
    assert clf.experiment_.config.fit == "closed-form" and record["auto"] and record["protocol"] == "k-fold"
    assert record["candidates"] == [{"fit": "closed-form"}] and len(record["val_accuracy"][0]) == record["folds"]
    assert record["mean_val_accuracy"][0] == pytest.approx(np.mean(record["val_accuracy"][0]))
    assert "fit=gradient not compared" in record["notes"][0]
    assert record["notes"][0].endswith("or train it with fitting='gradient'")  # the estimator's argument, not fit=
    assert clf.score(X, y) > 0.9
    reg = FPTRegressor(body=tiny_bert_dir, **SMALL).fit(X, 3 * X[:, 1])
    assert reg.fit_choice_["metric"] == "r2" and reg.experiment_.config.fit == "closed-form"


def test_both_fits_are_compared_fold_by_fold_within_the_budget(tiny_bert_dir, budget):
    budget(float("inf"))
    X, y = _data()
    clf = FPTClassifier(body=tiny_bert_dir, fitting="auto", steps=4, eval_every=2, **SMALL).fit(X, y)
    record = clf.fit_choice_
    assert record["candidates"] == [{"fit": "closed-form"}, {"fit": "gradient"}]
    assert [len(row) for row in record["val_accuracy"]] == [record["folds"]] * 2
    assert clf.experiment_.config.fit == record["winner_fields"]["fit"]


def test_a_given_fitting_or_a_gradient_argument_makes_no_choice(tiny_bert_dir, monkeypatch):
    monkeypatch.setattr(fpt.select, "choose_fit", lambda *a, **k: pytest.fail("no choice was asked for"))
    X, y = _data()
    clf = FPTClassifier(body=tiny_bert_dir, steps=2, eval_every=2, **SMALL).fit(X, y)  # as fpt train --steps
    assert clf.experiment_.config.fit == "gradient" and clf.fit_choice_ is None
    assert clf.predict_proba(X[:4]).shape == (4, 2)  # a gradient-trained head: softmax probabilities
    clf = FPTClassifier(body=tiny_bert_dir, fitting="closed-form", **SMALL).fit(X, y)
    assert clf.experiment_.config.fit == "closed-form" and clf.fit_choice_ is None
    with pytest.raises(ConfigError, match="fitting='sometimes' is not one of gradient, closed-form, auto"):
        FPTClassifier(fitting="sometimes").fit(X, y)


def test_clone_keeps_fitting_and_refits_to_the_same_choice(tiny_bert_dir, budget):
    budget(0.0)
    X, y = _data()
    clf = FPTClassifier(body=tiny_bert_dir, **SMALL)
    assert clone(clf).get_params() == clf.get_params() and clf.get_params()["fitting"] is None
    first, second = clone(clf).fit(X, y), clone(clf).fit(X, y)
    assert first.fit_choice_["val_accuracy"] == second.fit_choice_["val_accuracy"]
    np.testing.assert_array_equal(first.predict(X), second.predict(X))
    assert clone(first).get_params()["fitting"] is None and not hasattr(clone(first), "fit_choice_")


def test_grid_search_over_fitting(tiny_bert_dir, budget):
    budget(0.0)
    X, y = _data()
    search = GridSearchCV(FPTClassifier(body=tiny_bert_dir, **SMALL),
                          {"fitting": ["closed-form", "auto"]},
                          cv=StratifiedKFold(2, shuffle=True, random_state=0)).fit(X, y)
    assert search.best_params_["fitting"] in ("closed-form", "auto")
    assert len(search.cv_results_["mean_test_score"]) == 2 and min(search.cv_results_["mean_test_score"]) > 0.7


def test_predict_proba_where_the_closed_form_head_gives_probabilities(tiny_bert_dir):
    X, y = _data()
    ridge = FPTClassifier(body=tiny_bert_dir, fitting="closed-form", **SMALL).fit(X, y)
    assert not hasattr(ridge, "predict_proba")  # class scores only, as scikit-learn's RidgeClassifier
    with pytest.raises(NoProbabilities, match=r"cf_head=ridge.*options=\{'cf_head': 'logistic'\}"):
        ridge.predict_proba(X)
    logistic = FPTClassifier(body=tiny_bert_dir, fitting="closed-form",
                             **{**SMALL, "options": {"cf_members": 1, "cf_head": "logistic"}}).fit(X, y)
    proba = logistic.predict_proba(X)
    assert proba.shape == (40, 2) and np.allclose(proba.sum(axis=1), 1)
    np.testing.assert_array_equal(logistic.classes_[proba.argmax(axis=1)], logistic.predict(X))
    assert hasattr(FPTClassifier(), "predict_proba")  # unfitted: offered (using it is scikit-learn's NotFittedError)

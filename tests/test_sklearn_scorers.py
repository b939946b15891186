"""fpt.sklearn's classifier under scikit-learn's own consumers of class scores: the scorers (roc_auc,
average_precision), CalibratedClassifierCV and StackingClassifier find ``predict_proba`` and ``decision_function`` by
name and read a binary problem's positive column from them, as they do for LogisticRegression and RidgeClassifier."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.ensemble import StackingClassifier
from sklearn.metrics import average_precision_score, get_scorer, roc_auc_score

from fpt.sklearn import FPTClassifier, NoProbabilities

GRADIENT = {"init": "random", "device": "cpu", "fitting": "gradient", "steps": 6, "eval_every": 3, "batch_size": 8,
            "options": {"dropout": 0.0}}
RIDGE = {"init": "random", "device": "cpu", "fitting": "closed-form", "options": {"cf_members": 1}}


def _data(classes: int = 2, n: int = 36) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    X = rng.normal(size=(n, 3))
    names = np.array(["ant", "bee", "cat"][:classes])
    return X, names[np.digitize(X[:, 0], np.quantile(X[:, 0], np.linspace(0, 1, classes + 1)[1:-1]))]


def test_binary_scorers_read_the_positive_class_of_predict_proba(tiny_bert_dir):
    """roc_auc and average_precision raised 'y should be a 1d array, got an array of shape (36, 2)': predict_proba
    was a property returning a method named _predict_proba, and scikit-learn picks the positive column only for a
    method named predict_proba."""
    X, y = _data()
    clf = FPTClassifier(body=tiny_bert_dir, **GRADIENT).fit(X, y)
    positive = clf.predict_proba(X)[:, 1]  # classes_ == ["ant", "bee"]: "bee" is scikit-learn's positive class
    assert get_scorer("roc_auc")(clf, X, y) == pytest.approx(roc_auc_score(y == "bee", positive), abs=1e-12)
    ranked = FPTClassifier(body=tiny_bert_dir, **GRADIENT).fit(X, (y == "bee").astype(int))  # its pos_label is 1
    assert get_scorer("average_precision")(ranked, X, y == "bee") == pytest.approx(
        average_precision_score(y == "bee", ranked.predict_proba(X)[:, 1]), abs=1e-12)


def test_calibration_and_stacking_take_the_classifier(tiny_bert_dir):
    """CalibratedClassifierCV raised IndexError (index 1 is out of bounds for axis 1 with size 1) and
    StackingClassifier "The 'method' parameter of cross_val_predict must be ... Got '_predict_proba'"."""
    X, y = _data()
    calibrated = CalibratedClassifierCV(FPTClassifier(body=tiny_bert_dir, **GRADIENT), cv=2).fit(X, y)
    proba = calibrated.predict_proba(X)
    assert proba.shape == (36, 2) and np.allclose(proba.sum(axis=1), 1)
    stacked = StackingClassifier([("fpt", FPTClassifier(body=tiny_bert_dir, **GRADIENT))], cv=2).fit(X, y)
    assert set(stacked.predict(X)) <= {"ant", "bee"}
    # the stack's final estimator read one column per example for two classes: the positive class's probability
    assert stacked.final_estimator_.n_features_in_ == 1


@pytest.mark.parametrize("classes", [2, 3])
def test_decision_function_gives_the_class_scores_as_scikit_learn_lays_them_out(tiny_bert_dir, classes):
    """There was no decision_function: a closed-form fit's ridge head (no predict_proba, as RidgeClassifier) could
    not be scored by roc_auc at all ('FPTClassifier has none of the following attributes: decision_function,
    predict_proba'), nor calibrated."""
    X, y = _data(classes)
    for args in (GRADIENT, RIDGE):
        clf = FPTClassifier(body=tiny_bert_dir, **args).fit(X, y)
        scores = clf.decision_function(X)
        logits = clf._outputs(X).double().numpy()
        if classes == 2:  # the second class's score over the first's: its sign is the prediction
            assert scores.shape == (36,)
            np.testing.assert_allclose(scores, logits[:, 1] - logits[:, 0])
            np.testing.assert_array_equal(clf.classes_[(scores > 0).astype(int)], clf.predict(X))
        else:
            assert scores.shape == (36, 3)
            np.testing.assert_array_equal(clf.classes_[scores.argmax(axis=1)], clf.predict(X))
    ridge = FPTClassifier(body=tiny_bert_dir, **RIDGE).fit(X, y)
    assert not hasattr(ridge, "predict_proba")
    if classes == 2:
        assert get_scorer("roc_auc")(ridge, X, y) == pytest.approx(roc_auc_score(y == "bee", ridge.decision_function(X)))
        proba = CalibratedClassifierCV(ridge, cv=2).fit(X, y).predict_proba(X)  # sigmoid of the ridge scores
        assert proba.shape == (36, 2) and np.allclose(proba.sum(axis=1), 1)


def test_arguments_that_fix_a_ridge_head_offer_no_predict_proba_before_fit():
    """scikit-learn asks hasattr(estimator, "predict_proba") before it fits (check_decision_proba_consistency, once
    decision_function existed, fitted FPTClassifier(fitting="closed-form") and then met NoProbabilities): an unfitted
    estimator whose arguments fix the ridge head offers none, as SVC(probability=False)."""
    assert not hasattr(FPTClassifier(fitting="closed-form"), "predict_proba")
    with pytest.raises(NoProbabilities, match=r"fitting='closed-form' fits in closed form with cf_head=ridge"):
        FPTClassifier(fitting="closed-form").predict_proba(np.zeros((2, 3)))
    assert hasattr(FPTClassifier(fitting="closed-form", options={"cf_head": "logistic"}), "predict_proba")
    assert hasattr(FPTClassifier(), "predict_proba") and hasattr(FPTClassifier(fitting="auto"), "predict_proba")

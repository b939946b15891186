"""fpt.sklearn's estimators fit symbol sequences given as texts, one per example (a list, an array or a Series of
str; with modality='sequence' a column of them too), as fpt reads a table's one text column."""

from __future__ import annotations

import numpy as np
import pytest

from fpt.errors import DataError
from fpt.sklearn import FPTClassifier

RIDGE = {"init": "random", "device": "cpu", "fitting": "closed-form", "options": {"cf_members": 1}}


def _texts(n: int, seed: int) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.array(["purine", "pyrimidine"])[np.arange(n) % 2]
    return ["".join(rng.choice(list("AG") if c == "purine" else list("CT"), 10)) for c in y], y


def test_a_list_of_texts_is_fitted_as_symbol_sequences(tiny_bert_dir):
    """A list of texts was refused by scikit-learn's check ('Expected 2D array, got 1D array instead'), and its advice,
    X.reshape(-1, 1), fitted a table of one categorical column: each whole text a category, every new text unseen."""
    pd = pytest.importorskip("pandas")
    X, y = _texts(40, 0)
    clf = FPTClassifier(body=tiny_bert_dir, **RIDGE).fit(X, y)
    assert clf.preprocessing_.modality == "sequence" and clf.n_features_in_ == 1
    new, truth = _texts(20, 1)  # texts fit never saw: read symbol by symbol
    assert clf.score(new, truth) >= 0.9
    predicted = clf.predict(new)
    for given in (np.array(new), pd.Series(new), np.array(new, dtype=object)[:, None]):
        assert (clf.predict(given) == predicted).all()
    with pytest.raises(DataError, match=r"fitted on texts, one per example; give a list .* not ndarray \(2, 3\)"):
        clf.predict(np.zeros((2, 3)))


def test_a_column_of_texts_is_sequences_under_modality_sequence(tiny_bert_dir):
    """modality='sequence' refused a column of texts: 'arrays of numbers hold tabular, image or timeseries data, not
    sequence'."""
    pd = pytest.importorskip("pandas")
    X, y = _texts(40, 0)
    frame = pd.DataFrame({"dna": X})
    clf = FPTClassifier(body=tiny_bert_dir, modality="sequence", **RIDGE).fit(frame, y)
    assert clf.preprocessing_.modality == "sequence" and list(clf.feature_names_in_) == ["dna"]
    assert (clf.predict(frame) == clf.predict(X)).all()
    with pytest.raises(DataError, match=r"fitted on the one text column 'dna': give X\[\['dna'\]\]"):
        clf.predict(frame.rename(columns={"dna": "rna"}))
    column = FPTClassifier(body=tiny_bert_dir, modality="sequence", **RIDGE).fit(np.array(X)[:, None], y)
    assert column.preprocessing_.modality == "sequence" and (column.predict(X) == clf.predict(X)).all()

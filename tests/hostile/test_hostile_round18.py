"""Round 18 of the hostile-input cases: what round 17 left (object labels refused in scikit-learn's words, an infinite
target in two wordings, an .npz's images named from 1 by a Predictor and from 0 by fpt.build, DataFrames of series
whose series were named by a count or a bare key). Each case failed before its fix (the commit that added it says
how)."""

from __future__ import annotations

import numpy as np
import pytest


def _fast(body: str) -> dict:
    return dict(body=body, init="random", steps=2, eval_every=2, batch_size=8, device="cpu")


def test_object_labels_of_numbers_are_the_classes_a_typed_array_gives(tiny_bert_dir):
    """FPTClassifier.fit of labels in an object array (a mixed CSV column's, a pandas object Series) failed with
    scikit-learn's 'Unknown label type: unknown'; numbers alone are now the classes their typed array gives, score
    reads them too, and object labels of mixed types are refused in one line naming y and the fix."""
    import pandas as pd

    from fpt.errors import DataError
    from fpt.sklearn import FPTClassifier

    X = np.random.default_rng(0).normal(size=(24, 3))
    typed = FPTClassifier(**_fast(tiny_bert_dir)).fit(X, np.array([0.0, 1.0] * 12))
    for y, classes in [(np.array([0.0, 1.0] * 12, dtype=object), np.array([0.0, 1.0])),
                       (pd.Series([0, 1] * 12, dtype=object, name="label"), np.array([0, 1])),
                       (np.array([True, False] * 12, dtype=object), np.array([False, True]))]:
        clf = FPTClassifier(**_fast(tiny_bert_dir)).fit(X, y)
        assert clf.classes_.dtype == classes.dtype and clf.classes_.tolist() == classes.tolist()
        assert clf.predict(X[:4]).dtype == classes.dtype
        assert 0.0 <= clf.score(X, y) <= 1.0
    same = FPTClassifier(**_fast(tiny_bert_dir)).fit(X, np.array([0.0, 1.0] * 12, dtype=object))
    np.testing.assert_array_equal(same.predict_proba(X), typed.predict_proba(X))  # the same fit as the typed labels'
    assert same.score(X, np.array([0.0, 1.0] * 12, dtype=object)) == typed.score(X, np.array([0.0, 1.0] * 12))
    with pytest.raises(DataError) as refused:
        FPTClassifier(**_fast(tiny_bert_dir)).fit(X, np.array([True, 2] * 12, dtype=object))
    assert str(refused.value) == ("FPTClassifier.fit: y holds labels of types bool, int, which are no classes "
                                  "scikit-learn can order; give the labels one type: y.astype(str) for text labels, or "
                                  "y.astype(int) for numbers")
    assert FPTClassifier(**_fast(tiny_bert_dir)).fit(X, np.array(["a", "b"] * 12, dtype=object)).classes_.tolist() \
        == ["a", "b"]


def test_an_infinite_target_is_refused_in_one_wording(tiny_bert_dir, tmp_path):
    """A float y's infinity was 'y is infinite at index 10 (1 of 24 examples); a regression target is a finite
    number: ...', an object or text y's (and fpt.build's arrays', an .npz's) 'y is infinite at index 10; drop or fix
    those examples': one refusal now (fpt.data.base.refuse_infinite_targets)."""
    import fpt
    from fpt.errors import DataError
    from fpt.sklearn import FPTRegressor

    X = np.random.default_rng(0).normal(size=(24, 3))
    y = np.array([0.5] * 10 + [np.inf] + [1.0] * 13)
    fix = " is infinite at index 10 (1 of 24 examples); {} is a finite number: fix those targets or leave those " \
          "examples out of X and y"
    for given in (y, y.astype(object), y.astype(str)):
        with pytest.raises(DataError) as refused:
            FPTRegressor(**_fast(tiny_bert_dir)).fit(X, given)
        assert str(refused.value) == "FPTRegressor.fit: y" + fix.format("a regression target")
    with pytest.raises(DataError) as refused:
        fpt.build(data=(X, y), objective="regression", **_fast(tiny_bert_dir))
    assert str(refused.value) == "data arrays (X, y): y" + fix.format("a target")
    np.savez(tmp_path / "d.npz", X=X, y=np.stack([np.ones(24), y], axis=1))
    with pytest.raises(DataError) as refused:
        fpt.build(data=str(tmp_path / "d.npz"), objective="regression", **_fast(tiny_bert_dir))
    assert str(refused.value) == f"{tmp_path / 'd.npz'} (X, y): y[:, 1]" + fix.format("a target")


def test_an_npz_is_named_as_its_arrays_are_indexed_by_build_and_predict_alike(tiny_bert_dir, tmp_path):
    """Predictor.predict('p.npz') said 'p.npz (X): image 3 has pixels that are NaN or infinite' of X[2], which
    fpt.build names X[2, 0, 1, 1] (an .npz's arrays indexed from 0, as its user types them), and 'image 1 has shape'
    of X[0]; a table's cell is X[2, 1] in both."""
    import fpt
    from fpt.errors import DataError, SchemaError

    rng = np.random.default_rng(0)
    X, y = rng.random((24, 8, 8, 3)).astype(np.float32), np.arange(24) % 2
    np.savez(tmp_path / "d.npz", X=X, y=y)
    fpt.fit(fpt.build(data=str(tmp_path / "d.npz"), **_fast(tiny_bert_dir)), out=tmp_path / "run", progress=False)
    bad = X.copy()
    bad[2, 0, 1, 1] = np.nan
    np.savez(tmp_path / "b.npz", X=bad, y=y)
    with pytest.raises(DataError, match=r"\(X, y\): X\[2, 0, 1, 1\] is NaN"):
        fpt.build(data=str(tmp_path / "b.npz"), **_fast(tiny_bert_dir))
    np.savez(tmp_path / "p.npz", X=bad[:4])
    model = fpt.load(tmp_path / "run")
    with pytest.raises(SchemaError) as refused:
        model.predict(tmp_path / "p.npz")
    assert str(refused.value) == (f"{tmp_path / 'p.npz'} (X): X[2, 0, 1, 1] is NaN (1 of 768 pixel values NaN or "
                                  "infinite); an image has no missing pixels: fill them, or leave those images out")
    np.savez(tmp_path / "s.npz", X_test=np.zeros((2, 9, 9, 3), dtype=np.float32))
    with pytest.raises(SchemaError, match=r"s\.npz \(X_test\): X_test\[0\] has shape \(9, 9, 3\)"):
        model.predict(tmp_path / "s.npz")
    assert model.predict(tmp_path / "d.npz").shape == (24,)


def test_an_npz_table_names_its_cells_as_its_array_is_indexed(tiny_bert_dir, tmp_path):
    import fpt
    from fpt.errors import SchemaError

    X, y = np.random.default_rng(0).normal(size=(24, 3)), np.arange(24) % 2
    np.savez(tmp_path / "d.npz", X=X, y=y)
    fpt.fit(fpt.build(data=str(tmp_path / "d.npz"), **_fast(tiny_bert_dir)), out=tmp_path / "run", progress=False)
    bad = X[:4].copy()
    bad[2, 1] = np.inf
    np.savez(tmp_path / "p.npz", X=bad)
    with pytest.raises(SchemaError) as refused:
        fpt.load(tmp_path / "run").predict(tmp_path / "p.npz")
    assert str(refused.value).startswith(f"{tmp_path / 'p.npz'} (X): X[2, 1]: inf is infinite")


def test_a_dataframe_of_series_names_an_empty_or_doubled_series_as_the_caller_selects_it(tiny_bert_dir):
    """A nested DataFrame's empty cell was 'X: series 2 has no points' (a count from 0, no row, no column), where its
    neighbours say 'X, X.iloc[2]: column 'c' ...'; a multi-index frame's doubled time 'series ('b',) has two rows at
    one time', a tuple the caller never typed: now X.loc['b'] and the time."""
    import pandas as pd

    import fpt
    from fpt.errors import DataError
    from fpt.sklearn import FPTClassifier

    rng = np.random.default_rng(0)
    y = np.arange(24) % 2
    X = pd.DataFrame({"c": [pd.Series(rng.normal(size=5)) for _ in range(24)]})
    X.iloc[2, 0] = pd.Series([], dtype=float)
    fix = " has no points; give every series at least one point, or leave the row out"
    with pytest.raises(DataError) as refused:
        FPTClassifier(**_fast(tiny_bert_dir), modality="timeseries").fit(X, y)
    assert str(refused.value) == "FPTClassifier.fit: X.iloc[2]['c']" + fix
    with pytest.raises(DataError) as refused:
        fpt.build(data=(X, y), **_fast(tiny_bert_dir))
    assert str(refused.value) == "data arrays: X.iloc[2]['c']" + fix
    index = pd.MultiIndex.from_tuples([(k, t) for k in "abc" for t in (0, 1, 1 if k == "b" else 2)],
                                      names=["instance", "time"])
    M = pd.DataFrame({"v": np.arange(9.0)}, index=index)
    with pytest.raises(DataError) as refused:
        FPTClassifier(**_fast(tiny_bert_dir), modality="timeseries").fit(M, np.array([0, 1, 0]))
    assert str(refused.value) == "FPTClassifier.fit: X.loc['b'] has two rows at time 1; give one row per time point"
    two = pd.MultiIndex.from_tuples([(s, 0, t) for s in (0, 1) for t in (0, 0)], names=["store", "item", "day"])
    with pytest.raises(DataError) as refused:
        FPTClassifier(**_fast(tiny_bert_dir), modality="timeseries").fit(pd.DataFrame({"v": np.arange(4.0)}, index=two),
                                                                        np.array([0, 1]))
    assert str(refused.value) == "FPTClassifier.fit: X.loc[(0, 0)] has two rows at time 0; give one row per time point"

"""Round 19 of the hostile-input cases: what round 18 left (a NaN pixel named by its image at predict and by the
pixel at build, a missing target in two wordings, series of a list named 'series 3 of X', a nested DataFrame's name
said twice) and the inputs probed after them. Each case failed before its fix (the commit that added it says how)."""

from __future__ import annotations

import numpy as np
import pytest


def _fast(body: str) -> dict:
    return dict(body=body, init="random", steps=2, eval_every=2, batch_size=8, device="cpu")


def test_a_nan_pixel_is_named_as_the_caller_indexes_it_at_build_and_at_predict(tiny_bert_dir, tmp_path):
    """fpt.build named X[2, 0, 1, 1] where an estimator's and a Predictor's predict of the same images said 'X[2] has
    pixels that are NaN or infinite (1 of 192)': one refusal now (fpt.data.images.refuse_nonfinite_pixels)."""
    import fpt
    from fpt.errors import DataError, SchemaError
    from fpt.sklearn import FPTClassifier

    rng = np.random.default_rng(0)
    X, y = rng.random((24, 8, 8, 3)).astype(np.float32), np.arange(24) % 2
    bad = X[:4].copy()
    bad[2, 0, 1, 1] = np.nan
    bad[3, 1, 1, 1] = -np.inf
    fix = "pixel values NaN or infinite); an image has no missing pixels: fill them, or leave those images out"
    holed = X.copy()
    holed[:4] = bad
    with pytest.raises(DataError) as refused:
        fpt.build(data=(holed, y), **_fast(tiny_bert_dir))
    assert str(refused.value) == f"data arrays (X, y): X[2, 0, 1, 1] is NaN (2 of 4608 {fix}"
    fitted = FPTClassifier(**_fast(tiny_bert_dir)).fit(X, y)
    with pytest.raises(SchemaError) as refused:
        fitted.predict(bad)
    assert str(refused.value) == f"FPTClassifier.predict: X[2, 0, 1, 1] is NaN (2 of 768 {fix}"
    fpt.fit(fpt.build(data=(X, y), **_fast(tiny_bert_dir)), out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    with pytest.raises(SchemaError) as refused:
        model.predict(bad[[3, 2]])
    assert str(refused.value) == f"inputs: inputs[0, 1, 1, 1] is -inf (2 of 384 {fix}"
    with pytest.raises(SchemaError) as refused:  # a list of arrays: the image, then the pixel within it
        model.predict(list(bad))
    assert str(refused.value) == f"inputs: inputs[2][0, 1, 1] is NaN (2 of 768 {fix}"
    assert model.predict(X[:4]).shape == (4,)


def test_a_missing_target_is_refused_in_one_wording(tiny_bert_dir, tmp_path):
    """fpt.build(data=(X, y)) said 'y is NaN at index 22; drop or fill those examples' of a y (None in an object y
    too) that the estimators call 'missing at index 22 (1 of 24 examples: ...)': one refusal now
    (fpt.data.base.refuse_missing_targets), an .npz's y and a y of several outputs (y[:, 1]) too."""
    import fpt
    from fpt.errors import DataError
    from fpt.sklearn import FPTClassifier

    X = np.random.default_rng(0).normal(size=(24, 3))
    fix = (" is missing at index 22 (1 of 24 examples: None, NaN, pandas' NA or empty text); {} cannot be missing: "
           "leave those examples out of X and y")
    for y in (np.array([0.0, 1.0] * 11 + [np.nan, 1.0]), np.array([0, 1] * 11 + [None, 1], dtype=object)):
        with pytest.raises(DataError) as refused:
            fpt.build(data=(X, y), **_fast(tiny_bert_dir))
        assert str(refused.value) == "data arrays (X, y): y" + fix.format("a target")
        with pytest.raises(DataError) as refused:
            FPTClassifier(**_fast(tiny_bert_dir)).fit(X, y)
        assert str(refused.value) == "FPTClassifier.fit: y" + fix.format("a class label")
    import pandas as pd  # a DataFrame X with y apart: 'the DataFrame: target column 'y' is missing on X.iloc[22]'

    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    for y in (pd.array([0, 1] * 11 + [None, 1], dtype="Int64"), pd.Series([0.0, 1.0] * 11 + [np.nan, 1.0], name="l")):
        with pytest.raises(DataError) as refused:
            fpt.build(data=(frame, y), **_fast(tiny_bert_dir))
        assert str(refused.value) == "data=(X, y): y" + fix.format("a target")
    two = np.stack([np.ones(24), np.array([0.0, 1.0] * 11 + [np.nan, 1.0])], axis=1)
    np.savez(tmp_path / "d.npz", X=X, y=two)
    with pytest.raises(DataError) as refused:
        fpt.build(data=str(tmp_path / "d.npz"), objective="regression", **_fast(tiny_bert_dir))
    assert str(refused.value) == f"{tmp_path / 'd.npz'} (X, y): y[:, 1]" + fix.format("a target")


def test_series_are_named_as_the_caller_indexes_them(tiny_bert_dir):
    """A list of series said 'series 3 of X has no values' and 'series 3 of X is infinite at 5', a series of no value
    'series 3 has no values' (from 0, of X[3], of a DataFrame's data.iloc[3] and of a JSON file's row 4 alike), where
    their neighbours name X[3], X.iloc[3] and the row."""
    import pandas as pd

    import fpt
    from fpt.errors import DataError
    from fpt.sklearn import FPTClassifier

    rng = np.random.default_rng(0)
    y = np.arange(24) % 2
    series = [rng.normal(size=(1, 10 + i % 3)) for i in range(24)]

    def refusals(X) -> list[str]:
        said = []
        for call in (lambda: fpt.build(data=(X, y), **_fast(tiny_bert_dir)),
                     lambda: FPTClassifier(**_fast(tiny_bert_dir)).fit(X, y)):
            with pytest.raises(DataError) as refused:
                call()
            said.append(str(refused.value))
        return said

    empty, endless, blank = list(series), list(series), list(series)
    empty[3] = np.zeros((1, 0))
    endless[3] = np.where(np.arange(10) == 5, np.inf, 0.0)[None]
    blank[3] = np.full((1, 10), np.nan)
    assert refusals(empty) == [f"{w}: X[3] has no values (no points); give it values or drop it"
                               for w in ("data arrays (X, y)", "FPTClassifier.fit (X, y)")]
    assert refusals(endless) == [f"{w}: X[3] is infinite at point 5; replace it with a finite number, or NaN where a "
                                 "value is missing" for w in ("data arrays (X, y)", "FPTClassifier.fit (X, y)")]
    assert refusals(blank) == [f"{w}: X[3] has no values (every point missing); give it values or drop it"
                               for w in ("data arrays (X, y)", "FPTClassifier.fit (X, y)")]
    wide = list(series)
    wide[3] = np.zeros((3, 9))
    assert refusals(wide)[0] == "data arrays (X, y): X[3] has 3 channel(s), but X[0] has 1; give every series the " \
        "same channels"
    nested = pd.DataFrame({"c": [pd.Series(s[0, :10]) for s in series]})
    nested.iloc[3, 0] = pd.Series(np.full(10, np.nan))
    assert refusals(nested) == [f"{w}: X.iloc[3] has no values (every point missing); give it values or drop it"
                                for w in ("data arrays (X, y)", "FPTClassifier.fit (X, y)")]
    cells = pd.DataFrame({"s": [list(s[0, :10]) for s in blank], "label": y})
    with pytest.raises(DataError) as refused:
        fpt.build(data=cells, **_fast(tiny_bert_dir))
    assert str(refused.value) == "the DataFrame: data.iloc[3] has no values (every point missing); give it values or drop it"


def test_a_dataframe_of_series_names_the_caller_once(tiny_bert_dir):
    """A nested DataFrame's cell read 'FPTClassifier.fit: X, X.iloc[1]: column 'c' is infinite at point 11' and a
    multi-index frame's series 'FPTClassifier.fit: X: X.loc['b']', X named twice: now the cell as the caller
    selects it, X.iloc[1]['c'], and X.loc['b']; a file's rows keep their words (row 2: column 'c')."""
    import pandas as pd

    import fpt
    from fpt.errors import DataError
    from fpt.sklearn import FPTClassifier

    rng = np.random.default_rng(0)
    y = np.arange(24) % 2
    X = pd.DataFrame({"c": [pd.Series(rng.normal(size=12)) for _ in range(24)]})
    X.iloc[1, 0] = pd.Series(np.r_[rng.normal(size=11), np.inf])
    fix = " is infinite at point 11; replace it with a finite number, or NaN where a value is missing"
    with pytest.raises(DataError) as refused:
        FPTClassifier(**_fast(tiny_bert_dir)).fit(X, y)
    assert str(refused.value) == "FPTClassifier.fit: X.iloc[1]['c']" + fix
    with pytest.raises(DataError) as refused:
        fpt.build(data=(X, y), **_fast(tiny_bert_dir))
    assert str(refused.value) == "data arrays: X.iloc[1]['c']" + fix
    index = pd.MultiIndex.from_tuples([(k, t) for k in "abc" for t in (0, 1, 1 if k == "b" else 2)])
    with pytest.raises(DataError) as refused:
        FPTClassifier(**_fast(tiny_bert_dir)).fit(pd.DataFrame({"v": np.arange(9.0)}, index=index), y[:3])
    assert str(refused.value) == "FPTClassifier.fit: X.loc['b'] has two rows at time 1; give one row per time point"
    with pytest.raises(DataError) as refused:  # a DataFrame's list column, read as fpt.build reads a file's
        fpt.build(data=pd.DataFrame({"c": [list(v) for v in X["c"]], "label": y}), **_fast(tiny_bert_dir))
    assert str(refused.value) == "the DataFrame, data.iloc[1]: column 'c'" + fix


def test_an_estimator_refuses_two_columns_of_one_name_as_build_does(tiny_bert_dir):
    """FPTClassifier.fit of a DataFrame with two columns named 'a' raised narwhals' 'DuplicateError: Expected unique
    column names' from scikit-learn's validate_data, a traceback, where fpt.build refuses it in one line."""
    import pandas as pd

    import fpt
    from fpt.errors import DataError
    from fpt.sklearn import FPTClassifier

    rng = np.random.default_rng(0)
    y = np.arange(24) % 2
    twice = pd.DataFrame(rng.normal(size=(24, 2)), columns=["a", "a"])
    fix = " has 2 columns named 'a' (as text): give every column its own name ({})"
    with pytest.raises(DataError) as refused:
        FPTClassifier(**_fast(tiny_bert_dir)).fit(twice, y)
    assert str(refused.value) == "FPTClassifier.fit: X" + fix.format("X.columns = [...]")
    with pytest.raises(DataError) as refused:
        fpt.build(data=twice.assign(label=y), target="label", **_fast(tiny_bert_dir))
    assert str(refused.value) == "the DataFrame" + fix.format("df.columns = [...]")
    fitted = FPTClassifier(**_fast(tiny_bert_dir)).fit(twice.set_axis(["a", "b"], axis=1), y)
    with pytest.raises(DataError) as refused:
        fitted.predict(twice)
    assert str(refused.value) == "FPTClassifier.predict: X" + fix.format("X.columns = [...]")


def test_a_naive_time_for_a_model_of_zoned_times_is_refused_in_one_wording(tiny_bert_dir, tmp_path):
    """Times without a timezone given to a model trained on times in Europe/Paris: a Predictor's DataFrame (a
    datetime64 column) said 'column 't' holds times without a timezone ...; give them with their zone (pandas:
    s.dt.tz_localize(...))', naming no row, where an estimator's predict of the same frame (read as objects) named
    the row and no pandas fix. One wording now, the row and both fixes."""
    import pandas as pd

    import fpt
    from fpt.errors import SchemaError
    from fpt.sklearn import FPTClassifier

    rng = np.random.default_rng(0)
    y = np.arange(24) % 2
    X = pd.DataFrame({"a": rng.normal(size=24), "t": pd.date_range("2020", periods=24, freq="h", tz="Europe/Paris")})
    naive = X.iloc[:4].assign(t=X.t.iloc[:4].dt.tz_localize(None))
    naive.loc[0, "t"] = pd.NaT  # the first present time is named
    fix = (" holds a time without a timezone ({}: Timestamp('2020-01-01 01:00:00')), but its training dates are times "
           "in Europe/Paris; give each its UTC offset (2024-03-01T14:30+01:00) or zone (pandas: "
           "s.dt.tz_localize('Europe/Paris'))")
    with pytest.raises(SchemaError) as refused:
        FPTClassifier(**_fast(tiny_bert_dir)).fit(X, y).predict(naive)
    assert str(refused.value) == "FPTClassifier.predict: column 't'" + fix.format("X.iloc[1]")
    fpt.fit(fpt.build(data=X.assign(label=y), target="label", **_fast(tiny_bert_dir)), out=tmp_path / "run",
            progress=False)
    model = fpt.load(tmp_path / "run")
    with pytest.raises(SchemaError) as refused:
        model.predict(naive)
    assert str(refused.value) == "inputs: column 't'" + fix.format("inputs.iloc[1]")
    assert model.predict(X.iloc[:4]).shape == (4,)


def test_a_csv_with_a_byte_order_mark_reads_its_header_as_pandas_does(tiny_bert_dir, tmp_path):
    """A CSV saved with a byte-order mark (Excel's 'CSV UTF-8', to_csv(encoding='utf-8-sig')) had its header checked
    with the mark in the first name: a row index's empty name was '\\ufeff', so the index was trained on as a feature
    'Unnamed: 0'; 'label,x1,label' passed as two names (pandas read 'label.1'); a ';' header was shown as
    '\\ufeffx1;x2;label'."""
    import pandas as pd

    import fpt
    from fpt.errors import DataError

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x1": rng.normal(size=24), "x2": rng.normal(size=24), "label": ["a", "b"] * 12})
    frame.to_csv(tmp_path / "indexed.csv", encoding="utf-8-sig")
    exp = fpt.build(data=str(tmp_path / "indexed.csv"), **_fast(tiny_bert_dir))
    assert exp.data.info["features"] == ["x1", "x2"]
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    frame.drop(columns="label").iloc[:3].to_csv(tmp_path / "new.csv", encoding="utf-8-sig")
    assert fpt.load(tmp_path / "run").predict(tmp_path / "new.csv").shape == (3,)
    (tmp_path / "twice.csv").write_text("label,x1,label\n" + "".join(f"a,{i},b\n" for i in range(24)),
                                        encoding="utf-8-sig")
    with pytest.raises(DataError) as refused:
        fpt.build(data=str(tmp_path / "twice.csv"), **_fast(tiny_bert_dir))
    assert str(refused.value) == (f"{tmp_path / 'twice.csv'}: column 'label' appears twice in the header (columns 1 "
                                  "and 3); give each column its own name")
    frame.to_csv(tmp_path / "semi.csv", encoding="utf-8-sig", sep=";", index=False)
    with pytest.raises(DataError) as refused:
        fpt.build(data=str(tmp_path / "semi.csv"), **_fast(tiny_bert_dir))
    assert str(refused.value).startswith(f"{tmp_path / 'semi.csv'}: the header looks like ';'-separated columns "
                                         "('x1;x2;label');")


def test_true_and_false_written_as_text_are_read_at_predict_as_a_files_are(tiny_bert_dir, tmp_path):
    """A CSV's column of True/False is read as 1/0 (Arrow's booleans), in training and at predict; the same values as
    text in a DataFrame (pd.read_csv(dtype=str), X.astype(str)) were refused at predict, "'False' is not a number,
    but the model was trained on numbers in this column", by a Predictor and an estimator alike."""
    import pandas as pd

    import fpt
    from fpt.sklearn import FPTClassifier

    rng = np.random.default_rng(0)
    rows = "".join(f"{rng.normal():.3f},{['True', 'False'][i % 3 == 0]},{'ab'[i % 2]}\n" for i in range(24))
    (tmp_path / "t.csv").write_text("a,flag,label\n" + rows)
    fpt.fit(fpt.build(data=str(tmp_path / "t.csv"), **_fast(tiny_bert_dir)), out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    X = pd.read_csv(tmp_path / "t.csv").drop(columns="label").iloc[:6]
    assert X["flag"].dtype == bool
    spelt = X.assign(flag=["TRUE", "false", "true", "False", "True", "FALSE"])
    flags = X.assign(flag=[True, False, True, False, True, False])
    assert model.tokens(spelt)[0].tolist() == model.tokens(flags)[0].tolist()
    assert model.tokens(X.astype({"flag": str}))[0].tolist() == model.tokens(X)[0].tolist()
    fitted = FPTClassifier(**_fast(tiny_bert_dir)).fit(X, np.arange(6) % 2)
    np.testing.assert_array_equal(fitted.predict_proba(X.astype({"flag": str})), fitted.predict_proba(X))

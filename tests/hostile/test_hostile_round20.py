"""Round 20 of the hostile-input cases: images given at predict in the other layout fpt.build reads, and the inputs
probed after them (texts, series, tables at predict, labels at scoring, huge targets). Each case failed before its
fix (the commit that added it says how)."""

from __future__ import annotations

import numpy as np
import pytest


def _fast(body: str) -> dict:
    return dict(body=body, init="random", steps=2, eval_every=2, batch_size=8, device="cpu")


def test_images_are_predicted_in_either_layout_fpt_build_reads(tiny_bert_dir, tmp_path, capsys):
    """fpt.build trains on (n, H, W, C) and (n, C, H, W) alike, but a model trained on one refused the other at predict:
    a Predictor's and fpt predict's 'X[0] has shape (3, 8, 8), but the model takes (8, 8, 3) or (3, 32, 32) ...', an
    estimator's scikit-learn 'X has 3 features, but FPTClassifier is expecting 8 features as input'. Predict reads
    the layouts build reads, by the same rule (fpt.data.images.image_shape), with the same predictions. fpt predict
    runs in this process (fpt.cli.main): a command of its own imported torch and transformers again (~5 CPU-s), and
    no process boundary is under test here."""
    import fpt
    from fpt.cli import main
    from fpt.errors import SchemaError
    from fpt.sklearn import FPTClassifier

    rng = np.random.default_rng(0)
    X, y = rng.random((24, 8, 8, 3)).astype(np.float32), np.arange(24) % 2
    first = np.moveaxis(X, -1, 1)  # (24, 3, 8, 8)
    fpt.fit(fpt.build(data=(X, y), **_fast(tiny_bert_dir)), out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    assert np.array_equal(model.predict_proba(first[:6]), model.predict_proba(X[:6]))
    assert np.array_equal(model.predict(list(first[:3])), model.predict(X[:3]))
    np.savez(tmp_path / "first.npz", X=first[:4])
    assert main(["predict", str(tmp_path / "run"), str(tmp_path / "first.npz"), "--out", str(tmp_path / "p.csv")]) == 0, \
        capsys.readouterr().err
    import pandas as pd

    written = pd.read_csv(tmp_path / "p.csv")
    assert written.iloc[:, 0].tolist() == model.predict(X[:4]).tolist()
    assert np.allclose(written.iloc[:, 1:].to_numpy(), model.predict_proba(X[:4]), atol=1e-6)
    for trained, other in ((X, first), (first, X)):
        fitted = FPTClassifier(**_fast(tiny_bert_dir)).fit(trained, y)
        assert np.array_equal(fitted.predict_proba(other), fitted.predict_proba(trained))
    bad = first[:4].copy()
    bad[2, 1, 0, 1] = np.nan  # named as the caller indexes it, in the layout given
    with pytest.raises(SchemaError, match=r"^FPTClassifier.predict: X\[2, 1, 0, 1\] is NaN \(1 of 768 "):
        fitted.predict(bad)
    with pytest.raises(SchemaError) as refused:  # an image of another shape names both layouts it takes
        model.predict(X[:2, :6])
    assert str(refused.value) == ("inputs: inputs[0] has shape (6, 8, 3), but the model takes (8, 8, 3) or (3, 8, 8) "
                                  "or (3, 32, 32) or (32, 32, 3) (rgb, 32x32 pixels); resize or convert it")
    with pytest.raises(SchemaError, match=r"one image of shape \(3, 8, 8\) given alone"):
        model.predict(first[0])


@pytest.fixture(scope="module")
def text_run(tiny_bert_dir, tmp_path_factory):
    import pandas as pd

    import fpt

    rng = np.random.default_rng(0)
    texts = ["".join(rng.choice(list("abcd"), size=rng.integers(3, 9))) for _ in range(24)]
    out = tmp_path_factory.mktemp("text") / "run"
    data = pd.DataFrame({"text": texts, "label": np.arange(24) % 2})
    fpt.fit(fpt.build(data=data, target="label", **_fast(tiny_bert_dir)), out=out, progress=False)
    return fpt.load(out)


def test_a_text_column_of_bytes_or_lists_at_predict(text_run):
    """A sequence model's DataFrame column of texts as bytes (no NaN among them) raised numpy's 'ValueError: assignment
    destination is read-only' (pandas' to_numpy under copy-on-write); a cell holding a list of words (a DataFrame's,
    a record's) was read as the text "['a', 'b']" and predicted without a word, and a dict of columns of lists of
    several lengths raised numpy's 'inhomogeneous shape' traceback, where fpt.build refuses a list cell."""
    import pandas as pd

    from fpt.errors import SchemaError

    assert text_run.predict(pd.DataFrame({"text": [b"abc", b"dd"]})).tolist() == text_run.predict(["abc", "dd"]).tolist()
    fix = "not a text; a sequence model reads one text per example: give its words as one text (' '.join(words))"
    for given, cell in ((pd.DataFrame({"text": ["ab", ["a", "b"]]}), "inputs.iloc[1]['text'] is a list"),
                        ([{"text": "ab"}, {"text": ("a", "b")}], "inputs[1]['text'] is a tuple"),
                        ({"text": [["a", "b"]]}, "inputs['text'][0] is a list"),
                        ({"text": ["ab", ["a", "b", "c"], ["d"]]}, "inputs['text'][1] is a list")):
        with pytest.raises(SchemaError) as refused:
            text_run.predict(given)
        assert str(refused.value) == f"inputs: {cell}, {fix}"


def test_series_of_other_channels_and_a_pandas_series_of_lists(tiny_bert_dir, tmp_path):
    """An estimator given series of 3 channels for a model of 2 raised scikit-learn's 'X has 3 features, but
    FPTClassifier is expecting 2 features as input' where a Predictor says the channels in one line; a pandas Series
    of series (a list per example) raised TypeError ('numpy.dtypes.ObjectDType' object is not iterable) in the
    estimators' fit and predict (any Series X did, before scikit-learn's own 2-D refusal), and fpt.build read it as
    'X has shape (24,); a column of one feature per example', where a Predictor reads it as the list of series."""
    import pandas as pd

    import fpt
    from fpt.errors import SchemaError
    from fpt.sklearn import FPTClassifier

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(24, 2, 30)).astype(np.float32), np.arange(24) % 2
    fitted = FPTClassifier(**_fast(tiny_bert_dir)).fit(X, y)
    three = np.concatenate([X[:2], X[:2, :1]], axis=1)
    with pytest.raises(SchemaError) as refused:
        fitted.predict(three)
    assert str(refused.value) == ("FPTClassifier.predict: X[0] has 3 channel(s), but the model was trained on 2; give "
                                  "series of 2 channel(s) in the training order")
    one = X[:, 0].astype(np.float64)
    cells = pd.Series([list(s) for s in one])
    listed = FPTClassifier(**_fast(tiny_bert_dir), modality="timeseries").fit([list(s) for s in one], y)
    celled = FPTClassifier(**_fast(tiny_bert_dir), modality="timeseries").fit(cells, y)
    assert np.array_equal(celled.predict_proba(cells[:5]), listed.predict_proba(one[:5]))
    assert np.array_equal(listed.predict_proba(cells[:5]), listed.predict_proba(one[:5]))
    built = fpt.build(data=(cells, y), **_fast(tiny_bert_dir))
    assert built.config.modality == fpt.build(data=(one, y), **_fast(tiny_bert_dir)).config.modality
    assert built.data.info["X_shape"] == [24, 30]
    with pytest.raises(ValueError, match="Expected a 2-dimensional container"):  # scikit-learn's own, not a TypeError
        FPTClassifier(**_fast(tiny_bert_dir)).fit(pd.Series(np.arange(24.0)), y)


def test_a_huge_regression_target_is_named_by_no_row_of_a_shuffled_split(tiny_bert_dir, tmp_path):
    """A regression target beyond 1e30 was refused naming 'row N' of the training split, after the seeded split had
    shuffled it: fpt.build's y[5] (a CSV's row 6, a DataFrame's iloc[5]) was 'row 4', the estimator's 'row 6'. It is
    now named by its largest value and the count, the same words in every path."""
    import pandas as pd

    import fpt
    from fpt.errors import DataError
    from fpt.sklearn import FPTRegressor

    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(24, 2)), rng.normal(size=24)
    y[5] = 3e30
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "t": y})
    frame.to_csv(tmp_path / "r.csv", index=False)
    said = ("regression target '{}' reaches 3e+30 (1 of 24 values beyond 1e+30); fpt standardises targets in float32, "
            "which overflows beyond 1e+30: rescale the column (e.g. divide it by a power of ten, or take its log)")
    for run, head in ((lambda: fpt.build(data=(X, y), objective="regression", **_fast(tiny_bert_dir)),
                       "data arrays (X, y): " + said.format("y")),
                      (lambda: FPTRegressor(**_fast(tiny_bert_dir)).fit(X, y), "FPTRegressor.fit (X, y): " + said.format("y")),
                      (lambda: fpt.build(data=str(tmp_path / "r.csv"), target="t", **_fast(tiny_bert_dir)),
                       f"{tmp_path / 'r.csv'}: " + said.format("t")),
                      (lambda: fpt.build(data=frame, target="t", **_fast(tiny_bert_dir)), "the DataFrame: " + said.format("t"))):
        with pytest.raises(DataError) as refused:
            run()
        assert str(refused.value) == head


def test_a_missing_text_is_no_text_in_training_as_at_predict(tiny_bert_dir, tmp_path):
    """A missing text (None in a list or DataFrame, an empty CSV cell) reached the sequence tokeniser as NaN, whose
    str() is 'nan': training's vocabulary took 'n' and 'a' from it and trained on the text 'nan', where predict reads
    the same cell as no text (one unknown symbol). A missing text is no text in both now."""
    import pandas as pd

    import fpt
    from fpt.sklearn import FPTClassifier

    texts = [None if i % 4 == 1 else ("bc", "cd")[i % 2] for i in range(24)]
    y = np.arange(24) % 2
    frame = pd.DataFrame({"text": texts, "label": y})
    frame.to_csv(tmp_path / "t.csv", index=False)
    for data, target in (((texts, y), None), (frame, "label"), (str(tmp_path / "t.csv"), "label")):
        fitted = fpt.build(data=data, target=target, **_fast(tiny_bert_dir)).data.fitted
        assert fitted["tokeniser"]["vocab"] == ["c", "b", "d"]
    assert FPTClassifier(**_fast(tiny_bert_dir)).fit(texts, y).preprocessing_.tokeniser.vocab == ["c", "b", "d"]


def test_numbers_and_bytes_among_texts_are_read_as_a_text_column_reads_them(tiny_bert_dir):
    """Texts given as X with a number or bytes among them (a text column read as objects: 12 beside 'ab'; h5py's
    b'ab') raised scikit-learn's 'Expected 2D array, got 1D array instead' in the estimators' fit, their predict
    said 'give a list ... of str, not list', and fpt.build(data=(X, y)) 'X has shape (24,); a column of one feature
    per example is X.reshape(-1, 1)' (which reads each text as a category), where a DataFrame's text column and a
    Predictor's list read 12 as the text '12' and b'ab' as 'ab'. One text per example is read so in every path."""
    import pandas as pd

    import fpt
    from fpt.sklearn import FPTClassifier

    rng = np.random.default_rng(0)
    texts = ["".join(rng.choice(list("abcd"), size=rng.integers(3, 9))) for _ in range(24)]
    y = np.arange(24) % 2
    for given, written in (([12, None, *texts[2:]], ["12", None, *texts[2:]]), ([b"ab", *texts[1:]], ["ab", *texts[1:]])):
        fitted = FPTClassifier(**_fast(tiny_bert_dir)).fit(given, y)
        assert np.array_equal(fitted.predict_proba(given[:6]),
                              FPTClassifier(**_fast(tiny_bert_dir)).fit(written, y).predict_proba(written[:6]))
        tokeniser = fpt.build(data=(given, y), **_fast(tiny_bert_dir)).data.fitted["tokeniser"]
        assert tokeniser == fpt.build(data=(written, y), **_fast(tiny_bert_dir)).data.fitted["tokeniser"]
        framed = fpt.build(data=pd.DataFrame({"text": given, "label": y}), target="label", **_fast(tiny_bert_dir))
        assert framed.data.fitted["tokeniser"] == tokeniser
    assert np.array_equal(fitted.predict_proba([b"abc", 7]), fitted.predict_proba(["abc", "7"]))


def test_labels_of_another_kind_than_the_classes_are_refused_at_score(tiny_bert_dir):
    """An estimator's score of labels written as text for a model of number classes (y read from a CSV as str), or
    numbers for text classes, raised scikit-learn's 'ValueError: Mix of label input types (string and number)',
    naming neither y nor a fix, where a Predictor's score names the label; a label never seen in training is still
    scored as wrong, as scikit-learn's own classifiers score it."""
    import pandas as pd

    from fpt.errors import DataError
    from fpt.sklearn import FPTClassifier

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(24, 3)), np.arange(24) % 2
    fitted = FPTClassifier(**_fast(tiny_bert_dir)).fit(X, y)
    with pytest.raises(DataError) as refused:
        fitted.score(X[:6], pd.Series([str(v) for v in y[:6]]))
    assert str(refused.value) == ("FPTClassifier.score: y.iloc[0] is '0', text, but the model's classes are numbers (0, 1); "
                                  "give the labels as fit's: y.astype(int)")
    named = FPTClassifier(**_fast(tiny_bert_dir)).fit(X, np.array(["hi", "lo"])[y])
    with pytest.raises(DataError) as refused:
        named.score(X[:6], ["hi", "lo", 1, "lo", "hi", "lo"])
    assert str(refused.value) == ("FPTClassifier.score: y[2] is 1, a number, but the model's classes are text ('hi', "
                                  "'lo'); give the labels as fit's: y.astype(str)")
    predicted = fitted.predict(X[:6])
    unseen = np.where(np.arange(6) == 0, 2, predicted)  # label 2 was never a class: one wrong of six
    assert fitted.score(X[:6], unseen) == pytest.approx(5 / 6)


def test_an_estimators_unseen_text_is_named_and_said_as_its_unseen_category_is(tiny_bert_dir):
    """An estimator's text of no symbol fit saw was refused under handle_unknown='error' as 'column 'text', row 2'
    (a file's row, from 1, of X[1]) with 'pass allow_unseen', a setting it has not, and read under the default 'warn'
    without a word, where a table's unseen category is named X.iloc[0]['c'] and warned of."""
    import pandas as pd

    from fpt.errors import SchemaError
    from fpt.sklearn import FPTClassifier, UnseenCategoryWarning

    rng = np.random.default_rng(0)
    texts = ["".join(rng.choice(list("abcd"), size=rng.integers(3, 9))) for _ in range(24)]
    y = np.arange(24) % 2
    fitted = FPTClassifier(**_fast(tiny_bert_dir)).fit(texts, y)
    with pytest.warns(UnseenCategoryWarning) as said:
        warned = fitted.predict_proba(["ab", "xyz", "ab"])
    assert [str(w.message) for w in said] == ["FPTClassifier.predict: 1 of 3 texts hold no symbol fit saw (X[1]: 'xyz'), "
                                              "read as the unknown symbol alone"]
    assert np.array_equal(warned, fitted.set_params(handle_unknown="ignore").predict_proba(["ab", "xyz", "ab"]))
    fitted.set_params(handle_unknown="error")
    fix = ("holds no symbol the model was trained on (1 of 2 texts hold none; it knows {}): fix the text, or set "
           "handle_unknown='warn' (or 'ignore') to read them as the unknown symbol")
    known = ", ".join(repr(s) for s in fitted.preprocessing_.tokeniser.vocab)
    with pytest.raises(SchemaError) as refused:
        fitted.predict(["ab", "xyz"])
    assert str(refused.value) == f"FPTClassifier.predict: X[1]: 'xyz' {fix.format(known)}"
    framed = FPTClassifier(**_fast(tiny_bert_dir), modality="sequence", handle_unknown="error").fit(
        pd.DataFrame({"seq": texts}), y)
    known = ", ".join(repr(s) for s in framed.preprocessing_.tokeniser.vocab)
    with pytest.raises(SchemaError) as refused:
        framed.predict(pd.DataFrame({"seq": ["ab", "xyz"]}))
    assert str(refused.value) == f"FPTClassifier.predict: X.iloc[1]['seq']: 'xyz' {fix.format(known)}"

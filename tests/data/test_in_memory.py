"""In-memory data in the Python API: fpt.build(data=DataFrame / datasets.Dataset / arrays), aeon's 3-D arrays in
the scikit-learn estimators, and Predictor.score(X, y) as scikit-learn's."""

from __future__ import annotations

import numpy as np
import pytest

import fpt
from fpt.errors import DataError

TINY = {"init": "random", "steps": 3, "eval_every": 3, "batch_size": 8, "device": "cpu", "baselines": "none"}


def _frame(n=40):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    y = np.arange(n) % 2
    return pd.DataFrame({"a": rng.normal(size=n) + 2 * y, "b": rng.normal(size=n), "kind": ["p", "q"] * (n // 2),
                         "label": np.where(y == 1, "yes", "no")})


def test_dataframe_then_score_like_sklearn(tmp_path, tiny_bert_dir):
    frame = _frame()
    exp = fpt.build(data=frame, target="label", body=tiny_bert_dir, **TINY)
    assert exp.config.data == "in-memory DataFrame (40, 4)" and exp.data.info["features"] == ["a", "b", "kind"]
    assert sum(exp.data.info["split_sizes"].values()) == 40
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    features = frame.drop(columns=["label"])
    score = model.score(features, frame["label"].to_numpy())
    assert isinstance(score, float) and score == np.mean(model.predict(features) == frame["label"].to_numpy())
    assert model.score(frame)["accuracy"] == pytest.approx(score)  # without y: the metrics of inputs holding targets


def test_datasets_dataset_and_numpy_arrays(tiny_bert_dir):
    datasets = pytest.importorskip("datasets")
    frame = _frame()
    exp = fpt.build(data=datasets.Dataset.from_pandas(frame), target="label", body=tiny_bert_dir, **TINY)
    assert exp.data.spec.num_classes == 2 and exp.config.data.startswith("in-memory Dataset")
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 4)), rng.normal(size=30)
    exp = fpt.build(data=(X, y), body=tiny_bert_dir, **TINY)
    assert exp.data.objective.name == "regression" and exp.data.info["modality"] == "tabular"
    series = rng.normal(size=(30, 2, 16)).astype(np.float32)
    exp = fpt.build(data={"X": series, "y": np.arange(30) % 3}, body=tiny_bert_dir, **TINY)
    assert exp.data.info["modality"] == "timeseries" and exp.data.spec.token_dim % 2 == 0


def test_sklearn_estimators_take_aeon_3d_arrays(tiny_bert_dir):
    from fpt.sklearn import FPTClassifier, FPTRegressor

    rng = np.random.default_rng(0)
    y = np.arange(30) % 2
    X = (rng.normal(size=(30, 2, 12)) + y[:, None, None]).astype(np.float32)  # (n, channels, length), aeon's layout
    clf = FPTClassifier(body=tiny_bert_dir, init="random", steps=3, eval_every=3, device="cpu").fit(X, y)
    assert clf.preprocessing_.modality == "timeseries" and clf.predict(X).shape == (30,)
    assert 0 <= clf.score(X, y) <= 1
    reg = FPTRegressor(body=tiny_bert_dir, init="random", steps=3, eval_every=3, device="cpu").fit(X, y * 1.5)
    assert reg.predict(X[:4]).shape == (4,)


def test_pandas_missing_markers_are_missing_values_not_categories():
    """pd.NA (nullable Int64, boolean, string columns) and pd.NaT read as missing: a nullable integer column with
    gaps is numbers, not the categories "1", "3" and "<NA>"."""
    pd = pytest.importorskip("pandas")
    from fpt.data.base import is_missing
    from fpt.data.memory import from_memory
    from fpt.data.tables import column

    frame = pd.DataFrame({"count": pd.array([1, None, 3, 4], dtype="Int64"),
                          "note": pd.array(["u", None, "v", "u"], dtype="string"),
                          "when": pd.to_datetime(["2021-01-01", None, "2021-01-03", "2021-01-04"]),
                          "y": ["a", "b", "a", "b"]})
    raw = from_memory(frame, "y", "auto", "auto", 32)
    x = raw.splits["train"].x
    counts = column(x["count"], "count")
    assert counts.dtype == np.float64 and np.isnan(counts[1]) and counts[[0, 2, 3]].tolist() == [1.0, 3.0, 4.0]
    assert is_missing(x["note"]).tolist() == [False, True, False, False]
    assert is_missing(np.array([pd.NaT, pd.Timestamp("2021-01-01")], dtype=object)).tolist() == [True, False]


@pytest.mark.parametrize("as_frame", [False, True])
def test_a_scikit_learn_bunch_is_the_table_it_describes(as_frame):
    """fpt.build(data=load_wine()) was 'unknown array DESCR': the loaders' Bunch is read as its table, the target
    its own column, the features under their names."""
    from sklearn.datasets import load_diabetes, load_wine

    from fpt.data.memory import from_memory

    raw = from_memory(load_wine(as_frame=as_frame), None, "auto", "auto", 32)
    assert raw.targets == ["target"] and raw.modality == "tabular"
    assert raw.notes["features"][:2] == ["alcohol", "malic_acid"] and len(raw.notes["features"]) == 13
    assert sorted(set(raw.splits["train"].y[:, 0].tolist())) == [0, 1, 2]
    reg = from_memory(load_diabetes(as_frame=as_frame), None, "auto", "auto", 32)
    assert reg.targets == ["target"] and len(reg.splits["train"].y) == 442
    named = from_memory(load_wine(as_frame=as_frame), "alcohol", "auto", "auto", 32)  # another target, if asked
    assert named.targets == ["alcohol"]


def test_object_columns_of_numbers_are_numbers_and_complex_ones_are_refused():
    """A DataFrame's object column whose values are all numbers (Decimal from a database, Python ints and floats
    beside None, a nullable boolean with gaps) was read by fpt.build as text categories (each amount a category of
    its own), where the scikit-learn estimators read the same column as numbers; a complex column was categories."""
    import decimal

    pd = pytest.importorskip("pandas")
    from fpt.data.memory import from_memory
    from fpt.errors import DataError

    n = 8
    frame = pd.DataFrame({"amount": [decimal.Decimal(f"{i}.25") for i in range(n)],
                          "mixed": np.array([1, 2.5, None, 4] * (n // 4), dtype=object),
                          "flag": pd.array([True, None, False, True] * (n // 4), dtype="boolean"),
                          "kind": np.array([1, "x"] * (n // 2), dtype=object),  # text among numbers: categories
                          "y": ["a", "b"] * (n // 2)})
    x = from_memory(frame, "y", "auto", "auto", 32).splits["train"].x
    assert x["amount"].dtype == np.float64 and x["amount"].tolist() == [i + 0.25 for i in range(n)]
    assert x["mixed"].dtype == np.float64 and np.isnan(x["mixed"][2]) and x["mixed"][1] == 2.5
    assert x["flag"].dtype == np.float64 and np.isnan(x["flag"][1]) and x["flag"][[0, 2]].tolist() == [1.0, 0.0]
    assert x["kind"].dtype == object
    with pytest.raises(DataError, match="'z'.*complex"):
        from_memory(frame.assign(z=np.arange(n) + 1j), "y", "auto", "auto", 32)


@pytest.mark.parametrize("extra", ["a", 1], ids=["same-name", "int-and-text"])
def test_new_inputs_with_two_columns_of_one_name_are_refused(tmp_path, tiny_bert_dir, extra):
    """Training refuses a DataFrame with two columns of one name; predicting read one as a (n, 2) column (numpy's
    'could not broadcast') or, for 1 and "1", kept whichever came last without a word."""
    pd = pytest.importorskip("pandas")
    from fpt.errors import SchemaError

    frame = _frame().rename(columns={"b": "1"})
    exp = fpt.build(data=frame, target="label", body=tiny_bert_dir, **{**TINY, "fit": "closed-form"})
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    inputs = frame.drop(columns=["label"])
    clash = pd.concat([inputs, inputs[["a"]].rename(columns={"a": extra}) * 100], axis=1)
    with pytest.raises(SchemaError, match=f"2 columns named {str(extra)!r}"):
        model.predict(clash)
    with pytest.raises(SchemaError, match="2 columns named '1'"):  # a dict's keys, read as text
        model.predict({**{c: inputs[c].to_numpy() for c in inputs}, 1: inputs["a"].to_numpy()})


def test_a_structured_array_is_a_table_and_a_polars_lazyframe_is_refused_naming_collect(tmp_path, tiny_bert_dir):
    """A NumPy record array (DataFrame.to_records, numpy.genfromtxt(names=True)) holds named columns: fpt.build
    refused it (data=recarray) and predict read it as one column of (n,) records ("shape (40,); a table model takes
    (n, 3) values"). A polars LazyFrame is a query, not rows: predict said "shape ()", the estimators scikit-learn's
    "Expected 2D array, got scalar array"."""
    pl = pytest.importorskip("polars")
    from fpt.errors import DataError
    from fpt.sklearn import FPTClassifier

    frame = _frame()
    exp = fpt.build(data=frame.to_records(index=False), target="label", body=tiny_bert_dir,
                    **{**TINY, "fit": "closed-form"})
    assert exp.data.info["features"] == ["a", "b", "kind"]
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    inputs = frame.drop(columns=["label"])
    assert model.predict(inputs.to_records(index=False)).tolist() == model.predict(inputs).tolist()
    lazy = pl.from_pandas(inputs).lazy()
    with pytest.raises(DataError, match=r"LazyFrame.*\.collect\(\)"):
        model.predict(lazy)
    with pytest.raises(DataError, match=r"LazyFrame.*\.collect\(\)"):
        fpt.build(data=pl.from_pandas(frame).lazy(), target="label", body=tiny_bert_dir, **TINY)
    with pytest.raises(DataError, match=r"LazyFrame.*\.collect\(\)"):
        FPTClassifier(body=tiny_bert_dir, fitting="closed-form", device="cpu").fit(lazy, frame["label"])


def test_a_scipy_sparse_matrix_is_refused_in_one_line_without_densifying(tmp_path, tiny_bert_dir):
    """fpt.build(data=(csr, y)) and predict(csr) said "X has shape ()" / "shape ()" (numpy's 0-d array of the matrix
    object); now the error names the sparse matrix and the fix, and nothing is densified (1e9 columns here)."""
    sparse = pytest.importorskip("scipy.sparse")
    from fpt.errors import DataError

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 3)), np.arange(30) % 2
    huge = sparse.csr_matrix((np.ones(30), np.arange(30), np.arange(31)), shape=(30, 10**9))
    with pytest.raises(DataError, match=r"X is a scipy sparse matrix \(30, 1000000000\).*toarray"):
        fpt.build(data=(huge, y), body=tiny_bert_dir, **TINY)
    exp = fpt.build(data=(X, y), body=tiny_bert_dir, **{**TINY, "fit": "closed-form"})
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    with pytest.raises(DataError, match=r"inputs is a scipy sparse matrix \(30, 3\).*toarray"):
        fpt.load(tmp_path / "run").predict(sparse.csr_matrix(X))


def test_a_dict_of_columns_is_a_table_as_predict_reads_one():
    """predict took {column: values}, fpt.build refused the same dict: "unknown array 'a'; an .npz holds X, y, ...".
    A dict of equal-length one-dimensional columns, none of them named as an .npz's arrays, is a table."""
    from fpt.data.memory import from_memory

    frame = _frame()
    raw = from_memory({c: frame[c].tolist() for c in frame}, "label", "auto", "auto", 32)
    assert raw.modality == "tabular" and raw.notes["features"] == ["a", "b", "kind"] and raw.targets == ["label"]
    assert raw.splits["train"].x["a"].dtype == np.float64 and len(raw.splits["train"].y) == 40


def _multiindex_frame(n=40):
    """Columns ('x', 'a'), ('x', 'b'), ('y', ''), as ``pd.concat(..., axis=1, keys=...)`` or a groupby's agg leave
    them: y is the class, x_a follows it."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    y = np.arange(n) % 2
    return pd.DataFrame({("x", "a"): rng.normal(size=n) + 3 * y, ("x", "b"): rng.normal(size=n), ("y", ""): y})


@pytest.mark.parametrize(("target", "drop", "targets", "features"), [
    ("y", None, ["y"], ["x_a", "x_b"]),  # was: no column 'y'; its columns are ('x', 'a'), ('x', 'b'), ('y', '')
    (("y", ""), None, ["y"], ["x_a", "x_b"]),  # the tuple itself, as df[("y", "")] names it
    (("x", "b"), None, ["x_b"], ["x_a", "y"]),
    ("y", "x_b", ["y"], ["x_a"]),
    (None, None, ["y"], ["x_a", "x_b"]),  # the last column, as before, by its flat name (was "('y', '')")
])
def test_multiindex_columns_are_named_by_their_levels_joined_with_underscores(target, drop, targets, features,
                                                                              tiny_bert_dir):
    frame = _multiindex_frame()
    exp = fpt.build(data=frame, target_column=target, body=tiny_bert_dir, **({"drop_columns": drop} if drop else {}),
                    **TINY)
    assert exp.data.fitted["targets"] == targets and exp.data.fitted["features"] == features
    assert exp.data.spec.num_classes == (1 if targets == ["x_b"] else 2)  # x_b's noise a quantity, y two classes


def test_multiindex_columns_that_flatten_to_one_name_or_an_ambiguous_tuple_are_one_line():
    pd = pytest.importorskip("pandas")
    from fpt.data.memory import from_memory
    from fpt.errors import DataError

    frame = pd.DataFrame({("x", "a"): [1.0] * 20, ("x_a", ""): [2.0] * 20, ("y", ""): [0, 1] * 10})
    with pytest.raises(DataError, match=r"MultiIndex columns \('x', 'a'\) and \('x_a', ''\) both read as 'x_a'.*"
                                        r"df.columns = \[\.\.\.\]"):
        from_memory(frame, "y", "auto", "auto", 32)
    frame = pd.DataFrame({("x", ""): [1.0] * 20, ("a", ""): [2.0] * 20, ("x", "a"): [0, 1] * 10})
    with pytest.raises(DataError, match=r"target 'x,a' names the column \('x', 'a'\) and also the columns 'x', 'a'; "
                                        r"give the one column as 'x_a'"):
        fpt.build(data=frame, target_column=("x", "a"), init="random", device="cpu")


def test_a_multiindex_frame_predicts_by_its_flat_names_and_a_run_that_named_them_as_tuples_still_does(
        tmp_path, tiny_bert_dir, monkeypatch):
    import fpt.data.memory

    frame = _multiindex_frame()
    inputs = frame.drop(columns=[("y", "")])
    fpt.fit(fpt.build(data=frame, target="y", body=tiny_bert_dir, **TINY), out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    flat = inputs.set_axis(["x_a", "x_b"], axis=1)
    assert (model.predict(inputs) == model.predict(flat)).all()
    assert model.score(frame)["accuracy"] == pytest.approx(np.mean(model.predict(flat) == frame[("y", "")]))
    # a run trained before: its columns named "('x', 'a')", ...; new inputs of the same MultiIndex read by those names
    with monkeypatch.context() as m:
        m.setattr(fpt.data.memory, "flattened", lambda frame, where, error: frame)
        fpt.fit(fpt.build(data=frame, body=tiny_bert_dir, **TINY), out=tmp_path / "old", progress=False)
    old = fpt.load(tmp_path / "old")
    assert old.schema.features == ["('x', 'a')", "('x', 'b')"]
    assert old.predict(inputs).shape == (40,) and set(old.predict(inputs)) <= {0, 1}


@pytest.mark.parametrize(("options", "frame", "message"), [
    # fpt.tasks.user_data's error, which said "choose another --target"
    ({"objective": "regression"}, {"a": np.arange(20.0), "y": np.full(20, 2.5)},
     r"regression target 'y' has one value \(2.5\) in all 12 training examples, so there is nothing to learn; choose "
     r"another target column \(target=NAME\)$"),
    # fpt.data.base's, which said "use --objective classification or another --target"
    ({"objective": "regression"}, {"a": np.arange(20.0), "y": ["p", "q"] * 10},
     r"target 'y' is not numeric \('y' holds text labels\); use objective='classification' or another target column "
     r"\(target=NAME\)$"),
    ({"target": "z"}, {"a": np.arange(20.0), "y": np.arange(20.0)}, r"no column 'z'; its columns are a, y; give target=NAME$"),
])
def test_errors_of_in_memory_data_name_builds_arguments_not_fpt_train_options(options, frame, message, tiny_bert_dir):
    pd = pytest.importorskip("pandas")
    with pytest.raises(DataError, match=message) as info:
        fpt.build(data=pd.DataFrame(frame), body=tiny_bert_dir, **TINY, **options)
    assert "--" not in str(info.value)


@pytest.mark.parametrize("kind", ["object array", "list", "Series", "DataFrame"])
def test_labels_mixing_text_and_numbers_are_refused_as_the_estimators_refuse_them(kind, tiny_bert_dir):
    # before: 1 and '1' were one class '1' as a list (np.asarray made both text) and classes [1, '1', 2] otherwise
    pd = pytest.importorskip("pandas")
    labels = [1, "1", 2] * 10
    X = np.random.default_rng(0).normal(size=(30, 2))
    data = {"object array": (X, np.array(labels, dtype=object)), "list": (X, labels), "Series": (X, pd.Series(labels)),
            "DataFrame": pd.DataFrame({"a": X[:, 0], "label": labels})}[kind]
    where, fix = (("the DataFrame: target column 'label'", r"df\['label'\]") if kind == "DataFrame"
                  else ("data arrays: y", "y"))
    with pytest.raises(DataError, match=rf"^{where} mixes text and numbers: index 0 is 1, index 1 is '1' \(10 of 30 "
                                        rf"labels are text\); give the labels one type: {fix}\.astype\(str\) for text "
                                        r"labels, or numbers throughout$"):
        fpt.build(data=data, body=tiny_bert_dir, **TINY)
    # labels of one type are read: as the fix's text, '1' and '2' are two classes
    exp = fpt.build(data=(X, np.array(labels).astype(str)), body=tiny_bert_dir, objective="classification", **TINY)
    assert exp.data.spec.num_classes == 2

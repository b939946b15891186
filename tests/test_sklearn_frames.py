"""The scikit-learn estimators take a DataFrame with text or category columns, as fpt.build(data=df) and
--data x.csv do: such a column is categorical (one-hot slots, a shared slot for rare and unseen categories)
(issue 38, item 2)."""

from __future__ import annotations

import numpy as np
import pytest

from fpt.sklearn import FPTClassifier, FPTRegressor

pd = pytest.importorskip("pandas")
TINY = {"init": "random", "steps": 30, "eval_every": 10, "device": "cpu", "freeze": "none", "layers": 1}


def frame(n: int = 60, seed: int = 0):
    rng = np.random.default_rng(seed)
    kind = np.array(["a", "b", "c"])[np.arange(n) % 3]
    y = (kind == "b").astype(int)  # the label is the text column alone
    return pd.DataFrame({"x": rng.normal(size=n), "kind": kind,
                         "size": pd.Categorical(np.array(["S", "M", "L"])[rng.integers(0, 3, n)]),
                         "w": np.where(np.arange(n) % 7 == 0, np.nan, rng.normal(size=n))}), y


def test_classifier_fits_and_predicts_a_frame_with_text_and_category_columns(tiny_gpt2_dir):
    X, y = frame()
    clf = FPTClassifier(body=tiny_gpt2_dir, **TINY).fit(X, y)
    kinds = {f["name"]: f["kind"] for f in clf.preprocessing_.tokeniser.features}
    assert kinds == {"x0": "numeric", "x1": "categorical", "x2": "categorical", "x3": "numeric"}
    assert list(clf.feature_names_in_) == ["x", "kind", "size", "w"]
    X_test, y_test = frame(30, seed=1)
    assert clf.predict(X_test).shape == (30,) and clf.score(X_test, y_test) >= 0.9
    new = X_test.assign(kind=["d"] * 30)  # a category fit never saw: the shared slot, as for fpt train's rare ones
    assert clf.predict_proba(new).shape == (30, 2)
    with pytest.raises(ValueError, match="not a number"):
        clf.predict(X_test.assign(x=["text"] * 30))


def test_regressor_takes_a_frame_with_a_text_column(tiny_gpt2_dir):
    X, _ = frame()
    target = (X["kind"] == "c") * 3.0 + X["x"]
    reg = FPTRegressor(body=tiny_gpt2_dir, **TINY).fit(X, target)
    assert reg.predict(X.iloc[:5]).shape == (5,)
    with pytest.raises(ValueError, match="feature names"):
        reg.predict(X.rename(columns={"kind": "other"}))


def test_a_frame_of_pandas_own_dtypes_with_gaps_fits_each_column_as_its_values_say(tiny_gpt2_dir):
    """Bool and int8 beside a category column made scikit-learn's validate_data cast the categories to float (a
    ValueError), a datetime column failed its dtype promotion, and pd.NA was the category "<NA>" that turned a
    nullable integer column categorical: X is now kept as objects and pandas' NA and NaT are missing values."""
    n = 60
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"size": pd.Categorical(np.array(["S", "M", "L"])[np.arange(n) % 3]),
                      "flag": rng.random(n) > 0.5, "small": rng.integers(0, 3, n).astype("int8"),
                      "count": pd.array([1, None, 3] * (n // 3), dtype="Int64"),
                      "maybe": pd.array([True, None, False] * (n // 3), dtype="boolean"),
                      "note": pd.array(["u", None, "v"] * (n // 3), dtype="string"),
                      "when": pd.date_range("2021-01-01", periods=n, freq="D").where(np.arange(n) % 9 > 0)})
    y = (np.arange(n) % 3 == 0).astype(int)  # the size column's S
    clf = FPTClassifier(body=tiny_gpt2_dir, **TINY).fit(X, y)
    features = {f["name"]: f for f in clf.preprocessing_.tokeniser.features}
    kinds = [features[f"x{j}"]["kind"] for j in range(7)]
    assert kinds == ["categorical", "numeric", "numeric", "numeric", "numeric", "categorical", "datetime"]
    assert 1 < features["x3"]["mean"] < 3  # of 1s and 3s on the training rows, the gaps missing (not "<NA>")
    assert sorted(features["x5"]["categories"]) == ["u", "v"]
    # the dates as dates, the NaT gaps missing (a day per row: 2021-01-01 is day 18628 since 1970)
    days = [f for f in clf.preprocessing_.tokeniser.features if f["name"] == "x6" and f["part"] == "time"][0]
    assert 18628 <= days["low"] < days["high"] <= 18628 + n
    assert clf.predict(X).shape == (n,) and clf.score(X, y) >= 0.9


@pytest.mark.parametrize("column", [pd.date_range("2021-01-01", periods=60, freq="D"),
                                    pd.to_timedelta(np.arange(60), unit="h")], ids=["datetime", "timedelta"])
def test_a_frame_of_numbers_and_datetimes_fits_and_predicts(tiny_gpt2_dir, column):
    """A DataFrame of numeric columns beside a datetime (or timedelta) column, and no text or category column, was
    scikit-learn's DTypePromotionError in fit (check_array promotes the numpy dtypes of the columns together)."""
    X, y = frame()
    X = X[["x", "w"]].assign(when=column)
    clf = FPTClassifier(body=tiny_gpt2_dir, init="random", device="cpu", fitting="closed-form").fit(X, y)
    kinds = [f["kind"] for f in clf.preprocessing_.tokeniser.features]
    # dates as dates (a token per part: time, year, month, day, weekday), durations as numbers (seconds)
    assert kinds == ["numeric", "numeric", *(["datetime"] * 5 if column.dtype.kind == "M" else ["numeric"])]
    assert list(clf.feature_names_in_) == ["x", "w", "when"] and clf.predict(X.iloc[:7]).shape == (7,)


def test_a_pyarrow_table_with_a_text_column_fits_and_predicts(tiny_gpt2_dir):
    """A pyarrow Table (which scikit-learn takes as a DataFrame) with a text column was converted to float64: "could not
    convert string to float: 'a'" from numpy, where a pandas frame of the same columns fits."""
    pa = pytest.importorskip("pyarrow")
    X, y = frame()
    table = pa.Table.from_pandas(X[["x", "kind"]], preserve_index=False)
    clf = FPTClassifier(body=tiny_gpt2_dir, init="random", device="cpu", fitting="closed-form").fit(table, y)
    assert [f["kind"] for f in clf.preprocessing_.tokeniser.features] == ["numeric", "categorical"]
    assert list(clf.feature_names_in_) == ["x", "kind"] and clf.score(table, y) >= 0.9


@pytest.mark.parametrize("container", ["pandas", "pyarrow"])
def test_a_category_column_of_numbers_is_categorical_at_fit_and_at_predict(tiny_gpt2_dir, container):
    """A category column of ints (pd.Categorical([10, 20, 30]), df.astype("category"); a pyarrow dictionary) was
    standardised as a number, its declared type ignored, where scikit-learn's HistGradientBoosting reads it as
    categorical; at predict the same codes as plain ints or floats find their categories by value."""
    n = 60
    codes = np.array([10, 20, 30])[np.arange(n) % 3]
    X = pd.DataFrame({"x": np.random.default_rng(0).normal(size=n), "code": pd.Categorical(codes),
                      "half": pd.Series((np.arange(n) % 2) + 0.5).astype("category")})
    y = (codes == 20).astype(int)  # the code alone, not any order of its values: 20 lies between 10 and 30
    data = X
    if container == "pyarrow":
        pa = pytest.importorskip("pyarrow")
        data = pa.Table.from_pandas(X, preserve_index=False)
    clf = FPTClassifier(body=tiny_gpt2_dir, init="random", device="cpu", fitting="closed-form",
                        options={"cf_head": "logistic"}).fit(data, y)
    features = clf.preprocessing_.tokeniser.features
    assert [(f["kind"], sorted(f.get("categories", []))) for f in features] == [
        ("numeric", []), ("categorical", ["10", "20", "30"]), ("categorical", ["0.5", "1.5"])]
    assert clf.score(data, y) == 1.0
    proba = clf.predict_proba(data)
    plain = X.assign(code=codes, half=X["half"].astype(float))  # plain numbers, as a later batch may give them
    np.testing.assert_allclose(clf.predict_proba(plain), proba, rtol=0, atol=1e-12)
    np.testing.assert_allclose(clf.predict_proba(plain.assign(code=codes.astype(float))), proba, rtol=0, atol=1e-12)
    unseen = clf.predict_proba(X.assign(code=pd.Categorical(np.full(n, 40))))  # the shared slot, as any unseen text
    assert unseen.shape == (n, 2) and not np.allclose(unseen, proba)


def test_categories_fit_never_saw_warn_by_default_and_handle_unknown_chooses(tiny_gpt2_dir):
    """predict read a category fit never saw as the shared unknown slot without a word, where fpt predict refuses it
    unless --allow-unseen: now handle_unknown decides, in OneHotEncoder's words: warn (the default: one warning per
    call naming X's columns and counts), ignore (silent), error (a one-line refusal naming handle_unknown)."""
    import warnings

    from fpt.errors import ConfigError, SchemaError
    from fpt.sklearn import UnseenCategoryWarning

    X, y = frame()
    clf = FPTClassifier(body=tiny_gpt2_dir, **TINY).fit(X, y)
    assert clf.get_params()["handle_unknown"] == "warn"
    new = frame(6, seed=1)[0].assign(kind=["d", "a", "e", "d", None, "d"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read = clf.predict_proba(new)
        clf.predict(frame(6, seed=1)[0])  # every category known: no warning
    (said,) = [str(w.message) for w in caught if issubclass(w.category, UnseenCategoryWarning)]
    assert said == ("FPTClassifier.predict: categories fit never saw, each read as the shared unknown slot: column "
                    "'kind': 4 of 6 rows ('d', 'e'); handle_unknown='error' refuses them, 'ignore' reads them without "
                    "this warning")
    clf.set_params(handle_unknown="ignore")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(clf.predict_proba(new), read)  # the same reading, silently
    clf.set_params(handle_unknown="error")
    with pytest.raises(SchemaError) as refused:
        clf.predict(new)
    assert str(refused.value) == ("FPTClassifier.predict: X.iloc[0]['kind']: category 'd' was not seen in training "
                                  "(the model knows 'c', 'b', 'a'); fix the value, or set handle_unknown='warn' (or "
                                  "'ignore') to read categories fit never saw as the shared unknown slot")
    assert clf.predict(frame(6, seed=1)[0]).shape == (6,)
    with pytest.raises(ConfigError, match=r"handle_unknown='infrequent_if_exist' is not one of warn, ignore, error"):
        clf.set_params(handle_unknown="infrequent_if_exist").predict(new)
    with pytest.raises(ConfigError, match=r"handle_unknown=True is not one of"):
        FPTClassifier(body=tiny_gpt2_dir, handle_unknown=True, **TINY).fit(X, y)

"""fpt.build(data=(X, y)) with X a pandas DataFrame, scikit-learn's habit: X is read as the DataFrame it is (its
column names and dtypes) with y beside it as the target, by y's name; a target left in X and a y whose index holds X's
rows in another order are refused."""

from __future__ import annotations

import numpy as np
import pytest

import fpt
from fpt.errors import DataError

pd = pytest.importorskip("pandas")

TINY = {"init": "random", "steps": 3, "eval_every": 3, "batch_size": 8, "device": "cpu", "baselines": "none"}


def _frame(n: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    y = np.arange(n) % 2
    return pd.DataFrame({"a": rng.normal(size=n) + 2 * y, "b": rng.normal(size=n),
                         "kind": pd.Categorical(rng.choice(["p", "q", "r"], n)),
                         "label": np.where(y == 1, "yes", "no")}, index=[f"row{i}" for i in range(n)])


def test_a_dataframe_and_a_series_are_the_table_with_the_series_as_its_named_target(tmp_path, tiny_bert_dir):
    """Read as arrays, X's columns were x0, x1, x2 (and 'kind' an object column of codes), y was 'y', and the trained
    model refused the very DataFrame it was trained on: "inputs: no column 'x0' (nor x1, x2)"."""
    frame = _frame()
    X, y = frame.drop(columns="label"), frame["label"]
    exp = fpt.build(data=(X, y), body=tiny_bert_dir, **TINY)
    assert exp.data.info["features"] == ["a", "b", "kind"] and exp.data.fitted["targets"] == ["label"]
    kinds = {f["name"]: f["kind"] for f in exp.data.fitted["tokeniser"]["features"]}
    assert kinds == {"a": "numeric", "b": "numeric", "kind": "categorical"}
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    predicted = model.predict(X)
    assert predicted.shape == (40,) and set(predicted) <= {"no", "yes"}
    assert (model.predict(X[["kind", "b", "a"]]) == predicted).all()  # read by name, in any order
    metrics = model.score(frame)  # the target column by its name: scored
    assert metrics["accuracy"] == pytest.approx(float(np.mean(predicted == y.to_numpy())))
    # the same as a dict of an .npz's names
    assert fpt.build(data={"X": X, "y": y}, body=tiny_bert_dir, **TINY).data.info["features"] == ["a", "b", "kind"]
    # an unnamed y is 'y', and a 2-D one y0, y1, ... as an .npz's
    assert fpt.build(data=(X, y.to_numpy()), body=tiny_bert_dir, **TINY).data.fitted["targets"] == ["y"]
    two = np.stack([X["a"].to_numpy(), 2 * X["a"].to_numpy()], axis=1)
    exp = fpt.build(data=(X[["kind", "b"]], two), body=tiny_bert_dir, objective="regression", **TINY)
    assert exp.data.fitted["targets"] == ["y0", "y1"] and exp.data.info["features"] == ["kind", "b"]


def test_a_target_left_in_x_or_paired_by_another_index_is_refused(tiny_bert_dir):
    """Both trained without a word: y left in X was also a feature (the model read the answer), and a y in another
    row order than X (pandas would pair them by label) gave each row another row's label."""
    frame = _frame()
    with pytest.raises(DataError, match=r"y is named 'label', as X's column 'label' is.*X.drop\(columns='label'\)"):
        fpt.build(data=(frame, frame["label"]), body=tiny_bert_dir, **TINY)
    X = frame.drop(columns="label").sample(frac=1, random_state=0)
    with pytest.raises(DataError, match=r"another order \(X starts \['row.*give y.loc\[X.index\]"):
        fpt.build(data=(X, frame["label"]), body=tiny_bert_dir, **TINY)
    exp = fpt.build(data=(X, frame["label"].loc[X.index]), body=tiny_bert_dir, **TINY)  # paired by label: as asked
    assert exp.data.info["features"] == ["a", "b", "kind"]
    # y of another length is one line too
    with pytest.raises(DataError, match="X has 40 rows but y has 39 targets"):
        fpt.build(data=(frame.drop(columns="label"), frame["label"].to_numpy()[:39]), body=tiny_bert_dir, **TINY)


def test_predictions_of_a_dataframe_carry_its_row_labels(tmp_path, tiny_bert_dir):
    """predict_file's table of a DataFrame dropped its index: the rows of df.loc[chosen], or of a DatetimeIndex frame,
    could be matched to their predictions only by position, and .write() wrote no id, where fpt predict writes a
    file's row index back beside the predictions."""
    frame = _frame()
    exp = fpt.build(data=frame, target="label", body=tiny_bert_dir, **TINY)
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    chosen = frame.drop(columns="label").loc[["row7", "row2", "row30"]]
    table = model.predict_file(chosen)
    assert list(table.columns)[:2] == ["", "prediction"] and table.columns[""] == ["row7", "row2", "row30"]
    assert table.columns["prediction"] == list(model.predict(chosen))
    table.write(tmp_path / "p.csv")
    back = pd.read_csv(tmp_path / "p.csv", index_col=0)  # as pandas reads its own to_csv back
    assert list(back.index) == ["row7", "row2", "row30"] and list(back["prediction"]) == table.columns["prediction"]
    named = chosen.rename_axis("id")
    assert model.predict_file(named).columns["id"] == ["row7", "row2", "row30"]
    dated = chosen.set_axis(pd.date_range("2024-03-01", periods=3, name="day"))
    assert model.predict_file(dated).columns["day"] == ["2024-03-01", "2024-03-02", "2024-03-03"]
    # pandas' own 0..n-1 says nothing: not written, as before
    assert list(model.predict_file(chosen.reset_index(drop=True)).columns)[0] == "prediction"

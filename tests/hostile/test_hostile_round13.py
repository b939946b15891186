"""Round 13 of the hostile-input cases: what a user's own tables, images, series and texts bring, and a careless
call. Each case failed before its fix (the commit that added it says how)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from hostile_helpers import FAST, dna_run, one_line


@pytest.fixture(scope="module")
def dna(tiny_bert_dir, tmp_path_factory):
    """A symbol-sequence run of DNA strings (a CSV of seq, label) and its folder."""
    root = tmp_path_factory.mktemp("dna")
    return dna_run(root, tiny_bert_dir)[0], root


def test_a_path_to_no_file_is_refused_saying_what_the_model_takes(dna, tab_run, tmp_path, capsys, monkeypatch):
    """predict(Path("ACGT")) raised FileNotFoundError('ACGT: no such file or folder'), no fpt error and no word of
    the list of texts a sequence model takes; a table model's predict('nope.csv') the same. fpt predict RUN nope.csv
    of a sequence model told its command-line user to call predict(['nope.csv'])."""
    import fpt
    from fpt.cli import main
    from fpt.errors import SchemaError

    run, _ = dna
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SchemaError) as refused:
        fpt.load(run).predict(Path("ACGT"))
    assert str(refused.value) == ("ACGT: no such file or folder (a Path is read as a file's path); pass the path of an "
                                  "existing file of the texts, or the texts themselves in a list of strings, "
                                  "predict(['ACGT'])")
    table = fpt.load(tab_run)
    for given in ("nope.csv", Path("nope.csv")):
        with pytest.raises(SchemaError) as refused:
            table.predict(given)
        assert str(refused.value) == ("nope.csv: no such file or folder; pass the path of an existing file (or "
                                      "folder) of the inputs, or the inputs themselves in memory (a DataFrame, a dict "
                                      "of columns, or arrays)")
    for model in (run, tab_run):
        assert main(["predict", str(model), "nope.csv", "--out", "p.csv"]) == 2
        said = one_line(capsys, "predict")
        assert said == (f"fpt predict: error: INPUT nope.csv: no such file or folder (relative to the current "
                        f"directory {tmp_path}); give the path of an existing file (or folder) of the inputs, or - to "
                        "read a table from standard input")
    assert not (tmp_path / "p.csv").exists()


def test_a_bad_cell_below_blank_lines_is_named_by_its_row_in_the_file(tab_run, tmp_path, capsys):
    """pandas skips a CSV's blank lines (and fpt leaves out its rows of ',,'), so the rows below one were named by
    their place among the rows read: 'column 'x2', row 3' of a cell on the 5th row under the header (file line 6)."""
    import fpt
    from fpt.cli import main
    from fpt.errors import DataError, SchemaError

    model = fpt.load(tab_run)
    (tmp_path / "new.csv").write_text("x1,x2,label\n1,2,a\n\n\n3,4,b\n5,abc,a\n")
    with pytest.raises(SchemaError, match=r"new.csv: column 'x2', row 5: 'abc' is not a number"):
        model.predict(str(tmp_path / "new.csv"))
    assert main(["predict", str(tab_run), str(tmp_path / "new.csv"), "--out", str(tmp_path / "p.csv")]) == 2
    one_line(capsys, "predict", "new.csv: column 'x2', row 5: 'abc' is not a number")
    (tmp_path / "commas.csv").write_text("x1,x2,label\n1,2,a\n\n3,4,b\n,,\n5,6,a\n")
    with pytest.raises(DataError, match=r"commas.csv: row\(s\) 4 under the header hold no value in any column"):
        model.predict(str(tmp_path / "commas.csv"))
    # the predictions stay one per row of values, blank lines skipped as before
    (tmp_path / "fine.csv").write_text("x1,x2,label\n1,2,a\n\n\n3,4,b\n5,6,a\n\n")
    np.testing.assert_array_equal(model.predict(str(tmp_path / "fine.csv")),
                                  model.predict({"x1": [1.0, 3.0, 5.0], "x2": [2.0, 4.0, 6.0]}))
    # in training: a missing target and an infinite value, each on the 13th row under the header (file line 14)
    rows = [f"{i % 7 * 0.5:.1f},{i % 5:.1f},{'ab'[i % 2]}" for i in range(24)]
    for name, bad, said in (("gap.csv", "1.0,2.0,", r"is missing on row\(s\) 13 \(1 in all\)"),
                            ("inf.csv", "inf,2.0,a", r"column 'x1' holds infinite values on row\(s\) 13 \(1 in all\)")):
        lines = [*rows[:5], "", "", *rows[5:10], bad, *rows[11:]]
        (tmp_path / name).write_text("x1,x2,label\n" + "\n".join(lines) + "\n")
        assert (tmp_path / name).read_text().splitlines()[13] == bad
        with pytest.raises(DataError, match=said):
            fpt.build(data=str(tmp_path / name), **FAST)


@pytest.fixture(scope="module")
def dated(tiny_bert_dir):
    """Estimators fitted on a DataFrame and on its array of a date, a duration and a number column."""
    import pandas as pd

    from fpt.sklearn import FPTClassifier

    n = 24
    frame = pd.DataFrame({"when": [f"2024-03-{i + 1:02d}" for i in range(n)],
                          "dur": [f"0:{i + 10}:00" for i in range(n)], "x": np.arange(n) * 1.0})
    y = np.arange(n) % 2
    fast = dict(body=tiny_bert_dir, init="random", steps=2, eval_every=2, batch_size=8, device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return frame, y, FPTClassifier(**fast).fit(frame, y), FPTClassifier(**fast).fit(frame.to_numpy(object), y)


def test_an_estimators_date_and_duration_errors_name_rows_as_its_caller_indexes_them(dated):
    """The estimators name a bad cell X.iloc[2]['x'] (from 0, as pandas and numpy index), but a date or duration
    column's refusal said 'row 3' of that same X.iloc[2], and fit named the DataFrame's column 'dur' 'column 1'."""
    from fpt.errors import DataError, SchemaError
    from fpt.sklearn import FPTClassifier

    frame, y, on_frame, on_array = dated
    for column, value, said in (("when", "tuesday", "holds values that are not dates"),
                                ("dur", "soon", "holds values that are not durations")):
        bad = frame.iloc[:4].copy()
        bad.loc[2, column] = value
        with pytest.raises(SchemaError) as refused:
            on_frame.predict(bad)
        assert f"column {column!r} {said}" in str(refused.value) and f"(X.iloc[2]: {value!r})" in str(refused.value)
        with pytest.raises(SchemaError) as refused:
            on_array.predict(bad.to_numpy(object))
        j = list(frame.columns).index(column)
        assert f"X[:, {j}] {said}" in str(refused.value) and f"(X[2]: {value!r})" in str(refused.value)
    bad = frame.copy()
    bad.loc[2, "dur"] = "1:00"
    with pytest.raises(DataError) as refused:
        FPTClassifier(body=on_frame.body, init="random", steps=2, device="cpu").fit(bad, y)
    assert str(refused.value).startswith("FPTClassifier.fit (X, y), column 'dur' holds durations of two fields "
                                         "(X.iloc[2]: '1:00'), which could be hours and minutes or minutes and seconds, "
                                         "beside longer ones (X.iloc[0]: '0:10:00')"), refused.value


def test_a_files_date_errors_name_the_row_under_its_header(tmp_path, tiny_bert_dir):
    """The same refusal of a file's column names the row under the header, counted from 1 (and past blank lines)."""
    import fpt
    from fpt.errors import SchemaError

    rows = [f"2024-03-{i + 1:02d},{i % 3},{'ab'[i % 2]}" for i in range(24)]
    (tmp_path / "d.csv").write_text("when,x,label\n" + "\n".join(rows) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fpt.fit(fpt.build(data=str(tmp_path / "d.csv"), body=tiny_bert_dir, **FAST), out=tmp_path / "run",
                progress=False)
    (tmp_path / "new.csv").write_text("when,x\n2024-03-01,1\n\n2024-03-02,2\ntuesday,0\n")
    with pytest.raises(SchemaError, match=r"column 'when' holds values that are not dates \(row 4: 'tuesday'\)"):
        fpt.load(tmp_path / "run").predict(str(tmp_path / "new.csv"))


def test_a_target_column_named_twice_is_refused(tab_run, tmp_path, capsys):
    """--target x1,x1 trained two outputs of the one column, and fpt predict wrote one prediction_x1 column, the
    second output's written over the first's."""
    import fpt
    from fpt.cli import main
    from fpt.errors import DataError

    data = tab_run.parent / "train.csv"
    for target in ("x1,x1", "x2, x1 ,x1"):
        with pytest.raises(DataError) as refused:
            fpt.build(data=str(data), target=target, **FAST)
        assert str(refused.value) == (f"{data}: target={target!r} names the column 'x1' twice; name each target "
                                      "column once")
    assert main(["train", "--data", str(data), "--target", "x1,x1", "--out", str(tmp_path / "run"), "--steps", "2",
                 "--init", "random", "--device", "cpu"]) == 2
    one_line(capsys, "train", f"{data}: --target x1,x1 names the column 'x1' twice; name each target column once")
    assert not (tmp_path / "run").exists()
    assert fpt.build(data=str(data), target="x1,x2", **FAST).data.fitted["targets"] == ["x1", "x2"]  # as before


def test_a_column_near_float64s_largest_is_standardised(tiny_bert_dir, tmp_path):
    """A column of values near 1e308 (finite in float64) overflowed its mean: numpy's overflow warnings, then every row
    refused as 'beyond float32's range once standardised', none of which the column's values are once scaled."""
    import fpt
    from fpt.data.tokenisers import _standardised

    rows = [f"{i % 5 * 0.1:.1f},{(1e308, -1e308, 5e307)[i % 3]},{'ab'[i % 2]}" for i in range(24)]
    (tmp_path / "big.csv").write_text("x1,x2,label\n" + "\n".join(rows) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        exp = fpt.build(data=str(tmp_path / "big.csv"), body=tiny_bert_dir, **FAST)
        fpt.fit(exp, out=tmp_path / "run", progress=False)
        (entry,) = [f for f in fpt.load(tmp_path / "run").preprocessing.tokeniser.features if f["name"] == "x2"]
        # the training split's values, a third of each: mean and std of the values scaled by 1e308, times 1e308
        assert -1e308 < entry["mean"] < 5e307 and 5e307 < entry["std"] < 1.1e308
        fitted = _standardised(np.array([1e308, -1e308, 5e307]), "column 'x2'")
        assert fitted == {"mean": pytest.approx(1e308 / 6, rel=1e-12),
                          "std": pytest.approx(1e308 * np.std([1, -1, 0.5]), rel=1e-12)}
        assert fpt.load(tmp_path / "run").predict(str(tmp_path / "big.csv")).shape == (24,)


def test_a_dataframes_infinite_values_and_dicts_are_refused_naming_the_column(tiny_bert_dir):
    """fpt.build(data=df) of a column holding inf was refused after the split as 'example 1 (14 in all) gives values
    beyond float32's range once standardised' (a row of a split, no column); a column of dicts raised TypeError:
    unhashable type: 'dict' from pandas. A file's reader names the column and the rows; so does this now."""
    import pandas as pd

    import fpt
    from fpt.errors import DataError

    n = 24
    frame = pd.DataFrame({"x": np.arange(n) * 1.0, "label": np.arange(n) % 2})
    for values in (np.where(np.arange(n) % 4 == 1, np.inf, 1.0), np.array([1.0, 2, -np.inf, 3] * 6, dtype=object)):
        rows = np.flatnonzero(np.isinf(values.astype(float)))  # by position from 0, as data.iloc reads them
        with pytest.raises(DataError) as refused:
            fpt.build(data=frame.assign(c=values), body=tiny_bert_dir, **FAST)
        shown = ", ".join(f"data.iloc[{r}]" for r in rows[:5])
        assert str(refused.value) == (f"the DataFrame: column 'c' holds infinite values on {shown}, ... "
                                      f"({len(rows)} in all); replace them with finite numbers or leave them missing "
                                      "(NaN)")
    with pytest.raises(DataError) as refused:
        fpt.build(data=frame.assign(c=[{"a": 1}, "b", {"b": 2}, "c"] * 6), body=tiny_bert_dir, **FAST)
    assert str(refused.value).startswith("the DataFrame: column 'c' holds nested values (dicts, on data.iloc[0], "
                                         "data.iloc[2], data.iloc[4], data.iloc[6], data.iloc[8], ... (12 in all)); "
                                         "give it one type (numbers or text) per column")
    exp = fpt.build(data=frame.assign(c=[1.0, np.nan, "a", None] * 6), body=tiny_bert_dir, **FAST)  # mixed: read
    assert exp.data.fitted["features"] == ["x", "c"]


def test_an_estimators_complex_column_is_named_not_the_float_column_beside_it(tiny_bert_dir):
    """FPTClassifier.fit of a DataFrame of a float column 'x' beside a complex column 'c' refused 'column 'x': holds
    complex numbers (0j)': validate_data makes X one complex array, and the float column's values, 1+0j, were refused
    where predict reads a value of no imaginary part as the real number it is."""
    import pandas as pd

    from fpt.errors import DataError
    from fpt.sklearn import FPTClassifier

    n = 24
    frame = pd.DataFrame({"x": np.arange(n) * 0.5, "c": np.arange(n) % 3 * 1.0})
    y = np.arange(n) % 2
    fast = dict(body=tiny_bert_dir, init="random", steps=2, eval_every=2, batch_size=8, device="cpu")
    with pytest.raises(DataError) as refused:
        FPTClassifier(**fast).fit(frame.assign(c=frame["c"] + 2j), y)
    assert str(refused.value).startswith("FPTClassifier.fit (X, y), column 'c': holds complex numbers (2j)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        real = FPTClassifier(**fast).fit(frame, y)
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        zero = FPTClassifier(**fast).fit(frame.assign(c=frame["c"] + 0j), y)  # of no imaginary part: the same numbers
    np.testing.assert_array_equal(zero.predict_proba(frame), real.predict_proba(frame))


def test_an_infinite_value_given_to_predict_in_memory_names_its_cell(tab_run):
    """model.predict(df) of a DataFrame holding inf was refused as 'inputs: example 2 (1 in all) gives values beyond
    float32's range once standardised', naming no column (a file's inf is refused as the file is read)."""
    import pandas as pd

    import fpt
    from fpt.errors import SchemaError

    model = fpt.load(tab_run)
    for given, cell, value in ((pd.DataFrame({"x1": [1.0, np.inf], "x2": [1.0, 2.0]}), "inputs.iloc[1]['x1']", "inf"),
                               ({"x1": [1.0, 2.0, 3.0], "x2": np.array([1.0, 2, -np.inf], dtype=object)},
                                "inputs['x2'][2]", "-inf")):
        with pytest.raises(SchemaError) as refused:
            model.predict(given)
        assert str(refused.value) == (f"inputs: {cell}: {value} is infinite, but the model reads finite numbers; give "
                                      "a finite number or leave it missing (NaN)")
    np.testing.assert_array_equal(model.predict({"x1": [1.0, np.nan], "x2": [2.0, 3.0]}),  # NaN: missing, as ever
                                  model.predict(pd.DataFrame({"x1": [1.0, None], "x2": [2.0, 3.0]})))


def test_an_estimators_column_of_dicts_is_refused_not_read_as_their_text(tiny_bert_dir):
    """FPTClassifier.fit of a column holding dicts trained on str() of each as a category ("{'a': 1}"), where
    fpt.build of the same DataFrame, and a JSON lines file of nested values, refuse it."""
    import pandas as pd

    from fpt.errors import DataError
    from fpt.sklearn import FPTClassifier

    n = 24
    frame = pd.DataFrame({"x": np.arange(n) * 1.0, "c": ["a", {"a": 1}, "b", {"b": 2}] * 6})
    fast = dict(body=tiny_bert_dir, init="random", steps=2, eval_every=2, batch_size=8, device="cpu")
    for X, where, first in ((frame, "column 'c'", "X.iloc[1]"), (frame.to_numpy(object), "X[:, 1]", "X[1]")):
        with pytest.raises(DataError) as refused:
            FPTClassifier(**fast).fit(X, np.arange(n) % 2)
        assert str(refused.value).startswith(f"FPTClassifier.fit (X, y), {where} holds nested values (dicts, on {first}, "
                                             f"{first.replace('1', '3')}, ")
        assert "... (12 in all)); give it one type (numbers or text) per column" in str(refused.value)

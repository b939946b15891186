"""Round 14 of the hostile-input cases: what the last round found but left (an empty image file, an estimator's
fixes and row lists worded for its caller, a CSV's named index, a feature column with no value). Each case failed
before its fix (the commit that added it says how)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from hostile_helpers import FAST, one_line


def _pngs(root: Path, n: int = 6) -> Path:
    from PIL import Image

    rng = np.random.default_rng(0)
    for c in "ab":
        (root / c).mkdir(parents=True)
        for i in range(n):
            Image.fromarray((rng.random((8, 8, 3)) * 255).astype(np.uint8)).save(root / c / f"{i}.png")
    return root


def test_an_empty_image_file_is_refused_as_empty(tiny_bert_dir, tmp_path, capsys):
    """A zero-byte image in an image folder was refused quoting Pillow, 'not a readable image (UnidentifiedImageError:
    cannot identify image file ...)': the file is empty, and that is what to say, at training and at predict."""
    import fpt
    from fpt.cli import main
    from fpt.errors import DataError

    train = _pngs(tmp_path / "train")
    empty = train / "a" / "empty.png"
    empty.write_bytes(b"")
    said = (f"{empty}: the file is empty (0 bytes), not an image (a copy or download cut short?); copy the image "
            "again, or delete the file")
    with pytest.raises(DataError) as refused:
        fpt.build(data=str(train), body=tiny_bert_dir, image_size=8, patch_size=4, **FAST)
    assert str(refused.value) == said
    empty.unlink()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fpt.fit(fpt.build(data=str(train), body=tiny_bert_dir, image_size=8, patch_size=4, **FAST),
                out=tmp_path / "run", progress=False)
    new = _pngs(tmp_path / "new", n=1)
    gone = new / "b" / "0.png"
    gone.write_bytes(b"")
    with pytest.raises(DataError) as refused:
        fpt.load(tmp_path / "run").predict(str(new))
    assert str(refused.value) == said.replace(str(empty), str(gone))
    assert main(["predict", str(tmp_path / "run"), str(new), "--out", str(tmp_path / "p.csv")]) == 2
    one_line(capsys, "predict", f"{gone}: the file is empty (0 bytes)")
    assert not (tmp_path / "p.csv").exists()


def _notes(caught) -> list[str]:
    return [str(w.message) for w in caught if "no value on any training row" in str(w.message)]


def test_a_feature_column_with_no_value_is_noted(tiny_bert_dir, tmp_path):
    """A feature column empty on every row trained without a word, kept as a feature (a numeric column of mean 0, std 1,
    missing on every row); now fpt train, fpt.build and the estimators say so, naming the column and the fix."""
    import fpt
    from fpt.data.base import ColumnNote
    from fpt.sklearn import FPTClassifier

    rows = [f"{i % 7 * 0.5},{i % 5},,{'ab'[i % 2]}" for i in range(24)]
    (tmp_path / "t.csv").write_text("x1,x2,e,label\n" + "\n".join(rows) + "\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exp = fpt.build(data=str(tmp_path / "t.csv"), body=tiny_bert_dir, **FAST)
    assert _notes(caught) == [f"{tmp_path / 't.csv'}: column 'e' has no value on any training row, so it carries "
                              "nothing: it is kept as a feature read as missing on every row (one token, the same on "
                              "all); fill it in, or leave it out with drop_columns='e'"]
    assert all(w.category is ColumnNote for w in caught if "no value" in str(w.message))
    assert [f["name"] for f in exp.data.fitted["tokeniser"]["features"]] == ["x1", "x2", "e"]
    X = np.c_[np.arange(24) % 7 * 0.5, np.full(24, np.nan)]
    fast = dict(body=tiny_bert_dir, init="random", steps=2, eval_every=2, batch_size=8, device="cpu")
    import pandas as pd

    for given, column in ((X, "X[:, 1]"), (pd.DataFrame(X, columns=["a", "b"]), "column 'b'")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            FPTClassifier(**fast).fit(given, np.arange(24) % 2)
        said = _notes(caught)
        assert len(said) == 1 and said[0].startswith(f"FPTClassifier.fit (X, y): {column} has no value on any "
                                                     "training row, so it carries nothing"), said
    # a column with one value is no empty column
    rows[3] = rows[3].replace(",,", ",1.5,")
    (tmp_path / "t.csv").write_text("x1,x2,e,label\n" + "\n".join(rows) + "\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fpt.build(data=str(tmp_path / "t.csv"), body=tiny_bert_dir, **FAST)
    assert _notes(caught) == []


def test_an_estimators_fix_leaves_a_column_out_as_its_x_does(tiny_bert_dir):
    """An estimator fitted on an array was told to leave a column out with X.drop(columns=...), which arrays do not
    have; and a fix naming one column said drop_columns='x1', fit's own name for it and an argument it has not."""
    import pandas as pd

    from fpt.errors import DataError
    from fpt.sklearn import FPTClassifier

    fast = dict(body=tiny_bert_dir, init="random", steps=2, eval_every=2, batch_size=8, device="cpu")
    n = 24
    X = np.array([[f"{i % 12 + 1:02d}/{i * 5 % 12 + 1:02d}/2024", float(i)] for i in range(n)], dtype=object)
    for given, column, fix in ((X, "X[:, 0]", "X[:, keep] (keep: the indices of the columns to keep)"),
                               (pd.DataFrame(X, columns=["when", "x"]), "column 'when'", "X.drop(columns=...)")):
        with pytest.raises(DataError) as refused:
            FPTClassifier(**fast).fit(given, np.arange(n) % 2)
        said = str(refused.value)
        assert said.startswith(f"FPTClassifier.fit (X, y), {column} holds dates written day or month first")
        assert said.endswith(f"or leave the column out with {fix}"), said
    empty = np.c_[np.arange(n) % 7 * 0.5, np.full(n, np.nan), np.arange(n) % 3]
    for given, fix in ((empty, "np.delete(X, 1, axis=1)"),
                       (pd.DataFrame(empty, columns=["a", "b", "c"]), "X.drop(columns=['b'])")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            FPTClassifier(**fast).fit(given, np.arange(n) % 2)
        said = _notes(caught)
        assert len(said) == 1 and said[0].endswith(f"fill it in, or leave it out with {fix}"), said


def test_an_estimators_row_lists_count_from_0_as_its_caller_indexes(tiny_bert_dir, tmp_path):
    """An estimator names one bad cell X[2] (X.iloc[2] of a DataFrame), but its lists of rows counted from 1: 'other
    values (row 3: '31/02/2024', row 6: 'soon-ish')' of X[2] and X[5]. Lists now name rows as one row is named; a
    file's rows stay its rows under the header, from 1."""
    import pandas as pd

    import fpt
    from fpt.data.base import rows
    from fpt.errors import DataError, Wording, wording
    from fpt.sklearn import FPTClassifier

    fast = dict(body=tiny_bert_dir, init="random", steps=2, eval_every=2, batch_size=8, device="cpu")
    n = 24
    when = [f"{i + 1:02d}/03/2024" for i in range(n)]
    when[2], when[5] = "31/02/2024", "soon-ish"
    X = np.array([[w, float(i)] for i, w in enumerate(when)], dtype=object)
    for given, row in ((X, "X[{}]"), (pd.DataFrame(X, columns=["when", "x"]), "X.iloc[{}]")):
        with pytest.raises(DataError) as refused:
            FPTClassifier(**fast).fit(given, np.arange(n) % 2)
        assert (f"but also other values ({row.format(2)}: '31/02/2024', {row.format(5)}: 'soon-ish'); write those so "
                "too") in str(refused.value), str(refused.value)
    mask = np.zeros(8, bool)
    mask[[2, 5]] = True
    assert rows(mask) == "row(s) 3, 6 (2 in all)"
    with wording(Wording(flags=False, columns={"x0": 0})):
        assert rows(mask) == "X[2], X[5] (2 in all)"
    with wording(Wording(flags=False, columns={"x0": "a"})):
        assert rows(np.ones(7, bool)) == "X.iloc[0], X.iloc[1], X.iloc[2], X.iloc[3], X.iloc[4], ... (7 in all)"
    (tmp_path / "d.csv").write_text("when,x,label\n" + "".join(f"{w},{i},{'ab'[i % 2]}\n" for i, w in enumerate(when)))
    with pytest.raises(DataError, match=r"other values \(row 3: '31/02/2024', row 6: 'soon-ish'\)"):
        fpt.build(data=str(tmp_path / "d.csv"), body=tiny_bert_dir, **FAST)


def test_a_dataframes_rows_are_named_by_position_from_0(tab_run, tiny_bert_dir):
    """model.predict(df) named df.iloc[1]'s cell 'column 'x1', row 2' and fpt.build(data=df) its rows 'row(s) 1, 2'
    (counted from 1, as a file's under its header), where the estimators say X.iloc[1]: a DataFrame given in Python
    now has its rows named by position from 0, as iloc reads them; a file's stay as they were."""
    import pandas as pd

    import fpt
    from fpt.errors import DataError, SchemaError

    model = fpt.load(tab_run)
    with pytest.raises(SchemaError) as refused:
        model.predict(pd.DataFrame({"x1": [1.0, 2.0, 3.0], "x2": ["1", "2", "abc"]}, index=[10, 20, 30]))
    assert str(refused.value).startswith("inputs: inputs.iloc[2]['x2']: 'abc' is not a number")
    with pytest.raises(DataError) as refused:
        model.score(pd.DataFrame({"x1": [1.0, 2.0, 3.0], "x2": [1.0, 2.0, 3.0], "label": ["a", None, None]}))
    assert str(refused.value).startswith("inputs: target column 'label' is missing on inputs.iloc[1], inputs.iloc[2] "
                                         "(2 in all)")
    n = 24
    frame = pd.DataFrame({"x": np.arange(n) * 1.0, "label": [None, None] + ["a", "b"] * 11})
    with pytest.raises(DataError) as refused:
        fpt.build(data=frame, target="label", body=tiny_bert_dir, **FAST)
    assert str(refused.value).startswith("the DataFrame: target column 'label' is missing on data.iloc[0], "
                                         "data.iloc[1] (2 in all)")
    with pytest.raises(DataError) as refused:
        fpt.build(data=(frame[["x"]].assign(x=[np.inf] + [1.0] * (n - 1)), np.arange(n) % 2), body=tiny_bert_dir,
                  **FAST)
    assert "holds infinite values on X.iloc[0] (1 in all)" in str(refused.value), str(refused.value)


def test_a_named_index_written_by_to_csv_is_read_as_the_rows_id(tab_run, tmp_path, capsys):
    """df.to_csv('x.csv') of a frame whose index is named writes 'id,x1,x2': fpt predict refused it ('column 'id' was
    not a feature'), where the same file with the index unnamed was read, its index written back beside the
    predictions. A first column that was no feature and holds a different id (whole number or text) on every row is
    now read so too, with a note; any other column that was no feature is still refused."""
    import pandas as pd

    import fpt
    from fpt.cli import main
    from fpt.data.inputs import RowIdColumn
    from fpt.errors import SchemaError

    frame = pd.DataFrame({"x1": [1.0, 2.0, 3.0], "x2": [0.5, 1.0, 2.0]})
    frame.to_csv(tmp_path / "plain.csv", index=False)
    expected = pd.read_csv(tmp_path / "plain.csv")
    model = fpt.load(tab_run)
    for ids in ([0, 1, 2], ["r1", "r2", "r3"]):
        frame.set_axis(ids).rename_axis("id").to_csv(tmp_path / "named.csv")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            np.testing.assert_array_equal(model.predict(str(tmp_path / "named.csv")), model.predict(expected))
        assert [w.category for w in caught] == [RowIdColumn], [str(w.message) for w in caught]
        assert main(["predict", str(tab_run), str(tmp_path / "named.csv"), "--out", str(tmp_path / "p.csv"),
                     "--force"]) == 0
        out = pd.read_csv(tmp_path / "p.csv")
        assert list(out.columns[:2]) == ["id", "prediction"] and out["id"].tolist() == ids
        assert "column 'id', the first, was not a feature when the model was trained" in capsys.readouterr().err
    # refused as before: a measurement (real values), a repeated value, an extra column that is not the first
    for table in ("id,x1,x2\n0.5,1,2\n1.5,3,4\n", "id,x1,x2\n7,1,2\n7,3,4\n", "x1,id,x2\n1,0,2\n3,1,4\n"):
        (tmp_path / "bad.csv").write_text(table)
        with pytest.raises(SchemaError, match="column 'id' was not a feature when the model was trained; drop it"):
            model.predict(str(tmp_path / "bad.csv"))

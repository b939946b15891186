"""Round 15 of the hostile-input cases: what earlier rounds found but left (a Predictor's rows of arrays, lists and
dicts named as its caller indexes them, ...). Each case failed before its fix (the commit that added it says how)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from hostile_helpers import FAST, dna_run


def test_a_predictors_arrays_lists_and_dicts_name_rows_as_the_caller_indexes_them(tab_run, tmp_path):
    """predict(X) of an array, a list of rows, a dict of columns or a list of records said 'column 'x1', row 3' of
    X[2] (a file's row under its header, from 1), where a DataFrame's was already inputs.iloc[2]['x1'] and the
    estimators' X[2, 0]: each is now named as the caller indexes it, from 0; a file's rows are as they were."""
    import fpt
    from fpt.errors import SchemaError

    p = fpt.load(tab_run)
    fine = [[1.0, 2.0], [1.0, 2.0]]
    said = {
        "inputs[2, 0]: inf is infinite": np.array([*fine, [np.inf, 1.0]]),
        "inputs[2][0]: 'x' is not a number": [*fine, ["x", 1.0]],
        "inputs['x1'][2]: 'x' is not a number": {"x1": [1.0, 2.0, "x"], "x2": [1.0, 2.0, 3.0]},
        "inputs[2]['x1']: 'x' is not a number": [{"x1": 1.0, "x2": 2.0}] * 2 + [{"x1": "x", "x2": 2.0}],
        "inputs['label'][1]: label 'zz' is not one of the model's classes": {"x1": [1.0, 2.0], "x2": [1.0, 2.0],
                                                                            "label": ["a", "zz"]},
    }
    for words, X in said.items():
        with pytest.raises(SchemaError) as refused:
            p.predict(X)
        assert str(refused.value).startswith(f"inputs: {words}"), str(refused.value)
    import pandas as pd

    with pytest.raises(SchemaError, match=r"^inputs: inputs\.iloc\[1\]\['label'\]: label 'zz'"):
        p.predict(pd.DataFrame(said["inputs['label'][1]: label 'zz' is not one of the model's classes"]))
    (tmp_path / "bad.csv").write_text("x1,x2,label\n1,2,a\n1,2,zz\n")  # a file's: row 2 under its header, as before
    with pytest.raises(SchemaError, match=r": target 'label', row 2: label 'zz'"):
        p.predict(str(tmp_path / "bad.csv"))


def test_a_sequence_predictors_list_of_texts_names_the_text_by_its_index(tiny_bert_dir, tmp_path):
    """predict(texts) named a text holding none of the model's symbols 'column 'seq', row 2' of texts[1]."""
    import fpt
    from fpt.errors import SchemaError

    run, seqs = dna_run(tmp_path, tiny_bert_dir)
    with pytest.raises(SchemaError, match=r"^inputs: inputs\[1\]: "):
        fpt.load(run).predict([seqs[0], "!!!!"])


def test_build_reads_texts_and_labels_as_the_estimators_do(tiny_bert_dir, tmp_path):
    """fpt.build(data=(texts, labels)) refused a list of strings ('arrays hold numbers: give the texts as a table's
    column') where FPTClassifier().fit(texts, labels) trains on them: now the same path, a table of one text column
    read as symbol sequences, whose model predicts a list of texts; a text's error names X[i] as the caller indexes."""
    import fpt
    from fpt.errors import DataError

    texts = ["ACGT" * (i % 3 + 1) if i % 2 else "TTGA" * (i % 4 + 1) for i in range(24)]
    labels = ["a" if i % 2 else "b" for i in range(24)]
    for X in (texts, np.array(texts), np.array(texts, dtype=object)):
        exp = fpt.build(data=(X, labels), body=tiny_bert_dir, **FAST)
        assert exp.data.fitted["modality"] == "sequence" and exp.data.fitted["features"] == ["text"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fpt.fit(exp, out=tmp_path / "run", progress=False)
    assert len(fpt.load(tmp_path / "run").predict(texts[:4])) == 4
    with pytest.raises(DataError, match=r"X has 24 rows but y has 23 targets"):
        fpt.build(data=(texts, labels[:-1]), body=tiny_bert_dir, **FAST)


def test_build_reads_a_multi_indexed_x_with_a_y_per_row_as_its_table(tiny_bert_dir, tmp_path):
    """fpt.build(data=(X, y)) with X indexed by (store, day) and one y per row went the arrays path: its column names
    and y's name lost, the features recorded as none. It is the table with y beside it, as the estimators and
    data=X.assign(label=...) read it (a y of the default index beside X's two levels too, which pandas' isin of the two
    indexes refuses); the model predicts such a DataFrame by its column names."""
    import pandas as pd

    import fpt

    rng = np.random.default_rng(0)
    index = pd.MultiIndex.from_product([["s1", "s2", "s3"], range(8)], names=["store", "day"])
    X = pd.DataFrame({"p": rng.normal(size=24), "q": rng.normal(size=24), "c": ["u", "v", "w"] * 8}, index=index)
    for y in (pd.Series(["a", "b"] * 12, name="label"), pd.Series(["a", "b"] * 12, name="label", index=index)):
        exp = fpt.build(data=(X, y), body=tiny_bert_dir, **FAST)
        table = fpt.build(data=X.assign(label=y.to_numpy()), body=tiny_bert_dir, **FAST)
        assert exp.data.fitted["features"] == table.data.fitted["features"] == ["p", "q", "c"]
        assert exp.data.fitted == table.data.fitted and exp.data.fitted["targets"] == ["label"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fpt.fit(exp, out=tmp_path / "run", progress=False)
    assert len(fpt.load(tmp_path / "run").predict(X.iloc[:3])) == 3


def test_a_sequence_models_characters_are_what_a_reader_sees_as_one():
    """A text of emoji or combining marks was read per code point: a flag was two symbols (each a regional indicator
    no reader sees alone), a thumbs-up with its skin tone two, a family of joined emoji five, 'q̃' (no composed form)
    two. A character is now an extended grapheme cluster; a run saved before (no unit in data.json) reads code points,
    as its vocabulary was made."""
    import json

    from fpt.data.modalities import from_json
    from fpt.data.tokenisers import SequenceTokens

    texts = np.array(["🇫🇷👍🏽ab", "👨\u200d👩\u200d👧q\u0303", "नमस्ते", "ACGT"], dtype=object)
    tok = from_json(json.loads(json.dumps(SequenceTokens.fit(texts, "chars", None).to_json())))
    assert {"🇫🇷", "👍🏽", "👨\u200d👩\u200d👧", "q\u0303"} <= set(tok.vocab)
    assert not {"\U0001f1eb", "\U0001f3fd", "\u200d", "\u0303"} & set(tok.vocab)  # no half of a character
    x, lengths = tok({"t": texts})
    assert lengths.tolist() == [4, 2, 3, 4] and tok.max_len == 4 and int((x == 1).sum()) == 0
    old = SequenceTokens.fit(texts, "chars", None).to_json()
    del old["unit"]  # data.json of a run saved before the field
    old["max_len"] = 8
    assert from_json(old)({"t": texts[:1]})[1].tolist() == [6]  # code points, as it was


def test_the_code_points_that_join_clusters_are_all_in_the_planes_searched():
    """graphemes() reads a text holding none of _joining()'s code points as its code points (\\X took 50 times as
    long); that set searches planes 0, 1 and 14 only, which must hold every code point of those classes."""
    import regex

    from fpt.data.tokenisers import _joining, graphemes

    joins = regex.compile(r"[\r\p{GCB=Extend}\p{GCB=ZWJ}\p{GCB=SpacingMark}\p{GCB=Prepend}"
                          r"\p{GCB=Regional_Indicator}\p{GCB=L}\p{GCB=V}\p{GCB=T}]")
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    assert set(joins.findall(every)) == _joining()
    for text in ("é漢字かな", "🇫🇷", "e\u0301", "x\r\ny", "한국어"):
        assert graphemes(text) == regex.findall(r"\X", text)


def _column_notes(fit) -> list[str]:
    from fpt.data.base import ColumnNote

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return [str(w.message) for w in caught if issubclass(w.category, ColumnNote)]


def test_the_estimators_give_fpt_trains_notes_on_the_columns(tiny_bert_dir):
    """FPTClassifier.fit said only the note of a column of no value, where fpt train and fpt.build of the same table
    said an id-like column, a row number, numbers written '$1,234' and times of day too. Now the same notes, each
    column and fix as the estimator's caller names them (X[:, 1], np.delete(X, 1, axis=1) of an array)."""
    import pandas as pd

    import fpt
    from fpt.sklearn import FPTClassifier

    n = 40
    frame = pd.DataFrame({"x": np.random.default_rng(0).normal(size=n), "ident": [f"id{i:04d}" for i in range(n)],
                          "rowno": np.arange(n), "money": [f"${1000 + i * 7:,}" for i in range(n)],
                          "hm": [f"{i % 24}:{i % 60:02d}" for i in range(n)], "empty": [np.nan] * n})
    y = np.array(["a", "b"] * (n // 2))
    fast = dict(body=tiny_bert_dir, init="random", steps=2, eval_every=2, batch_size=8, device="cpu")
    built = _column_notes(lambda: fpt.build(data=(frame, pd.Series(y, name="label")), **fast))
    fitted = _column_notes(lambda: FPTClassifier(**fast).fit(frame, y))
    assert len(built) == len(fitted) == 5  # ident, rowno, money, hm, empty
    # in the estimator's words: its X, and X.drop for fpt's drop_columns
    said = [re.sub(r"drop_columns='(\w+)'", r"X.drop(columns=['\1'])",
                   note.replace("the DataFrame: ", "FPTClassifier.fit (X, y): ")) for note in built]
    assert sorted(fitted) == sorted(said)
    X = np.c_[frame["x"], np.arange(n)]  # an array's row number: X[:, 1], as the caller indexes it
    (note,) = _column_notes(lambda: FPTClassifier(**fast).fit(X, y))
    assert note == ("FPTClassifier.fit (X, y): X[:, 1] holds whole numbers counting through the rows (a row number "
                    "or an id?): as a number it can only tell rows apart; if it is not a feature, leave it out with "
                    "np.delete(X, 1, axis=1)")


def test_a_columns_nested_and_infinite_cells_are_refused_in_one_way_wherever_read(tiny_bert_dir):
    """fpt.build's DataFrame reader and the table reader's column() refused nested and infinite cells each in words
    of their own (near-copies): an estimator's DataFrame said 'column 'c': an infinite value; replace it with a
    finite number' naming no row, and 'holds nested values (dicts, the first at X.iloc[1]; 12 in all)'. One
    implementation (fpt.data.cells) now names the rows wherever a column is read."""
    import pandas as pd

    import fpt
    from fpt.errors import DataError
    from fpt.sklearn import FPTClassifier

    n = 24
    fast = dict(body=tiny_bert_dir, init="random", steps=2, eval_every=2, batch_size=8, device="cpu")
    inf = pd.DataFrame({"x": np.arange(n) * 1.0, "c": np.array([1.0, 2, -np.inf, 3] * 6, dtype=object)})
    rows = "X.iloc[2], X.iloc[6], X.iloc[10], X.iloc[14], X.iloc[18], ... (6 in all)"
    with pytest.raises(DataError) as refused:
        FPTClassifier(**fast).fit(inf, np.arange(n) % 2)
    assert str(refused.value) == (f"FPTClassifier.fit (X, y), column 'c' holds infinite values on {rows}; replace "
                                  "them with finite numbers or leave them missing (NaN)")
    with pytest.raises(DataError) as refused:
        fpt.build(data=inf.assign(label=np.arange(n) % 2), **fast)
    assert str(refused.value) == (f"the DataFrame: column 'c' holds infinite values on {rows.replace('X.', 'data.')}"
                                  "; replace them with finite numbers or leave them missing (NaN)")

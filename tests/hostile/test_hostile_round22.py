"""Round 22 of the hostile-input cases: uint64 ids near 2**64 (files, DataFrames, arrays), a wide-integer CSV's open
file, UCR/UEA lines missing their label, a .ts directive said twice, a long table's repeated time. Each case failed
before its fix (the commit that added it says how)."""

from __future__ import annotations

import warnings

import numpy as np
from hostile_helpers import FAST


def test_whole_numbers_of_uint64s_top_half_are_names_not_one_value(tiny_bert_dir, tmp_path):
    """uint64 whole numbers of 2**63 and up (a hash, a long id: 18446744073709551615) were read as float64 values,
    where float64's steps are 4,096: distinct ids merged into one value (a constant feature, one class of two),
    without a word. Whole numbers beyond 64 bits are read as text, as written (names: categories, class labels); these
    are too, from a file (pandas reads a CSV's as uint64; a Parquet file's uint64 column) and from a DataFrame of uint64
    or of Python ints."""
    import pandas as pd

    import fpt

    n = 24
    ids, labels = (np.array([2**64 - 1 - i % k for i in range(n)], dtype=np.uint64) for k in (3, 2))
    x1 = np.random.default_rng(0).normal(size=n)
    frame = pd.DataFrame({"id": ids, "x1": x1, "label": labels})
    frame.to_csv(tmp_path / "ids.csv", index=False)
    frame.to_parquet(tmp_path / "ids.parquet")
    wide = pd.DataFrame({"id": pd.Series([2**64 + i % 3 for i in range(n)], dtype=object), "x1": x1, "label": list("ab" * 12)})
    for data in (str(tmp_path / "ids.csv"), str(tmp_path / "ids.parquet"), frame, wide):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            info = fpt.build(data=data, body=tiny_bert_dir, **FAST).data.info
        assert info["tokenisation"]["categories_kept"] == {"id": 3}, info  # 3 ids, not one value
        if data is not wide:
            assert info["classes"] == {"label": [str(2**64 - 2), str(2**64 - 1)]}
    # a Predictor reads such a DataFrame's ids as the categories they were trained as
    fpt.fit(fpt.build(data=frame, body=tiny_bert_dir, **FAST), out=tmp_path / "run", progress=False)
    predicted = fpt.load(tmp_path / "run").predict(frame.drop(columns="label"))
    assert set(predicted) <= {str(2**64 - 2), str(2**64 - 1)} and len(predicted) == n


def test_a_csv_of_whole_numbers_beyond_64_bits_leaves_no_file_open(tmp_path):
    """The CSV reader reads a file again when a chunk shows whole numbers beyond 64 bits (read as text); it broke off
    the first read leaving pandas' chunk reader, and its text wrapper of the file, to the garbage collector: a
    ResourceWarning 'unclosed file' for every such file read."""
    import gc

    from fpt.data.tables import read_columns

    path = tmp_path / "wide.csv"
    path.write_text("id,x1,label\n" + "".join(f"{2**64 + i},{i / 7:.3f},{'ab'[i % 2]}\n" for i in range(6)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        columns = read_columns(path)
        gc.collect()
    assert columns["id"].tolist() == [str(2**64 + i) for i in range(6)]
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)], [str(w.message) for w in caught]


def test_a_series_missing_its_label_is_refused_not_trained_as_a_class(tmp_path):
    """A UCR/UEA line whose label is missing (a .ts line ending in ':' or ':?', a UCR .tsv's empty or NaN first field,
    as pandas writes a missing label) trained a class '' or 'NaN' of its own, without a word, where a table's missing
    target is refused. It is refused naming the file, the line and the fix; a file of series to predict still reads."""
    import pytest

    from fpt.data.timeseries import read_ts, read_ucr_tsv
    from fpt.errors import DataError

    rng = np.random.default_rng(0)
    points = [",".join(f"{v:.3f}" for v in rng.normal(size=6)) for _ in range(4)]
    header = "@problemName x\n@univariate true\n@equalLength true\n@classLabel true\n@data\n"
    for last, shown in (("", "none"), ("?", "'?', missing")):
        ts = tmp_path / "x_TRAIN.ts"
        ts.write_text(header + "".join(f"{p}:{'ab'[i % 2] if i != 2 else last}\r\n" for i, p in enumerate(points)))
        with pytest.raises(DataError) as refused:
            read_ts(ts)
        assert str(refused.value) == (f"{ts}, line 8: the series' target (after the last ':') is {shown}; a target "
                                      "cannot be missing: give it, or drop the line")
        assert len(read_ts(ts, targets_needed=False)[0]) == 4
    for label, shown in (("", "none"), ("NaN", "'NaN', missing")):
        tsv = tmp_path / "x_TRAIN.tsv"
        tsv.write_text("".join(f"{'12'[i % 2] if i != 1 else label}\t{p.replace(',', chr(9))}\n"
                               for i, p in enumerate(points)))
        with pytest.raises(DataError) as refused:
            read_ucr_tsv(tsv)
        assert str(refused.value) == (f"{tsv}, line 2: the series' target (first on the line) is {shown}; a target "
                                      "cannot be missing: give it, or drop the line")
        assert len(read_ucr_tsv(tsv, targets_needed=False)[0]) == 4


def test_a_ts_directive_said_twice_otherwise_is_refused_not_overridden(tmp_path):
    """A .ts header that says a directive twice with different values (a header pasted above another, an edited
    copy: @classLabel true a b, then @classLabel true a c) was read by its last, without a word: the first's classes
    were then refused as labels @classLabel does not declare, and @equalLength false after true let unequal series
    through. Both lines are named; the same directive said twice alike reads as once."""
    import pytest

    from fpt.data.timeseries import read_ts
    from fpt.errors import DataError

    lines = "1,2,3:a\n4,5,6:b\n"
    path = tmp_path / "x_TRAIN.ts"
    path.write_text("@problemName x\n# a comment\n@classLabel true a b\n@univariate true\n@classLabel true a c\n"
                    "@data\n" + lines)
    with pytest.raises(DataError) as refused:
        read_ts(path)
    assert str(refused.value) == (f"{path}, line 5: @classLabel 'true a c', but line 3 says @classLabel 'true a b'; "
                                  "keep the one that is true")
    path.write_text("@classLabel true a b\n@classLabel  true a b \n@data\n" + lines)
    assert read_ts(path)[1].tolist() == ["a", "b"]


def test_a_long_tables_repeated_time_names_both_rows_as_the_caller_counts_them(tiny_bert_dir, tmp_path):
    """A long-format table (a row per time point, series_id=id,t) with a time repeated in a series named the second
    row alone, as 'row 193' counted from 1 whatever was given: a DataFrame's data.iloc[192] (its rows named from 0
    everywhere else), a file's row under its header without its blank lines (row 5 of the file's row 6). Both rows
    are named as the caller counts them."""
    import pandas as pd
    import pytest

    import fpt
    from fpt.errors import DataError

    rng = np.random.default_rng(0)
    frame = pd.DataFrame([{"id": s, "t": t, "v": rng.normal(), "label": "ab"[s % 2]} for s in range(12)
                          for t in range(4)])
    doubled = pd.concat([frame, frame.iloc[[2]]], ignore_index=True)
    fix = "give one row per time point, a column per channel"
    with pytest.raises(DataError) as refused:
        fpt.build(data=doubled, series_id="id,t", body=tiny_bert_dir, **FAST)
    assert str(refused.value) == f"the DataFrame: series 0 has two rows at t = 2 (data.iloc[2] and data.iloc[48]); {fix}"
    path = tmp_path / "long.csv"
    text = doubled.to_csv(index=False).splitlines()
    path.write_text("\n".join([*text[:3], "", *text[3:]]) + "\n")  # a blank line above the first of the two
    with pytest.raises(DataError) as refused:
        fpt.build(data=str(path), series_id="id,t", body=tiny_bert_dir, **FAST)
    assert str(refused.value) == f"{path}: series 0 has two rows at t = 2 (row 4 and row 50); {fix}"


def test_an_array_of_uint64_ids_is_refused_not_merged(tiny_bert_dir):
    """fpt.build(data=(X, y)) of a uint64 array holding ids near 2**64 read them as float64 values, 3 distinct ids one
    constant feature, without a word. An array's columns are numbers (no categories), so the array is refused naming
    the first such cell and the fix: a DataFrame of the same columns reads them as categories."""
    import pandas as pd
    import pytest

    import fpt
    from fpt.errors import DataError

    n = 24
    X = np.stack([np.arange(n, dtype=np.uint64), np.array([2**64 - 1 - i % 3 for i in range(n)], dtype=np.uint64)], 1)
    y = np.arange(n) % 2
    with pytest.raises(DataError) as refused:
        fpt.build(data=(X, y), body=tiny_bert_dir, **FAST)
    assert str(refused.value).startswith(f"data arrays (X, y): X[0, 1] is {2**64 - 1}, a whole number of 2**63 or more")
    info = fpt.build(data=(pd.DataFrame(X, columns=["k", "id"]), y), body=tiny_bert_dir, **FAST).data.info
    assert info["tokenisation"]["categories_kept"] == {"id": 3}
    small = fpt.build(data=(X[:, :1], y), body=tiny_bert_dir, **FAST).data.info  # uint64 below 2**63: numbers
    assert small["tokenisation"]["tokens"].startswith("one per feature: 1 (1 numeric")


def test_the_estimators_refuse_whole_numbers_of_uint64s_top_half(tiny_bert_dir):
    """fpt.build reads a DataFrame's uint64 ids of 2**63 and up as categories and refuses an array's, but the
    estimators' fit and predict passed them to scikit-learn's validate_data, which made them float64: three distinct
    ids one value, without a word. Refused, naming the column (the array's cell) and the fix; given as text, they are
    read as categories."""
    import pandas as pd
    import pytest

    from fpt.errors import DataError
    from fpt.sklearn import FPTClassifier

    fields = {k: v for k, v in {**FAST, "body": tiny_bert_dir}.items() if k != "baselines"}
    n = 24
    ids = np.array([2**64 - 1 - i % 3 for i in range(n)], dtype=np.uint64)
    y = np.arange(n) % 2
    X = pd.DataFrame({"id": ids, "x1": np.random.default_rng(0).normal(size=n)})
    with pytest.raises(DataError, match=r"^FPTClassifier\.fit: column 'id' holds 18446744073709551615, a whole number "
                                        r"of 2\*\*63 or more.*\(X\['id'\] = X\['id'\]\.astype\(str\)\)$"):
        FPTClassifier(**fields).fit(X, y)
    with pytest.raises(DataError, match=r"^FPTClassifier\.fit: X\[0, 0\] is 18446744073709551615, a whole number"):
        FPTClassifier(**fields).fit(np.stack([ids, ids // np.uint64(2)], axis=1), y)
    as_text = X.assign(id=X["id"].astype(str))
    model = FPTClassifier(**fields).fit(as_text, y)
    assert model.predict(as_text).shape == (n,)
    with pytest.raises(DataError, match=r"^FPTClassifier\.predict: column 'id' holds 18446744073709551615"):
        model.predict(X)
    small = X.assign(id=np.arange(n, dtype=np.uint64))  # uint64 below 2**63 stays numbers
    assert FPTClassifier(**fields).fit(small, y).predict(small).shape == (n,)

"""Round 22 of the hostile-input cases: uint64 ids near 2**64, ... Each case failed before its fix (the commit that
added it says how)."""

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

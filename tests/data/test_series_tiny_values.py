"""Series values below float32's smallest normal number (1.2e-38), as a float64 file or array can hold them (1e-315):
fpt reads every series as float32, and the cast made them 0 without a word, so a series at that scale trained as a
constant. Each test failed before the fix (no error, no note: a channel of zeros)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fpt.data import load
from fpt.data.timeseries import TinyValues, check_series, narrowed, read_ts
from fpt.errors import DataError, SchemaError


def test_a_ts_file_at_a_scale_float32_cannot_hold_is_refused_naming_the_rescaling(tmp_path):
    path = tmp_path / "T_TRAIN.ts"
    rows = [",".join(f"{(i + j) * 1e-316:.3e}" for j in range(5)) + f":{'ab'[i % 2]}" for i in range(8)]
    path.write_text("@problemName t\n@univariate true\n@classLabel true a b\n@data\n" + "\n".join(rows) + "\n")
    with pytest.raises(DataError) as info:
        read_ts(path)  # was: 8 series of zeros, trained as a constant
    message = str(info.value)
    assert "\n" not in message and "T_TRAIN.ts: 39 of 40 values below float32's smallest normal number" in message
    assert "as small as 1e-316" in message and "multiply them by 1e" in message


def test_tiny_values_beside_larger_ones_are_a_note_and_the_rest_is_read(tmp_path):
    path = tmp_path / "U_TRAIN.tsv"
    path.write_text("".join(f"{i % 2 + 1}\t{1e-320 if i == 3 else 0.5}\t{i}\t2.5\n" for i in range(8)))
    with pytest.warns(TinyValues, match=r"U_TRAIN\.tsv: 1 of 24 values below float32's smallest normal .*\(up to 7\)"):
        raw = load(str(path))
    assert raw.splits["train"].x[3].dtype == np.float32 and raw.splits["train"].x[3][0, 1] == 3


def test_arrays_tables_and_inputs_at_predict_are_checked_the_same_way(tmp_path):
    X = np.full((6, 1, 4), 1e-320) * np.arange(1, 7)[:, None, None]
    with pytest.raises(DataError, match=r"X: 24 of 24 values below float32's smallest normal"):
        narrowed(list(X), "X")
    wide = tmp_path / "wide.csv"
    pd.DataFrame({"p1": [1e-320, 2e-320] * 4, "p2": [3e-320, 1e-321] * 4, "y": [0, 1] * 4}).to_csv(wide, index=False)
    with pytest.raises(DataError, match=r"wide\.csv.*values below float32's smallest normal"):
        load(str(wide), target="y", modality="timeseries")
    two = [np.array([[1e-320, 2e-320, 3e-320], [0.5, 1.0, 1.5]])]  # channel 2 is fine; channel 1 at 1e-320 is not
    with pytest.raises(DataError, match=r"inputs, channel 1: 3 of 3 values"):
        narrowed(two, "inputs")
    from types import SimpleNamespace

    schema = SimpleNamespace(prep=SimpleNamespace(tokeniser=SimpleNamespace(channels=1)), info={})
    with pytest.raises(SchemaError, match=r"new: 4 of 4 values below float32's smallest normal"):
        check_series(np.array([[1e-320, 2e-320, 3e-320, 4e-320]]), schema, "new")


def test_in_memory_lists_and_sktime_frames_are_checked_before_the_cast():
    """A list of series of different lengths and sktime's nested and multi-index frames were cast to float32 as they
    were recognised, before the check, so their 1e-320 values were zeros without a word (failed before the fix)."""
    from fpt.data.arrays import series_frame, series_list
    from fpt.data.timeseries import series_from_array

    ragged = [np.full(3 + i, 1e-320) * (i + 1) for i in range(4)]
    with pytest.raises(DataError, match=r"X: 18 of 18 values below float32's smallest normal"):
        series_from_array(series_list(ragged), "timeseries", 0, "X")
    nested = pd.DataFrame({"dim_0": [pd.Series(np.full(4, 1e-320) * (i + 1)) for i in range(3)]})
    with pytest.raises(DataError, match=r"X: 12 of 12 values below"):
        series_from_array(series_frame(nested, "X"), "timeseries", 0, "X")
    index = pd.MultiIndex.from_product([range(3), range(4)], names=["instance", "time"])
    multi = pd.DataFrame({"dim_0": np.full(12, 1e-320)}, index=index)
    with pytest.raises(DataError, match=r"X: 12 of 12 values below"):
        series_from_array(series_frame(multi, "X"), "timeseries", 0, "X")
    kept = series_from_array(series_list([np.arange(3.0), np.arange(5.0)]), "timeseries", 0, "X")
    assert [s.dtype for s in kept] == [np.float32, np.float32] and kept[1][0, 4] == 4

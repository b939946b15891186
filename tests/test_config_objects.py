"""Config fields given Python objects rather than settings: data held in memory, arrays, paths, NumPy scalars. Each
error is one line naming the field and the fix, and never prints the user's data (a DataFrame's repr is its rows)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

import fpt
from fpt.config import RunConfig, from_dict
from fpt.errors import ConfigError, show


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"x1": np.arange(30.0) + 0.25, "label": np.array(["a", "b"])[np.arange(30) % 2]})


@pytest.mark.parametrize("kind", ["frame", "arrays", "tensor"])
def test_train_run_given_data_in_memory_refuses_in_one_line_naming_the_fix(tmp_path, kind):
    data, shown = {
        "frame": (_frame(), "a pandas DataFrame of shape (30, 2)"),
        "arrays": ((np.full((30, 2), 7.25), np.arange(30) % 2),
                   "(a numpy ndarray of shape (30, 2), a numpy ndarray of shape (30,))"),
        "tensor": (torch.full((30, 2), 7.25), "a torch Tensor of shape (30, 2)"),
    }[kind]
    with pytest.raises(ConfigError) as info:  # was: the DataFrame's rows over 10 lines, and no fix
        fpt.train_run({"data": data, "target": "label", "steps": 2}, tmp_path / "run", say=None)
    assert str(info.value) == (f"train_run(): field 'data' is {shown}, but train_run reads data from a path (a file, "
                               "a folder or a dataset id); save it and give the path, or train it with "
                               "fpt.fit(fpt.build(data=...), out=...)")
    assert not (tmp_path / "run").exists()


def test_a_field_given_an_array_or_frame_names_its_kind_and_shape_not_its_values():
    cases = {"steps": (np.arange(3), "an integer", "a numpy ndarray of shape (3,)"),
             "lr": (_frame(), "a number", "a pandas DataFrame of shape (30, 2)"),
             "body": (torch.zeros(2, 3), "a string", "a torch Tensor of shape (2, 3)")}
    for name, (value, expected, shown) in cases.items():
        with pytest.raises(ConfigError) as info:
            from_dict(RunConfig, {name: value}, where="train_run()")
        assert str(info.value) == f"train_run(): field {name!r}: expected {expected}, got {shown}"


def test_show_keeps_any_objects_repr_on_one_line():
    class Lines:
        def __repr__(self) -> str:
            return "first\n  second\nthird"

    assert show(Lines()) == "first second third"  # was three lines, in any error naming such a value
    assert show(np.int64(3)) == "np.int64(3)"  # a NumPy scalar holds one value: shown as it is


def test_a_run_config_built_with_objects_refuses_naming_the_field():
    with pytest.raises(ConfigError) as info:  # was: pandas' "truth value of a DataFrame is ambiguous"
        RunConfig(data=_frame())
    assert str(info.value) == ("config field 'data' is a pandas DataFrame of shape (30, 2), where a field holds one "
                               "setting (text, a number, true/false); give a path (a file, a folder or a dataset id), "
                               "or data in memory to fpt.build(data=...)")
    with pytest.raises(ConfigError) as info:  # fpt.build(config, steps=...) replaces fields so
        replace(RunConfig(), steps=np.arange(3))
    assert str(info.value) == ("config field 'steps' is a numpy ndarray of shape (3,), where a field holds one setting "
                               "(text, a number, true/false); give one value for steps")
    with pytest.raises(ConfigError) as info:  # was taken, and read as the one column "['a', 'b']"
        RunConfig(data="d.csv", drop_columns=["a", "b"])
    assert str(info.value) == ("config field 'drop_columns' is ['a', 'b'], where a field holds one setting (text, a "
                               "number, true/false); give the column names comma-separated (e.g. 'a,b')")


def test_a_path_object_and_numpy_numbers_are_read_as_their_values(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("x1,label\n1,a\n")
    config = from_dict(RunConfig, {"data": Path(data), "steps": np.int64(3), "lr": np.float32(0.5)}, where="t")
    # were "expected a string, got PosixPath(...)" and "expected an integer, got np.int64(3)"
    assert (config.data, config.steps, config.lr) == (str(data), 3, 0.5)
    assert type(config.steps) is int and type(config.lr) is float

"""fpt.data.read_once: a choice between fits (and its fold runs) reads the data's files once, and what it builds from
the one reading is what a fresh reading builds."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from fpt.config import RunConfig
from fpt.data import load, read_once, tables, timeseries
from fpt.select import AUTO, choose_fit, cross_validate
from fpt.tasks.user_data import DataOptions, task_from_loaded


def _ts(path, n=30, length=24):
    rng = np.random.default_rng(1)
    lines = ["@problemName t", "@univariate true", "@equalLength true", "@classLabel true a b", "@data"]
    lines += [",".join(f"{v:.4f}" for v in rng.normal(size=length) + (i % 2)) + f":{'ab'[i % 2]}" for i in range(n)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _counting(monkeypatch, module, name):
    calls = []
    real = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a, **k: calls.append(a) or real(*a, **k))
    return calls


def test_inside_the_block_a_path_is_read_once_per_set_of_options(tiny_tables, monkeypatch):
    path = tiny_tables.classification("c.csv", n=40, kinds="uv")
    calls = _counting(monkeypatch, tables, "read_table")
    with read_once():
        first = load(str(path))
        assert load(str(path)) is first and len(calls) == 1
        assert load(str(path), target="x1") is not first and len(calls) == 2  # other options: read again
        with read_once():  # nested: the outer block's readings
            assert load(str(path)) is first and len(calls) == 2
    assert load(str(path)) is not first and len(calls) == 3  # outside: read every time


def test_tasks_built_from_one_reading_are_those_of_fresh_readings(tmp_path, tiny_tables):
    """Nothing writes into the RawData one reading hands to every build: each task's tokens, targets and record are
    those of the task built from a reading of its own (tables and series; the plain split and three folds)."""
    for path in (tiny_tables.classification("c.csv", n=40, kinds="uv"), _ts(tmp_path / "s_TRAIN.ts")):
        variants = [DataOptions(data=str(path))] + [DataOptions(data=str(path), folds=3, fold=f) for f in range(3)]
        fresh = [task_from_loaded(load(str(path)), options, 0) for options in variants]
        with read_once():
            shared = [task_from_loaded(load(str(path)), options, 0) for options in variants]
        for a, b in zip(shared, fresh, strict=True):
            assert a.info == b.info
            assert torch.equal(a.train.data.x, b.train.data.x) and torch.equal(a.train.data.y, b.train.data.y)
            assert a.eval_sets.keys() == b.eval_sets.keys()
            for name, batch in b.eval_sets.items():
                assert torch.equal(a.eval_sets[name].x, batch.x) and torch.equal(a.eval_sets[name].y, batch.y)


def test_choose_fit_and_cross_validation_read_the_file_once(tiny_tables, tiny_bert_dir, monkeypatch):
    path = tiny_tables.classification("c.csv", n=40)
    calls = _counting(monkeypatch, tables, "read_table")
    config = RunConfig(data=str(path), body=tiny_bert_dir, init="random", fit="auto", steps=2, eval_every=2,
                       batch_size=8, device="cpu", cf_members=1)
    choice = choose_fit(config, 3, choice=replace(AUTO, gradient_budget_s=float("inf")))
    assert len(choice.selection.candidates) == 2 and len(calls) == 1  # both candidates, 3 folds each: one reading
    cross_validate(replace(config, fit="gradient"), [{"lr": 1e-3}, {"lr": 1e-2}], 2)
    assert len(calls) == 2


def test_a_series_file_reads_the_same_numbers_value_by_value_or_at_once(tmp_path):
    """The .ts reader parses a channel in one float() loop; where any value is not a plain finite float32 number it
    reads the channel value by value, as before, so '?' and NaN are missing points and inf is named."""
    path = _ts(tmp_path / "s_TRAIN.ts")
    series, y, _ = timeseries.read_ts(path)
    lines = [line for line in path.read_text().splitlines() if not line.startswith("@")]
    slow = [np.array([[timeseries._number(v, path, 0) for v in line.split(":")[0].split(",")]], dtype=np.float32)
            for line in lines]
    assert all(np.array_equal(a, b) for a, b in zip(series, slow, strict=True)) and list(y) == ["ab"[i % 2]
                                                                                              for i in range(30)]
    texts = ["1.5", " -2e3 ", "1_000", "?", "", "NaN", "nan"]
    got = timeseries._numbers(texts, path, 1)
    np.testing.assert_array_equal(np.asarray(got, dtype=np.float64), [1.5, -2000.0, 1000.0, *[np.nan] * 4])
    for bad, words in (("inf", "not a finite number"), ("NAN", "not a finite number"), ("1e39", "not a finite number"),
                       ("abc", "is not a number")):
        try:
            timeseries._numbers(["1", bad], path, 7)
        except Exception as exc:  # noqa: BLE001 (the error is the check)
            assert f"line 7: {bad!r}" in str(exc) and words in str(exc)
        else:
            raise AssertionError(f"{bad!r} read as a number")

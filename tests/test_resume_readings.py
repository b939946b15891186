"""A run started before fpt read dates written other than ISO (03/15/2024) and text durations (1:07:00) as dates and
seconds saved those columns as text categories in its data.json. Resumed, its data was read the new way, and fpt
refused it as 'the data changed since the run started', which it had not. A resumed run now reads its columns as it
started (fpt.data.readings); a run built anew and resumed in Python is refused naming the column and the cause; and
predict reads such a run's columns as it was trained."""

from __future__ import annotations

import json
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

import fpt
import fpt.data.tables as tables
from fpt.data.base import ColumnNote
from fpt.data.modalities import from_json
from fpt.errors import CLI, DataError, SchemaError, wording
from fpt.train import resume_config

N = 40
WHEN = pd.date_range("2024-01-01 06:00", periods=N, freq="37h")
WAIT = [f"{h}:{m:02d}:00" for h, m in zip(np.arange(N) % 30, np.arange(N) * 7 % 60, strict=True)]


@pytest.fixture
def old_run(tmp_path, tiny_bert_dir, monkeypatch):
    """A run of 4 steps on a CSV of text dates and durations, its data.json as fpt wrote it before 324dadc9
    (fpt.data.date_formats, fpt.data.durations): both columns text categories, as its table reader found them
    (ISO dates only; no text durations)."""
    pd.DataFrame({"x": np.arange(N) * 0.5, "when": list(WHEN.strftime("%m/%d/%Y")), "wait": WAIT,
                  "label": ["ab"[i % 2] for i in range(N)]}).to_csv(tmp_path / "t.csv", index=False)
    find_dates = tables.find_dates
    with monkeypatch.context() as old:
        old.setattr(tables, "find_dates", lambda values, where, error, written=True: find_dates(values, where, error,
                                                                                               written=False))
        old.setattr(tables, "find_durations", lambda values, where, error: None)
        fpt.train_run({"data": str(tmp_path / "t.csv"), "body": tiny_bert_dir, "init": "random", "fit": "gradient",
                       "steps": 4, "eval_every": 2, "device": "cpu", "baselines": "none"}, tmp_path / "run", say=None)
    run = tmp_path / "run"
    saved = json.loads((run / "data.json").read_text())
    kinds = {f["name"]: f["kind"] for f in saved["tokeniser"]["features"]}
    assert kinds == {"x": "numeric", "when": "categorical", "wait": "categorical"}
    return run


def test_a_run_resumed_reads_its_columns_as_it_started(old_run):
    before = (old_run / "data.json").read_text()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        summary = fpt.train_run(None, old_run, resume=True, overrides={"steps": 8}, say=None)
    assert summary["steps"] == 8
    assert (old_run / "data.json").read_text() == before  # the same tokeniser, categories and all
    notes = [str(w.message) for w in caught if issubclass(w.category, ColumnNote)]
    assert any("t.csv: column 'when' is read as text categories, as the run read it when it started; fpt reads it "
               "as dates written '%m/%d/%Y' since (a new run reads it so)" in n for n in notes), notes
    assert any("column 'wait' is read as text categories, as the run read it when it started; fpt reads it as "
               "durations (seconds) since" in n for n in notes), notes
    assert not any("not all in one way" in n for n in notes), notes  # they are: the run read them as text


def test_a_run_built_anew_and_resumed_in_python_is_refused_naming_the_column_and_the_cause(old_run, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(old_run, copy)
    exp = fpt.build(resume_config(copy, {"steps": 8}))
    with pytest.raises(DataError, match=r"copy/data\.json: .*t\.csv reads column 'when' as dates written '%m/%d/%Y' "
                                        r"where the run read it as text categories; column 'wait' as durations "
                                        r"\(seconds\) where the run read it as text categories: fpt's reading of it "
                                        r"changed since the run started \(the data's content is the one it started "
                                        r"on\); resume it with fpt\.train_run\(None, '.*copy', resume=True\), "
                                        r"which reads the data as the run read it$"):
        fpt.fit(exp, out=copy, resume=True, progress=False)
    with pytest.raises(DataError, match=r"; resume it with fpt train --resume \S*copy, which reads the data as the run "
                                        r"read it$"), wording(CLI):  # the command line's words where it speaks
        fpt.fit(exp, out=copy, resume=True, progress=False)


def test_predict_reads_an_old_runs_columns_as_it_was_trained(old_run):
    model = fpt.load(old_run)
    saved = from_json(json.loads((old_run / "data.json").read_text())["tokeniser"])
    new = pd.DataFrame({"x": [0.5, 1.0], "when": ["01/02/2024", "01/01/2024"], "wait": ["1:07:00", "0:00:00"]})
    as_text = {c: new[c].to_numpy(dtype=np.float64 if c == "x" else object) for c in new}
    np.testing.assert_array_equal(model.tokens(new)[0].numpy(), saved(as_text)[0].numpy())
    with pytest.raises(SchemaError, match=r"inputs\.iloc\[0\]\['when'\]: category '03/15/2024' was not seen in "
                                          r"training"):
        model.predict(new.assign(when=["03/15/2024", "01/01/2024"]))

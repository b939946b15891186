"""Every path that resumes a run reads its data as the run read it (fpt.data.readings.as_run), not only fpt train
--resume: fpt reproduce's and fpt sweep's planned runs (run_planned), their Ray trials (ray_executor.trainable) and fpt
pretrain --resume built the experiment anew and were refused as 'the data changed' when fpt's reading of a column had
changed since the run started (text dates 03/15/2024 and durations 1:07:00, text categories before 324dadc9; codes
'02139', numbers before fpt.data.codes)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import warnings

import numpy as np
import pandas as pd
import pytest

import fpt
import fpt.data.tables as tables
from fpt.config import RunConfig, from_dict
from fpt.data.base import ColumnNote
from fpt.errors import DataError
from fpt.experiments.runner import Store

N = 40
WHEN = pd.date_range("2024-01-01 06:00", periods=N, freq="37h")
WAIT = [f"{h}:{m:02d}:00" for h, m in zip(np.arange(N) % 30, np.arange(N) * 7 % 60, strict=True)]
ZIPS = ["02139", "00501", "10001", "94105", "02140", "60601", "33101"]


@contextlib.contextmanager
def before_dates(monkeypatch):
    """fpt's table reader as before 324dadc9 (fpt.data.date_formats, fpt.data.durations): ISO dates only, no text
    durations, so '03/15/2024' and '1:07:00' were text categories (as tests/test_resume_readings.py fakes it)."""
    find_dates = tables.find_dates
    with monkeypatch.context() as old:
        old.setattr(tables, "find_dates", lambda values, where, error, written=True: find_dates(values, where, error,
                                                                                               written=False))
        old.setattr(tables, "find_durations", lambda values, where, error: None)
        yield


@contextlib.contextmanager
def before_codes(monkeypatch):
    """fpt's table reader as before 9db7ce10 (fpt.data.codes): a CSV's columns as pandas types them, '02139' 2139."""
    with monkeypatch.context() as old:
        old.setattr(tables, "_with_codes", lambda table, path, sep: table)
        yield


def _csv(tmp_path) -> str:
    pd.DataFrame({"x": np.arange(N) * 0.5, "when": list(WHEN.strftime("%m/%d/%Y")), "wait": WAIT,
                  "label": ["ab"[i % 2] for i in range(N)]}).to_csv(tmp_path / "t.csv", index=False)
    return str(tmp_path / "t.csv")


def _config(tmp_path, body: str, **extra) -> RunConfig:
    return from_dict(RunConfig, {"data": _csv(tmp_path), "body": body, "init": "random", "fit": "gradient",
                                 "steps": 4, "eval_every": 2, "device": "cpu", "baselines": "none", **extra})


def _kinds(run) -> dict[str, str]:
    return {f["name"]: f["kind"] for f in json.loads((run / "data.json").read_text())["tokeniser"]["features"]}


def _stopped_at_step_2(config: RunConfig, run) -> None:
    """A run of ``config`` as the older reader trained it, stopped after step 2's checkpoint (no summary)."""
    from fpt.rundir import write_config

    fpt.fit(fpt.build(dataclasses.replace(config, steps=2)), out=run, progress=False)
    (run / "summary.json").unlink()
    write_config(run, config)
    assert _kinds(run) == {"x": "numeric", "when": "categorical", "wait": "categorical"}


def _as_started(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, ColumnNote) and "as the run read it" in
            str(w.message)]


def _trained_on(run) -> list[int]:
    return [json.loads(line)["step"] for line in (run / "metrics.jsonl").read_text().splitlines()]


def test_a_planned_run_of_reproduce_or_sweep_resumes_reading_its_columns_as_it_started(tiny_bert_dir, tmp_path,
                                                                                      monkeypatch):
    from fpt.experiments.planned import run_planned

    planned = Store(tmp_path / "runs").plan_config(_config(tmp_path, tiny_bert_dir))
    with before_dates(monkeypatch):
        _stopped_at_step_2(planned.config, planned.run_dir)
    before = (planned.run_dir / "data.json").read_text()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        summary = run_planned(planned, progress=False)
    assert summary["steps"] == 4 and _trained_on(planned.run_dir) == [2, 4]  # continued, not started again
    assert (planned.run_dir / "data.json").read_text() == before
    assert len(_as_started(caught)) == 2, _as_started(caught)  # 'when' and 'wait', said as fpt train --resume says


def test_a_ray_trial_resumes_reading_its_columns_as_it_started(tiny_bert_dir, tmp_path, monkeypatch):
    """The Tune function itself, with Tune's session calls stood in for (no checkpoint of Ray's: the run directory's
    own is resumed), so no Ray instance is started."""
    import torch

    pytest.importorskip("ray")
    from ray import tune

    from fpt.experiments import ray_executor
    from fpt.experiments.executors import planned_to_dict

    planned = Store(tmp_path / "runs").plan_config(_config(tmp_path, tiny_bert_dir))
    with before_dates(monkeypatch):
        _stopped_at_step_2(planned.config, planned.run_dir)
    reported: list[dict] = []
    monkeypatch.setattr(tune, "get_checkpoint", lambda: None)
    monkeypatch.setattr(tune, "report", lambda metrics, checkpoint=None: reported.append(metrics))
    threads = torch.get_num_threads()
    try:
        ray_executor.trainable({"trial": {"planned": planned_to_dict(planned), "metric": "val_accuracy",
                                          "threads": threads}})
    finally:
        torch.set_num_threads(threads)
    assert json.loads((planned.run_dir / "summary.json").read_text())["steps"] == 4
    assert _trained_on(planned.run_dir) == [2, 4] and {r["step"] for r in reported} == {4}  # step 2 not again


def test_fpt_pretrain_resume_reads_its_columns_as_it_started(tiny_bert_dir, tmp_path, monkeypatch, capsys):
    from fpt.cli import main

    out = tmp_path / "pre"
    command = ["pretrain", "--data", _csv(tmp_path), "--body", tiny_bert_dir, "--fit", "gradient", "--steps", "2",
               "--eval-every", "2", "--device", "cpu", "--out", str(out), "--quiet"]
    with before_dates(monkeypatch):
        assert main(command) == 0
    assert _kinds(out) == {"x": "numeric", "when": "categorical", "wait": "categorical"}
    assert main(["pretrain", "--out", str(out), "--resume", "--steps", "4", "--quiet"]) == 0, capsys.readouterr().err
    assert json.loads((out / "summary.json").read_text())["steps"] == 4 and _trained_on(out) == [2, 4]
    assert (out / "body").is_dir()


# -- codes a run read as numbers, before fpt.data.codes ------------------------------------------------------------

def _codes_csv(tmp_path) -> str:
    rows = ["x,zip,label", *(f"{i * 0.5},{ZIPS[i % 7]},{'ab'[i % 2]}" for i in range(N))]
    (tmp_path / "z.csv").write_text("\n".join(rows) + "\n")
    return str(tmp_path / "z.csv")


@pytest.fixture
def codes_run(tmp_path, tiny_bert_dir, monkeypatch):
    """A run of 4 steps on a CSV of zip codes ('02139', '00501', ...), as fpt trained it before 9db7ce10: the zip
    column numbers (2139, 501), its mean and spread in data.json."""
    with before_codes(monkeypatch):
        fpt.train_run({"data": _codes_csv(tmp_path), "body": tiny_bert_dir, "init": "random", "fit": "gradient",
                       "steps": 4, "eval_every": 2, "device": "cpu", "baselines": "none"}, tmp_path / "run", say=None)
    run = tmp_path / "run"
    zip_feature = json.loads((run / "data.json").read_text())["tokeniser"]["features"][1]
    assert zip_feature["name"] == "zip" and zip_feature["kind"] == "numeric" and zip_feature["mean"] > 1000
    return run


def test_a_run_that_read_codes_as_numbers_resumes_reading_them_as_numbers(codes_run):
    before = (codes_run / "data.json").read_text()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        summary = fpt.train_run(None, codes_run, resume=True, overrides={"steps": 8}, say=None)
    assert summary["steps"] == 8 and _trained_on(codes_run) == [2, 4, 6, 8]
    assert (codes_run / "data.json").read_text() == before  # the same mean and spread: the same numbers
    assert any("z.csv: column 'zip' is read as numbers, as the run read it when it started; fpt reads it as codes "
               "(text categories) since (a new run reads it so)" in n for n in _as_started(caught)), _as_started(caught)


def test_predict_reads_codes_as_numbers_for_a_run_that_trained_on_them_so(codes_run, tmp_path):
    from fpt.data.modalities import from_json

    model = fpt.load(codes_run)
    saved = from_json(json.loads((codes_run / "data.json").read_text())["tokeniser"])
    new = pd.DataFrame({"x": ["0.5", "1.0"], "zip": ["02139", "00501"]})
    expected = saved({"x": np.array([0.5, 1.0]), "zip": np.array([2139.0, 501.0])})[0].numpy()
    np.testing.assert_array_equal(model.tokens(new)[0].numpy(), expected)
    (tmp_path / "new.csv").write_text("x,zip\n0.5,02139\n1.0,00501\n")
    np.testing.assert_array_equal(model.tokens(str(tmp_path / "new.csv"))[0].numpy(), expected)


# -- a finished run resumed in Python on other data --------------------------------------------------------------

@pytest.mark.parametrize("how", ["closed-form", "gradient"])
def test_a_finished_run_resumed_by_fit_on_other_data_is_refused_not_summarised(tiny_bert_dir, tmp_path, how):
    """fpt.fit(exp, out, resume=True) of a finished run returned its summary without reading exp's data against the
    run's: a user who pointed at other data got the old run's figures as the answer for it."""
    rows = ["x,label", *(f"{i * 0.5 + (i % 2)},{'ab'[i % 2]}" for i in range(N))]
    data = tmp_path / "d.csv"
    data.write_text("\n".join(rows) + "\n")
    config = from_dict(RunConfig, {"data": str(data), "body": tiny_bert_dir, "init": "random", "fit": how, "steps": 2,
                                   "eval_every": 2, "cf_members": 1, "device": "cpu", "baselines": "none"})
    out = tmp_path / "run"
    summary = fpt.fit(fpt.build(config), out=out, progress=False)
    assert fpt.fit(fpt.build(config), out=out, resume=True, progress=False) == summary  # the same data: its summary
    edited = list(rows)
    edited[1], edited[2] = edited[1][:-1] + rows[2][-1], edited[2][:-1] + rows[1][-1]  # two labels swapped
    data.write_text("\n".join(edited) + "\n")
    with pytest.raises(DataError, match=rf"^{data}: the file changed since the run in {out} started on it \(its "
                                        r"content hash differs from data_fingerprint\.json's\); restore the data it "
                                        r"started with, or train the changed data into a new out$"):
        fpt.fit(fpt.build(config), out=out, resume=True, progress=False)
    data.write_text("\n".join([*rows, "9.5,a", "10.5,b"]) + "\n")  # rows added: another split and tokeniser
    with pytest.raises(DataError, match=rf"^{out / 'data.json'}: {data} gives another .* than the run was trained "
                                        r"with: the data changed since the run started"):
        fpt.fit(fpt.build(config), out=out, resume=True, progress=False)


# -- fpt eval, fpt attention and an ensemble's scoring rebuild a run's experiment ------------------------------------

@pytest.mark.parametrize("old", ["dates", "codes"])
def test_a_runs_experiment_rebuilt_reads_its_columns_as_it_trained(tiny_bert_dir, tmp_path, monkeypatch, old):
    """Run.experiment() (fpt eval, fpt attention, an ensemble's scoring) built the run's data anew, so the run's own
    checkpoint was refused as another model's ('trainable.safetensors: input.weight has shape (32, 52), model expects
    (32, 2)': the new reading's tokeniser, not the one the run trained with)."""
    from fpt.train import evaluate

    data = _csv(tmp_path) if old == "dates" else _codes_csv(tmp_path)
    with (before_dates if old == "dates" else before_codes)(monkeypatch):
        fpt.train_run({"data": data, "body": tiny_bert_dir, "init": "random", "fit": "gradient", "steps": 4,
                       "eval_every": 2, "device": "cpu", "baselines": "none"}, tmp_path / "run", say=None)
    summary = fpt.Run(tmp_path / "run").summary()
    figures = evaluate(fpt.Run(tmp_path / "run").experiment())
    assert figures == pytest.approx(summary["eval"], abs=1e-5)  # the selected step's figures, as trained


def test_an_ensemble_run_again_continues_its_members_reading_their_columns_as_they_started(tiny_bert_dir, tmp_path,
                                                                                          monkeypatch):
    """An ensemble stopped part way continues when its command is run again (not --resume): its stopped member was
    built anew and refused as changed data, as the other resume paths were."""
    from fpt import rundir

    config = {"data": _csv(tmp_path), "body": tiny_bert_dir, "init": "random", "fit": "gradient", "steps": 2,
              "eval_every": 2, "device": "cpu", "baselines": "none", "ensemble": 2}
    out = tmp_path / "ens"
    write_summary = rundir.write_summary

    def stop_at_the_second_member(run_dir, summary):  # after its step-2 checkpoint, before its summary
        if run_dir.name == "seed1":
            raise KeyboardInterrupt
        write_summary(run_dir, summary)
    with before_dates(monkeypatch), monkeypatch.context() as m:
        m.setattr(rundir, "write_summary", stop_at_the_second_member)
        with pytest.raises(KeyboardInterrupt):
            fpt.train_run(config, out, say=None)
    members = out / "members"
    assert (members / "seed0" / "summary.json").is_file() and not (members / "seed1" / "summary.json").exists()
    assert _kinds(members / "seed1") == {"x": "numeric", "when": "categorical", "wait": "categorical"}
    summary = fpt.train_run(config, out, say=None)
    assert [m["steps"] for m in summary["ensemble"]["members"]] == [2, 2]
    assert _kinds(members / "seed1") == {"x": "numeric", "when": "categorical", "wait": "categorical"}


def test_a_run_that_read_coded_labels_as_numbers_resumes_reading_them_as_numbers(tiny_bert_dir, tmp_path,
                                                                                monkeypatch):
    """Labels '007', '010', '100' were the classes 7, 10, 100 before fpt.data.codes; resumed, they were read as
    written ('007') and the run refused as changed data (another 'classes')."""
    rows = ["x,label", *(f"{i * 0.5 + i % 3},{['007', '010', '100'][i % 3]}" for i in range(N))]
    (tmp_path / "c.csv").write_text("\n".join(rows) + "\n")
    with before_codes(monkeypatch):
        fpt.train_run({"data": str(tmp_path / "c.csv"), "body": tiny_bert_dir, "init": "random", "fit": "gradient",
                       "steps": 2, "eval_every": 2, "device": "cpu", "baselines": "none"}, tmp_path / "run", say=None)
    before = (tmp_path / "run" / "data.json").read_text()
    assert json.loads(before)["classes"] == [[7, 10, 100]]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        summary = fpt.train_run(None, tmp_path / "run", resume=True, overrides={"steps": 4}, say=None)
    assert summary["steps"] == 4 and _trained_on(tmp_path / "run") == [2, 4]
    assert (tmp_path / "run" / "data.json").read_text() == before
    assert any("c.csv: column 'label' is read as numbers, as the run read it when it started; fpt reads it as class "
               "labels as written since" in n for n in _as_started(caught)), _as_started(caught)
    # and predict scores that file by the run's classes (was: "label '007' is not one of the model's classes")
    from fpt.cli import main

    assert main(["predict", str(tmp_path / "run"), str(tmp_path / "c.csv"), "--out", str(tmp_path / "p.csv")]) == 0
    written = pd.read_csv(tmp_path / "p.csv", dtype=str)
    assert list(written.columns[:4]) == ["prediction", "proba_7", "proba_10", "proba_100"] and len(written) == N
    assert set(written["prediction"]) <= {"7", "10", "100"}

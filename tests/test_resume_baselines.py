"""A run stopped (killed, Ctrl-C) while its baselines were being fitted, after training (summary.json written):
its controls (frozen random body, no language model: runs of their own in OUT/controls) or its classic models. It
said 'finished' in fpt runs and on resume ('already finished ... nothing to resume'), so its controls and models were
never fitted; and a gradient control stopped part way was refused on the next attempt as 'already a run'. The run is
now marked as waiting for its baselines until they are written (summary.json's baselines_pending): fpt runs says
stopped, and resuming fits what is missing, continuing a stopped control and reading a finished one."""

from __future__ import annotations

import json

import pytest

import fpt
import fpt.baselines
from fpt import rundir
from fpt.cli.train import _what_was_kept
from fpt.presentation.listing import list_runs

N = 40


def _data(tmp_path) -> str:
    rows = ["x,label", *(f"{i * 0.5 + (i % 2)},{'ab'[i % 2]}" for i in range(N))]
    (tmp_path / "d.csv").write_text("\n".join(rows) + "\n")
    return str(tmp_path / "d.csv")


def _steps(run) -> list[int]:
    return [json.loads(line)["step"] for line in (run / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("fault", ["the no-lm control", "the classic models"])
def test_a_run_stopped_while_fitting_its_baselines_resumes_them(tiny_bert_dir, tmp_path, monkeypatch, fault):
    out = tmp_path / "run"
    config = {"data": _data(tmp_path), "body": tiny_bert_dir, "init": "random", "fit": "gradient", "steps": 2,
              "eval_every": 2, "device": "cpu", "baselines": "all"}
    with monkeypatch.context() as m:
        if fault == "the no-lm control":  # stopped at its last step, before its summary: a checkpoint, no summary
            write_summary = rundir.write_summary

            def stop_at_no_lm(run_dir, summary):
                if run_dir.name == "no-lm":
                    raise KeyboardInterrupt
                write_summary(run_dir, summary)
            m.setattr(rundir, "write_summary", stop_at_no_lm)
        else:  # both controls finished, stopped in the classic models
            m.setattr(fpt.baselines, "fit_models", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt()))
        with pytest.raises(KeyboardInterrupt):
            fpt.train_run(config, out, say=None)
    assert (out / "summary.json").is_file() and "baselines_models" not in json.loads((out / "summary.json").read_text())
    assert [r["state"] for r in list_runs(out) if r["run"] == "run"] == ["stopped"]  # was: finished
    assert _what_was_kept(out) == (f"{out} finished training (step 2), but not its baselines (all): fit them with "
                                   f"fpt train --resume {out}")  # Ctrl-C's line (was: its checkpoint ... continue)
    trained = {name: _steps(out / "controls" / name) for name in ("random-body", "no-lm")}
    assert trained == {"random-body": [2], "no-lm": [2]}
    assert (out / "controls" / "no-lm" / "summary.json").is_file() == (fault != "the no-lm control")

    summary = fpt.train_run(None, out, resume=True, say=None)
    compared = summary["baselines_models"]
    assert set(compared["controls"]) == {"random body", "no language model"}, compared
    assert {"logistic regression", "gradient boosting"} <= set(compared["models"]), compared
    assert all(c["test"] is not None for c in compared["controls"].values())
    saved = json.loads((out / "summary.json").read_text())
    assert saved["baselines_models"] == compared and "baselines_pending" not in saved
    assert {name: _steps(out / "controls" / name) for name in ("random-body", "no-lm")} == trained  # none retrained
    assert [r["state"] for r in list_runs(out) if r["run"] == "run"] == ["finished"]

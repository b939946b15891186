"""A run resumed under another ``target`` reports the step it reached that target at, read from its evaluations:
the checkpoint's step_to_target was the old target's."""

from __future__ import annotations

import json

import pytest

import fpt

FIELDS = dict(task="bit-xor", init="random", steps=12, batch_size=8, eval_every=3, task_options={"eval_size": 32},
              device="cpu", baselines="none", stop_at_target=False)


def _first_at(run, target: float) -> int | None:
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    return next((r["step"] for r in rows if r["val_accuracy"] >= target), None)


@pytest.mark.parametrize("first, then", [(0.4, 0.99), (0.99, 0.4)], ids=["raised", "lowered"])
def test_a_run_resumed_under_another_target_reports_that_targets_step(first, then, tiny_gpt2_dir, tmp_path):
    run = tmp_path / "run"
    before = fpt.fit(fpt.build(body=tiny_gpt2_dir, **FIELDS, target=first), out=run, progress=False)
    assert before["steps_to_target"] == _first_at(run, first)
    after = fpt.fit(fpt.build(fpt.train.resume_config(run, {"steps": 15, "target": then})), out=run, resume=True,
                    progress=False)
    # raised: summary.json said steps_to_target 3 (0.4's) beside target 0.99, which no evaluation reached;
    # lowered: it said None, or the first step after the resume at 0.4, though step 3 had reached it
    assert (after["target"], after["steps_to_target"]) == (then, _first_at(run, then))
    assert (before["steps_to_target"], after["steps_to_target"]) == ((3, None) if first < then else (None, 3))

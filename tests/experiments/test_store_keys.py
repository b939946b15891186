"""Run-store keys: stable for finished runs, new for configs whose meaning changed."""

import dataclasses

import pytest

from fpt.config import RunConfig
from fpt.experiments import runner


def test_every_config_field_has_a_baseline_value():
    assert {f.name for f in dataclasses.fields(RunConfig)} == set(runner.KEY_BASELINE)


def test_keys_of_finished_runs_do_not_move():
    # docs/results/quick/runs/55d50c860039: Table 21's random body, paper freeze, on Bit XOR for 1,500 steps
    assert runner.config_key(RunConfig(task="bit-xor", init="random", steps=1500, eval_every=25)) == "55d50c860039"
    assert runner.config_key(RunConfig()) == runner.config_key(RunConfig(eval_every=50))  # a baseline value is left out


def test_keys_are_taken_against_the_baseline_not_todays_defaults(monkeypatch):
    base = runner.config_key(RunConfig(eval_every=25))
    # as if eval_every's default had become 25: a run at 25 keeps its key, the old default now shows in the key
    monkeypatch.setitem(runner.KEY_BASELINE, "eval_every", 25)
    assert runner.config_key(RunConfig(eval_every=25)) != base
    monkeypatch.setitem(runner.KEY_BASELINE, "eval_every", 50)
    assert runner.config_key(RunConfig(eval_every=25)) == base


def test_a_field_missing_from_the_baseline_is_named(monkeypatch):
    monkeypatch.delitem(runner.KEY_BASELINE, "eval_subset")
    with pytest.raises(RuntimeError, match=r"\['eval_subset'\].*KEY_BASELINE"):
        runner.config_key(RunConfig())

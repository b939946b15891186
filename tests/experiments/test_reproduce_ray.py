"""fpt reproduce --executor ray: a table's runs as Ray Tune trials (a local Ray instance here), resumable
through the run store, as fpt sweep --executor ray."""

from __future__ import annotations

import csv

import pytest
import yaml


def _table(tmp_path, body: str) -> str:
    spec = {"title": "Ray grid", "base": {"init": "random", "steps": 2, "eval_every": 2, "batch_size": 4,
                                          "device": "cpu", "body": body},
            "columns": {"xor": {"task": "bit-xor", "task_options": {"eval_size": 8}}},
            "rows": {"frozen": None, "full": {"freeze": "none"}}}
    path = tmp_path / "ray_grid.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return str(path)


def _reproduce(path: str, out) -> int:
    from fpt.cli import main

    return main(["reproduce", path, "--out", str(out), "--executor", "ray", "--num-cpus", "2", "--threads-per-trial",
                 "1", "--quiet"])


@pytest.mark.slow  # as fpt sweep's Ray tests: starting Ray takes most of a minute on 2 cores
def test_reproduce_runs_a_table_on_ray_and_a_rerun_skips_the_finished_runs(tiny_gpt2_dir, tmp_path, monkeypatch, capsys):
    """fpt reproduce --executor ray as the command runs it (here in this process: a command of its own imported torch
    and transformers again), on the local Ray instance fpt starts and stops itself."""
    ray = pytest.importorskip("ray")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert not ray.is_initialized(), "a test before this one left Ray running: fpt would not start its own"
    path, out = _table(tmp_path, tiny_gpt2_dir), tmp_path / "out"
    assert _reproduce(path, out) == 0, capsys.readouterr().err[-3000:]
    assert not ray.is_initialized()  # the instance fpt started is stopped
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert [(r["row"], r["status"]) for r in rows] == [("frozen", "done"), ("full", "done")]
    events = sorted((out / "logs").glob("*.ray.jsonl"))  # each run was a Ray trial
    assert len(events) == 2 and all("done" in e.read_text() for e in events)
    summaries = {p: p.stat().st_mtime_ns for p in (out / "runs").glob("*/summary.json")}
    assert len(summaries) == 2
    experiments = sorted(p.name for p in (out / "ray").iterdir() if p.is_dir())
    capsys.readouterr()

    def no_start(**kwargs):
        raise AssertionError("the rerun started Ray")

    monkeypatch.setattr(ray, "init", no_start)  # resumable: the finished runs come from the store, Ray is not started
    assert _reproduce(path, out) == 0, capsys.readouterr().err[-3000:]
    assert {p: p.stat().st_mtime_ns for p in (out / "runs").glob("*/summary.json")} == summaries
    assert sorted(p.name for p in (out / "ray").iterdir() if p.is_dir()) == experiments
    assert "2 of 2 cells done" in capsys.readouterr().out


def test_ray_executor_connects_to_ray_address(monkeypatch, tmp_path):
    ray = pytest.importorskip("ray")
    from fpt.config import RunConfig
    from fpt.experiments.executors import Trial
    from fpt.experiments.ray_executor import RayExecutor
    from fpt.experiments.runner import Store

    seen = {}

    class Stop(Exception):
        pass

    def init(**kwargs):
        seen.update(kwargs)
        raise Stop

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setenv("RAY_ADDRESS", "ray://head:10001")
    # the address must reach ray.init as given; whether it answers is fpt.connect's check (tests/hostile)
    monkeypatch.setattr("fpt.connect.check_reachable", lambda *a, **k: None)
    trial = Trial(Store(tmp_path / "runs").plan_config(RunConfig(steps=2)), "one")
    with pytest.raises(Stop):
        RayExecutor(tmp_path / "ray", "t", "").run([trial], progress=False)
    assert seen["address"] == "ray://head:10001" and "num_cpus" not in seen  # a cluster's CPUs are its own

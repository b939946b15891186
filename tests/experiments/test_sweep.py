"""fpt sweep: spec validation, expansion, the local executor (results, resume), and the Ray executor."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import statistics
import threading
import time
from pathlib import Path

import pytest
import yaml

from fpt.cli import main
from fpt.config import RunConfig
from fpt.errors import ConfigError
from fpt.experiments import sweep
from fpt.experiments.executors import LocalExecutor
from fpt.experiments.grid import Cell, Table
from fpt.experiments.planned import run_planned
from fpt.experiments.runner import Store, config_key, run_table


def _base(body: str, **extra) -> dict:
    return {"task": "bit-xor", "body": body, "init": "random", "steps": 4, "eval_every": 2, "batch_size": 4,
            "device": "cpu", "task_options": {"eval_size": 16}, **extra}


def _write(tmp_path: Path, spec: dict, name: str = "spec.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def _spec(body: str, **extra) -> dict:
    return {"name": "xor-lr", "base": _base(body, **extra), "grid": {"lr": [1.0e-3, 1.0e-4]}, "seeds": [0, 1],
            "metric": "val_accuracy"}


# --- (d) validation -----------------------------------------------------------------------------

GOOD = {"name": "s", "base": {"task": "bit-xor"}, "grid": {"lr": [1.0e-3]}, "seeds": [0]}


@pytest.mark.parametrize(("change", "expected"), [
    ({"grids": {"lr": [1]}}, "unknown key 'grids' (did you mean 'grid'?)"),
    ({"task": "bit-xor"}, "'task' is a config field at the top level; put it under base:, e.g. base: {task: 'bit-xor'}"),
    ({"steps": 3, "lr": 0.1}, "'steps', 'lr' are config fields at the top level; put them under base:"),
    ({"grid": {}}, "grid is empty"),
    ({"grid": {"lr": []}}, "grid.lr is empty"),
    ({"grid": {"lr": 0.1}}, "grid.lr: give a list of values"),
    ({"grid": {"lrr": [0.1]}}, "grid.lrr is not a config field (did you mean 'lr'?)"),
    ({"grid": {"seed": [0, 1]}}, "list them in seeds"),
    ({"grid": {"lr": ["fast"]}}, "field 'lr': expected a number, got 'fast'"),
    ({"grid": {"layers": [0]}}, "'layers'=0 must be >= 1"),
    ({"base": {"data": "x.csv"}, "grid": {"modality": ["tabular", "table"]}},  # before any trial runs
     "config 2 (modality=table): config field 'modality'='table' (did you mean 'tabular'?) must be auto or one of"),
    ({"base": {"tsak": "bit-xor"}}, "base.tsak is not a config field (did you mean 'task'?)"),
    ({"grid": None, "random": {"trials": 2, "space": {"lr": {"logunif": [1e-5, 1e-2]}}}},
     "unknown distribution 'logunif' (did you mean 'loguniform'?)"),
    ({"grid": None, "random": {"trials": 2, "space": {"lr": {"loguniform": [0, 1e-2]}}}}, "loguniform needs 0 < low"),
    ({"grid": None, "random": {"trials": 2, "space": {"lr": {"uniform": [1, 0.5]}}}}, "uniform needs low < high"),
    ({"grid": None, "random": {"trials": 2, "space": {"lr": 0.1}}}, "give a list of values or one distribution"),
    ({"grid": None, "random": {"trials": 0, "space": {"lr": [0.1]}}}, "random.trials"),
    ({"grid": None, "random": {"trials": 2, "space": {}}}, "random.space is empty"),
    ({"random": {"trials": 2, "space": {"lr": [0.1]}}}, "either grid: (every combination) or random:"),
    ({"grid": {"lr": [1.0e-3, 0.001]}}, "config 2 (lr=0.001) is the same config as config 1 (lr=0.001): a value "
                                        "repeated in grid"),
    ({"grid": {"dropout": [0, 0.0], "lr": [1.0e-3]}}, "config 2 (dropout=0.0 lr=0.001) is the same config as config 1"),
    ({"grid": {"task.n_bits": [4, 6], "task_options.n_bits": [8]}},
     "grid.task.n_bits and grid.task_options.n_bits set the same task option 'n_bits'; keep one of them"),
    ({"grid": None, "random": {"trials": 2, "space": {"task_options.n_bits": [4], "task.n_bits": [5]}}},
     "random.space.task_options.n_bits and random.space.task.n_bits set the same task option"),
    ({"seeds": [0, 0]}, "seeds: give a list of distinct integers"),
    ({"seeds": "0,1"}, "seeds: give a list of distinct integers"),
    ({"metric": "test_accuracy"}, "not a validation metric"),
    ({"mode": "up"}, "mode 'up'"),
])
def test_spec_errors_are_one_line_and_name_the_key(change, expected, tmp_path, capsys):
    spec = {k: v for k, v in {**GOOD, **change}.items() if v is not None}
    path = _write(tmp_path, spec)
    with pytest.raises(ConfigError) as err:
        sweep.load(path)
    message = str(err.value)
    assert expected in message and "\n" not in message and str(path) in message
    assert main(["sweep", str(path), "--dry-run"]) == 2  # the CLI prints it as one line
    assert capsys.readouterr().err.strip().count("\n") == 0


def test_spec_file_errors(tmp_path):
    with pytest.raises(ConfigError, match="sweep spec .*does not exist"):
        sweep.load(tmp_path / "missing.yaml")
    (tmp_path / "list.yaml").write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="expected a mapping"):
        sweep.load(tmp_path / "list.yaml")


# --- expansion ----------------------------------------------------------------------------------

def test_grid_expands_every_combination_with_task_options_and_seeds(tmp_path):
    spec = sweep.parse_spec({"base": {"task": "bit-xor", "task.eval_size": 16, "steps": 5},
                             "grid": {"lr": [1e-3, 1e-4], "task.n_bits": [5, 8], "freeze": ["paper", "output"]},
                             "seeds": [3, 4]}, "x.yaml")
    configs = sweep.expand(spec)
    assert spec.name == "x" and spec.swept == ["lr", "task.n_bits", "freeze"] and len(configs) == 8
    assert configs[0].params == {"lr": 1e-3, "task.n_bits": 5, "freeze": "paper"}
    assert configs[0].config.task_options == {"eval_size": 16, "n_bits": 5} and configs[0].config.steps == 5
    trials = sweep.trials(spec, configs, Store(tmp_path / "runs"))
    assert len(trials) == 16 and [s for _, s, _ in trials[:2]] == [3, 4]
    c, seed, t = trials[1]
    assert t.key == config_key(RunConfig(**{**c.config.to_dict(), "seed": 4})) and t.run_dir == tmp_path / "runs" / t.key


def test_random_search_is_reproducible_and_within_bounds():
    raw = {"base": {"task": "bit-xor"}, "random": {"trials": 12, "seed": 7, "space": {
        "lr": {"loguniform": [1e-5, 1e-2]}, "dropout": {"uniform": [0.0, 0.3]}, "layers": {"randint": [1, 2]},
        "batch_size": [8, 16]}}, "seeds": [0]}
    first = sweep.expand(sweep.parse_spec(raw, "r.yaml"))
    again = sweep.expand(sweep.parse_spec(raw, "r.yaml"))
    assert [c.params for c in first] == [c.params for c in again] and len(first) == 12
    for c in first:
        assert 1e-5 <= c.params["lr"] <= 1e-2 and 0 <= c.params["dropout"] <= 0.3
        assert c.params["layers"] in (1, 2) and c.params["batch_size"] in (8, 16)
    other = sweep.expand(sweep.parse_spec({**raw, "random": {**raw["random"], "seed": 8}}, "r.yaml"))
    assert [c.params for c in other] != [c.params for c in first]
    small = sweep.expand(sweep.parse_spec({**raw, "random": {"trials": 20, "space": {"batch_size": [8, 16]}}}, "r"))
    assert sorted(c.params["batch_size"] for c in small) == [8, 16]  # repeated draws are one config
    same = sweep.expand(sweep.parse_spec({**raw, "random": {"trials": 20, "space": {"dropout": [0, 0.0]}}}, "r"))
    assert [(c.index, c.params) for c in same] == [(1, {"dropout": same[0].params["dropout"]})]  # 0 and 0.0: one config


def test_dry_run_lists_trials_and_writes_nothing(tiny_gpt2_dir, tmp_path, capsys):
    path = _write(tmp_path, _spec(tiny_gpt2_dir))
    assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "2 config(s) x 2 seed(s) = 4 trial(s)" in out and out.count("run=") == 4
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("extra", "expected"), [
    ({"task.nbits": 3}, "config 1 (lr=0.001): task 'bit-xor' options: unknown field(s) ['nbits'] (did you mean 'n_bits'?)"),
    ({"freeze": "output,inptu"}, "config 1 (lr=0.001): freeze policy 'output,inptu': unknown group(s) ['inptu']"),
    ({"layers": 9}, "config 1 (lr=0.001): layers=9 must be in 1..2"),
])
def test_a_config_every_trial_would_fail_on_stops_the_sweep_before_any_trial(extra, expected, tiny_gpt2_dir, tmp_path,
                                                                             capsys):
    """A misspelt task option or freeze group, or layers beyond the body: every trial used to start and fail (6 s each
    here, minutes on a real body), the sweep reporting them one by one; now one line before anything runs."""
    base = {k: v for k, v in _base(tiny_gpt2_dir, **extra).items()}
    path = _write(tmp_path, {"name": "typo", "base": base, "grid": {"lr": [1.0e-3, 1.0e-4]}, "seeds": [0, 1]})
    assert main(["sweep", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1 and "--dry-run" in err
    assert not (tmp_path / "out").exists()


# --- (a) the local executor ---------------------------------------------------------------------

def test_sweep_log_tracks_every_trial_in_one_store(tiny_gpt2_dir, local_sweep, tmp_path, capsys):
    """fpt sweep had no --log (argparse: 'unrecognized arguments: --log mlflow'): no trial reached TensorBoard or
    MLflow. Now each trial is tracked as fpt train --log tracks it, every MLflow run in one store (the one the
    sweep's own folder names, whatever folder a worker runs in); a tracker that cannot start is one line first.
    The tracked sweep is the module's local_sweep (4 trials, 2 at once), run with --log when both extras are here."""
    pytest.importorskip("mlflow")
    pytest.importorskip("tensorboard")
    from mlflow.tracking import MlflowClient

    path = _write(tmp_path, {**_spec(tiny_gpt2_dir), "seeds": [0]})
    assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "--log", "tensorbord"]) == 2
    assert "--log 'tensorbord': known trackers are" in capsys.readouterr().err and not (tmp_path / "out").exists()

    out, store = local_sweep["out"], local_sweep["mlflow"]
    assert local_sweep["rc"] == 0 and store is not None
    doc = json.loads((out / "results.json").read_text())
    assert doc["command"].endswith("--log tensorboard,mlflow")
    keys = [t["key"] for t in doc["trials"]]
    assert len(keys) == 4 and all((out / "runs" / k / "tensorboard").is_dir() for k in keys)
    client = MlflowClient(tracking_uri=store)
    runs = client.search_runs([client.get_experiment_by_name("fpt").experiment_id])
    assert sorted(r.info.run_name for r in runs) == sorted(keys) and {r.info.status for r in runs} == {"FINISHED"}
    assert sorted(float(r.data.params["lr"]) for r in runs) == [1e-4, 1e-4, 1e-3, 1e-3]


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def local_sweep(tiny_gpt2_dir, tmp_path_factory) -> dict:
    """``fpt sweep`` of _spec (2 lrs x 2 seeds) on the local executor, run once per module: the local executor's test
    below checks it and reruns it (a rerun changes no run), the Ray test compares Ray's results with its own, and the
    --log test reads its trackers. With the tensorboard and mlflow extras installed it runs with
    --log tensorboard,mlflow (an MLflow store of its own: "mlflow", else None): a tracked sweep of its own cost that
    test two more worker processes, each importing torch and transformers; tracking changes no run's figures."""
    import contextlib
    import importlib.util
    import io

    root = tmp_path_factory.mktemp("local-sweep")
    path = _write(root, _spec(tiny_gpt2_dir))
    out = root / "out"
    tracked = all(importlib.util.find_spec(name) is not None for name in ("mlflow", "tensorboard"))
    store = f"sqlite:///{root / 'runs.db'}" if tracked else None
    args = ["sweep", str(path), "--out", str(out), "--parallel", "2", "--threads-per-trial", "1", "--quiet",
            *(["--log", "tensorboard,mlflow"] if tracked else [])]
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(printed):  # what capsys would read
        for name in ("MLFLOW_EXPERIMENT_NAME", "MLFLOW_EXPERIMENT_ID"):
            mp.delenv(name, raising=False)
        if store:  # the sweep sets it for its workers: undone after
            mp.setenv("MLFLOW_TRACKING_URI", store)
            mp.chdir(root)  # the workers' cwd: MLflow's artifacts go to ./mlruns beside a sqlite store, not the repo's
        rc = main(args)
    return {"rc": rc, "printed": printed.getvalue(), "out": out, "args": args, "mlflow": store}


def test_local_sweep_results_match_the_runs_and_a_rerun_retrains_nothing(local_sweep, capsys, monkeypatch):
    out, args = local_sweep["out"], local_sweep["args"]
    if local_sweep["mlflow"]:  # the rerun's --log opens the sweep's own store (MLflow's default is ./mlflow.db)
        monkeypatch.setenv("MLFLOW_TRACKING_URI", local_sweep["mlflow"])
    assert local_sweep["rc"] == 0
    printed = local_sweep["printed"]
    assert printed.count(": started (") == 4
    rows = _csv(out / "results.csv")
    assert len(rows) == 2 and {r["lr"] for r in rows} == {"0.001", "0.0001"}
    doc = json.loads((out / "results.json").read_text())
    for row, r in zip(rows, doc["rows"], strict=True):
        assert row["n"] == "2" and row["n_seeds"] == "2" and row["status"] == "done" and row["seeds"] == "0;1"
        run_dirs = [out / d for d in row["run_dirs"].split(";")]
        assert [d.name for d in run_dirs] == row["keys"].split(";")
        summaries = [json.loads((d / "summary.json").read_text()) for d in run_dirs]
        for metric in ("val_accuracy", "test_accuracy"):
            values = [s[metric] for s in summaries]
            assert r[f"{metric}_mean"] == pytest.approx(statistics.fmean(values), abs=1e-12)
            assert r[f"{metric}_std"] == pytest.approx(statistics.stdev(values), abs=1e-12)
            assert float(row[f"{metric}_mean"]) == pytest.approx(statistics.fmean(values), abs=1e-12)
        for d, seed in zip(run_dirs, (0, 1), strict=True):  # the run directory fpt train writes
            config = yaml.safe_load((d / "config.yaml").read_text())
            assert config["seed"] == seed and config["lr"] == float(row["lr"])
            # config.yaml records the target the task declares (fpt.settings); the plan, keyed by the store, leaves it
            # to the task: every other field is the plan's
            assert config["target"] == 1.0 and d.name == config_key(RunConfig(**{**config, "target": None}))
            assert (d / "metrics.jsonl").is_file() and (d / "checkpoint").is_dir() and (d / "best").is_dir()
    means = [r["val_accuracy_mean"] for r in doc["rows"]]
    assert means == sorted(means, reverse=True) and [r["rank"] for r in doc["rows"]] == [1, 2]
    assert (out / "report.html").is_file() and "Sweep results" in (out / "report.md").read_text()
    assert doc["command"].startswith("fpt sweep ")

    mtimes = {p: p.stat().st_mtime_ns for p in (out / "runs").glob("*/*") if p.is_file()}
    assert main(args) == 0  # rerun: every trial is done, nothing is trained again
    assert ": started (" not in capsys.readouterr().out
    assert {p: p.stat().st_mtime_ns for p in (out / "runs").glob("*/*") if p.is_file()} == mtimes
    assert _csv(out / "results.csv") == rows

    assert main(["runs", str(out)]) == 0  # fpt runs lists the sweep's store
    assert "4 run(s): 4 finished" in capsys.readouterr().out


def test_reproduce_hands_its_cells_to_the_same_local_executor_which_resumes_a_stopped_run(tiny_gpt2_dir, tmp_path):
    """fpt reproduce's cells run by the local executor, each in a worker: one trains, a broken one fails alone. The
    cell that trains was stopped after a checkpoint (no summary): its worker continues it from there (steps 1-2 are
    not trained again) to the figures of the uninterrupted run in this process. A stopped sweep trial resumed had a
    worker of its own (a test apart, the same executor and run_planned): each worker imports torch and transformers."""
    import dataclasses

    import fpt
    from fpt.rundir import write_text

    config = RunConfig(**_base(tiny_gpt2_dir, steps=6, stop_at_target=False))
    broken = RunConfig(**_base(str(tmp_path / "no-such-body")))
    table = Table("tableA", "A", "quick", ["x", "y"], ["bit-xor"],
                  [Cell("x", "bit-xor", config, "test_accuracy", 100.0),
                   Cell("y", "bit-xor", broken, "test_accuracy", 100.0)])
    store = Store(tmp_path / "runs")
    planned = store.plan_config(config)
    fpt.fit(fpt.build(dataclasses.replace(config, steps=2)), out=planned.run_dir, progress=False)  # then "killed"
    (planned.run_dir / "summary.json").unlink()
    write_text(planned.run_dir / "config.yaml", yaml.safe_dump(planned.config.to_dict(), sort_keys=False))
    assert sweep.trial_status(planned.run_dir, None)[0] == "stopped"
    first = (planned.run_dir / "metrics.jsonl").read_text()  # step 2's row, with its wall_seconds
    results = run_table(table, store, progress=False,
                        executor=LocalExecutor(2, 1, tmp_path / "logs", prefix="fpt reproduce"))
    assert [r["status"] for r in results] == ["done", "failed"]
    assert results[1]["note"] and results[0]["run_dir"] == planned.run_dir and planned.key == config_key(config)
    assert results[0]["summary"]["steps"] == 6
    rows = [json.loads(line) for line in (planned.run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [2, 4, 6]  # steps 1-2 were not trained again: step 2's row is the first's
    assert (planned.run_dir / "metrics.jsonl").read_text().startswith(first)
    reference = run_planned(Store(tmp_path / "in-process").plan_config(config), progress=False)
    assert results[0]["summary"]["val_accuracy"] == pytest.approx(reference["val_accuracy"], abs=1e-6)
    assert results[0]["summary"]["test_accuracy"] == pytest.approx(reference["test_accuracy"], abs=1e-6)


# --- (b), (c) the Ray executor ------------------------------------------------------------------

@pytest.fixture(scope="module")
def ray_instance():
    """One local Ray instance (2 CPUs) for this module's Ray sweeps, each run by ``main`` in this process: the
    executor finds Ray initialised, uses it and leaves it running (it starts and stops its own only when none is).
    A sweep command per test started its own Ray and imported torch and transformers again, most of a minute of
    CPU each on 2 cores; the path where fpt starts Ray itself is tests/experiments/test_reproduce_ray.py's."""
    ray = pytest.importorskip("ray")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("RAY_ADDRESS", raising=False)
        mp.setenv("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
        try:
            yield ray
        finally:
            ray.shutdown()


def _ray_sweep(spec_path: Path, out: Path, *extra: str) -> list[str]:
    return ["sweep", str(spec_path), "--out", str(out), "--executor", "ray", "--num-cpus", "2", "--threads-per-trial",
            "1", "--quiet", *extra]


@pytest.mark.slow
def test_ray_executor_gives_the_local_results(tiny_gpt2_dir, tmp_path, local_sweep, ray_instance, capsys):
    """The same spec swept by Ray and by the local executor (the module's local_sweep, run once) agree. Ray trains
    the seed-1 trial of each config; the seed-0 runs are the local sweep's, copied into the Ray sweep's store first
    (a finished run is never trained again), so each of its rows holds one run of each executor. A Ray trial imports
    torch and transformers afresh (about 10 s of CPU on CI's cores): two trials instead of four."""
    path = _write(tmp_path, _spec(tiny_gpt2_dir))
    local, ray_out = local_sweep["out"], tmp_path / "ray"
    assert local_sweep["rc"] == 0
    a = json.loads((local / "results.json").read_text())
    for t in a["trials"]:
        if t["seed"] == 0:
            shutil.copytree(local / t["run_dir"], ray_out / "runs" / t["key"])
    by_ray = {t["key"] for t in a["trials"] if t["seed"] == 1}
    assert len(by_ray) == 2
    assert main(_ray_sweep(path, ray_out)) == 0, capsys.readouterr().err[-3000:]
    assert ray_instance.is_initialized()  # the executor used the running instance and left it to its owner
    b = json.loads((ray_out / "results.json").read_text())
    assert [t["key"] for t in a["trials"]] == [t["key"] for t in b["trials"]]
    for x, y in zip(a["trials"], b["trials"], strict=True):
        assert y["status"] == "done"
        assert y["val_accuracy"] == pytest.approx(x["val_accuracy"], abs=1e-6)
        assert y["test_accuracy"] == pytest.approx(x["test_accuracy"], abs=1e-6)
    for x, y in zip(a["rows"], b["rows"], strict=True):
        assert (x["config"], x["rank"], x["n"]) == (y["config"], y["rank"], y["n"])
        assert y["val_accuracy_mean"] == pytest.approx(x["val_accuracy_mean"], abs=1e-6)
    assert {p.name.removesuffix(".ray.jsonl") for p in (ray_out / "logs").glob("*.ray.jsonl")} == by_ray  # Ray's trials
    trial_dirs = list((ray_out / "ray").glob("*/*/checkpoint_*"))  # Ray's own checkpoints of each trial
    assert {d.parent.name for d in trial_dirs} == by_ray and all((d / "fpt_checkpoint.json").is_file() for d in trial_dirs)


def _events(path: Path) -> list[dict]:
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except (OSError, ValueError):
        return []


@pytest.mark.slow
def test_a_killed_ray_trial_restarts_from_its_checkpoint_and_finishes(tiny_gpt2_dir, tmp_path, ray_instance, capsys):
    # 200 steps: the trial is killed after its second report (step 40), and 160 steps are left for the killer's
    # 0.05 s poll to land in; every step more is trained twice (on Ray and by the reference run below).
    raw = {"name": "kill", "base": _base(tiny_gpt2_dir, steps=200, eval_every=20, stop_at_target=False),
           "seeds": [0]}
    path = _write(tmp_path, raw)
    out = tmp_path / "ray"
    [(_, _, trial)] = sweep.trials(sweep.load(path), sweep.expand(sweep.load(path)), Store(out / "runs"))
    events, metrics = out / "logs" / f"{trial.key}.ray.jsonl", trial.run_dir / "metrics.jsonl"
    killed: list[int] = []
    swept = threading.Event()

    def kill_the_trial() -> None:  # beside the sweep, which runs in this process's main thread
        deadline = time.monotonic() + 600
        while not killed and not swept.is_set() and time.monotonic() < deadline:
            log = _events(events)
            started = [e for e in log if e["event"] == "start"]
            # Ray registers a reported checkpoint on the driver a little after tune.report returns in the
            # worker: killing right after the first one can leave the trial with none to restore from
            # (a failure CI saw). Two reported checkpoints leave the first one time to land.
            reported = [e for e in log if e["event"] == "report" and e.get("checkpoint")]
            if started and len(reported) >= 2:
                killed.append(started[-1]["pid"])
                os.kill(killed[0], signal.SIGKILL)  # the Ray worker running the trial
            time.sleep(0.05)

    killer = threading.Thread(target=kill_the_trial, name="kill-the-trial", daemon=True)
    killer.start()
    try:
        code = main(_ray_sweep(path, out, "--max-failures", "3"))
    finally:
        swept.set()
        killer.join()
    assert killed, "the trial never got going (or finished before it could be killed)"
    assert code == 0, capsys.readouterr().err[-3000:]
    log = _events(events)
    starts = [e for e in log if e["event"] == "start"]
    restores = [e for e in log if e["event"] == "restore"]
    assert len(starts) >= 2 and starts[-1]["pid"] != killed[0]
    # The new attempt got a Ray checkpoint (tune.get_checkpoint), not a fresh start: at an evaluation step at
    # least (reports trail the run a little, so it may be older than the run directory's own checkpoint).
    assert restores and restores[-1]["step"] >= 20 and restores[-1]["step"] % 20 == 0
    summary = json.loads((trial.run_dir / "summary.json").read_text())
    assert summary["steps"] == 200
    steps = [json.loads(line)["step"] for line in metrics.read_text().splitlines()]
    assert steps == list(range(20, 201, 20))  # one row per evaluation: nothing lost, nothing doubled
    reference = run_planned(Store(tmp_path / "reference").plan_config(trial.planned.config), progress=False)
    for key in ("val_accuracy", "test_accuracy", "selected_step"):
        assert summary[key] == pytest.approx(reference[key], abs=1e-6)


def test_ray_restore_copies_a_newer_checkpoint_into_the_run_directory(tiny_gpt2_dir, tmp_path):
    """A trial moved to another node: its Ray checkpoint is copied back and fit resumes from it."""
    import dataclasses

    import fpt
    from fpt.experiments import ray_executor

    config = RunConfig(**_base(tiny_gpt2_dir, steps=6, stop_at_target=False))
    first = tmp_path / "node-a"
    fpt.fit(fpt.build(dataclasses.replace(config, steps=4)), out=first, progress=False)
    snap = ray_executor.snapshot(first, 4, "k")
    assert json.loads((snap / ray_executor.SNAPSHOT).read_text())["step"] == 4
    moved = tmp_path / "node-b"  # empty: the run directory is not on this node
    assert ray_executor.restore(snap, moved, config) == (4, True)
    assert ray_executor.restore(snap, moved, config) == (4, False)  # not older: kept
    from fpt.train import resume_config

    assert resume_config(moved) == config
    resumed = fpt.fit(fpt.build(config), out=moved, resume=True, progress=False)
    reference = fpt.fit(fpt.build(config), out=tmp_path / "whole", progress=False)
    assert resumed["steps"] == 6
    assert resumed["val_accuracy"] == pytest.approx(reference["val_accuracy"], abs=1e-6)
    assert resumed["test_accuracy"] == pytest.approx(reference["test_accuracy"], abs=1e-6)


def test_ray_trials_never_ask_more_cpus_than_the_local_instance_has(tmp_path, monkeypatch):
    """--executor ray --num-cpus 1 on a 2-core machine: each trial asked for cores // parallel = 2 CPUs, which the
    1-CPU instance never has, and Tune waited forever ("No trial is running ... You asked for 2.0 CPUs ... but the
    cluster only has 1.0 CPUs"). A default is capped at the instance's CPUs; a larger --threads-per-trial is one line."""
    import types

    from fpt.experiments import ray_executor

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(ray_executor, "default_threads", lambda parallel: 2)  # a 2-core machine, one trial at once
    one_cpu = types.SimpleNamespace(cluster_resources=lambda: {"CPU": 1.0})
    assert ray_executor.RayExecutor(tmp_path, "s", "id", num_cpus=1)._threads(one_cpu, None) == 1
    with pytest.raises(ConfigError, match=r"^--threads-per-trial 4: the local Ray instance has 1 CPU\(s\), so no trial "
                                          r"could start; give --threads-per-trial 1 or less"):
        ray_executor.RayExecutor(tmp_path, "s", "id", threads=4)._threads(one_cpu, None)
    # a cluster may grow (autoscaling): what was asked stands
    assert ray_executor.RayExecutor(tmp_path, "s", "id", threads=4)._threads(one_cpu, "10.0.0.1:6379") == 4


def test_ray_missing_is_a_one_line_error_naming_the_extra(tmp_path, monkeypatch, capsys):
    import builtins

    real = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray" or name.startswith("ray."):
            raise ImportError("No module named 'ray'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    path = _write(tmp_path, GOOD)
    assert main(["sweep", str(path), "--out", str(tmp_path / "o"), "--executor", "ray"]) == 2
    err = capsys.readouterr().err
    assert "fpt[ray]" in err and err.strip().count("\n") == 0

"""Trials as Ray Tune trials (``fpt sweep --executor ray``; needs ``pip install "fpt[ray]"``).

Each trial is a Tune function trainable that runs ``fpt.fit`` into the trial's store directory, in a
thread, while the trainable's own thread follows the run directory's ``metrics.jsonl``: every new
evaluation row is reported to Tune (``tune.report``) together with a Ray checkpoint, a copy of the
run's committed ``checkpoint/`` and ``best/`` versions and its metrics up to that step
(``Checkpoint.from_directory``). A trial that fails or is preempted is restarted by Tune
(``FailureConfig(max_failures)``); the new attempt takes ``tune.get_checkpoint()``, copies it back
into the run directory when the run directory's own checkpoint is missing or older (a trial moved to
another node), and resumes with ``fit(resume=True)``. fpt's resume restores the optimizer and RNG
state, so a restarted trial ends exactly where an uninterrupted one does.

Resources per trial come from ``tune.with_resources`` (CPUs = threads per trial, GPUs); ASHA
(``--asha``) stops trials early on the validation metric, by step. An interrupted sweep resumes with
``Tuner.restore`` when its Ray experiment did not finish (``OUT/ray/``); finished runs are skipped
through the store either way.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fpt.checkpoint import committed_step
from fpt.errors import ConfigError
from fpt.experiments.executors import (
    DONE,
    EARLY_STOPPED,
    FAILED,
    NOT_RUN,
    Outcome,
    Trial,
    busy_note,
    default_threads,
    one_line,
    planned_from_dict,
    planned_to_dict,
)
from fpt.rundir import METRICS, POINTER, SLOTS, SUMMARY, read_metrics_so_far, read_summary

SNAPSHOT = "fpt_checkpoint.json"  # in a Ray checkpoint: {key, step}
DONE_FLAG = "fpt_done"  # in a trial's last Tune result: the run finished (not stopped early)
STATE_FILE = "fpt_ray_sweep.json"  # OUT/ray/: the unfinished experiment to restore, trials stopped by ASHA


def require_ray() -> Any:
    try:
        import ray
        from ray import tune  # noqa: F401
    except ImportError:
        raise ConfigError("--executor ray needs Ray Tune: pip install 'fpt[ray]' (the extra [ray], i.e. "
                          "ray[tune])") from None
    return ray


# --- inside a trial ------------------------------------------------------------------------------

def snapshot(run_dir: Path, step: int, key: str) -> Path | None:
    """A temporary directory holding the run's committed checkpoint/ and best/ versions and its metrics
    up to ``step``; None when the checkpoint moved on while it was copied (the next row gets one)."""
    tmp = Path(tempfile.mkdtemp(prefix=f"fpt-ray-{key}-"))
    try:
        for slot in SLOTS:
            src = Path(run_dir) / slot
            name = (src / POINTER).read_text().strip() if (src / POINTER).is_file() else None
            if name is None:
                continue
            (tmp / slot).mkdir()
            shutil.copytree(src / name, tmp / slot / name)
            (tmp / slot / POINTER).write_text(name + "\n")
        rows = [r for r in read_metrics_so_far(run_dir) if r["step"] <= step]
        (tmp / METRICS).write_text("".join(json.dumps(r) + "\n" for r in rows))
        (tmp / SNAPSHOT).write_text(json.dumps({"key": key, "step": committed_step(tmp) or step}))
        return tmp
    except (OSError, shutil.Error):
        shutil.rmtree(tmp, ignore_errors=True)
        return None


def restore(snapshot_dir: Path, run_dir: Path, config: Any) -> tuple[int, bool]:
    """Copy a Ray checkpoint back into the run directory when the run directory's own checkpoint is
    missing or older (call with the run directory's lock held). Returns (the snapshot's step, copied)."""
    from fpt import rundir

    snapshot_dir, run_dir = Path(snapshot_dir), Path(run_dir)
    saved = json.loads((snapshot_dir / SNAPSHOT).read_text())
    step = int(saved["step"])
    local = committed_step(run_dir)
    if local is not None and local >= step:
        return step, False
    run_dir.mkdir(parents=True, exist_ok=True)
    for slot in SLOTS:
        shutil.rmtree(run_dir / slot, ignore_errors=True)
        if (snapshot_dir / slot).is_dir():
            shutil.copytree(snapshot_dir / slot, run_dir / slot)
    rundir.write_text(run_dir / METRICS, (snapshot_dir / METRICS).read_text())
    rundir.write_config(run_dir, config)
    with contextlib.suppress(FileNotFoundError):
        (run_dir / SUMMARY).unlink()
    return step, True


def _event(path: str | None, **data: Any) -> None:
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"time": round(time.time(), 3), **data}) + "\n")


def _tune_metrics(row: dict[str, Any], metric: str) -> dict[str, Any]:
    """An evaluation row as a Tune result; ``metric`` (val_X) is found under the run's validation set name."""
    out = {k: v for k, v in row.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    if metric not in out:
        suffix = metric[len("val"):]
        found = next((k for k in out if k.endswith(suffix) and not k.startswith("train_")), None)
        if found is not None:
            out[metric] = out[found]
    return out


def trainable(config: dict[str, Any]) -> None:
    """The Tune function trainable of one fpt trial (its description in ``config['trial']``)."""
    from ray import tune

    from fpt import rundir
    from fpt.data.readings import as_run
    from fpt.pipeline import build
    from fpt.run import Run
    from fpt.train import fit

    spec = config["trial"]
    import torch

    torch.set_num_threads(int(spec.get("threads") or 1))
    planned = planned_from_dict(spec["planned"])
    run_dir, metric, events = planned.run_dir, spec["metric"], spec.get("events")
    _event(events, event="start", pid=os.getpid(), key=planned.key)
    done = read_summary(run_dir)
    if done is not None:
        tune.report({**_final(done, metric), DONE_FLAG: True})
        return
    if planned.pretrain is not None:
        from fpt.experiments.planned import ensure_pretrained_body

        ensure_pretrained_body(*planned.pretrain, False)
    with rundir.lock(run_dir, what="fpt sweep (ray trial)"):  # fit's own lock re-enters it (same process)
        checkpoint = tune.get_checkpoint()
        if checkpoint is not None:
            with checkpoint.as_directory() as d:
                step, copied = restore(Path(d), run_dir, planned.config)
            _event(events, event="restore", step=step, copied=copied, local_step=committed_step(run_dir))
        done = read_summary(run_dir)
        if done is not None:
            tune.report({**_final(done, metric), DONE_FLAG: True})
            return
        resume = Run(run_dir).resumable(planned.config, f"trial {planned.key}")
        with as_run(run_dir if resume else None):  # a stopped trial's data read as it started (fpt.data.readings)
            exp = build(planned.config)
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["summary"] = fit(exp, out=run_dir, resume=resume, progress=False, trackers=planned.trackers)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the trial's thread
                box["error"] = exc

        thread = threading.Thread(target=work, name=f"fpt-fit-{planned.key}", daemon=True)
        seen = committed_step(run_dir) if resume else 0
        seen = seen or 0
        thread.start()
        last: dict[str, Any] = {}
        while True:
            alive = thread.is_alive()
            for row in [r for r in read_metrics_so_far(run_dir) if r["step"] > seen]:
                # fit writes the row, then best/, then checkpoint/: wait for the checkpoint of this step
                while thread.is_alive() and (committed_step(run_dir) or -1) < row["step"]:
                    time.sleep(0.05)
                snap = snapshot(run_dir, row["step"], planned.key) if (committed_step(run_dir) or -1) >= row["step"] \
                    else None
                last = _tune_metrics(row, metric)
                try:
                    tune.report(last, checkpoint=tune.Checkpoint.from_directory(str(snap)) if snap else None)
                finally:
                    if snap:
                        shutil.rmtree(snap, ignore_errors=True)
                _event(events, event="report", step=row["step"], checkpoint=snap is not None)
                seen = row["step"]
            if not alive:
                break
            time.sleep(0.2)
        thread.join()
    if "error" in box:
        raise box["error"]
    _event(events, event="done", step=box["summary"].get("steps"))
    tune.report({**last, **_final(box["summary"], metric), DONE_FLAG: True})


def _final(summary: dict[str, Any], metric: str) -> dict[str, Any]:
    test = "test_" + metric[len("val_"):]
    out = {"step": summary.get("steps")}
    for k in (metric, test):
        if isinstance(summary.get(k), (int, float)):
            out[k] = summary[k]
    return out


# --- the driver ----------------------------------------------------------------------------------

def check_address(address: str | None) -> None:
    """The Ray cluster ``address`` (else RAY_ADDRESS) answers within a few seconds, or a one-line ConfigError naming
    the setting; ``auto`` needs a cluster started on this machine (``ray start --head``). None/``local``: fpt starts
    its own Ray, nothing to ask."""
    from fpt.connect import GRPC_HELLO, check_reachable

    setting = f"--address {address}" if address else f"RAY_ADDRESS={os.environ.get('RAY_ADDRESS')}"
    address = address or os.environ.get("RAY_ADDRESS") or None
    fix = "start the cluster (ray start --head), give the address of one that runs, or drop --address (and unset " \
          "RAY_ADDRESS) to run on a Ray instance fpt starts here"
    if address is None or address == "local":
        return
    if address == "auto":
        try:
            from ray._private.utils import read_ray_address

            found = read_ray_address(None)
        except Exception:  # noqa: BLE001 - a private helper of Ray's: without it, Ray's own error comes later
            return
        if not found:
            raise ConfigError(f"{setting}: no Ray cluster was started on this machine; {fix}")
        setting, address = f"{setting} (the cluster this machine last started, {found})", found
    check_reachable(address, setting, fix, default_port=10001 if address.startswith("ray://") else 6379, hello=GRPC_HELLO)


@dataclass
class RayExecutor:
    """Runs trials as Ray Tune trials on a local Ray instance it starts, or on a cluster (``address``)."""

    storage: Path  # OUT/ray: Tune's experiment folders (trial results and Ray checkpoints)
    name: str  # the sweep's name
    identity: str  # what identifies the sweep's trials: an unfinished experiment with it is restored ("": the
    # trials' run keys, for callers that hand over several sets, as fpt reproduce's tables)
    metric: str = "val_accuracy"
    mode: str = "max"
    parallel: int | None = None  # trials at once (default: as many as the CPUs allow)
    threads: int | None = None  # CPUs per trial
    gpus: float = 0.0  # GPUs per trial
    num_cpus: int | None = None  # CPUs of the local Ray instance (default: this machine's)
    address: str | None = None  # an existing cluster ("auto", "ray://host:10001"); default: RAY_ADDRESS, if set
    max_failures: int = 2
    asha: bool = False
    grace_period: int | None = None  # steps before ASHA may stop a trial (default: 2 evaluations)
    reduction_factor: float = 2.0
    events_dir: Path | None = None  # KEY.ray.jsonl: start, restore, report and done events of each trial
    verbose: int = 1
    early_stopped: dict[str, int] = field(default_factory=dict)
    interrupted: bool = False  # the last run() ended with trials Tune had not finished (Ctrl-C)
    prefix: str = "fpt sweep"  # the command, for messages

    def __post_init__(self) -> None:
        check_address(self.address)  # a cluster that does not answer: one line now, before any run is locked

    def run(self, trials: list[Trial], progress: bool = True) -> list[Outcome]:
        os.environ.setdefault("TUNE_WARN_EXCESSIVE_EXPERIMENT_CHECKPOINT_SYNC_THRESHOLD_S", "0")
        ray = require_ray()
        from ray import tune

        storage = Path(self.storage).absolute()
        storage.mkdir(parents=True, exist_ok=True)
        state = self._state(storage)
        stopped_before = state.get("early_stopped", {}) if self.asha else {}
        outcomes: dict[str, Outcome] = {}
        todo: list[Trial] = []
        for t in dict((t.key, t) for t in trials).values():
            if read_summary(t.run_dir) is not None:
                outcomes[t.key] = Outcome(DONE, read_summary(t.run_dir))
            elif t.key in stopped_before:
                outcomes[t.key] = Outcome(EARLY_STOPPED, None, f"stopped by ASHA at step {stopped_before[t.key]}")
            else:
                todo.append(t)
        identity = self.identity or hashlib.sha256(" ".join(sorted(t.key for t in trials)).encode()).hexdigest()[:12]
        if todo:
            started = False
            # Ray's own convention: RAY_ADDRESS names the cluster when no address is given (ray.init would read it
            # too, but refuses the local instance's num_cpus beside it).
            address = self.address or os.environ.get("RAY_ADDRESS") or None
            if not ray.is_initialized():
                if address:
                    ray.init(address=address, log_to_driver=self.verbose > 1)
                else:
                    ray.init(num_cpus=self.num_cpus or default_threads(1), include_dashboard=False,
                             log_to_driver=self.verbose > 1, configure_logging=False)
                started = True
            try:
                threads = self._threads(ray, address)
                grid, statuses = self._fit(tune, todo, storage, state, identity, threads)
            finally:
                if started:
                    ray.shutdown()
            for t in todo:
                outcomes[t.key] = self._outcome(t, grid.get(t.key), statuses.get(t.key))
            # Trials Tune neither finished nor gave up on: the sweep was interrupted (Ctrl-C), and the
            # next run restores this experiment (Tuner.restore).
            self.interrupted = any(s not in ("TERMINATED", "ERROR") for s in statuses.values())
            state["early_stopped"] = {**state.get("early_stopped", {}), **self.early_stopped}
            if not self.interrupted:
                state.pop("unfinished", None)
            (storage / STATE_FILE).write_text(json.dumps(state, indent=1))
        return [outcomes[t.key] for t in trials]

    @staticmethod
    def _state(storage: Path) -> dict[str, Any]:
        try:
            return json.loads((storage / STATE_FILE).read_text())
        except (OSError, ValueError):
            return {}

    def _threads(self, ray: Any, address: str | None) -> int:
        """CPUs per trial: ``threads``, else this machine's cores shared by ``parallel`` trials, at most the local Ray
        instance's CPUs. A trial asking more CPUs than a local instance has is never scheduled: Tune waited forever
        ("No trial is running ... You asked for 2.0 CPUs ... but the cluster only has 1.0 CPUs"). A cluster's
        (``address``) may grow by autoscaling, so it is not checked."""
        threads = self.threads or default_threads(self.parallel or 1)
        if address and address != "local":
            return threads
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if cpus and threads > cpus:
            if self.threads:
                raise ConfigError(f"--threads-per-trial {self.threads}: the local Ray instance has {cpus} CPU(s), so "
                                  f"no trial could start; give --threads-per-trial {cpus} or less (or --num-cpus "
                                  f"{self.threads})")
            threads = cpus
        return threads

    def _fit(self, tune: Any, todo: list[Trial], storage: Path, state: dict[str, Any], identity: str,
             threads: int) -> dict[str, Any]:
        resources = {"cpu": threads, **({"gpu": self.gpus} if self.gpus else {})}
        fn = tune.with_resources(trainable, resources)
        events = Path(self.events_dir).absolute() if self.events_dir else None
        if events:
            events.mkdir(parents=True, exist_ok=True)
        specs = [{"planned": planned_to_dict(t.planned), "metric": self.metric, "threads": threads, "label": t.label,
                  "events": str(events / f"{t.key}.ray.jsonl") if events else None} for t in todo]
        previous = state.get("unfinished") or {}
        path = storage / str(previous.get("name", ""))
        if previous.get("identity") == identity and previous.get("name") and tune.Tuner.can_restore(str(path)):
            print(f"{self.prefix}: resuming the Ray experiment {path} (Tuner.restore)", flush=True)
            tuner = tune.Tuner.restore(str(path), trainable=fn, resume_unfinished=True, resume_errored=True)
        else:
            name = f"{self.name}-{time.strftime('%Y%m%d-%H%M%S')}"
            state["unfinished"] = {"name": name, "identity": identity}
            (storage / STATE_FILE).write_text(json.dumps(state, indent=1))
            scheduler = None
            if self.asha:
                from ray.tune.schedulers import ASHAScheduler

                steps = max(s["planned"]["config"]["steps"] for s in specs)
                evals = min(s["planned"]["config"]["eval_every"] for s in specs)
                # max_t beyond the last step: reaching it must not stop a trial before fit writes its summary
                scheduler = ASHAScheduler(time_attr="step", metric=self.metric, mode=self.mode, max_t=steps + 1,
                                          grace_period=self.grace_period or min(steps, 2 * evals),
                                          reduction_factor=self.reduction_factor)
            tuner = tune.Tuner(
                fn, param_space={"trial": tune.grid_search(specs)},
                tune_config=tune.TuneConfig(
                    scheduler=scheduler, num_samples=1, max_concurrent_trials=self.parallel, reuse_actors=False,
                    trial_name_creator=lambda trial: trial.config["trial"]["planned"]["key"],
                    trial_dirname_creator=lambda trial: trial.config["trial"]["planned"]["key"]),
                run_config=tune.RunConfig(
                    name=name, storage_path=str(storage), verbose=self.verbose,
                    failure_config=tune.FailureConfig(max_failures=self.max_failures),
                    checkpoint_config=tune.CheckpointConfig(num_to_keep=2)))
        grid = tuner.fit()
        by_key = {}
        for result in grid:
            key = _key_of(result.config)
            if key:
                by_key[key] = result
        # Each trial's status as Tune saved it: an interrupted run (Ctrl-C) leaves trials RUNNING or PENDING there
        # (in memory they read TERMINATED once stopped), a finished one only TERMINATED or ERROR.
        try:
            saved = tune.ExperimentAnalysis(str(grid.experiment_path)).trials
        except Exception:  # noqa: BLE001 - no saved state to read: take the statuses in memory
            saved = getattr(getattr(grid, "_experiment_analysis", None), "trials", None) or []
        statuses = {_key_of(t.config): str(t.status) for t in saved}
        return by_key, statuses

    def _outcome(self, trial: Trial, result: Any, status: str | None) -> Outcome:
        summary = read_summary(trial.run_dir)
        if summary is not None:
            return Outcome(DONE, summary)
        if status is not None and status not in ("TERMINATED", "ERROR"):
            return Outcome(NOT_RUN, None, "interrupted: rerun the sweep to resume it")
        if result is None:
            return Outcome(NOT_RUN, None, "not run by Ray")
        if result.error is not None:
            text = one_line(result.error)
            if "RunDirBusyError" in text:
                return Outcome(NOT_RUN, None, busy_note(text))
            return Outcome(FAILED, None, f"{text} (Ray trial {Path(str(result.path)).name})")
        metrics = result.metrics or {}
        if self.asha and not metrics.get(DONE_FLAG):
            step = int(metrics.get("step") or 0)
            self.early_stopped[trial.key] = step
            return Outcome(EARLY_STOPPED, None, f"stopped by ASHA at step {step}")
        return Outcome(FAILED, None, "the Ray trial ended without a summary")


def _key_of(config: Any) -> str | None:
    return (((config or {}).get("trial") or {}).get("planned") or {}).get("key")

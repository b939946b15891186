"""A run killed (SIGKILL) and resumed reads as one clean run in its trackers: TensorBoard's events and the MLflow run
hold every evaluation once, with the values of an uninterrupted run of the same seed, as metrics.jsonl does."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
import torch

import fpt
from fpt import checkpoint, tracking

STEPS, EVERY = 12, 3
FIELDS = dict(task="bit-xor", init="random", steps=STEPS, batch_size=8, eval_every=EVERY,
              task_options={"eval_size": 32}, device="cpu")

class _Kill(tracking.Tracker):
    """SIGKILLs its process at step ``at``: ``where`` "checkpoint" as its checkpoint/ save begins (metrics.jsonl holds
    the row; the newest checkpoint is the previous evaluation's), "evaluated" as the trackers are to be handed that
    step's evaluation (its checkpoint committed), "handed" once they have it."""

    def __init__(self, where: str, at: int) -> None:
        self.where, self.at = where, at

    def evaluated(self, row):
        if self.where in ("evaluated", "handed") and row["step"] == self.at:
            os.kill(os.getpid(), signal.SIGKILL)

    def saving(self, state) -> None:
        if self.where == "checkpoint" and state is not None and state.step == self.at:
            os.kill(os.getpid(), signal.SIGKILL)


def _killed(body: str, out: Path, where: str, at: int) -> None:
    """Train FIELDS into ``out`` with both trackers in a forked child (no second interpreter to start) killed by
    SIGKILL as ``_Kill`` says."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            torch.set_num_threads(1)  # no thread pool inherited across the fork
            kill = _Kill(where, at)
            save = checkpoint.save

            def killing_save(slot_dir, *args, **kw):
                kill.saving(kw.get("state", args[4] if len(args) > 4 else None))
                return save(slot_dir, *args, **kw)

            checkpoint.save = killing_save
            trackers = [kill, "tensorboard", "mlflow"] if where == "evaluated" else ["tensorboard", "mlflow", kill]
            fpt.fit(fpt.build(body=body, **FIELDS), out=out, progress=False, trackers=trackers)
        finally:
            os._exit(3)  # not killed: the parent's assertion says so
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, status


def _rows(run: Path) -> list[dict]:
    return [{k: v for k, v in json.loads(line).items() if k != "wall_seconds"}
            for line in (run / "metrics.jsonl").read_text().splitlines()]


_TIMES = ("summary.wall_seconds", "summary.train_samples_per_second", "summary.epoch_seconds",
          "summary/wall_seconds", "summary/train_samples_per_second", "summary/epoch_seconds")


def _events(run: Path) -> dict:
    """What TensorBoard shows of the run: every scalar tag's (step, value) points and the config texts' count."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run / "tensorboard"))
    events.Reload()
    scalars = {tag: [(e.step, e.value) for e in events.Scalars(tag)] for tag in events.Tags()["scalars"]
               if tag not in _TIMES}
    return {"scalars": scalars, "config": len(events.Tensors("config/text_summary"))}


def _mlflow(run: Path) -> list[dict]:
    """The MLflow runs of the run directory in the store next to it: each one's status and every metric's (step,
    value) points."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=_store(run.parent))
    experiment = client.get_experiment_by_name("fpt").experiment_id
    found = client.search_runs([experiment], filter_string=f"tags.`fpt.run_dir` = '{run.resolve()}'")
    return [{"status": r.info.status, "metrics": {
        key: sorted((m.step, m.value) for m in client.get_metric_history(r.info.run_id, key))
        for key in r.data.metrics if key not in _TIMES}} for r in found]


def _store(folder: Path) -> str:
    return (folder / "mlruns").as_uri()


def _trackers_to(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MLflow logs to a file store in ``folder``, in the default experiment."""
    monkeypatch.setenv("MLFLOW_TRACKING_URI", _store(folder))
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_ID", raising=False)


@pytest.fixture(scope="module")
def straight(tiny_gpt2_dir, tmp_path_factory) -> tuple[Path, dict]:
    """The uninterrupted run (and its summary), with both trackers."""
    pytest.importorskip("mlflow")
    pytest.importorskip("tensorboard")
    folder = tmp_path_factory.mktemp("straight")
    with pytest.MonkeyPatch.context() as monkeypatch:
        _trackers_to(folder, monkeypatch)
        summary = fpt.fit(fpt.build(body=tiny_gpt2_dir, **FIELDS), out=folder / "run", progress=False,
                          trackers=["tensorboard", "mlflow"])
    return folder / "run", summary


@pytest.mark.parametrize(("where", "at"), [("checkpoint", 9), ("evaluated", 9), ("handed", 9), ("checkpoint", 3)],
                         ids=["before-its-checkpoint", "after-its-checkpoint", "after-the-trackers-had-it",
                              "before-the-first-checkpoint"])
def test_a_killed_and_resumed_run_reads_as_one_clean_run_in_its_trackers(where, at, tiny_gpt2_dir, straight, tmp_path,
                                                                        monkeypatch):
    straight, expected = straight
    _trackers_to(tmp_path, monkeypatch)
    run = tmp_path / "run"
    _killed(tiny_gpt2_dir, run, where, at)
    resumed = fpt.fit(fpt.build(fpt.train.resume_config(run)), out=run, resume=True, progress=False,
                      trackers=["tensorboard", "mlflow"])

    assert {k: resumed[k] for k in ("val_accuracy", "test_accuracy", "selected_step", "steps")} == \
        {k: expected[k] for k in ("val_accuracy", "test_accuracy", "selected_step", "steps")}
    assert _rows(run) == _rows(straight)  # every evaluation once, as the uninterrupted run's
    assert [r["step"] for r in _rows(run)] == list(range(EVERY, STEPS + 1, EVERY))
    (logged,) = _mlflow(run)  # one MLflow run: no second one beside the killed attempt's
    (reference,) = _mlflow(straight)
    assert logged == reference and logged["status"] == "FINISHED"
    assert [step for step, _ in logged["metrics"]["val_accuracy"]] == list(range(EVERY, STEPS + 1, EVERY))
    assert _events(run) == _events(straight)

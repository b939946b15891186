"""A run killed (SIGKILL) and resumed reads as one clean run in its trackers: TensorBoard's events and the MLflow run
hold every evaluation once, with the values of an uninterrupted run of the same seed, as metrics.jsonl does."""

from __future__ import annotations

import json
import math
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


def _summary_numbers(summary: dict) -> dict:
    return {f"summary.{k}": v for k, v in tracking.summary_scalars(summary).items()}


def test_a_finished_run_extended_reads_as_the_extended_run_in_mlflow(tiny_gpt2_dir, tmp_path, monkeypatch):
    """A finished run resumed with more steps (and another target) twice: one MLflow run whose step metrics run on
    from where it stopped, each step once; whose values of summary.* (the latest: what MLflow's runs table,
    comparisons and searches read) are the last end's, a number that end lacks NaN rather than the earlier end's
    (summary.steps_to_target stayed 3 after the target was raised past every evaluation); and whose description says
    what the params (first values, MLflow cannot change them) and the summary.* charts (a point per end) do not."""
    pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    _trackers_to(tmp_path, monkeypatch)
    board = tracking._installed("tensorboard")
    trackers = ["mlflow", "tensorboard"] if board else ["mlflow"]
    run = tmp_path / "run"
    first = fpt.fit(fpt.build(body=tiny_gpt2_dir, **{**FIELDS, "target": 0.4, "stop_at_target": False}), out=run,
                    progress=False, trackers=trackers)
    assert first["steps"] == STEPS and first["steps_to_target"] == EVERY  # val accuracy 0.46 at the first evaluation
    client = MlflowClient(tracking_uri=_store(tmp_path))
    (run_id,) = [r.info.run_id for r in client.search_runs([client.get_experiment_by_name("fpt").experiment_id])]
    client.set_tag(run_id, "mlflow.note.content", "my own description")
    for steps in (STEPS + EVERY, STEPS + 2 * EVERY):
        config = fpt.train.resume_config(run, {"steps": steps, "target": 0.99})
        summary = fpt.fit(fpt.build(config), out=run, resume=True, progress=False, trackers=trackers)
    assert summary["steps"] == STEPS + 2 * EVERY and summary["steps_to_target"] is None

    (logged,) = _mlflow(run)
    assert logged["status"] == "FINISHED"
    rows = _rows(run)
    assert [r["step"] for r in rows] == list(range(EVERY, STEPS + 2 * EVERY + 1, EVERY))
    for key in ("val_accuracy", "val_loss", "train_loss"):  # every evaluation once, as metrics.jsonl holds it
        assert logged["metrics"][key] == [(r["step"], pytest.approx(r[key])) for r in rows]
    found = client.get_run(run_id)
    latest = {k: v for k, v in found.data.metrics.items() if k.startswith("summary.")}
    numbers = _summary_numbers(summary)
    assert {k: latest[k] for k in numbers} == pytest.approx(numbers)
    assert set(latest) - set(numbers) == {"summary.steps_to_target"}  # 3 at the first end; no step now reaches 0.99
    assert math.isnan(latest["summary.steps_to_target"])
    assert found.data.params["steps"] == str(STEPS) and found.data.tags["fpt.config.steps"] == str(summary["steps"])
    note = found.data.tags["mlflow.note.content"]
    assert note.startswith("my own description\n\n") and note.count("fpt: resumed") == 1  # the second replaced the first
    assert f"resumed at step {STEPS + EVERY} after it had finished" in note
    assert f"steps {STEPS} -> {STEPS + 2 * EVERY}, target 0.4 -> 0.99" in note
    assert f"ends it reached before (steps {STEPS}, {STEPS + EVERY})" in note
    if board:  # TensorBoard's reader purges what earlier attempts logged from step 1 on: the last end's summary alone
        scalars = _events(run)["scalars"]
        shown = {f"summary.{tag[len('summary/'):]}": points for tag, points in scalars.items()
                 if tag.startswith("summary/") and points}  # summary/steps_to_target: its tag, every point purged
        assert shown == {k: [(summary["steps"], pytest.approx(v))] for k, v in numbers.items() if k not in _TIMES}

"""Live tracking: TensorBoard events during the run, MLflow runs, plain progress lines for logs."""

from __future__ import annotations

import io
import json
import sys

import pytest

import fpt
from fpt import tracking
from fpt.cli import main
from fpt.errors import ConfigError


def _exp(body, **kw):
    fields = dict(task="bit-xor", body=body, init="random", steps=6, batch_size=4, eval_every=2,
                  task_options={"eval_size": 16}, device="cpu")
    return fpt.build(**{**fields, **kw})


class _ReadEvents(tracking.Tracker):
    """After each evaluation (and TensorBoard's flush), read the event files back while the run goes."""

    name = "probe"

    def __init__(self, log_dir):
        self.log_dir, self.seen = log_dir, []

    def evaluated(self, row):
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

        events = EventAccumulator(str(self.log_dir))
        events.Reload()
        self.seen.append((row["step"], [e.step for e in events.Scalars("accuracy/val")],
                          events.Scalars("loss/train")[-1].value))


def test_tensorboard_events_appear_while_the_run_goes(tiny_gpt2_dir, tmp_path):
    pytest.importorskip("tensorboard")
    probe = _ReadEvents(tmp_path / "run" / "tensorboard")
    fpt.fit(_exp(tiny_gpt2_dir), out=tmp_path / "run", progress=False, trackers=["tensorboard", probe])
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [(step, steps) for step, steps, _ in probe.seen] == [(2, [2]), (4, [2, 4]), (6, [2, 4, 6])]
    assert [loss for *_, loss in probe.seen] == pytest.approx([r["train_loss"] for r in rows])


def test_a_log_dir_shared_by_two_runs_keeps_the_first_runs_events(tiny_gpt2_dir, tmp_path):
    """TensorBoard(log_dir=...) handed to a second run purged the first's events from step 1 on (TensorBoard showed
    them no more) and logged no config of the second, taking the folder's events for its own earlier attempts."""
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    shared = tmp_path / "tb"
    for name, steps in (("a", 6), ("b", 4)):
        fpt.fit(_exp(tiny_gpt2_dir, steps=steps), out=tmp_path / name, progress=False,
                trackers=[tracking.TensorBoard(shared)])
    events = EventAccumulator(str(shared))
    events.Reload()
    assert [e.step for e in events.Scalars("accuracy/val")] == [2, 4, 6, 2, 4]  # a's three, then b's two
    assert len(events.Tensors("config/text_summary")) == 2  # each run's config
    # the run's own folder (no log_dir) is still purged by a resumed run: only what the run kept is shown
    fpt.fit(_exp(tiny_gpt2_dir, steps=4), out=tmp_path / "c", progress=False, trackers=["tensorboard"])
    fpt.fit(_exp(tiny_gpt2_dir, steps=6), out=tmp_path / "c", progress=False, trackers=["tensorboard"], resume=True)
    own = EventAccumulator(str(tmp_path / "c" / "tensorboard"))
    own.Reload()
    assert [e.step for e in own.Scalars("accuracy/val")] == [2, 4, 6]



def test_events_an_older_fpt_wrote_unnamed_are_replaced_on_resume_not_shown_twice(tiny_gpt2_dir, tmp_path, monkeypatch):
    """Before fddfeabf a run's event files in a log_dir given carried no name (events.out.tfevents.TIME.HOST.PID.N).
    The first resume after the upgrade deleted only files named for the run and logged its kept evaluations again
    beside the unnamed one: accuracy/val at 2, 2, 4, 4, 6, and so after every later resume. The unnamed file holding
    the run's own numbers is now deleted with the named ones; another run's unnamed file (other seed) stays as it is."""
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    shared = tmp_path / "tb"
    with monkeypatch.context() as old:  # an older fpt: no name on the file, nothing of the folder deleted
        old.setattr(tracking, "drop_own_events", lambda *args: "")
        for name, seed in (("a", 0), ("b", 1)):
            fpt.fit(_exp(tiny_gpt2_dir, steps=4, seed=seed), out=tmp_path / name, progress=False,
                    trackers=[tracking.TensorBoard(shared)])
    (a_file, b_file) = sorted(shared.iterdir())
    b_bytes = b_file.read_bytes()
    for steps in (6, 8):  # every resume, the first after the upgrade included
        config = fpt.train.resume_config(tmp_path / "a", {"steps": steps})
        fpt.fit(fpt.build(config), out=tmp_path / "a", resume=True, progress=False,
                trackers=[tracking.TensorBoard(shared)])
        events = EventAccumulator(str(shared))
        events.Reload()
        assert sorted(e.step for e in events.Scalars("accuracy/val")) == sorted([2, 4, *range(2, steps + 1, 2)])
    assert not a_file.exists() and b_file.read_bytes() == b_bytes and len(list(shared.iterdir())) == 2


def test_a_run_resumed_in_a_shared_log_dir_leaves_the_other_runs_events(tiny_gpt2_dir, tmp_path):
    """Run a resumed with TensorBoard(log_dir) shared with run b purged from step 1 every event in the folder: b's
    curves vanished from TensorBoard. Now a deletes only its own earlier files (named for its run directory) and logs
    what it keeps again; b's file is untouched."""
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    shared = tmp_path / "tb"
    written = []
    for name in "ab":
        fpt.fit(_exp(tiny_gpt2_dir, steps=4), out=tmp_path / name, progress=False,
                trackers=[tracking.TensorBoard(shared)])
        written.append(set(shared.iterdir()) - set().union(*written))
    (b_file,) = written[1]
    b_bytes = b_file.read_bytes()
    config = fpt.train.resume_config(tmp_path / "a", {"steps": 6})
    fpt.fit(fpt.build(config), out=tmp_path / "a", resume=True, progress=False, trackers=[tracking.TensorBoard(shared)])
    events = EventAccumulator(str(shared))
    events.Reload()
    assert sorted(e.step for e in events.Scalars("accuracy/val")) == [2, 2, 4, 4, 6]  # b's 2, 4; a's 2, 4, 6
    assert len(events.Tensors("config/text_summary")) == 2
    assert b_file.read_bytes() == b_bytes and len(list(shared.iterdir())) == 2

def test_mlflow_logs_params_metrics_and_artifacts_and_resume_continues_the_run(tiny_gpt2_dir, tmp_path, monkeypatch):
    pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    monkeypatch.chdir(tmp_path)  # the default store is MLflow's own, in the working directory
    run = tmp_path / "run"
    fpt.fit(_exp(tiny_gpt2_dir, steps=4), out=run, progress=False, trackers=["mlflow"])
    config = fpt.train.resume_config(run, {"steps": 6})
    summary = fpt.fit(fpt.build(config), out=run, resume=True, progress=False, trackers=["mlflow"])

    client = MlflowClient(tracking_uri=tracking.mlflow_store_uri())
    assert not (run / "mlruns").exists()
    (found,) = client.search_runs([client.get_experiment_by_name("fpt").experiment_id])  # one run, continued
    assert found.info.status == "FINISHED" and found.info.run_name == "run"
    assert found.data.params["task"] == "bit-xor" and found.data.params["task.eval_size"] == "16"
    history = client.get_metric_history(found.info.run_id, "val_accuracy")
    assert sorted({m.step for m in history}) == [2, 4, 6]
    assert found.data.metrics["summary.test_accuracy"] == summary["test_accuracy"]
    artifacts = {a.path for a in client.list_artifacts(found.info.run_id)}
    assert {"config.yaml", "metrics.jsonl", "summary.json"} <= artifacts

    elsewhere = (tmp_path / "store").as_uri()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", elsewhere)
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "mine")
    fpt.fit(_exp(tiny_gpt2_dir, steps=2), out=tmp_path / "other", progress=False, trackers=["mlflow"])
    assert not (tmp_path / "other" / "mlruns").exists()
    client = MlflowClient(tracking_uri=elsewhere)
    assert len(client.search_runs([client.get_experiment_by_name("mine").experiment_id])) == 1


def test_mlflow_joins_the_callers_active_run_and_experiment_as_mlflow_would(tiny_gpt2_dir, tmp_path, monkeypatch):
    """A script's own ``with mlflow.start_run():`` around fpt.fit gets the fpt run as its child, in its experiment;
    ``mlflow.set_experiment`` and MLFLOW_EXPERIMENT_ID choose the experiment (all were ignored: runs went to 'fpt')."""
    mlflow = pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient, fluent

    monkeypatch.chdir(tmp_path)
    uri = f"sqlite:///{tmp_path / 'user.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    monkeypatch.setenv("MLFLOW_EXPERIMENT_ID", "restored-then-removed")  # set_experiment sets it; undone after
    monkeypatch.delenv("MLFLOW_EXPERIMENT_ID")
    monkeypatch.setattr(fluent, "_active_experiment_id", None)  # set_experiment's module global, undone after
    mine = mlflow.set_experiment("mine").experiment_id
    with mlflow.start_run(run_name="parent") as parent:
        fpt.fit(_exp(tiny_gpt2_dir, steps=2), out=tmp_path / "child", progress=False, trackers=["mlflow"])
        assert mlflow.active_run().info.run_id == parent.info.run_id  # the caller's run is still the active one
    fpt.fit(_exp(tiny_gpt2_dir, steps=2), out=tmp_path / "alone", progress=False, trackers=["mlflow"])
    monkeypatch.setattr(fluent, "_active_experiment_id", None)
    monkeypatch.setenv("MLFLOW_EXPERIMENT_ID", mine)  # the variable alone, as a job scheduler sets it
    fpt.fit(_exp(tiny_gpt2_dir, steps=2), out=tmp_path / "by-id", progress=False, trackers=["mlflow"])

    client = MlflowClient(tracking_uri=uri)
    runs = {r.info.run_name: r for r in client.search_runs([mine])}
    assert set(runs) == {"parent", "child", "alone", "by-id"} and client.get_experiment_by_name("fpt") is None
    assert runs["child"].data.tags["mlflow.parentRunId"] == parent.info.run_id
    assert "mlflow.parentRunId" not in runs["alone"].data.tags and "mlflow.parentRunId" not in runs["by-id"].data.tags

    monkeypatch.setenv("MLFLOW_EXPERIMENT_ID", "987654")
    with pytest.raises(ConfigError, match=r"^MLFLOW_EXPERIMENT_ID=987654: no such experiment in sqlite:.*MLFLOW_EXP"):
        fpt.fit(_exp(tiny_gpt2_dir, steps=2), out=tmp_path / "nowhere", progress=False, trackers=["mlflow"])


def test_under_mlflow_run_the_fpt_run_is_the_project_runs_child(tiny_gpt2_dir, tmp_path, monkeypatch, capsys):
    """`mlflow run` (an MLproject whose entry point is fpt train --log mlflow) starts the command with MLFLOW_RUN_ID
    (and MLFLOW_EXPERIMENT_ID, MLFLOW_TRACKING_URI) set: fpt's run was logged beside the project's run, which stayed
    empty; it is now its child, as inside a script's mlflow.start_run(). A run id the store lacks: a warning, apart."""
    pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    monkeypatch.chdir(tmp_path)
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    client = MlflowClient(tracking_uri=uri)
    experiment = client.create_experiment("project")
    project = client.create_run(experiment, run_name="project").info.run_id
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setenv("MLFLOW_EXPERIMENT_ID", experiment)
    monkeypatch.setenv("MLFLOW_RUN_ID", project)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    fpt.fit(_exp(tiny_gpt2_dir, steps=2), out=tmp_path / "child", progress=False, trackers=["mlflow"])
    (child,) = [r for r in client.search_runs([experiment]) if r.info.run_name == "child"]
    assert child.data.tags.get("mlflow.parentRunId") == project and child.info.status == "FINISHED"
    monkeypatch.setenv("MLFLOW_RUN_ID", "0123456789abcdef")
    fpt.fit(_exp(tiny_gpt2_dir, steps=2), out=tmp_path / "apart", progress=False, trackers=["mlflow"])
    assert "fpt: warning: MLFLOW_RUN_ID=0123456789abcdef is not a run in the store fpt logs to" in capsys.readouterr().err
    runs = {r.info.run_name: r for r in client.search_runs([experiment])}
    assert set(runs) == {"project", "child", "apart"} and "mlflow.parentRunId" not in runs["apart"].data.tags


def test_a_finished_closed_form_run_resumed_with_trackers_leaves_them_as_they_are(tiny_bert_dir, tiny_tables, tmp_path,
                                                                                  monkeypatch, capsys):
    """``fpt train --resume`` of a finished closed-form run with --log: the trackers' finish came without their start
    ("mlflow tracking failed (AttributeError: 'NoneType' object has no attribute 'log_batch')", the same for
    TensorBoard); then the summary was logged a second time. Now a finished run is left as it is: the MLflow run and
    TensorBoard's events are the first attempt's."""
    pytest.importorskip("mlflow")
    pytest.importorskip("tensorboard")
    from mlflow.tracking import MlflowClient
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    monkeypatch.chdir(tmp_path)
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_ID", raising=False)
    data = tiny_tables.classification("c.csv", labels=("a", "b", "c"), kinds="pqr")
    exp = fpt.build(data=str(data), body=tiny_bert_dir, init="random", fit="closed-form", device="cpu")
    first = fpt.fit(exp, out=tmp_path / "run", progress=False, trackers=["mlflow", "tensorboard"])
    again = fpt.fit(fpt.build(fpt.Run(tmp_path / "run").config()), out=tmp_path / "run", resume=True, progress=False,
                    trackers=["mlflow", "tensorboard"])
    assert again == first and "warning" not in capsys.readouterr().err

    client = MlflowClient(tracking_uri=uri)
    (run,) = client.search_runs([client.get_experiment_by_name("fpt").experiment_id])  # one run, not a second
    assert run.info.status == "FINISHED" and run.data.metrics["summary.val_accuracy"] == first["val_accuracy"]
    assert [m.step for m in client.get_metric_history(run.info.run_id, "val_accuracy")] == [0]
    events = EventAccumulator(str(tmp_path / "run" / "tensorboard"))
    events.Reload()
    assert [e.step for e in events.Scalars("accuracy/val")] == [0]
    assert {e.step for e in events.Scalars("summary/val_accuracy")} == {0}
    assert len(events.Tensors("config/text_summary")) == 1  # the config once, not again at the resume


@pytest.mark.parametrize("store", ["default", "sqlite"])
def test_fpt_train_log_mlflow_works_with_no_variable_and_with_a_sqlite_uri(store, tiny_gpt2_dir, tmp_path, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    pytest.importorskip("sqlalchemy")
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    if store == "sqlite":
        uri = f"sqlite:///{tmp_path / 'elsewhere.db'}"
        monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    else:
        monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
        uri = f"sqlite:///{tmp_path / 'mlflow.db'}"  # MLflow's own default, which `mlflow ui` opens
    assert main(["train", "--body", tiny_gpt2_dir, "--init", "random", "--steps", "2", "--eval-every", "2",
                 "--batch-size", "4", "task.eval_size=16", "--device", "cpu", "--out", "run", "--quiet",
                 "--log", "mlflow"]) == 0
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)  # where mlflow.search_runs looks
    (run,) = mlflow.search_runs(experiment_names=["fpt"], output_format="list")
    assert run.info.status == "FINISHED"
    recorded = fpt.Run(tmp_path / "run").config().lr  # config.yaml records the lr used (the preset's or task's)
    assert recorded is not None and float(run.data.params["lr"]) == pytest.approx(recorded)
    assert run.data.params["steps"] == "2" and "val_accuracy" in run.data.metrics
    assert "summary.test_accuracy" in run.data.metrics

    # the artifact copies MLflow keeps (./mlruns/EXP/RUN/artifacts) are no runs of fpt runs
    from fpt.rundir import find_runs

    assert [p.name for p in find_runs(tmp_path)] == ["run"]


def test_a_store_mlflow_cannot_open_is_one_line_before_any_run_directory(tmp_path, monkeypatch, capsys):
    pytest.importorskip("mlflow")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'm.db'}")
    monkeypatch.setitem(sys.modules, "sqlalchemy", None)  # mlflow-skinny without its database extras
    with pytest.raises(ConfigError, match=r"MLFLOW_TRACKING_URI=sqlite:.*sqlalchemy.*pip install 'fpt\[mlflow\]'"):
        tracking.check(["mlflow"])
    assert main(["train", "--log", "mlflow", "--steps", "1", "--out", "run"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fpt[mlflow]" in err
    assert not (tmp_path / "run").exists()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "nosuch://store")
    with pytest.raises(ConfigError, match="MLFLOW_TRACKING_URI=nosuch://store: this MLflow cannot open"):
        tracking.check(["mlflow"])


@pytest.mark.parametrize("name", ["tensorboard", "mlflow"])
def test_a_missing_extra_is_a_one_line_error_naming_it(name, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ConfigError, match=rf"pip install 'fpt\[{name}\]'"):
        tracking.check([name])
    assert main(["train", "--log", name, "--steps", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"fpt[{name}]" in err


def test_unknown_tracker_is_refused():
    with pytest.raises(ConfigError, match="known trackers are tensorboard, mlflow"):
        tracking.check(["tensorboard,wandb"])


def test_progress_line_fields(tiny_gpt2_dir):
    out = io.StringIO()
    fpt.fit(_exp(tiny_gpt2_dir), progress=False, trackers=[tracking.ProgressLine(0.0, stream=out)])
    lines = out.getvalue().splitlines()
    assert len(lines) == 6  # every step, with a 0 s interval
    assert lines[0].startswith("fpt: step 1/6  loss ") and "val_accuracy -  " in lines[0]
    assert "val_accuracy 0." in lines[2] and "samples/s  ETA 0:00:" in lines[2]


def test_plain_progress_lines_when_stdout_is_a_pipe(tiny_gpt2_dir, tmp_path, capsys):
    # in-process: the command asks sys.stdout.isatty() (fpt.tracking.live_terminal), False for captured output as for
    # a pipe (a real terminal's bar: tests/cli/test_cli_habits.py)
    assert not sys.stdout.isatty()
    rc = main(["train", "--body", tiny_gpt2_dir, "--init", "random", "--steps", "12", "--eval-every", "4",
               "--batch-size", "4", "task.eval_size=16", "--device", "cpu", "--out", str(tmp_path / "run"),
               "--log-every-seconds", "0.001"])
    done = capsys.readouterr()
    assert rc == 0, done.err[-2000:]
    lines = [line for line in done.out.splitlines() if line.startswith("fpt: step ")]
    assert lines and all(" loss " in line and " val_accuracy " in line and " samples/s " in line and " ETA " in line
                         for line in lines)
    assert any("val_accuracy 0." in line for line in lines)
    assert json.loads(done.out.splitlines()[-2])["steps"] == 12  # the result is still the last JSON line

    # --quiet: no progress lines (in-process; captured stdout is not a terminal either)
    assert main(["train", "--body", tiny_gpt2_dir, "--init", "random", "--steps", "2", "--eval-every", "1",
                 "--batch-size", "4", "task.eval_size=8", "--device", "cpu", "--out", str(tmp_path / "q"),
                 "--quiet", "--log-every-seconds", "0.0001"]) == 0
    assert "fpt: step" not in capsys.readouterr().out

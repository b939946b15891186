import json
import shutil
import sys

import pytest

from fpt.errors import RunError
from fpt.presentation import curves
from fpt.presentation.curves import eval_sets
from fpt.rundir import find_runs, read_metrics


def test_plot_overlays_runs(xor_run, memory_run, tmp_path):
    out = tmp_path / "c.png"
    assert curves.plot_curves([xor_run, memory_run], out) == [xor_run, memory_run]
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert eval_sets(read_metrics(xor_run)) == ["val"]  # training logs validation only


def test_labels_come_from_the_config_and_stay_distinct(xor_run, tmp_path):
    twin = tmp_path / "twin"
    shutil.copytree(xor_run, twin)
    a, b = curves.labels([xor_run, twin])
    assert a.startswith("bit-xor / ") and "/ random / paper" in a and a != b
    assert find_runs(tmp_path) == [twin]


def test_a_run_without_metrics_is_an_error(tmp_path):
    (tmp_path / "config.yaml").write_text("task: bit-xor\n")
    with pytest.raises(RunError, match="nothing to plot"):
        curves.plot_curves([tmp_path], tmp_path / "c.png")


def test_tensorboard_missing_says_how_to_install(xor_run, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)  # import now fails
    with pytest.raises(curves.TensorBoardUnavailable, match="pip install tensorboard"):
        curves.write_tensorboard([xor_run], tmp_path)


def test_tensorboard_events(xor_run, tmp_path):
    pytest.importorskip("tensorboard")
    (log,) = curves.write_tensorboard([xor_run], tmp_path)
    assert any(p.name.startswith("events.out.tfevents") for p in log.iterdir())


def test_scalar_tags():
    row = {"step": 3, "wall_seconds": 1.0, "train_loss": 0.5, "train_accuracy": 0.7, "test_accuracy": 0.6}
    assert curves._scalars(row) == {"loss/train": 0.5, "accuracy/train": 0.7, "accuracy/test": 0.6}


def _scalar_steps(log_dir) -> dict[str, list[int]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(log_dir))
    events.Reload()
    return {tag: [s.step for s in events.Scalars(tag)] for tag in events.Tags()["scalars"]}


def test_tensorboard_events_written_again_replace_the_earlier_ones(xor_run, tmp_path):
    """A second fpt plot --tensorboard (or one into RUN/tensorboard, where fpt train --log tensorboard wrote live)
    appended its events beside the first's: every point twice, each curve doubling back, three times after a third."""
    pytest.importorskip("tensorboard")
    steps = [row["step"] for row in read_metrics(xor_run) if "train_loss" in row]
    for _ in range(3):
        (log,) = curves.write_tensorboard([xor_run], tmp_path)
    scalars = _scalar_steps(log)
    assert len(list(log.glob("events.out.tfevents.*"))) == 1  # under a LOGDIR given, the earlier plots' deleted
    assert scalars["loss/train"] == steps and scalars["accuracy/val"] == steps
    # the summary's numbers at the last step, as the live tracker logs them: purged there, so written here too
    assert scalars["summary/steps"] == [steps[-1]] and "summary/val_accuracy" in scalars


def test_two_runs_of_one_name_plotted_into_one_logdir_keep_both(xor_run, tmp_path):
    """fpt plot --tensorboard LOGDIR writes LOGDIR/<run name>: a second run of the same name (runs/a/xor, runs/b/xor)
    purged the first's events there from step 0 (TensorBoard showed the first no more). Now only the files named for
    the run plotted are replaced; another run's stay as they are."""
    pytest.importorskip("tensorboard")
    twin = tmp_path / "b" / xor_run.name
    shutil.copytree(xor_run, twin)
    steps = [row["step"] for row in read_metrics(xor_run) if "train_loss" in row]
    for run in (xor_run, twin, xor_run):
        (log,) = curves.write_tensorboard([run], tmp_path / "logs")
    assert sorted(_scalar_steps(log)["loss/train"]) == sorted(steps * 2)  # each run's points once
    assert len(list(log.glob("events.out.tfevents.*"))) == 2


def test_a_plot_by_an_older_fpt_into_a_logdir_is_replaced_not_shown_twice(xor_run, tmp_path, monkeypatch):
    """fpt plot --tensorboard LOGDIR before fddfeabf wrote LOGDIR/<run name>/events... with no name; a plot after the
    upgrade kept it beside its own named file: every point twice, for good. The unnamed file of the run's own numbers
    is now replaced; one of another run of the same name (other numbers) stays."""
    pytest.importorskip("tensorboard")
    import fpt.tracking

    other = tmp_path / "b" / xor_run.name
    shutil.copytree(xor_run, other)
    rows = [json.loads(line) for line in (other / "metrics.jsonl").read_text().splitlines()]
    (other / "metrics.jsonl").write_text("".join(json.dumps({**r, **({"train_loss": r["train_loss"] + 1}
                                                               if "train_loss" in r else {})}) + "\n" for r in rows))
    steps = [row["step"] for row in read_metrics(xor_run) if "train_loss" in row]
    with monkeypatch.context() as old:  # an older fpt: no name on the file, nothing deleted
        old.setattr(fpt.tracking, "drop_own_events", lambda *args: "")
        (log,) = curves.write_tensorboard([xor_run], tmp_path / "logs")
        first = set(log.iterdir())
        curves.write_tensorboard([other], tmp_path / "logs")
    (other_file,) = set(log.iterdir()) - first
    kept = other_file.read_bytes()
    (log,) = curves.write_tensorboard([xor_run], tmp_path / "logs")
    assert sorted(_scalar_steps(log)["loss/train"]) == sorted(steps * 2)  # the run's once, the other run's once
    assert len(list(log.iterdir())) == 2 and other_file.read_bytes() == kept

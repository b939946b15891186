"""fpt.rundir as the one owner of a run directory's layout: its names, its typed training state, its writers."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import pytest

import fpt
from fpt import rundir
from fpt.errors import CheckpointError
from fpt.rundir import TrainState

# The training state as fit kept it in a plain dict before TrainState: state.json files hold these keys.
OLD_STATE = {"step": 30, "best_score": 0.75, "best_loss": 0.5, "best_step": 20, "steps_to_target": None,
             "wall_seconds": 3.5, "train_seconds": 3.0, "train_examples": 240, "evals_since_best": 1,
             "diverged_at": None}


def test_the_state_is_written_as_the_plain_dict_was():
    state = TrainState.from_json(OLD_STATE, "state.json")
    assert state.step == 30 and state.best_loss == 0.5 and state.train_examples == 240
    assert list(state.to_json()) == list(OLD_STATE) and state.to_json() == OLD_STATE


def test_older_states_still_read():
    before_tie_break = {k: v for k, v in OLD_STATE.items() if k != "best_loss"}
    assert TrainState.from_json(before_tie_break, "x").best_loss is None
    before_regression = {("best_accuracy" if k == "best_score" else k): v for k, v in before_tie_break.items()}
    assert TrainState.from_json(before_regression, "x").best_score == 0.75
    assert TrainState.from_json({**OLD_STATE, "best_score": 1}, "x").best_score == 1  # a float field takes an int


@pytest.mark.parametrize("change, says", [
    ({"step": "30"}, "step is '30', expected int"),
    ({"train_examples": True}, "train_examples is True"),
    ({"best_step": 31}, "step 30 / best_step 31 are inconsistent"),
    ({"diverged_at": 1.5}, "diverged_at is 1.5, expected int or NoneType"),
])
def test_a_bad_state_names_the_file_and_the_field(change, says):
    with pytest.raises(CheckpointError, match="^ckpt/state.json: " + says.replace("(", r"\(")):
        TrainState.from_json({**OLD_STATE, **change}, "ckpt/state.json")
    missing = {k: v for k, v in OLD_STATE.items() if k != "wall_seconds"}
    with pytest.raises(CheckpointError, match=r"lacks \['wall_seconds'\]"):
        TrainState.from_json(missing, "ckpt/state.json")


def test_a_checkpoint_saves_and_restores_the_typed_state(tmp_path):
    import torch

    from fpt import checkpoint

    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.ones(1, 2)).sum().backward()
    optimizer.step()
    state = TrainState.from_json(OLD_STATE, "x")
    version = checkpoint.save(checkpoint.slot(tmp_path, rundir.LATEST), model, {}, "fp", optimizer, state)
    assert json.loads((version / rundir.STATE).read_text())["state"] == OLD_STATE
    assert checkpoint.load_resume_state(version, model, optimizer) == state
    assert checkpoint.committed_step(tmp_path) == 30 and checkpoint.version_step(version) == 30
    assert checkpoint.committed_step(tmp_path, rundir.BEST) is None


def test_the_writers_and_readers_meet(tmp_path):
    rundir.write_summary(tmp_path, {"test_r2": float("-inf"), "eval": {"loss": float("nan")}, "steps": 3})
    assert rundir.read_summary(tmp_path) == {"test_r2": None, "eval": {"loss": None}, "steps": 3}
    rundir.write_selection(tmp_path, {"winner": 1, "means": [math.nan, 0.5]})
    assert rundir.read_selection(tmp_path) == {"winner": 1, "means": [None, 0.5]}
    assert rundir.read_selection(tmp_path / "none") is None
    for step in (10, 20, 30):
        rundir.append_metrics(tmp_path, {"step": step, "wall_seconds": step / 10, "val_accuracy": step / 100})
    with open(tmp_path / rundir.METRICS, "a") as f:
        f.write('{"step": 4')  # a half-written line: a reader while training skips it
    assert [r["step"] for r in rundir.read_metrics_so_far(tmp_path)] == [10, 20, 30]
    assert [r["step"] for r in rundir.truncate_metrics(tmp_path, 20)] == [10, 20]
    assert [r["step"] for r in rundir.read_metrics(tmp_path)] == [10, 20]
    rundir.write_ensemble(tmp_path, {"members": ["members/seed0"]})
    assert rundir.is_ensemble(tmp_path) and rundir.read_ensemble(tmp_path) == ["members/seed0"]
    (tmp_path / rundir.ENSEMBLE).write_text('{"members": []}')
    with pytest.raises(CheckpointError, match="ensemble.json: not an ensemble file"):
        rundir.read_ensemble(tmp_path)


def test_start_clean_refuses_files_fpt_did_not_write(tmp_path):
    (tmp_path / rundir.METRICS).write_text("mine\n")
    (tmp_path / rundir.BEST).mkdir()
    with pytest.raises(CheckpointError, match="not an fpt run"):
        rundir.start_clean(tmp_path)
    assert (tmp_path / rundir.METRICS).read_text() == "mine\n" and (tmp_path / rundir.BEST).is_dir()
    rundir.write_config(tmp_path, fpt.RunConfig())
    assert rundir.written_by_fpt(tmp_path)
    rundir.start_clean(tmp_path)
    assert not (tmp_path / rundir.METRICS).exists() and rundir.checkpoint_paths(tmp_path) == []


# rundir's file names, each of which only rundir may spell (the directory names are common words and are not checked)
OWNED = {rundir.CONFIG, rundir.METRICS, rundir.SUMMARY, rundir.DATA, rundir.SELECTION_FILE, rundir.LOCK_FILE,
         rundir.ENSEMBLE, rundir.BODY_FILE, rundir.BODY_META, rundir.STATE, rundir.TRAINABLE, rundir.OPTIMIZER,
         rundir.RNG}
# Another format's file that shares a name (Hugging Face datasets' save_to_disk writes a state.json), and config's
# error message for a directory given as --config (config may not import rundir: rundir reads configs).
NOT_OURS = {("fpt/data/hub.py", "state.json"), ("fpt/config.py", "config.yaml")}


def _spelled(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}
    return {node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
            and node.value in OWNED}


def test_only_rundir_spells_a_run_directory_file_name():
    src = Path(fpt.__file__).parent
    spelled = {(str(p.relative_to(src.parent)), name) for p in sorted(src.rglob("*.py"))
               if p.parent.name != "rundir" for name in _spelled(p)}
    assert spelled - NOT_OURS == set()

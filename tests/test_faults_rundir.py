"""Faults a run directory must survive: a second writer, kills during saves, damaged files, a full disk.

Every case ends in the right result or a one-line error that names the file (no traceback),
and never damages what was written before.

``FPT_KILL_LOOP=N`` sets how many SIGKILLs the kill-loop test sends (default 40).
"""

from __future__ import annotations

import errno
import hashlib
import importlib.util
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from torch import nn

import fpt
from fpt import checkpoint, rundir
from fpt.cli import main
from fpt.errors import CheckpointError
from fpt.rundir import TrainState, atomic
from fpt.train import resume_config

STEPS, EVERY = 10, 5


def _exp(body, **kw):
    fields = dict(task="bit-xor", body=body, init="random", steps=STEPS, batch_size=8, eval_every=EVERY,
                  task_options={"eval_size": 32}, device="cpu")
    return fpt.build(**{**fields, **kw})


def _snapshot(run: Path) -> dict[str, str]:
    """sha256 of every file of a run directory but its lock (whose text names the current holder)."""
    return {str(p.relative_to(run)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(run.rglob("*")) if p.is_file() and p.name != rundir.LOCK_FILE}


def _steps(run: Path) -> list[int]:
    return [json.loads(line)["step"] for line in (run / "metrics.jsonl").read_text().splitlines()]


def _one_line_error(capsys, *needles: str) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("fpt train: error:") or line.startswith("fpt eval: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def trained(tiny_gpt2_dir, tmp_path_factory) -> Path:
    """A finished 10-step run: checkpoint/ holds steps 5 and 10."""
    run = tmp_path_factory.mktemp("trained") / "run"
    fpt.fit(_exp(tiny_gpt2_dir), out=run, progress=False)
    assert sorted(p.name for p in (run / "checkpoint").iterdir()) == ["current", "step-00000005", "step-00000010"]
    return run


@pytest.fixture
def run(trained, tmp_path) -> Path:
    """A copy of the trained run, with its summary removed so that it can be resumed to more steps."""
    copy = tmp_path / "run"
    shutil.copytree(trained, copy)
    (copy / "summary.json").unlink()
    return copy


def _resume(run: Path, steps: int = 15) -> dict:
    return fpt.fit(fpt.build(resume_config(run, {"steps": steps})), out=run, resume=True, progress=False)


def _cli_resume(run: Path, steps: int = 15) -> int:
    return main(["train", "--resume", str(run), "--steps", str(steps), "--quiet"])


# ------------------------------------------------------------------------------------------- one writer

_HOLDER = """
import sys, time
from fpt import rundir
with rundir.lock(sys.argv[1], what="test holder"):
    print("locked", flush=True)
    time.sleep(60)
"""


def test_a_second_writer_is_refused_naming_the_holder(trained, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(trained, run)
    before = _snapshot(run)
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(run)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(rundir.RunDirBusyError, match=rf"in use by another fpt process \(pid {holder.pid} on "
                                                         rf"{socket.gethostname()}, since 20"):
            with rundir.lock(run):
                pass
        with pytest.raises(rundir.RunDirBusyError):
            _resume(run)
        assert _cli_resume(run) == 2
        _one_line_error(capsys, "in use by another fpt process", f"pid {holder.pid}", "since")
        assert main(["train", "--out", str(run), "--quiet"]) == 2
        _one_line_error(capsys, f"pid {holder.pid}")
        assert _snapshot(run) == before  # the holder's files are untouched
    finally:
        holder.kill()
        holder.wait()
    # the holder died without cleaning up: its lock file is left, but it is no lock
    assert f"pid={holder.pid}" in (run / rundir.LOCK_FILE).read_text()
    with rundir.lock(run):
        assert f"pid={os.getpid()}" in (run / rundir.LOCK_FILE).read_text()
    assert not (run / rundir.LOCK_FILE).exists()  # released: removed


def test_the_lock_is_reentrant_in_one_process_and_released_on_errors(tmp_path):
    with rundir.lock(tmp_path / "r"):
        with rundir.lock(tmp_path / "r"):
            assert rundir.holds_lock(tmp_path / "r")
        assert rundir.holds_lock(tmp_path / "r")
    assert not rundir.holds_lock(tmp_path / "r")
    with pytest.raises(KeyError), rundir.lock(tmp_path / "r"):
        raise KeyError("boom")
    assert not rundir.holds_lock(tmp_path / "r")


@pytest.mark.slow  # two real CLI processes; the refusal itself is covered fast above
def test_two_concurrent_train_commands_one_is_refused(tiny_gpt2_dir, tmp_path, capsys):
    out = tmp_path / "run"
    args = ["train", "--body", tiny_gpt2_dir, "--init", "random", "--steps", "100", "--eval-every", "10",
            "--batch-size", "8", "task.eval_size=32", "--quiet", "--out", str(out)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    first = subprocess.Popen([sys.executable, "-m", "fpt.cli", *args], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while first.poll() is None and time.monotonic() < deadline:
            if (out / "metrics.jsonl").is_file():  # the first one holds the lock and is training
                break
            time.sleep(0.05)
        assert first.poll() is None, first.stderr.read()
        assert main(args) == 2
        _one_line_error(capsys, "in use by another fpt process", f"pid {first.pid}")
        assert first.wait(timeout=300) == 0
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    steps = _steps(out)
    assert steps == list(range(10, 101, 10))  # one writer: no duplicated or interleaved rows
    assert json.loads((out / "summary.json").read_text())["steps"] == 100


# ------------------------------------------------------------------------------------------- kill loop

class _Tiny(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.frozen = nn.Linear(64, 64)
        self.frozen.requires_grad_(False)
        self.head = nn.Linear(64, 64)
        self.norm = nn.LayerNorm(64)


def _train_state(step: int) -> TrainState:
    return TrainState(step=step, best_score=0.5, best_step=step - step % 3, wall_seconds=float(step),
                      train_seconds=float(step), train_examples=8 * step, evals_since_best=step % 3)


def _stamp(model: nn.Module, step: int) -> None:
    with torch.no_grad():
        for p in model.parameters():
            if p.requires_grad:
                p.fill_(float(step))


def _saver(run: Path, ready: int) -> None:
    """Save checkpoints as fast as possible, continuing from the last one, until killed."""
    torch.set_num_threads(1)
    model = _Tiny()
    fp = checkpoint.fingerprint(model)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad])
    with rundir.lock(run, what="kill-loop saver"):
        if checkpoint.has_checkpoint(run):
            version = checkpoint.load_trainable(checkpoint.slot(run, "checkpoint"), model, fp)
            step = checkpoint.load_resume_state(version, model, optimizer).step
            checkpoint.commit(version)  # as fit does
            checkpoint.rewind(run, "best", step)
        else:
            model.head(torch.zeros(1, 64)).sum().backward()
            optimizer.step()
            step = 0
        os.write(ready, b"r")
        while True:
            step += 1
            _stamp(model, step)
            if step % 3 == 0:
                checkpoint.save(checkpoint.slot(run, "best"), model, {}, fp, step=step)
            checkpoint.save(checkpoint.slot(run, "checkpoint"), model, {}, fp, optimizer, _train_state(step))


def _fork_saver(run: Path) -> int:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 0
        try:
            os.close(r)
            _saver(run, w)
        except BaseException as exc:  # noqa: BLE001 - reported to the parent through the exit code and a file
            (run.parent / "saver-error.txt").write_text(f"{type(exc).__name__}: {exc}")
            code = 3
        os._exit(code)
    os.close(w)
    got = os.read(r, 1)
    os.close(r)
    if got != b"r":
        os.waitpid(pid, 0)
        raise AssertionError((run.parent / "saver-error.txt").read_text())
    return pid


def kill_loop(run: Path, kills: int, seed: int = 0, max_delay: float = 0.08) -> dict[str, int]:
    """SIGKILL a checkpoint-saving child ``kills`` times; after each, a verified checkpoint must be found."""
    rng = random.Random(seed)
    tally = {"kills": 0, "mid_save_debris": 0, "renamed_not_committed": 0, "between_saves": 0, "fallbacks": 0,
             "resume_ok": 0, "best_ok": 0}
    last = 0
    for _ in range(kills):
        pid = _fork_saver(run)
        time.sleep(rng.uniform(0, max_delay))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status), (run.parent / "saver-error.txt").read_text()
        tally["kills"] += 1
        slot = checkpoint.slot(run, "checkpoint")
        debris = [p for d in (slot, checkpoint.slot(run, "best")) if d.is_dir()
                  for p in d.iterdir() if p.name.startswith(".")]
        pointed = (slot / "current").read_text().strip()
        newest = max(p.name for p in slot.iterdir() if p.name.startswith("step-"))
        if debris:
            tally["mid_save_debris"] += 1
        elif newest != pointed:
            tally["renamed_not_committed"] += 1
        else:
            tally["between_saves"] += 1
        with rundir.lock(run):  # the dead child's lock file is no lock
            found = checkpoint.find(run, "checkpoint")
            tally["fallbacks"] += found.name != pointed
            model = _Tiny()
            optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad])
            version = checkpoint.load_trainable(slot, model, checkpoint.fingerprint(model))
            state = checkpoint.load_resume_state(version, model, optimizer)
            assert state.step >= last, "a committed checkpoint was lost"
            assert all(torch.all(p == state.step) for p in model.parameters() if p.requires_grad)
            last = state.step
            tally["resume_ok"] += 1
            if checkpoint.has_checkpoint(run, "best"):
                best = checkpoint.find(run, "best")
                checkpoint.load_trainable(best, model, checkpoint.fingerprint(model))
                best_step = int(best.name.split("-")[1].split(".")[0])
                assert all(torch.all(p == best_step) for p in model.parameters() if p.requires_grad)
                tally["best_ok"] += 1
    tally["last_step"] = last
    return tally


def test_sigkill_during_checkpoint_saves_always_leaves_a_complete_one(tmp_path):
    kills = int(os.environ.get("FPT_KILL_LOOP", "40"))
    run = tmp_path / "run"
    run.mkdir()
    # the first checkpoint: kill until one is committed (a kill before it leaves nothing to resume, correctly)
    while not (run / "checkpoint" / "current").is_file():
        pid = _fork_saver(run)
        time.sleep(0.05)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    tally = kill_loop(run, kills)
    print(f"kill loop: {tally}")
    assert tally["kills"] == tally["resume_ok"] == kills
    assert tally["last_step"] > 0


# ------------------------------------------------------------------------------------------- damaged files

def _newest(run: Path, which: str = "checkpoint") -> Path:
    return checkpoint.find(run, which)


def _truncate(f: Path) -> None:
    data = f.read_bytes()
    f.write_bytes(data[: len(data) // 2])


def _zero(f: Path) -> None:
    f.write_bytes(b"")


def _junk_header(f: Path) -> None:
    data = f.read_bytes()
    f.write_bytes(b"\xff" * 8 + b"{not json" + data[17:])


def _bit_flip(f: Path) -> None:
    data = bytearray(f.read_bytes())
    data[-3] ^= 0x40  # a tensor byte: still parses, different values
    f.write_bytes(bytes(data))


DAMAGE = {"truncated": _truncate, "zero-length": _zero, "junk-header": _junk_header, "bit-flip": _bit_flip}


@pytest.mark.parametrize("name", ["trainable.safetensors", "optimizer.safetensors"])
@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_newest_checkpoint_falls_back_to_the_previous_one(run, name, damage, capsys):
    DAMAGE[damage](run / "checkpoint" / "step-00000010" / name)
    summary = _resume(run)
    err = capsys.readouterr().err
    assert f"step-00000010/{name}" in err and "using the previous complete checkpoint" in err
    assert summary["steps"] == 15
    assert _steps(run) == [5, 10, 15]  # replayed from step 5: row 10 rewritten once, never duplicated
    assert checkpoint.find(run, "checkpoint").name == "step-00000015"


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_no_complete_checkpoint_left_is_a_one_line_error(run, damage, capsys):
    for step in ("step-00000005", "step-00000010"):
        DAMAGE[damage](run / "checkpoint" / step / "trainable.safetensors")
    before = _snapshot(run)
    assert _cli_resume(run) == 2
    line = _one_line_error(capsys, "trainable.safetensors", "no complete checkpoint is left", "new --out")
    assert "step-00000010" in line
    assert _snapshot(run) == before
    with pytest.raises(CheckpointError):
        _resume(run)


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_fpt_eval_verifies_best(trained, tmp_path, damage, capsys):
    run = tmp_path / "run"
    shutil.copytree(trained, run)
    for version in [p for p in (run / "best").iterdir() if p.is_dir()]:
        DAMAGE[damage](version / "trainable.safetensors")
    assert main(["eval", str(run)]) == 2
    _one_line_error(capsys, "best/step-", "trainable.safetensors")
    assert main(["eval", str(run), "--which", "checkpoint"]) == 0


@pytest.mark.parametrize("content", ["{}", "", "[1, 2]", '{"format": "fpt-2", "step": 10}'])
def test_a_bad_state_json_is_never_a_restart_at_step_0(run, content, capsys):
    (run / "checkpoint" / "step-00000010" / "state.json").write_text(content)
    summary = _resume(run)  # falls back to step 5: trained weights and rows stay consistent
    assert "step-00000010/state.json" in capsys.readouterr().err
    assert summary["steps"] == 15 and _steps(run) == [5, 10, 15]
    versions = [p for p in (run / "checkpoint").iterdir() if p.is_dir()]
    # the damaged version is gone; step 10 was written again under a new name, versions being immutable
    assert sorted(p.name for p in versions) == ["step-00000010.2", "step-00000015"]
    for version in versions:
        (version / "state.json").write_text(content)
    before = _snapshot(run)
    assert _cli_resume(run, 20) == 2
    _one_line_error(capsys, "state.json", "no complete checkpoint is left")
    assert _snapshot(run) == before


def test_an_edited_state_is_caught_by_its_digest(run, capsys):
    file = run / "checkpoint" / "step-00000010" / "state.json"
    doc = json.loads(file.read_text())
    doc["state"]["step"] = 0
    file.write_text(json.dumps(doc))
    _resume(run)
    assert "does not match its digest" in capsys.readouterr().err and _steps(run) == [5, 10, 15]


def test_a_lost_pointer_or_a_dangling_one_still_finds_the_newest(run):
    (run / "checkpoint" / "current").write_text("step-00000099\n")
    assert checkpoint.find(run, "checkpoint").name == "step-00000010"
    (run / "checkpoint" / "current").unlink()
    assert checkpoint.find(run, "checkpoint").name == "step-00000010"
    assert _resume(run)["steps"] == 15 and _steps(run) == [5, 10, 15]


# ------------------------------------------------------------------------------------------- metrics.jsonl

def test_a_corrupt_last_metrics_line_past_the_checkpoint_is_dropped(run):
    with open(run / "metrics.jsonl", "a") as f:
        f.write('{"step": 15, "wall_sec')  # a kill while the row after the checkpoint was written
    assert _resume(run)["steps"] == 15 and _steps(run) == [5, 10, 15]


def test_a_corrupt_metrics_line_at_or_before_the_checkpoint_is_named(run, capsys):
    lines = (run / "metrics.jsonl").read_text().splitlines()
    (run / "metrics.jsonl").write_text(lines[0] + "\n" + lines[1][:20] + "\n")  # the checkpoint's own row damaged
    before = _snapshot(run)
    assert _cli_resume(run) == 2
    _one_line_error(capsys, "metrics.jsonl, line 2", "repair or delete that line")
    assert _snapshot(run) == before  # nothing written: the damage is the user's to look at
    (run / "metrics.jsonl").write_text(lines[0][:20] + "\n" + lines[1] + "\n")  # not the last line
    assert _cli_resume(run) == 2
    _one_line_error(capsys, "metrics.jsonl, line 1", "not the last line")


def test_rows_past_the_checkpoint_are_truncated_and_restarts_superseded(run):
    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    extra = {**rows[-1], "step": 15}
    # an old version's restart appended rows again (5, 10), and a row past the checkpoint (15)
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [*rows, *rows, extra]))
    _resume(run, 10)
    assert _steps(run) == [5, 10]


def test_a_run_killed_before_its_first_checkpoint_starts_clean(tiny_gpt2_dir, trained, tmp_path, capsys):
    out = tmp_path / "run"
    shutil.copytree(trained, out)
    shutil.rmtree(out / "checkpoint")
    (out / "summary.json").unlink()
    lines = (out / "metrics.jsonl").read_text().splitlines()
    (out / "metrics.jsonl").write_text(lines[0] + "\n")  # the first row, and best/, but no checkpoint yet
    fpt.fit(_exp(tiny_gpt2_dir), out=out, progress=False)
    assert "stopped before its first checkpoint; starting it afresh" in capsys.readouterr().err
    assert _steps(out) == [5, 10]  # not appended to the stale row
    # the same through --resume (what fpt reproduce does after such a kill)
    shutil.rmtree(out / "checkpoint")
    (out / "summary.json").unlink()
    (out / "metrics.jsonl").write_text(lines[0] + "\n")
    assert _cli_resume(out, STEPS) == 0
    assert _steps(out) == [5, 10] and json.loads((out / "summary.json").read_text())["steps"] == STEPS


# ------------------------------------------------------------------------------------------- old layout

def _to_old_layout(run: Path) -> None:
    """Rewrite checkpoint/ and best/ as the pre-versioning code wrote them."""
    for which in ("checkpoint", "best"):
        version = checkpoint.find(run, which)
        doc = json.loads((version / "state.json").read_text())
        flat = run / f"{which}.flat"
        flat.mkdir()
        for f in version.iterdir():
            if f.name != "state.json":
                shutil.copy(f, flat / f.name)
        if "state" in doc:
            (flat / "state.json").write_text(json.dumps(doc["state"], indent=1))
        shutil.rmtree(run / which)
        flat.rename(run / which)


def test_an_old_layout_run_resumes_and_is_migrated(run, tmp_path):
    _to_old_layout(run)
    assert _resume(run)["steps"] == 15 and _steps(run) == [5, 10, 15]
    assert not (run / "checkpoint" / "trainable.safetensors").exists()  # migrated
    assert checkpoint.find(run, "checkpoint").name == "step-00000015"


def test_an_old_layout_killed_between_its_two_renames_resumes(run):
    """The old save's gap: only checkpoint.old and a complete checkpoint.tmp were left."""
    _to_old_layout(run)
    shutil.copytree(run / "checkpoint", run / "checkpoint.old")
    (run / "checkpoint").rename(run / "checkpoint.tmp")
    assert checkpoint.has_checkpoint(run)
    assert _resume(run)["steps"] == 15 and _steps(run) == [5, 10, 15]
    assert not (run / "checkpoint.tmp").exists() and not (run / "checkpoint.old").exists()


def test_an_old_layout_state_of_braces_is_an_error(run, capsys):
    _to_old_layout(run)
    (run / "checkpoint" / "state.json").write_text("{}")
    assert _cli_resume(run) == 2
    _one_line_error(capsys, "checkpoint/state.json", "lacks")


# ------------------------------------------------------------------------------------------- disk full

def _enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("where", ["version", "pointer", "metrics", "summary"])
def test_a_full_disk_is_a_clear_error_and_keeps_the_newest_checkpoint(run, where, monkeypatch, capsys):
    latest = run / "checkpoint"
    if where == "version":  # writing a file of the new version of checkpoint/
        real_write = checkpoint._write_synced
        monkeypatch.setattr(checkpoint, "_write_synced",
                            lambda path, data: _enospc() if latest in path.parents else real_write(path, data))
    elif where == "pointer":  # committing it
        real_replace = os.replace
        monkeypatch.setattr(atomic.os, "replace", lambda src, dst: _enospc() if Path(dst) == latest / "current"
                            else real_replace(src, dst))
    elif where == "metrics":  # appending a row
        monkeypatch.setattr(atomic, "open", lambda path, mode="r", *a: _enospc() if mode == "a" else open(path, mode, *a),
                            raising=False)
    else:  # writing summary.json
        real_write_with = atomic.write_with
        monkeypatch.setattr(atomic, "write_with", lambda path, writer, kept="": real_write_with(
            path, _enospc if Path(path).name == "summary.json" else writer, kept))
    assert _cli_resume(run) == 2
    line = _one_line_error(capsys, "disk is full")
    if where in ("version", "pointer"):
        assert "step-00000010" in line and "intact" in line
    monkeypatch.undo()
    # the newest complete checkpoint is intact, no temporary debris is left, and the run resumes once there is space
    assert checkpoint.find(run, "checkpoint").name in ({"step-00000010"} if where != "summary" else {"step-00000015"})
    assert not [p for p in (run / "checkpoint").iterdir() if p.name.startswith(".")]
    assert not [p for p in run.iterdir() if p.name.startswith(".")]
    summary = _resume(run)
    assert summary["steps"] == 15 and _steps(run) == [5, 10, 15]


def test_a_folder_of_runs_or_a_file_given_as_the_run_says_which_to_give(tmp_path, xor_run, capsys):
    """fpt predict runs new.csv (the folder above the runs) and fpt predict new.csv runs/x (the arguments swapped) said
    only what the path is not."""
    root = tmp_path / "runs"
    root.mkdir()
    for name in ("b", "a"):
        shutil.copytree(xor_run, root / name)
    (root / "notes").mkdir()
    new = tmp_path / "new.csv"
    new.write_text("x\n1\n")
    assert main(["predict", str(root), str(new)]) == 2
    assert f"it holds runs: give one of them ({root / 'a'}, {root / 'b'})" in capsys.readouterr().err
    assert main(["eval", str(root)]) == 2
    assert f"it holds runs: give one of them ({root / 'a'}, {root / 'b'})" in capsys.readouterr().err
    assert main(["predict", str(new), str(root / "a"), "--out", str(tmp_path / "p.csv")]) == 2
    err = capsys.readouterr().err
    assert "it is a file: give a run directory (fpt predict takes the run first" in err and len(err.splitlines()) == 1


def test_resume_reads_target_beside_data_as_the_column_as_the_start_did(tmp_path):
    """The start command given again with --resume added (fpt train --data t.csv --target label ... --resume RUN):
    --target named the column at the start but a stopping accuracy on resume ("resume overrides: field 'target':
    expected a number, got 'label'")."""
    from fpt.config import RunConfig

    (tmp_path / "run").mkdir()
    saved = RunConfig(data=str(tmp_path / "t.csv"), target_column="label", steps=10)
    rundir.write_config(tmp_path / "run", saved)
    resumed = resume_config(tmp_path / "run", {"data": saved.data, "target": "label", "steps": 20})
    assert (resumed.target_column, resumed.target, resumed.steps) == ("label", saved.target, 20)
    assert resume_config(tmp_path / "run", {"target": 0.9}).target == 0.9  # a number is still the accuracy


def test_resuming_a_finished_run_says_so_and_changes_nothing(trained, tiny_gpt2_dir, tmp_path, capsys):
    """It was evaluated again: summary.json rewritten (its wall_seconds grew), the summary logged to the trackers a
    second time, and a run stopped at its target trained on to the next evaluation."""
    run = tmp_path / "run"
    shutil.copytree(trained, run)
    before, summary = _snapshot(run), json.loads((run / "summary.json").read_text())
    capsys.readouterr()
    # with TensorBoard installed (fpt[tensorboard]), also that a tracker asked for opens nothing
    log = ["--log", "tensorboard"] if importlib.util.find_spec("tensorboard") else []
    assert main(["train", "--resume", str(run), "--quiet", *log]) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if line.startswith("fpt:")]
    assert said == [f"fpt: {run} already finished (step 10, stopped: steps); nothing to resume, and nothing in it was "
                    "changed (a larger --steps trains it further)"]
    assert _snapshot(run) == before  # no tensorboard/ either
    assert _resume(run, steps=STEPS) == summary and _snapshot(run) == before

    stopped = tmp_path / "target"
    first = fpt.fit(_exp(tiny_gpt2_dir, target=0.01), out=stopped, progress=False)
    assert (first["stopped"], first["steps"]) == ("target", EVERY)
    before = _snapshot(stopped)
    assert main(["train", "--resume", str(stopped), "--quiet"]) == 0
    assert _snapshot(stopped) == before  # not trained on to step 10

    assert _cli_resume(run, steps=15) == 0  # more steps: trained further, as before
    assert json.loads((run / "summary.json").read_text())["steps"] == 15 and _steps(run) == [5, 10, 15]


def test_resuming_after_the_data_file_changed_is_refused(tiny_gpt2_dir, tiny_tables, tmp_path, capsys):
    """The run's --data file edited in place between the kill and --resume: it trained on in silence, on the new
    rows, and data.json (the fitted tokeniser the run's predictions read) was overwritten with the new data's."""
    data = tiny_tables.classification("d.csv")
    run = tmp_path / "run"
    args = ["--body", tiny_gpt2_dir, "--init", "random", "--fit", "gradient", "--eval-every", "2", "--batch-size", "8",
            "--baselines", "none", "--device", "cpu", "--quiet"]
    assert main(["train", "--data", str(data), *args, "--steps", "4", "--out", str(run)]) == 0
    (run / "summary.json").unlink()  # as if killed after its last checkpoint
    before = _snapshot(run)
    tiny_tables.classification("d.csv", shift=3.0)  # the same file name, other values
    capsys.readouterr()
    assert _cli_resume(run, steps=6) == 2
    line = _one_line_error(capsys, f"{run / 'data.json'}", str(data), "changed since the run started")
    assert "'tokeniser'" in line
    assert _snapshot(run) == before
    tiny_tables.classification("d.csv")  # the data it started with: it resumes
    assert _cli_resume(run, steps=6) == 0 and _steps(run) == [2, 4, 6]

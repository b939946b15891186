"""SIGTERM (kill PID, timeout, docker stop, a batch system's stop) ends fpt predict, eval, export and report as Ctrl-C
does: 'fpt CMD: terminated (SIGTERM)', status 143, and their finally blocks run, so a kill mid-write leaves neither the
output nor a temporary file beside it. Python's default ended them on the spot, saying nothing, leaving
.predictions.csv.tmp-PID or .DIR.tmp-PID/ behind. A caller's handler stands in for the default here (the default would
end pytest): before the fix it was the one reached, and the command finished."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

from fpt.cli import main


def _kill_then(fn):
    """``fn`` with a SIGTERM sent to this process first, in the middle of the command's work."""

    def killed(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler runs at the next bytecode: a command that reads SIGTERM never gets here
        return fn(*args, **kwargs)

    return killed


@pytest.fixture
def caller_handler():
    caller = []
    before = signal.signal(signal.SIGTERM, lambda *a: caller.append("caller"))
    try:
        yield caller
    finally:
        signal.signal(signal.SIGTERM, before)


def _half_then_kill(real):
    def write(tmp, data):  # half the bytes on disk, then the kill
        with open(tmp, "wb") as f:
            f.write(data[: len(data) // 2])
        return _kill_then(real)(tmp, data)

    return write


@pytest.mark.parametrize("command", ["predict", "eval", "export", "report", "weights"])
def test_sigterm_ends_the_command_as_ctrl_c_leaving_no_partial_output(command, xor_run, tiny_gpt2_dir, tmp_path,
                                                                        monkeypatch, capsys, caller_handler):
    import shutil

    import fpt.export
    import fpt.rundir.atomic as atomic
    import fpt.train

    run = tmp_path / "run"
    shutil.copytree(xor_run, run)
    if command == "predict":
        test = fpt.build(task="bit-xor", body=fpt.Run(run).config().body,
                         task_options={"eval_size": 32}).data.eval_sets["test"]
        np.savez(tmp_path / "test.npz", X=test.x.numpy(), y=test.y.numpy())
        argv, out = [str(run), str(tmp_path / "test.npz"), "--out", str(tmp_path / "p.csv")], tmp_path / "p.csv"
        monkeypatch.setattr(atomic, "_write_file", _half_then_kill(atomic._write_file))
    elif command == "eval":
        argv, out = [str(run)], None
        monkeypatch.setattr(fpt.train, "evaluate", _kill_then(fpt.train.evaluate))
    elif command == "export":
        argv, out = [str(run), str(tmp_path / "exp")], tmp_path / "exp"
        monkeypatch.setattr(fpt.export, "write_hf_body", _kill_then(fpt.export.write_hf_body))
    elif command == "report":
        argv, out = [str(run), "--attention", "never"], run / "report.html"
        monkeypatch.setattr(atomic, "_write_file", _half_then_kill(atomic._write_file))
    else:  # weights.csv was written in place: half of it stayed
        (tmp_path / "w").mkdir()
        argv, out = ["--body", tiny_gpt2_dir, "--init", "random", "--out", str(tmp_path / "w")], tmp_path / "w" / "weights.csv"
        monkeypatch.setattr(atomic, "_write_file", _half_then_kill(atomic._write_file))
    listed = sorted(p.name for p in tmp_path.rglob("*"))
    capsys.readouterr()
    assert main([command, *argv]) == 143
    said = capsys.readouterr()
    assert caller_handler == [] and said.err.strip() == f"fpt {command}: terminated (SIGTERM)" and said.out == ""
    assert out is None or not out.exists()
    assert sorted(p.name for p in tmp_path.rglob("*")) == listed  # no .p.csv.tmp-PID, .exp.tmp-PID/ left
    os.kill(os.getpid(), signal.SIGTERM)  # after the command: the caller's handler again
    assert caller_handler == ["caller"]


def test_a_stopped_fpt_attention_leaves_no_score_json_beside_other_maps(xor_run, tmp_path, monkeypatch, capsys,
                                                                       caller_handler):
    """fpt report reads an attention folder as whole when it has score.json: written in place, a stop mid-write left
    half a JSON file (the next report failed on it), and a rerun stopped before it left the old one beside new maps."""
    import shutil

    import fpt.rundir.atomic as atomic

    run = tmp_path / "run"
    shutil.copytree(xor_run, run)
    argv = ["attention", str(run), "--layer", "1", "--examples", "4"]
    assert main(argv) == 0
    folder = next((run / "attention").iterdir())
    listed = sorted(p.name for p in folder.iterdir())
    assert "score.json" in listed
    monkeypatch.setattr(atomic, "_write_file", _half_then_kill(atomic._write_file))
    capsys.readouterr()
    assert main(argv) == 143
    assert capsys.readouterr().err.strip() == "fpt attention: terminated (SIGTERM)"
    assert sorted(p.name for p in folder.iterdir()) == [n for n in listed if n != "score.json"]

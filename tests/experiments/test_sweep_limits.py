"""fpt sweep's limits: a spec asking for more trials than can ever run is refused at once, by name; a killed or
stopped sweep leaves no worker training and no request folder behind."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from fpt.cli import main
from fpt.errors import ConfigError
from fpt.experiments import sweep

TEN = list(range(1, 11))


@pytest.mark.parametrize("spec, field", [
    ({"grid": {k: TEN for k in ("lr", "batch_size", "eval_every", "clip", "patience", "steps", "layers")}},
     "grid: 10,000,000 configs x 1 seed(s) = 10,000,000 trials"),
    ({"random": {"trials": 1_000_000_000, "space": {"lr": {"loguniform": [1.0e-5, 1.0e-2]}}}},
     "random.trials: 1,000,000,000 configs"),
    ({"random": {"trials": 6000, "space": {"lr": {"loguniform": [1.0e-5, 1.0e-2]}}}, "seeds": [0, 1]},
     "random.trials: 6,000 configs x 2 seed(s) = 12,000 trials"),
])
def test_a_sweep_beyond_the_trial_limit_is_refused_within_a_second(spec, field, tmp_path, capsys):
    path = tmp_path / "huge.yaml"
    path.write_text(yaml.safe_dump({"base": {"task": "bit-xor", "steps": 2}, **spec}))
    started = time.monotonic()
    assert main(["sweep", str(path), "--dry-run"]) == 2
    assert time.monotonic() - started < 1.0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and field in err and f"({sweep.MAX_TRIALS:,})" in err
    with pytest.raises(ConfigError, match="narrow it or split it"):
        sweep.parse_spec(yaml.safe_load(path.read_text()), str(path))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (ended, not yet reaped by init) counts as gone
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    return True


def wait_until_gone(pid: int, seconds: float) -> None:
    """Wait (at most ``seconds``) for a process that is not this one's child to end."""
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


def _long_sweep(tiny_gpt2_dir: str, tmp_path: Path) -> tuple[subprocess.Popen, int, Path]:
    """An `fpt sweep` of one trial that would train for hours, once its worker is training: (sweep, worker pid,
    the TMPDIR its request folder is in)."""
    spec = {"base": {"task": "bit-xor", "body": tiny_gpt2_dir, "init": "random", "steps": 1_000_000, "eval_every": 1000,
                     "batch_size": 4, "device": "cpu", "task_options": {"eval_size": 8}},
            "grid": {"lr": [1.0e-3]}}
    path = tmp_path / "long.yaml"
    path.write_text(yaml.safe_dump(spec))
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TMPDIR": str(temp)}
    sweep_proc = subprocess.Popen([sys.executable, "-m", "fpt.cli", "sweep", str(path), "--out", str(tmp_path / "out"),
                                   "--quiet"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline, worker = time.monotonic() + 120, None
    while worker is None and time.monotonic() < deadline and sweep_proc.poll() is None:
        for log in (tmp_path / "out" / "logs").glob("*.log"):
            found = re.search(r"fpt worker pid (\d+)", log.read_text())
            worker = int(found.group(1)) if found else None
        time.sleep(0.1)
    assert worker is not None, "the worker never started"
    assert list(temp.glob("fpt-trials-*"))
    return sweep_proc, worker, temp


def test_a_killed_sweep_takes_its_workers_and_request_folder_with_it(tiny_gpt2_dir, tmp_path):
    sweep_proc, worker, temp = _long_sweep(tiny_gpt2_dir, tmp_path)
    sweep_proc.send_signal(signal.SIGKILL)  # no handler, no finally: only the worker itself can notice
    sweep_proc.communicate()
    wait_until_gone(worker, 60)  # the worker stops its trial and removes the folder before it ends
    assert not alive(worker), "the worker kept training after its sweep was killed"
    assert not list(temp.glob("fpt-trials-*")), "the request folder was left behind"


def test_a_stopped_sweep_stops_its_workers_and_removes_its_request_folder_before_it_ends(tiny_gpt2_dir, tmp_path):
    sweep_proc, worker, temp = _long_sweep(tiny_gpt2_dir, tmp_path)
    sweep_proc.send_signal(signal.SIGTERM)  # a batch system's stop; Ctrl-C (SIGINT) takes the same path
    _, err = sweep_proc.communicate(timeout=60)
    # named and ended as fpt train and fpt predict end on SIGTERM (fpt.errors.Terminated): was 'interrupted', 130
    assert sweep_proc.returncode == 143 and "fpt sweep: terminated (SIGTERM)" in err.decode()
    assert not alive(worker), "the worker outlived its sweep"
    assert not list(temp.glob("fpt-trials-*")), "the request folder was left behind"

"""LocalExecutor stopped by Ctrl-C or SIGTERM at any moment: it stops every worker it started, removes its request
folder and raises KeyboardInterrupt (the CLI's "interrupted", exit status 130)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

import pytest

from fpt.config import RunConfig
from fpt.experiments import executors
from fpt.experiments.executors import LocalExecutor, Trial
from fpt.experiments.planned import Planned

MOMENTS = ["folder made", "worker started", "waiting", "stopping the workers", "removing the folder"]


def _stop_me() -> None:
    os.kill(os.getpid(), signal.SIGINT)


@pytest.mark.parametrize("moment", MOMENTS)
def test_a_stop_at_any_moment_stops_the_workers_and_removes_the_request_folder(moment, tmp_path, monkeypatch):
    temp = tmp_path / "tmp"
    temp.mkdir()
    sigint = signal.getsignal(signal.SIGINT)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    started: list[subprocess.Popen] = []
    popen, mkdtemp, rmtree, stop = subprocess.Popen, tempfile.mkdtemp, shutil.rmtree, LocalExecutor._stop
    timer = threading.Timer(0.5, _stop_me)

    def worker(args, **kwargs):  # a worker that would run for a minute, in its own session as the real ones
        seconds = 0 if moment == "removing the folder" else 60  # there the trial has ended, the folder goes next
        proc = popen([sys.executable, "-c", f"import time; time.sleep({seconds})"], **kwargs)
        started.append(proc)
        if moment == "worker started":
            _stop_me()
        if moment in ("waiting", "stopping the workers") and len(started) == 2:
            timer.start()
        return proc

    def made(*args, **kwargs):
        path = mkdtemp(*args, **kwargs)
        if moment == "folder made":
            _stop_me()
        return path

    def stopping(running):
        if moment == "stopping the workers" and running:
            _stop_me()  # a second Ctrl-C while the first one's stop is under way
        stop(running)

    def removing(path, *args, **kwargs):
        if moment == "removing the folder":
            _stop_me()
        rmtree(path, *args, **kwargs)

    signal.signal(signal.SIGINT, signal.default_int_handler)  # a Ctrl-C, even where the shell ignores SIGINT (`&`)
    monkeypatch.setattr(subprocess, "Popen", worker)
    monkeypatch.setattr(tempfile, "mkdtemp", made)
    monkeypatch.setattr(LocalExecutor, "_stop", staticmethod(stopping))
    monkeypatch.setattr(shutil, "rmtree", removing)
    trials = [Trial(Planned(RunConfig(seed=seed), tmp_path / f"run{seed}", f"k{seed}"), f"seed {seed}")
              for seed in range(3)]
    try:
        with pytest.raises(KeyboardInterrupt):
            LocalExecutor(parallel=2, threads=1, prefix="test").run(trials)
    finally:
        timer.cancel()
        handler = signal.signal(signal.SIGINT, sigint)
        for proc in started:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                pytest.fail(f"a worker outlived its executor ({moment})")
    assert not list(temp.glob(f"{executors.WORK_PREFIX}*")), f"the request folder was left behind ({moment})"
    assert handler is signal.default_int_handler, "the executor's own handler outlived it"
    assert started or moment == "folder made"


def test_a_signal_the_shell_ignores_stays_ignored_while_trials_run():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # `fpt sweep ... &` from a script, or under nohup
    try:
        with executors._Stops():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_IGN, signal.SIG_DFL)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)

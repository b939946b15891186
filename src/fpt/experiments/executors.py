"""Executors: what runs a list of trials (planned runs in the store) and reports each one's outcome.

``fpt reproduce`` (a paper table expanded to trials) and ``fpt sweep`` (a user's grid or random
search expanded to trials) hand their trials to the same executors:

- ``InProcessExecutor``: one trial after another in this process (``fpt reproduce``'s default).
- ``LocalExecutor``: each trial a local subprocess (``python -m fpt.experiments.worker``), N at once,
  each with T threads: exactly what ``fpt train --out STORE/KEY`` does (or ``--resume`` when the run
  has a checkpoint).
- ``fpt.experiments.ray_executor.RayExecutor``: each trial a Ray Tune trial.

A trial's run directory is its store directory, so every executor shares the same rules: a finished
run (``summary.json``) is never rerun, a stopped one resumes from its checkpoint, a run another
process holds (its lock) is left to it, and one trial's failure never stops the others.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fpt import rundir
from fpt.config import RunConfig, from_dict
from fpt.errors import ConfigError
from fpt.experiments.planned import Planned, run_planned
from fpt.rundir import read_summary
from fpt.stops import Terminated

# Statuses an executor gives a trial.
DONE, FAILED, NOT_RUN, EARLY_STOPPED = "done", "failed", "not run", "early-stopped"
BUSY_EXIT = 75  # the worker's exit status when another process holds the run (EX_TEMPFAIL)


@dataclass(frozen=True)
class Trial:
    """One run to make: where it lives and what it runs, with a label for messages."""

    planned: Planned
    label: str

    @property
    def run_dir(self) -> Path:
        return self.planned.run_dir

    @property
    def key(self) -> str:
        return self.planned.key


@dataclass
class Outcome:
    status: str  # done | failed | not run | early-stopped
    summary: dict[str, Any] | None = None
    note: str = ""


def one_line(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}"


def busy_note(message: str) -> str:
    return f"running in another process ({message})"


def default_threads(parallel: int) -> int:
    """Threads per trial when none are given: this machine's cores shared by the trials running at once."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores // max(1, parallel))


# --- in this process -----------------------------------------------------------------------------

@dataclass
class InProcessExecutor:
    """Trials one after another in this process (what ``fpt reproduce`` always did)."""

    prefix: str = "fpt reproduce"

    def run(self, trials: list[Trial], progress: bool = True) -> list[Outcome]:
        return [self._one(t, progress) for t in trials]

    def _one(self, trial: Trial, progress: bool) -> Outcome:
        try:
            return Outcome(DONE, run_planned(trial.planned, progress))
        except rundir.RunDirBusyError as exc:  # another worker on this store runs it: go on to the next
            print(f"{self.prefix}: {trial.label}: left to the process that holds it: {exc}", file=sys.stderr)
            return Outcome(NOT_RUN, None, busy_note(str(exc)))
        except Exception as exc:  # noqa: BLE001 - one trial's missing data, weights or crash must not sink the rest
            note = one_line(exc)
            print(f"{self.prefix}: {trial.label} failed: {note}", file=sys.stderr)
            return Outcome(FAILED, None, note)


# --- local subprocesses --------------------------------------------------------------------------

def planned_to_dict(planned: Planned) -> dict[str, Any]:
    pre = None
    if planned.pretrain is not None:
        pre = {"config": planned.pretrain[0].to_dict(), "run_dir": str(Path(planned.pretrain[1]).absolute())}
    return {"config": planned.config.to_dict(), "run_dir": str(Path(planned.run_dir).absolute()), "key": planned.key,
            "pretrain": pre, "trackers": list(planned.trackers)}


def planned_from_dict(data: dict[str, Any]) -> Planned:
    pre = data.get("pretrain")
    pretrain = None
    if pre:
        pretrain = (from_dict(RunConfig, pre["config"], where="trial pretraining config"), Path(pre["run_dir"]))
    return Planned(from_dict(RunConfig, data["config"], where=f"trial {data.get('key')} config"),
                   Path(data["run_dir"]), data["key"], pretrain, tuple(data.get("trackers") or ()))


@dataclass
class _Running:
    index: int
    trial: Trial
    proc: subprocess.Popen
    result: Path
    log: Path
    started: float


WORK_PREFIX = "fpt-trials-"  # the temporary folder of requests and results (fpt.experiments.worker knows it)


class _Stops:
    """Ctrl-C (SIGINT) and SIGTERM (a batch system's stop, kill PID) while trials run: noted, not raised.

    Raised where it landed, a stop could fall between the request folder's creation and the ``try`` that removes
    it, between a worker's start and its entry in the list ``_stop`` reads, or inside the removal itself; noted,
    it ends the loop at its next turn, the workers are stopped, the folder removed, and then it is raised as a
    KeyboardInterrupt. Signal handlers belong to the main thread: elsewhere the previous handlers stay.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.caught: list[int] = []
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _Stops:
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                if signal.getsignal(sig) is not signal.SIG_IGN:  # one ignored (nohup, a shell's `&`) stays so
                    self._previous[sig] = signal.signal(sig, self._note)
        return self

    def _note(self, signum: int, frame: object) -> None:
        self.caught.append(signum)

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


@dataclass
class LocalExecutor:
    """Each trial a local subprocess, ``parallel`` at once, each with ``threads`` threads.

    The worker holds the run directory's lock and runs ``fpt.fit`` into it (resuming a stopped run);
    its output goes to ``log_dir/KEY.log`` (a temporary folder when none is given). Trials that share
    a run directory run once; trials whose body is pretrained first wait for another trial pretraining
    the same body. Ctrl-C stops the workers (their runs resume from the last checkpoint next time).
    """

    parallel: int = 1
    threads: int | None = None
    log_dir: Path | None = None
    prefix: str = "fpt sweep"
    poll_seconds: float = 0.2

    def run(self, trials: list[Trial], progress: bool = True) -> list[Outcome]:
        if self.parallel < 1:
            raise ConfigError(f"--parallel {self.parallel}: give at least 1")
        threads = self.threads or default_threads(self.parallel)
        outcomes: list[Outcome | None] = [None] * len(trials)
        first: dict[Path, int] = {}  # run directory -> the trial that runs it
        copies: dict[int, int] = {}
        pending: list[int] = []
        for i, t in enumerate(trials):
            run_dir = Path(t.run_dir).absolute()
            if run_dir in first:
                copies[i] = first[run_dir]
            else:
                first[run_dir] = i
                pending.append(i)
        running: list[_Running] = []
        total, finished = len(pending), 0
        # A SIGKILL skips all of this: the workers then end themselves (worker.watch_parent) and remove the folder.
        with _Stops() as stops:
            work = Path(tempfile.mkdtemp(prefix=WORK_PREFIX))
            try:
                logs = Path(self.log_dir) if self.log_dir else work
                logs.mkdir(parents=True, exist_ok=True)
                while (pending or running) and not stops.caught:
                    while len(running) < self.parallel and pending and not stops.caught:
                        pick = next((i for i in pending if not self._waits(trials[i], running)), None)
                        if pick is None:
                            break
                        pending.remove(pick)
                        trial = trials[pick]
                        done = read_summary(trial.run_dir)
                        if done is not None:
                            outcomes[pick] = Outcome(DONE, done)
                            finished += 1
                            continue
                        running.append(self._start(pick, trial, threads, work, logs))
                        print(f"{self.prefix}: [{finished + len(running)}/{total}] {trial.label}: started "
                              f"({trial.run_dir}, {threads} thread{'s' if threads > 1 else ''}, "
                              f"log {running[-1].log})", flush=True)
                    for r in [r for r in running if r.proc.poll() is not None]:
                        running.remove(r)
                        outcomes[r.index] = self._finish(r)
                        finished += 1
                        o = outcomes[r.index]
                        print(f"{self.prefix}: {r.trial.label}: {o.status}{': ' + o.note if o.note else ''} "
                              f"({time.monotonic() - r.started:.0f} s)", flush=True)
                    if running and not stops.caught:
                        time.sleep(self.poll_seconds)
            finally:
                self._stop(running)  # none left unless stopped or failed: their runs resume from a checkpoint
                shutil.rmtree(work, ignore_errors=True)
        if stops.caught:  # the first stop names it: SIGTERM's line and status (143), or Ctrl-C's (130)
            raise Terminated if stops.caught[0] == signal.SIGTERM else KeyboardInterrupt
        for i, j in copies.items():
            outcomes[i] = outcomes[j]
        return [o or Outcome(NOT_RUN, None, "not started") for o in outcomes]

    @staticmethod
    def _waits(trial: Trial, running: list[_Running]) -> bool:
        """A trial whose body another running trial is still pretraining waits for it."""
        pre = trial.planned.pretrain
        if pre is None or rundir.has_body(pre[1]):
            return False
        return any(r.trial.planned.pretrain is not None and Path(r.trial.planned.pretrain[1]) == Path(pre[1])
                   for r in running)

    def _start(self, index: int, trial: Trial, threads: int, work: Path, logs: Path) -> _Running:
        request = work / f"{index}-{trial.key}.json"
        result = work / f"{index}-{trial.key}.result.json"
        request.write_text(json.dumps({"trial": planned_to_dict(trial.planned), "threads": threads,
                                       "result": str(result), "label": trial.label, "parent": os.getpid()}))
        log = logs / f"{trial.key}.log"
        env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
               "TOKENIZERS_PARALLELISM": "false"}
        with open(log, "ab") as out:
            out.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} {trial.label}\n".encode())
            proc = subprocess.Popen([sys.executable, "-m", "fpt.experiments.worker", str(request)], stdout=out,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                    start_new_session=True)  # Ctrl-C reaches the parent, which stops them
        return _Running(index, trial, proc, result, log, time.monotonic())

    @staticmethod
    def _finish(r: _Running) -> Outcome:
        try:
            data = json.loads(r.result.read_text())
        except (OSError, ValueError):
            data = None
        summary = read_summary(r.trial.run_dir)
        if data is None:  # killed, or crashed before writing its result
            code = r.proc.returncode
            why = f"signal {-code}" if code < 0 else f"exit status {code}"
            return Outcome(DONE, summary) if summary else Outcome(FAILED, None, f"worker ended with {why}; see {r.log}")
        status = data.get("status")
        if status == DONE and summary is not None:
            return Outcome(DONE, summary)
        if status == "busy":
            return Outcome(NOT_RUN, None, busy_note(data.get("note", "")))
        return Outcome(FAILED, None, data.get("note") or f"no summary written; see {r.log}")

    @staticmethod
    def _stop(running: list[_Running]) -> None:
        for r in running:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(r.proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for r in running:
            try:
                r.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(r.proc.pid, signal.SIGKILL)
                r.proc.wait()

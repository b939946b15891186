"""One trial in its own process: ``python -m fpt.experiments.worker REQUEST.json`` (started by LocalExecutor).

The request names the trial (its config and store directory), the threads it may use, the executor's
pid (the worker ends when that process is gone, however it died, and removes the request folder) and
where to write its result: ``{"status": "done" | "failed" | "busy", "note": ...}``. SIGTERM (the
executor's stop) ends the trial and leaves the folder to the executor; SIGHUP (the parent is going)
ends it and removes the folder once the parent is gone. The trial itself is
``fpt.experiments.planned.run_planned``: ``fpt train --out STORE/KEY``, or ``--resume`` when the run
directory has a checkpoint, under the run directory's lock.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import threading
import time
import traceback
from pathlib import Path

WORK_PREFIX = "fpt-trials-"  # LocalExecutor's temporary folder of requests and results


PARENT_GONE = signal.SIGHUP  # what the kernel (and the watch thread) sends when the executor goes
PARENT_EXIT_WAIT = 10.0  # seconds a parent-gone worker waits for the rest of a dying executor to end


def _parent_death_signal(sig: int) -> None:
    """Linux: have the kernel send ``sig`` when the parent dies (prctl PR_SET_PDEATHSIG), even by SIGKILL."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(sig), 0, 0, 0)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # no libc prctl: the watch thread below still notices
        pass


def watch_parent(parent: int, every: float = 1.0) -> None:
    """End this worker (PARENT_GONE to itself) once ``parent`` is gone: a killed ``fpt sweep`` must not leave its
    trials training. The kernel's parent-death signal is immediate (Linux); the thread is the portable backstop."""
    _parent_death_signal(PARENT_GONE)
    if os.getppid() != parent:  # the parent died before the signal was armed
        os.kill(os.getpid(), PARENT_GONE)

    def poll() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        while True:  # again each `every` until this worker ends: one signal was seen to go unanswered under load
            os.kill(os.getpid(), PARENT_GONE)
            time.sleep(every)

    threading.Thread(target=poll, name="fpt-watch-parent", daemon=True).start()


class _Ending:
    """The ending signals this worker received, and whether it is past raising on them."""

    signals: list[int] = []
    closing = False


def _terminated(signum: int, frame: object) -> None:
    # Each signal until main's finally unwinds fit (its trackers close, the run directory's lock is released); a
    # later one raising again mid-unwinding still ends there. From the finally on they are only noted: nothing may
    # interrupt the folder's removal. (Raising on the first alone left a worker training when that one was lost.)
    _Ending.signals.append(signum)
    if not _Ending.closing:
        raise SystemExit(128 + signum)


def parent_gone(parent: int, wait: float) -> bool:
    """Whether ``parent`` has ended; once told it is going (PARENT_GONE), waits up to ``wait`` seconds for it.

    The kernel's parent-death signal comes when the thread that started this worker exits: when a threaded
    executor is killed that may be before its other threads, while getppid() still names it. Only once the last
    of them is gone is this worker handed to another parent, and only then is the folder no one else's to remove.
    """
    deadline = time.monotonic() + wait
    while os.getppid() == parent:
        if PARENT_GONE not in _Ending.signals or time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    request_path = Path(argv[0])
    request = json.loads(request_path.read_text())
    result = Path(request["result"])
    parent = request.get("parent")
    if parent is not None:
        signal.signal(signal.SIGTERM, _terminated)
        signal.signal(PARENT_GONE, _terminated)
    try:
        if parent is not None:
            watch_parent(int(parent))  # inside the try: a parent already gone ends this worker at once
        return _run(request, result)
    finally:
        _Ending.closing = True  # from here a signal is only noted: nothing interrupts the removal
        work = request_path.parent
        if parent is not None and work.name.startswith(WORK_PREFIX) and parent_gone(int(parent), PARENT_EXIT_WAIT):
            shutil.rmtree(work, ignore_errors=True)  # the executor that would have removed it is gone


def _run(request: dict, result: Path) -> int:
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import torch

    torch.set_num_threads(int(request.get("threads") or 1))
    from fpt import rundir
    from fpt.experiments.executors import BUSY_EXIT, one_line, planned_from_dict
    from fpt.experiments.planned import run_planned

    print(f"fpt worker pid {os.getpid()}: {request.get('label', '')}", flush=True)
    try:
        planned = planned_from_dict(request["trial"])
        run_planned(planned, progress=False)
        out, code = {"status": "done"}, 0
    except rundir.RunDirBusyError as exc:
        out, code = {"status": "busy", "note": str(exc)}, BUSY_EXIT
    except Exception as exc:  # noqa: BLE001 - reported to the executor as this trial's failure
        traceback.print_exc()
        out, code = {"status": "failed", "note": one_line(exc)}, 1
    rundir.write_text(result, json.dumps(out))
    print(f"fpt worker: {out['status']}{': ' + out['note'] if out.get('note') else ''}", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())

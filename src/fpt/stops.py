"""SIGTERM read as Ctrl-C for a command's long work: ``kill PID``, ``timeout``, ``docker stop`` and a batch
system's stop (Slurm, Kubernetes) send it, and Python's default for it ends the process on the spot, saying nothing
and running no ``finally``: a tracker's run was left RUNNING for good (MLflow's), and nothing said that a checkpoint
was kept nor how to continue from it, where Ctrl-C said both. Below the command line (fpt.cli reads it for fpt train
and the short commands) because a sweep's executor (fpt.experiments), which notes SIGTERM between trials, raises the
same ``Terminated`` (its line and status 143, where it said 'interrupted', 130)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C's KeyboardInterrupt is, so that every handler of Ctrl-C handles it alike (a
    tracker's run ends KILLED, locks and files are released); its exit status is 143 (128 + 15), a shell's."""

    STATUS = 128 + signal.SIGTERM


def stopped_how(exc: KeyboardInterrupt) -> tuple[str, int]:
    """What a stop is called and the command's exit status: SIGTERM's, or Ctrl-C's (130)."""
    return ("terminated (SIGTERM)", Terminated.STATUS) if isinstance(exc, Terminated) else ("interrupted", 130)


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated


@contextlib.contextmanager
def terminated_as_interrupt(enabled: bool = True) -> Iterator[None]:
    """SIGTERM raises ``Terminated`` for the block, and the handler before it is put back after. Left alone: a
    SIGTERM that is ignored (``nohup``, a caller's SIG_IGN), a thread other than the main one (which cannot set
    handlers), and ``enabled=False`` (a torchrun rank: its agent's SIGTERM must end a rank blocked in a collective,
    which a Python handler, run only between bytecodes, would not)."""
    if not enabled or threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)

"""A run directory's two safety rules: one writer at a time, and no half-written files.

``lock(run_dir)`` takes an OS-level lock (``fcntl.flock``) on ``run_dir/run.lock`` for as
long as the ``with`` block lasts; the file records the holder's pid, host and start time,
and is removed when the lock is released.
A second writer, in this or any other process, is refused with a one-line
``RunDirBusyError`` naming the holder. The OS releases a flock when its process exits,
however it exits, so a ``run.lock`` left behind by a killed run is not a lock: the next
writer simply takes it. Within one process the lock is re-entrant (``fpt reproduce``
holds it around ``fit`` and writing the pretrained body; ``fit`` takes it again).

``write_bytes`` / ``write_text`` / ``write_with`` write a file atomically: to a temporary
name in the same directory, fsynced, renamed over the target, and the directory fsynced.
A kill at any moment leaves the old file or the new one, never a mix. ``append_line``
appends one line and fsyncs it. A full disk (or quota) is a one-line ``CheckpointError``
that says nothing was replaced.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import shutil
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from fpt.errors import CheckpointError, RunDirBusyError, option
from fpt.rundir.names import LOCK_FILE

_NO_SPACE = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


_held: dict[str, list] = {}  # realpath of the lock file -> [fd, depth]
_held_guard = threading.Lock()


def _describe_holder(path: Path) -> str:
    for _ in range(5):  # the holder writes its line right after locking: give it a moment
        try:
            text = path.read_text().strip()
        except OSError:
            text = ""
        if text:
            info = dict(part.split("=", 1) for part in text.split() if "=" in part)
            return (f"pid {info.get('pid', '?')} on {info.get('host', '?')}, since {info.get('since', '?')}"
                    + (f", {info['what']}" if info.get("what") else ""))
        time.sleep(0.05)
    return "a process that has not yet written its pid"


def holder(run_dir: str | Path) -> dict[str, str] | None:
    """Who holds ``run_dir``'s lock (pid, host, since, what), or None when nobody does.

    Read without touching the lock: probing it with flock could make a writer starting at that
    instant fail as busy. A lock file left by a killed process names a pid that is gone: on
    this host that reads as not held; a holder on another host is taken at its word.
    """
    path = Path(run_dir) / LOCK_FILE
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    info = dict(part.split("=", 1) for part in text.split() if "=" in part)
    if info.get("host") == socket.gethostname():
        try:
            os.kill(int(info.get("pid", "")), 0)
        except ProcessLookupError:
            return None
        except (ValueError, PermissionError):
            pass  # no pid written yet, or alive under another user
    return info


@contextlib.contextmanager
def lock(run_dir: str | Path, what: str = "") -> Iterator[Path]:
    """Hold ``run_dir``'s writer lock for the ``with`` block (creating ``run_dir``)."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / LOCK_FILE
    key = os.path.realpath(path)
    with _held_guard:
        if key in _held:
            _held[key][1] += 1
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield path
        finally:
            with _held_guard:
                _held[key][1] -= 1
        return
    fd = _acquire(run_dir, path)
    try:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        line = f"pid={os.getpid()} host={socket.gethostname()} since={stamp}"
        line += f" what={what.replace(' ', '_')}" if what else ""
        os.ftruncate(fd, 0)
        os.pwrite(fd, (line + "\n").encode(), 0)
        os.fsync(fd)
    except OSError:
        pass  # the flock is the lock; the text only names the holder
    with _held_guard:
        _held[key] = [fd, 1]
    try:
        yield path
    finally:
        with _held_guard:
            del _held[key]
        with contextlib.suppress(OSError):
            path.unlink()  # while still holding it (a process that opened it meanwhile sees it gone and retries)
        os.close(fd)  # releases the flock


def _acquire(run_dir: Path, path: Path) -> int:
    """Open and flock ``path``; retried when the file was removed by a releasing holder meanwhile."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RunDirBusyError(
                f"{run_dir} is in use by another fpt process ({_describe_holder(path)}); wait for it to finish, "
                f"or use another {option('out')}") from None
        except BaseException:
            os.close(fd)
            raise
        try:
            now = os.stat(path)
        except FileNotFoundError:
            now = None
        mine = os.fstat(fd)
        if now is not None and (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
            return fd
        os.close(fd)  # we locked a file that its holder had just removed: take the new one


def holds_lock(run_dir: str | Path) -> bool:
    """Whether this process holds ``run_dir``'s lock."""
    with _held_guard:
        return os.path.realpath(Path(run_dir) / LOCK_FILE) in _held


def fsync_dir(path: str | Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot fsync a directory
    finally:
        os.close(fd)


def io_error(exc: BaseException) -> OSError | None:
    """``exc`` as the OS error it is or carries: an OSError, or a writer's own error class wrapping one (safetensors'
    SafetensorError 'I/O error: No space left on device (os error 28)', not an OSError: a full disk at save_file was
    reported as a bug in fpt); None for any other exception."""
    if isinstance(exc, OSError):
        return exc
    found = re.search(r"\(os error (\d+)\)", str(exc)) if type(exc).__name__ == "SafetensorError" else None
    if found is None:
        return None
    code = int(found.group(1))
    return OSError(code, os.strerror(code))


def no_space(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in _NO_SPACE


def write_error(path: Path, exc: OSError, kept: str = "") -> CheckpointError:
    """The one-line error for a failed write of ``path``."""
    why = "the disk is full" if no_space(exc) else (exc.strerror or str(exc))
    return CheckpointError(f"cannot write {path}: {why} ({type(exc).__name__} errno {exc.errno}); "
                           f"{kept or 'the previous version of the file is unchanged'}")


def tmp_name(path: Path) -> Path:
    """Where a file or directory is written before it is renamed to ``path``."""
    return path.with_name(f".{path.name}.tmp-{os.getpid()}")


_DEBRIS = re.compile(r"^\..+\.tmp-(\d+)$")


def clear_debris(directory: str | Path, pattern: re.Pattern[str] = _DEBRIS, keep_own: bool = False) -> None:
    """Remove temporary files and directories that a killed process left in ``directory``: the names
    ``pattern`` matches (group 1: the writer's pid; default ``tmp_name``'s) whose process is gone, and this
    process's own leftovers unless ``keep_own`` (a writer of this process may be using them)."""
    directory = Path(directory)
    if not directory.is_dir():
        return
    for p in directory.iterdir():
        m = pattern.match(p.name)
        if not m:
            continue
        pid = int(m.group(1))
        if pid == os.getpid():
            if keep_own:
                continue
        else:
            try:
                os.kill(pid, 0)
                continue  # a live process is writing it
            except ProcessLookupError:
                pass
            except (PermissionError, OverflowError):
                continue
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                p.unlink()


def write_with(path: str | Path, writer: Callable[[Path], None], kept: str = "") -> None:
    """Atomically replace ``path`` by what ``writer(tmp_path)`` writes."""
    path = Path(path)
    tmp = tmp_name(path)
    try:
        writer(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        failed = io_error(exc)
        if failed is not None:
            raise write_error(path, failed, kept) from None
        raise
    fsync_dir(path.parent)


def _write_file(tmp: Path, data: bytes) -> None:
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()


def write_bytes(path: str | Path, data: bytes, kept: str = "") -> None:
    write_with(path, lambda tmp: _write_file(tmp, data), kept)


def write_text(path: str | Path, text: str, kept: str = "") -> None:
    write_bytes(path, text.encode(), kept)


def append_line(path: str | Path, line: str) -> None:
    """Append one line (a newline is added) and fsync it."""
    path = Path(path)
    try:
        with open(path, "a") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        raise write_error(path, exc, "the run can be resumed from its last checkpoint once the cause is fixed") \
            from None

"""Where fpt writes: one check for every output path a user names, made before any work.

Every command that writes a file or a folder the user chose (``--out``, a report beside a run, a plot)
asks ``check_file`` or ``check_dir`` first, before it trains, cross-validates or computes anything,
so a refusal costs nothing and nothing of the user's is touched:

- an existing path is replaced only with ``--force`` (or when fpt itself wrote it, where the caller
  can tell: ``fpt_wrote``);
- a symbolic link whose target lies outside the link's own folder (or dangles, or loops) is refused
  even with ``--force``: fpt writes no file through a link to somewhere else;
- a run's own files (config.yaml, metrics.jsonl, summary.json, data.json, selection.json, the lock,
  checkpoint/, best/, ...) and an export's files are never an output of another command, even with
  ``--force``; nor are the paths a caller names in ``never`` (the input file, the model directory).

``write_text`` / ``write_bytes`` check, then write atomically (``fpt.rundir``): the temporary file is
renamed over the path, so a link is replaced, never written through.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from fpt import rundir
from fpt.errors import ConfigError, option, speaks_flags

# A run directory's own entries (fpt.train, fpt.select, fpt.refit, fpt.ensemble write them) and an export's.
RUN_ENTRIES = frozenset({rundir.CONFIG, rundir.METRICS, rundir.SUMMARY, rundir.DATA, rundir.LOCK_FILE,
                         rundir.SELECTION_FILE, rundir.SELECTION_RUN, rundir.MEMBERS, rundir.CONTROLS,
                         *(slot + suffix for slot in rundir.SLOTS for suffix in ("", ".tmp", ".old"))})
EXPORT_ENTRIES = frozenset({"config.json", "fpt_model.safetensors", "model.safetensors", "model.onnx", "model.onnx.data",
                            "model_raw.onnx", "model_raw.onnx.data", "README.md", "body"})


def _is_export(path: Path) -> bool:
    """An fpt export (fpt.export.FORMAT in its config.json's first bytes; read here without the run layer)."""
    try:
        with open(path / "config.json", "rb") as f:
            return b'"fpt-export-' in f.read(200)
    except OSError:
        return False


def _link_target(path: Path, flag: str) -> Path | None:
    """The real target of ``path`` when it is a symbolic link that stays in its own folder (None: not a link);
    a link that leaves its folder, dangles or loops is refused."""
    if not path.is_symlink():
        return None
    target = Path(os.path.realpath(path))
    folder = Path(os.path.realpath(path.parent))
    try:
        os.stat(path)
    except OSError as exc:  # dangling, or a loop (ELOOP)
        raise ConfigError(f"{flag} {path} is a symbolic link that leads nowhere ({exc.strerror}); fpt does not "
                          f"write through links: remove the link, or choose another {flag}") from None
    if target.parent != folder:
        raise ConfigError(f"{flag} {path} is a symbolic link to {target}, outside {path.parent}; fpt does not write "
                          f"through a link to another folder (even with {option('force')}): remove the link, or choose another "
                          f"{flag}")
    return target


def _owner(target: Path) -> tuple[Path, str] | None:
    """The run or export directory whose own entry ``target`` is (and its kind), or None."""
    for parent in target.parents:
        first = target.relative_to(parent).parts[0]
        if first in RUN_ENTRIES and rundir.is_run_dir(parent):
            return parent, "run"
        if first in EXPORT_ENTRIES and _is_export(parent):
            return parent, "export"
    return None


def _never(target: Path, never: Iterable[str | Path], flag: str, path: Path) -> None:
    for item in never:
        home = Path(os.path.realpath(item))
        if target == home:
            what = "the input file" if not home.is_dir() else str(item)
            raise ConfigError(f"{flag} {path} is {what} itself, which this command reads; choose another {flag}")
        if home in target.parents:
            raise ConfigError(f"{flag} {path} lies inside {item}, whose files this command never replaces (even with "
                              f"{option('force')}); choose an {flag} outside it")


def _unexpanded(path: str | Path, flag: str) -> None:
    """Refuse an output path that begins with a ``~`` a shell would have expanded: it expands ``~`` only unquoted and
    at a word's start (not in '~/runs', nor in --out=~/runs), and fpt would make a folder named '~' in the working
    directory (which a later ``rm -r ~`` would take for the home folder). A name that merely begins with '~' and names
    no home folder ('~draft') is a name like any other."""
    home = os.path.expanduser(str(path))
    if home != str(path) and flag == "--out" and not speaks_flags():  # a Python caller's out= (fpt.fit, train_run)
        raise ConfigError(f"{option('out', str(path))} begins with '~', which Python does not expand: fpt would make a "
                          f"folder named '~' here; give {option('out', home)} (os.path.expanduser)")
    if home != str(path):
        raise ConfigError(f"{flag} {path} begins with '~', which nothing expanded (a shell does only unquoted, at a "
                          f"word's start): fpt would make a folder named '~' here; write the home folder out "
                          f"({flag} {home})")


def refuse_unexpanded(path: str | Path, flag: str = "--out") -> None:
    """``_unexpanded`` for an output that no other check of this module reads (``fpt.fit``'s ``out``)."""
    _unexpanded(path, flag)


def check_file(path: str | Path, *, force: bool = False, flag: str = "--out", never: Iterable[str | Path] = (),
               fpt_wrote: Callable[[Path], bool] | None = None) -> Path:
    """Refuse a file output that would destroy something (see the module's rules); returns ``path`` as a Path.

    ``never``: paths (files or folders) the output must not be nor lie in; ``fpt_wrote(path)``: whether an
    existing file is this command's own earlier output, which is replaced without ``--force``.
    """
    _unexpanded(path, flag)
    path = Path(path)
    _link_target(path, flag)
    target = Path(os.path.realpath(path))
    _never(target, never, flag, path)
    owner = _owner(target)
    if owner is not None:
        raise ConfigError(f"{flag} {path} is a file of the {owner[1]} {owner[0]}, which fpt never replaces from "
                          f"another command (even with {option('force')}); choose another {flag}")
    if target.is_dir():
        raise ConfigError(f"{flag} {path} is a directory; give a file name inside it, such as {path / 'out'}")
    if os.path.lexists(path) and not force and not (fpt_wrote is not None and fpt_wrote(target)):
        raise ConfigError(f"{flag} {path} exists and fpt did not write it; give {option('force')} to replace it, or choose "
                          f"another {flag}")
    return path


def check_dir(path: str | Path, *, flag: str = "--out", ours: Callable[[Path], bool] | None = None,
              what: str = "fpt") -> Path:
    """Refuse a folder output that is a file, a link out of its folder, another run's or export's entry, or a
    non-empty folder that ``ours(path)`` does not recognise as this command's own (None: any folder will do)."""
    _unexpanded(path, flag)
    path = Path(path)
    _link_target(path, flag)
    target = Path(os.path.realpath(path))
    owner = _owner(target)
    if owner is not None and owner[0] != target:
        raise ConfigError(f"{flag} {path} is part of the {owner[1]} {owner[0]}; choose another {flag}")
    if os.path.lexists(path) and not target.is_dir():
        raise ConfigError(f"{flag} {path} is a file, not a folder; choose another {flag}")
    if ours is not None and target.is_dir() and any(target.iterdir()) and not ours(target):
        raise ConfigError(f"{flag} {path} holds files that {what} did not write, and fpt replaces nothing it did "
                          f"not write: choose a new or empty {flag}")
    return path


def check_writable(folder: str | Path, writes: str, fix: str) -> None:
    """Refuse, before any work, a command's default output inside ``folder`` where that folder cannot be written: a run
    on a read-only mount (an archive, a shared results store) or another user's. The write failed naming the file and
    no way around it ('cannot write RUN/curves.png: Read-only file system'), fpt attention's after computing its maps.
    ``writes``: what the command writes there; ``fix``: the option that writes elsewhere. A folder not yet made is
    left to the write."""
    folder = Path(folder)
    if not folder.is_dir() or os.access(folder, os.W_OK | os.X_OK):
        return
    try:
        read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no statvfs (Windows): said as a folder this user cannot write
        read_only = False
    why = "is on a read-only file system" if read_only else "is not writable by this user"
    raise ConfigError(f"{folder} {why}, where {writes}; {fix}")


def check_results(folder: str | Path, names: Iterable[str], ours: Callable[[Path], bool], *, force: bool = False,
                  flag: str = "--out") -> Path:
    """A results folder (fpt reproduce's, fpt sweep's) whose fixed-name files ``names`` fpt will write: the folder by
    ``check_dir``; each file replaced only where ``ours(folder)`` says the folder is this command's (or ``force``)."""
    folder = check_dir(folder, flag=flag)
    mine = not Path(folder).is_dir() or ours(Path(folder))
    for name in names:
        check_file(Path(folder) / name, force=force or mine, flag=flag)
    return folder


def write_bytes(path: str | Path, data: bytes, *, force: bool = False, flag: str = "--out",
                never: Iterable[str | Path] = (), fpt_wrote: Callable[[Path], bool] | None = None) -> Path:
    """``check_file``, then an atomic write (a link at ``path`` is replaced, not written through)."""
    path = check_file(path, force=force, flag=flag, never=never, fpt_wrote=fpt_wrote)
    if path.parent != Path(""):
        path.parent.mkdir(parents=True, exist_ok=True)
    rundir.write_bytes(path, data)
    return path


def write_text(path: str | Path, text: str, *, force: bool = False, flag: str = "--out",
               never: Iterable[str | Path] = (), fpt_wrote: Callable[[Path], bool] | None = None) -> Path:
    """``write_bytes`` of ``text`` in UTF-8."""
    return write_bytes(path, text.encode("utf-8"), force=force, flag=flag, never=never, fpt_wrote=fpt_wrote)


def starts_with(marker: bytes, within: int = 4096) -> Callable[[Path], bool]:
    """An ``fpt_wrote`` test: the file's first ``within`` bytes hold ``marker`` (fpt's own outputs carry one)."""
    def test(path: Path) -> bool:
        try:
            with open(path, "rb") as f:
                return marker in f.read(within)
        except OSError:
            return False
    return test


__all__ = ["EXPORT_ENTRIES", "RUN_ENTRIES", "check_dir", "check_file", "check_results", "starts_with", "write_bytes",
           "write_text"]

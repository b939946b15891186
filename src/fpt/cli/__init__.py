"""The ``fpt`` command: a thin shell over ``fpt.*``; one module per subcommand.

Each module defines ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import pkgutil
import sys
from collections.abc import Iterator

# Errors a user can fix: printed as one line, no traceback (fpt.errors lists them).
from fpt.errors import CLI, USER_ERRORS, user_os_error, wording


def _commands() -> dict[str, object]:
    pkg = importlib.import_module(__name__)
    return {
        info.name.replace("_", "-"): importlib.import_module(f"{__name__}.{info.name}")
        for info in pkgutil.iter_modules(pkg.__path__)
        if not info.name.startswith("_")
    }


class _Parser(argparse.ArgumentParser):
    """argparse, with a did-you-mean for an unknown flag (``fpt train --stpes 3``: ``--steps``), said by the
    subcommand's own parser, and for an unknown command (``fpt trian``: ``train``); an error shows the usage only
    where it is short (fpt train's is 25 lines)."""

    def parse_args(self, args=None, namespace=None):  # noqa: ANN001, ANN201 (argparse's signature)
        words = [*(sys.argv[1:] if args is None else args)]  # not list(): fpt.cli.list, the module, shadows it here
        if words and words[0].startswith("-") and words[0] not in self._option_string_actions:
            # a misspelt top-level flag (fpt --verison) would otherwise read as a missing COMMAND
            self.error(f"unrecognized arguments: {words[0]}{_suggest(self, words[:1])}")
        commands = sorted(getattr(self, "subparsers_of", {}))
        if words and commands and not words[0].startswith("-") and words[0] not in commands:
            # argparse lists every command; the close one goes first, as git's "did you mean" does
            import difflib

            close = difflib.get_close_matches(words[0], commands, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]}? " if close else ""
            self.error(f"argument COMMAND: invalid choice: {words[0]!r} ({hint}choose from {', '.join(commands)})")
        ns, extras = self.parse_known_args(words, namespace)
        if extras:
            sub = getattr(self, "subparsers_of", {}).get(getattr(ns, "command", None), self)
            sub.error(f"unrecognized arguments: {' '.join(extras)}{_suggest(sub, extras)}")
        return ns

    def error(self, message: str):  # noqa: ANN201 (argparse's signature: never returns)
        usage = self.format_usage()
        if usage.count("\n") > 3:
            usage = f"usage: {self.prog} [options] (see {self.prog} --help)\n"
        self.exit(2, f"{usage}{self.prog}: error: {message}\n")


def _suggest(parser: argparse.ArgumentParser, extras: list[str]) -> str:
    """' (did you mean --steps?)' for unknown flags close to a known one."""
    import difflib

    known = [s for action in parser._actions for s in action.option_strings if s.startswith("--")]
    hints = []
    for word in extras:
        flag = word.split("=", 1)[0]
        close = difflib.get_close_matches(flag, known, n=1, cutoff=0.7) if flag.startswith("-") else []
        if close:
            hints.append((flag, close[0]))
    if not hints:
        return ""
    if len(hints) == 1:
        return f" (did you mean {hints[0][1]}?)"
    return f" (did you mean {', '.join(f'{right} for {wrong}' for wrong, right in hints)}?)"


def parser() -> argparse.ArgumentParser:
    from fpt.cli._args import Flag
    from fpt.version import __version__

    # allow_abbrev=False everywhere: options match exactly (argparse would read --data as --data-dir).
    top = _Parser(prog="fpt", description="Frozen pretrained transformers as universal computation engines.",
                  allow_abbrev=False)
    top.add_argument("--version", action="version", version=f"fpt {__version__}")
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    top.subparsers_of = {}
    for name, module in sorted(_commands().items()):
        p = sub.add_parser(name, help=module.HELP, description=module.HELP, allow_abbrev=False)
        # every flag that stores a value notes one given before (given_once refuses two): argparse kept the last in
        # silence (fpt predict RUN x.csv --out a.csv --out b.csv wrote b.csv), where a config flag's two were refused
        for kind in (None, "store"):
            p.register("action", kind, Flag)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
        top.subparsers_of[name] = p
    return top


_COMMAND = ["fpt"]  # the running subcommand, for the notes' prefix
# The notes a command has printed: each once per command, as fit=auto and cross-validation build the task once per
# candidate and fold, and every catch_warnings block (scikit-learn's, fpt's) resets the registry that would have
# shown it once.
_SAID: set[str] = set()


def _notes(command: str) -> None:
    """Print fpt's own warnings (``FptWarning``: a choice made for the user and how to change it) as one line, not
    as Python's ``file:line: Category: message`` with a source line, each once per command (``_SAID``). Installed
    for the command (``_own_session`` puts Python's back after it)."""
    import warnings

    from fpt.errors import FptWarning

    _COMMAND[0] = f"fpt {command}"
    _SAID.clear()
    if getattr(warnings.showwarning, "fpt_notes", False):
        return
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001, ANN202 (warnings' signature)
        if isinstance(category, type) and issubclass(category, FptWarning):
            if str(message) not in _SAID:
                _SAID.add(str(message))
                print(f"{_COMMAND[0]}: note: {message}", file=sys.stderr)
            return
        shown(message, category, filename, lineno, file, line)

    show.fpt_notes = True
    warnings.showwarning = show


def _quick_exit() -> None:
    """At the process's exit, freeze what the garbage collector tracks (``gc.freeze``): the interpreter's shutdown
    otherwise runs full collections over every object the command's imports made (torch's, transformers', a third of
    a million) after its last line is printed: 1.0 s of ``fpt params`` on a body, idle 2-core CPU
    (docs/results/own-data/closed-form/speed/startup/). Freezing skips only those passes: objects are still freed by
    reference counting, and every exit handler (logging's flush, temporary files' removal, trackers') still runs.
    Registered once per process, by the command line only (a library caller's process exits as it chooses)."""
    import atexit
    import gc

    if not getattr(_quick_exit, "registered", False):
        atexit.register(gc.freeze)
        _quick_exit.registered = True


# What a command sets for itself and the processes it starts: transformers' verbosity (main), the MLflow store every
# trial of fpt sweep --log mlflow shares (fpt.cli.sweep)
_COMMAND_ENVIRON = ("TRANSFORMERS_VERBOSITY", "MLFLOW_TRACKING_URI")


@contextlib.contextmanager
def _own_session() -> Iterator[None]:
    """The command's way of speaking, for the command only: a Python session that calls ``main`` goes on with its
    own warnings display (fpt's one-line notes stayed installed, printing ``fpt list: note: ...`` for the session's
    later fpt.fit), environment (``_COMMAND_ENVIRON``) and transformers' log level (read from
    TRANSFORMERS_VERBOSITY when main first imports it)."""
    import logging
    import warnings

    shown = warnings.showwarning
    environ = {name: os.environ.get(name) for name in _COMMAND_ENVIRON}
    level = logging.getLogger("transformers").level
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        yield
    finally:
        warnings.showwarning = shown
        for name, value in environ.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if environ["TRANSFORMERS_VERBOSITY"] is None:
            logging.getLogger("transformers").setLevel(level)


# Commands whose SIGTERM (kill PID, timeout, docker stop, a batch system's stop) ends as their Ctrl-C does: the
# 'terminated (SIGTERM)' line, status 143, and their finally blocks run (an atomic write's temporary file removed, an
# export's half-built folder deleted), where Python's default ended them on the spot and left those behind. fpt train
# reads it itself (not in a torchrun rank); fpt sweep notes it between trials (fpt.experiments.executors).
SIGTERM_AS_CTRL_C = frozenset({"predict", "eval", "export", "report", "plot", "attention", "weights"})


def _terminated(command: str) -> contextlib.AbstractContextManager[None]:
    from fpt.stops import terminated_as_interrupt

    return terminated_as_interrupt(enabled=command in SIGTERM_AS_CTRL_C)


def main(argv: list[str] | None = None) -> int:
    with _own_session():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    from fpt.cli._args import given_once

    _quick_exit()
    args = parser().parse_args(argv)
    args.argv = [*(sys.argv[1:] if argv is None else argv)]  # as given (fpt train --nproc hands it on)
    _notes(args.command)
    try:
        with wording(CLI), _terminated(args.command):  # every message names this command's flags
            given_once(args)
            return int(args._run(args) or 0)
    except USER_ERRORS as exc:
        if os.environ.get("FPT_DEBUG"):
            raise
        print(f"fpt {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        from fpt.stops import stopped_how

        how, status = stopped_how(exc)  # SIGTERM where a command reads it as Ctrl-C (SIGTERM_AS_CTRL_C, train)
        print(f"fpt {args.command}: {how}", file=sys.stderr)
        return status
    except BrokenPipeError:
        # The reader of a pipe stopped reading (fpt runs | head): not a bug, and nothing left to say to it. Standard
        # output goes to /dev/null so that the interpreter's final flush cannot fail again; 141 is a shell's status
        # for a command ended by SIGPIPE.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 141
    except Exception as exc:
        said = user_os_error(exc)  # a path too long, a read-only or full disk: the user's to fix, one line
        if said is not None and not os.environ.get("FPT_DEBUG"):
            print(f"fpt {args.command}: error: {said}", file=sys.stderr)
            return 2
        # Not an error fpt raised on purpose: a bug. Keep the whole traceback, and say where it goes.
        import traceback

        traceback.print_exc()
        print(f"fpt {args.command}: this is a bug in fpt (not something in your input we checked for); please "
              "report it with the command and the traceback above", file=sys.stderr)
        return 1


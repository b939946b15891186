"""The habits of a command-line tool: --version, did-you-mean for a typo, bare bool flags, grouped help,
progress that shows on any terminal."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import sys
import termios
import threading

import pytest

from fpt import tracking
from fpt.cli import main, parser
from fpt.cli._args import GROUPS, config_from_args


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    from fpt import __version__

    assert capsys.readouterr().out.strip() == f"fpt {__version__}"


@pytest.mark.parametrize("argv, hint", [
    (["train", "--stpes", "3"], "unrecognized arguments: --stpes (did you mean --steps?)"),
    (["train", "--stop-at-targt"], "(did you mean --stop-at-target?)"),
    (["train", "--evl-every=3", "--bach-size", "2"], "did you mean --eval-every for --evl-every, --batch-size for --bach-size"),
    (["--verison"], "unrecognized arguments: --verison (did you mean --version?)"),
    # a misspelt command was "invalid choice: 'trian' (choose from 'attention', 'claims', ...)" and no more
    (["trian", "--steps", "3"], "fpt: error: argument COMMAND: invalid choice: 'trian' (did you mean train?"),
    (["--version-x", "predcit"], "--version-x"),  # the flag is the first word wrong
    (["predcit", "runs/x", "new.csv"], "invalid choice: 'predcit' (did you mean predict?"),
])
def test_a_typo_flag_suggests_the_known_one(argv, hint, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert hint in err and len(err.splitlines()) <= 3  # no 25-line usage burying the error


def test_an_unknown_key_value_field_suggests_the_known_one(capsys):
    assert main(["train", "stpes=3"]) == 2
    assert "unknown field(s) ['stpes'] (did you mean 'steps'?)" in capsys.readouterr().err


@pytest.mark.parametrize("argv, stop, steps, compile_", [
    (["--stop-at-target"], True, 2000, False),
    (["--stop-at-target", "false"], False, 2000, False),
    (["--stop-at-target", "no", "--steps", "4"], False, 4, False),
    (["--no-stop-at-target"], False, 2000, False),
    (["--stop-at-target", "steps=7"], True, 7, False),  # the override is not swallowed as the flag's value
    (["--no-stop-at-target", "steps=7", "--compile"], False, 7, True),
])
def test_bool_fields_take_a_bare_flag(argv, stop, steps, compile_):
    config = config_from_args(parser().parse_args(["train", *argv]))
    assert (config.stop_at_target, config.steps, config.compile) == (stop, steps, compile_)


def test_train_help_groups_the_flags_with_meaningful_metavars(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = capsys.readouterr().out
    for title in (*GROUPS, "run and output", "tracking"):
        assert f"\n{title}:\n" in out
    assert " X " not in out
    assert "other fields:" not in out, "a RunConfig field without a help group: add it to fpt.cli._args.GROUPS"
    assert "--steps N" in out and "--body NAME|DIR" in out and "--stop-at-target [true|false]" in out
    assert "fpt list shows them" in out and "fpt tasks" not in out
    named = [name for names in GROUPS.values() for name in names]
    assert sorted({n for n in named if named.count(n) > 1}) == []  # a field is shown in one group only


def test_live_terminal():
    class Tty:
        def __init__(self, tty=True):
            self.tty = tty

        def isatty(self):
            return self.tty

        def fileno(self):
            raise OSError

    os.environ.pop("COLUMNS", None)
    assert tracking.live_terminal(Tty()) and not tracking.live_terminal(Tty(False))
    os.environ["COLUMNS"] = "0"
    try:
        assert not tracking.live_terminal(Tty())
    finally:
        del os.environ["COLUMNS"]


def test_progress_lines_show_on_a_terminal_0_columns_wide(tiny_gpt2_dir, tmp_path, monkeypatch):
    # fpt train in this process with its stdout and stderr on a pty (a new interpreter would add seconds of imports
    # and test nothing more: the command looks at the streams it is given and at COLUMNS)
    main_fd, child_fd = pty.openpty()
    fcntl.ioctl(child_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 0, 0, 0))  # a terminal reporting 0 columns
    monkeypatch.delenv("COLUMNS", raising=False)
    chunks: list[bytes] = []

    def drain() -> None:  # read as it is written: a pty holds a few KiB before a write blocks
        while True:
            try:
                chunk = os.read(main_fd, 65536)
            except OSError:  # the terminal was closed
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    terminal = open(child_fd, "w", buffering=1, closefd=False)  # noqa: SIM115 (closed below, with the pty)
    try:
        with monkeypatch.context() as streams:
            streams.setattr(sys, "stdout", terminal)
            streams.setattr(sys, "stderr", terminal)
            code = main(["train", "--body", tiny_gpt2_dir, "--init", "random", "--steps", "4", "--eval-every", "2",
                         "--batch-size", "4", "task.eval_size=8", "--device", "cpu", "--out", str(tmp_path / "run"),
                         "--log-every-seconds", "0.001"])
    finally:
        terminal.close()
        os.close(child_fd)
        reader.join(timeout=60)
        os.close(main_fd)
    text = b"".join(chunks).decode()
    assert code == 0, text[-2000:]
    assert "fpt: step 4/4  loss " in text  # plain lines, not a bar redrawn in 0 columns
    assert "it/s" not in text


def test_every_command_prints_its_help():
    from fpt.cli import parser

    commands = sorted(parser().subparsers_of)
    assert "train" in commands and "data" in commands
    for command in commands:  # a help text's own "%" broke argparse's formatting of a whole command's help
        assert parser().subparsers_of[command].format_help().startswith("usage:"), command


def test_ctrl_c_says_what_was_kept_and_how_to_continue(xor_run, tmp_path, monkeypatch, capsys):
    """Ctrl-C during fpt train printed "fpt train: interrupted" alone: nothing said a checkpoint was kept, at which
    step, or that --resume continues it."""
    import shutil

    import fpt.modes
    from fpt.checkpoint import committed_step

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(fpt.modes, "train_run", interrupted)
    run = tmp_path / "xor"
    shutil.copytree(xor_run, run)
    assert main(["train", "--resume", str(run)]) == 130
    err = capsys.readouterr().err.strip()
    assert err == (f"fpt train: interrupted; its latest checkpoint (step {committed_step(run)}) is in {run}: continue "
                   f"with fpt train --resume {run}")
    fresh = tmp_path / "fresh"
    assert main(["train", "--task", "bit-xor", "--out", str(fresh)]) == 130
    assert f"no checkpoint was saved in {fresh} yet: the same command starts it again" in capsys.readouterr().err


def test_fpt_help_prints_what_dash_dash_help_prints(capsys):
    """`fpt help` and `fpt help train` (git's and pip's habit) were refused as an unknown command 'help'; now each
    prints exactly what `fpt --help` and `fpt train --help` print, and a misspelt command is answered as `fpt trian`
    is."""
    from fpt.cli import main

    def printed(argv: list[str]) -> tuple[int, str]:
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's --help exits 0
            code = exc.code
        return code, capsys.readouterr().out

    assert printed(["help"]) == printed(["--help"]) and printed(["help"])[1].startswith("usage: fpt [-h]")
    for command in ("train", "predict", "help"):
        code, text = printed(["help", command])
        assert (code, text) == printed([command, "--help"]) and text.startswith(f"usage: fpt {command} "), command
    with pytest.raises(SystemExit) as refused:
        main(["help", "trian"])
    assert refused.value.code == 2 and "invalid choice: 'trian' (did you mean train?" in capsys.readouterr().err


def test_every_commands_own_flag_given_twice_with_two_values_is_refused(tmp_path, capsys):
    """argparse keeps a flag's last value in silence: fpt predict RUN x.csv --out a.csv --out b.csv wrote b.csv, fpt
    train --out a --out b trained into b, where --steps 5 --steps 9 was refused naming both. Every command's flag that
    stores a value is now refused so, before the command does anything; one value given twice is taken."""
    import argparse

    from fpt.cli._args import Flag

    top = parser()
    plain = {name: [a.option_strings[0] for a in p._actions if a.option_strings and type(a) is argparse._StoreAction]
             for name, p in top.subparsers_of.items()}
    assert plain == {name: [] for name in top.subparsers_of}
    assert isinstance(top.subparsers_of["predict"]._option_string_actions["--out"], Flag)
    out = tmp_path / "a.csv"
    assert main(["predict", str(tmp_path / "run"), "new.csv", "--out", str(out), "--out", "b.csv"]) == 2
    assert capsys.readouterr().err.strip() == (f"fpt predict: error: command line: out is given twice, as --out {out} "
                                               "and --out b.csv; give it once")
    assert main(["train", "--out", str(tmp_path / "x"), "--out", str(tmp_path / "y"), "--steps", "3"]) == 2
    assert "out is given twice, as --out" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())  # nothing trained, nothing written
    assert main(["runs", str(tmp_path), "--sort", "step", "--sort", "step"]) == 0  # one value twice: taken
    assert main(["runs", str(tmp_path), "--sort", "step", "--sort", "steps"]) == 2
    assert "sort is given twice, as --sort step and --sort steps" in capsys.readouterr().err


def test_sigterm_is_read_as_ctrl_c_keeping_the_run_resumable_and_saying_how(xor_run, tmp_path, monkeypatch, capsys):
    """kill PID, timeout, docker stop and a batch system send SIGTERM, whose default ended fpt train on the spot:
    nothing said, no finally run (an MLflow run stayed RUNNING for good). It is now raised as Ctrl-C is (a
    KeyboardInterrupt, which trackers end as KILLED): the line says what was kept and --resume, exit status 143."""
    import shutil
    import signal
    import time

    import fpt.modes
    from fpt.checkpoint import committed_step

    caller = []  # the handler before fpt's: it is put back after, and never reached while fpt train runs
    before = signal.signal(signal.SIGTERM, lambda *a: caller.append("caller"))
    seen = []

    def terminated(*args, **kwargs):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler runs at the next bytecode
        except KeyboardInterrupt as exc:
            seen.append(type(exc))
            raise
        return None

    monkeypatch.setattr(fpt.modes, "train_run", terminated)
    run = tmp_path / "xor"
    shutil.copytree(xor_run, run)
    try:
        assert main(["train", "--resume", str(run)]) == 143
        assert caller == [] and len(seen) == 1 and issubclass(seen[0], KeyboardInterrupt)
        assert capsys.readouterr().err.strip() == (
            f"fpt train: terminated (SIGTERM); its latest checkpoint (step {committed_step(run)}) is in {run}: "
            f"continue with fpt train --resume {run}")
        os.kill(os.getpid(), signal.SIGTERM)  # after the command: the caller's handler again
        assert caller == ["caller"]
    finally:
        signal.signal(signal.SIGTERM, before)

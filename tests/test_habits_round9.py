"""Round 9 of practitioners' habits: paths, the command line and notebooks."""

from __future__ import annotations

import shutil

import fpt


def test_run_expands_a_home_folder_as_fpt_load_does(xor_run, tmp_path, monkeypatch):
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    shutil.copytree(xor_run, home / "runs" / "x")
    cwd.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(cwd)
    # was Path('~/runs/x').absolute(): cwd/~/runs/x, 'not a run directory' of the run fpt.load('~/runs/x') reads
    run = fpt.Run("~/runs/x")
    assert run.path == home / "runs" / "x" and run == fpt.Run(home / "runs" / "x")
    assert run.is_run() and run.config().task == "bit-xor"
    assert run.config_path == home / "runs" / "x" / "config.yaml"
    assert not (cwd / "~").exists()


def _figures(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if "second" not in k}  # times and throughput differ from one fit to the next


def _trained(exp) -> list:
    return [p.detach().clone() for p in exp.model.parameters() if p.requires_grad]


def test_a_notebook_cell_of_fpt_fit_run_again_trains_afresh_as_the_first_run(tiny_bert_dir):
    import torch

    from fpt import tracking

    made = dict(task="bit-xor", body=tiny_bert_dir, init="random", batch_size=4, eval_every=2, steps=4, device="cpu",
                task_options={"eval_size": 16})
    fresh = fpt.fit(fpt.build(**made), progress=False)
    exp = fpt.build(**made)
    first = fpt.fit(exp, progress=False)
    trained = _trained(exp)
    # was trained on from where the first fit left it: 8 steps, summary saying 4 (val loss 0.715, then 0.801)
    again = fpt.fit(exp, progress=False)
    assert _figures(first) == _figures(fresh) == _figures(again)
    assert all(torch.equal(a, b) for a, b in zip(trained, _trained(exp), strict=True))

    class Interrupt(tracking.Tracker):  # Ctrl-C in the cell, after the first evaluation
        def evaluated(self, row: dict) -> None:
            raise KeyboardInterrupt

    stopped = fpt.build(**made)
    try:
        fpt.fit(stopped, progress=False, trackers=[Interrupt()])
    except KeyboardInterrupt:
        pass
    assert _figures(fpt.fit(stopped, progress=False)) == _figures(fresh)  # was from the interrupted step's parameters


def test_the_exit_statuses_docs_running_md_gives_scripts_are_the_command_lines(tmp_path, monkeypatch, capsys):
    import re
    from pathlib import Path

    import pytest

    from fpt.cli import main
    from fpt.tasks import TASKS

    # was nowhere: a CI script or a Makefile had to read fpt/cli/__init__.py to tell a bug (1) from its own fault (2)
    doc = (Path(__file__).parents[1] / "docs" / "running.md").read_text()
    said = re.search(r"Exit status, for scripts and CI: (.*?)\n\n", doc, re.S)
    assert said is not None
    words = " ".join(said.group(1).split())
    for status, what in [(0, "did what was asked"), (2, "a usage error"), (1, "a bug in fpt"), (130, "Ctrl-C"),
                         (143, "SIGTERM"), (141, "pipe")]:
        assert re.search(rf"\b{status} (for|when|after)\b[^;]*{re.escape(what)}", words), (status, words)

    assert main(["list"]) == 0
    assert main(["predict", str(tmp_path / "no-run"), str(tmp_path / "x.csv")]) == 2
    with pytest.raises(SystemExit) as usage:
        main(["list", "--no-such-flag"])
    assert usage.value.code == 2

    def fails(error: BaseException):
        def names() -> list[str]:
            raise error
        return names

    monkeypatch.setattr(TASKS, "names", fails(RuntimeError("a bug")))
    assert main(["list"]) == 1
    monkeypatch.setattr(TASKS, "names", fails(KeyboardInterrupt()))
    assert main(["list"]) == 130
    capsys.readouterr()


def _said(default: object) -> str:
    return f"{default:g}" if isinstance(default, float) else str(default)  # 2.0 said as 2


def test_every_flag_of_every_command_with_a_default_says_it_in_its_help():
    import argparse

    from fpt.cli import parser

    commands = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    silent = [(name, action.option_strings[0], action.default) for name, command in commands.items()
              for action in command._actions
              if action.option_strings and not isinstance(action, argparse._HelpAction)
              and action.default not in (None, False, [], "", argparse.SUPPRESS)
              and not ("default" in (action.help or "") and _said(action.default) in action.help)]
    # was: fpt params --body / --freeze (no help at all), --init, --outputs; fpt report --attention,
    # --attention-examples; fpt reproduce --scale, --executor; fpt sweep --executor: a default only the source told
    assert silent == []

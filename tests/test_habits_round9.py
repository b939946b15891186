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

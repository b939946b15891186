"""fpt train --config FILE: a file of no settings is refused, and an error names the source that set the value (the
file or the command line), not both."""

from __future__ import annotations

from pathlib import Path

import pytest

from fpt.cli import main


def _error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


@pytest.mark.parametrize("text", ["", "# steps: 5\n\n"])
def test_an_empty_config_file_is_refused_not_the_default_task_trained(text, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("empty.yaml").write_text(text)
    # was: trained the default task (bit-xor) into run/, as if no --config had been given
    line = _error(capsys, ["train", "--config", "empty.yaml", "--steps", "1", "--device", "cpu", "--out", "run"])
    assert line == ("fpt train: error: config file empty.yaml holds no settings (it is empty or all comments); write "
                    "the run's settings in it as key: value lines (e.g. data: train.csv, or task: bit-xor)")
    assert not Path("run").exists()


def test_an_error_names_the_source_that_set_the_value_not_both(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("b.yaml").write_text("steps: abc\nlr: 0.1\n")
    Path("c.yaml").write_text("stepz: 3\n")
    Path("d.yaml").write_text("image_size: 30\npatch_size: 7\n")
    train = ["train", "--device", "cpu", "--out", "run", "--config"]
    # was: 'b.yaml + command line: ...' for each of these, though one source alone set the value
    assert _error(capsys, [*train, "b.yaml", "--seed", "3"]) == \
        "fpt train: error: b.yaml: field 'steps': expected an integer, got 'abc'"
    assert _error(capsys, [*train, "b.yaml", "--steps", "x"]) == \
        "fpt train: error: command line: field 'steps': expected an integer, got 'x'"
    assert _error(capsys, [*train, "b.yaml", "--steps", "3", "--lr", "abc"]) == \
        "fpt train: error: command line: field 'lr': expected a number, got 'abc'"
    assert _error(capsys, [*train, "c.yaml", "--lr", "0.1"]).startswith(
        "fpt train: error: c.yaml: unknown field(s) ['stepz'] (did you mean 'steps'?)")
    assert _error(capsys, [*train, "b.yaml", "--steps", "3", "lrr=1"]).startswith(
        "fpt train: error: command line: unknown field(s) ['lrr'] (did you mean 'lr'?)")
    # a check of several fields names both sources only where both gave settings
    assert _error(capsys, ["train", "--out", "run", "--config", "d.yaml"]).startswith(
        "fpt train: error: d.yaml: config field(s) image_size, patch_size apply only to your own dataset")
    assert _error(capsys, [*train, "d.yaml", "--seed", "3"]).startswith(
        "fpt train: error: d.yaml + command line: config field(s) image_size, patch_size apply only")
    assert not Path("run").exists()

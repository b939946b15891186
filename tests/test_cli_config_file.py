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

"""--target NAME and --target-column NAME name one setting (the target column, with --data): two different columns in
one place are refused in one line naming the place and both settings as that place writes them; the same column is
taken; the command line's overrides a config file's, whichever name either uses (fpt.config.target_alias)."""

from __future__ import annotations

import numpy as np
import pytest

import fpt
from fpt.cli import main, parser
from fpt.cli._args import config_from_args
from fpt.errors import ConfigError

CLASH = ("command line: --target y and --target-column z both name the target column, as different columns; give one "
         "of them (or the same column to both)")


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    rows = "".join(f"{rng.normal():.3f},{i % 2},{i % 3}\n" for i in range(30))
    (tmp_path / "t.csv").write_text("a,y,z\n" + rows)
    return tmp_path / "t.csv"


@pytest.mark.parametrize("command", ["train", "data", "pretrain"])  # every command that takes both flags
def test_two_columns_on_one_command_line_are_refused_in_one_line(command, table, tmp_path, capsys):
    rc = main([command, "--data", str(table), "--target", "y", "--target-column", "z", *(
        ["--out", str(tmp_path / "out")] if command != "data" else [])])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and err[-1] == f"fpt {command}: error: {CLASH}"  # was: target='y' and target_column='z' ...; give one
    assert not (tmp_path / "out").exists()


def test_the_same_column_under_both_names_is_taken(table, capsys):
    assert main(["data", "--data", str(table), "--target", "z", "--target-column", "z"]) == 0
    assert "  target:     z  " in capsys.readouterr().out
    config = config_from_args(parser().parse_args(["train", "--data", str(table), "--target", "z", "target_column=z"]))
    assert config.target_column == "z" and config.target is None


def test_a_clash_inside_a_config_file_names_the_file_and_its_keys(table, tmp_path):
    (tmp_path / "c.yaml").write_text(f"data: {table}\ntarget: y\ntarget_column: z\n")
    with pytest.raises(ConfigError) as err:
        config_from_args(parser().parse_args(["train", "--config", str(tmp_path / "c.yaml")]))
    assert str(err.value) == (f"{tmp_path / 'c.yaml'}: target: y and target_column: z both name the target column, as "
                              "different columns; give one of them (or the same column to both)")


@pytest.mark.parametrize(("in_file", "flags", "column", "target"), [
    ("target: y", ["--target-column", "z"], "z", None),  # was refused as a clash of the file and the command line
    ("target_column: y", ["--target", "z"], "z", None),  # likewise
    ("target: 0.9", ["--target", "z"], "z", 0.9),  # was: the file's stopping accuracy lost in silence
])
def test_the_command_line_overrides_the_file_whichever_name_either_uses(table, tmp_path, in_file, flags, column, target):
    (tmp_path / "c.yaml").write_text(f"data: {table}\n{in_file}\n")
    config = config_from_args(parser().parse_args(["train", "--config", str(tmp_path / "c.yaml"), *flags]))
    assert (config.target_column, config.target) == (column, target)


def test_python_callers_are_told_their_keyword_arguments(table):
    with pytest.raises(ConfigError) as err:
        fpt.build(data=str(table), target="y", target_column="z")
    assert str(err.value) == ("build(): target='y' and target_column='z' both name the target column, as different "
                              "columns; give one of them (or the same column to both)")
    with pytest.raises(ConfigError, match=r"^train_run\(\): target='y' and target_column='z' both name"):
        fpt.train_run({"data": str(table), "target": "y", "target_column": "z"})


def test_a_sweep_config_whose_two_names_disagree_names_the_spec_and_the_config(table):
    from fpt.experiments.sweep import expand, parse_spec

    spec = parse_spec({"base": {"data": str(table), "target": "y"}, "grid": {"target_column": ["y", "z"]}}, "s.yaml")
    with pytest.raises(ConfigError) as err:
        expand(spec)
    # the first cell agrees and is taken; the second is refused with its place (was: no spec, no config named)
    assert str(err.value) == ("sweep spec s.yaml: config 2 (target_column=z): target: y and target_column: z both name "
                              "the target column, as different columns; give one of them (or the same column to both)")

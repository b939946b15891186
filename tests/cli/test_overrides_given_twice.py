"""One setting given twice as ``key=value`` on a command line: two values are refused in one line, one value is
taken. Every reader of ``key=value`` words (fpt train and pretrain, --resume, --choose, fpt data, the bench
scripts) goes through ``fpt.config.parse_overrides``."""

from __future__ import annotations

import json

import pytest

from fpt.cli import main, parser
from fpt.cli._args import config_from_args, given_fields
from fpt.config import parse_overrides
from fpt.errors import ConfigError


@pytest.mark.parametrize("words, shown", [
    (["steps=5", "steps=9"], "steps is given twice, as steps=5 and steps=9"),  # trained 9 steps in silence
    (["batch-size=4", "batch_size=8"], "batch_size is given twice, as batch-size=4 and batch_size=8"),
    (["lr=1e-3", "steps=3", "lr=1e-4"], "lr is given twice, as lr=1e-3 and lr=1e-4"),
    (["task.n_bits=5", "task.n_bits=6"], "task.n_bits is given twice, as task.n_bits=5 and task.n_bits=6"),
    (["compile=true", "compile=no"], "compile is given twice, as compile=true and compile=no"),
])
def test_a_key_given_twice_with_two_values_is_refused_naming_both(words, shown):
    with pytest.raises(ConfigError, match=f"^command line: {shown}; give it once$"):
        parse_overrides(words)


@pytest.mark.parametrize("words, field, value", [
    (["steps=5", "steps=5"], "steps", 5),
    (["lr=0.001", "lr=1e-3"], "lr", 0.001),  # one rate, as the field reads it (as --lr 0.001 lr=1e-3 is)
    (["steps=2e4", "steps=20000"], "steps", 20000),
    (["compile=yes", "compile=true"], "compile", True),
    (["task.n_bits=5", "task.n_bits=5"], "task_options", {"n_bits": 5}),
])
def test_a_key_given_twice_with_one_value_is_taken(words, field, value):
    config = config_from_args(parser().parse_args(["train", "--task", "bit-xor", *words]))
    assert getattr(config, field) == value


def test_a_task_option_given_as_two_types_is_two_values():
    # a task option's type is its task's: 5 and 5.0 (or true and 1) are not taken as one value unread
    with pytest.raises(ConfigError, match="task.n_bits is given twice, as task.n_bits=5 and task.n_bits=5.0"):
        parse_overrides(["task.n_bits=5", "task.n_bits=5.0"])


@pytest.mark.parametrize("argv", [
    ["train", "steps=5", "steps=9"],
    ["train", "--resume", "run", "steps=5", "steps=9"],
    ["pretrain", "--out", "p", "steps=5", "steps=9"],
    ["train", "--stop-at-target", "steps=5", "steps=9"],  # a word the bool flag left for the overrides
])
def test_every_command_reading_overrides_refuses_a_key_twice(argv):
    # (argparse hands a word a bool flag left after the other key=value words, so either may be named first)
    with pytest.raises(ConfigError, match="steps is given twice, as steps=(5 and steps=9|9 and steps=5); give it once"):
        given_fields(parser().parse_args(argv))


def test_fpt_train_says_it_in_one_line_and_trains_nothing(tmp_path, capsys, tiny_bert_dir):
    out = tmp_path / "run"
    argv = ["train", "--task", "bit-xor", "--body", tiny_bert_dir, "--init", "random", "--device", "cpu",
            "--baselines", "none", "--out", str(out), "steps=5", "steps=9"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err == "fpt train: error: command line: steps is given twice, as steps=5 and steps=9; give it once"
    assert not out.exists()


def test_a_resume_refuses_a_key_twice_before_reading_the_run(tmp_path, capsys):
    # the run directory does not exist: the command line is read first, so no run is touched
    assert main(["train", "--resume", str(tmp_path / "none"), "steps=12", "steps=20"]) == 2
    assert "steps is given twice, as steps=12 and steps=20" in capsys.readouterr().err


def test_fpt_data_refuses_a_task_option_twice(capsys):
    assert main(["data", "bit-xor", "n_bits=5", "n_bits=6"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("fpt data: error: command line: task.n_bits is given twice, as task.n_bits=5 and task.n_bits=6; "
                   "give it once")


def test_a_choose_candidate_with_a_key_twice_is_refused_naming_it(tmp_path, capsys, tiny_bert_dir):
    import numpy as np

    rng = np.random.default_rng(0)
    csv = tmp_path / "d.csv"
    csv.write_text("x,y\n" + "".join(f"{rng.normal():.3f},{i % 2}\n" for i in range(24)))
    argv = ["train", "--data", str(csv), "--body", tiny_bert_dir, "--init", "random", "--device", "cpu", "--steps", "2",
            "--baselines", "none", "--out", str(tmp_path / "r"),
            "--choose", "readout=mean readout=last", "--choose", "readout=last"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("fpt train: error: --choose 'readout=mean readout=last': readout is given twice, as readout=mean "
                   "and readout=last; give it once")
    assert not (tmp_path / "r" / "selection.json").exists()


def test_the_flag_and_key_check_still_holds_beside_it():
    with pytest.raises(ConfigError, match="as --steps 5 and steps=9; give it once"):
        config_from_args(parser().parse_args(["train", "--steps", "5", "steps=9", "steps=9"]))


@pytest.mark.parametrize("argv, shown", [
    (["--steps", "5", "--steps", "9"], "--steps 5 and --steps 9"),  # argparse kept the last: 9 steps in silence
    (["--compile", "--no-compile"], "--compile true and --no-compile"),
    (["--lr", "1e-3", "--lr", "1e-4"], "--lr 1e-3 and --lr 1e-4"),
    (["--steps", "1", "--steps", "2", "--steps", "1"], "--steps 1 and --steps 2"),
])
def test_a_flag_given_twice_with_two_values_is_refused(argv, shown):
    with pytest.raises(ConfigError, match=f"^command line: [a-z]+ is given twice, as {shown}; give it once$"):
        config_from_args(parser().parse_args(["train", *argv]))


@pytest.mark.parametrize("argv, field, value", [
    (["--steps", "5", "--steps", "5"], "steps", 5),
    (["--lr", "0.001", "--lr", "1e-3"], "lr", 0.001),
    (["--compile", "--compile", "yes"], "compile", True),
])
def test_a_flag_given_twice_with_one_value_is_taken(argv, field, value):
    assert getattr(config_from_args(parser().parse_args(["train", "--task", "bit-xor", *argv])), field) == value


@pytest.mark.parametrize("argv, shown", [
    # before: argparse kept the last (b.csv described in silence, a.csv never read)
    (["--data", "a.csv", "--data", "b.csv"], "data is given twice, as --data a.csv and --data b.csv"),
    (["--data", "a.csv", "--target", "y", "--target", "z"], "target is given twice, as --target y and --target z"),
    (["--data", "a.csv", "--val-fraction", "0.1", "--val-fraction", "0.2"],
     "val_fraction is given twice, as --val-fraction 0.1 and --val-fraction 0.2"),
    (["bit-xor", "--seed", "1", "--seed", "2"], "seed is given twice, as --seed 1 and --seed 2"),
    (["bit-xor", "--data-dir", "d1", "--data-dir", "d2"], "data_dir is given twice, as --data-dir d1 and --data-dir d2"),
])
def test_fpt_data_refuses_its_own_flag_twice_as_fpt_train_does(argv, shown, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a.csv and b.csv need not exist: the command line is read before any file
    assert main(["data", *argv]) == 2
    assert capsys.readouterr().err.strip() == f"fpt data: error: command line: {shown}; give it once"


def test_fpt_data_takes_a_flag_given_twice_with_one_value(tmp_path, capsys):
    csv = tmp_path / "d.csv"
    csv.write_text("x,y\n" + "".join(f"{i * 0.5:.1f},{'ab'[i % 2]}\n" for i in range(24)))
    assert main(["data", "--data", str(csv), "--data", str(csv), "--val-fraction", "0.25", "--val-fraction", ".25",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["spec"]["num_classes"] == 2

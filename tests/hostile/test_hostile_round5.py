"""Hostile inputs, round 5: the settings a config file or a command line can give (--compile, a key given twice,
numbers that are not finite), paths the system refuses (too long) or that a shell did not expand (~), and a run
directory read from another working directory."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

import pytest
import torch
from hostile_helpers import FAST, one_line, table

import fpt
from fpt.cli import main
from fpt.config import load_yaml, parse_overrides
from fpt.errors import ConfigError


def test_compile_trains(tiny_bert_dir, tmp_path, monkeypatch):
    # every --compile run failed at its first step: `compiled or model` asked a compiled module for bool(), which it
    # hands to the model's __len__ (TypeError). The eager backend keeps the compiled module, not inductor's minutes.
    monkeypatch.setattr(torch, "compile", functools.partial(torch.compile, backend="eager"))
    exp = fpt.build(data=str(table(tmp_path / "d.csv")), body=tiny_bert_dir, **{**FAST, "compile": True})
    summary = fpt.fit(exp, out=tmp_path / "run", progress=False)
    assert summary["steps"] == 2 and exp._compiled is not None


@pytest.mark.parametrize("text, line", [
    ("lr: 1e-3\nsteps: 3\nlr: 0.5\n", 3),  # the safe loader kept lr 0.5 in silence
    ("task_options:\n  n_bits: 5\n  n_bits: 6\n", 3),
    ("base: &b {steps: 3}\nrun:\n  <<: *b\n  steps: 4\nrun: {}\n", 5),
])
def test_a_key_given_twice_in_a_config_file_is_refused(text, line, tmp_path):
    (tmp_path / "c.yaml").write_text(text)
    with pytest.raises(ConfigError, match=rf"c.yaml is not valid YAML \(line {line}, .* twice"):
        load_yaml(tmp_path / "c.yaml")


def test_a_merge_key_overridden_by_its_own_key_is_not_a_duplicate(tmp_path):
    (tmp_path / "c.yaml").write_text("base: &b {steps: 3, lr: 0.1}\nrun:\n  <<: *b\n  steps: 4\n")
    assert load_yaml(tmp_path / "c.yaml")["run"] == {"steps": 4, "lr": 0.1}


def test_a_key_given_twice_in_fpt_train_config_is_one_line(tmp_path, capsys):
    (tmp_path / "c.yaml").write_text("lr: 1e-3\nlr: 0.5\n")
    assert main(["train", "--config", str(tmp_path / "c.yaml"), "--data", str(table(tmp_path / "d.csv")),
                 "--out", str(tmp_path / "r")]) == 2
    one_line(capsys, "train", "c.yaml", "line 2", "'lr' is given twice")
    assert not (tmp_path / "r").exists()


def test_an_override_value_with_a_key_given_twice_is_refused():
    with pytest.raises(ConfigError, match="task_options=.*not valid YAML"):
        parse_overrides(["task_options={a: 1, a: 2}"])


@pytest.mark.parametrize("raw, needle", [(b"columns: [a]\nrows: [b]\ncolumns: [c]\n", "'columns' is given twice"),
                                         (b"title: \xff\n", "not UTF-8 text (byte 0xff on line 1)")])
def test_a_hostile_table_file_is_one_line(raw, needle, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a non-UTF-8 table file was a UnicodeDecodeError traceback
    (tmp_path / "t.yaml").write_bytes(raw)
    assert main(["reproduce", "t.yaml", "--dry-run"]) == 2
    one_line(capsys, "reproduce", "table file t.yaml", needle)


@pytest.mark.parametrize("field, value", [("lr", ".inf"), ("lora_alpha", "inf"), ("clip", "-.inf"), ("diverge_loss", "inf"),
                                          ("lr", "nan")])
def test_a_number_that_is_not_finite_is_one_line_before_training(field, value, tiny_bert_dir, tmp_path, capsys):
    # lr=inf and lora_alpha=inf trained a run that diverged at once, exit status 0
    assert main(["train", "--data", str(table(tmp_path / "d.csv")), "--body", tiny_bert_dir, "--out", str(tmp_path / "r"),
                 "--quiet", *(f"{k}={v}" for k, v in FAST.items()), f"{field}={value}"]) == 2
    one_line(capsys, "train", f"field {field!r}: expected a finite number")
    assert not (tmp_path / "r").exists()


def test_python_refuses_an_infinite_learning_rate(tiny_bert_dir, tmp_path):
    with pytest.raises(ConfigError, match="'lr': expected a finite number, got inf"):
        fpt.build(data=str(table(tmp_path / "d.csv")), body=tiny_bert_dir, **{**FAST, "lr": float("inf")})


LONG = "x" * 300  # one name past the 255 bytes a file system takes


def test_a_train_out_name_too_long_is_one_line(tmp_path, capsys):
    # OSError(ENAMETOOLONG) has no class of its own: it was a traceback asking for a bug report
    assert main(["train", "--data", str(table(tmp_path / "d.csv")), "--out", str(tmp_path / LONG)]) == 2
    one_line(capsys, "train", "File name too long", "give a shorter path")


def test_a_predict_out_name_too_long_is_one_line(run_copy, tmp_path, capsys):
    assert main(["predict", str(run_copy), str(table(tmp_path / "n.csv", n=4)), "--out", str(tmp_path / LONG)]) == 2
    one_line(capsys, "predict", "File name too long", "give a shorter path")


def test_a_read_only_disk_is_one_line_and_other_os_errors_keep_their_traceback(monkeypatch, capsys):
    import errno

    from fpt.cli import runs

    for code, status in [(errno.EROFS, 2), (errno.ENOSPC, 2), (errno.EIO, 1)]:
        def fail(args, code=code):
            raise OSError(code, os.strerror(code), "/mnt/runs")
        monkeypatch.setattr(runs, "run", fail)
        assert main(["runs", "anywhere"]) == status
        if status == 2:
            one_line(capsys, "runs", os.strerror(code), "'/mnt/runs'", "give a path on")
        else:  # not about the user's path: a bug's traceback
            assert "Traceback" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["train", "predict", "export"])
def test_an_output_path_with_a_tilde_no_shell_expanded_is_refused(command, run_copy, tmp_path, monkeypatch, capsys):
    # '--out ~/runs/a' quoted (or --out=~/runs/a) made a folder named '~' in the working directory
    monkeypatch.chdir(tmp_path)
    argv = {"train": ["train", "--data", str(table(tmp_path / "d.csv")), "--out", "~/runs/a"],
            "predict": ["predict", str(run_copy), str(table(tmp_path / "n.csv", n=4)), "--out", "~/p.csv"],
            "export": ["export", str(run_copy), "~/export"]}[command]
    assert main(argv) == 2
    one_line(capsys, command, "begins with '~'", os.path.expanduser("~"))
    assert not (tmp_path / "~").exists()


def test_a_name_that_merely_begins_with_a_tilde_is_an_output_like_any_other(tmp_path, monkeypatch):
    from fpt.outputs import check_dir, check_file

    monkeypatch.chdir(tmp_path)
    assert check_file("~draft.csv") == Path("~draft.csv")  # names no home folder: nothing a shell would expand
    assert check_dir("~nouser-xyz/run") == Path("~nouser-xyz/run")


@pytest.mark.parametrize("argv", [["steps=9", "--steps", "5"], ["--steps", "5", "steps=9"], ["--lr", "0.1", "lr=0.2"]])
def test_a_field_given_as_a_flag_and_as_key_value_with_two_values_is_refused(argv):
    # key=value won wherever it stood: steps=9 --steps 5 trained 9 steps
    from fpt.cli import parser
    from fpt.cli._args import config_from_args

    with pytest.raises(ConfigError, match=r"is given twice, as --(steps 5 and steps=9|lr 0.1 and lr=0.2); give it once"):
        config_from_args(parser().parse_args(["train", *argv]))


def test_a_field_given_twice_with_one_value_is_taken():
    from fpt.cli import parser
    from fpt.cli._args import config_from_args

    config = config_from_args(parser().parse_args(["train", "--steps", "5", "steps=5", "--compile", "compile=true"]))
    assert (config.steps, config.compile) == (5, True)


@pytest.mark.parametrize("argv, field, value", [
    (["--lr", "0.001", "lr=1e-3"], "lr", 0.001),  # was refused: '0.001' and '1e-3' compared as text
    (["lr=0.001", "--lr", "1e-3"], "lr", 0.001),
    (["--lr", "0.0010", "lr=0.001"], "lr", 0.001),
    (["--steps", "2e4", "steps=20000"], "steps", 20000),
    (["--compile", "compile=yes"], "compile", True),
    (["--layers", "none", "layers=null"], "layers", None),
])
def test_a_field_given_as_a_flag_and_as_key_value_with_one_value_as_the_field_reads_it_is_taken(argv, field, value):
    from fpt.cli import parser
    from fpt.cli._args import config_from_args

    assert getattr(config_from_args(parser().parse_args(["train", *argv])), field) == value


@pytest.mark.parametrize("argv, shown", [
    # text compared regardless of case: target_column=label was kept in silence, another column than --target-column's
    (["--target-column", "Label", "target_column=label"], "--target-column Label and target_column=label"),
    (["--compile", "compile=false"], "--compile true and compile=False"),
    (["--lr", "1e-3", "lr=1e-4"], "--lr 1e-3 and lr=1e-4"),
])
def test_a_field_given_as_a_flag_and_as_key_value_with_two_values_as_the_field_reads_them_is_refused(argv, shown):
    from fpt.cli import parser
    from fpt.cli._args import config_from_args

    with pytest.raises(ConfigError, match=f"is given twice, as {re.escape(shown)}; give it once"):
        config_from_args(parser().parse_args(["train", *argv]))

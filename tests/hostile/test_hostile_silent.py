"""Silent wrong results (issue 39, and issue 38 round 2's last): each is now an error, or correct."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pandas as pd
import pytest
from hostile_helpers import FAST, one_line, table

import fpt
from fpt.cli import main
from fpt.config import RunConfig, from_dict
from fpt.errors import ConfigError, DataError
from fpt.predictor import Prediction
from fpt.select import candidate_config, check_folds, cross_validate


@pytest.mark.parametrize("fields", [{"objective": "regression"}, {"target_column": "x2"}, {"test_fraction": 0.5},
                                    {"split_seed": 3}, {"task": "bit-xor"}, {"modality": "sequence"}])
def test_choose_candidates_that_change_the_question_are_refused(fields, tmp_path):
    config = from_dict(RunConfig, {"data": str(table(tmp_path / "d.csv"))})
    with pytest.raises(ConfigError, match="not an option to choose between"):
        candidate_config(config, fields)


def test_choose_on_the_command_line_refuses_an_objective_candidate(tiny_bert_dir, tmp_path, capsys):
    assert main(["train", "--data", str(table(tmp_path / "d.csv")), "--body", tiny_bert_dir, "--init", "random",
                 "--quiet", "--choose", "objective=regression", "--choose", "lr=0.01",
                 "--out", str(tmp_path / "r")]) == 2
    one_line(capsys, "train", "'objective'")
    assert not (tmp_path / "r" / "selection.json").exists()


@pytest.mark.parametrize("folds", [2.5, "3", None, True, 1, 0, -2])
def test_cross_validate_refuses_folds_that_are_not_a_whole_number_from_2(folds, tmp_path):
    config = from_dict(RunConfig, {"data": str(table(tmp_path / "d.csv"))})
    with pytest.raises(ConfigError, match="whole number of folds"):
        cross_validate(config, [{"lr": 0.1}], folds)


@pytest.mark.parametrize("config", [{"data": "x.csv"}, ["data", "x.csv"], "x.csv"])
def test_cross_validate_refuses_a_config_that_is_not_a_run_config(config):
    with pytest.raises(ConfigError, match="RunConfig"):
        cross_validate(config, [{"lr": 0.1}], 3)


def test_check_folds_keeps_numpy_integers():
    assert check_folds(np.int64(4)) == 4


def test_more_folds_than_examples_of_a_class_is_an_error_before_any_training(tmp_path, monkeypatch):
    import fpt.select as select

    monkeypatch.setattr(select, "_fold", lambda *a: pytest.fail("trained a fold"))
    rows = ["x,label"] + [f"{i},{'a' if i < 20 else 'b'}" for i in range(24)]  # b: 4 examples, some held out
    (tmp_path / "d.csv").write_text("\n".join(rows) + "\n")
    config = from_dict(RunConfig, {"data": str(tmp_path / "d.csv")})
    with pytest.raises(ConfigError, match="rarest class has only"):
        cross_validate(config, [{"lr": 0.1}], 5)


def test_folds_on_the_command_line_larger_than_a_class_is_one_line(tiny_bert_dir, tmp_path, capsys):
    assert main(["train", "--data", str(table(tmp_path / "d.csv", n=16)), "--body", tiny_bert_dir, "--init", "random",
                 "--quiet", "--choose", "lr=0.1", "--choose", "lr=0.01", "--folds", "9",
                 "--out", str(tmp_path / "r")]) == 2
    one_line(capsys, "train", "folds=9", "--folds")


@pytest.mark.parametrize("kind", ["dangling", "loop"])
def test_a_broken_test_csv_link_is_an_error_not_ignored(kind, tmp_path, tiny_bert_dir):
    folder = tmp_path / "data"
    folder.mkdir()
    table(folder / "train.csv")
    link = folder / "test.csv"
    link.symlink_to(folder / "gone.csv" if kind == "dangling" else link)
    with pytest.raises(DataError, match="test.csv: a symbolic link that leads to no file"):
        fpt.build(data=str(folder), body=tiny_bert_dir, **FAST)


def test_runs_json_is_strict_json(run_copy, capsys):
    doc = json.loads((run_copy / "summary.json").read_text())
    (run_copy / "summary.json").write_text(json.dumps({**doc, "val_accuracy": float("nan"),
                                                       "test_accuracy": float("inf")}))
    capsys.readouterr()
    assert main(["runs", str(run_copy), "--json"]) == 0

    def refuse(name):
        raise ValueError(f"bare {name} in fpt runs --json")

    rows = json.loads(capsys.readouterr().out, parse_constant=refuse)
    assert rows[0]["val_accuracy"] is None


@pytest.mark.parametrize("name", ["a|b", "two\nlines", "cr\rhere", "x | y\r\n"])
def test_markdown_cells_keep_a_table_whole(name):
    from fpt.presentation.document import Table, to_markdown

    text = to_markdown("t", [Table([name, "value"], [[name, "1"]])], None, None)
    rows = [line for line in text.splitlines() if line.startswith("|")]
    assert len(rows) == 3 and all(line.replace("\\|", "").count("|") == 3 for line in rows)


@pytest.mark.parametrize("columns", [[1, "1", "label"], ["x", "x", "label"]])
def test_a_dataframe_with_two_columns_of_one_name_is_refused(columns, tiny_bert_dir):
    df = pd.DataFrame(np.arange(30).reshape(10, 3) % 2, columns=columns)
    with pytest.raises(DataError, match="columns named"):
        fpt.build(data=df, target_column="label", body=tiny_bert_dir, **FAST)


@pytest.mark.parametrize("key", ["X_tset", "Y", "x_test"])
def test_an_in_memory_dict_with_a_misspelt_key_is_refused(key, tiny_bert_dir):
    X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20) % 2
    with pytest.raises(DataError, match=f"unknown array '{key}'"):
        fpt.build(data={"X": X, "y": y, key: X}, body=tiny_bert_dir, **FAST)


@pytest.mark.parametrize(("label", "written"), [("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
                                                ("@SUM(A1:A9)", "'@SUM(A1:A9)"), ("+1+1", "'+1+1"),
                                                ("-2+3", "'-2+3"), ("\tx", "'\tx"),
                                                ("-1.5", "-1.5"), ("plain", "plain")])
def test_prediction_csvs_neutralise_formulas(label, written, tmp_path):
    Prediction({"prediction": [label]}, None, 1, "x").to_csv(tmp_path / "p.csv")
    with open(tmp_path / "p.csv", newline="") as f:
        assert list(csv.reader(f))[1] == [written]


def test_a_carriage_return_label_is_neutralised(tmp_path):
    Prediction({"prediction": ["\rx"]}, None, 1, "x").to_csv(tmp_path / "p.csv")
    assert (tmp_path / "p.csv").read_bytes().split(b"\n", 1)[1].startswith(b"'\rx")


def test_numbers_in_a_prediction_csv_are_kept(tmp_path):
    Prediction({"prediction": [-1.5], "proba_a": [0.25]}, None, 1, "x").to_csv(tmp_path / "p.csv")
    assert (tmp_path / "p.csv").read_text().splitlines()[1] == "-1.5,0.25"


def test_predict_on_a_self_looping_model_link_is_one_line(tmp_path, capsys):
    loop = tmp_path / "model"
    loop.symlink_to(loop)
    assert main(["predict", str(loop), str(table(tmp_path / "n.csv", n=4)), "--out", str(tmp_path / "p.csv")]) == 2
    one_line(capsys, "predict")


@pytest.mark.parametrize("column", ["listopz", "../../etc/passwd"])
def test_a_table_column_naming_no_task_is_refused_not_bit_xor(column, tmp_path, monkeypatch):
    from fpt.experiments import grid

    spec = {"title": "mine", "paper": "table2", "rows": {"r": {"init": "random"}}, "columns": [column]}
    monkeypatch.setattr(grid, "load_spec", lambda name: spec)
    with pytest.raises(ConfigError, match="not a task column"):
        grid.expand("mine", "quick")


def test_a_column_with_its_own_task_is_accepted(monkeypatch):
    from fpt.experiments import grid

    spec = {"title": "mine", "paper": "table2", "rows": {"r": {"init": "random"}},
            "columns": {"mine": {"task": "bit-memory"}}}
    monkeypatch.setattr(grid, "load_spec", lambda name: spec)
    assert grid.expand("mine", "quick").cells[0].config.task == "bit-memory"
    assert math.isfinite(1.0)

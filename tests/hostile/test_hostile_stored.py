"""Strict readers (issue 39, tracebacks; issue 38 round 2): every stored file fpt reads back is checked as fpt wrote
it (fpt.rundir.stored: one schema check per file kind, a size limit on what is read), so a tampered file is one line naming
the file, the field and the fix in fpt runs, report, plot, predict, export and train --resume."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hostile_helpers import one_line, table

from bench_scripts import load as load_bench
from fpt.cli import main
from fpt.config import load_yaml
from fpt.errors import CheckpointError, ConfigError
from fpt.rundir import stored

ROWS = {
    "a list": "[1, 2]",
    "no wall_seconds": '{"step": 2, "val_accuracy": 0.5}',
    "step 'five'": '{"step": "five", "wall_seconds": 1.0}',
    "a negative step": '{"step": -2, "wall_seconds": 1.0}',
    "step true": '{"step": true, "wall_seconds": 1.0}',
    "text wall_seconds": '{"step": 2, "wall_seconds": "slow"}',
    "infinite wall_seconds": '{"step": 2, "wall_seconds": Infinity}',
    "text accuracy": '{"step": 2, "wall_seconds": 1.0, "val_accuracy": "high"}',
    "a number": "7",
}


@pytest.mark.parametrize("command", ["runs", "plot"])
@pytest.mark.parametrize("row", list(ROWS))
def test_a_tampered_metrics_row_is_one_line(row, command, run_copy, tmp_path, capsys):
    (run_copy / "metrics.jsonl").write_text(ROWS[row] + "\n")
    extra = ["--out", str(tmp_path / "c.png")] if command == "plot" else []
    assert main([command, str(run_copy), *extra]) == 2
    one_line(capsys, command, "metrics.jsonl, line 1")


def test_a_tampered_metrics_row_breaks_no_report(run_copy, capsys):
    (run_copy / "metrics.jsonl").write_text(ROWS["a list"] + "\n")
    assert main(["report", str(run_copy), "--attention", "never"]) in (0, 2)
    assert "Traceback" not in capsys.readouterr().err


SUMMARIES = {
    "text where a metric belongs": {"val_accuracy": "high"},
    "text test accuracy": {"test_accuracy": "0.9"},
    "task_info a list": {"task_info": [1, 2]},
    "split_sizes a list": {"task_info": {"split_sizes": [1, 2]}},
    "text wall_seconds": {"wall_seconds": "fast"},
    "text steps": {"steps": "many"},
    "a fractional selected step": {"selected_step": 1.5},
    "eval a list": {"eval": [0.5]},
    "eval with text": {"eval": {"test_loss": "low"}},
    "task a number": {"task": 7},
}


@pytest.mark.parametrize("command", ["runs", "report", "predict", "export"])
@pytest.mark.parametrize("name", list(SUMMARIES))
def test_a_tampered_summary_is_one_line_naming_the_field(name, command, run_copy, tmp_path, capsys):
    doc = json.loads((run_copy / "summary.json").read_text())
    doc.update(SUMMARIES[name])
    (run_copy / "summary.json").write_text(json.dumps(doc))
    argv = {"runs": ["runs", str(run_copy)], "report": ["report", str(run_copy), "--attention", "never"],
            "predict": ["predict", str(run_copy), str(table(tmp_path / "n.csv", n=4)), "--out", str(tmp_path / "p.csv")],
            "export": ["export", str(run_copy), str(tmp_path / "e")]}[command]
    assert main(argv) == 2
    one_line(capsys, command, "summary.json", repr(next(iter(SUMMARIES[name])))[1:-1])


def test_side_by_side_on_a_tampered_store_is_one_line(run_copy, tmp_path, capsys):
    doc = json.loads((run_copy / "summary.json").read_text())
    doc["test_accuracy"] = "high"
    (run_copy / "summary.json").write_text(json.dumps(doc))
    assert load_bench("side_by_side").main(["--a", "a", str(run_copy.parent), "--b", "b", str(run_copy.parent),
                                            "--out", str(tmp_path / "s.md")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "summary.json: field 'test_accuracy'" in err


def _bomb(levels: int = 9) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_a_yaml_alias_bomb_is_refused_fast(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(_bomb())
    started = time.perf_counter()
    with pytest.raises(ConfigError, match="aliases"):
        load_yaml(path)
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize("command", ["runs", "report", "predict"])
def test_a_runs_config_alias_bomb_is_one_line(command, run_copy, tmp_path, capsys):
    (run_copy / "config.yaml").write_text(_bomb())
    argv = {"runs": ["runs", str(run_copy)], "report": ["report", str(run_copy), "--attention", "never"],
            "predict": ["predict", str(run_copy), str(table(tmp_path / "n.csv", n=4)), "--out", str(tmp_path / "p.csv")]
            }[command]
    started = time.perf_counter()
    assert main(argv) in (0, 2)  # fpt runs lists an unreadable run as such; the others stop
    err = capsys.readouterr().err
    assert "Traceback" not in err and time.perf_counter() - started < 20


def test_a_config_file_larger_than_fpt_writes_is_refused_before_reading(tmp_path):
    path = tmp_path / "config.yaml"
    with open(path, "wb") as f:
        f.truncate(stored.LIMITS["config.yaml"] + 1)
    with pytest.raises(ConfigError, match="more than fpt writes"):
        load_yaml(path)


def test_a_metrics_file_larger_than_the_limit_is_refused(run_copy, monkeypatch, capsys):
    monkeypatch.setitem(stored.LIMITS, "metrics.jsonl", 10)
    assert main(["runs", str(run_copy)]) == 2
    one_line(capsys, "runs", "metrics.jsonl holds", "bytes")


SELECTIONS = {
    "winner out of range": {"winner": 7},
    "winner a string": {"winner": "0"},
    "winner negative": {"winner": -1},
    "candidates not a list": {"candidates": "lr=0.1"},
    "a score row missing": {"val_accuracy": [[0.5, 0.5]]},
    "folds a string": {"folds": "2"},
    "metric unknown": {"metric": "f1"},
    "choose not the texts": {"choose": [1, 2]},
}


def _selection() -> dict:
    return {"metric": "accuracy", "folds": 2, "winner": 1, "candidates": [{"lr": 0.1}, {"lr": 0.01}],
            "val_accuracy": [[0.5, 0.6], [0.7, 0.8]], "val_loss": [[0.7, 0.6], [0.5, 0.4]],
            "selected_steps": [[2, 2], [2, 2]], "choose": ["lr=0.1", "lr=0.01"]}


def test_a_good_selection_reads():
    assert stored.selection(_selection(), "selection.json")["winner"] == 1


@pytest.mark.parametrize("name", list(SELECTIONS))
def test_a_tampered_selection_is_refused_on_resume(name, run_copy, capsys):
    (run_copy / "selection.json").write_text(json.dumps({**_selection(), **SELECTIONS[name]}))
    assert main(["train", "--resume", str(run_copy), "--quiet"]) == 2
    one_line(capsys, "train", "selection.json: field", repr(next(iter(SELECTIONS[name])))[1:-1])


def test_a_selection_that_is_a_list_is_refused(tmp_path):
    with pytest.raises(CheckpointError, match="not a selection"):
        stored.selection([1], tmp_path / "selection.json")


EXPORTS = {
    "no body": (lambda d: d.pop("body"), "body.fingerprint"),
    "no body.fingerprint": (lambda d: d["body"].pop("fingerprint"), "body.fingerprint"),
    "input.info a list": (lambda d: d["input"].update(info=[1, 2]), "input.info"),
    "token_dim 10^9": (lambda d: d["input"]["spec"].update(token_dim=10**9), "token_dim"),
    "num_hidden_layers 10^6": (lambda d: [c.update(num_hidden_layers=10**6) for c in d["body"]["hf_configs"].values()],
                               "num_hidden_layers"),
    "an unknown model_type": (lambda d: [c.update(model_type="zorgformer") for c in d["body"]["hf_configs"].values()],
                              "model_type"),
    "hf_configs a list": (lambda d: d["body"].update(hf_configs=[1]), "hf_configs"),
    "input.lengths text": (lambda d: d["input"].update(lengths="yes"), "input.lengths"),
    "a negative seq_len": (lambda d: d["input"]["spec"].update(seq_len=-3), "seq_len"),
    "input a list": (lambda d: d.update(input=[]), "input.spec"),
}


@pytest.mark.parametrize("name", list(EXPORTS))
def test_a_tampered_export_config_is_one_line_before_any_allocation(name, export_copy, tmp_path, capsys):
    edit, field = EXPORTS[name]
    doc = json.loads((export_copy / "config.json").read_text())
    edit(doc)
    (export_copy / "config.json").write_text(json.dumps(doc))
    started = time.perf_counter()
    assert main(["predict", str(export_copy), str(table(tmp_path / "n.csv", n=4)), "--out", str(tmp_path / "p.csv")]) == 2
    one_line(capsys, "predict", "config.json", field)
    assert time.perf_counter() - started < 10


def test_stored_checks_accept_what_fpt_writes(tab_run):
    from fpt.rundir import read_metrics, read_summary

    assert read_metrics(tab_run) and read_summary(tab_run)["task"] == "data"
    assert isinstance(Path(tab_run), Path)

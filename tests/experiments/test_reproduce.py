"""fpt reproduce: listing, dry runs that catch config errors, the shared run store, seeds, all, pruning."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import fpt.experiments
from fpt.cli import main
from fpt.config import RunConfig
from fpt.experiments.grid import Cell, Table
from fpt.experiments.runner import Store, config_key, prune_checkpoints, run_table
from fpt.experiments.validate import body_depth, check_config


def test_list_names_every_table_in_numeric_order(capsys):
    assert main(["reproduce", "list"]) == 0
    assert capsys.readouterr().out.split() == [f"table{n}" for n in range(1, 22)]


@pytest.mark.parametrize("n", range(1, 22))
def test_paper_scale_dry_run_of_every_table_succeeds_without_data(n, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", f"table{n}", "--scale", "paper", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"Table {n}:" in out and "error" not in out.lower()
    assert not (tmp_path / "results").exists()  # a dry run writes nothing


def test_layers_are_checked_against_the_bodys_depth():
    assert (body_depth("gpt2"), body_depth("gpt2-medium"), body_depth("minilm"), body_depth("lstm-3")) == (12, 24, 6, 3)
    assert check_config(RunConfig(task="listops", body="gpt2-medium", layers=24)) == []
    # Table 12's old bug: the row's body (gpt2) replaced the column's gpt2-medium
    errors = check_config(RunConfig(task="listops", body="gpt2", layers=24))
    assert errors == ["layers=24 must be in 1..12 for body 'gpt2' (12 blocks)"]
    assert any("freeze policy" in e for e in check_config(RunConfig(body="gpt2", freeze="output+nonsense")))
    assert any("n_bitz" in e for e in check_config(RunConfig(task="bit-xor", task_options={"n_bitz": 3})))


def test_dry_run_reports_config_errors_and_fails(tmp_path, monkeypatch, capsys):
    bad = Table("table12", "Table 12: bad", "paper", ["random"], ["24"],
                [Cell("random", "24", RunConfig(task="bit-xor", body="gpt2", init="random", layers=24),
                      "test_accuracy", 17.0)])
    monkeypatch.setattr(fpt.experiments, "expand", lambda name, scale: bad)
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "table12", "--scale", "paper", "--dry-run"]) == 1
    out = capsys.readouterr().out
    assert "ERROR" in out and "layers=24 must be in 1..12" in out and "1 config error(s)" in out


def _tiny(body: str, **fields) -> RunConfig:
    return RunConfig(task="bit-xor", body=body, init="random", steps=2, eval_every=2, batch_size=4,
                     task_options={"eval_size": 8}, device="cpu", **fields)


def test_store_shares_a_config_between_tables_and_runs_every_seed(tiny_gpt2_dir, tmp_path):
    shared = _tiny(tiny_gpt2_dir)
    a = Table("tableA", "A", "quick", ["fpt"], ["bit-xor"], [Cell("fpt", "bit-xor", shared, "test_accuracy", 100.0)])
    b = Table("tableB", "B", "quick", ["pretrained"], ["bit-xor"],
              [Cell("pretrained", "bit-xor", shared, "test_accuracy", 100.0)])
    store = Store(tmp_path / "runs")
    first = run_table(a, store, seeds=[0, 1], progress=False)
    assert [r["seed"] for r in first] == [0, 1] and len({r["run_dir"] for r in first}) == 2
    assert first[0]["run_dir"].name == config_key(shared) and first[1]["run_dir"].name == config_key(
        RunConfig(**{**shared.to_dict(), "seed": 1}))
    mtime = (first[0]["run_dir"] / "summary.json").stat().st_mtime
    second = run_table(b, store, seeds=[0, 1], progress=False)  # the same configs: reused, not retrained
    assert [r["run_dir"] for r in second] == [r["run_dir"] for r in first]
    assert (first[0]["run_dir"] / "summary.json").stat().st_mtime == mtime
    assert sorted(p.name for p in store.root.iterdir()) == sorted(r["run_dir"].name for r in first)
    saved = json.loads((first[1]["run_dir"] / "summary.json").read_text())
    assert saved["test_accuracy"] == second[1]["summary"]["test_accuracy"]
    removed = prune_checkpoints(store.root)
    assert {p.name for p in removed} <= {"checkpoint", "best"} and removed
    for r in first:
        assert sorted(p.name for p in r["run_dir"].iterdir()) == ["config.yaml", "metrics.jsonl", "summary.json"]


def test_reproduce_all_keeps_going_resumes_and_prunes(tiny_gpt2_dir, tmp_path, monkeypatch, capsys):
    good = _tiny(tiny_gpt2_dir)
    broken = _tiny(str(tmp_path / "no-such-body"))
    tables = {
        "table2": Table("table2", "Table 2: tiny", "quick", ["language_gpt2", "random"], ["bit-xor"], [
            Cell("language_gpt2", "bit-xor", broken, "test_accuracy", 100.0, paper_column="bit-xor"),
            Cell("random", "bit-xor", good, "test_accuracy", 100.0, paper_column="bit-xor")]),
        "table9": Table("table9", "Table 9: tiny", "quick", ["default_random"], ["bit-xor"], [
            Cell("default_random", "bit-xor", good, "test_accuracy", 100.0, paper_column="bit-xor")]),
    }
    monkeypatch.setattr(fpt.experiments, "table_names", lambda: list(tables))
    monkeypatch.setattr(fpt.experiments, "expand", lambda name, scale: tables[name])
    out = tmp_path / "quick"
    assert main(["reproduce", "all", "--scale", "quick", "--out", str(out), "--quiet", "--seeds", "0"]) == 0
    printed = capsys.readouterr().out
    assert "table2: 1 of 2 cells done, 1 failed" in printed and "table9: 1 of 1 cells done" in printed
    with open(out / "table2" / "results.csv", newline="") as f:
        rows = {r["row"]: r for r in csv.DictReader(f)}
    assert rows["language_gpt2"]["status"] == "failed" and rows["language_gpt2"]["note"]
    run_dir = rows["random"]["run_dir"]
    assert run_dir == f"../runs/{config_key(good)}" and (out / "table2" / run_dir / "summary.json").is_file()
    with open(out / "table9" / "results.csv", newline="") as f:
        assert next(csv.DictReader(f))["run_dir"] == run_dir  # one run for both tables
    assert len(list((out / "runs").iterdir())) == 1
    assert (out / "README.md").is_file() and (out / "claims.md").is_file()
    assert "fpt reproduce table2 --scale quick --out" in (out / "table2" / "report.md").read_text()

    summary_file = out / "runs" / config_key(good) / "summary.json"
    mtime = summary_file.stat().st_mtime
    assert main(["reproduce", "all", "--scale", "quick", "--out", str(out), "--quiet", "--prune-checkpoints"]) == 0
    assert summary_file.stat().st_mtime == mtime  # resumed: the finished run is reused
    assert not (summary_file.parent / "checkpoint").exists() and not (summary_file.parent / "best").exists()
    assert "pruned" in capsys.readouterr().out

    # Asking for more seeds than are run: the cells with seed 0 only are partial, in the output and the index.
    runs_before = sorted(p.name for p in (out / "runs").iterdir())
    assert main(["reproduce", "all", "--scale", "quick", "--out", str(out), "--quiet", "--seeds", "0,1",
                 "--report-only"]) == 0
    assert sorted(p.name for p in (out / "runs").iterdir()) == runs_before  # seed 1 was not trained
    assert "table9: 0 of 1 cells done, 1 with only some seeds" in capsys.readouterr().out
    index = (out / "README.md").read_text()
    assert f"fpt reproduce all --scale quick --out {out} --seeds 0,1" in index
    assert "| [Table 9: tiny](table9/report.md) | 0 | 1 | 0 | 1 |" in index
    assert "[1 of 2 seeds]" in (out / "table9" / "report.md").read_text()


def test_seeds_must_be_integers(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "table3", "--seeds", "0,x", "--dry-run"]) == 2
    assert "--seeds" in capsys.readouterr().err


_HOLDER = """
import sys, time
from fpt import rundir
with rundir.lock(sys.argv[1], what="other worker"):
    print("locked", flush=True)
    time.sleep(60)
"""


def test_two_workers_on_one_store_skip_each_others_runs(tiny_gpt2_dir, tmp_path, capsys):
    """A run another process holds is left to it (not failed, not retrained); the next one is run."""
    import subprocess
    import sys

    a, b = _tiny(tiny_gpt2_dir), _tiny(tiny_gpt2_dir, seed=1)
    table = Table("tableA", "A", "quick", ["x", "y"], ["bit-xor"],
                  [Cell("x", "bit-xor", a, "test_accuracy", 100.0), Cell("y", "bit-xor", b, "test_accuracy", 100.0)])
    store = Store(tmp_path / "runs")
    held = store.plan(table, table.cells[0]).run_dir
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(held)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        first, second = run_table(table, store, progress=False)
    finally:
        holder.kill()
        holder.wait()
    assert first["status"] == "not run" and "running in another process" in first["note"]
    assert first["summary"] is None and not (held / "summary.json").exists()
    assert second["status"] == "done" and second["summary"]["test_accuracy"] is not None
    assert "left to the process that holds it" in capsys.readouterr().err
    again = run_table(table, store, progress=False)  # the holder is gone: this worker now runs it
    assert [r["status"] for r in again] == ["done", "done"]
    assert (held / "summary.json").is_file()


def _user_table(tmp_path, body: str, **extra) -> str:
    import yaml

    spec = {"title": "My grid: bit XOR by freezing", "base": {"init": "random", "steps": 2, "eval_every": 2,
                                                               "batch_size": 4, "device": "cpu", "body": body},
            "columns": {"xor": {"task": "bit-xor", "task_options": {"eval_size": 8}}},
            "rows": {"frozen": None, "full": {"freeze": "none"}}, **extra}
    path = tmp_path / "my_grid.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return str(path)


def test_reproduce_runs_a_users_table_file(tiny_gpt2_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    path = _user_table(tmp_path, tiny_gpt2_dir)
    assert main(["reproduce", path, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "My grid: bit XOR by freezing [quick]" in out and "results/my_grid-quick" in out
    assert "freeze=none" in out and out.count("run  ") == 2
    assert main(["reproduce", path, "--quiet", "--seeds", "0,1"]) == 0
    rows = list(csv.DictReader((tmp_path / "results/my_grid-quick/results.csv").open()))
    assert [(r["row"], r["status"], r["n"]) for r in rows] == [("frozen", "done", "2"), ("full", "done", "2")]
    assert all(r["paper"] == "" for r in rows)  # no paper figure is invented for a user's table
    report = (tmp_path / "results/my_grid-quick/report.md").read_text()
    assert f"fpt reproduce {path}" in report
    # what docs/sweeps.md says it writes: results/my_grid-quick/{report.md,results.csv,report.html}
    import re

    docs = (Path(__file__).resolve().parents[2] / "docs" / "sweeps.md").read_text()
    promised = re.search(r"fpt reproduce my_grid.yaml --seeds 0,1,2 +# results/my_grid-quick/\{([^}]*)\}", docs)
    files = promised.group(1).split(",")
    assert "report.html" in files and all((tmp_path / "results/my_grid-quick" / f).is_file() for f in files)
    html = (tmp_path / "results/my_grid-quick/report.html").read_text()
    assert "Learning curves" in html and "freeze" in html


@pytest.mark.parametrize(("extra", "expected"), [
    ({"colums": {}}, "unknown key 'colums' (did you mean 'columns'?)"),
    ({"rows": []}, "'rows' must be a mapping of row -> config fields"),
    ({"rows": {"frozen": 3}}, "'frozen': give a mapping of config fields"),
    ({"scales": {"huge": {}}}, "scales.huge: unknown scale"),
    ({"same_as": "table99"}, "same_as 'table99' is not one of the paper's tables"),
    ({"base": {"lrr": 0.1}}, "lrr"),
])
def test_a_bad_table_file_is_one_line_naming_the_file_and_key(extra, expected, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    path = _user_table(tmp_path, "gpt2", **extra)
    assert main(["reproduce", path, "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert expected in err and len(err.splitlines()) == 1 and ("my_grid.yaml" in err)


def test_a_missing_table_file_or_name_says_what_to_give(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "nope.yaml", "--dry-run"]) == 2
    assert "nope.yaml: no such table file" in capsys.readouterr().err
    assert main(["reproduce", "tabel3", "--dry-run"]) == 2
    assert "or the path of your own table file" in capsys.readouterr().err


def test_a_table_file_can_take_a_paper_tables_grid(tmp_path, monkeypatch, capsys):
    (tmp_path / "mine.yaml").write_text("title: 'Mine: Table 11 again'\nsame_as: table11\n")
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "mine.yaml", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Mine: Table 11 again [quick] -> results/mine-quick") and out.count("run  ") == 6

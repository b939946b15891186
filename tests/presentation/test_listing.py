"""fpt runs: every state read from the files alone, filters, sorting, CSV/JSON."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys

import pytest

import fpt
from fpt.cli import main
from fpt.presentation.listing import list_runs, select


def _train(body: str, out, **fields) -> dict:
    exp = fpt.build(task="bit-xor", body=body, init="random", steps=4, eval_every=2, batch_size=4,
                    task_options={"eval_size": 8}, device="cpu", **fields)
    return fpt.fit(exp, out=out, progress=False)


_HOLDER = """
import sys, time
from fpt import rundir
with rundir.lock(sys.argv[1], what="fpt train"):
    print("locked", flush=True)
    time.sleep(60)
"""


@pytest.fixture(scope="module")
def runs(tiny_gpt2_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    _train(tiny_gpt2_dir, root / "a", lr=1e-3, seed=0)
    _train(tiny_gpt2_dir, root / "b", lr=1e-2, seed=1)
    _train(tiny_gpt2_dir, root / "sub" / "diverged", diverge_loss=1e-9)
    shutil.copytree(root / "a", root / "stopped")
    (root / "stopped" / "summary.json").unlink()  # killed after a checkpoint: resumable
    (root / "failed").mkdir()
    shutil.copy(root / "a" / "config.yaml", root / "failed")  # died before its first checkpoint
    (root / "failed" / "metrics.jsonl").write_text("")
    (root / "interrupted").mkdir()
    shutil.copy(root / "a" / "config.yaml", root / "interrupted")  # killed before its first evaluation: config only
    (root / "not-a-run").mkdir()
    (root / "not-a-run" / "config.yaml").write_text("name: a sweep spec\nbase: {task: bit-xor}\n")
    return root


def test_every_state_is_told_apart(runs):
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(runs / "stopped")], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        states = {r["run"]: r["state"] for r in list_runs(runs)}
        assert states["stopped"] == "running"
    finally:
        holder.kill()
        holder.wait()
    states = {r["run"]: r["state"] for r in list_runs(runs)}
    # the killed holder's lock file names a pid that is gone: not running any more
    assert states == {"a": "finished", "b": "finished", "sub/diverged": "diverged", "stopped": "stopped",
                      "failed": "failed", "interrupted": "interrupted"}


def test_rows_carry_config_and_the_summary_metrics(runs):
    rows = {r["run"]: r for r in list_runs(runs)}
    summary = json.loads((runs / "a" / "summary.json").read_text())
    assert rows["a"]["lr"] == 1e-3 and rows["b"]["lr"] == 1e-2 and rows["b"]["seed"] == 1
    assert rows["a"]["val_accuracy"] == summary["val_accuracy"]
    assert rows["a"]["test_accuracy"] == summary["test_accuracy"]
    assert rows["a"]["step"] == summary["steps"] and rows["a"]["steps"] == 4
    assert rows["failed"]["val_accuracy"] is None and rows["stopped"]["test_accuracy"] is None


def test_a_closed_form_run_is_told_apart_from_gradient_runs(runs, tmp_path):
    """Compared beside gradient runs, a closed-form run showed the lr, batch size and steps its config.yaml holds but
    it never used (lr 0.001, batch_size 16, steps 200 beside step 0), and nothing said it took no gradient step."""
    import yaml

    shutil.copytree(runs / "a", tmp_path / "cf")
    config = yaml.safe_load((tmp_path / "cf" / "config.yaml").read_text())
    (tmp_path / "cf" / "config.yaml").write_text(yaml.safe_dump({**config, "fit": "closed-form"}))
    shutil.copytree(runs / "a", tmp_path / "gradient")
    rows = {r["run"]: r for r in list_runs(tmp_path)}
    assert rows["gradient"]["fit"] == "gradient" and rows["gradient"]["lr"] == 1e-3 and rows["gradient"]["steps"] == 4
    assert rows["cf"]["fit"] == "closed-form"
    assert (rows["cf"]["lr"], rows["cf"]["batch_size"], rows["cf"]["steps"]) == (None, None, None)
    assert [r["run"] for r in select(list(rows.values()), ["fit=closed-form"])] == ["cf"]


def test_filters_and_sorting(runs):
    rows = list_runs(runs)
    assert [r["run"] for r in select(rows, ["state=finished"], sort="lr", descending=True)] == ["b", "a"]
    assert [r["run"] for r in select(rows, ["lr>=0.005"])] == ["b"]
    assert [r["run"] for r in select(rows, ["lr=0.001", "state!=stopped"])] == ["a", "failed", "interrupted"]
    for descending in (False, True):  # no value: last, whichever direction
        values = [r["val_accuracy"] for r in select(rows, sort="val_accuracy", descending=descending)]
        known = [v for v in values if v is not None]
        assert values == known + [None] * (len(values) - len(known)) and len(known) >= 3
        assert known == sorted(known, reverse=descending)
    with pytest.raises(ValueError, match="unknown field 'accuracy'"):
        select(rows, ["accuracy>1"])
    with pytest.raises(ValueError, match="is not a number"):
        select(rows, ["lr>=fast"])


def test_cli_table_csv_and_json(runs, capsys):
    assert main(["runs", str(runs), "--sort", "run"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:2] == ["run", "state"]
    assert "6 run(s): 2 finished, 1 diverged, 1 stopped, 1 failed, 1 interrupted" in out
    assert main(["runs", str(runs), "--csv", "--filter", "state=finished", "--columns", "run,lr,seed"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert sorted((r["run"], r["lr"], r["seed"]) for r in rows) == [("a", "0.001", "0"), ("b", "0.01", "1")]
    assert main(["runs", str(runs), "--json", "--filter", "state=diverged"]) == 0
    assert [r["run"] for r in json.loads(capsys.readouterr().out)] == ["sub/diverged"]
    assert main(["runs", str(runs), "--columns", "run,speed"]) == 2
    assert "unknown field(s) speed" in capsys.readouterr().err
    assert main(["runs", str(runs / "nothing")]) == 2


def test_a_damaged_run_is_listed_as_unreadable_and_the_others_as_ever(runs, tmp_path, capsys):
    """One truncated summary.json (or half-written metrics line) among many runs: fpt runs stopped at it with an
    error and listed none; now that run's row says unreadable, the reason goes to stderr, the rest are listed."""
    for name in ("a", "b", "summary", "metrics"):
        shutil.copytree(runs / "a", tmp_path / name)
    (tmp_path / "summary" / "summary.json").write_text('{"val_accuracy": 0.')  # killed mid-copy
    (tmp_path / "metrics" / "summary.json").unlink()
    with open(tmp_path / "metrics" / "metrics.jsonl", "a") as f:
        f.write('{"step": 9, "val_acc')
    states = {r["run"]: r["state"] for r in list_runs(tmp_path)}
    assert states == {"a": "finished", "b": "finished", "summary": "unreadable", "metrics": "unreadable"}
    capsys.readouterr()
    assert main(["runs", str(tmp_path), "--json"]) == 0
    out, err = capsys.readouterr()
    assert [(r["run"], r["state"]) for r in json.loads(out)][:2] == [("a", "finished"), ("b", "finished")]
    assert f"metrics: {tmp_path / 'metrics' / 'metrics.jsonl'}, line" in err
    assert f"summary: {tmp_path / 'summary' / 'summary.json'} is not valid JSON" in err
    # while a live run holds its lock, a half-written last line is its next row being appended: running, not damaged
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(tmp_path / "metrics")], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        row = {r["run"]: r for r in list_runs(tmp_path)}["metrics"]
        assert row["state"] == "running" and row["step"] == json.loads(
            (runs / "a" / "metrics.jsonl").read_text().splitlines()[-1])["step"]
    finally:
        holder.kill()
        holder.wait()


def test_a_reader_that_stops_early_ends_fpt_runs_quietly(runs, tmp_path):
    """fpt runs DIR --json | head -1: was a BrokenPipeError traceback and 'this is a bug in fpt'."""
    for i in range(300):  # a JSON listing larger than a pipe holds
        shutil.copytree(runs / "a", tmp_path / f"r{i:03d}", ignore=shutil.ignore_patterns("best", "checkpoint"))
    proc = subprocess.Popen([sys.executable, "-m", "fpt", "runs", str(tmp_path), "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout.readline().strip() == b"["
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert "Traceback" not in err and "bug in fpt" not in err

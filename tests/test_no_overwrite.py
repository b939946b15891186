"""What a user had is never gone, and a run's files never lie (issue "Step 15", found by a fuzzing user).

fpt deletes or replaces only files it wrote: ``fpt train --out`` on an ordinary folder holding files named
like a run's, ``fpt export --force`` over a folder that holds the run, ``fpt predict --out`` onto the run's
own files, the input or an existing file. Damaged or tampered run files (data.json, summary.json,
config.yaml, an export's config.json) are one-line errors, and a run's figures are valid JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fpt
from fpt.cli import main
from fpt.errors import CheckpointError

TRAIN = ["--init", "random", "--steps", "4", "--eval-every", "2", "--batch-size", "8", "--device", "cpu", "--quiet"]


def _table(path: Path, n: int = 48, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    rows = ["x1,x2,kind,label"]
    for i in range(n):
        rows.append(f"{rng.normal() + 2 * (i % 2):.3f},{rng.normal():.3f},{'pq'[i % 2]},{['low', 'high'][i % 2]}")
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.fixture(scope="module")
def trained(tiny_bert_dir, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("no-overwrite")
    data = _table(root / "d.csv")
    assert main(["train", "--data", str(data), "--body", tiny_bert_dir, *TRAIN, "--out", str(root / "run")]) == 0
    return root / "run"


@pytest.fixture
def run(trained, tmp_path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(trained, copy)
    return copy


def _one_line(capsys, command: str, *needles: str) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err and err.startswith(f"fpt {command}: error: "), err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------------------------------------- fpt train --out


@pytest.mark.parametrize("config", [None, "project: my notes\n", "partial"], ids=["no-config", "own-config",
                                                                                "partial-config"])
@pytest.mark.parametrize("resume", [False, True], ids=["out", "resume"])
def test_train_never_cleans_a_folder_it_did_not_write(config, resume, tiny_gpt2_dir, tmp_path, capsys):
    folder = tmp_path / "mine"
    (folder / "best").mkdir(parents=True)
    (folder / "best" / "photo.txt").write_text("keep me")
    (folder / "checkpoint").mkdir()
    (folder / "checkpoint" / "notes.txt").write_text("keep me too")
    (folder / "metrics.jsonl").write_text("my measurements\n")
    if config == "partial":  # a hand-written config that fpt would read, but not one fpt train wrote
        config = (f"body: {tiny_gpt2_dir}\ninit: random\nsteps: 4\neval_every: 2\nbatch_size: 8\ndevice: cpu\n")
    if config is not None:
        (folder / "config.yaml").write_text(config)
    before = _files(folder)
    args = ["--resume", str(folder), "--quiet"] if resume else ["--body", tiny_gpt2_dir, *TRAIN, "--out", str(folder)]
    assert main(["train", *args]) == 2
    err = _one_line(capsys, "train", str(folder))
    assert "not an fpt run" in err or "not a run directory" in err or "unknown field" in err, err
    assert _files(folder) == before


def test_a_run_of_fpt_stopped_before_its_first_checkpoint_is_still_started_afresh(tiny_gpt2_dir, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", "--body", tiny_gpt2_dir, *TRAIN, "--out", str(out)]) == 0
    shutil.rmtree(out / "checkpoint")
    (out / "summary.json").unlink()
    assert main(["train", "--body", tiny_gpt2_dir, *TRAIN, "--out", str(out)]) == 0
    assert "starting it afresh" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- fpt export


def test_export_force_never_deletes_the_run_or_a_folder_it_did_not_write(run, tmp_path, capsys):
    export = tmp_path / "export"
    assert main(["export", str(run), str(export)]) == 0
    capsys.readouterr()
    inner = export / "run"  # the run moved inside an export: replacing the export would delete it
    shutil.move(str(run), inner)
    before = _files(inner)
    assert main(["export", str(inner), str(export), "--force"]) == 2
    _one_line(capsys, "export", "contains the run directory", "choose another DIR")
    assert _files(inner) == before
    assert main(["export", str(inner), str(inner), "--force"]) == 2
    _one_line(capsys, "export", "inside its run directory")
    assert _files(inner) == before
    shutil.move(str(inner), run)
    (export / "notes.txt").write_text("mine")  # an export with a file fpt did not write beside its own
    assert main(["export", str(run), str(export), "--force"]) == 2
    _one_line(capsys, "export", "notes.txt", "fpt did not write")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "config.json").write_text("{}")
    assert main(["export", str(run), str(plain), "--force"]) == 2
    _one_line(capsys, "export", "choose a new or empty DIR")
    assert (plain / "config.json").read_text() == "{}"


def test_export_clears_debris_of_killed_exports_and_writes_shared_weights(run, tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    for name in (f".export.tmp-{dead.pid}", f".export.old-{dead.pid}", f".export.tmp-{os.getppid()}",
                 f".other.tmp-{dead.pid}"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "model.safetensors").write_bytes(b"x")
    assert main(["export", str(run), str(tmp_path / "export")]) == 0
    left = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("."))
    assert left == [f".export.tmp-{os.getppid()}", f".other.tmp-{dead.pid}"]  # a live writer's, another name's
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "export" / "fpt_model.safetensors").stat().st_mode & 0o777 == 0o666 & ~umask


def test_an_export_without_its_sha256_is_refused(run, tmp_path):
    export = tmp_path / "export"
    assert main(["export", str(run), str(export)]) == 0
    doc = json.loads((export / "config.json").read_text())
    del doc["weights"]["sha256"]
    (export / "config.json").write_text(json.dumps(doc))
    with pytest.raises(CheckpointError, match=r"config\.json: no weights\.sha256"):
        fpt.load(export)


# ---------------------------------------------------------------------------------------------- fpt predict


def test_predict_never_overwrites_the_run_the_input_or_a_file_without_force(run, tmp_path, capsys):
    data = _table(tmp_path / "new.csv", n=6, seed=3)
    summary = (run / "summary.json").read_bytes()
    assert main(["predict", str(run), str(data), "--out", str(run / "summary.json"), "--force"]) == 2
    _one_line(capsys, "predict", "summary.json", "inside", "choose an --out outside it")
    assert (run / "summary.json").read_bytes() == summary
    assert main(["predict", str(run), str(data), "--out", str(data), "--force"]) == 2
    _one_line(capsys, "predict", "the input file itself")
    assert data.read_text().startswith("x1,x2,kind,label")
    mine = tmp_path / "mine.csv"
    mine.write_text("my work\n")
    assert main(["predict", str(run), str(data), "--out", str(mine)]) == 2
    _one_line(capsys, "predict", "mine.csv exists", "--force")
    assert mine.read_text() == "my work\n"
    assert main(["predict", str(run), str(data), "--out", str(mine), "--force"]) == 0
    assert mine.read_text().startswith("prediction")


# ---------------------------------------------------------------------------------------------- run files


def _edit_data_json(run: Path, edit) -> None:
    doc = json.loads((run / "data.json").read_text())
    edit(next(f for f in doc["tokeniser"]["features"] if f["kind"] == "numeric"),
         next(f for f in doc["tokeniser"]["features"] if f["kind"] == "categorical"))
    (run / "data.json").write_text(json.dumps(doc))


def test_a_zero_std_in_data_json_predicts_numbers_not_nan(run, tmp_path):
    _edit_data_json(run, lambda num, cat: num.update(std=0))
    rows = fpt.load(run).predict_proba(_table(tmp_path / "new.csv", n=6, seed=3))
    assert np.isfinite(np.asarray(rows, dtype=float)).all()


@pytest.mark.parametrize("edit", [lambda num, cat: num.update(std="abc"), lambda num, cat: num.update(mean=None),
                                  lambda num, cat: cat.update(categories=5)], ids=["std-abc", "mean-null", "categories-5"])
def test_a_tampered_data_json_is_one_line(edit, run, tmp_path, capsys):
    _edit_data_json(run, edit)
    data = _table(tmp_path / "new.csv", n=6, seed=3)
    assert main(["predict", str(run), str(data), "--out", str(tmp_path / "p.csv")]) == 2
    _one_line(capsys, "predict", "data.json")


def test_huge_regression_targets_are_refused_and_summaries_are_strict_json(tiny_bert_dir, tmp_path, capsys):
    from fpt.rundir import summary_json

    rows = ["x,price"] + [f"{i},{(i + 1) * 1e298:g}" for i in range(40)]
    (tmp_path / "big.csv").write_text("\n".join(rows) + "\n")
    assert main(["train", "--data", str(tmp_path / "big.csv"), "--body", tiny_bert_dir, *TRAIN,
                 "--out", str(tmp_path / "run")]) == 2
    _one_line(capsys, "train", "big.csv", "'price'", "rescale")
    text = summary_json({"test_r2": float("inf"), "eval": {"loss": float("nan")}, "steps": 3})
    assert json.loads(text) == {"test_r2": None, "eval": {"loss": None}, "steps": 3}


def test_eval_reads_the_data_it_trained_on_from_any_directory(tiny_bert_dir, tmp_path, monkeypatch, capsys):
    first, other = tmp_path / "first", tmp_path / "other"
    first.mkdir()
    other.mkdir()
    _table(first / "d.csv", seed=0)
    (other / "d.csv").write_text("x1,x2,kind,label\n" + "".join(f"{i},{i},p,{['a', 'b', 'c'][i % 3]}\n" for i in range(30)))
    monkeypatch.chdir(first)
    assert main(["train", "--data", "d.csv", "--body", tiny_bert_dir, *TRAIN, "--out", str(tmp_path / "run")]) == 0
    assert fpt.Run(tmp_path / "run").config().data == str(first / "d.csv")
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "run")]) == 0
    here = capsys.readouterr().out
    monkeypatch.chdir(other)
    assert main(["eval", str(tmp_path / "run")]) == 0
    assert capsys.readouterr().out == here
    config = tmp_path / "run" / "config.yaml"  # an old run: its relative path, missing here
    config.write_text(config.read_text().replace(str(first / "d.csv"), "gone.csv"))
    assert main(["eval", str(tmp_path / "run")]) == 2
    _one_line(capsys, "eval", "gone.csv", "relative to the current directory", str(other))


@pytest.mark.parametrize("damage", ["summary-list", "python-tag"])
@pytest.mark.parametrize("command", ["runs", "report", "export", "plot"])
def test_damaged_run_files_are_one_line_for_every_reader(command, damage, run, tmp_path, capsys):
    if damage == "summary-list":
        (run / "summary.json").write_text("[1, 2]")
        if command == "plot":
            pytest.skip("fpt plot reads metrics.jsonl and config.yaml only")
    else:
        (run / "config.yaml").write_text("!!python/object/apply:os.system ['true']\n")
    args = {"runs": [str(run)], "report": [str(run), "--attention", "never"], "export": [str(run), str(tmp_path / "e")],
            "plot": [str(run), "--out", str(tmp_path / "c.png")]}[command]
    assert main([command, *args]) == 2
    _one_line(capsys, command, "summary.json" if damage == "summary-list" else "config.yaml")

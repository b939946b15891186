"""fpt attention / weights / plot / report, run in-process through the entry point."""

import csv
import json
import sys
from pathlib import Path

import pytest

from fpt.cli import main


@pytest.fixture(scope="module")
def run_dir(tiny_gpt2_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cli-analysis") / "xor"
    assert main(["train", "--body", tiny_gpt2_dir, "--init", "random", "--steps", "6", "--eval-every", "3",
                 "--batch-size", "4", "task.eval_size=32", "--device", "cpu", "--out", str(out), "--quiet"]) == 0
    return out


def test_attention_command(run_dir, capsys):
    assert main(["attention", str(run_dir), "--layer", "1", "--examples", "4", "--which", "best"]) == 0
    out = capsys.readouterr().out
    assert "uniform attention would give" in out and "per head:" in out
    folder = run_dir / "attention" / "best-layer1"
    score = json.loads((folder / "score.json").read_text())
    assert score["examples"] == 4 and score["which"] == "best" and score["headline"]["name"] == "xor_inputs"
    assert all((folder / f).is_file() for f in ("heads.png", "mean.png", "example0.png", "attention.npy"))


def test_attention_errors_are_one_line(run_dir, capsys):
    assert main(["attention", str(run_dir), "--layer", "5"]) == 2
    assert "this model runs blocks 0..1" in capsys.readouterr().err
    assert main(["attention", "/nonexistent/run"]) == 2
    assert "is not a run directory" in capsys.readouterr().err


def test_weights_command(tiny_gpt2_dir, tmp_path, capsys):
    assert main(["weights", "--body", tiny_gpt2_dir, "--init", "random", "--out", str(tmp_path)]) == 0
    rows = list(csv.DictReader(open(tmp_path / "weights.csv")))
    assert {(r["layer"], r["group"], r["kind"]) for r in rows} >= {("0", "attention", "weight"), ("1", "feedforward", "bias")}
    assert (tmp_path / "weights.png").is_file() and "weight std" in capsys.readouterr().out


def test_plot_command(run_dir, tmp_path, capsys):
    out = tmp_path / "curves.png"
    assert main(["plot", str(run_dir), str(run_dir), "--out", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG" and "curves of 2 run(s)" in capsys.readouterr().out


def test_plot_tensorboard_missing(run_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)
    assert main(["plot", str(run_dir), "--out", str(tmp_path / "c.png"), "--tensorboard", str(tmp_path / "tb")]) == 2
    assert "pip install tensorboard" in capsys.readouterr().err


def test_report_command(run_dir, capsys):
    assert main(["report", str(run_dir), "--attention", "existing"]) == 0
    assert "self-contained" in capsys.readouterr().out
    page = (run_dir / "report.html").read_text()
    assert page.count('<img src="data:image/png;base64,') >= 1 and "<table>" in page
    assert "fpt train --body" in page  # the command that reproduces the run

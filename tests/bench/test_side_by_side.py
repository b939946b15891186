"""bench/side_by_side.py on two synthetic run stores: cells matched across precision/device, figures and flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from bench_scripts import load

ROOT = Path(__file__).resolve().parents[2]


bench = load("side_by_side")


def _run(root: Path, name: str, seed: int, test: float, *, precision="auto", device="auto", lr=None,
         collapsed=False) -> None:
    run = root / name
    run.mkdir(parents=True)
    config = {"task": "digits", "task_options": {"tokens": "patch"}, "body": "minilm", "init": "pretrained",
              "freeze": "paper", "seed": seed, "precision": precision, "device": device, "lr": lr}
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    (run / "summary.json").write_text(json.dumps({"test_accuracy": test, "test_set": "test", "environment": {},
                                                  "health": {"collapsed": collapsed, "at_chance": False}}))


def test_cells_match_across_precision_and_device_and_are_compared_on_their_seeds(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    for seed, (fa, fb) in enumerate([(0.90, 0.91), (0.92, 0.92), (0.94, 0.90)]):
        _run(a, f"a{seed}", seed, fa)
        _run(b, f"b{seed}", seed, fb, precision="bf16", device="cuda")
    _run(a, "lr", 0, 0.5, lr=1e-4)  # another cell, on one side only: not compared
    _run(b, "c0", 0, 0.1, precision="bf16", lr=3e-3, collapsed=True)
    _run(a, "c0", 0, 0.1, lr=3e-3)
    out = tmp_path / "out" / "sbs.md"
    assert bench.main(["--a", "fp32", str(a), "--b", "bf16", str(b), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.with_suffix(".jsonl").read_text().splitlines()]
    assert len(rows) == 2
    main = next(r for r in rows if r["a_n"] == 3)
    assert main["a_mean"] == pytest.approx(92.0) and main["b_mean"] == pytest.approx(91.0)
    assert main["a_std"] == pytest.approx(2.0) and main["difference"] == pytest.approx(-1.0)
    assert main["within_spread"] is True and main["flags"] == []
    assert [p["seed"] for p in main["paired"]] == [0, 1, 2]
    flagged = next(r for r in rows if r["a_n"] == 1)
    assert flagged["flags"] == ["collapsed"] and flagged["within_spread"] is None and "lr=0.003" in flagged["cell"]
    text = out.read_text()
    assert "| digits-patch minilm pretrained freeze=paper | 92.00 ± 2.00 (n=3) | 91.00 ± 1.00 (n=3) | -1.00 |" in text
    assert "within the seeds' spread: 1 of 1" in text
    assert "3 pairs" in text and "of them equal" in text  # the collapsed pair is left out of the same-seed figures


def test_stores_with_no_common_cell_are_refused(tmp_path, capsys):
    _run(tmp_path / "a", "x", 0, 0.5)
    _run(tmp_path / "b", "y", 0, 0.5, lr=1e-3)
    assert bench.main(["--a", "A", str(tmp_path / "a"), "--b", "B", str(tmp_path / "b"), "--out",
                       str(tmp_path / "o.md")]) == 2
    assert "no cell has finished runs in both" in capsys.readouterr().err
    assert bench.main(["--a", "A", str(tmp_path / "nope"), "--b", "B", str(tmp_path / "b"), "--out",
                       str(tmp_path / "o.md")]) == 2

"""bench/own_data.py on one tiny bundled set with a tiny body and a few steps: rows, table, resuming."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load():
    name = "bench_own_data"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / "own_data.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


bench = _load()


def test_finds_the_bundled_sets_and_sklearn_ones(tmp_path):
    pytest.importorskip("aeon")
    known = bench.datasets(tmp_path)
    assert {"GunPoint", "ItalyPowerDemand", "JapaneseVowels", "BasicMotions", "wine", "diabetes"} <= set(known)
    assert not any(name.endswith("_eq") for name in known)


def test_one_tiny_set_end_to_end_and_resumed(tmp_path, tiny_bert_dir, capsys):
    out = tmp_path / "bench"
    argv = ["--out", str(out), "--datasets", "iris", "--seeds", "0,1", "--body", tiny_bert_dir, "--device", "cpu",
            "--steps", "2", "--eval-every", "1"]
    assert bench.main(argv) == 0
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    methods = {(r["method"], r["seed"]) for r in rows}
    assert {("fpt", 0), ("fpt", 1), ("logistic regression", 0), ("gradient boosting", 0)} <= methods
    assert ("logistic regression", 1) not in methods  # the classic models do not depend on fpt's seed
    text = (out / "results.md").read_text()
    assert "| iris | accuracy |" in text and " ± " in text
    assert "mean rank (1 sets with logistic regression / gradient boosting)" in text
    assert bench.main(argv) == 0  # resumed: nothing is run again
    assert len((out / "results.jsonl").read_text().splitlines()) == len(rows)

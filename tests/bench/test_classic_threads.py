"""bench/classic_threads.py writes the figures behind fpt.baselines' one-thread rule: a file that reads back."""

from __future__ import annotations

import json
import sys

from bench_scripts import load


def test_a_small_sitting_writes_its_figures(tmp_path, monkeypatch, capsys):
    bench = load("classic_threads")
    out = tmp_path / "t.json"
    monkeypatch.setattr(sys, "argv", ["classic_threads.py", "--sizes", "60x3", "--repeats", "1", "--busy", "0",
                                      "--out", str(out)])
    bench.main()
    saved = json.loads(out.read_text())
    (row,) = saved["results"]
    assert (row["rows"], row["features"], row["busy_processes"]) == (60, 3, 0)
    assert row["median_s_1_threads"] > 0 and len(row["all_s"]["1"]) == 1 and saved["processor"]
    assert "ratio_all_cores_over_one" in capsys.readouterr().out

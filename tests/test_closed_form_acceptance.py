"""The closed-form fit on real data with the default MiniLM body, against what a user would otherwise run on the
same split (issue 40's acceptance): GunPoint (aeon's copy of the UCR archive, its TRAIN/TEST split) at or above
1-NN Euclidean. Slow: every example through MiniLM three times."""

from __future__ import annotations

import json

import pytest

from bench_scripts import load
from fpt.cli import main


def _run(data, out, *extra):
    assert main(["train", "--data", str(data), "--fit", "closed-form", "--baselines", "fast", "--device", "cpu",
                 "--out", str(out), "--quiet", *extra]) == 0
    return json.loads((out / "summary.json").read_text())


@pytest.mark.slow
def test_gunpoint_at_or_above_nearest_neighbour_on_the_archive_split(tmp_path):
    pytest.importorskip("aeon", reason="the UCR files come from aeon: pip install -e '.[bench]'")
    load("user_data_files").write_ucr(tmp_path, names=("GunPoint",))
    summary = _run(tmp_path / "GunPoint" / "GunPoint_TRAIN.ts", tmp_path / "run")
    nearest = summary["baselines_models"]["models"]["1-NN Euclidean"]
    # the models learn from the whole TRAIN file too (refit), as the archive's published 1-NN (0.913) does
    assert summary["task_info"]["split_sizes"]["test"] == 150 and nearest["protocol"] == "refit"
    assert summary["test_accuracy"] >= nearest["test"], (summary["test_accuracy"], nearest)

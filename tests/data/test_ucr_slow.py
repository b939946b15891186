"""End to end on a real UCR dataset: ItalyPowerDemand through ``fpt train --data`` with the default MiniLM body.

Needs the ``[bench]`` extra (aeon ships the UCR files it reads offline); skipped without it. The files
are written by ``bench/user_data_files.py``, as for the committed run in ``docs/results/data/``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench_scripts import load
from fpt.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _files_module():  # noqa: ANN202
    return load("user_data_files")


@pytest.mark.slow
def test_italy_power_demand_reaches_90_percent_test_accuracy(tmp_path, capsys):
    pytest.importorskip("aeon", reason="the UCR files come from aeon: pip install -e '.[bench]'")
    _files_module().write_ucr(tmp_path, names=("ItalyPowerDemand",))
    data = tmp_path / "ItalyPowerDemand" / "ItalyPowerDemand_TRAIN.ts"
    out = tmp_path / "run"
    # the committed run's command (docs/results/data/italy-power-demand: windows of 4 points every point, lr 3e-4,
    # 100 steps, chosen on validation; its test accuracy is 0.921) but for 30 steps: one thread in fp32 (as under
    # pytest-xdist), test accuracy 0.950 / 0.951 / 0.953 for seeds 0 / 1 / 2 (1,029 test series: 5 points are 51 of
    # them), where 40 steps gave 0.955 / 0.961 / 0.959, 60 steps 0.951 / 0.960 / 0.960 and 100 steps 0.950 (seed 0);
    # 25 steps 0.948 / 0.959 / 0.956 and 20 steps, on the edge, 0.903 / 0.951 / 0.951; each step is about 0.25 s of
    # CPU
    assert main(["train", "--data", str(data), "--series-patch", "4", "--series-stride", "1", "--lr", "0.0003",
                 "--steps", "30", "--eval-every", "30", "--device", "cpu", "--out", str(out), "--quiet"]) == 0, \
        capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["task_info"]["split_sizes"] == {"train": 54, "val": 13, "test": 1029}
    assert summary["test_accuracy"] >= 0.90, summary

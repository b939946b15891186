"""Every kind of own data through ``fpt train --data --fit closed-form``: tables (classification and regression),
symbol sequences, series (multivariate, univariate, unequal lengths) and image folders; each run's saved model
scores its test split as the run reported."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tests.test_predictor import _images, _sequences, _table, _ts

import fpt
from fpt.cli import main

FLAGS = ["--init", "random", "--fit", "closed-form", "--cf-members", "2", "--device", "cpu", "--quiet",
         "--baselines", "none"]


def _unequal_ts(path: Path, n: int, seed: int) -> None:
    """Two channels, 6-20 points each series, class in the first channel's level."""
    rng = np.random.default_rng(seed)
    lines = ["@problemName ragged", "@timeStamps false", "@univariate false", "@equalLength false",
             "@classLabel true a b", "@data"]
    for i in range(n):
        length = int(rng.integers(6, 21))
        dims = [",".join(f"{v:.3f}" for v in rng.normal(size=length) + 2 * (i % 2) * (c == 0)) for c in range(2)]
        lines.append(":".join(dims) + f":{'ab'[i % 2]}")
    path.write_text("\n".join(lines) + "\n")


def series_run_as_reported(tmp_path: Path, body: str, flags: list[str]) -> dict:
    """``fpt train`` on ragged .ts TRAIN/TEST files written here, into tmp_path / "run"; checks the saved run scores its
    test file as it reported, and returns its config.yaml."""
    import json

    import yaml

    import fpt
    from fpt.cli import main

    _unequal_ts(tmp_path / "r_TRAIN.ts", 30, 0)
    _unequal_ts(tmp_path / "r_TEST.ts", 12, 1)
    out = tmp_path / "run"
    assert main(["train", "--data", str(tmp_path / "r_TRAIN.ts"), "--body", body, *flags, "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    score = fpt.load(out).score(str(tmp_path / "r_TEST.ts"))["accuracy"]
    assert score == pytest.approx(summary["test_accuracy"], abs=1e-6)
    return yaml.safe_load((out / "config.yaml").read_text())


def _ucr_tsv(path: Path, n: int, seed: int) -> None:
    """UCR's univariate .tsv: the label, then the points."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        series = np.sin(np.linspace(0, 3 + 3 * (i % 2), 24)) + 0.3 * rng.normal(size=24)
        rows.append("\t".join([str(1 + i % 2), *(f"{v:.4f}" for v in series)]))
    path.write_text("\n".join(rows) + "\n")


KINDS = {
    "table": (lambda root: (_table(root / "train.csv", 60, 0), _table(root / "test.csv", 30, 1)), ".",
              "test.csv", []),
    "regression": (lambda root: (_table(root / "train.csv", 60, 0, True), _table(root / "test.csv", 30, 1, True)),
                   ".", "test.csv", ["--target", "price"]),
    "sequence": (lambda root: (_sequences(root / "train.csv", 60, 0), _sequences(root / "test.csv", 30, 1)),
                 ".", "test.csv", []),
    "multivariate series": (lambda root: (_ts(root / "toy_TRAIN.ts", 30, 0), _ts(root / "toy_TEST.ts", 12, 1)),
                            "toy_TRAIN.ts", "toy_TEST.ts", []),
    "unequal series": (lambda root: (_unequal_ts(root / "r_TRAIN.ts", 30, 0), _unequal_ts(root / "r_TEST.ts", 12, 1)),
                       "r_TRAIN.ts", "r_TEST.ts", []),
    "univariate series": (lambda root: (_ucr_tsv(root / "u_TRAIN.tsv", 30, 0), _ucr_tsv(root / "u_TEST.tsv", 12, 1)),
                          "u_TRAIN.tsv", "u_TEST.tsv", []),
    "images": (lambda root: (_images(root, "train", 12, 0), _images(root, "test", 6, 1)), ".", "test",
               ["--image-size", "8", "--patch-size", "4"]),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_kind_fits_in_closed_form_and_predicts_as_it_reported(kind, tmp_path, tiny_bert_dir):
    make, data, test, extra = KINDS[kind]
    root = tmp_path / "data"
    root.mkdir()
    make(root)
    out = tmp_path / "run"
    assert main(["train", "--data", str(root / data), "--body", tiny_bert_dir, *FLAGS, *extra, "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    record = summary["closed_form"]
    assert summary["stopped"] == "closed-form" and record["fitted_sets"] == ["train", "val"]
    # symbols: N(0, 0.02) embedding tables (docs/results/own-data/closed-form/seqinit), recorded as every default is
    wanted = "gpt2" if kind == "sequence" else "official"
    assert f"input_init: {wanted}\n" in (out / "config.yaml").read_text()
    metric = "r2" if kind == "regression" else "accuracy"
    scored = fpt.load(out).score(str(root / test))
    assert scored[metric] == pytest.approx(summary[f"test_{metric}"], abs=1e-6)
    if kind == "regression":  # a linear target: the tokens beside the features give the head what ridge has
        assert summary["test_r2"] > 0.95
    else:
        assert summary["test_accuracy"] >= 0.8

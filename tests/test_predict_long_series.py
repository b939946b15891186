"""fpt predict on series longer than any training series (JapaneseVowels' own TEST file): cut to the trained
length as training cut its own test split, with a warning and a note in the output."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import fpt
from fpt.cli import main
from fpt.data.inputs import CutInputWarning


def _ts(path: Path, lengths: list[int], seed: int) -> None:
    """Unequal-length series (as JapaneseVowels), two channels, class = the sign of channel 0's mean."""
    rng = np.random.default_rng(seed)
    lines = ["@problemName toy", "@timeStamps false", "@univariate false", "@equalLength false",
             "@classLabel true a b", "@data"]
    for i, length in enumerate(lengths):
        dims = [",".join(f"{v:.3f}" for v in rng.normal(size=length) + (i % 2) * (c == 0)) for c in range(2)]
        lines.append(":".join(dims) + f":{'ab'[i % 2]}")
    path.write_text("\n".join(lines) + "\n")


def test_a_series_longer_than_any_training_one_is_cut_with_a_warning(tiny_gpt2_dir, tmp_path, capsys):
    _ts(tmp_path / "toy_TRAIN.ts", [6, 8, 10, 12] * 6, 0)
    _ts(tmp_path / "toy_TEST.ts", [8, 12, 20, 9], 1)  # 20 points: more than the longest training series (12)
    exp = fpt.build(data=str(tmp_path / "toy_TRAIN.ts"), body=tiny_gpt2_dir, init="random", steps=2, eval_every=2,
                    batch_size=4, device="cpu", series_patch=2)
    fpt.fit(exp, out=tmp_path / "run", progress=False)

    model = fpt.load(tmp_path / "run")
    with pytest.warns(CutInputWarning, match=r"1 of 4 series longer than the model reads \(12 points"):
        result = model.predict_file(tmp_path / "toy_TEST.ts")
    assert result.rows == 4 and "cut to their first 12 points" in result.notes[0]
    # the same tokens as training made of the longer series: its first windows
    with pytest.warns(CutInputWarning, match="1 of 1 series"):
        x, lengths, _ = model.tokens(np.random.default_rng(2).normal(size=(1, 2, 30)).astype(np.float32))
    assert int(lengths[0]) == x.shape[1]

    assert main(["predict", str(tmp_path / "run"), str(tmp_path / "toy_TEST.ts"), "--out",
                 str(tmp_path / "p.csv")]) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out.splitlines()[0])
    assert summary["rows"] == 4 and "accuracy" in summary and "cut to their first 12 points" in summary["notes"][0]
    assert err.count("\n") == 1 and err.startswith("fpt predict: warning: ") and "Traceback" not in err

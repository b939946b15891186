"""Data whose examples make more tokens than the body has positions: one line naming the data's own fix."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fpt
from fpt.bodies import TooManyPositions
from fpt.cli import main
from fpt.errors import ConfigError


def test_a_table_wider_than_the_body_names_drop_columns(tmp_path, tiny_bert_dir, capsys):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(30, 130)), columns=[f"f{i}" for i in range(130)])  # 130 > 128 positions
    frame["label"] = np.arange(30) % 2
    frame.to_csv(tmp_path / "t.csv", index=False)
    rc = main(["train", "--data", str(tmp_path / "t.csv"), "--body", tiny_bert_dir, "--init", "random",
               "--fit", "closed-form", "--out", str(tmp_path / "run"), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert rc == 2 and err.startswith("fpt train: error: ") and "t.csv: its examples make 130 tokens" in err
    assert "reads at most 128 positions" in err and "one token per feature column" in err and "--drop-columns" in err
    assert "task.max_len" not in err and not (tmp_path / "run" / "summary.json").exists()
    # leaving three columns out makes it fit
    exp = fpt.build(data=str(tmp_path / "t.csv"), body=tiny_bert_dir, init="random", fit="closed-form",
                    drop_columns="f0,f1,f2", baselines="none")
    assert exp.data.spec.seq_len == 127


# fpt.build's keyword arguments, as a Python caller sets them (the command line's flags: test_surface_words.py)
@pytest.mark.parametrize(("option", "words"), [({"image_size": 48, "patch_size": 4}, "raise patch_size or lower image_size"),
                                               ({"series_patch": 1}, "raise series_patch")])
def test_images_and_series_name_their_own_option(tmp_path, tiny_bert_dir, option, words):
    rng = np.random.default_rng(0)
    if "image_size" in option:
        np.savez(tmp_path / "d.npz", X=rng.integers(0, 255, size=(20, 8, 8), dtype=np.uint8), y=np.arange(20) % 2)
    else:
        np.savez(tmp_path / "d.npz", X=rng.normal(size=(20, 1, 200)), y=np.arange(20) % 2)
    with pytest.raises(ConfigError) as err:
        fpt.build(data=str(tmp_path / "d.npz"), body=tiny_bert_dir, init="random", fit="closed-form",
                  baselines="none", **option)
    assert "d.npz: its examples make" in str(err.value) and words in str(err.value)


def test_a_paper_task_keeps_the_body_error(tiny_bert_dir):
    with pytest.raises(TooManyPositions, match="task.max_len"):
        fpt.build(task="bit-memory", task_options={"n_bits": 2000, "token_dim": 10}, body=tiny_bert_dir,
                  init="random")

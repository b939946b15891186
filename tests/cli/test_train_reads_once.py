"""fpt train reads --data before torch's import (to refuse a mistyped --target or a bad cell in a second, not four)
and the run's build takes that read: the file is parsed once, not twice."""

import numpy as np

import fpt.data
from fpt.cli import main


def test_fpt_train_parses_its_table_once(tmp_path, tiny_bert_dir, monkeypatch, capsys):
    rng = np.random.default_rng(0)
    csv = tmp_path / "d.csv"
    csv.write_text("x,z,y\n" + "".join(f"{rng.normal():.3f},{rng.normal():.3f},{i % 2}\n" for i in range(40)))
    reads: list[str] = []
    real = fpt.data._read
    monkeypatch.setattr(fpt.data, "_read", lambda path, *rest: reads.append(str(path)) or real(path, *rest))
    argv = ["train", "--data", str(csv), "--target", "y", "--body", tiny_bert_dir, "--init", "random",
            "--device", "cpu", "--fit", "gradient", "--steps", "2", "--baselines", "none", "--quiet",
            "--out", str(tmp_path / "r")]
    assert main(argv) == 0, capsys.readouterr().err
    assert reads == [str(csv)]
    assert (tmp_path / "r" / "summary.json").is_file()

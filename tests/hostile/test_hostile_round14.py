"""Round 14 of the hostile-input cases: what the last round found but left (an empty image file, an estimator's
fixes and row lists worded for its caller, a CSV's named index, a feature column with no value). Each case failed
before its fix (the commit that added it says how)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from hostile_helpers import FAST, one_line


def _pngs(root: Path, n: int = 6) -> Path:
    from PIL import Image

    rng = np.random.default_rng(0)
    for c in "ab":
        (root / c).mkdir(parents=True)
        for i in range(n):
            Image.fromarray((rng.random((8, 8, 3)) * 255).astype(np.uint8)).save(root / c / f"{i}.png")
    return root


def test_an_empty_image_file_is_refused_as_empty(tiny_bert_dir, tmp_path, capsys):
    """A zero-byte image in an image folder was refused quoting Pillow, 'not a readable image (UnidentifiedImageError:
    cannot identify image file ...)': the file is empty, and that is what to say, at training and at predict."""
    import fpt
    from fpt.cli import main
    from fpt.errors import DataError

    train = _pngs(tmp_path / "train")
    empty = train / "a" / "empty.png"
    empty.write_bytes(b"")
    said = (f"{empty}: the file is empty (0 bytes), not an image (a copy or download cut short?); copy the image "
            "again, or delete the file")
    with pytest.raises(DataError) as refused:
        fpt.build(data=str(train), body=tiny_bert_dir, image_size=8, patch_size=4, **FAST)
    assert str(refused.value) == said
    empty.unlink()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fpt.fit(fpt.build(data=str(train), body=tiny_bert_dir, image_size=8, patch_size=4, **FAST),
                out=tmp_path / "run", progress=False)
    new = _pngs(tmp_path / "new", n=1)
    gone = new / "b" / "0.png"
    gone.write_bytes(b"")
    with pytest.raises(DataError) as refused:
        fpt.load(tmp_path / "run").predict(str(new))
    assert str(refused.value) == said.replace(str(empty), str(gone))
    assert main(["predict", str(tmp_path / "run"), str(new), "--out", str(tmp_path / "p.csv")]) == 2
    one_line(capsys, "predict", f"{gone}: the file is empty (0 bytes)")
    assert not (tmp_path / "p.csv").exists()

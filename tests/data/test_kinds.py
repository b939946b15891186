"""One contract per declared data kind: every format of fpt.data.formats and every modality of
fpt.data.modalities keeps the promises the rest of fpt relies on. A new entry is checked here; an entry
without an example below fails until one is written."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from fpt import baselines
from fpt.config import RunConfig
from fpt.data import detect, load
from fpt.data.formats import FORMATS, SUFFIXES, file_kinds, folder_kinds
from fpt.data.modalities import MODALITIES, PADDED
from fpt.data.tokenisers import KINDS, from_json
from fpt.errors import DataError
from fpt.tasks.user_data import DataOptions


def _table(path: Path) -> Path:
    rows = ["a,b,label"] + [f"{i % 5},{'xyz'[i % 3]},{'no' if i % 2 else 'yes'}" for i in range(30)]
    path.write_text("\n".join(rows) + "\n")
    return path


def _series(path: Path) -> Path:
    (path / "Toy_TRAIN.ts").write_text("@problemName toy\n@univariate true\n@equalLength true\n@classLabel true a b\n"
                                       "@data\n" + "".join(f"{i},{i + 1},{i + 2},{i % 3}:{'ab'[i % 2]}\n" for i in range(20)))
    return path / "Toy_TRAIN.ts"


def _npz(path: Path) -> Path:
    rng = np.random.default_rng(0)
    np.savez(path / "x.npz", X=rng.normal(size=(20, 3)), y=np.arange(20) % 2)
    return path / "x.npz"


def _images(path: Path) -> Path:
    from PIL import Image

    for c, v in (("cat", 40), ("dog", 200)):
        for i in range(4):
            (path / "img" / c).mkdir(parents=True, exist_ok=True)
            Image.fromarray(np.full((6, 6), v + i, dtype=np.uint8)).save(path / "img" / c / f"{i}.png")
    return path / "img"


def _hub(path: Path) -> Path:
    import datasets

    ds = datasets.Dataset.from_dict({"f": [float(i) for i in range(20)], "label": [i % 2 for i in range(20)]})
    datasets.DatasetDict({"train": ds}).save_to_disk(str(path / "saved"))
    return path / "saved"


# One small example of each format, written in its real layout: (writer, the modality it reads as).
EXAMPLES = {"tables": (_table, "tabular"), "timeseries": (_series, "timeseries"), "npz": (_npz, "tabular"),
            "images": (_images, "image"), "hub": (_hub, "tabular")}


def test_every_format_has_an_example_here():
    assert sorted(EXAMPLES) == sorted(FORMATS)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_each_format_claims_and_reads_its_own_layout(name, tmp_path):
    fmt = FORMATS[name]
    write, modality = EXAMPLES[name]
    path = write(tmp_path) if name != "tables" else write(tmp_path / "t.csv")
    assert detect(str(path)) == name
    raw = load(str(path), image_size=8)
    assert raw.modality == modality and raw.modality in MODALITIES
    assert fmt.modality in (None, raw.modality)
    assert all(s.startswith(".") and s in SUFFIXES for s in fmt.suffixes)
    assert fmt.files or fmt.folder, "an entry the texts can name"
    assert (fmt.files is None or fmt.files in file_kinds()) and (fmt.folder is None or fmt.folder in folder_kinds())
    if fmt.target is not None:  # the layout fixes the target: --target may only say its name
        assert load(str(path), target=fmt.target_name, image_size=8).targets == raw.targets
        with pytest.raises(DataError, match="drop --target"):
            load(str(path), target="some_column", image_size=8)
    if fmt.modality is not None:
        other = next(m for m in MODALITIES if m != fmt.modality)
        with pytest.raises(DataError, match=f"holds {fmt.modality} data"):
            load(str(path), modality=other, image_size=8)


def _inputs(name: str, n: int = 12) -> object:
    rng = np.random.default_rng(0)
    if name == "tabular":
        return {"a": rng.normal(size=n), "b": np.array(["u", "v", None] * (n // 3), dtype=object)}
    if name == "image":
        return [rng.integers(0, 255, (8, 8, 3), dtype=np.uint8) for _ in range(n)]
    if name == "timeseries":
        return [rng.normal(size=(2, 5 + i % 4)) for i in range(n)]
    return {"text": np.array(["abca", "bcd", "a", "ddcb"] * (n // 4), dtype=object)}


def test_every_modality_has_a_tokeniser_and_inputs_here():
    assert sorted(MODALITIES) == sorted(KINDS)
    for name in MODALITIES:
        _inputs(name)


@pytest.mark.parametrize("name", sorted(MODALITIES))
def test_each_modality_tokenises_saves_and_reads_as_declared(name):
    entry = MODALITIES[name]
    options = DataOptions(**{**{f.name: getattr(RunConfig(), f.name) for f in dataclasses.fields(DataOptions)},
                             "data": "x", "image_size": 8, "patch_size": 4, "series_patch": 2})
    x = _inputs(name)
    tok = entry.tokeniser.fit_from(x, options, {"image_channels": "rgb"})
    assert tok.kind == name and isinstance(tok, KINDS[name])
    tokens, lengths = tok(x)
    assert (lengths is not None) == entry.pads == (name in PADDED)
    saved = tok.to_json()
    again, _ = from_json(saved)(x)  # data.json alone tokenises new inputs the same way
    assert np.array_equal(again.numpy(), tokens.numpy())
    with pytest.raises(DataError, match="kind"):
        from_json({**saved, "kind": "no-such-kind"})
    assert set(entry.options) <= {f.name for f in dataclasses.fields(RunConfig)}
    assert all(key is None or key in saved for key in entry.options.values())
    vocab = int(tokens.max()) + 1 if not tokens.is_floating_point() else 0
    features = entry.features(tokens.numpy(), saved, vocab)
    assert features.shape[0] == len(tokens) and np.isfinite(features).all()
    assert entry.baselines and set(entry.baselines) <= set(baselines.MODELS)
    assert entry.predict_input
    described = entry.describe(tok, ["text"] if name == "sequence" else [], {"train_lengths": "5..9"})
    assert described and json.loads(json.dumps(described)) == described  # JSON, as the model card writes it
    assert {"modality", "targets", "npz_X_shape"}.isdisjoint(described)  # Schema.describe's own keys

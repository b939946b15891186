"""One contract per declared data kind: every format of fpt.data.formats and every modality of
fpt.data.modalities keeps the promises the rest of fpt relies on, for training (--data) and for new
inputs (fpt predict). A new entry is checked here; an entry without an example below fails until one
is written."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from fpt import baselines
from fpt.config import RunConfig
from fpt.data import detect, load
from fpt.data.formats import FORMATS, SUFFIXES, file_kinds, folder_kinds, for_inputs, predict_kinds, takes
from fpt.data.inputs import Schema, read_inputs
from fpt.data.modalities import MODALITIES, PADDED, from_json
from fpt.errors import DataError, SchemaError
from fpt.tasks.user_data import DataOptions, fit_preprocessing


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


def _image_table(path: Path) -> Path:
    from PIL import Image

    (path / "kaggle" / "train").mkdir(parents=True)
    for i in range(8):
        Image.fromarray(np.full((6, 6), 40 + 150 * (i % 2) + i, dtype=np.uint8)).save(path / "kaggle" / "train" / f"{i}.png")
    (path / "kaggle" / "labels.csv").write_text("id,label\n" + "".join(f"{i},{'cd'[i % 2]}\n" for i in range(8)))
    return path / "kaggle"


def _hub(path: Path) -> Path:
    import datasets

    ds = datasets.Dataset.from_dict({"f": [float(i) for i in range(20)], "label": [i % 2 for i in range(20)]})
    datasets.DatasetDict({"train": ds}).save_to_disk(str(path / "saved"))
    return path / "saved"


def _texts(path: Path) -> Path:
    path.write_text("seq,label\n" + "".join(f"{'acgt'[i % 4] * (1 + i % 3)}gat,{'xy'[i % 2]}\n" for i in range(24)))
    return path


# One small example of each format, written in its real layout: (writer, the modality it reads as).
EXAMPLES = {"tables": (_table, "tabular"), "timeseries": (_series, "timeseries"), "npz": (_npz, "tabular"),
            "images": (_images, "image"), "image-table": (_image_table, "image"), "hub": (_hub, "tabular")}
# Files that train a model and are then given to it again as new inputs (fpt predict): (format, modality, writer),
# every format fpt predict reads and every modality among them.
PREDICTED = [(name, modality, write) for name, (write, modality) in EXAMPLES.items() if FORMATS[name].predict] + \
    [("tables", "sequence", _texts)]


def _written(write, tmp_path: Path) -> Path:  # noqa: ANN001
    return write(tmp_path / "t.csv") if write in (_table, _texts) else write(tmp_path)


def test_every_format_has_an_example_here():
    assert sorted(EXAMPLES) == sorted(FORMATS)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_each_format_claims_and_reads_its_own_layout(name, tmp_path):
    fmt = FORMATS[name]
    write, modality = EXAMPLES[name]
    path = _written(write, tmp_path)
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
    assert all(entry.tokeniser.kind == name for name, entry in MODALITIES.items())  # data.json's kind: the entry
    for name in MODALITIES:
        _inputs(name)


def test_every_modality_says_how_to_make_fewer_tokens_with_a_flag_fpt_has():
    from fpt.cli import parser

    train = parser().subparsers_of["train"]
    flags = {a for action in train._actions for a in action.option_strings}
    numbers = {"features": [{"name": "x0", "kind": "numeric"}]}  # a table of numbers is told of --modality too
    for name, entry in MODALITIES.items():
        named = [w.strip("(),.;") for w in entry.fewer_tokens(numbers).split() if w.startswith("--")]
        assert named and all(flag in flags for flag in named), (name, named)


@pytest.mark.parametrize("name", sorted(MODALITIES))
def test_each_modality_tokenises_saves_and_reads_as_declared(name):
    entry = MODALITIES[name]
    options = DataOptions(**{**{f.name: getattr(RunConfig(), f.name) for f in dataclasses.fields(DataOptions)},
                             "data": "x", "image_size": 8, "patch_size": 4, "series_patch": 2})
    x = _inputs(name)
    tok = entry.tokeniser.fit_from(x, options, {"image_channels": "rgb"})
    assert tok.kind == name and isinstance(tok, entry.tokeniser)
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
    described = entry.describe(tok, ["text"] if name == "sequence" else [], {"train_lengths": "5..9"})
    assert described and json.loads(json.dumps(described)) == described  # JSON, as the model card writes it
    assert {"modality", "targets", "npz_X_shape"}.isdisjoint(described)  # Schema.describe's own keys
    card = entry.card({"modality": name, "targets": ["y"], **described})  # the model card's words for it
    assert card and all(isinstance(line, str) for line in card)


def test_each_modality_that_arrays_hold_reads_them_as_its_tokeniser_takes():
    rng = np.random.default_rng(0)
    arrays = {"tabular": rng.normal(size=(12, 2)), "image": rng.integers(0, 255, (12, 8, 8, 3), dtype=np.uint8),
              "timeseries": rng.normal(size=(12, 2, 7))}
    assert {name for name, entry in MODALITIES.items() if entry.arrays} == set(arrays)
    options = DataOptions(**{**{f.name: getattr(RunConfig(), f.name) for f in dataclasses.fields(DataOptions)},
                             "data": "x", "image_size": 8, "patch_size": 4, "series_patch": 2})
    for name, X in arrays.items():
        held = MODALITIES[name].arrays
        x = held.read(X, held.channels(X, "rgb"), 8, "X")
        tokens, _ = MODALITIES[name].tokeniser.fit_from(x, options, {"image_channels": "rgb"})(x)
        assert len(tokens) == len(X) and tokens.isfinite().all()


def test_the_modality_field_takes_auto_and_every_entry_and_names_them_otherwise(tmp_path):
    from fpt.data.memory import from_memory
    from fpt.data.modalities import AUTO, requested
    from fpt.errors import ConfigError

    for name in (AUTO, *MODALITIES):  # the entries are the field's names: fpt.settings keeps no list of its own
        assert RunConfig(task="data", data="x.csv", modality=name).modality == requested(name) == name
    path = tmp_path / "t.csv"
    path.write_text("a,label\n1,x\n2,y\n")
    arrays = (np.random.default_rng(0).normal(size=(4, 2)), [0, 1] * 2)
    for read in (lambda m: load(str(path), modality=m), lambda m: from_memory(arrays, None, m, "auto", 32)):
        with pytest.raises(ConfigError) as caught:  # before anything is read: one line naming the field and its names
            read("timeserie")
        message = str(caught.value)  # the setting as the command line gives it, unless a Python surface speaks
        assert message.startswith("--modality timeserie (did you mean 'timeseries'?) must be auto or one of")
        assert "\n" not in message and all(name in message for name in (AUTO, *MODALITIES))
    with pytest.raises(ConfigError, match="^--modality 3 must"):
        requested(3)


def test_each_modality_declares_only_fields_that_wait_for_its_data():
    from fpt.settings import DATA_DECLARED_FIELDS

    declared = {name: {**entry.fast, **entry.closed_form} for name, entry in MODALITIES.items()}
    assert declared["timeseries"] == {"readout": "flatten", "cf_difference": True, "cf_gains": "0.25,4", "cf_hop": "one",
                                      "cf_series_norm": "choose"}
    assert declared["sequence"] == {"input_init": "gpt2"}
    for name, values in declared.items():
        assert set(values) <= set(DATA_DECLARED_FIELDS), name
        RunConfig(task="data", data="x.csv", fit="closed-form", **values)  # values the fields take
        facts = MODALITIES[name].facts(7, {"patch": 3, "max_len": 5, "channels": "rgb"}, "y")
        assert (facts.n_train, facts.target_column, facts.fast, facts.closed_form) == \
            (7, "y", MODALITIES[name].fast, MODALITIES[name].closed_form)
        assert facts.fitted == {k: v for k, v in {"series_patch": 3, "sequence_max_len": 5,
                                                  "image_channels": "rgb"}.items() if k in MODALITIES[name].options}


# ---------------------------------------------------------------------------------------------- new inputs


def _options() -> DataOptions:
    return DataOptions(**{**{f.name: getattr(RunConfig(), f.name) for f in dataclasses.fields(DataOptions)},
                          "data": "x", "image_size": 8, "patch_size": 4, "series_patch": 2})


def _trained(write, tmp_path: Path) -> tuple[Path, object, Schema]:  # noqa: ANN001
    """(the file, its RawData, the schema of a model trained on it)."""
    path = _written(write, tmp_path)
    raw = load(str(path), image_size=8)
    return path, raw, Schema(fit_preprocessing(raw, _options(), "classification"), dict(raw.notes))


def _rows(tokens) -> list[bytes]:  # noqa: ANN001
    return sorted(row.numpy().tobytes() for row in tokens)  # each example's tokens, in any order


def test_every_predicting_format_and_modality_has_an_example_here():
    assert {name for name, _, _ in PREDICTED} == {name for name, f in FORMATS.items() if f.predict}
    assert {name for name, f in FORMATS.items() if not f.predict} == {"hub"}  # a saved dataset holds whole splits
    assert {modality for _, modality, _ in PREDICTED} == set(MODALITIES)
    for name, f in FORMATS.items():
        if f.predict is not None:
            assert f.takes and f.takes in predict_kinds(), name
            assert f.holds is None or (set(f.holds) <= set(MODALITIES) and f.modality in (None, *f.holds)), name
    for name, entry in MODALITIES.items():
        assert takes(name) and any(f.predicts(name) and f.holds for f in FORMATS.values()), name
        # a table's columns are read by the formats of tables, and only for the modalities that take columns
        columns = any(f.predicts(name) and f.holds and set(f.suffixes) & {".csv"} for f in FORMATS.values())
        assert (entry.columns is not None) == columns, name


@pytest.mark.parametrize(("name", "modality", "write"), PREDICTED, ids=[f"{n}-{m}" for n, m, _ in PREDICTED])
def test_each_format_predicts_its_own_training_file_as_training_read_it(name, modality, write, tmp_path):
    path, raw, schema = _trained(write, tmp_path)
    assert raw.modality == modality == schema.modality
    assert for_inputs(path, modality) is FORMATS[name]
    read = read_inputs(path, schema)
    train = raw.splits["train"]
    assert len(read) == len(train) and read.y is not None and read.y.shape == train.y.shape
    tok = schema.prep.tokeniser
    assert tok.kind == modality
    assert _rows(tok(read.x)[0]) == _rows(tok(train.x)[0])  # the tokens training made of the same examples
    assert sorted(map(str, read.y[:, 0])) == sorted(map(str, train.y[:, 0]))
    # the same examples as arrays or columns in memory: the modality's own check, then the same tokens
    entry = MODALITIES[modality]
    x = entry.columns(read.x, schema, "inputs", False) if isinstance(read.x, dict) else \
        entry.check(read.x, schema, "inputs", False)
    assert _rows(tok(x)[0]) == _rows(tok(read.x)[0])


@pytest.mark.parametrize("modality", sorted(MODALITIES))
def test_a_file_of_a_format_that_does_not_hold_the_models_modality_is_a_one_line_schema_error(modality, tmp_path):
    write = next(w for _, m, w in PREDICTED if m == modality)
    (tmp_path / "model").mkdir()
    _, _, schema = _trained(write, tmp_path / "model")
    others = [w for name, _, w in PREDICTED if not FORMATS[name].predicts(modality)]
    assert others or all(f.predicts(modality) for f in FORMATS.values() if f.predict)
    for i, w in enumerate(others):
        (tmp_path / str(i)).mkdir()
        path = _written(w, tmp_path / str(i))
        with pytest.raises(SchemaError) as caught:
            read_inputs(path, schema)
        text = str(caught.value)
        assert text.startswith(f"{path}: ") and f"{modality} data" in text and len(text.splitlines()) == 1, text
        assert text.endswith(f"give {takes(modality)}"), text


def test_an_unknown_suffix_names_every_file_fpt_predict_reads(tmp_path):
    _, _, schema = _trained(_table, tmp_path)
    (tmp_path / "x.xyz").write_text("1,2\n")
    with pytest.raises(DataError, match="unknown format") as caught:
        read_inputs(tmp_path / "x.xyz", schema)
    assert all(s in str(caught.value) for f in FORMATS.values() if f.predict for s in f.suffixes)


def test_the_command_line_help_lists_every_format_and_modality():
    import argparse

    from fpt.cli import predict
    from fpt.cli._args import config_help

    helps = config_help()
    for f in FORMATS.values():
        assert (f.files or f.folder) and all(text in helps["data"] for text in (f.files, f.folder) if text), f.name
    assert all(name in helps["modality"] for name in MODALITIES)
    parser = argparse.ArgumentParser()
    predict.add_arguments(parser)
    (inputs,) = [a for a in parser._actions if a.dest == "inputs"]
    assert all(f.takes in inputs.help for f in FORMATS.values() if f.predict)

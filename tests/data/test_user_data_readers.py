"""--data readers: each format written here in its real layout, read into TaskData."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from fpt.data import detect
from fpt.errors import ConfigError, DataError
from fpt.tasks import build_task
from fpt.tasks.user_data import Preprocessing


def data(path, **options):
    return build_task("data", {"data": str(path), **options}, 0)


def write_table(path: Path, n: int = 40, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    rows = ["height,colour,weight,label"]
    for i in range(n):
        colour = ["red", "green", "blue"][i % 3]
        weight = "" if i % 7 == 0 else f"{rng.normal():.3f}"
        rows.append(f"{rng.normal() + (i % 2):.3f},{colour},{weight},{'yes' if i % 2 else 'no'}")
    path.write_text("\n".join(rows) + "\n")
    return path


def test_csv_infers_target_objective_and_splits(tmp_path):
    d = data(write_table(tmp_path / "t.csv"))
    assert d.info["modality"] == "tabular" and d.info["targets"] == ["label"]
    assert d.info["objective"] == "classification" and d.info["classes"] == {"label": ["no", "yes"]}
    assert d.info["split_sizes"] == {"train": 24, "val": 8, "test": 8}
    # one token per feature: [value, missing, 3 colour slots + unknown]
    assert d.spec.seq_len == 3 and d.spec.token_dim == 2 + 4 and d.spec.num_classes == 2
    x = d.eval_sets["test"].x
    assert x.shape == (8, 3, 6) and torch.all(x[:, 1, 2:].sum(-1) == 1)  # one category slot on per colour token
    assert d.fitted["tokeniser"]["kind"] == "tabular"


def test_tsv_jsonl_parquet_feather_read_the_same_table(tmp_path):
    import pandas as pd

    frame = pd.read_csv(write_table(tmp_path / "t.csv"))
    frame.to_csv(tmp_path / "t.tsv", sep="\t", index=False)
    frame.to_json(tmp_path / "t.jsonl", orient="records", lines=True)
    frame.to_json(tmp_path / "t.json", orient="records")  # one array of records
    frame.to_parquet(tmp_path / "t.parquet")
    frame.to_feather(tmp_path / "t.feather")  # was: unknown format '.feather'
    ref = data(tmp_path / "t.csv")
    for name in ("t.tsv", "t.jsonl", "t.json", "t.parquet", "t.feather"):
        d = data(tmp_path / name)
        assert d.info["targets"] == ["label"] and d.spec == ref.spec, name
        assert torch.allclose(d.eval_sets["test"].x, ref.eval_sets["test"].x, atol=1e-5), name


def test_split_column_and_split_files_are_the_datas_own(tmp_path):
    lines = write_table(tmp_path / "t.csv").read_text().splitlines()
    split = ["train"] * 30 + ["val"] * 4 + ["test"] * 6
    rows = [f"{r},{s}" for r, s in zip(lines[1:], split, strict=True)]
    (tmp_path / "s.csv").write_text("\n".join([lines[0] + ",split", *rows]))
    d = data(tmp_path / "s.csv")
    assert d.info["split_sizes"] == {"train": 30, "val": 4, "test": 6} and "split" in d.info["splits"]
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "train.csv").write_text("\n".join(lines[:31]) + "\n")
    (folder / "test.csv").write_text("\n".join([lines[0], *lines[31:]]) + "\n")
    d = data(folder)
    assert d.info["split_sizes"]["test"] == 10 and d.info["split_sizes"]["train"] + d.info["split_sizes"]["val"] == 30


def test_tokeniser_is_fitted_on_train_only(tmp_path):
    lines = ["x,y"] + [f"{i % 5},{i % 2}" for i in range(20)] + [f"{1000 + i},{i % 2}" for i in range(10)]
    split = ["train"] * 20 + ["test"] * 10
    rows = [f"{r},{s}" for r, s in zip(lines[1:], split, strict=True)]
    (tmp_path / "s.csv").write_text("\n".join([lines[0] + ",split", *rows]))
    d = data(tmp_path / "s.csv")
    feature = d.fitted["tokeniser"]["features"][0]
    assert feature["mean"] < 5  # the test rows' huge values did not move the training mean


def test_multi_output_and_regression(tmp_path):
    rng = np.random.default_rng(0)
    rows = ["a,b,u,v"] + [f"{rng.normal():.3f},{rng.normal():.3f},{rng.normal() * 10 + 50:.3f},{rng.normal():.3f}"
                          for _ in range(50)]
    (tmp_path / "r.csv").write_text("\n".join(rows))
    d = data(tmp_path / "r.csv", target_column="u,v")
    assert d.info["objective"] == "regression" and d.spec.per_token == 2 and d.spec.num_classes == 1
    y = d.train.data.y
    assert y.dtype == torch.float32 and y.shape[1] == 2 and abs(float(y[:, 0].mean())) < 1e-4  # standardised on train
    assert d.objective.name == "regression" and 40 < d.objective.mean[0] < 60
    rows = ["a,b,c1,c2"] + [f"{i},{i * 2},{i % 2},{'xyz'[i % 3]}" for i in range(30)]
    (tmp_path / "c.csv").write_text("\n".join(rows))
    d = data(tmp_path / "c.csv", target_column="c1,c2")
    assert d.spec.per_token == 2 and d.spec.num_classes == 3 and d.info["classes"] == {"c1": [0, 1], "c2": ["x", "y", "z"]}
    d = data(tmp_path / "c.csv", target_column="c1", objective="regression")  # overrides the inferred classification
    assert d.info["objective"] == "regression" and d.spec.num_classes == 1


def test_sequences_from_a_text_column(tmp_path):
    rng = np.random.default_rng(0)
    rows = ["seq,label"] + [f"{''.join(rng.choice(list('ACGT'), 8 + i % 5))},{i % 2}" for i in range(30)]
    (tmp_path / "dna.csv").write_text("\n".join(rows))
    d = data(tmp_path / "dna.csv")
    assert d.info["modality"] == "sequence" and d.spec.vocab_size == 4 + 2 and d.spec.seq_len == 12
    assert d.fitted["tokeniser"]["mode"] == "chars"
    prep = Preprocessing.from_json(json.loads(json.dumps(d.fitted)))
    x, lengths = prep.tokeniser({"seq": np.array(["ACGN", "", "ACGTACGTACGTACGTAAA"], dtype=object)})
    assert x[0, 3] == 1 and lengths.tolist() == [4, 1, 12]  # N: unknown id 1; empty: one unknown; cut at 12
    rows = ["expr,label"] + [f"( {i} + {i % 3} ),{i % 2}" for i in range(30)]
    (tmp_path / "words.csv").write_text("\n".join(rows))
    d = data(tmp_path / "words.csv")
    assert d.fitted["tokeniser"]["mode"] == "words" and d.spec.seq_len == 5


def _png(path: Path, colour: bool, value: int) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    arr = np.full((12, 10, 3) if colour else (12, 10), value, dtype=np.uint8)
    if colour:
        arr[..., 0] = 255 - value
    Image.fromarray(arr).save(path)


def test_image_folder_flat_and_with_split_folders(tmp_path):
    for c, v in (("cat", 40), ("dog", 200)):
        for i in range(6):
            _png(tmp_path / "flat" / c / f"{i}.png", colour=False, value=v + i)
            _png(tmp_path / "split" / ("train" if i < 4 else "test") / c / f"{i}.jpg", colour=True, value=v + i)
    d = data(tmp_path / "flat", image_size=8, patch_size=4)
    assert d.info["modality"] == "image" and d.info["image_channels"] == "gray"
    assert d.spec.seq_len == 4 and d.spec.token_dim == 16 and d.info["classes"] == {"class": ["cat", "dog"]}
    d = data(tmp_path / "split", image_size=8, patch_size=2)
    assert d.info["image_channels"] == "rgb" and d.spec.token_dim == 12 and d.spec.seq_len == 16
    assert d.info["split_sizes"]["test"] == 4 and "own" in d.info["splits"]


TS_HEADER = "#comment\n@problemName toy\n@timeStamps false\n@univariate {uni}\n@equalLength {eq}\n@classLabel true a b\n@data\n"


def test_ucr_ts_univariate_multivariate_unequal(tmp_path):
    train = TS_HEADER.format(uni="true", eq="true") + "".join(f"{i},{i + 1},{i + 2},{i + 3}:{'ab'[i % 2]}\n" for i in range(20))
    (tmp_path / "Toy_TRAIN.ts").write_text(train)
    (tmp_path / "Toy_TEST.ts").write_text(train)
    d = data(tmp_path / "Toy_TRAIN.ts", series_patch=2)
    assert d.info["modality"] == "timeseries" and d.info["split_sizes"]["test"] == 20
    assert d.spec.seq_len == 2 and d.spec.token_dim == 2
    multi = TS_HEADER.format(uni="false", eq="false") + "".join(
        f"{','.join(str(v) for v in range(3 + i % 4))}:{','.join('?' if v == 1 else str(v) for v in range(3 + i % 4))}"
        f":{'ab'[i % 2]}\n" for i in range(20))
    (tmp_path / "m" / "Multi_TRAIN.ts").parent.mkdir()
    (tmp_path / "m" / "Multi_TRAIN.ts").write_text(multi)
    d = data(tmp_path / "m", series_patch=2, series_stride=1)
    assert d.info["channels"] == 2 and d.spec.token_dim == 4 and d.spec.seq_len == 5  # longest 6 points: 5 windows
    assert d.train.data.lengths is not None and set(d.train.data.lengths.tolist()) <= {2, 3, 4, 5}


def test_ucr_tsv_with_nan_padding(tmp_path):
    lines = [f"{i % 3}\t" + "\t".join([str(v) for v in range(5 + i % 3)] + ["NaN"] * (2 - i % 3)) for i in range(30)]
    (tmp_path / "Toy_TRAIN.tsv").write_text("\n".join(lines))
    d = data(tmp_path / "Toy_TRAIN.tsv")
    assert d.info["modality"] == "timeseries" and d.info["train_lengths"] in ("5..7", "5..7")
    assert d.info["classes"] == {"target": ["0", "1", "2"]}


def test_npz_tabular_images_series_and_own_test(tmp_path):
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "t.npz", X=rng.normal(size=(30, 4)), y=np.arange(30) % 2, X_test=rng.normal(size=(6, 4)),
             y_test=np.arange(6) % 2)
    d = data(tmp_path / "t.npz")
    assert d.info["modality"] == "tabular" and d.spec.seq_len == 4 and d.info["split_sizes"]["test"] == 6
    np.savez(tmp_path / "i.npz", X=rng.integers(0, 255, (20, 8, 8), dtype=np.uint8), y=np.arange(20) % 2)
    d = data(tmp_path / "i.npz", image_size=8, patch_size=4)
    assert d.info["modality"] == "image" and d.spec.token_dim == 16
    np.savez(tmp_path / "s.npz", X=rng.normal(size=(20, 3, 16)).astype(np.float32), y=rng.normal(size=20))
    d = data(tmp_path / "s.npz", series_patch=4)
    assert d.info["modality"] == "timeseries" and d.info["objective"] == "regression" and d.spec.token_dim == 12


def test_saved_hugging_face_dataset_directory(tmp_path):
    import datasets

    ds = datasets.Dataset.from_dict({"f": [float(i) for i in range(20)], "g": ["u", "v"] * 10,
                                     "label": [i % 2 for i in range(20)]})
    ds = ds.cast_column("label", datasets.ClassLabel(names=["neg", "pos"]))
    datasets.DatasetDict({"train": ds, "test": ds.select(range(6))}).save_to_disk(str(tmp_path / "saved"))
    d = data(tmp_path / "saved")
    assert detect(str(tmp_path / "saved")) == "hub" and d.info["classes"] == {"label": ["neg", "pos"]}
    assert d.info["split_sizes"]["test"] == 6


def test_hub_id_fails_fast_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    start = time.perf_counter()
    with pytest.raises(DataError, match="HF_HUB_OFFLINE") as info:
        data("someone/no-such-dataset-xyz")
    assert time.perf_counter() - start < 30 and "\n" not in str(info.value)


def test_data_options_are_validated():
    with pytest.raises(ConfigError, match="patch_size"):
        build_task("data", {"data": "x.csv", "image_size": 30, "patch_size": 4}, 0)
    with pytest.raises(ConfigError, match="objective"):
        build_task("data", {"data": "x.csv", "objective": "ranking"}, 0)


def test_data_json_alone_retokenises_each_modality(tmp_path):
    from fpt.data import load

    for c, v in (("cat", 40), ("dog", 200)):
        for i in range(6):
            _png(tmp_path / "img" / ("train" if i < 4 else "test") / c / f"{i}.png", colour=True, value=v + i)
    train = TS_HEADER.format(uni="true", eq="false") + "".join(f"{','.join(str(i * v) for v in range(3 + i % 5))}:"
                                                                 f"{'ab'[i % 2]}\n" for i in range(20))
    (tmp_path / "Toy_TRAIN.ts").write_text(train)
    (tmp_path / "Toy_TEST.ts").write_text(train)
    for path, opts in ((tmp_path / "img", {"image_size": 8, "patch_size": 4}), (tmp_path / "Toy_TRAIN.ts", {})):
        d = data(path, **opts)
        prep = Preprocessing.from_json(json.loads(json.dumps(d.fitted)))  # plain JSON, no training data
        raw = load(str(path), image_size=opts.get("image_size", 32), image_channels=d.fitted["tokeniser"].get("channels", "auto"))
        x, lengths = prep.tokeniser(raw.splits["test"].x)
        assert torch.equal(x, d.eval_sets["test"].x), path
        assert (lengths is None) == (d.eval_sets["test"].lengths is None)
        assert prep.encode_targets(raw.splits["test"].y, "test").tolist() == d.eval_sets["test"].y.tolist()


def test_target_names_a_column_only_when_it_is_not_a_number():
    from fpt.config import RunConfig, from_dict, target_alias

    config = from_dict(RunConfig, target_alias({"data": "x.csv", "target": "price"}))
    assert config.task == "data" and config.target_column == "price" and config.target is None
    config = from_dict(RunConfig, target_alias({"data": "x.csv", "target": "0.9"}))
    assert config.target == 0.9 and config.target_column is None
    assert from_dict(RunConfig, target_alias({"target": "0.9"})).task == "bit-xor"
    for ambiguous in ("4", 4, "0"):  # a column named 4, or an accuracy out of range: say how to give either
        with pytest.raises(ConfigError, match="--target-column 4|--target-column 0") as err:
            target_alias({"data": "x.csv", "target": ambiguous})
        assert "(0, 1]" in str(err.value)
    config = from_dict(RunConfig, target_alias({"data": "x.csv", "target_column": "4", "target": "0.5"}))
    assert config.target_column == "4" and config.target == 0.5

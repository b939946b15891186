"""fpt predict / fpt.load(...).predict: new inputs through a run's saved preprocessing, scored as fpt eval scores.

Every modality of --data is trained once (tiny BERT, a few steps) on data with its own test split;
predicting on that split must reproduce ``fpt eval``'s test metric exactly, and inputs that do not
match the training schema must stop with one line naming the file, the column and the fix.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

import fpt
from fpt.cli import main
from fpt.errors import SchemaError

STEPS = ["--init", "random", "--steps", "4", "--eval-every", "2", "--batch-size", "8", "--device", "cpu", "--quiet"]


# ---------------------------------------------------------------------------------------------- data


def _table(path: Path, n: int, seed: int, regression: bool = False) -> None:
    rng = np.random.default_rng(seed)
    rows = ["x1,x2,kind,price" if regression else "x1,x2,kind,label"]
    for i in range(n):
        x1, x2 = rng.normal() + 2 * (i % 2), rng.normal()
        target = f"{100 + 30 * x1 - 10 * x2:.3f}" if regression else ["low", "high"][i % 2]
        rows.append(f"{x1:.3f},{x2:.3f},{'pq'[i % 2]},{target}")
    path.write_text("\n".join(rows) + "\n")


def _sequences(path: Path, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = ["text,label"]
    for i in range(n):
        symbols = list("ab" if i % 2 else "cd")
        rows.append(f"{''.join(rng.choice(symbols, rng.integers(3, 12)))},{'ab' if i % 2 else 'cd'}")
    path.write_text("\n".join(rows) + "\n")


def _ts(path: Path, n: int, seed: int, channels: int = 2, length: int = 16) -> None:
    rng = np.random.default_rng(seed)
    lines = ["@problemName toy", "@timeStamps false", f"@univariate {str(channels == 1).lower()}", "@equalLength true",
             "@classLabel true a b", "@data"]
    for i in range(n):
        dims = [",".join(f"{v:.3f}" for v in rng.normal(size=length) + (i % 2) * (c == 0)) for c in range(channels)]
        lines.append(":".join(dims) + f":{'ab'[i % 2]}")
    path.write_text("\n".join(lines) + "\n")


def _images(root: Path, split: str, n: int, seed: int) -> None:
    """Grayscale images whose class is their brightness (so the model is a grayscale one)."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    for label, level in (("dark", 60), ("light", 190)):
        folder = root / split / label
        folder.mkdir(parents=True)
        for i in range(n):
            pixels = np.clip(level + rng.integers(-30, 30, (10, 10)), 0, 255).astype(np.uint8)
            Image.fromarray(pixels).save(folder / f"{i}.png")


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    """kind -> (what --data names, the test split as an input file or folder)."""
    root = tmp_path_factory.mktemp("predict-data")
    for name, maker in (("tabular", _table), ("sequence", _sequences)):
        (root / name).mkdir()
        maker(root / name / "train.csv", 60, 0)
        maker(root / name / "test.csv", 30, 1)
    (root / "regression").mkdir()
    _table(root / "regression" / "train.csv", 60, 0, regression=True)
    _table(root / "regression" / "test.csv", 30, 1, regression=True)
    (root / "ts").mkdir()
    _ts(root / "ts" / "toy_TRAIN.ts", 30, 0)
    _ts(root / "ts" / "toy_TEST.ts", 12, 1)
    _images(root / "img", "train", 12, 0)
    _images(root / "img", "test", 6, 1)
    return {"tabular": (root / "tabular", root / "tabular" / "test.csv"),
            "regression": (root / "regression", root / "regression" / "test.csv"),
            "sequence": (root / "sequence", root / "sequence" / "test.csv"),
            "timeseries": (root / "ts" / "toy_TRAIN.ts", root / "ts" / "toy_TEST.ts"),
            "image": (root / "img", root / "img" / "test")}


@pytest.fixture(scope="module")
def runs(data, tiny_bert_dir, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("predict-runs")
    out = {}
    for kind, (source, _) in data.items():
        extra = ["--image-size", "8", "--patch-size", "4"] if kind == "image" else []
        target = ["--target", "price"] if kind == "regression" else []
        assert main(["train", "--data", str(source), *target, "--body", tiny_bert_dir, *STEPS, *extra,
                     "--out", str(root / kind)]) == 0
        out[kind] = root / kind
    return out


def _json_line(text: str) -> dict:
    return json.loads(next(line for line in text.splitlines() if line.startswith("{")))


def _read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


# ---------------------------------------------------------------------------------------------- scores


@pytest.mark.parametrize("kind", ["tabular", "regression", "sequence", "timeseries", "image"])
def test_predict_on_the_test_split_scores_exactly_as_fpt_eval(kind, data, runs, tmp_path, capsys):
    capsys.readouterr()
    assert main(["eval", str(runs[kind])]) == 0
    evaluated = json.loads(capsys.readouterr().out)
    out = tmp_path / "p.csv"
    assert main(["predict", str(runs[kind]), str(data[kind][1]), "--out", str(out)]) == 0
    printed = _json_line(capsys.readouterr().out)
    header, rows = _read_csv(out)
    assert printed["rows"] == len(rows) > 0
    model = fpt.load(runs[kind])
    if kind == "regression":
        assert printed["r2"] == pytest.approx(evaluated["test_r2"], abs=1e-12)
        assert printed["mae"] == pytest.approx(evaluated["test_mae"], rel=1e-6)
        assert header == ["prediction"]
        # values in the target's own units: their error against the file's prices is eval's MAE
        truth = np.array([float(r[-1]) for r in list(csv.reader(open(data[kind][1])))[1:]])
        mae = np.abs(np.array([float(r[0]) for r in rows]) - truth).mean()
        assert mae == pytest.approx(evaluated["test_mae"], rel=1e-4)
        logits = model.logits(data[kind][1])
        scale, mean = model.objective.scale[0], model.objective.mean[0]
        assert np.allclose(model.predict(data[kind][1]), logits[:, 0, 0] * scale + mean, atol=1e-4)
        return
    assert printed["accuracy"] == evaluated["test_accuracy"]  # the same batches, the same parameters: exactly
    classes = model.classes[0]
    assert header == (["file"] if kind == "image" else []) + ["prediction"] + [f"proba_{c}" for c in classes]
    first = 1 if kind == "image" else 0
    proba = np.array([[float(v) for v in r[first + 1:]] for r in rows])
    assert np.allclose(proba.sum(1), 1, atol=1e-5)
    assert [r[first] for r in rows] == [str(classes[i]) for i in proba.argmax(1)]
    assert list(model.predict(data[kind][1])) == [r[first] for r in rows]


def test_the_python_api_takes_frames_dicts_and_paths(data, runs):
    import pandas as pd

    model = fpt.load(runs["tabular"])
    frame = pd.read_csv(data["tabular"][1])
    from_path = model.predict(data["tabular"][1])
    assert list(model.predict(frame)) == list(from_path)
    assert list(model.predict(frame.drop(columns=["label"]))) == list(from_path)  # no target: predictions only
    columns = {c: frame[c].to_numpy() for c in ("x1", "x2", "kind")}
    proba = model.predict_proba(columns)
    assert proba.shape == (len(frame), 2) and np.allclose(proba.sum(1), 1, atol=1e-6)
    assert model.score(frame)["accuracy"] == model.predict_file(data["tabular"][1]).metrics["accuracy"]
    with pytest.raises(SchemaError, match="no targets to score against"):
        model.score(frame.drop(columns=["label"]))
    # already tokenised inputs pass through as they are
    tokens, _, _ = model.tokens(frame)
    assert np.allclose(model.logits(tokens), model.logits(frame))
    regression = fpt.load(runs["regression"])
    with pytest.raises(ValueError, match="regression model has no class probabilities"):
        regression.predict_proba(data["regression"][1])


def test_predict_never_refits_the_tokeniser(data, runs, tmp_path):
    """Rows predicted alone or with others get the same tokens: nothing is fitted on the input."""
    model = fpt.load(runs["tabular"])
    header, *rows = data["tabular"][1].read_text().splitlines()
    (tmp_path / "one.csv").write_text(header + "\n" + rows[3] + "\n")
    alone, _, _ = model.tokens(tmp_path / "one.csv")
    together, _, _ = model.tokens(data["tabular"][1])
    assert torch.equal(alone[0], together[3])


# ---------------------------------------------------------------------------------------------- schema


def _edit(path: Path, out: Path, fn) -> Path:
    header, *rows = path.read_text().splitlines()
    cells = [r.split(",") for r in rows]
    new_header, new_cells = fn(header.split(","), cells)
    out.write_text("\n".join([",".join(new_header), *[",".join(c) for c in new_cells]]) + "\n")
    return out


def _drop(name):
    def fn(h, cells):
        j = h.index(name)
        return h[:j] + h[j + 1:], [c[:j] + c[j + 1:] for c in cells]
    return fn


def _add_column(h, cells):
    return [*h, "extra"], [[*c, "1"] for c in cells]


def _set(name, row, value):
    def fn(h, cells):
        cells[row][h.index(name)] = value
        return h, cells
    return fn


def _set_all(name, value):
    def fn(h, cells):
        for c in cells:
            c[h.index(name)] = value
        return h, cells
    return fn


@pytest.mark.parametrize("edit, message", [
    (_drop("x2"), "no column 'x2', which the model was trained on; add it"),
    (_add_column, "column 'extra' was not a feature when the model was trained; drop it"),
    (_set("kind", 2, "z"), "column 'kind', row 3: category 'z' was not seen in training"),
    (_set("x1", 0, "abc"), "column 'x1' mixes numbers and text (row 1: 'abc')"),  # the table reader's check
    (_set_all("x1", "abc"), "column 'x1', row 1: 'abc' is not a number, but the model was trained on numbers"),
    (_set("label", 4, "medium"), "label 'medium' is not one of the model's classes"),
])
def test_inputs_off_the_training_schema_are_one_line_errors(edit, message, data, runs, tmp_path, capsys):
    bad = _edit(data["tabular"][1], tmp_path / "bad.csv", edit)
    assert main(["predict", str(runs["tabular"]), str(bad), "--out", str(tmp_path / "p.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and str(bad) in err and "Traceback" not in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "p.csv").exists()


def test_allow_unseen_maps_new_categories_to_the_unknown_slot(data, runs, tmp_path, capsys):
    bad = _edit(data["tabular"][1], tmp_path / "new.csv", _set("kind", 2, "z"))
    assert "or pass allow_unseen=True to map" in pytest.raises(SchemaError, fpt.load(runs["tabular"]).predict, bad).value.args[0]
    assert main(["predict", str(runs["tabular"]), str(bad), "--out", str(tmp_path / "p.csv"), "--allow-unseen"]) == 0
    tokens, _, _ = fpt.load(runs["tabular"]).tokens(bad, allow_unseen=True)
    assert tokens[2, 2, 2:].tolist() == [0, 0, 1]  # kind's slots: p, q, then the shared unknown one


def test_wrong_formats_and_folders_are_named(data, runs, tmp_path, capsys):
    model = fpt.load(runs["tabular"])
    with pytest.raises(SchemaError, match="trained on tabular data"):
        model.predict(data["timeseries"][1])
    with pytest.raises(ValueError, match=r"split files .*give one table file"):
        model.predict(data["tabular"][0])
    with pytest.raises(SchemaError, match=r"4 column\(s\), but the model was trained on 3 features"):
        model.predict(np.zeros((2, 4)))


def test_image_inputs_off_schema(data, runs, tmp_path):
    from PIL import Image

    model = fpt.load(runs["image"])
    assert model.preprocessing.tokeniser.channels == "gray"
    colour = tmp_path / "colour"
    colour.mkdir()
    Image.fromarray(np.zeros((10, 10, 3), dtype=np.uint8) + np.array([200, 0, 0], dtype=np.uint8)).save(colour / "x.png")
    with pytest.raises(SchemaError, match=r"x\.png: a colour image, but the model was trained on grayscale"):
        model.predict(colour)
    unlabelled = tmp_path / "plain"
    unlabelled.mkdir()
    Image.fromarray(np.full((20, 20), 60, dtype=np.uint8)).save(unlabelled / "a.png")  # any size: resized as in training
    assert model.predict_file(unlabelled).columns["file"] == ["a.png"]
    with pytest.raises(SchemaError, match=r"^inputs: inputs\[0\] has shape \(9, 9\), but the model takes"):
        model.predict(np.zeros((1, 9, 9), dtype=np.uint8))
    assert model.predict(np.zeros((2, 8, 8), dtype=np.uint8)).shape == (2,)
    np.savez(tmp_path / "x.npz", X=np.zeros((2, 8, 8, 3), dtype=np.uint8))
    with pytest.raises(SchemaError, match=r"x\.npz \(X\): X\[0\] has shape \(8, 8, 3\)"):
        model.predict(tmp_path / "x.npz")


def test_series_inputs_off_schema(data, runs, tmp_path):
    model = fpt.load(runs["timeseries"])
    _ts(tmp_path / "one_TEST.ts", 4, 2, channels=1)
    with pytest.raises(SchemaError, match=r"one_TEST\.ts: series 1 has 1 channel\(s\), but the model was trained on 2"):
        model.predict(tmp_path / "one_TEST.ts")
    _ts(tmp_path / "long_TEST.ts", 4, 2, length=20)
    with pytest.raises(SchemaError, match=r"series 1 has 20 points, but every training series had 16"):
        model.predict(tmp_path / "long_TEST.ts")
    assert model.predict(np.zeros((3, 2, 16))).shape == (3,)


# ---------------------------------------------------------------------------------------------- paper tasks


def test_a_paper_task_predicts_raw_arrays_and_npz(tiny_gpt2_dir, tmp_path, capsys):
    exp = fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", steps=6, eval_every=3, batch_size=4,
                    device="cpu", task_options={"eval_size": 32})
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    test = exp.data.eval_sets["test"]
    model = fpt.load(tmp_path / "run")
    assert torch.equal(torch.from_numpy(model.predict(test.x)), fpt.predict(exp, test.x))
    assert model.predict_proba(test.x[:3]).shape == (3, 5, 2)
    np.savez(tmp_path / "test.npz", X=test.x.numpy(), y=test.y.numpy())
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "run")]) == 0
    evaluated = json.loads(capsys.readouterr().out)
    assert main(["predict", str(tmp_path / "run"), str(tmp_path / "test.npz"), "--out", str(tmp_path / "p.csv")]) == 0
    assert _json_line(capsys.readouterr().out)["accuracy"] == evaluated["test_accuracy"]
    header, rows = _read_csv(tmp_path / "p.csv")
    assert header[:5] == [f"prediction_{i}" for i in range(5)] and "proba_4_1" in header and len(rows) == 32
    with pytest.raises(SchemaError, match=r"tokens of shape \(2, 10, 3\); the model takes \(n, T, 1\)"):
        model.predict(np.zeros((2, 10, 3), dtype=np.float32))
    shutil.rmtree(tmp_path / "run" / "best")  # no best/: the latest checkpoint
    assert fpt.load(tmp_path / "run").checkpoint["slot"] == "checkpoint"

"""Malformed --data through ``fpt train``: one line on stderr (exit 2), naming the file/column/line and the fix.

``test_user_data_errors.py`` holds the first cases (run there through ``fpt data``); every one of them
runs here through ``fpt train`` as well, followed by the cases added with them: repeated or unnamed
header columns, a header with no rows, infinite values, NaN pixels, more classes than examples, a
constant regression target, .ts headers that contradict their data, a single class folder, --target
where the layout fixes the target, bad option values. Missing feature values are not an error: they
train, through the missing-value indicator (tables) or as the series mean (time series).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from test_user_data_errors import CASES as DATA_CASES  # tests/data is on sys.path (pytest's rootdir-less import)

from fpt.cli import main


def _csv(text: str, name: str = "d.csv") -> Callable[[Path], Path]:
    def write(root: Path) -> Path:
        (root / name).write_text(text)
        return root / name
    return write


def _npz(**arrays) -> Callable[[Path], Path]:
    def write(root: Path) -> Path:
        np.savez(root / "d.npz", **arrays)
        return root / "d.npz"
    return write


TS_HEADER = "@problemName t\n@univariate true\n@equalLength true\n@classLabel true a b\n@data\n"


def _ts(body: str, header: str = TS_HEADER) -> Callable[[Path], Path]:
    def write(root: Path) -> Path:
        (root / "T_TRAIN.ts").write_text(header + body)
        return root / "T_TRAIN.ts"
    return write


def _images(classes: tuple[str, ...] = ("cat", "dog")) -> Callable[[Path], Path]:
    def write(root: Path) -> Path:
        from PIL import Image

        for c in classes:
            (root / "img" / c).mkdir(parents=True)
            for i in range(4):
                Image.fromarray(np.full((4, 4), 40 * i, dtype=np.uint8)).save(root / "img" / c / f"{i}.png")
        return root / "img"
    return write


ROWS = "".join(f"{i},{i * 2},{'xy'[i % 2]}\n" for i in range(20))
SERIES = "".join(f"1,2,{i}:{'ab'[i % 2]}\n" for i in range(10))
rng = np.random.default_rng(0)
X_INF = rng.normal(size=(20, 3))
X_INF[7, 1] = np.inf
IMAGES_NAN = rng.uniform(size=(20, 8, 8, 3))
IMAGES_NAN[3, 2, 2, 0] = np.nan

NEW_CASES = {
    # name: (writer, extra flags, words the one-line message must hold)
    "repeated column name": (_csv("a,a,label\n" + ROWS), [], ["d.csv", "'a' appears twice", "own name"]),
    "unnamed header column": (_csv("a,,label\n" + ROWS), [], ["d.csv", "column 2", "no name"]),
    "header and no rows": (_csv("a,b,label\n"), [], ["d.csv", "no data rows"]),
    "infinite feature value": (_csv("a,b,label\n" + ROWS.replace("3,6,y", "inf,6,y")), [],
                               ["d.csv", "'a'", "infinite", "row(s) 4", "leave them empty"]),
    "infinite regression target": (_csv("a,price\n" + "".join(f"{i},{i * 1.5 if i != 5 else 'inf'}\n" for i in range(30))),
                                   [], ["d.csv", "'price'", "infinite", "row(s) 6"]),
    "more classes than examples": (_csv("a,label\n" + "".join(f"{i},id{i}\n" for i in range(40))), [],
                                   ["d.csv", "'label'", "40 classes among 40", "--target", "regression"]),
    "integer quantity read as classes": (_csv("a,y\n" + "".join(f"{i},{i % 15}\n" for i in range(24))), [],
                                         ["d.csv", "15 classes among 24", "--objective regression"]),
    "constant regression target": (_csv("a,y\n" + "".join(f"{i},3.5\n" for i in range(40))), [],
                                   ["d.csv", "'y' has one value (3.5)", "another --target"]),
    "unknown .ts directive": (_ts(SERIES, TS_HEADER.replace("@data", "@frobnicate yes\n@data")), [],
                              ["T_TRAIN.ts", "line 5", "@frobnicate", "# comments"]),
    ".ts label not declared": (_ts(SERIES + "1,2,3:c\n"), [], ["T_TRAIN.ts", "line 16", "'c'", "@classLabel"]),
    ".ts univariate with two channels": (_ts("1,2:3,4:a\n"), [], ["T_TRAIN.ts", "line 6", "@univariate true"]),
    ".ts univariate false with one channel": (_ts(SERIES, TS_HEADER.replace("@univariate true", "@univariate false")),
                                              [], ["T_TRAIN.ts", "@univariate false", "one channel", "':'"]),
    ".ts @dimensions not the channels": (_ts(SERIES, TS_HEADER.replace("@data", "@dimensions 3\n@data")), [],
                                         ["T_TRAIN.ts", "@dimensions 3", "1 channel(s)", "fix @dimensions"]),
    ".ts series length not as declared": (_ts(SERIES, TS_HEADER.replace("@data", "@seriesLength 5\n@data")), [],
                                          ["T_TRAIN.ts", "@seriesLength 5", "3 points"]),
    "one class folder": (_images(("cat",)), [], ["img", "one class folder only ('cat')", "at least two"]),
    "--target on an image folder": (_images(), ["--target", "species"], ["img", "--target", "class folder",
                                                                          "drop --target"]),
    "--target on a .ts file": (_ts(SERIES), ["--target-column", "y"], ["T_TRAIN.ts", "after each series' last ':'"]),
    "npz without X": (_npz(y=np.arange(6) % 2, X_test=np.zeros((2, 3))), [], ["d.npz", "needs X"]),
    "npz test features differ": (_npz(X=np.zeros((10, 5)), y=np.arange(10) % 2, X_test=np.zeros((4, 4)),
                                      y_test=np.arange(4) % 2), [], ["d.npz", "X_test", "(4,)", "(5,)"]),
    "npz infinite feature": (_npz(X=X_INF, y=np.arange(20) % 2), [], ["d.npz", "X[7, 1] is infinite (1 value in all)"]),
    "npz NaN pixel": (_npz(X=IMAGES_NAN, y=np.arange(20) % 2), [], ["d.npz", "X[3, 2, 2, 0] is NaN", "missing pixels"]),
    "npz infinite target": (_npz(X=np.zeros((6, 2)), y=np.array([0.5, 1.5, np.inf, 2.5, 3.5, 4.5])), [],
                            ["d.npz", "y is infinite at index 2"]),
    "bad --objective": (_csv("a,b,label\n" + ROWS), ["--objective", "classify"], ["'objective'", "classification"]),
    "bad --modality": (_csv("a,b,label\n" + ROWS), ["--modality", "audio"],
                       ["--modality audio (did you mean 'auto'?) must be", "timeseries"]),
    "--modality image on a table": (_csv("a,b,label\n" + ROWS), ["--modality", "image"], ["d.csv", "not image"]),
    "patch size not dividing image size": (_images(), ["--image-size", "30", "--patch-size", "4"],
                                           ["'patch_size'", "divide image_size=30"]),
}


def _train(path: Path, flags: list[str], tmp_path: Path) -> list[str]:
    return ["train", "--data", str(path), *flags, "--steps", "1", "--device", "cpu", "--out", str(tmp_path / "run"),
            "--quiet"]


@pytest.mark.parametrize("name", [*DATA_CASES, *NEW_CASES])
def test_malformed_data_fails_fpt_train_in_one_line(name, tmp_path, capsys):
    write, flags, words = {**DATA_CASES, **NEW_CASES}[name]
    path = write(tmp_path)
    rc = main(_train(path, flags, tmp_path))
    err = capsys.readouterr().err.strip()
    assert rc == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err and err.startswith("fpt train: error: "), err
    for word in words:
        assert word in err, (word, err)
    assert not (tmp_path / "run" / "summary.json").exists()


def test_enough_user_data_cases():
    assert len(NEW_CASES) >= 15 and len(DATA_CASES) + len(NEW_CASES) >= 40
    assert not set(NEW_CASES) & set(DATA_CASES)


def test_one_line_in_a_real_process(tmp_path):
    """The installed entry point, as a user runs it: exit status 2 and one line, no traceback."""
    for name in ("repeated column name", "unknown .ts directive", "npz NaN pixel"):
        write, flags, words = NEW_CASES[name]
        case = tmp_path / name.replace(" ", "-")
        case.mkdir()
        r = subprocess.run([sys.executable, "-m", "fpt", *_train(write(case), flags, case)], capture_output=True,
                           text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=300)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert all(word in r.stderr for word in words), r.stderr


# --- missing feature values train --------------------------------------------------------


def _nan_features_csv(root: Path) -> Path:
    rows = ["a,b,kind,label"]
    for i in range(40):
        a = "" if i % 4 == 0 else f"{i % 7 + (i % 2) * 5}"
        b = "nan" if i % 5 == 0 else f"{i * 0.1:.1f}"
        kind = "" if i % 6 == 0 else "pq"[i % 2]
        rows.append(f"{a},{b},{kind},{'xy'[i % 2]}")
    (root / "gaps.csv").write_text("\n".join(rows) + "\n")
    return root / "gaps.csv"


def _nan_features_npz(root: Path) -> Path:
    X = np.random.default_rng(1).normal(size=(30, 4))
    X[::3, 2] = np.nan
    np.savez(root / "gaps.npz", X=X, y=np.arange(30) % 2)
    return root / "gaps.npz"


def _nan_points_ts(root: Path) -> Path:
    header = TS_HEADER.replace("true a b", "true a b").replace("@equalLength true", "@equalLength true\n@missing true")
    body = "".join(f"{'?' if i % 3 == 0 else i},{i % 4},2,{i % 5}:{'ab'[i % 2]}\n" for i in range(20))
    (root / "G_TRAIN.ts").write_text(header + body)
    return root / "G_TRAIN.ts"


@pytest.mark.parametrize("write", [_nan_features_csv, _nan_features_npz, _nan_points_ts], ids=["csv", "npz", "ts"])
def test_missing_feature_values_train(write, tmp_path, tiny_bert_dir, capsys):
    path = write(tmp_path)
    out = tmp_path / "run"
    assert main(["train", "--data", str(path), "--body", tiny_bert_dir, "--init", "random", "--steps", "2",
                 "--eval-every", "1", "--batch-size", "4", "--device", "cpu", "--out", str(out), "--quiet"]) == 0, \
        capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped"] != "diverged" and np.isfinite(summary["eval"]["test_loss"])
    import fpt

    exp = fpt.build(data=str(path), body=tiny_bert_dir, init="random", device="cpu", fit="gradient")  # the tokens only
    x = exp.data.train.data.x
    assert bool(x.isfinite().all())
    if path.suffix == ".csv":  # missing -> value 0 and indicator 1 (the token's second entry), numeric and categorical
        assert float(x[:, :3, 1].sum()) > 0 and set(np.unique(x[:, :, 1].numpy())) <= {0.0, 1.0}

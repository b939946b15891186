"""Malformed --data: each case is one line on stderr (exit 2) naming the file/column and the fix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from fpt.cli import main


def _csv(text: str) -> Callable[[Path], Path]:
    def write(root: Path) -> Path:
        (root / "d.csv").write_text(text)
        return root / "d.csv"
    return write


def _jsonl(root: Path) -> Path:
    (root / "d.jsonl").write_text('{"a": 1, "label": "x"}\n{"a": "oops", "label": "y"}\n')
    return root / "d.jsonl"


def _images(root: Path, bad: str = "") -> Path:
    from PIL import Image

    for c in ("cat", "dog"):
        (root / "img" / c).mkdir(parents=True)
        for i in range(3):
            Image.fromarray(np.full((4, 4), 50 * i, dtype=np.uint8)).save(root / "img" / c / f"{i}.png")
    if bad == "corrupt":
        (root / "img" / "dog" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 20)
    if bad == "empty-class":
        (root / "img" / "bird").mkdir()
    return root / "img"


def _empty_folder(root: Path) -> Path:
    (root / "nothing" / "cat").mkdir(parents=True)
    (root / "nothing" / "cat" / "notes.txt").write_text("no images here")
    return root / "nothing"


HEADER = "@problemName t\n@univariate true\n@equalLength true\n@classLabel true a b\n@data\n"


def _ts(body: str, header: str = HEADER) -> Callable[[Path], Path]:
    def write(root: Path) -> Path:
        (root / "T_TRAIN.ts").write_text(header + body)
        return root / "T_TRAIN.ts"
    return write


def _npz(**arrays) -> Callable[[Path], Path]:
    def write(root: Path) -> Path:
        np.savez(root / "d.npz", **arrays)
        return root / "d.npz"
    return write


def _own_split_unseen_class(root: Path) -> Path:
    (root / "s").mkdir()
    (root / "s" / "train.csv").write_text("a,label\n" + "".join(f"{i},{'xy'[i % 2]}\n" for i in range(10)))
    (root / "s" / "test.csv").write_text("a,label\n1,x\n2,z\n")
    return root / "s"


TABLE = "".join(f"{i},{i % 3},{'ab'[i % 2]}\n" for i in range(12))
CASES = {
    # name: (writer, extra flags, words the one-line message must hold)
    "missing target column": (_csv("a,b,label\n" + TABLE), ["--target", "price"], ["d.csv", "'price'", "--target"]),
    "one class only": (_csv("a,label\n" + "".join(f"{i},same\n" for i in range(12))), [], ["d.csv", "one class"]),
    "NaN in target": (_csv("a,label\n1,x\n2,\n3,y\n4,x\n5,y\n6,x\n7,y\n8,x\n9,y\n10,x\n"), [],
                      ["d.csv", "'label'", "row(s) 2"]),
    "mixed types in a CSV column": (_csv("a,label\n" + "".join(f"{i},{'xy'[i % 2]}\n" for i in range(20)) + "oops,x\n"),
                                    [], ["d.csv", "'a'", "mixes numbers and text", "oops"]),
    "mixed types in JSON lines": (_jsonl, [], ["d.jsonl", "'a'", "mixes types"]),
    "ragged CSV rows": (_csv("a,b,label\n1,2,x\n3,y\n4,5,6,x\n"), [], ["d.csv", "cannot be read as CSV"]),
    "empty CSV file": (_csv(""), [], ["d.csv", "empty"]),
    "empty image folder": (_empty_folder, [], ["nothing", "no images"]),
    "empty class folder": (lambda r: _images(r, "empty-class"), [], ["bird", "empty class folder"]),
    "corrupt PNG": (lambda r: _images(r, "corrupt"), [], ["broken.png", "not a readable image"]),
    "ragged .ts where equal length is declared": (_ts("1,2,3:a\n1,2:b\n"), [], ["T_TRAIN.ts", "@equalLength true",
                                                                               "series 2"]),
    ".ts channels differ between series": (_ts("1,2:1,2:a\n1,2:b\n", HEADER.replace("true\n@eq", "false\n@eq")), [],
                                           ["T_TRAIN.ts", "line 7", "channel"]),
    ".ts value not a number": (_ts("1,x,3:a\n"), [], ["T_TRAIN.ts", "line 6", "'x'"]),
    ".ts without @data": (_ts("", "@problemName t\n"), [], ["T_TRAIN.ts", "@data"]),
    "npz without y": (_npz(X=np.zeros((4, 2))), [], ["d.npz", "needs X", "y"]),
    "npz X and y lengths differ": (_npz(X=np.zeros((4, 2)), y=np.zeros(3)), [], ["d.npz", "4 inputs but 3 targets"]),
    "npz NaN target": (_npz(X=np.zeros((4, 2)), y=np.array([1.0, np.nan, 0.0, 1.0])), [], ["d.npz", "y is missing at index 1"]),
    "unknown file format": (lambda r: (r / "d.xlsx").write_text("x") and r / "d.xlsx", [], ["d.xlsx", ".csv"]),
    "no such file": (lambda r: r / "missing.csv", [], ["missing.csv", "no such file"]),
    "bad split column": (_csv("a,label,split\n1,x,train\n2,y,holdout\n"), [], ["d.csv", "'split'", "'holdout'"]),
    "regression on text labels": (_csv("a,label\n" + TABLE.replace(",", ";")[:0] + "1,x\n2,y\n3,x\n4,y\n5,x\n"),
                                  ["--objective", "regression"], ["d.csv", "'label'", "not numeric"]),
    "targets mix classification and regression": (
        _csv("a,c,r\n" + "".join(f"{i},{'xy'[i % 2]},{i * 0.37:.2f}\n" for i in range(30))), ["--target", "c,r"],
        ["d.csv", "mix classification and regression"]),
    "class only in the data's own test split": (_own_split_unseen_class, [], ["train.csv", "'z'", "only in"]),
    "every column a target": (_csv("a,b\n1,2\n"), ["--target", "a,b"], ["d.csv", "every column is a target"]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_malformed_data_is_one_clear_line(name, tmp_path, capsys):
    write, flags, words = CASES[name]
    path = write(tmp_path)
    rc = main(["data", "--data", str(path), *flags])
    err = capsys.readouterr().err.strip()
    assert rc == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for word in words:
        assert word in err, (word, err)


def test_data_options_need_data_and_no_other_task(capsys):
    assert main(["train", "--patch-size", "8", "--steps", "1"]) == 2
    assert "apply only to your own dataset" in capsys.readouterr().err
    assert main(["train", "--task", "listops", "--data", "x.csv"]) == 2
    assert "drop --task" in capsys.readouterr().err
    assert main(["train", "--task", "data", "--steps", "1"]) == 2
    assert "--data PATH" in capsys.readouterr().err


WIDE = "patient id,Mean Radius,mean texture,worst area,Diagnosis\n" + "".join(
    f"{i},{i * 0.5},{i % 3},{i * 2},{'ab'[i % 2]}\n" for i in range(12))


@pytest.mark.parametrize("args, hint", [
    (["--target", "diagnosis"], "no column 'diagnosis' (did you mean 'Diagnosis'?)"),  # letter case
    (["--target", "Diagnosis", "--drop-columns", "patientid"], "(did you mean 'patient id'?)"),  # a space
    (["--target", "Diagnosis", "--drop-columns", "mean radius"], "(did you mean 'Mean Radius'?)"),
    (["--target", "Diagnosis", "--drop-columns", "worst aera"], "(did you mean 'worst area'?)"),  # a near spelling
])
def test_a_column_named_almost_right_says_which_was_meant(tmp_path, capsys, args, hint):
    """The list of columns the error printed hid the one meant among dozens (breast cancer's 30)."""
    (tmp_path / "d.csv").write_text(WIDE)
    assert main(["data", "--data", str(tmp_path / "d.csv"), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and hint in err, err


def test_a_column_named_nothing_like_any_says_no_more_than_the_columns(tmp_path, capsys):
    (tmp_path / "d.csv").write_text(WIDE)
    assert main(["data", "--data", str(tmp_path / "d.csv"), "--target", "price"]) == 2
    err = capsys.readouterr().err
    assert "did you mean" not in err and "its columns are patient id" in err

"""A series archive file is classification unless the file (.ts @targetLabel) or the user says otherwise; an
objective read from the values is said in one line with its override (issue 38, item 1)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from fpt.data.base import ObjectiveInferred
from fpt.tasks import build_task


def data(path, **options):
    return build_task("data", {"data": str(path), **options}, 0)


def write_ucr_tsv(folder: Path, name: str, classes: int, per_class: int = 2, length: int = 12) -> Path:
    """The UCR 2018 archive's layout: NAME/NAME_TRAIN.tsv and NAME_TEST.tsv, no header, the integer label first,
    then the values, tab-separated (PigCVP: 52 classes labelled 1..52, two training series each)."""
    rng = np.random.default_rng(classes)
    folder.mkdir(parents=True, exist_ok=True)
    for split in ("TRAIN", "TEST"):
        lines = [f"{c}\t" + "\t".join(f"{v:.6f}" for v in rng.normal(c, 1, length))
                 for c in range(1, classes + 1) for _ in range(per_class)]
        (folder / f"{name}_{split}.tsv").write_text("\n".join(lines) + "\n")
    return folder / f"{name}_TRAIN.tsv"


@pytest.mark.parametrize("classes", [2, 21, 52, 60])
def test_ucr_tsv_integer_labels_classify_however_many(tmp_path, classes):
    path = write_ucr_tsv(tmp_path / "PigCVP", "PigCVP", classes)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ObjectiveInferred)  # the file says what the target is: no guess to announce
        d = data(path, series_patch=4)
    assert d.info["objective"] == "classification" and "UCR .tsv" in d.info["objective_from"]
    assert len(d.info["classes"]["target"]) == classes and d.spec.num_classes == classes
    assert d.info["split_sizes"]["test"] == classes * 2


def test_user_objective_wins_over_the_archive(tmp_path):
    path = write_ucr_tsv(tmp_path / "PigCVP", "PigCVP", 52)
    d = data(path, series_patch=4, objective="regression")
    assert d.info["objective"] == "regression" and d.info["objective_from"] == "given"


def ts_file(path: Path, header: str, labels: list[str]) -> Path:
    rows = "".join(f"{i},{i + 1},{i % 3},{i + 2}:{label}\n" for i, label in enumerate(labels))
    path.write_text(f"@problemName toy\n@timeStamps false\n@univariate true\n@equalLength true\n{header}\n@data\n{rows}")
    return path


def test_ts_class_labels_classify_and_target_labels_regress(tmp_path):
    labels = [str(1 + i % 30) for i in range(90)]
    d = data(ts_file(tmp_path / "C_TRAIN.ts", "@classLabel true " + " ".join(map(str, range(1, 31))), labels),
             series_patch=2)
    assert d.info["objective"] == "classification" and len(d.info["classes"]["target"]) == 30
    values = [str(i % 7) for i in range(40)]  # few distinct integers: a table would classify them
    d = data(ts_file(tmp_path / "R_TRAIN.ts", "@classLabel false\n@targetLabel true", values), series_patch=2)
    assert d.info["objective"] == "regression" and "@targetLabel" in d.info["objective_from"]


def test_values_decide_elsewhere_and_say_so_with_the_override(tmp_path):
    rows = ["x,y"] + [f"{i * 0.1:.2f},{i % 30}" for i in range(90)]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    with pytest.warns(ObjectiveInferred, match=r"objective regression, inferred from the values .*--objective "
                                               r"classification"):
        d = data(tmp_path / "t.csv")
    assert d.info["objective"] == "regression"
    # a UCR .tsv whose labels are not whole numbers is not a class list: the values decide, and say so
    lines = [f"{0.5 + i * 0.37:.2f}\t" + "\t".join(str(v) for v in range(6)) for i in range(40)]
    (tmp_path / "Q_TRAIN.tsv").write_text("\n".join(lines) + "\n")
    with pytest.warns(ObjectiveInferred, match="regression"):
        assert data(tmp_path / "Q_TRAIN.tsv", series_patch=2).info["objective"] == "regression"


def test_cli_prints_the_inferred_objective_as_one_note(tmp_path, capsys):
    from fpt.cli import main

    rows = ["x,label"] + [f"{i * 0.1:.2f},{i % 2}" for i in range(40)]  # 0/1: a class, or a quantity?
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    assert main(["data", "--data", str(tmp_path / "t.csv")]) == 0
    err = capsys.readouterr().err
    notes = [line for line in err.splitlines() if "note:" in line]
    assert len(notes) == 1 and notes[0].startswith("fpt data: note: ") and "--objective regression" in notes[0]
    assert "ObjectiveInferred" not in err


def test_text_labels_need_no_note(tmp_path):
    rows = ["x,label"] + [f"{i * 0.1:.2f},{'ab'[i % 2]}" for i in range(40)]  # text can only be classes
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ObjectiveInferred)
        assert data(tmp_path / "t.csv").info["objective"] == "classification"


def test_one_example_per_class_is_not_taken_for_an_identifier(tmp_path):
    """UCR's Fungi: 18 classes, one training series each. The file says they are class labels, so the identifier
    guard does not fire; what stops it is that no class can spare a validation example, said as such."""
    from fpt.errors import DataError

    path = write_ucr_tsv(tmp_path / "Fungi", "Fungi", 18, per_class=1)
    with pytest.raises(DataError, match="too few examples to hold any out for a val split"):
        data(path, series_patch=4)

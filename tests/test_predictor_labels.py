"""Predictor.score(X, y) with labels of another type than training's (issue 38, item 3): labels that match the
trained classes by their text score; labels that cannot match are an error naming both, never a silent 0.0."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import fpt
from fpt.cli import main
from fpt.errors import SchemaError

STEPS = ["--init", "random", "--steps", "4", "--eval-every", "2", "--batch-size", "8", "--device", "cpu", "--quiet"]


@pytest.fixture(scope="module")
def ucr_run(tiny_bert_dir, tmp_path_factory) -> tuple[Path, Path]:
    """A model trained on a UCR .tsv, whose labels 1, 2, 3 are read as the text '1', '2', '3' (as aeon reads them)."""
    root = tmp_path_factory.mktemp("labels")
    rng = np.random.default_rng(0)
    for split, n in (("TRAIN", 30), ("TEST", 12)):
        lines = [f"{1 + i % 3}\t" + "\t".join(f"{v:.4f}" for v in rng.normal(i % 3, 1, 10)) for i in range(n)]
        (root / f"Toy_{split}.tsv").write_text("\n".join(lines) + "\n")
    assert main(["train", "--data", str(root / "Toy_TRAIN.tsv"), "--body", tiny_bert_dir, *STEPS,
                 "--out", str(root / "run")]) == 0
    return root / "run", root / "Toy_TEST.tsv"


def test_integer_labels_score_against_text_classes_as_the_file_does(ucr_run):
    run, test = ucr_run
    model = fpt.load(run)
    assert model.classes == [["1", "2", "3"]]
    from fpt.data.timeseries import read_ucr_tsv

    series, labels, _ = read_ucr_tsv(test)
    expected = model.score(test)["accuracy"]  # the file's own labels, as fpt eval scores them
    assert model.score(series, labels) == pytest.approx(expected)
    assert model.score(series, labels.astype(int)) == pytest.approx(expected)  # was 0.0, silently
    assert model.score(series, labels.astype(float)) == pytest.approx(expected)  # 1.0 is the label 1


def test_labels_that_match_no_class_name_both(ucr_run):
    run, test = ucr_run
    model = fpt.load(run)
    from fpt.data.timeseries import read_ucr_tsv

    series, labels, _ = read_ucr_tsv(test)
    with pytest.raises(SchemaError, match=r"trained on \['1', '2', '3'\].*y holds \['a', 'b'\]"):
        model.score(series, np.array(["a", "b"] * 6))
    with pytest.raises(SchemaError, match=r"label 7 is not one of the model's classes"):
        model.score(series, labels.astype(int) + 6)


def test_a_new_file_whose_column_differs_in_case_says_to_rename_it(tmp_path, tiny_bert_dir):
    """A feature missing from new inputs, and a column of the same name but its case there: the error names both."""
    import pandas as pd

    frame = pd.DataFrame({"age": np.arange(30) % 7 * 1.5, "size": np.arange(30) % 5 * 1.0,
                          "label": ["ab"[i % 2] for i in range(30)]})
    fpt.fit(fpt.build(data=frame, body=tiny_bert_dir, init="random", fit="closed-form", baselines="none",
                      device="cpu"), out=tmp_path / "run", progress=False)
    frame.drop(columns="label").rename(columns={"age": "Age"}).to_csv(tmp_path / "new.csv", index=False)
    with pytest.raises(SchemaError, match=r"no column 'age' \(the input has 'Age': rename it to 'age'\)"):
        fpt.load(tmp_path / "run").predict(str(tmp_path / "new.csv"))

"""Series as aeon, sktime, tslearn and UCR users bring them, beyond the formats' own tests: a UCR .tsv of series to
predict without labels, ..."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from fpt.data.timeseries import check_series, read_series_inputs
from fpt.errors import SchemaError


def _checks(lengths: str, classes: list[str] | None = ("1", "2")) -> SimpleNamespace:  # type: ignore[assignment]
    schema = SimpleNamespace(prep=SimpleNamespace(tokeniser=SimpleNamespace(channels=1),
                                                  classes=[list(classes)] if classes else None),
                             info={"train_lengths": lengths})
    return SimpleNamespace(schema=schema, arrays=lambda x, where: check_series(x, schema, where),
                           labels=lambda y, where: None)


def _tsv(path, rows: list[list[float | str]]):  # noqa: ANN202
    path.write_text("".join("\t".join(str(v) for v in row) + "\n" for row in rows))
    return path


def test_a_ucr_tsv_of_values_alone_is_predicted_not_read_label_first(tmp_path):
    """A UCR .tsv without labels had its first value read as the label: a model of 4 points said the series had 3."""
    rng = np.random.default_rng(0)
    values = rng.normal(size=(3, 4)).round(3)
    read = read_series_inputs(_tsv(tmp_path / "new.tsv", values.tolist()), _checks("4..4"))
    assert read.y is None and [s.shape for s in read.x] == [(1, 4)] * 3
    np.testing.assert_allclose(read.x[0][0], values[0], rtol=1e-6)  # the first value is a point, not a label
    read = read_series_inputs(_tsv(tmp_path / "labelled.tsv", [[1, *values[0]], [2, *values[1]]]), _checks("4..4"))
    assert read.y[:, 0].tolist() == ["1", "2"] and read.x[0].shape == (1, 4)
    regression = _checks("4..4", classes=None)  # a first value that is a number told nothing: the count decides
    assert read_series_inputs(_tsv(tmp_path / "r.tsv", values.tolist()), regression).y is None


@pytest.mark.parametrize(("rows", "message"), [
    ([[0.1, 0.2, 0.3]] * 2, r"new\.tsv, line 1: 3 values, but every training series had 4 points: a line of a UCR "
                            r"\.tsv is a label and the series' 4 points \(5 values\), or, to predict without scoring, "
                            r"the 4 points alone"),
    ([[0.1, 0.2, 0.3, 0.4], [1, 0.1, 0.2, 0.3, 0.4]], r"new\.tsv, line 2: 5 values"),
    ([[1, 0.2, 0.3, 0.4], [2, 0.2, 0.3, 0.4]], r"every line has 4 values and starts with one of the model's classes: as "
                                               r"a label, the series that follows has 3 points"),
])
def test_a_ucr_tsv_that_fits_neither_layout_names_the_line(rows, message, tmp_path):
    with pytest.raises(SchemaError, match=message):
        read_series_inputs(_tsv(tmp_path / "new.tsv", rows), _checks("4..4"))


def test_a_varied_length_model_says_why_a_tsv_needs_its_labels(tmp_path):
    """Series of varied lengths: the count cannot tell, so a first value that is not a class names the layout."""
    path = _tsv(tmp_path / "new.tsv", [[1, 0.5, 0.25], [0.75, 0.5, 0.25, 0.1]])
    with pytest.raises(SchemaError, match=r"new\.tsv, line 2: '0\.75' is not one of the model's classes \(1, 2\); a "
                                          r"UCR \.tsv line starts with its label.*@classLabel false"):
        read_series_inputs(path, _checks("3..6"))
    read = read_series_inputs(_tsv(tmp_path / "ok.tsv", [[1, 0.5, 0.25], [2, 0.5, 0.25, 0.1]]), _checks("3..6"))
    assert read.y[:, 0].tolist() == ["1", "2"] and [s.shape[1] for s in read.x] == [2, 3]


@pytest.fixture(scope="module")
def ucr_run(tiny_bert_dir, tmp_path_factory):  # noqa: ANN201
    """A tiny model of a UCR .tsv pair of 12-point series (classes '1', '2')."""
    import fpt

    root = tmp_path_factory.mktemp("ucr")
    rng = np.random.default_rng(2)
    for split in ("TRAIN", "TEST"):
        _tsv(root / f"U_{split}.tsv", [[i % 2 + 1, *(rng.normal(size=12) + i % 2).round(3)] for i in range(20)])
    exp = fpt.build(data=str(root / "U_TRAIN.tsv"), body=tiny_bert_dir, init="random", steps=2, eval_every=2,
                    device="cpu", fit="gradient", baselines="none")
    fpt.fit(exp, out=root / "run", progress=False)
    return root


def test_fpt_predict_on_a_ucr_test_file_without_labels(ucr_run, tmp_path, capsys):
    from fpt.cli import main

    rows = [line.split("\t") for line in (ucr_run / "U_TEST.tsv").read_text().splitlines()]
    _tsv(tmp_path / "new.tsv", [row[1:] for row in rows])  # the TEST file with its labels cut off
    assert main(["predict", str(ucr_run / "run"), str(tmp_path / "new.tsv"), "--out", str(tmp_path / "p.csv")]) == 0
    assert "accuracy" not in capsys.readouterr().out
    assert main(["predict", str(ucr_run / "run"), str(ucr_run / "U_TEST.tsv"), "--out", str(tmp_path / "q.csv")]) == 0
    assert "accuracy" in capsys.readouterr().out
    unlabelled, labelled = (np.loadtxt(tmp_path / f, delimiter=",", skiprows=1) for f in ("p.csv", "q.csv"))
    np.testing.assert_allclose(unlabelled, labelled)  # the same series read, so the same predictions

"""Series as aeon, sktime, tslearn and UCR users bring them, beyond the formats' own tests: a UCR .tsv of series to
predict without labels, sktime's nested and multi-indexed DataFrames of series, ..."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from fpt.data.inputs import CutInputWarning
from fpt.data.memory import from_memory
from fpt.data.timeseries import TargetsRead, check_series, read_series_inputs, read_ts
from fpt.errors import DataError, SchemaError


def _checks(lengths: str, classes: list[str] | None = ("1", "2"),  # type: ignore[assignment]
            no_targets: bool = False) -> SimpleNamespace:
    schema = SimpleNamespace(prep=SimpleNamespace(tokeniser=SimpleNamespace(channels=1),
                                                  classes=[list(classes)] if classes else None),
                             info={"train_lengths": lengths})
    return SimpleNamespace(schema=schema, arrays=lambda x, where: check_series(x, schema, where),
                           labels=lambda y, where: None, no_targets=no_targets)


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


def test_no_targets_reads_every_field_of_a_varied_length_tsv_as_a_value(tmp_path):
    """A regression model of varied lengths read a .tsv of the series alone label first, silently: its first value
    became the target and the series lost it (scored against it). --no-targets (no_targets=True) says there are none;
    without it, the reading is said in a note. A classifier's file of values alone is read the same way."""
    path = _tsv(tmp_path / "new.tsv", [[0.5, 0.25, 0.125], [0.75, 0.5, 0.25, 0.1]])
    regression = _checks("3..6", classes=None, no_targets=True)
    read = read_series_inputs(path, regression)
    assert read.y is None and [s.shape[1] for s in read.x] == [3, 4] and not read.notes
    np.testing.assert_allclose(read.x[0][0], [0.5, 0.25, 0.125])
    with pytest.warns(TargetsRead, match=r"new\.tsv: read each line's first field as its target .*--no-targets"):
        read = read_series_inputs(path, _checks("3..6", classes=None))
    assert read.y[:, 0].tolist() == ["0.5", "0.75"] and read.notes[0].endswith("give --no-targets")
    read = read_series_inputs(path, _checks("3..6", no_targets=True))  # a classifier: no longer refused
    assert read.y is None and [s.shape[1] for s in read.x] == [3, 4]
    ts = tmp_path / "new.ts"  # a .ts whose header says @classLabel true, lines without their labels
    ts.write_text("@problemName t\n@univariate true\n@classLabel true 1 2\n@data\n0.5,0.25,0.125\n0.75,0.5,0.25,0.1\n")
    with pytest.raises(DataError, match=r"no ':' before the target"):
        read_series_inputs(ts, _checks("3..6"))
    assert read_series_inputs(ts, _checks("3..6", no_targets=True)).y is None


@pytest.fixture(scope="module")
def regression_run(tiny_bert_dir, tmp_path_factory):  # noqa: ANN201
    """A tiny regression model of a .ts of varied-length series (@targetLabel true)."""
    import fpt

    root = tmp_path_factory.mktemp("reg")
    rng = np.random.default_rng(3)
    lines = [",".join(map(str, rng.normal(size=5 + i % 4).round(3))) + f":{i * 0.5}" for i in range(24)]
    (root / "R_TRAIN.ts").write_text("@problemName r\n@univariate true\n@equalLength false\n@targetLabel true\n"
                                     "@data\n" + "\n".join(lines) + "\n")
    exp = fpt.build(data=str(root / "R_TRAIN.ts"), body=tiny_bert_dir, init="random", device="cpu",
                    fit="closed-form", baselines="none")
    fpt.fit(exp, out=root / "run", progress=False)
    return root


def test_fpt_predict_no_targets_on_a_regression_model_of_varied_lengths(regression_run, tmp_path, capsys):
    import json

    import fpt
    from fpt.cli import main

    rows = [[0.1, 0.2, 0.3, 0.4, 0.5], [0.5, 0.4, 0.3, 0.2, 0.1, 0.0, 0.2]]
    _tsv(tmp_path / "new.tsv", rows)
    run = str(regression_run / "run")
    assert main(["predict", run, str(tmp_path / "new.tsv"), "--no-targets", "--out", str(tmp_path / "p.csv")]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out.splitlines()[0]) == {"rows": 2} and "first field" not in out.err
    model = fpt.load(run)
    expected = model.predict([np.array(r) for r in rows])  # the series as arrays: no label to mistake
    np.testing.assert_allclose(pd.read_csv(tmp_path / "p.csv")["prediction"], expected, rtol=1e-4)
    np.testing.assert_allclose(model.predict(str(tmp_path / "new.tsv"), no_targets=True), expected, rtol=1e-6)
    assert main(["predict", run, str(tmp_path / "new.tsv"), "--out", str(tmp_path / "q.csv")]) == 0  # as before
    out = capsys.readouterr()
    assert "r2" in out.out and "read each line's first field as its target" in out.err and "--no-targets" in out.err
    # a layout that shows its targets: the declaration contradicts it
    np.savez(tmp_path / "x.npz", X=np.ones((2, 1, 5)), y=np.array([1.0, 2.0]))
    assert main(["predict", run, str(tmp_path / "x.npz"), "--no-targets", "--out", str(tmp_path / "r.csv")]) == 2
    assert "x.npz: --no-targets says it holds no targets" in capsys.readouterr().err
    # fpt.load(...).predict's words: its argument (both were given to either: --no-targets (Python: no_targets=True))
    with pytest.raises(SchemaError, match=r"x\.npz: no_targets=True says it holds no targets"):
        model.predict(str(tmp_path / "x.npz"), no_targets=True)
    with pytest.warns(TargetsRead) as seen:
        model.predict(str(tmp_path / "new.tsv"))
    assert str(seen[0].message).endswith("if the lines hold the series alone, give no_targets=True")


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


def _nested(n: int = 24, lengths: tuple[int, int] = (20, 20), seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """sktime's "nested_univ" X: a row per series, a column per channel, each cell a pd.Series; class b is higher."""
    rng = np.random.default_rng(seed)
    y = np.array(["a", "b"] * (n // 2))
    size = [int(rng.integers(lengths[0], lengths[1] + 1)) for _ in range(n)]
    return pd.DataFrame({f"dim_{c}": [pd.Series(rng.normal(size=size[i]) + (y[i] == "b")) for i in range(n)]
                         for c in range(2)}), y


def _multiindex(nested: pd.DataFrame) -> pd.DataFrame:
    """The same series as sktime's "pd-multiindex": a row per time point, indexed by (instances, timepoints)."""
    frames = [pd.DataFrame({c: nested[c].iloc[i].to_numpy() for c in nested.columns}).assign(instances=i)
              for i in range(len(nested))]
    long = pd.concat(frames).rename_axis("timepoints").reset_index()
    return long.set_index(["instances", "timepoints"])


def _read(data, **kw):  # noqa: ANN001, ANN202
    return from_memory(data, kw.pop("target", None), "auto", "auto", 32, **kw)


def test_sktime_dataframes_of_series_are_series_not_a_table():
    """A nested DataFrame was read as a table of two text columns (each cell a Series, a category of its own) and
    trained without a word; with its target as a column it was a TypeError from pandas; a multi-index one had '480
    inputs but 24 targets'."""
    nested, y = _nested()
    raw = _read((nested, y))
    assert raw.modality == "timeseries" and raw.notes["channels"] == 2 and raw.notes["train_lengths"] == "20..20"
    np.testing.assert_allclose(raw.splits["train"].x[3][1], nested["dim_1"].iloc[3].to_numpy(), rtol=1e-6)
    with_target = _read(nested.assign(class_val=y), target="class_val")
    assert with_target.modality == "timeseries" and with_target.splits["train"].y[:, 0].tolist() == y.tolist()
    multi = _read((_multiindex(nested), y))
    np.testing.assert_allclose(np.stack(multi.splits["train"].x), np.stack(raw.splits["train"].x))
    long = _read(_multiindex(nested).assign(label=np.repeat(y, 20)))  # the target on each row: the long format
    assert long.modality == "timeseries" and long.notes["series_id"] == ["instances", "timepoints"]
    ragged, y = _nested(lengths=(8, 16))
    assert sorted({s.shape[1] for s in _read((ragged, y)).splits["train"].x}) != [20]


def test_a_table_with_a_two_level_index_stays_a_table():
    rng = np.random.default_rng(0)
    panel = pd.DataFrame({"a": rng.normal(size=40), "sales": rng.normal(size=40)},
                         index=pd.MultiIndex.from_product([range(4), range(10)], names=["store", "day"]))
    assert _read(panel, target="sales").modality == "tabular"  # a target per row, not per store
    assert _read((panel[["a"]], panel["sales"].to_numpy())).modality == "tabular"


@pytest.mark.parametrize(("frame", "message"), [
    (pd.DataFrame({"dim_0": [pd.Series([1.0, 2.0]), pd.Series([1.0])], "dim_1": [pd.Series([1.0]), pd.Series([2.0])]}),
     r"X\.iloc\[0\]: channels of \[1, 2\] points in one series"),
    (pd.DataFrame({"dim_0": [pd.Series(["x", "y"]), pd.Series(["z"])]}), r"X\.iloc\[0\]: a cell that is not a series of numbers"),
    (pd.DataFrame({"c": ["x"] * 4}, index=pd.MultiIndex.from_product([range(2), range(2)])), r"column 'c' is not numbers"),
])
def test_a_dataframe_of_series_that_cannot_be_read_is_one_line(frame, message):
    with pytest.raises(DataError, match=message):
        _read((frame, np.arange(2)))


def test_a_model_of_sktime_frames_predicts_them(tiny_bert_dir, tmp_path):
    import fpt
    from fpt.sklearn import FPTClassifier

    nested, y = _nested()
    exp = fpt.build(data=(nested, y), body=tiny_bert_dir, init="random", steps=2, eval_every=2, device="cpu",
                    baselines="none")
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    np.testing.assert_array_equal(model.predict(nested.head(5)), model.predict(_multiindex(nested.head(5))))
    assert 0 <= model.score(nested, y) <= 1
    clf = FPTClassifier(body=tiny_bert_dir, init="random", steps=2, eval_every=2, device="cpu").fit(nested, y)
    assert clf.n_features_in_ == 2
    np.testing.assert_array_equal(clf.predict(nested.head(5)), clf.predict(_multiindex(nested.head(5))))


def test_a_frame_of_series_is_read_by_its_channels_names(tiny_bert_dir, tmp_path):
    """A DataFrame of series whose channel columns come in another order than training's was read column by column
    as it came: each channel where another was trained, predictions without a word. Its channels are now read by
    name (fpt.load's model and the estimators); other names are an error naming both."""
    import fpt
    from fpt.sklearn import FPTClassifier

    nested, y = _nested()
    nested["dim_1"] = [s * 10 + 5 for s in nested["dim_1"]]  # channels of different scales: a swap changes the tokens
    swapped = nested[["dim_1", "dim_0"]]
    exp = fpt.build(data=(nested, y), body=tiny_bert_dir, init="random", steps=2, eval_every=2, device="cpu",
                    baselines="none")
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    for X in (nested, _multiindex(nested)):
        np.testing.assert_array_equal(model.logits(X), model.logits(X[["dim_1", "dim_0"]]))
    with pytest.raises(SchemaError, match="dim_0, dim_1"):
        model.predict(swapped.rename(columns={"dim_1": "other"}))
    clf = FPTClassifier(body=tiny_bert_dir, init="random", fitting="gradient", steps=2, eval_every=2,
                        device="cpu").fit(nested, y)
    np.testing.assert_array_equal(clf.predict_proba(nested), clf.predict_proba(swapped))
    with pytest.raises(SchemaError, match="dim_0, dim_1"):
        clf.predict(swapped.rename(columns={"dim_1": "other"}))


@pytest.mark.parametrize(("series", "what"), [(np.zeros((1, 0)), "no points"),
                                              (np.full((1, 12), np.nan), "every point missing")])
def test_a_series_with_no_values_is_not_predicted(series, what, ucr_run):
    """Training refuses a series with no values; at predict it was given a class from its padding alone."""
    import fpt

    model = fpt.load(ucr_run / "run")
    ok = np.random.default_rng(0).normal(size=(1, 12))
    with pytest.raises(SchemaError, match=rf"inputs: inputs\[1\] has no values \({what}\); give it values or leave it"):
        model.predict([ok, series])
    assert model.predict([ok, np.where(np.arange(12) < 6, np.nan, ok)]).shape == (2,)  # a missing part is fine


def test_a_run_trained_on_a_list_of_series_loads(tiny_bert_dir, tmp_path):
    """fpt.build(data=(list of series, y)) wrote X_shape [n, 'series of different lengths'], which loading reads as
    a damaged summary.json: the run could not predict at all."""
    import json

    import fpt

    rng = np.random.default_rng(0)
    X, y = [rng.normal(size=(1, 5 + i % 3)) for i in range(24)], np.arange(24) % 2
    fpt.fit(fpt.build(data=(X, y), body=tiny_bert_dir, init="random", steps=2, eval_every=2, device="cpu",
                      baselines="none"), out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    padded = np.full((3, 1, 7), np.nan)  # the same series as tslearn pads them into one array
    for i in range(3):
        padded[i, :, : X[i].shape[1]] = X[i]
    with warnings.catch_warnings():
        warnings.simplefilter("error", CutInputWarning)  # the padding is not a longer series cut
        np.testing.assert_array_equal(model.predict_proba(padded), model.predict_proba(X[:3]))
    summary = tmp_path / "run" / "summary.json"
    doc = json.loads(summary.read_text())
    assert "X_shape" not in doc["task_info"] and doc["task_info"]["train_lengths"] == "5..7"
    doc["task_info"]["X_shape"] = [24, "series of different lengths"]  # as runs saved before wrote it
    summary.write_text(json.dumps(doc))
    assert fpt.load(tmp_path / "run").predict(X[:3]).shape == (3,)


def test_nan_padding_ends_a_shorter_series_as_in_a_ucr_tsv():
    """tslearn pads shorter series with NaN to one array: read as missing points, every series was the longest one's
    length (its tail the training mean) and a model of equal lengths refused the series unpadded."""
    from fpt.data.arrays import from_arrays

    rng = np.random.default_rng(0)
    X = rng.normal(size=(10, 2, 30))
    for i in range(10):
        X[i, :, 20 + i:] = np.nan  # series i has 20 + i points
    X[4, 1, 10] = X[5, 0, 24] = np.nan  # missing points inside a series (one channel of a time) stay missing
    raw = from_arrays({"X": X, "y": np.arange(10) % 2}, "auto", "auto", 32, "d", "arrays")
    assert [s.shape[1] for s in raw.splits["train"].x] == [20 + i for i in range(10)]
    assert raw.notes["train_lengths"] == "20..29" and np.isnan(raw.splits["train"].x[4][1, 10])
    X[3] = np.nan
    with pytest.raises(DataError, match=r"^d \(X, y\): X\[3\] has no values \(every point missing\)"):
        from_arrays({"X": X, "y": np.arange(10) % 2}, "auto", "auto", 32, "d", "arrays")


def test_nan_padding_at_predict_is_read_as_training_read_it():
    padded = np.array([[0.5, 1.0, np.nan, np.nan, np.nan, np.nan]])
    varied = _checks("2..6").schema
    assert check_series([padded], varied, "X")[0].shape == (1, 2)
    equal = _checks("4..4").schema
    assert check_series([padded[:, :4]], equal, "X")[0].shape == (1, 4)  # up to the length: missing points
    assert check_series([np.array([[0.5, 1, 2, 3, np.nan, np.nan]])], equal, "X")[0].shape == (1, 4)  # past: padding


def test_a_ts_of_new_series_that_says_targetlabel_false_holds_no_target(tmp_path):
    """The regression archive's header says @targetLabel, not @classLabel: a file of series to predict that said
    @targetLabel false had its last channel read as the target ('1 channel(s), but the model was trained on 2')."""
    path = tmp_path / "new.ts"
    path.write_text("@problemName r\n@univariate false\n@dimensions 2\n@targetLabel false\n@data\n1,2,3:4,5,6\n"
                    "1,2,3,4:4,5,6,7\n")
    checks = _checks("3..4", classes=None)
    checks.schema.prep.tokeniser.channels = 2
    read = read_series_inputs(path, checks)
    assert read.y is None and [s.shape for s in read.x] == [(2, 3), (2, 4)]
    with pytest.raises(DataError, match="no @classLabel/@targetLabel"):  # training still needs the targets
        read_ts(path)

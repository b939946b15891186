"""A table of one series per row (a "wide" CSV) read with --modality timeseries: train, then predict from a table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fpt
from fpt.cli import main
from fpt.data import load
from fpt.errors import DataError, SchemaError


def _wide(path, n=40, length=24, extra=None):
    """id,label,t0..t{length-1}: class b's series oscillate twice as fast; row 3 ends 4 points early (empty cells),
    row 5 has a gap at t2."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(n):
        lab = i % 2
        x = np.sin(np.linspace(0, 6, length) * (1 + lab)) + 0.1 * rng.normal(size=length)
        cells = [f"{v:.4f}" for v in x]
        if i == 3:
            cells[-4:] = [""] * 4
        if i == 5:
            cells[2] = ""
        rows.append([str(1000 + i), "ab"[lab], *cells])
    frame = pd.DataFrame(rows, columns=["id", "label", *[f"t{j}" for j in range(length)]])
    for name, values in (extra or {}).items():
        frame[name] = values
    frame.to_csv(path, index=False)
    return frame


def test_each_row_is_a_series_with_its_columns_as_points(tmp_path):
    _wide(tmp_path / "w.csv")
    assert load(str(tmp_path / "w.csv"), drop_columns="id").modality == "tabular"  # auto: a table stays one
    raw = load(str(tmp_path / "w.csv"), modality="timeseries", drop_columns="id")
    series = raw.splits["train"].x
    assert raw.modality == "timeseries" and raw.targets == ["label"] and len(series) == 40
    assert series[0].shape == (1, 24) and series[0].dtype == np.float32 and series[3].shape == (1, 20)
    assert np.isnan(series[5][0, 2]) and not np.isnan(series[5][0, 3])
    assert raw.notes["train_lengths"] == "20..24" and raw.notes["channels"] == 1
    assert raw.notes["features"][:2] == ["t0", "t1"] and raw.notes["dropped"] == ["id"]


@pytest.mark.parametrize(("extra", "words"), [
    ({"kind": ["x"] * 40}, ["column 'kind' holds text", "--drop-columns"]),
    ({"t24": [np.inf] + [1.0] * 39}, ["column 't24' holds infinite values on row(s) 1"]),
])
def test_a_row_that_is_not_a_series_is_a_one_line_error(tmp_path, extra, words):
    _wide(tmp_path / "w.csv", extra=extra)
    with pytest.raises(DataError) as err:
        load(str(tmp_path / "w.csv"), modality="timeseries", drop_columns="id")
    assert "w.csv" in str(err.value) and all(w in str(err.value) for w in words)


def test_an_empty_row_is_named(tmp_path):
    frame = _wide(tmp_path / "w.csv")
    frame.loc[7, [f"t{j}" for j in range(24)]] = ""
    frame.to_csv(tmp_path / "w.csv", index=False)
    with pytest.raises(DataError, match=r"row 8: a series with no values"):
        load(str(tmp_path / "w.csv"), modality="timeseries", drop_columns="id")


def test_train_on_rows_then_predict_from_a_table_with_or_without_labels(tmp_path, tiny_bert_dir):
    _wide(tmp_path / "w.csv")
    frame = pd.read_csv(tmp_path / "w.csv")  # the points as numbers, the empty cells NaN
    exp = fpt.build(data=str(tmp_path / "w.csv"), modality="timeseries", drop_columns="id", body=tiny_bert_dir,
                    init="random", steps=4, eval_every=2, device="cpu", fit="gradient", baselines="none")
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    points = frame.drop(columns=["id", "label"])
    from_frame = model.predict(points.head(6))
    assert from_frame.shape == (6,) and (from_frame == model.predict(points.to_numpy(dtype=float)[:6])).all()
    assert (model.predict(frame.drop(columns="label").head(6)) == from_frame).all()  # the dropped id read past
    frame.to_csv(tmp_path / "new.csv", index=False)
    assert main(["predict", str(tmp_path / "run"), str(tmp_path / "new.csv"), "--out", str(tmp_path / "p.csv")]) == 0
    assert len(pd.read_csv(tmp_path / "p.csv")) == 40
    with pytest.raises(SchemaError, match="no column 't23'"):
        model.predict(points.drop(columns="t23"))
    frame.to_csv(tmp_path / "new.tsv", sep="\t", index=False)  # a .tsv, which a UCR model would read as its own
    assert (fpt.load(tmp_path / "run").predict(str(tmp_path / "new.tsv")) == model.predict(frame.drop(
        columns="label"))).all()


def test_a_ucr_model_still_reads_a_ucr_tsv_of_any_name(tmp_path, tiny_bert_dir):
    rng = np.random.default_rng(2)
    for split in ("TRAIN", "TEST"):
        lines = [f"{i % 2 + 1}\t" + "\t".join(f"{v:.3f}" for v in rng.normal(size=12)) for i in range(20)]
        (tmp_path / f"U_{split}.tsv").write_text("\n".join(lines) + "\n")
    exp = fpt.build(data=str(tmp_path / "U_TRAIN.tsv"), body=tiny_bert_dir, init="random", steps=2, eval_every=2,
                    device="cpu", fit="gradient", baselines="none")
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    (tmp_path / "new.tsv").write_text((tmp_path / "U_TEST.tsv").read_text())
    assert fpt.load(tmp_path / "run").predict(str(tmp_path / "new.tsv")).shape == (20,)


def test_a_model_of_series_files_refuses_a_table_and_says_what_it_reads(tmp_path, tiny_bert_dir):
    rng = np.random.default_rng(1)
    np.savez(tmp_path / "s.npz", X=rng.normal(size=(30, 1, 16)), y=np.arange(30) % 2)
    exp = fpt.build(data=str(tmp_path / "s.npz"), body=tiny_bert_dir, init="random", steps=2, eval_every=2,
                    device="cpu", fit="gradient", baselines="none")
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    pd.DataFrame(rng.normal(size=(3, 16))).to_csv(tmp_path / "t.csv", index=False)
    with pytest.raises(SchemaError) as err:
        fpt.load(tmp_path / "run").predict(str(tmp_path / "t.csv"))
    text = str(err.value)
    assert "trained on timeseries data from files or arrays, not on a table's columns" in text
    assert "UCR/UEA .ts" in text and ".npz" in text and "table file" not in text

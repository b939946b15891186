"""--series-id ID[,ORDER] (RunConfig.series_id): a long-format table of time series (a row per time point, as tsfresh
and sktime's pd-long keep them) read as one series per id, trained, predicted and exported a prediction per id."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import fpt
from fpt.cli import main
from fpt.data import load
from fpt.errors import ConfigError, DataError, FptError, SchemaError

ACTIVITIES = ["walk", "run", "sit"]


def _long(n=36, seed=1, shuffle=True):
    """Two channels, 3 classes, series of 12-19 points; rows shuffled (the order column puts them back)."""
    rng = np.random.default_rng(seed)
    rows = []
    for sid in range(n):
        k = sid % 3
        for t in range(int(rng.integers(12, 20))):
            rows.append((f"s{sid}", t, np.sin(t * (1 + k) / 3) + rng.normal(0, 0.1), np.cos(t / (1 + k)),
                         ACTIVITIES[k]))
    frame = pd.DataFrame(rows, columns=["id", "t", "acc_x", "acc_y", "activity"])
    return frame.sample(frac=1, random_state=0) if shuffle else frame


def test_rows_become_one_series_per_id_in_the_order_column(tmp_path):
    frame = _long()
    frame.to_csv(tmp_path / "long.csv", index=False)
    raw = load(str(tmp_path / "long.csv"), series_id="id,t")
    train = raw.splits["train"]
    assert raw.modality == "timeseries" and raw.targets == ["activity"] and len(train.x) == 36
    assert raw.notes["features"] == ["acc_x", "acc_y"] and raw.notes["series_id"] == ["id", "t"]
    first = frame.iloc[0]["id"]  # ids in order of first appearance
    want = frame[frame.id == first].sort_values("t")
    assert train.x[0].shape == (2, len(want)) and train.x[0].dtype == np.float32
    np.testing.assert_allclose(train.x[0], want[["acc_x", "acc_y"]].to_numpy().T, rtol=1e-6)
    assert train.y[0, 0] == want.activity.iloc[0]
    # without the order column, the rows' own order: the file's order, here shuffled
    unordered = load(str(tmp_path / "long.csv"), series_id="id").splits["train"]
    assert unordered.x[0].shape == (3, len(want))  # t is a channel then
    np.testing.assert_allclose(unordered.x[0][0], frame[frame.id == first].t.to_numpy())
    # the id as the last column: the default target is the last of the other columns
    frame[["t", "acc_x", "acc_y", "activity", "id"]].to_csv(tmp_path / "last.csv", index=False)
    assert load(str(tmp_path / "last.csv"), series_id="id,t").targets == ["activity"]


def test_timestamps_written_as_text_order_the_rows(tmp_path):
    frame = _long()
    frame["t"] = (pd.Timestamp("2024-03-01 08:00") + pd.to_timedelta(frame["t"] * 90, unit="s")).astype(str)
    frame.to_csv(tmp_path / "long.csv", index=False)
    raw = load(str(tmp_path / "long.csv"), series_id="id,t")
    first = frame.iloc[0]["id"]
    want = frame[frame.id == first].sort_values("t")
    np.testing.assert_allclose(raw.splits["train"].x[0], want[["acc_x", "acc_y"]].to_numpy().T, rtol=1e-6)


def test_train_predict_and_export_a_prediction_per_id(tmp_path, tiny_bert_dir):
    frame = _long()
    frame.to_csv(tmp_path / "long.csv", index=False)
    exp = fpt.build(data=str(tmp_path / "long.csv"), series_id="id,t", body=tiny_bert_dir, init="random",
                    fit="closed-form", baselines="none", device="cpu")
    assert exp.config.series_id == "id,t"
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    assert json.loads((tmp_path / "run" / "data.json").read_text())["series_id"] == ["id", "t"]
    new = frame[frame.id.isin(["s30", "s31", "s35"])].drop(columns="activity")
    new.to_csv(tmp_path / "new.csv", index=False)
    assert main(["predict", str(tmp_path / "run"), str(tmp_path / "new.csv"), "--out", str(tmp_path / "p.csv")]) == 0
    out = pd.read_csv(tmp_path / "p.csv")
    assert list(out.columns[:2]) == ["id", "prediction"] and sorted(out.id) == ["s30", "s31", "s35"]
    model = fpt.load(tmp_path / "run")
    assert list(model.predict(new)) == list(out.prediction)
    assert model.schema.describe()["series_id"] == ["id", "t"]
    # the rows of a series in another order: the same series, the same prediction
    mixed = new.sample(frac=1, random_state=3)
    assert dict(zip(pd.unique(mixed.id), model.predict(mixed), strict=True)) == dict(zip(out.id, out.prediction,
                                                                                           strict=True))
    # scored with its targets: one label per series
    scored = model.predict_file(frame[frame.id.isin(["s30", "s31", "s35"])])
    assert set(scored.metrics) >= {"accuracy"} and scored.rows == 3
    # an export predicts the same from the same table
    assert main(["export", str(tmp_path / "run"), str(tmp_path / "exp")]) == 0
    assert main(["predict", str(tmp_path / "exp"), str(tmp_path / "new.csv"), "--out", str(tmp_path / "e.csv")]) == 0
    assert pd.read_csv(tmp_path / "e.csv").equals(out)


def test_an_in_memory_dataframe_reads_the_same(tmp_path, tiny_bert_dir):
    frame = _long()
    exp = fpt.build(data=frame, series_id="id,t", body=tiny_bert_dir, init="random", fit="closed-form",
                    baselines="none", device="cpu")
    assert exp.data.info["modality"] == "timeseries"
    with pytest.raises(ConfigError, match=r"series_id='id' groups the rows of a long-format table .* no columns"):
        fpt.build(data=(np.zeros((10, 3)), np.arange(10) % 2), series_id="id", body=tiny_bert_dir)


CASES = {
    # name: (change to the frame, series_id, other load options, words the one-line message holds)
    "unknown id column": (None, "sid", {}, ["--series-id names 'sid', which is not a column"]),
    "label changes within a series": ("relabel", "id,t", {}, ["target 'activity' changes within series 's0'"]),
    "two rows at one time": ("duplicate", "id,t", {}, ["series 's0' has two rows at t = 0"]),
    "a row without an id": ("no id", "id,t", {}, ["column 'id' (--series-id) is empty on row(s)"]),
    "text order": ("text order", "id,t", {}, ["column 't' orders each series' rows, but holds text that is not a "
                                             "date or time ('t0')"]),
    "text channel": ("text channel", "id,t", {"target": "activity"}, ["column 'note' holds text; a long-format "
                                                                      "table's (--series-id) feature columns are its "
                                                                      "channels"]),
    "id is the target": (None, "id,t", {"target": "id"}, ["'id' is the target and in --series-id"]),
    "another modality": (None, "id,t", {"modality": "tabular"}, ["--series-id reads a long-format table as time "
                                                                 "series, not tabular"]),
    "id also dropped": (None, "id,t", {"drop_columns": "t"}, ["'t' is in --series-id and --drop-columns"]),
    "a series in two splits": ("split", "id,t", {}, ["series 's0' also has rows in the train split"]),
    "a row id as the series id": ("row id", "row", {"drop_columns": "id"},
                                  ["--series-id row gives every row a series of its own"]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_long_table_that_cannot_be_read_as_series_is_one_line(tmp_path, name, capsys):
    change, series, options, words = CASES[name]
    frame = _long(shuffle=False)
    if change == "relabel":
        frame.loc[frame.index[(frame.id == "s0")][-1], "activity"] = "run"
    elif change == "duplicate":
        frame = pd.concat([frame.iloc[:1], frame])
    elif change == "no id":
        frame["id"] = frame["id"].where(frame.index != 5, None)
    elif change == "text order":
        frame["t"] = "t" + frame["t"].astype(str)
    elif change == "text channel":
        frame["note"] = "x"
    elif change == "row id":
        frame["row"] = np.arange(len(frame))
    elif change == "split":
        frame["split"] = np.where(frame.index % 2 == 0, "train", "test")
    frame.to_csv(tmp_path / "long.csv", index=False)
    with pytest.raises(DataError) as raised:
        load(str(tmp_path / "long.csv"), series_id=series, **options)
    message = str(raised.value)
    assert "long.csv" in message and len(message.splitlines()) == 1
    for word in words:
        assert word in message, (word, message)


def test_series_id_is_a_config_field_that_other_data_refuses(tmp_path):
    with pytest.raises(ConfigError, match="series_id"):
        fpt.config.RunConfig(task="data", data="x.csv", series_id="a,b,c")
    np.savez(tmp_path / "d.npz", X=np.zeros((10, 3)), y=np.arange(10) % 2)
    with pytest.raises(DataError, match=r"d\.npz: --series-id groups the rows of a long-format table"):
        load(str(tmp_path / "d.npz"), series_id="id")


def test_predict_needs_the_id_columns_and_refuses_a_label_per_row(tmp_path, tiny_bert_dir):
    frame = _long()
    fpt.fit(fpt.build(data=frame, series_id="id,t", body=tiny_bert_dir, init="random", fit="closed-form",
                      baselines="none", device="cpu"), out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    with pytest.raises(SchemaError, match="no column 't'"):
        model.predict(frame.drop(columns=["t", "activity"]))
    mixed = frame.copy()
    mixed.loc[mixed.index[mixed.id == "s1"][0], "activity"] = "sit"
    with pytest.raises(SchemaError, match="target 'activity' changes within series 's1'"):
        model.predict_file(mixed)


def test_a_tampered_series_id_in_data_json_is_one_line(tmp_path, tiny_bert_dir):
    frame = _long()
    fpt.fit(fpt.build(data=frame, series_id="id,t", body=tiny_bert_dir, init="random", fit="closed-form",
                      baselines="none", device="cpu"), out=tmp_path / "run", progress=False)
    path = tmp_path / "run" / "data.json"
    saved = json.loads(path.read_text())
    for bad in ("id", [1], ["id", "t", "x"]):
        path.write_text(json.dumps({**saved, "series_id": bad}))
        with pytest.raises(FptError, match=r"data\.json cannot be read \(DataError: data\.json field 'series_id'"):
            fpt.load(tmp_path / "run")

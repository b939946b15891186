"""Tables as practitioners save them, after the reader's last round: spaces after a CSV's commas, Excel's rows of
nothing but commas, JSON records under a key, duration columns, list-of-number columns in Parquet and JSON lines, and
a dict of torch tensor columns. Each was read wrongly or refused with the wrong advice."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
import torch

import fpt
from fpt.cli import main
from fpt.data import load, tables
from fpt.data.base import column_notes
from fpt.data.memory import from_memory
from fpt.data.tokenisers import TabularTokens
from fpt.errors import DataError

CLOSED = {"init": "random", "fit": "closed-form", "baselines": "none", "device": "cpu"}
N = 40


def _frame(n: int = N, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1 = rng.normal(size=n).round(3)
    return pd.DataFrame({"x1": x1, "x2": rng.normal(size=n).round(3), "label": np.where(x1 > 0, "a", "b")})


def _csv(frame: pd.DataFrame, sep: str = ",") -> str:
    lines = [sep.join(frame.columns)] + [sep.join(str(v) for v in row) for row in frame.itertuples(index=False)]
    return "\n".join(lines) + "\n"


# 1 ------------------------------------------------------------------------------------------ spaces after commas


def test_spaces_after_the_commas_are_layout_at_train_and_at_predict(tmp_path, tiny_bert_dir, monkeypatch):
    """'x1, x2, label' was read as columns ' x2' and ' label' (--target label: no such column; by default the
    target ' label' with the classes ' a' and ' b')."""
    frame = _frame()
    (tmp_path / "spaced.csv").write_text(_csv(frame, ", "))
    (tmp_path / "plain.csv").write_text(_csv(frame))
    raw = load(str(tmp_path / "spaced.csv"), target="label")
    assert raw.targets == ["label"] and raw.notes["features"] == ["x1", "x2"]
    assert sorted(set(raw.splits["train"].y[:, 0])) == ["a", "b"]
    assert raw.splits["train"].x["x2"].tolist() == frame.x2.tolist()
    with monkeypatch.context() as m:  # datasets' reader, the reference of fpt's own, reads it the same
        m.setattr(tables, "_csv_table", lambda *a: None)
        reference = tables.read_columns(tmp_path / "spaced.csv")
    ours = tables.read_columns(tmp_path / "spaced.csv")
    assert list(ours) == list(reference) == ["x1", "x2", "label"]
    assert ours["label"].tolist() == reference["label"].tolist() == frame.label.tolist()
    run = tmp_path / "run"
    fpt.fit(fpt.build(data=str(tmp_path / "spaced.csv"), target_column="label", body=tiny_bert_dir, **CLOSED),
            out=run, progress=False)
    model = fpt.load(run)
    spaced, plain = model.predict(str(tmp_path / "spaced.csv")), model.predict(str(tmp_path / "plain.csv"))
    assert spaced.tolist() == plain.tolist() and set(spaced) <= {"a", "b"}


# 2 ------------------------------------------------------------------------------------------ rows of commas


def test_rows_of_nothing_but_commas_are_left_out_in_training_with_a_note(tmp_path):
    """Excel's once-formatted empty rows (',,') were examples of missing values: 'target missing on row(s) 41, 42'."""
    text = _csv(_frame()).splitlines()
    lines = [*text[:11], ",,", *text[11:], ",,", " , ,", ""]
    (tmp_path / "t.csv").write_text("\n".join(lines))
    raw = load(str(tmp_path / "t.csv"), target="label")
    assert len(raw.splits["train"].y) == N
    assert raw.splits["train"].x["x1"].tolist() == _frame().x1.tolist()
    note = f"{tmp_path / 't.csv'}: 3 row(s) hold no value in any column"
    assert any(n.startswith(note) for n in column_notes(raw))


def test_at_predict_rows_of_commas_at_the_end_are_left_out_and_between_rows_refused(tmp_path, tiny_bert_dir, capsys):
    """A prediction per input row, in order: the trailing ones are left out (every row above keeps its
    prediction), one between rows of values is refused (left out, each prediction below it would move up a row)."""
    frame = _frame()
    frame.to_csv(tmp_path / "t.csv", index=False)
    run = tmp_path / "run"
    fpt.fit(fpt.build(data=str(tmp_path / "t.csv"), body=tiny_bert_dir, **CLOSED), out=run, progress=False)
    new = frame.drop(columns="label").head(6)
    (tmp_path / "new.csv").write_text(_csv(new) + ",\n,\n")
    assert main(["predict", str(run), str(tmp_path / "new.csv"), "--out", str(tmp_path / "p.csv")]) == 0
    written = pd.read_csv(tmp_path / "p.csv")
    assert len(written) == 6
    assert written.prediction.tolist() == fpt.load(run).predict(new).tolist()
    assert "2 row(s) hold no value in any column" in capsys.readouterr().err
    lines = _csv(new).splitlines()
    (tmp_path / "gap.csv").write_text("\n".join([*lines[:3], ",", *lines[3:]]) + "\n")
    with pytest.raises(DataError, match=r"gap.csv: row\(s\) 3 under the header hold no value in any column .* "
                                        "between rows of values; .* delete those lines"):
        fpt.load(run).predict(str(tmp_path / "gap.csv"))


# 3 ------------------------------------------------------------------------------------------ JSON under a key


def test_json_records_under_one_key_are_read_as_the_records(tmp_path):
    """{"data": [{...}, ...]} was 'column 'data' mixes types or holds nested values ... give it one type per column'."""
    frame = _frame()
    records = frame.to_dict(orient="records")
    (tmp_path / "t.json").write_text(json.dumps({"data": records}))
    raw = load(str(tmp_path / "t.json"))
    assert raw.targets == ["label"] and raw.notes["features"] == ["x1", "x2"]
    assert raw.splits["train"].x["x1"].tolist() == frame.x1.tolist()
    (tmp_path / "two.json").write_text(json.dumps({"data": records, "version": 2}))
    with pytest.raises(DataError, match=r"two.json: one JSON object whose key\(s\) 'data' hold records, beside "
                                        r"'version'; .* pandas.DataFrame\(obj\['data'\]\).to_json\('x.jsonl', "
                                        r"orient='records', lines=True\)"):
        load(str(tmp_path / "two.json"))


# 4 ------------------------------------------------------------------------------------------ durations


def test_durations_are_read_as_seconds_at_train_and_at_predict(tmp_path, tiny_bert_dir):
    """A timedelta64 column (a DataFrame's, Parquet's duration) was read as a text category per duration ('86
    seconds'): a new duration at predict an unseen category."""
    rng = np.random.default_rng(1)
    seconds = rng.integers(0, 3600, N).astype(float)
    frame = pd.DataFrame({"x": rng.normal(size=N), "wait": pd.to_timedelta(seconds, unit="s"),
                          "label": np.where(seconds > 1800, "long", "short")})
    frame.loc[3, "wait"] = pd.NaT
    frame.to_parquet(tmp_path / "t.parquet")
    raw = load(str(tmp_path / "t.parquet"))
    wait = raw.splits["train"].x["wait"]
    assert wait.dtype == np.float64 and np.isnan(wait[3])
    assert wait[~np.isnan(wait)].tolist() == np.delete(seconds, 3).tolist()
    tok = TabularTokens.fit(raw.splits["train"].x, 50)
    assert [f["kind"] for f in tok.features] == ["numeric", "numeric"]
    as_objects = from_memory(frame.astype({"wait": object}), "label", "auto", "auto", 32).splits["train"].x["wait"]
    np.testing.assert_array_equal(as_objects, wait)
    fpt.fit(fpt.build(data=str(tmp_path / "t.parquet"), body=tiny_bert_dir, **CLOSED), out=tmp_path / "run",
            progress=False)
    model = fpt.load(tmp_path / "run")
    inputs = frame.drop(columns="label")
    in_ms = inputs.assign(wait=inputs.wait.astype("timedelta64[ms]"))  # another unit: the same seconds
    new = pd.DataFrame({"x": [0.0], "wait": [pd.Timedelta(hours=5)]})  # beyond the training range: a number
    assert model.tokens(in_ms)[0].tolist() == model.tokens(str(tmp_path / "t.parquet"))[0].tolist()
    assert model.tokens(new)[0].shape == (1, 2, tok.token_dim)


# 5 ------------------------------------------------------------------------------------------ list columns in files


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_a_list_of_numbers_column_in_a_file_is_a_series_per_row_as_in_a_dataset(suffix, tmp_path, tiny_bert_dir):
    """A datasets.Dataset's List(Value('float')) column is read as a series per row; the same column in Parquet or
    JSON lines was 'column 's' mixes types or holds nested values (list<item: double>)'."""
    datasets = pytest.importorskip("datasets")
    rng = np.random.default_rng(2)
    level = rng.normal(size=N)
    frame = pd.DataFrame({"s": [(level[i] + rng.normal(size=12) * 0.1).round(4).tolist() for i in range(N)],
                          "label": np.where(level > 0, "up", "down")})
    path = tmp_path / f"t{suffix}"
    if suffix == ".parquet":
        frame.to_parquet(path)
    else:
        frame.to_json(path, orient="records", lines=True)
    raw = load(str(path))
    reference = from_memory(datasets.Dataset.from_pandas(frame), None, "auto", "auto", 32)
    assert raw.modality == reference.modality == "timeseries"
    assert raw.notes["channel_names"] == reference.notes["channel_names"] == ["s"]
    assert [x.tolist() for x in raw.splits["train"].x] == [x.tolist() for x in reference.splits["train"].x]
    fpt.fit(fpt.build(data=str(path), body=tiny_bert_dir, **CLOSED), out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    assert model.predict(str(path)).tolist() == model.predict(frame.drop(columns="label")).tolist()


# 6 ------------------------------------------------------------------------------------------ dict of tensors


def test_a_dict_of_torch_tensor_columns_is_a_table_as_a_dict_of_arrays_is(tmp_path, tiny_bert_dir):
    """{"a": torch.tensor(...), "y": ...} was "unknown array 'a'; an .npz holds X, y, ...": a tensor was not taken for
    a column, and a column named y (a target's default name) for an .npz's y without its X."""
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=N).astype(np.float32), rng.normal(size=N).astype(np.float32)
    y = (a > 0).astype(np.int64)
    tensors = {"a": torch.tensor(a, requires_grad=True), "b": torch.tensor(b), "y": torch.tensor(y)}
    raw = from_memory(tensors, None, "auto", "auto", 32)
    arrays = from_memory({"a": a, "b": b, "y": y}, None, "auto", "auto", 32)
    assert raw.modality == arrays.modality == "tabular" and raw.targets == arrays.targets == ["y"]
    assert raw.notes["features"] == ["a", "b"]
    assert raw.splits["train"].x["a"].tolist() == arrays.splits["train"].x["a"].tolist() == a.astype(float).tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fpt.fit(fpt.build(data=tensors, body=tiny_bert_dir, **CLOSED), out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    new = {"a": torch.tensor(a[:5], requires_grad=True), "b": torch.tensor(b[:5])}
    assert model.predict(new).tolist() == model.predict({"a": a[:5], "b": b[:5]}).tolist()

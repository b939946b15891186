"""The habits of people coming from PyTorch, NumPy and Hugging Face ``datasets``, applied to fpt's Python API
(fpt.build(data=...), the scikit-learn estimators, fpt.load(RUN).predict): each is read as what it means, or refused
in one line naming the fix, never read as something else without a word."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import fpt
from fpt.errors import ConfigError, DataError, SchemaError

TINY = {"init": "random", "steps": 3, "eval_every": 3, "batch_size": 8, "device": "cpu", "baselines": "none",
        "objective": "classification"}


def _data(n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    y = np.arange(n) % 2
    return rng.normal(size=(n, 3)) + y[:, None], y


def _tokens(exp) -> torch.Tensor:
    return torch.cat([exp.data.eval_sets[s].x for s in ("val", "test")])


def _estimator(body: str, **kw):
    from fpt.sklearn import FPTClassifier

    return FPTClassifier(body=body, init="random", steps=3, eval_every=3, device="cpu", **kw)


# --- PyTorch ---------------------------------------------------------------------------------------------------------

def test_tensors_that_require_grad_or_hold_bfloat16_are_read_as_their_values(tiny_bert_dir):
    """torch's .numpy() refuses a tensor that requires grad and one of bfloat16 (RuntimeError / TypeError with a
    traceback); fpt reads their values, bfloat16 as the float32 of each value."""
    X, y = _data()
    half = torch.tensor(X, dtype=torch.bfloat16)
    plain = fpt.build(data=(half.float().numpy(), y), body=tiny_bert_dir, **TINY)
    exp = fpt.build(data=(half.requires_grad_(), torch.tensor(y)), body=tiny_bert_dir, **TINY)
    assert torch.equal(_tokens(exp), _tokens(plain))
    clf = _estimator(tiny_bert_dir).fit(torch.tensor(X, requires_grad=True), torch.tensor(y))
    same = _estimator(tiny_bert_dir).fit(X, y)
    assert np.array_equal(clf.predict_proba(torch.tensor(X[:5], requires_grad=True)), same.predict_proba(X[:5]))


def test_a_meta_tensor_is_refused_naming_it(tiny_bert_dir):
    meta = torch.empty(40, 3, device="meta")
    for call in (lambda: fpt.build(data=(meta, np.arange(40) % 2), body=tiny_bert_dir, **TINY),
                 lambda: _estimator(tiny_bert_dir).fit(meta, np.arange(40) % 2)):
        with pytest.raises(DataError, match=r"'meta' device, which has a shape \(40, 3\) but no values"):
            call()


def test_a_tensor_dataset_is_x_and_y_and_a_data_loader_names_its_dataset(tiny_bert_dir):
    """A TensorDataset(X, y) was 'give a path, a pandas ... DataFrame, ...', which does not name it."""
    X, y = _data()
    pair = torch.utils.data.TensorDataset(torch.tensor(X), torch.tensor(y))
    exp = fpt.build(data=pair, body=tiny_bert_dir, **TINY)
    assert torch.equal(_tokens(exp), _tokens(fpt.build(data=(X, y), body=tiny_bert_dir, **TINY)))
    with pytest.raises(ConfigError, match=r"DataLoader serves batches.*data=loader\.dataset"):
        fpt.build(data=torch.utils.data.DataLoader(pair, batch_size=4), body=tiny_bert_dir, **TINY)
    with pytest.raises(ConfigError, match=r"TensorDataset of 1 tensors; fpt reads one of two, \(X, y\)"):
        fpt.build(data=torch.utils.data.TensorDataset(torch.tensor(X)), body=tiny_bert_dir, **TINY)


def test_a_tensor_given_to_a_data_model_says_it_is_read_as_tokens(tiny_bert_dir, tmp_path):
    X, y = _data()
    fpt.fit(fpt.build(data=(X, y), body=tiny_bert_dir, **TINY), out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    with pytest.raises(SchemaError, match=r"a tensor is read as tokens: to give tabular inputs as training read "
                                          r"them, pass a NumPy array \(tensor\.detach\(\)\.cpu\(\)\.numpy\(\)\)"):
        model.predict(torch.tensor(X[:3]))
    assert model.score(X, torch.tensor(y)) == model.score(X, y)  # a tensor of labels is its values


def test_labels_given_as_bytes_are_scored_as_training_read_them(tiny_bert_dir, tmp_path):
    """Training reads bytes labels (h5py's) as text; score(X, the same y) was 'label b'b' is not one of the model's
    classes ['a', 'b']'."""
    X, y = _data()
    labels = np.where(y == 1, b"a", b"b")
    fpt.fit(fpt.build(data=(X, labels), body=tiny_bert_dir, **TINY), out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    assert model.classes == [["a", "b"]]
    assert model.score(X, labels) == model.score(X, labels.astype(str)) == np.mean(model.predict(X) == labels.astype(str))


def test_uint8_series_of_one_channel_are_not_read_as_images_of_one_pixel_row(tiny_bert_dir):
    """(n, 1, L) uint8 (series of small counts, aeon's layout) was read by fpt.build as gray images 1 pixel tall,
    stretched to 32x32, without a word (the estimators read every 3-D X as series: validate_data makes it float)."""
    X = np.random.default_rng(0).integers(0, 5, size=(40, 1, 60)).astype(np.uint8)
    y = np.arange(40) % 2
    with pytest.raises(DataError, match=r"shape \(40, 1, 60\) of uint8, which auto reads as images, here 1x60 "
                                        r"pixels; if it is series \(n, channels, length\), give modality timeseries"):
        fpt.build(data=(X, y), body=tiny_bert_dir, **TINY)
    exp = fpt.build(data=(X, y), modality="timeseries", body=tiny_bert_dir, **TINY)
    assert exp.data.info["modality"] == "timeseries" and exp.data.info["train_lengths"] == "60..60"


# --- NumPy masked arrays ---------------------------------------------------------------------------------------------

def _masked() -> tuple[np.ma.MaskedArray, np.ndarray]:
    X, _ = _data()
    mask = np.zeros(X.shape, dtype=bool)
    mask[::3, 1] = True
    X[mask] = 1e3  # what lies under the mask: np.asarray read it as data
    return np.ma.masked_array(X, mask=mask), np.where(mask, np.nan, X)


def test_masked_values_are_missing_values_not_the_numbers_under_the_mask(tiny_bert_dir, tmp_path):
    masked, with_nan = _masked()
    _, y = _data()
    exp = fpt.build(data=(masked, y), body=tiny_bert_dir, **TINY)
    assert torch.equal(_tokens(exp), _tokens(fpt.build(data=(with_nan, y), body=tiny_bert_dir, **TINY)))
    assert not torch.equal(_tokens(exp), _tokens(fpt.build(data=(masked.data, y), body=tiny_bert_dir, **TINY)))
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    assert np.array_equal(model.predict_proba(masked), model.predict_proba(with_nan))
    clf = _estimator(tiny_bert_dir).fit(masked, y)
    assert np.array_equal(clf.predict_proba(masked), _estimator(tiny_bert_dir).fit(with_nan, y).predict_proba(with_nan))


def test_a_masked_target_is_refused_naming_the_first(tiny_bert_dir, tmp_path):
    X, y = _data()
    labels = np.ma.masked_array(y, mask=np.arange(40) % 10 == 7)
    for call in (lambda: fpt.build(data=(X, labels), body=tiny_bert_dir, **TINY),
                 lambda: _estimator(tiny_bert_dir).fit(X, labels)):
        with pytest.raises(DataError, match=r"y is masked at index 7 \(4 of 40 examples\); a target cannot be missing"):
            call()
    fpt.fit(fpt.build(data=(X, y), body=tiny_bert_dir, **TINY), out=tmp_path / "run", progress=False)
    with pytest.raises(SchemaError, match=r"score: y is masked at index 7"):
        fpt.load(tmp_path / "run").score(X, labels)


# --- Hugging Face datasets -------------------------------------------------------------------------------------------

def test_a_streaming_dataset_is_refused_naming_how_to_hold_it(tiny_bert_dir):
    """An IterableDatasetDict is a dict: it was read as arrays ('unknown array 'train'; an .npz holds X, y, ...')."""
    datasets = pytest.importorskip("datasets")
    X, y = _data()
    ds = datasets.Dataset.from_dict({"a": X[:, 0], "b": X[:, 1], "label": y})
    for streamed in (ds.to_iterable_dataset(), datasets.IterableDatasetDict({"train": ds.to_iterable_dataset()})):
        with pytest.raises(ConfigError, match=r"a streaming datasets\.Iterable\w+ has no rows in memory.*"
                                              r"streaming=False.*Dataset\.from_list\(list\(ids\.take\(N\)\)\)"):
            fpt.build(data=streamed, target="label", body=tiny_bert_dir, **TINY)


# --- columns whose cells are series: a datasets Sequence/List column, sktime's nested DataFrame ---------------------

def _cells(n: int = 40, lengths: tuple[int, ...] = (16,)) -> tuple[list[np.ndarray], np.ndarray]:
    rng = np.random.default_rng(1)
    y = np.arange(n) % 2
    return [(rng.normal(size=lengths[i % len(lengths)]) + y[i]).astype(np.float32) for i in range(n)], y


def test_a_dataset_column_of_lists_of_numbers_is_a_series_per_row(tiny_bert_dir, tmp_path):
    """A Sequence(Value('float32')) column was read as a text column ('sequence' modality): each number a word of a
    vocabulary of hundreds, trained on without a word."""
    datasets = pytest.importorskip("datasets")
    series, y = _cells(lengths=(16, 12))
    features = datasets.Features({"x": datasets.Sequence(datasets.Value("float32")),
                                  "label": datasets.ClassLabel(names=["calm", "busy"])})
    ds = datasets.Dataset.from_dict({"x": [s.tolist() for s in series], "label": y.tolist()}, features=features)
    exp = fpt.build(data=ds, target="label", body=tiny_bert_dir, **TINY)
    assert exp.data.info["modality"] == "timeseries" and exp.data.info["channel_names"] == ["x"]
    assert exp.data.info["train_lengths"] == "12..16" and exp.data.spec.token_dim is not None
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    as_arrays = model.predict_proba([s[None, :] for s in series])
    np.testing.assert_array_equal(model.predict_proba(ds.remove_columns("label")), as_arrays)
    np.testing.assert_array_equal(model.predict_proba({"x": np.array(series, dtype=object)}), as_arrays)
    labels = np.array(["calm", "busy"], dtype=object)[y]
    assert model.score(ds)["accuracy"] == pytest.approx(np.mean(model.predict(ds.remove_columns("label")) == labels))
    with pytest.raises(SchemaError, match=r"channels \(columns\) z, but the model was trained on x"):
        model.predict({"z": np.array(series, dtype=object)})


def test_token_ids_and_mixed_columns_are_refused_naming_the_columns():
    from fpt.data.memory import from_memory

    pd = pytest.importorskip("pandas")
    series, y = _cells()
    ids = pd.DataFrame({"input_ids": [np.arange(8)] * 40, "attention_mask": [np.ones(8, int)] * 40, "label": y})
    with pytest.raises(DataError, match=r"column 'input_ids' holds a tokenizer's token ids.*input_ids, attention_mask "
                                        r"out"):
        from_memory(ids, "label", "auto", "auto", 32)
    datasets = pytest.importorskip("datasets")
    mixed = datasets.Dataset.from_dict({"x": [s.tolist() for s in series], "age": np.arange(40.0), "label": y})
    with pytest.raises(DataError, match=r"column 'x' holds a series per row \(a list of numbers\) beside column 'age'"):
        fpt.build(data=mixed, target="label", init="random", device="cpu")
    with pytest.raises(DataError, match=r"which fpt reads as a series \(modality timeseries\), not as sequence"):
        fpt.build(data=mixed.remove_columns("age"), target="label", modality="sequence", init="random", device="cpu")


@pytest.mark.parametrize(("cells", "message"), [
    ([["the", "cat"], ["a", "dog", "ran"]] * 20, r"not a series of numbers: column 'x' holds a list of text; give each "
                                                 r"row's words as one text \(' '\.join\(words\)\)"),
    ([[1.0, 2.0], None] * 20, r"row 2: column 'x' has no series \(missing\)"),
])
def test_a_list_column_of_words_or_with_gaps_says_what_to_give(cells, message):
    """A Sequence(Value('string')) column was read as the text of each list ("['the' 'cat']"), a symbol per quote and
    bracket; with the lists read as series, it and a row without a list were 'a cell that is not a series of numbers'
    / 'holds one value'."""
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_dict({"x": cells, "label": [i % 2 for i in range(40)]})
    with pytest.raises(DataError, match=message):
        fpt.build(data=ds, target="label", init="random", device="cpu")


def test_a_cell_of_a_2d_array_is_refused_not_read_flat():
    """sktime's nested DataFrame cell holding (2, 16) values was raveled into one channel of 32 points."""
    from fpt.data.memory import from_memory

    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": [rng.normal(size=(2, 16)) for _ in range(40)]})
    for data in ((frame, np.arange(40) % 2), frame.assign(label=np.arange(40) % 2)):
        with pytest.raises(DataError, match=r"(X\.iloc\[0\]\['x'\]|data\.iloc\[0\]: column 'x') holds an array of shape "
                                            r"\(2, 16\); a cell "
                                            r"holds one channel's points"):
            from_memory(data, None, "auto", "auto", 32)


def test_a_nested_frame_with_its_target_beside_is_scored_by_its_target_name(tiny_bert_dir, tmp_path):
    """Trained on a nested DataFrame with its target as a column, the model named the target 'y' and refused the same
    frame at score ('channels (columns) x, label, but the model was trained on x')."""
    pd = pytest.importorskip("pandas")
    series, y = _cells()
    frame = pd.DataFrame({"x": [pd.Series(s) for s in series], "label": np.where(y == 1, "busy", "calm")})
    fpt.fit(fpt.build(data=frame, target="label", body=tiny_bert_dir, **TINY), out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    assert model.output_names == ["label"]
    predicted = model.predict(frame.drop(columns="label"))
    assert model.score(frame)["accuracy"] == pytest.approx(np.mean(predicted == frame["label"].to_numpy()))


def test_a_home_path_is_read_as_the_home_folder_and_a_home_out_is_refused_not_made_here(tiny_gpt2_dir, tmp_path,
                                                                                         monkeypatch):
    """Python expands no '~': fpt.build(data='~/x.csv') was 'no such file' (pandas' read_csv reads it; fpt's body
    and init paths expanded it), fpt.fit(exp, out='~/runs/x') made a folder named '~' in the working directory, and
    fpt.load('~/runs/x') then read that one. Inputs are now the home folder's; an out of '~' is refused naming the
    expanded path, as fpt.train_run's is."""
    import pandas as pd

    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=30), "b": rng.normal(size=30)})
    frame["label"] = np.where(frame.a > 0, "pos", "neg")
    frame.to_csv(home / "my.csv", index=False)
    exp = fpt.build(data="~/my.csv", target="label", body=tiny_gpt2_dir, fit="gradient", steps=4, eval_every=2,
                    device="cpu", baselines="none")
    assert exp.config.data == str(home / "my.csv")
    with pytest.raises(ConfigError) as refused:
        fpt.fit(exp, out="~/runs/x", progress=False)
    assert str(refused.value) == (f"out='~/runs/x' begins with '~', which Python does not expand: fpt would make a "
                                  f"folder named '~' here; give out='{home}/runs/x' (os.path.expanduser)")
    assert list(work.iterdir()) == []
    fpt.fit(exp, out=home / "runs" / "x", progress=False)
    assert fpt.load("~/runs/x").predict(frame.drop(columns="label").head(3)).shape == (3,)

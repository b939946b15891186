"""Round 8 of practitioners' habits: TensorBoard, scikit-learn and Hugging Face habits that broke fpt."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fpt
from fpt import tracking
from fpt.cli import main
from fpt.errors import ConfigError, DataError
from fpt.sklearn import FPTClassifier


def test_a_tensorboard_log_dir_that_is_a_file_is_refused_naming_it_before_anything_is_written(
        xor_run, tiny_gpt2_dir, tmp_path, capsys):
    pytest.importorskip("tensorboard")  # fit and plot say that it is missing first, without the extra
    taken = tmp_path / "events"
    taken.write_text("a file of the caller's\n")
    # was FileExistsError from SummaryWriter's os.makedirs, a traceback, once fpt.fit had written the run's files
    with pytest.raises(ConfigError, match=r"TensorBoard\(log_dir=\.\.\.\): .*events is a file, not a folder.*give "
                                          r"another folder \(e\.g\. .*events-tb\)"):
        tracking.TensorBoard(taken)
    with pytest.raises(ConfigError, match=r"sub lies under .*events, a file, not a folder.*\(e\.g\. .*events-tb\)$"):
        tracking.TensorBoard(taken / "sub")
    later = tmp_path / "later"
    board = tracking.TensorBoard(later)
    later.write_text("made after the tracker\n")
    exp = fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", batch_size=4, eval_every=2, steps=2,
                    device="cpu", task_options={"eval_size": 8})
    with pytest.raises(ConfigError, match="later is a file, not a folder"):
        fpt.fit(exp, out=tmp_path / "run", trackers=[board], progress=False)
    assert taken.read_text() == "a file of the caller's\n" and later.read_text() == "made after the tracker\n"

    # fpt plot --tensorboard FILE said '[Errno 20] Not a directory: 'events/xor'' after writing the curves
    curves = tmp_path / "curves.png"
    assert main(["plot", str(xor_run), "--out", str(curves), "--tensorboard", str(taken)]) == 2
    err = capsys.readouterr().err
    assert f"fpt plot: error: --tensorboard: {taken} is a file, not a folder" in err and len(err.splitlines()) == 1
    assert not curves.exists() and taken.read_text() == "a file of the caller's\n"


def _table_dataset():
    datasets = pytest.importorskip("datasets")
    rng = np.random.default_rng(0)
    features = datasets.Features({"a": datasets.Value("float32"), "b": datasets.Value("float32"),
                                  "size": datasets.ClassLabel(names=["small", "large"]),
                                  "label": datasets.ClassLabel(names=["neg", "pos"])})
    a = rng.normal(size=30)
    return datasets.Dataset.from_dict({"a": a.tolist(), "b": rng.normal(size=30).tolist(),
                                       "size": [int(v) for v in rng.integers(0, 2, 30)],
                                       "label": [int(v) for v in a > 0]}, features=features)


def test_a_hugging_face_dataset_as_x_is_read_as_its_table_with_class_label_names(tiny_gpt2_dir):
    ds = _table_dataset()
    X, y = ds.remove_columns("label"), np.array(ds["label"])
    frame = X.to_pandas().assign(size=lambda f: np.array(["small", "large"])[f["size"]])
    made = dict(body=tiny_gpt2_dir, init="random", fitting="gradient", steps=2, eval_every=1, batch_size=8,
                seed=0, device="cpu")
    # was 'TypeError: float() argument must be a string or a real number, not 'dict'' (an array of row dicts)
    clf = FPTClassifier(**made).fit(X, y)
    same = FPTClassifier(**made).fit(frame, y)
    assert list(clf.feature_names_in_) == ["a", "b", "size"]
    assert clf.preprocessing_.tokeniser.features == same.preprocessing_.tokeniser.features  # 'size' by its names
    np.testing.assert_allclose(clf.predict_proba(X), same.predict_proba(frame), rtol=0, atol=1e-6)
    assert (clf.predict(X) == clf.predict(frame)).all()
    with pytest.raises(DataError, match=r"FPTClassifier.predict: X: a DatasetDict of splits \['test', 'train'\]; "
                                        r"give one split, e.g. dd\['train'\]"):
        clf.predict(X.train_test_split(test_size=0.5, seed=0))


@pytest.mark.parametrize("kind", ["texts", "series of several lengths"])
def test_a_column_vector_y_beside_texts_or_series_is_read_as_beside_a_table(kind, tiny_gpt2_dir):
    from sklearn.exceptions import DataConversionWarning

    rng = np.random.default_rng(0)
    labels = np.array(["no", "yes"])[rng.integers(0, 2, 24)]
    X = (["".join(rng.choice(list("ab"), 3 + i % 3)) for i in range(24)] if kind == "texts" else
         [rng.normal(size=(1, 12 + i % 4)) for i in range(24)])
    made = dict(body=tiny_gpt2_dir, init="random", fitting="gradient", steps=2, eval_every=1, batch_size=8, seed=0,
                device="cpu")
    flat = FPTClassifier(**made).fit(X, labels)
    # was 'FPTClassifier.fit: y has shape (24, 1); give one target per text' (series: per series), where a table's
    # df[['label']] is read with scikit-learn's DataConversionWarning
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        column = FPTClassifier(**made).fit(X, pd.DataFrame({"label": labels}))
    assert list(column.classes_) == ["no", "yes"]
    np.testing.assert_allclose(column.predict_proba(X), flat.predict_proba(X), rtol=0, atol=1e-6)
    with pytest.raises(DataError, match=r"y has shape \(24, 2\); give one target per"):
        FPTClassifier(**made).fit(X, np.c_[labels, labels])


@pytest.mark.parametrize("argv, message", [
    (["plot"], "where fpt plot writes curves.png without --out; give --out FILE elsewhere (e.g. --out run-curves.png)"),
    (["plot", "--out", "{tmp}/c.png", "--tensorboard"],
     "where --tensorboard without a LOGDIR writes its events; give it a folder elsewhere: --tensorboard LOGDIR"),
    (["attention"], "where fpt attention writes its maps without --out; give --out DIR elsewhere"),
    (["report", "--attention", "never"], "where fpt report writes report.html and report.md; copy it to a folder you "
                                         "can write and report the copy (cp -r {run} /tmp/run-copy && fpt report "
                                         "/tmp/run-copy)"),
])
def test_a_run_folder_that_cannot_be_written_names_where_else_to_write(argv, message, xor_run, tmp_path, monkeypatch,
                                                                       capsys):
    import os
    import shutil

    run = tmp_path / "run"
    shutil.copytree(xor_run, run)
    before = sorted(p.name for p in run.iterdir())
    real = os.access

    def access(path, mode, *args, **kwargs):  # a run on a read-only mount, or another user's (root writes anywhere)
        if os.path.realpath(path) == str(run.resolve()) and mode & os.W_OK:
            return False
        return real(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)
    # was 'cannot write RUN/curves.png: Read-only file system (OSError errno 30); the previous version of the file is
    # unchanged' (report.html alike; attention after computing its maps), naming no way around it
    argv = [argv[0], str(run), *(a.format(tmp=tmp_path) for a in argv[1:])]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"fpt {argv[0]}: error: {run} is not writable by this user, {message.format(run=run)}" in err
    assert len(err.splitlines()) == 1 and sorted(p.name for p in run.iterdir()) == before


def test_a_torch_device_is_read_as_its_name_wherever_a_device_is_given(xor_run, tiny_gpt2_dir, tmp_path):
    import torch

    from fpt.config import RunConfig

    # was 'field 'device': expected a string, got device(type='cpu')', and from fpt.load blamed on the run's
    # config.yaml, or on an export's config.json with 'export the run again with fpt export'
    cpu = torch.device("cpu")
    assert RunConfig(device=cpu).device == "cpu"
    assert fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", steps=2, device=cpu,
                     task_options={"eval_size": 8}).config.device == "cpu"
    exported = fpt.Run(xor_run).export(tmp_path / "export")
    for where in (xor_run, exported):
        given, named = fpt.load(where, device=cpu), fpt.load(where, device="cpu")
        assert given.device == named.device == cpu
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 3)), np.arange(20) % 2
    clf = FPTClassifier(body=tiny_gpt2_dir, init="random", fitting="gradient", steps=2, eval_every=1, batch_size=8,
                        device=cpu).fit(X, y)
    assert clf.get_params()["device"] is cpu and clf.experiment_.config.device == "cpu"


@pytest.mark.parametrize("device, message", [
    ("gpu", "device='gpu', the device to load the model on, must be auto, cpu, cuda, cuda:N (N a GPU index) or mps"),
    (0, "device=0, the device to load the model on, must be auto, cpu, cuda, cuda:N (N a GPU index) or mps (GPU 0 is "
        "device='cuda:0')"),
])
def test_a_device_given_to_load_a_model_is_refused_as_the_callers_not_the_saved_files(device, message, xor_run,
                                                                                     tmp_path):
    exported = fpt.Run(xor_run).export(tmp_path / "export")
    # was '.../config.yaml: config field 'device'='gpu' must be ...' and '.../config.json: not a readable fpt export
    # config (...); export the run again with fpt export', the files being sound; an export's device=0 loaded on the
    # default device (0 read as no device given)
    for where in (xor_run, exported):
        with pytest.raises(ConfigError) as refused:
            fpt.load(where, device=device)
        assert str(refused.value) == message


def test_a_grid_over_one_options_field_sets_it_in_a_copy_of_options(tiny_gpt2_dir):
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    mine = {"eval_batch_size": 64}
    clf = FPTClassifier(options=mine)
    # was AttributeError: 'dict' object has no attribute 'set_params' (scikit-learn took options for an estimator)
    assert clf.set_params(options__dropout=0.25) is clf
    assert clf.options == {"eval_batch_size": 64, "dropout": 0.25} and mine == {"eval_batch_size": 64}
    assert clone(clf).get_params()["options"] == {"eval_batch_size": 64, "dropout": 0.25}
    assert FPTClassifier().set_params(options__dropout=0.5).options == {"dropout": 0.5}  # options unset: None's
    pipe = make_pipeline(StandardScaler(), FPTClassifier()).set_params(fptclassifier__options__dropout=0.5)
    assert pipe[-1].options == {"dropout": 0.5}
    with pytest.raises(ConfigError, match=r"options='x' must be a dict of fpt config fields to set options__dropout"):
        FPTClassifier(options="x").set_params(options__dropout=0.5)

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(24, 3)), np.arange(24) % 2
    made = dict(body=tiny_gpt2_dir, init="random", fitting="gradient", steps=2, eval_every=1, batch_size=8, seed=0,
                device="cpu")
    grid = GridSearchCV(FPTClassifier(**made), {"options__dropout": [0.0, 0.3]}, cv=2).fit(X, y)
    assert [p["options__dropout"] for p in grid.cv_results_["params"]] == [0.0, 0.3]
    best = grid.best_params_["options__dropout"]
    assert grid.best_estimator_.experiment_.config.dropout == best and grid.best_estimator_.options == {"dropout": best}


def test_an_mlflow_file_store_that_is_a_file_is_refused_naming_the_variable(tmp_path, monkeypatch):
    pytest.importorskip("mlflow")
    taken = tmp_path / "my runs é"
    taken.write_text("notes of the caller's\n")
    # was '[Errno 20] Not a directory: '.../my runs é/.trash'', naming neither MLFLOW_TRACKING_URI nor a fix
    for uri, said in [
        (f"file:{taken}", f"{taken} is a file, not a folder, and an MLflow file store is a folder; give another "
                          f"folder, or a database (sqlite:///{taken}.db)"),
        (taken.as_uri() + "/sub", f"{taken}/sub lies under {taken}, a file, not a folder, and an MLflow file store is "
                                  f"a folder; give another folder, or a database (sqlite:///{taken}.db)"),
        (str(taken / "sub"), f"{taken}/sub lies under {taken}, a file, not a folder"),
    ]:
        monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
        with pytest.raises(ConfigError) as refused:
            tracking.mlflow_store_uri()
        assert str(refused.value).startswith(f"MLFLOW_TRACKING_URI={uri}: {said}")
    spaced = tmp_path / "ml runs é"  # a folder with spaces, written as file: takes it, is a store as before
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"file:{spaced}")
    assert tracking.mlflow_store_uri() == f"file:{spaced}"
    assert taken.read_text() == "notes of the caller's\n"


def _disk_full(*args, **kwargs):
    from safetensors import SafetensorError

    # what safetensors' save_file raises on a full disk (reproduced on a 120 KiB tmpfs): its own class, no OSError
    raise SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)")


def test_a_full_disk_at_a_safetensors_save_is_a_one_line_error_leaving_nothing(xor_run, tmp_path, monkeypatch):
    import safetensors.torch

    from fpt import rundir
    from fpt.errors import CheckpointError

    monkeypatch.setattr(safetensors.torch, "save_file", _disk_full)
    out = tmp_path / "export"
    # was 'fpt export: this is a bug in fpt (...)' after safetensors' SafetensorError traceback
    with pytest.raises(CheckpointError, match=r"cannot write .*export: the disk is full \(OSError errno 28\); nothing "
                                              r"of the export was written \(one already there is unchanged\)"):
        fpt.Run(xor_run).export(out)
    assert list(tmp_path.iterdir()) == []  # no export, no .export.tmp-PID
    body = tmp_path / "body.safetensors"  # fpt pretrain's saved body is written through rundir.write_with
    with pytest.raises(CheckpointError, match=r"cannot write .*body.safetensors: the disk is full \(OSError errno 28\)"):
        rundir.write_with(body, lambda tmp: safetensors.torch.save_file({}, tmp))
    assert list(tmp_path.iterdir()) == []

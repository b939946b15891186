"""Hostile input, round 3 (issue 38, item 9): our own cases on the surface steps 11-18 added — --choose/--folds,
selection, presets and precision, MLflow URIs and Ray addresses, in-memory data, the scikit-learn estimators,
exports and --resume. Each is a one-line fpt error (or the documented exception), never a traceback or a run."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hostile_helpers import FAST, files, one_line, table

import fpt
from fpt import connect, tracking
from fpt.cli import main
from fpt.config import RunConfig, from_dict
from fpt.errors import ConfigError, DataError, FptError
from fpt.experiments.ray_executor import check_address
from fpt.select import cross_validate

CHOOSE = ["", "lr", "=0.1", "folds=3", "fold=1", "data=other.csv", "train_on_val=true", "objective=regression",
          "target_column=x1", "nonsense_field=1", "lr=abc", "steps=-1", "preset=turbo", "precision=fp8"]


@pytest.mark.parametrize("candidate", CHOOSE)
def test_a_hostile_choose_candidate_is_one_line_before_any_fold(candidate, tiny_bert_dir, tmp_path, capsys, monkeypatch):
    import fpt.select as select

    monkeypatch.setattr(select, "_fold", lambda *a: pytest.fail("trained a fold"))
    out = tmp_path / "r"
    assert main(["train", "--data", str(table(tmp_path / "d.csv")), "--body", tiny_bert_dir, "--init", "random",
                 "--quiet", "--choose", candidate, "--choose", "lr=0.01", "--out", str(out)]) == 2
    one_line(capsys, "train")
    assert not (out / "selection.json").exists()


@pytest.mark.parametrize("folds", ["0", "1", "-3", "2.5", "abc", "1e9", "99"])
def test_a_hostile_folds_value_is_one_line_before_any_fold(folds, tiny_bert_dir, tmp_path, capsys, monkeypatch):
    import fpt.select as select

    monkeypatch.setattr(select, "_fold", lambda *a: pytest.fail("trained a fold"))
    assert main(["train", "--data", str(table(tmp_path / "d.csv")), "--body", tiny_bert_dir, "--init", "random",
                 "--quiet", "--choose", "lr=0.1", "--choose", "lr=0.01", "--folds", folds,
                 "--out", str(tmp_path / "r")]) == 2
    one_line(capsys, "train", "fold")


@pytest.mark.parametrize("candidates", [[], [("lr", 0.1)], ["lr=0.1"], [{}]])
def test_cross_validate_refuses_candidates_that_are_not_mappings_of_fields(candidates, tmp_path):
    config = from_dict(RunConfig, {"data": str(table(tmp_path / "d.csv"))})
    with pytest.raises(ConfigError):
        cross_validate(config, candidates, 3)


@pytest.mark.parametrize("fields", [{"preset": "turbo"}, {"precision": "fp8"}, {"baselines": "some"},
                                    {"precision": 16}])
def test_a_hostile_preset_precision_or_baselines_is_a_config_error(fields, tiny_bert_dir, tmp_path):
    with pytest.raises(ConfigError):
        fpt.build(data=str(table(tmp_path / "d.csv")), body=tiny_bert_dir, **{**FAST, **fields})


@pytest.mark.parametrize("text", ["precision: 7\n", "preset: [fast]\n", "baselines: {a: 1}\n"])
def test_a_hostile_config_file_is_one_line(text, tiny_bert_dir, tmp_path, capsys):
    (tmp_path / "c.yaml").write_text(text)
    assert main(["train", "--config", str(tmp_path / "c.yaml"), "--data", str(table(tmp_path / "d.csv")),
                 "--body", tiny_bert_dir, "--quiet", "--out", str(tmp_path / "r")]) == 2
    one_line(capsys, "train")


@pytest.fixture
def _mlflow(monkeypatch):
    pytest.importorskip("mlflow")
    monkeypatch.setattr(connect, "TIMEOUT", 1.0)


@pytest.mark.parametrize("uri", ["ftp://example.org/store", "http://", "http://[::1", "sqlite:///{dir}",
                                 "sqlite:///{dir}/missing/folder/x.db"])
def test_a_hostile_mlflow_uri_is_a_config_error(uri, _mlflow, tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri.format(dir=tmp_path))
    with pytest.raises(ConfigError, match="MLFLOW_TRACKING_URI"):
        tracking.check(["mlflow"])


@pytest.mark.parametrize("address", ["127.0.0.1:99999", "ray://127.0.0.1:notaport", "[::1"])
def test_a_hostile_ray_address_is_a_config_error(address):
    with pytest.raises(ConfigError, match="--address"):
        check_address(address)


def test_ray_auto_pointing_at_a_stopped_cluster_names_it(monkeypatch):
    pytest.importorskip("ray")  # fpt[ray]
    import ray._private.utils as ray_utils

    monkeypatch.setattr(connect, "TIMEOUT", 1.0)
    monkeypatch.setattr(ray_utils, "read_ray_address", lambda temp_dir=None: "127.0.0.1:1")
    with pytest.raises(ConfigError, match=r"--address auto \(the cluster this machine last started, 127.0.0.1:1\)"):
        check_address("auto")


def _xy(n: int = 20):
    rng = np.random.default_rng(0)
    return rng.normal(size=(n, 3)), np.arange(n) % 2


MEMORY = {
    "a set": lambda: {1, 2},
    "a number": lambda: 12,
    "a tuple of three": lambda: (*_xy(), _xy()[1]),
    "X without y": lambda: {"X": _xy()[0]},
    "one target short": lambda: (_xy()[0], _xy()[1][:-1]),
    "no examples": lambda: (_xy()[0][:0], _xy()[1][:0]),
    "complex inputs": lambda: (_xy()[0].astype(complex), _xy()[1]),
    "X_test without y_test": lambda: {"X": _xy()[0], "y": _xy()[1], "X_test": _xy()[0]},
    "an infinite input": lambda: (np.where(np.eye(20, 3) > 0, np.inf, _xy()[0]), _xy()[1]),
    "a NaN target": lambda: (_xy()[0], np.where(np.arange(20) == 4, np.nan, 1.0)),
}


@pytest.mark.parametrize("name", list(MEMORY))
def test_hostile_in_memory_data_is_an_fpt_error(name, tiny_bert_dir):
    with pytest.raises(FptError):
        fpt.build(data=MEMORY[name](), body=tiny_bert_dir, **FAST)


@pytest.fixture(scope="module")
def fitted(tiny_bert_dir):
    from fpt.sklearn import FPTClassifier

    X, y = _xy(24)
    return FPTClassifier(body=tiny_bert_dir, init="random", steps=2, eval_every=2, batch_size=8,
                         device="cpu").fit(X, y)


def test_an_estimator_predicting_before_fit_says_so(tiny_bert_dir):
    from sklearn.exceptions import NotFittedError

    from fpt.sklearn import FPTClassifier

    with pytest.raises(NotFittedError):
        FPTClassifier(body=tiny_bert_dir).predict(_xy()[0])


@pytest.mark.parametrize(("name", "error"), [("more features", ValueError), ("an infinite row", ValueError),
                                           ("a value beyond float32", FptError)])
def test_an_estimator_refuses_hostile_inputs_at_predict(name, error, fitted):
    X = _xy(4)[0]
    X = {"more features": np.hstack([X, X]), "an infinite row": np.where(np.eye(4, 3) > 0, np.inf, X),
         "a value beyond float32": np.where(np.eye(4, 3) > 0, 1e39, X)}[name]
    with pytest.raises(error):  # scikit-learn's own ValueError for what its validate_data checks, as estimators do
        fitted.predict(X)


def test_an_estimator_refuses_a_target_with_nan(tiny_bert_dir):
    from fpt.sklearn import FPTRegressor

    X, _ = _xy()
    with pytest.raises((FptError, ValueError)):
        FPTRegressor(body=tiny_bert_dir, init="random", steps=2).fit(X, np.full(20, np.nan))


def _edit_config(export, edit):
    path = export / "config.json"
    text = path.read_text()
    path.write_text(edit(text))


EXPORTS = {
    "config.json not JSON": lambda e: _edit_config(e, lambda t: t[: len(t) // 2]),
    "config.json a list": lambda e: _edit_config(e, lambda t: "[1, 2]"),
    "another fpt_format": lambda e: _edit_config(e, lambda t: t.replace('"fpt-export-1"', '"fpt-export-9"')),
    "no sha256": lambda e: _edit_config(e, lambda t: json.dumps({**json.loads(t), "weights": {}})),
    "weights truncated": lambda e: (e / "fpt_model.safetensors").write_bytes((e / "fpt_model.safetensors").read_bytes()[:100]),
    "weights missing": lambda e: (e / "fpt_model.safetensors").unlink(),
}


@pytest.mark.parametrize("name", list(EXPORTS))
def test_a_damaged_export_is_one_line(name, export_copy, tmp_path, capsys):
    EXPORTS[name](export_copy)
    assert main(["predict", str(export_copy), str(table(tmp_path / "n.csv", n=4)), "--out", str(tmp_path / "p.csv")]) == 2
    one_line(capsys, "predict")


def test_predict_never_writes_into_an_export(export_copy, tmp_path, capsys):
    before = files(export_copy)
    assert main(["predict", str(export_copy), str(table(tmp_path / "n.csv", n=4)),
                 "--out", str(export_copy / "README.md"), "--force"]) == 2
    one_line(capsys, "predict")
    assert files(export_copy) == before


@pytest.mark.parametrize("case", ["no config", "a file", "a list row"])
def test_a_hostile_resume_is_one_line(case, run_copy, tmp_path, capsys):
    target = run_copy
    if case == "no config":
        (run_copy / "config.yaml").unlink()
    elif case == "a file":
        target = tmp_path / "f"
        target.write_text("x")
    else:
        (run_copy / "metrics.jsonl").write_text("[1]\n")
    # a larger --steps: a finished run resumed with nothing to do returns at once, its files unread (train.finished)
    assert main(["train", "--resume", str(target), "--steps", "4", "--quiet"]) == 2
    one_line(capsys, "train")


def test_round3_counts():
    assert len(CHOOSE) == 14 and len(MEMORY) == 10 and len(EXPORTS) == 6 and DataError

"""Classic models and controls beside a --data run (fpt.baselines), and the data-sized budget."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

import fpt
from fpt import baselines
from fpt.cli import main
from fpt.config import RunConfig
from fpt.data.modalities import MODALITIES, series_features
from fpt.data.tokenisers import SeriesTokens
from fpt.settings import DataFacts, data_budget


def _csv(path, n=60):
    rng = np.random.default_rng(0)
    rows = ["x1,x2,kind,label"] + [f"{rng.normal() + 2 * (i % 2):.3f},{rng.normal():.3f},{'pq'[i % 3 % 2]},{'ab'[i % 2]}"
                                   for i in range(n)]
    path.write_text("\n".join(rows) + "\n")
    return path


def _series_npz(path, n=40, length=20):
    rng = np.random.default_rng(1)
    y = np.arange(n) % 2
    t = np.linspace(0, 1, length)
    x = np.stack([np.sin(2 * np.pi * (1 + k) * t) + 0.3 * rng.normal(size=length) for k in y])[:, None, :]
    np.savez(path, X=x.astype(np.float32), y=y)
    return path


def _build(path, body, **kw):
    return fpt.build(**{"data": str(path), "body": body, "init": "random", "steps": 4, "eval_every": 2,
                        "batch_size": 8, "device": "cpu", **kw})


def test_cli_prints_and_saves_models_beside_the_run(tmp_path, tiny_bert_dir, capsys):
    out = tmp_path / "run"
    assert main(["train", "--data", str(_csv(tmp_path / "c.csv")), "--body", tiny_bert_dir, "--init", "random",
                 "--steps", "4", "--eval-every", "2", "--device", "cpu", "--quiet", "--out", str(out)]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[-1].startswith("best on validation: ")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["baselines"]["chance"] == 0.5 and "majority" in summary["baselines"]  # the old keys stay
    compared = summary["baselines_models"]
    assert compared["metric"] == "accuracy" and set(compared["models"]) == {"logistic regression", "gradient boosting"}
    for entry in compared["models"].values():
        assert 0 <= entry["val"] <= 1 and 0 <= entry["test"] <= 1 and entry["seconds"] >= 0 and "chosen" in entry
    assert compared["line"] == printed[-1]
    assert compared["best_on_validation"]["val"] == max(
        [e["val"] for e in compared["models"].values()] + [round(summary["val_accuracy"], 4)])


def test_none_and_paper_tasks_fit_nothing(tmp_path, tiny_bert_dir):
    assert baselines.level(RunConfig(task="bit-xor")) == "none"
    assert baselines.level(RunConfig(data="x.csv")) == "fast"
    assert baselines.level(RunConfig(data="x.csv", baselines="none")) == "none"
    exp = _build(_csv(tmp_path / "c.csv"), tiny_bert_dir, baselines="none")
    summary = fpt.fit(exp, progress=False)
    assert baselines.beside_run(exp, summary) is summary


def test_regression_fits_ridge_and_boosting(tmp_path, tiny_bert_dir):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(80, 3))
    y = 3 * x[:, 0] - x[:, 1]
    (tmp_path / "r.csv").write_text("a,b,c,v\n" + "".join(f"{r[0]},{r[1]},{r[2]},{t}\n" for r, t in zip(x, y, strict=True)))
    result = baselines.fit_models(_build(tmp_path / "r.csv", tiny_bert_dir).data)
    assert result["metric"] == "r2" and set(result["models"]) == {"ridge regression", "gradient boosting"}
    assert result["models"]["ridge regression"]["test"] > 0.95


def test_series_get_nearest_neighbour_and_minirocket_or_a_note(tmp_path, tiny_bert_dir, monkeypatch):
    exp = _build(_series_npz(tmp_path / "s.npz"), tiny_bert_dir)
    result = baselines.fit_models(exp.data)
    assert "1-NN Euclidean" in result["models"]
    pytest.importorskip("aeon")
    assert "MiniRocket" in result["models"]
    monkeypatch.setitem(sys.modules, "aeon.classification.convolution_based", None)  # as if aeon were missing
    result = baselines.fit_models(exp.data)
    assert "MiniRocket" not in result["models"] and "aeon is not installed" in result["notes"][0]


@pytest.mark.parametrize(("patch", "stride"), [(4, 4), (4, 2), (5, 3)])
def test_series_rebuilt_from_overlapping_windows(patch, stride):
    rng = np.random.default_rng(0)
    series = [rng.normal(size=(2, 17)) for _ in range(3)]
    tok = SeriesTokens.fit(series, patch, stride, "global")
    x, _ = tok(series)
    rebuilt = series_features(x.numpy(), tok.to_json(), 0)
    for i, s in enumerate(series):
        np.testing.assert_allclose(rebuilt[i, :, :17], tok._normalise(s), atol=1e-5)


def test_all_adds_the_two_controls(tmp_path, tiny_bert_dir):
    exp = _build(_csv(tmp_path / "c.csv"), tiny_bert_dir, steps=2, eval_every=1, baselines="all")
    out = tmp_path / "run"
    summary = baselines.beside_run(exp, fpt.fit(exp, out=out, progress=False), out)
    controls = summary["baselines_models"]["controls"]
    assert set(controls) == {"random body", "no language model"}
    assert (out / "controls" / "no-lm" / "summary.json").is_file()
    assert json.loads((out / "summary.json").read_text())["baselines_models"]["controls"]["no language model"]["val"] \
        == controls["no language model"]["val"]


def test_budget_follows_the_training_examples(tmp_path, tiny_bert_dir):
    for n, steps, eval_every in ((106, 200, 10), (1000, 1875, 93), (10**6, 2000, 100)):
        fitted = data_budget({"batch_size": 16}, DataFacts(n))
        assert (fitted["steps"], fitted["eval_every"], fitted["readout"]) == (steps, eval_every, "last")
    assert data_budget({"preset": "fast", "steps": 7}, MODALITIES["timeseries"].facts(10, {})) == {"readout": "flatten",
                                                                                        "eval_every": 7}
    path = _csv(tmp_path / "c.csv")
    # gradient training's budget (fit given, so fpt.build makes no choice of fit)
    exp = fpt.build(data=str(path), body=tiny_bert_dir, init="random", device="cpu", fit="gradient")  # both fitted
    assert (exp.config.steps, exp.config.eval_every) == (200, 10)
    exp = fpt.build(data=str(path), body=tiny_bert_dir, init="random", device="cpu", steps=7)  # steps kept
    assert (exp.config.steps, exp.config.eval_every) == (7, 7)
    exp = fpt.build(RunConfig(data=str(path), body=tiny_bert_dir, init="random", device="cpu"))  # a config: as is
    assert (exp.config.steps, exp.config.eval_every) == (2000, 50)


def _val_only_series_npz(path, n=20, length=20):
    """Validation examples shaped like class 1 but labelled 0, and a test split of the same examples: a 1-NN is
    right on test only if validation was among what it learnt from."""
    rng = np.random.default_rng(2)
    t = np.linspace(0, 1, length)

    def shape(k):
        return np.sin(2 * np.pi * (1 + k) * t) + 0.1 * rng.normal(size=length)

    y = np.arange(n) % 2
    x = np.stack([shape(k) for k in y])[:, None, :].astype(np.float32)
    x_val = np.stack([shape(1) for _ in range(6)])[:, None, :].astype(np.float32)
    y_val = np.zeros(6, dtype=int)
    np.savez(path, X=x, y=y, X_val=x_val, y_val=y_val, X_test=x_val, y_test=y_val)
    return path


def test_refit_fits_the_chosen_models_again_on_train_and_validation(tmp_path, monkeypatch):
    monkeypatch.setattr(baselines, "_minirocket", lambda classify, seed: "MiniRocket left out of this test")
    data = baselines.task_data(RunConfig(data=str(_val_only_series_npz(tmp_path / "s.npz")), device="cpu"))
    plain = baselines.fit_models(data)
    refit = baselines.fit_models(data, refit=True)
    before, after = plain["models"]["1-NN Euclidean"], refit["models"]["1-NN Euclidean"]
    assert before["test"] == 0.0 and after["test"] == 1.0  # only validation's examples can be right on test
    assert before["val"] == after["val"] == 0.0  # the figure that chose it: fitted on train only
    assert after["protocol"] == refit["protocol"] == "refit"
    assert "protocol" not in before and "protocol" not in plain  # the default protocol is as it was


def _refit_summary():
    return {"val_accuracy": None, "test_accuracy": 0.9, "wall_seconds": 2.0, "selected_step": 50, "steps": 50,
            "refit": {"selected_step": 40, "steps": 50, "selection_val_accuracy": 0.95,
                      "selection_test_accuracy": 0.85, "selection_wall_seconds": 3.0}}


def test_compare_reads_a_refit_run_through_its_selection_run():
    result = {"metric": "accuracy", "protocol": "refit", "notes": [],
              "models": {"1-NN Euclidean": {"val": 0.9, "test": 0.92, "chosen": {}, "seconds": 0.1, "protocol": "refit"},
                         "MiniRocket": {"val": 0.97, "test": 0.96, "chosen": {}, "seconds": 1.0, "protocol": "refit"}}}
    summary = _refit_summary()
    compared = baselines.compare(summary, result)
    assert compared["protocol"] == "refit"
    assert compared["best_on_validation"] == {"name": "MiniRocket", "val": 0.97, "test": 0.96}
    assert compared["line"] == ("best on validation: MiniRocket (val 0.970, test 0.960); fpt val 0.950, test 0.900; "
                                "each chosen on validation, then refit on train+validation")
    del result["models"]["MiniRocket"]  # fpt's validation figure is the selection run's, its test the refit model's
    assert baselines.compare(summary, result)["best_on_validation"] == {"name": "fpt", "val": 0.95, "test": 0.9}
    rows = baselines.table_rows({**summary, "baselines_models": baselines.compare(summary, result)})
    assert rows[0] == {"name": "fpt", "kind": "this run", "val": 0.95, "test": 0.9, "seconds": 5.0,
                       "chosen": "step 40, refit 50 steps"}  # both runs' seconds
    assert rows[1]["name"] == "1-NN Euclidean" and rows[1]["chosen"] == "refit"


def test_refit_controls_are_refit_runs(tmp_path, tiny_bert_dir):
    from fpt.rundir import SELECTION_RUN as SELECTION

    config = RunConfig(data=str(_csv(tmp_path / "c.csv")), body=tiny_bert_dir, init="random", steps=2, eval_every=1,
                       batch_size=8, device="cpu")
    controls = baselines.run_controls(config, tmp_path, refit=True)
    assert set(controls) == {"random body", "no language model"}
    control = controls["no language model"]
    own = json.loads((tmp_path / "controls" / "no-lm" / "summary.json").read_text())
    assert control["protocol"] == "refit" and control["test"] == round(own["test_accuracy"], 4)
    assert control["val"] == round(own["refit"]["selection_val_accuracy"], 4)  # its selection run's
    assert control["seconds"] == round(own["wall_seconds"] + own["refit"]["selection_wall_seconds"], 3)
    assert (tmp_path / "controls" / "no-lm" / SELECTION / "summary.json").is_file()
    # as after a resume: the finished controls are read, not refused nor trained again
    assert baselines.run_controls(config, tmp_path, refit=True)["no language model"]["test"] == control["test"]


def test_the_baselines_leave_the_process_thread_count_as_they_found_it(tmp_path, tiny_bert_dir):
    pytest.importorskip("aeon")
    import torch

    data = _build(_series_npz(tmp_path / "s.npz"), tiny_bert_dir).data
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        result = baselines.fit_models(data)
        assert "MiniRocket" in result["models"]  # the model that used to leave every core's thread running
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_many_classes_fit_without_scikit_learns_regression_guess(recwarn):
    """A UCR file's labels are classes however many (PigCVP: 52 classes in 104 series): fpt decided the objective,
    so scikit-learn's warning that the labels "could represent a regression problem" is not shown beside the run."""
    from fpt import baselines

    rng = np.random.default_rng(0)
    sets = {k: (rng.normal(size=(n, 4)), np.arange(n) % 26) for k, n in (("train", 40), ("val", 26), ("test", 26))}
    _, make, grid = baselines._nearest(True)
    got = baselines._choose(make, grid, sets, True, refit=True)
    assert 0 <= got["test"] <= 1 and got["protocol"] == baselines.REFIT
    assert not [w for w in recwarn if "unique classes" in str(w.message)]


def test_small_data_fits_the_classic_models_on_one_thread(tmp_path, tiny_bert_dir, monkeypatch):
    """OpenMP and BLAS pools spin at every barrier: beside a busy process, 2 threads on 300 rows took seconds where
    one takes milliseconds. Small data fits on one thread; large data keeps the libraries' own counts."""
    from threadpoolctl import threadpool_info

    data = _build(_csv(tmp_path / "t.csv"), tiny_bert_dir).data
    seen = []
    choose = baselines._choose

    def spy(make, grid, sets, *args):
        seen.append({p["user_api"]: p["num_threads"] for p in threadpool_info()})
        return choose(make, grid, sets, *args)

    monkeypatch.setattr(baselines, "_choose", spy)
    before = {p["user_api"]: p["num_threads"] for p in threadpool_info()}
    result = baselines.fit_models(data)
    assert set(result["models"]) == {"logistic regression", "gradient boosting"} and len(seen) == 2
    assert all(threads == 1 for pools in seen for threads in pools.values()), seen
    assert {p["user_api"]: p["num_threads"] for p in threadpool_info()} == before  # put back after
    big = np.zeros((baselines.CLASSIC_ONE_THREAD_VALUES // 10, 10))
    assert baselines.classic_threads({"train": (big, None)}) is None
    assert baselines.classic_threads({"train": (big[:-1], None)}) == 1

"""fpt train --refit: steps chosen on validation, then a fresh model trained on train + validation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

import fpt
from fpt.cli import main
from fpt.config import RunConfig, from_dict
from fpt.errors import ConfigError
from fpt.refit import refit_config, refit_steps
from fpt.rundir import SELECTION_RUN as SELECTION


def _fields(path: Path, body: str, **kw) -> dict:
    return {"data": str(path), "body": body, "init": "random", "steps": 12, "batch_size": 8, "eval_every": 3,
            "device": "cpu", "seed": 0, **kw}


def test_refit_steps_keep_the_number_of_epochs():
    assert refit_steps(40, 40, 10) == 50
    assert refit_steps(3, 36, 12) == 4
    assert refit_steps(1, 100, 1) == 1


def test_train_on_val_joins_validation_to_the_training_examples(tmp_path, tiny_gpt2_dir, tiny_tables):
    path = tiny_tables.classification("d.csv")
    plain = fpt.build(**_fields(path, tiny_gpt2_dir))
    joined = fpt.build(**_fields(path, tiny_gpt2_dir, train_on_val=True, eval_every=12))
    val = plain.data.eval_sets["val"]
    assert len(joined.data.train) == len(plain.data.train) + len(val)
    assert torch.equal(joined.data.train.data.x, torch.cat([plain.data.train.data.x, val.x]))
    assert torch.equal(joined.data.train.data.y, torch.cat([plain.data.train.data.y, val.y]))
    # validation and test are the same examples; only training grew
    assert torch.equal(joined.data.eval_sets["test"].x, plain.data.eval_sets["test"].x)
    assert joined.data.info["train_on_val"] is True


def test_train_on_val_refuses_selection_on_validation(tmp_path, tiny_gpt2_dir, tiny_tables):
    with pytest.raises(ConfigError, match="train_on_val.*eval_every >= steps"):
        RunConfig(**_fields(tiny_tables.classification("d.csv"), tiny_gpt2_dir, train_on_val=True))


def test_refit_run_trains_the_selected_epochs_on_train_and_val(tmp_path, tiny_gpt2_dir, capsys, tiny_tables):
    path = tiny_tables.classification("d.csv")
    out = tmp_path / "run"
    args = ["train", "--data", str(path), "--body", tiny_gpt2_dir, "--init", "random", "--steps", "12",
            "--batch-size", "8", "--eval-every", "3", "--device", "cpu", "--out", str(out), "--quiet", "--refit"]
    assert main(args) == 0
    printed = json.loads(capsys.readouterr().out.splitlines()[0])
    selection = json.loads((out / SELECTION / "summary.json").read_text())
    summary = json.loads((out / "summary.json").read_text())
    sizes = selection["task_info"]["split_sizes"]
    expected = refit_steps(selection["selected_step"], sizes["train"], sizes["val"])
    assert summary["steps"] == expected and summary["selected_step"] == expected
    assert summary["val_accuracy"] is None and summary["steps_to_converge"] is None  # trained on validation
    block = summary["refit"]
    assert block["selected_step"] == selection["selected_step"] and block["steps"] == expected
    assert block["train_examples"] == sizes["train"] + sizes["val"]
    assert block["selection_val_accuracy"] == selection["val_accuracy"]
    assert block["selection_test_accuracy"] == selection["test_accuracy"]
    assert printed["selection_val_accuracy"] == selection["val_accuracy"]
    assert printed["test_accuracy"] == summary["test_accuracy"]
    # the second run is an ordinary run of the refit config: the same model as training that config directly
    config = fpt.Run(out).config()
    # every field resolved as a plain run of the same fields resolves it (fpt.settings.resolve), then refitted
    assert config == refit_config(fpt.build(from_dict(RunConfig, _fields(path, tiny_gpt2_dir))).config, selection)
    assert (config.lr, config.patience, config.series_norm) == (1e-3, 10, "global")  # task's, data task's, preset's
    direct = fpt.fit(fpt.build(config), out=tmp_path / "direct", progress=False)
    assert direct["test_accuracy"] == pytest.approx(summary["test_accuracy"], abs=1e-6)
    assert direct["eval"]["test_loss"] == pytest.approx(summary["eval"]["test_loss"], abs=1e-5)
    # and the run directory serves the refit model (fpt predict / export read it as any run)
    test = fpt.build(config).data.eval_sets["test"]
    served, trained = fpt.Run(out).load(), fpt.Run(tmp_path / "direct").load()
    assert np.allclose(served.logits(test.x, test.lengths), trained.logits(test.x, test.lengths), atol=1e-6)


def test_refit_resumes_the_stopped_run(tmp_path, tiny_gpt2_dir, capsys, tiny_tables):
    path = tiny_tables.classification("d.csv")
    out = tmp_path / "run"
    base = ["--data", str(path), "--body", tiny_gpt2_dir, "--init", "random", "--steps", "12", "--batch-size", "8",
            "--eval-every", "3", "--device", "cpu", "--quiet"]
    assert main(["train", *base, "--out", str(out), "--refit"]) == 0
    whole = json.loads((out / "summary.json").read_text())
    # as if the second run had been killed: its summary gone; resuming finishes it, selection is not rerun
    (out / "summary.json").unlink()
    before = (out / SELECTION / "metrics.jsonl").read_text()
    assert main(["train", "--resume", str(out), "--quiet"]) == 0
    again = json.loads((out / "summary.json").read_text())
    assert (out / SELECTION / "metrics.jsonl").read_text() == before
    assert again["test_accuracy"] == pytest.approx(whole["test_accuracy"], abs=1e-6)
    assert again["refit"] == whole["refit"]


def test_refit_needs_your_own_data(tiny_gpt2_dir, tmp_path, capsys):
    assert main(["train", "--task", "bit-xor", "--body", tiny_gpt2_dir, "--steps", "2", "--refit", "--quiet",
                 "--out", str(tmp_path / "r")]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--refit" in err and "--data PATH" in err and "drop --refit" in err
    assert not (tmp_path / "r").exists()


def test_refit_run_is_compared_with_refit_baselines(tmp_path, tiny_gpt2_dir, capsys, tiny_tables):
    from fpt import baselines

    out = tmp_path / "run"
    assert main(["train", "--data", str(tiny_tables.classification("d.csv")), "--body", tiny_gpt2_dir, "--init", "random",
                 "--steps", "4", "--batch-size", "8", "--eval-every", "2", "--device", "cpu", "--out", str(out),
                 "--quiet", "--refit"]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    summary = json.loads((out / "summary.json").read_text())
    compared = summary["baselines_models"]
    assert compared["protocol"] == "refit" and set(compared["models"]) == {"logistic regression", "gradient boosting"}
    assert all(e["protocol"] == "refit" for e in compared["models"].values())
    assert printed[-1] == compared["line"] and compared["line"].endswith("then refit on train+validation")
    assert any(line.split()[:1] == ["fpt"] and "refit" in line for line in printed)  # the table's fpt row
    # chosen on the selection run's validation split, exactly as a plain run's baselines would be
    plain = baselines.fit_models(baselines.task_data(fpt.Run(out / SELECTION).config()))
    assert {k: e["val"] for k, e in compared["models"].items()} == {k: e["val"] for k, e in plain["models"].items()}
    assert compared["best_on_validation"]["val"] == max(
        [e["val"] for e in compared["models"].values()] + [round(summary["refit"]["selection_val_accuracy"], 4)])


def test_refit_fits_the_budget_it_is_asked_to(tmp_path, tiny_gpt2_dir, tiny_tables):
    from fpt import refit

    config = from_dict(RunConfig, {**_fields(tiny_tables.classification("d.csv"), tiny_gpt2_dir, steps=4), "eval_every": None})
    assert config.eval_every is None  # left unset: resolved for the data when the selection run is built
    summary = refit.fit(config, tmp_path / "run", progress=False)
    # eval_every fitted to the data as a plain --data run's (at least 10 steps, at most steps), steps kept
    selection = fpt.Run(tmp_path / "run" / SELECTION).config()
    assert (selection.steps, selection.eval_every) == (4, 4)
    assert summary["refit"]["selected_step"] == 4 and summary["refit"]["selection_wall_seconds"] > 0


def test_refit_progress_names_the_surface_the_caller_used(tmp_path, tiny_gpt2_dir, capsys, tiny_tables):
    """fpt.train_run(refit=True) reported its stages as `fpt train --refit: 1/2`, a command its caller never ran."""
    path = tiny_tables.classification("d.csv")
    fields = dict(data=str(path), body=tiny_gpt2_dir, init="random", steps=6, batch_size=8, eval_every=3, device="cpu")
    fpt.train_run(fields, tmp_path / "py", refit=True, progress=True)
    said = capsys.readouterr().out
    assert "refit=True: 1/2, choosing the number of steps on validation" in said and "refit=True: 2/2, " in said
    assert "fpt train --refit" not in said
    args = ["train", "--data", str(path), "--body", tiny_gpt2_dir, "--init", "random", "--steps", "6",
            "--batch-size", "8", "--eval-every", "3", "--device", "cpu", "--out", str(tmp_path / "cli"), "--refit"]
    assert main(args) == 0
    said = capsys.readouterr()
    assert "fpt train --refit: 1/2" in said.out + said.err and "refit=True" not in said.out + said.err

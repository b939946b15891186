"""An error or note names what its reader can set: the command line a flag (--drop-columns), fpt.build and fpt.fit a
keyword argument (drop_columns), an estimator its own argument (series_patch) or, for a setting it does not take,
what to do instead (fpt.errors.option, remedy, entry)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

import fpt
from fpt.cli import main
from fpt.data.base import ObjectiveInferred
from fpt.errors import CLI, ConfigError, DataError, RunError, SchemaError, option, wording
from fpt.sklearn import FPTClassifier, FPTRegressor

POSITIONS = 16  # the short body's learned positions: 20 columns, 50 windows or 64 image patches are too many


@pytest.fixture(scope="module")
def short_body(tmp_path_factory) -> str:
    from transformers import GPT2Config, GPT2Model

    path = tmp_path_factory.mktemp("short-gpt2")
    torch.manual_seed(0)
    GPT2Model(GPT2Config(n_layer=1, n_embd=32, n_head=4, n_positions=POSITIONS, vocab_size=50)).save_pretrained(path)
    return str(path)


def estimator(cls, body, **kwargs):
    return cls(body=body, fitting="gradient", steps=1, device="cpu", **kwargs)


def wide_table(columns: int = 20, rows: int = 30) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.normal(size=(rows, columns)), np.arange(rows) % 2


def test_an_estimator_too_wide_for_its_body_names_X_not_drop_columns(short_body):
    X, y = wide_table()
    with pytest.raises(ConfigError) as err:
        estimator(FPTClassifier, short_body).fit(X, y)
    msg = str(err.value)
    assert msg.startswith("arrays passed to FPTClassifier.fit: its examples make 20 tokens")
    assert f"reads at most {POSITIONS} positions" in msg and "leave columns out of X" in msg
    assert "(body='gpt2' reads 1,024)" in msg and "--" not in msg  # was: --drop-columns, --body gpt2


def test_a_wide_array_of_numbers_too_wide_for_its_body_is_told_its_rows_may_be_series(short_body):
    X, y = wide_table()
    hint = "e.g. with PCA; if each row is one series, its columns the points, modality='timeseries' reads it in windows)"
    # was: only 'leave columns out ... (or reduce them beforehand, e.g. with PCA)', for rows that may be series
    with pytest.raises(ConfigError) as err:
        estimator(FPTClassifier, short_body).fit(X, y)
    assert hint in str(err.value)
    with pytest.raises(ConfigError) as err:
        fpt.build(data=(X, y), body=short_body, fit="gradient", steps=1, device="cpu")
    assert str(err.value).startswith("in-memory tuple (30, 20): its examples make 20 tokens") and hint in str(err.value)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(20)]).assign(kind=["a", "b", "c"] * 10, label=y)
    with pytest.raises(ConfigError) as err:  # a column of categories: no series
        fpt.build(data=frame, body=short_body, fit="gradient", steps=1, device="cpu")
    assert "its examples make 21 tokens" in str(err.value) and "series" not in str(err.value)
    assert fpt.build(data=(X, y), modality="timeseries", series_patch=4, body=short_body, fit="gradient", steps=1,
                     device="cpu").config.modality == "timeseries"  # the hint taken: 20 points, 5 windows


def test_an_estimator_series_too_long_names_its_series_patch_argument(short_body):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 1, 100)), rng.normal(size=30)
    with pytest.raises(ConfigError) as err:
        estimator(FPTRegressor, short_body, series_patch=2).fit(X, y)  # 100 points / 2: 50 windows
    msg = str(err.value)
    assert "its examples make 50 tokens" in msg and "raise series_patch (left unset" in msg and "--" not in msg


def test_an_estimator_image_too_many_patches_says_it_cannot_change_them(short_body):
    rng = np.random.default_rng(0)
    X, y = rng.integers(0, 255, size=(30, 8, 8, 3), dtype=np.uint8), np.arange(30) % 2
    with pytest.raises(ConfigError) as err:
        estimator(FPTClassifier, short_body).fit(X, y)
    msg = str(err.value)
    # the estimator takes neither patch_size nor image_size (options refuses both): not told to set them
    assert "its examples make 64 tokens" in msg and "--" not in msg and "patch_size" not in msg
    assert "FPTClassifier reads every image at 32x32 pixels in 4x4 patches (64 tokens), which it does not let you " \
           "change, or choose a body with more positions (body='gpt2' reads 1,024)" in msg


def test_build_too_wide_names_its_keyword_arguments_and_the_command_line_its_flags(short_body, tmp_path, capsys):
    X, y = wide_table()
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(20)]).assign(label=y)
    with pytest.raises(ConfigError) as err:
        fpt.build(data=frame, body=short_body, fit="gradient", steps=1, device="cpu")
    msg = str(err.value)
    assert "its examples make 20 tokens" in msg and "leave columns out with drop_columns" in msg
    assert "(body='gpt2' reads 1,024)" in msg and "--" not in msg
    # a file given to fpt.build: Python's words too (fpt.build was not only in-memory data's entry)
    frame.to_csv(tmp_path / "t.csv", index=False)
    with pytest.raises(ConfigError, match="drop_columns") as err:
        fpt.build(data=str(tmp_path / "t.csv"), body=short_body, fit="gradient", steps=1, device="cpu")
    assert "--" not in str(err.value)
    rc = main(["train", "--data", str(tmp_path / "t.csv"), "--body", short_body, "--fit", "gradient", "--steps", "1",
               "--device", "cpu", "--out", str(tmp_path / "run"), "--quiet"])
    err_line = capsys.readouterr().err.strip().splitlines()[-1]
    assert rc == 2 and "leave columns out with --drop-columns" in err_line and "(--body gpt2 reads 1,024)" in err_line


def test_build_images_name_patch_size_and_image_size(short_body, tmp_path):
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "d.npz", X=rng.integers(0, 255, size=(20, 8, 8), dtype=np.uint8), y=np.arange(20) % 2)
    with pytest.raises(ConfigError) as err:
        fpt.build(data=str(tmp_path / "d.npz"), body=short_body, fit="gradient", steps=1, device="cpu")
    assert "an image makes one token per patch: raise patch_size or lower image_size," in str(err.value)


def test_the_inferred_objective_note_names_the_python_argument_in_python(short_body, tmp_path, capsys):
    frame = pd.DataFrame({"x": np.arange(40) * 0.1, "label": np.arange(40) % 2})
    with pytest.warns(ObjectiveInferred) as seen:
        fpt.build(data=frame, body=short_body, fit="gradient", steps=1, device="cpu")
    note = str(seen[0].message)
    # was: give --objective regression (Python: objective='regression'), one surface's words beside the other's
    assert note.endswith("objective classification, inferred from the values ('label' holds 2 distinct integers); "
                         "give objective='regression' if that is wrong"), note
    frame.to_csv(tmp_path / "t.csv", index=False)
    assert main(["data", "--data", str(tmp_path / "t.csv")]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if "note:" in line]
    assert len(notes) == 1 and notes[0].endswith("give --objective regression if that is wrong"), notes


def test_a_date_target_names_the_objective_as_its_surface_does(short_body, tmp_path, capsys):
    frame = pd.DataFrame({"x": np.arange(30) * 0.1, "when": pd.date_range("2024-01-01", periods=30)})
    with pytest.raises(DataError) as err:
        fpt.build(data=frame, target="when", body=short_body, fit="gradient", steps=1, device="cpu")
    assert "pass objective='classification' to predict each date as a class label" in str(err.value)
    assert "--objective" not in str(err.value)
    frame.to_csv(tmp_path / "t.csv", index=False)
    assert main(["data", "--data", str(tmp_path / "t.csv"), "--target", "when"]) == 2
    err_line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "pass --objective classification to predict each date" in err_line and "Python:" not in err_line


def test_a_capitalised_column_is_a_value_not_a_placeholder():
    with wording(fpt.errors.PYTHON):
        assert option("drop_columns", "ID") == "drop_columns='ID'"  # was: drop_columns=ID, as if a placeholder
        assert option("target", "NAME", placeholder=True) == "target=NAME"
    with wording(CLI):
        assert option("drop_columns", "ID") == "--drop-columns ID"


@pytest.fixture(scope="module")
def ridge_run(short_body, tmp_path_factory):
    """A closed-form run with a ridge head (class scores, no probabilities) of a 3-feature table, and its CSV."""
    folder = tmp_path_factory.mktemp("ridge")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(40, 3)), columns=["a", "b", "c"])
    frame["label"] = np.where(frame.a > 0, "yes", "no")
    frame.to_csv(folder / "t.csv", index=False)
    fields = dict(data=str(folder / "t.csv"), body=short_body, fit="closed-form", cf_head="ridge", device="cpu",
                  baselines="none")
    fpt.fit(fpt.build(**fields), out=folder / "run", progress=False)
    return folder, fields


def test_a_new_fit_into_a_run_names_resume_as_its_surface_does(ridge_run, capsys):
    folder, fields = ridge_run
    with pytest.raises(FileExistsError) as err:
        fpt.fit(fpt.build(**fields), out=folder / "run", progress=False)
    # was: continue it with --resume DIR or choose another --out, flags fpt.fit does not take
    assert str(err.value) == f"{folder / 'run'} already holds a run; continue it with resume=True or choose another out"
    with pytest.raises(FileExistsError, match=r"run already holds a run; choose another out$"):  # was: --out
        fpt.train_run({**fields, "fit": "closed-form"}, folder / "run", choose=["cf_head=ridge", "cf_head=logistic"])
    rc = main(["train", "--data", fields["data"], "--body", fields["body"], "--fit", "closed-form", "--cf-head",
               "ridge", "--device", "cpu", "--baselines", "none", "--out", str(folder / "run"), "--quiet"])
    err_line = capsys.readouterr().err.strip().splitlines()[-1]
    assert rc == 2 and err_line.endswith(f"continue it with --resume {folder / 'run'} or choose another --out")


def test_resuming_a_run_of_another_config_names_the_resume_its_surface_has(ridge_run, tmp_path):
    import shutil

    folder, fields = ridge_run
    shutil.copytree(folder / "run", tmp_path / "run")
    exp = fpt.build(**{**fields, "cf_head": "logistic"})
    with pytest.raises(ConfigError) as err:
        fpt.fit(exp, out=tmp_path / "run", resume=True, progress=False)
    # was: resume it with its own config (fpt train --resume DIR), or choose another out: a command, to fpt.fit's caller
    assert str(err.value).endswith(f"resume it with its own config (fpt.train_run(None, '{tmp_path / 'run'}', "
                                   "resume=True)), or choose another out"), str(err.value)
    with pytest.raises(ConfigError) as err, wording(CLI):
        fpt.fit(exp, out=tmp_path / "run", resume=True, progress=False)
    assert str(err.value).endswith(f"(fpt train --resume {tmp_path / 'run'}), or choose another --out")


def test_a_broken_selection_file_names_choose_and_out_as_the_caller_gives_them(ridge_run, tmp_path, capsys):
    import shutil

    folder, _ = ridge_run
    shutil.copytree(folder / "run", tmp_path / "run")
    (tmp_path / "run" / "selection.json").write_text('{"metric": "loss"}')
    with pytest.raises(fpt.errors.CheckpointError) as err:
        fpt.train_run(None, tmp_path / "run", resume=True)
    assert str(err.value).endswith("move it out of the run directory to resume without it (or train with choose again "
                                   "into a new out)"), str(err.value)  # was: --choose, --out
    line = _cli_line(capsys, ["train", "--resume", str(tmp_path / "run")])
    assert line.endswith("(or train with --choose again into a new --out)"), line


def test_attention_of_a_block_the_model_lacks_names_layer_as_the_caller_gives_it(ridge_run, capsys):
    from fpt.analysis.attention import analyse_run

    folder, _ = ridge_run
    with pytest.raises(ConfigError, match=r"^layer=3: this model runs blocks 0..0$"):  # was: --layer 3
        analyse_run(folder / "run", layer=3)
    with pytest.raises(ConfigError, match=r"^examples=0 must be >= 1$"):  # was: --examples must be >= 1
        analyse_run(folder / "run", examples=0)
    assert _cli_line(capsys, ["attention", str(folder / "run"), "--layer", "3"]).endswith(
        "error: --layer 3: this model runs blocks 0..0")
    assert _cli_line(capsys, ["attention", str(folder / "run"), "--examples", "0"]).endswith(
        "error: --examples 0 must be >= 1")


def test_a_closed_form_fit_is_refused_data_parallel_before_any_process_starts(tmp_path, capsys, monkeypatch):
    from fpt import distributed

    table = _table(tmp_path)
    started = []
    monkeypatch.setattr(distributed, "launch", lambda nproc, argv: started.append(nproc) or 0)
    # was: 2 processes started, each read the data, then refused (fpt.train._fit_closed_form)
    line = _cli_line(capsys, ["train", "--data", table, "--fit", "closed-form", "--nproc", "2", "--out",
                              str(tmp_path / "r")])
    assert line == "fpt train: error: fit=closed-form fits in one process: drop --nproc" and started == []
    for name, value in (("LOCAL_RANK", "0"), ("RANK", "0"), ("WORLD_SIZE", "2")):  # a Python script under torchrun:
        monkeypatch.setenv(name, value)  # torchrun is what to drop
    with pytest.raises(ConfigError, match=r"^fit=closed-form fits in one process: drop torchrun$"):
        fpt.train_run({"data": table, "fit": "closed-form"}, tmp_path / "r2")


def test_missing_listops_files_name_generate_and_data_dir_as_the_caller_gives_them(tmp_path, capsys):
    with pytest.raises(DataError) as err:
        fpt.build(task="listops", data_dir=str(tmp_path), body="gpt2", device="cpu")
    # was: (or task.generate=true), a command-line override, to fpt.build's caller
    assert "(or task_options={'generate': True}), or download" in str(err.value)
    assert str(err.value).endswith("set data_dir to the folder holding listops-1000/")
    line = _cli_line(capsys, ["train", "--task", "listops", "--data-dir", str(tmp_path), "--out", str(tmp_path / "r")])
    assert "(or task.generate=true), or download" in line  # was: set data_dir, a keyword, on the command line
    assert line.endswith("set --data-dir to the folder holding listops-1000/")


def test_training_on_validation_names_the_refit_its_surface_has(tmp_path, capsys):
    table = _table(tmp_path)
    with pytest.raises(ConfigError) as err:
        fpt.build(data=table, train_on_val=True, steps=10, eval_every=5, body="gpt2", device="cpu")
    assert str(err.value).endswith("(eval_every >= steps=10; eval_every is 5); fpt.train_run(..., refit=True) does "
                                   "this")  # was: fpt train --refit does this
    line = _cli_line(capsys, ["train", "--data", table, "--train-on-val", "--steps", "10", "--eval-every", "5"])
    assert line.endswith("eval_every is 5); fpt train --refit does this")


def test_predict_proba_of_a_ridge_head_names_cf_head_as_an_argument(ridge_run):
    folder, _ = ridge_run
    model = fpt.load(folder / "run")
    with pytest.raises(ConfigError) as err:
        model.predict_proba(str(folder / "t.csv"))
    assert "fit with cf_head='logistic' for probabilities" in str(err.value) and "--" not in str(err.value)


# --- the data readers' refusals (fpt.data, its tables, hub, image-table and image readers): each kind from Python and
# from the command line (fpt data reads as fpt train does, without training); the option named as the caller wrote it


def _table(folder) -> str:
    rng = np.random.default_rng(0)
    path = folder / "t.csv"
    pd.DataFrame({"row": np.arange(30), "x1": rng.normal(size=30), "label": np.arange(30) % 2}).to_csv(path, index=False)
    return str(path)


def _images(folder) -> str:
    from PIL import Image

    rng = np.random.default_rng(0)
    for label in "ab":
        (folder / "imgs" / label).mkdir(parents=True)
        for i in range(3):
            Image.fromarray(rng.integers(0, 255, (8, 8, 3), dtype=np.uint8)).save(folder / "imgs" / label / f"{i}.png")
    return str(folder / "imgs")


def _both(capsys, fields: dict, argv: list[str]) -> tuple[str, str]:
    """The one-line refusal of fpt.build(**fields) and of fpt data ARGV: (Python's, the command line's)."""
    with pytest.raises(DataError) as err:
        fpt.build(**fields, body="gpt2", device="cpu")  # refused while the data is read, before any body is built
    assert main(["data", *argv]) == 2
    line = capsys.readouterr().err.strip()
    assert len(line.splitlines()) == 1 and line.startswith("fpt data: error: ")
    return str(err.value), line


def test_where_the_data_is_names_data_as_the_caller_gave_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    python, cli = _both(capsys, {"data": "nope.csv"}, ["--data", "nope.csv"])
    assert python.startswith("data='nope.csv': no such file or folder (relative to") and "--" not in python
    assert cli.startswith("fpt data: error: --data nope.csv: no such file or folder (relative to")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")  # a hub id is looked up in the local cache only
    python, cli = _both(capsys, {"data": "someone/no-such-set"}, ["--data", "someone/no-such-set"])
    assert python.startswith("data='someone/no-such-set' is not a file or folder here, and as a Hugging Face dataset "
                             "id it cannot be loaded") and "--" not in python
    assert "error: --data someone/no-such-set is not a file or folder here" in cli
    # a table column of image file names: the folder fpt does read named as data=DIR, not --data DIR
    pd.DataFrame({"f": [f"{i}.png" for i in range(30)], "label": np.arange(30) % 2}).to_csv("paths.csv", index=False)
    python, cli = _both(capsys, {"data": "paths.csv"}, ["--data", "paths.csv"])
    assert "give the folder (data=DIR, DIR/<class>/*.png)" in python and "(data=DIR: DIR/labels.csv" in python
    assert "--" not in python and "give the folder (--data DIR, DIR/<class>/*.png)" in cli


def test_a_target_that_cannot_apply_names_target_as_the_caller_gave_it(tmp_path, capsys):
    folder = _images(tmp_path)
    python, cli = _both(capsys, {"data": folder, "target": "kind"}, ["--data", folder, "--target", "kind"])
    assert python.endswith("target='kind' names a table column, but here the target is each image's class folder; "
                           "drop target='kind'") and "--" not in python
    assert cli.endswith("--target kind names a table column, but here the target is each image's class folder; drop "
                        "--target kind")
    table = _table(tmp_path)
    python, cli = _both(capsys, {"data": table, "drop_columns": "label"}, ["--data", table, "--drop-columns", "label"])
    assert python.endswith("take it out of drop_columns, or name the target with target=NAME") and "--" not in python
    assert cli.endswith("take it out of --drop-columns, or name the target with --target NAME")


def test_a_column_option_that_cannot_apply_names_it_as_the_caller_gave_it(tmp_path, capsys):
    table = _table(tmp_path)
    python, cli = _both(capsys, {"data": table, "drop_columns": "rowz"}, ["--data", table, "--drop-columns", "rowz"])
    assert "t.csv: drop_columns names 'rowz', which is not a column (did you mean 'row'?)" in python
    assert "--" not in python and "t.csv: --drop-columns names 'rowz', which is not a column" in cli
    python, cli = _both(capsys, {"data": table, "series_id": "row", "drop_columns": "row"},
                        ["--data", table, "--series-id", "row", "--drop-columns", "row"])
    assert "'row' is in series_id and drop_columns; the series' id" in python and "--" not in python
    assert "'row' is in --series-id and --drop-columns; the series' id" in cli
    np.savez(tmp_path / "d.npz", X=np.zeros((20, 3)), y=np.arange(20) % 2)
    python, cli = _both(capsys, {"data": str(tmp_path / "d.npz"), "series_id": "a"},
                        ["--data", str(tmp_path / "d.npz"), "--series-id", "a"])
    assert "d.npz: series_id groups the rows of a long-format table" in python and "--" not in python
    assert "d.npz: --series-id groups the rows of a long-format table" in cli


def test_a_modality_that_cannot_apply_names_it_as_the_caller_gave_it(tmp_path, capsys):
    folder = _images(tmp_path)
    python, cli = _both(capsys, {"data": folder, "modality": "tabular"}, ["--data", folder, "--modality", "tabular"])
    assert python.endswith("holds image data; modality='tabular' cannot apply (drop it or use image)")
    assert "--" not in python and cli.endswith("holds image data; --modality tabular cannot apply (drop it or use image)")
    table = str(tmp_path / "two.csv")  # two text columns: one is to be left out
    pd.DataFrame({"a": ["x", "yz"] * 15, "b": ["p", "qr"] * 15, "label": [0, 1] * 15}).to_csv(table, index=False)
    python, cli = _both(capsys, {"data": table, "modality": "sequence"}, ["--data", table, "--modality", "sequence"])
    assert "two.csv: modality='sequence' needs exactly one text feature column" in python and "--" not in python
    assert python.endswith("leave the others out with drop_columns")
    assert "two.csv: --modality sequence needs exactly one text feature column" in cli
    assert cli.endswith("leave the others out with --drop-columns")
    table = _table(tmp_path)  # none: no column to leave out makes one hold text (that was said here too)
    python, cli = _both(capsys, {"data": table, "modality": "sequence"}, ["--data", table, "--modality", "sequence"])
    assert python.endswith("t.csv: modality='sequence' needs a text feature column, but none of 'row', 'x1' holds "
                           "text (each is read as numbers, dates or durations, or is empty); give the column of texts "
                           "(symbols or words)"), python
    assert cli.endswith("t.csv: --modality sequence needs a text feature column, but none of 'row', 'x1' holds text "
                        "(each is read as numbers, dates or durations, or is empty); give the column of texts (symbols "
                        "or words)"), cli


# --- a trained model's refusals: new inputs (Predictor's allow_unseen), the predictions file (Prediction.write's path)
# and the export (Run.export's out and force), each from Python and from fpt predict / fpt export


@pytest.fixture(scope="module")
def kind_run(short_body, tmp_path_factory):
    """A closed-form run of a table with a category column (kind: p, q), its CSV, and a CSV with a kind unseen."""
    folder = tmp_path_factory.mktemp("kinds")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=40), "kind": np.where(np.arange(40) % 2, "p", "q")})
    frame["label"] = np.where(frame.x > 0, "yes", "no")
    frame.to_csv(folder / "t.csv", index=False)
    frame.assign(kind="z").to_csv(folder / "new.csv", index=False)
    fpt.fit(fpt.build(data=str(folder / "t.csv"), body=short_body, fit="closed-form", device="cpu", baselines="none"),
            out=folder / "run", progress=False)
    return folder


def _cli_line(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    line = capsys.readouterr().err.strip()
    assert len(line.splitlines()) == 1
    return line


def test_an_unseen_category_names_allow_unseen_as_the_caller_gives_it(kind_run, capsys):
    model = fpt.load(kind_run / "run")
    with pytest.raises(SchemaError) as err:
        model.predict(str(kind_run / "new.csv"))
    # was: or pass --allow-unseen (Python: allow_unseen=True), both surfaces' words to either
    assert "category 'z' was not seen in training" in str(err.value) and "--" not in str(err.value)
    assert str(err.value).endswith("fix the value, or pass allow_unseen=True to map unseen categories to the shared "
                                   "unknown slot")
    line = _cli_line(capsys, ["predict", str(kind_run / "run"), str(kind_run / "new.csv"), "--out",
                              str(kind_run / "p.csv")])
    assert line.endswith("fix the value, or pass --allow-unseen to map unseen categories to the shared unknown slot")


def test_a_predictions_file_fpt_cannot_write_names_write_s_path(kind_run, capsys):
    result = fpt.load(kind_run / "run").predict_file(str(kind_run / "t.csv"))
    xlsx = kind_run / "p.xlsx"
    with pytest.raises(ConfigError) as err:
        result.write(xlsx)
    assert str(err.value).startswith(f"path {xlsx}: fpt writes predictions as .csv, .tsv") and "--" not in str(err.value)
    line = _cli_line(capsys, ["predict", str(kind_run / "run"), str(kind_run / "t.csv"), "--out", str(xlsx)])
    assert line.startswith(f"fpt predict: error: --out {xlsx}: fpt writes predictions as .csv")


def test_an_export_that_cannot_be_written_names_run_export_s_arguments(kind_run, capsys):
    run = fpt.Run(kind_run / "run")
    run.export(kind_run / "export")
    with pytest.raises(FileExistsError) as err:
        run.export(kind_run / "export")
    assert str(err.value) == f"{kind_run / 'export'} is an export; give force=True to replace it"  # was: --force
    line = _cli_line(capsys, ["export", str(kind_run / "run"), str(kind_run / "export")])
    assert line.endswith(f"{kind_run / 'export'} is an export; give --force to replace it")
    (kind_run / "a-file").write_text("mine")
    with pytest.raises(ConfigError) as err:
        run.export(kind_run / "a-file")
    assert str(err.value) == f"out {kind_run / 'a-file'} is a file, not a folder; choose another out"  # was: DIR
    line = _cli_line(capsys, ["export", str(kind_run / "run"), str(kind_run / "a-file")])
    assert line.endswith(f"DIR {kind_run / 'a-file'} is a file, not a folder; choose another DIR")
    link = kind_run / "link"  # a link out of its folder is refused whatever is forced
    link.symlink_to(kind_run.parent)
    with pytest.raises(ConfigError) as err:
        run.export(link, force=True)
    assert "(even with force=True): remove the link, or choose another out" in str(err.value)  # was: --force
    line = _cli_line(capsys, ["export", str(kind_run / "run"), str(link), "--force"])
    assert line.endswith("(even with --force): remove the link, or choose another DIR")


# --- config files: a setting read from fpt train --config FILE is named by its key and the file, not by a flag the
# user never wrote; one given on the command line keeps its flag


def test_a_setting_from_a_config_file_is_named_by_its_key_and_the_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _table(tmp_path)
    train = ["train", "--body", "gpt2", "--device", "cpu", "--out", "run", "--config"]
    Path("a.yaml").write_text("data: t.csv\ntarget: nosuch\n")
    line = _cli_line(capsys, [*train, "a.yaml"])
    assert line.endswith("no column 'nosuch'; its columns are row, x1, label; give target: NAME in a.yaml"), line
    assert _cli_line(capsys, [*train, "a.yaml", "--target", "nosuch2"]).endswith("give --target NAME")
    Path("b.yaml").write_text("data: t.csv\ndrop_columns: rowz\n")
    line = _cli_line(capsys, [*train, "b.yaml"])
    assert "t.csv: drop_columns in b.yaml names 'rowz', which is not a column (did you mean 'row'?)" in line, line
    line = _cli_line(capsys, [*train, "b.yaml", "--drop-columns", "rowz"])
    assert "t.csv: --drop-columns names 'rowz'" in line and "b.yaml" not in line
    Path("c.yaml").write_text("data: nope.csv\n")
    assert _cli_line(capsys, [*train, "c.yaml"]).startswith("fpt train: error: data: nope.csv in c.yaml: no such file")
    # an unknown task option (was: task 'data' options: unknown field(s) ['delimiter'], naming no file)
    Path("d.yaml").write_text("data: t.csv\ntask_options: {delimiter: ';'}\n")
    line = _cli_line(capsys, [*train, "d.yaml"])
    assert line.startswith("fpt train: error: d.yaml: task 'data' options: unknown field(s) ['delimiter']"), line
    line = _cli_line(capsys, [*train, "c.yaml", "--data", "t.csv", "task.delimiter=;"])
    assert line.startswith("fpt train: error: task 'data' options: unknown field(s) ['delimiter']"), line
    Path("e.yaml").write_text("data: t.csv\nseries_id: row\n")
    line = _cli_line(capsys, [*train, "e.yaml"])
    assert "t.csv: series_id: row in e.yaml gives every row a series of its own" in line
    assert line.endswith("or drop series_id in e.yaml to read the rows as examples of a table")


def test_a_mistyped_modality_is_named_by_its_own_key_not_the_data(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _table(tmp_path)
    train = ["train", "--body", "gpt2", "--device", "cpu", "--out", "run"]
    Path("m.yaml").write_text("data: t.csv\nmodality: tabularr\n")
    line = _cli_line(capsys, [*train, "--config", "m.yaml"])  # was: data: /abs/t.csv in m.yaml: config field 'modality'
    assert line.startswith("fpt train: error: modality: tabularr in m.yaml (did you mean 'tabular'?) must be auto or "
                           "one of tabular, image"), line
    line = _cli_line(capsys, [*train, "--data", "t.csv", "--modality", "tabularr"])
    assert line.startswith("fpt train: error: --modality tabularr (did you mean 'tabular'?) must be auto"), line
    with pytest.raises(ConfigError) as err:
        fpt.build(data="t.csv", modality="tabularr", body="gpt2", device="cpu")
    assert str(err.value).startswith("modality='tabularr' (did you mean 'tabular'?) must be auto or one of tabular")


def test_a_validation_fraction_too_large_is_named_with_test_fraction_not_blamed_on_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _table(tmp_path)
    train = ["train", "--body", "gpt2", "--device", "cpu", "--out", "run"]
    Path("v.yaml").write_text("data: t.csv\nval_fraction: 0.99\n")
    # was: config field 'test_fraction'=0.2 must be in (0, 1) and leave training examples with val_fraction=0.99
    line = _cli_line(capsys, [*train, "--config", "v.yaml"])
    assert line.endswith("config fields val_fraction=0.99 and test_fraction=0.2 hold out every example, leaving none "
                         "to train on (their sum must be under 1): lower val_fraction in v.yaml or --test-fraction")
    line = _cli_line(capsys, [*train, "--data", "t.csv", "--val-fraction", "0.99"])
    assert line.endswith("config fields val_fraction=0.99 and test_fraction=0.2 hold out every example, leaving none "
                         "to train on (their sum must be under 1): lower --val-fraction or --test-fraction"), line
    with pytest.raises(ConfigError) as err:
        fpt.build(data="t.csv", val_fraction=0.5, test_fraction=0.5, body="gpt2", device="cpu")
    assert str(err.value).endswith("config fields val_fraction=0.5 and test_fraction=0.5 hold out every example, "
                                   "leaving none to train on (their sum must be under 1): lower val_fraction or "
                                   "test_fraction")
    with pytest.raises(ConfigError) as err:  # test_fraction alone out of range is still test_fraction's
        fpt.build(data="t.csv", test_fraction=1.5, body="gpt2", device="cpu")
    assert "config field 'test_fraction'=1.5 must be in (0, 1), e.g. 0.2" in str(err.value)


# --- fpt.RunConfig, fpt.build and fpt.train_run's modes: what needs your own data, the modes that cannot go together,
# and where a run may be written, named as fpt.train_run's arguments (choose, refit=True, trackers, out), not fpt train's


def test_a_setting_that_needs_own_data_names_data_as_the_caller_gives_it(tmp_path, capsys):
    for make in (lambda: fpt.RunConfig(task="data"), lambda: fpt.build(task="data")):
        with pytest.raises(ConfigError) as err:
            make()
        assert str(err.value).endswith("task 'data' trains on your own dataset: give it with data=PATH")
    with pytest.raises(ConfigError) as err:
        fpt.build(data=_table(tmp_path), task="listops")
    assert str(err.value).endswith("task='listops' was also given; drop task (or give task='data')"), str(err.value)
    with pytest.raises(ConfigError) as err:
        fpt.train_run({"task": "bit-xor"}, tmp_path / "r1", choose=["lr=0.1"])
    assert str(err.value) == ("choose cross-validates on your own data's training examples: give data=PATH (task "
                              "'bit-xor' has fixed splits), or drop choose")
    with pytest.raises(ConfigError) as err:
        fpt.train_run({"task": "bit-xor"}, tmp_path / "r2", refit=True)
    assert str(err.value) == ("refit=True trains again on train + validation, which needs your own data (data=PATH); "
                              "task 'bit-xor' has its own splits: drop refit=True")
    assert _cli_line(capsys, ["train", "--task", "data", "--steps", "1"]).endswith("give it with --data PATH")
    line = _cli_line(capsys, ["train", "--task", "listops", "--data", str(tmp_path / "t.csv")])
    assert line.endswith("drop --task (or give --task data)")
    line = _cli_line(capsys, ["train", "--task", "bit-xor", "--refit", "--out", str(tmp_path / "r3")])
    assert line.endswith("(--data PATH); task 'bit-xor' has its own splits: drop --refit")


def test_modes_that_cannot_go_together_name_train_run_s_arguments(tmp_path, capsys, monkeypatch):
    table = _table(tmp_path)
    # without the tensorboard extra (pip install -e ".[test]"), as with it: the mode is refused before the extra is
    # looked for, since installing it would not make an ensemble trackable
    monkeypatch.setattr("fpt.tracking._installed", lambda module: False)
    with pytest.raises(ConfigError) as err:
        fpt.train_run({"data": table, "fit": "auto"}, tmp_path / "r1", refit=True)
    assert str(err.value).endswith("in one process: drop refit=True, choose and torchrun, or give fit='gradient' (or "
                                   "closed-form)"), str(err.value)
    with pytest.raises(ConfigError) as err:
        fpt.train_run({"data": table, "ensemble": 2, "fit": "closed-form"}, tmp_path / "r2", trackers=["tensorboard"])
    assert str(err.value).startswith("trackers tracks one run; an ensemble trains several: drop trackers")
    line = _cli_line(capsys, ["train", "--data", table, "--fit", "auto", "--refit", "--out", str(tmp_path / "r3")])
    assert line.endswith("drop --refit, --choose and --nproc, or give --fit gradient (or closed-form)")
    line = _cli_line(capsys, ["train", "--data", table, "--ensemble", "2", "--fit", "closed-form", "--log",
                              "tensorboard", "--out", str(tmp_path / "r4")])
    assert "error: --log tracks one run; an ensemble trains several: drop --log" in line
    # more folds than the rarest class has examples (12 of each label outside test)
    with pytest.raises(ConfigError) as err:
        fpt.train_run({"data": table, "body": "gpt2"}, tmp_path / "r5", choose=["lr=0.1", "lr=0.01"], folds=20)
    assert str(err.value).endswith("give at most 12 folds (folds=12)"), str(err.value)
    line = _cli_line(capsys, ["train", "--data", table, "--body", "gpt2", "--choose", "lr=0.1", "--choose", "lr=0.01",
                              "--folds", "20", "--out", str(tmp_path / "r6")])
    assert line.endswith("give at most 12 folds (--folds 12)")
    with pytest.raises(ConfigError) as err:  # a tracker's name mistyped: train_run's trackers, fpt train's --log
        fpt.train_run({"data": table, "fit": "closed-form"}, tmp_path / "r7", trackers=["tensorbord"])
    assert str(err.value).startswith("trackers 'tensorbord': known trackers are tensorboard")
    capsys.readouterr()  # the notes train_run said while it read the data
    line = _cli_line(capsys, ["train", "--data", table, "--log", "tensorbord", "--out", str(tmp_path / "r8")])
    assert "error: --log 'tensorbord': known trackers are tensorboard" in line


def test_where_a_run_cannot_be_written_names_out_as_the_caller_gives_it(tmp_path, capsys):
    folder = _images(tmp_path)
    with pytest.raises(ConfigError) as err:
        fpt.train_run({"data": folder, "body": "gpt2"}, f"{folder}/run")
    assert str(err.value).startswith(f"out='{folder}/run' lies inside data='{folder}', a folder of class folders")
    assert str(err.value).endswith(f"choose an out outside {folder}")
    line = _cli_line(capsys, ["train", "--data", folder, "--out", f"{folder}/run"])
    assert f"error: --out {folder}/run lies inside --data {folder}" in line and "choose an --out outside" in line
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "metrics.jsonl").write_text("{}\n")
    with pytest.raises(RunError) as err:
        fpt.train_run({"data": _table(tmp_path), "fit": "closed-form"}, tmp_path / "mine")
    assert str(err.value).endswith("fpt will not replace those files: choose another out (a new or empty folder)")
    line = _cli_line(capsys, ["train", "--data", str(tmp_path / "t.csv"), "--fit", "closed-form", "--out",
                              str(tmp_path / "mine")])
    assert line.endswith("choose another --out (a new or empty folder)")


# --- the body and the run directory: refusals fpt.build, fpt.fit and fpt.load reach name their arguments


def test_a_body_that_cannot_be_built_names_body_and_init_as_the_caller_gives_them(tmp_path, capsys):
    with pytest.raises(fpt.errors.BodyUnavailableError) as err:
        fpt.build(task="bit-xor", body="lstm-3", init="pretrained")
    assert str(err.value) == "LSTM bodies have no pretrained weights; use init='random' (body 'lstm-3')"
    line = _cli_line(capsys, ["train", "--task", "bit-xor", "--body", "lstm-3", "--init", "pretrained", "--out",
                              str(tmp_path / "r1")])
    assert line.endswith("LSTM bodies have no pretrained weights; use --init random (body 'lstm-3')")
    with pytest.raises(fpt.errors.BodyUnavailableError) as err:
        fpt.build(task="bit-xor", body="lstm-3", init=f"checkpoint:{tmp_path}")
    assert str(err.value).startswith(f"init='checkpoint:{tmp_path}': {tmp_path / 'body.safetensors'} does not exist")
    line = _cli_line(capsys, ["train", "--task", "bit-xor", "--body", "lstm-3", "--init", f"checkpoint:{tmp_path}",
                              "--out", str(tmp_path / "r2")])
    assert f"error: --init checkpoint:{tmp_path}: {tmp_path / 'body.safetensors'} does not exist" in line


def test_a_run_directory_that_cannot_be_used_names_out_as_the_caller_gives_it(tmp_path, capsys):
    (tmp_path / "ens").mkdir()
    (tmp_path / "ens" / "ensemble.json").write_text("{}")
    with pytest.raises(fpt.errors.CheckpointError) as err:
        fpt.load(tmp_path / "ens")
    assert str(err.value).endswith("run directories); train the ensemble again into a new out")
    line = _cli_line(capsys, ["predict", str(tmp_path / "ens"), _table(tmp_path), "--out", str(tmp_path / "p.csv")])
    assert line.endswith("run directories); train the ensemble again into a new --out")

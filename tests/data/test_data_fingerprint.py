"""The content fingerprint of a run's own data (fpt.data.fingerprint), recorded when it starts and checked when it
resumes: data.json's fitted values (tokeniser, classes, scaling) stay the same under many edits, a label corrected
in place among them, and such a run resumed in silence on other data than it started on."""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest

import fpt
import fpt.select
from fpt.cli import main
from fpt.data import digest, fingerprint
from fpt.errors import DataError

FAST = dict(init="random", batch_size=8, eval_every=2, device="cpu", baselines="none")


def _rows(n: int = 40) -> list[str]:
    rng = np.random.default_rng(0)
    return ["x1,x2,label"] + [f"{rng.normal() + 2 * (i % 2):.3f},{rng.normal():.3f},{'ab'[i % 2]}" for i in range(n)]


def _relabelled(rows: list[str]) -> list[str]:
    """Rows 1 and 2's labels swapped (a and b): the same features, classes and class counts, so the same data.json."""
    out = list(rows)
    out[1], out[2] = out[1][:-1] + rows[2][-1], out[2][:-1] + rows[1][-1]
    assert out != rows
    return out


def _write(path, rows):
    path.write_text("\n".join(rows) + "\n")
    return path


def _cli(body: str) -> list[str]:
    return ["--body", body, "--init", "random", "--batch-size", "8", "--eval-every", "2", "--device", "cpu",
            "--baselines", "none", "--quiet"]


def test_a_csv_edited_in_place_is_refused_on_resume_naming_it(tiny_bert_dir, tmp_path, capsys):
    data = _write(tmp_path / "d.csv", _rows())
    for out in ("same", "edited"):
        assert main(["train", "--data", str(data), *_cli(tiny_bert_dir), "--steps", "2", "--out", str(tmp_path / out)]) == 0
    assert main(["train", "--resume", str(tmp_path / "same"), "--steps", "4"]) == 0  # the same bytes resume
    assert fpt.Run(tmp_path / "same").summary()["steps"] == 4
    started = fingerprint.of_path(data)
    saved = (tmp_path / "edited" / "data.json").read_text()
    _write(data, _relabelled(_rows()))
    capsys.readouterr()
    assert main(["train", "--resume", str(tmp_path / "edited"), "--steps", "4"]) == 2  # was 0: trained on in silence
    err = capsys.readouterr().err.strip()
    assert err == (f"fpt train: error: {data}: the file changed since the run in {tmp_path / 'edited'} started on it "
                   "(its content hash differs from data_fingerprint.json's); restore the data it started with, or train "
                   "the changed data into a new --out")
    assert (tmp_path / "edited" / "data.json").read_text() == saved  # what the old check compared: unchanged
    assert json.loads((tmp_path / "edited" / "data_fingerprint.json").read_text()) == started
    assert fpt.Run(tmp_path / "edited").summary()["steps"] == 2


def test_a_folder_names_the_file_that_changed_and_reads_only_data_files(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    _write(folder / "train.csv", _rows())
    _write(folder / "test.csv", _rows(10))
    first = fingerprint.of_path(folder)
    assert (first["kind"], first["files"], sorted(first["digests"])) == ("folder", 2, ["test.csv", "train.csv"])
    (folder / "README.md").write_text("notes")  # no format reads it: no change
    (folder / ".DS_Store").write_bytes(b"\0")
    run = folder / "run"  # an --out inside --data, written as the run goes
    run.mkdir()
    (run / "config.yaml").write_text("task: data\nbody: x\nseed: 0\nsteps: 2\n")
    (run / "metrics.jsonl").write_text("{}\n")
    assert fingerprint.changed(first, fingerprint.of_path(folder)) is None
    _write(folder / "test.csv", _relabelled(_rows(10)))
    assert fingerprint.changed(first, fingerprint.of_path(folder)) == "test.csv changed"
    _write(folder / "test.csv", _rows(10))
    _write(folder / "val.csv", _rows(10))
    assert fingerprint.changed(first, fingerprint.of_path(folder)) == "val.csv was added"
    (folder / "val.csv").unlink()
    (folder / "test.csv").unlink()
    assert fingerprint.changed(first, fingerprint.of_path(folder)) == "test.csv was removed"


def test_a_folder_resumed_after_one_file_changed_names_that_file(tiny_bert_dir, tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    _write(folder / "train.csv", _rows())
    _write(folder / "test.csv", _rows(10))
    run = tmp_path / "run"
    fpt.fit(fpt.build(data=str(folder), body=tiny_bert_dir, steps=2, **FAST), out=run, progress=False)
    _write(folder / "test.csv", _relabelled(_rows(10)))
    config = fpt.train.resume_config(run, {"steps": 4})
    with pytest.raises(DataError, match=f"^{folder}: test.csv changed since the run in {run} started on it"):
        fpt.fit(fpt.build(config), out=run, resume=True, progress=False)
    assert fpt.Run(run).summary()["steps"] == 2


def test_a_run_without_a_fingerprint_resumes_with_a_note_and_records_one(tiny_bert_dir, tmp_path, capsys):
    data = _write(tmp_path / "d.csv", _rows())
    run = tmp_path / "run"
    assert main(["train", "--data", str(data), *_cli(tiny_bert_dir), "--steps", "2", "--out", str(run)]) == 0
    (run / "data_fingerprint.json").unlink()  # as a run of an fpt before it recorded one
    capsys.readouterr()
    assert main(["train", "--resume", str(run), "--steps", "4"]) == 0
    err = capsys.readouterr().err
    assert f"note: {run} records no fingerprint of its data (started before fpt recorded one)" in err
    assert fpt.Run(run).summary()["steps"] == 4
    assert json.loads((run / "data_fingerprint.json").read_text())["digest"] == fingerprint.of_path(data)["digest"]


def test_in_memory_arrays_changed_are_refused_on_resume(tiny_bert_dir, tmp_path):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), np.arange(40) % 2
    relabelled = y.copy()
    relabelled[[0, 1]] = relabelled[[1, 0]]  # the same classes and counts: the same data.json
    run = tmp_path / "run"
    fpt.fit(fpt.build(data=(X, y), body=tiny_bert_dir, steps=2, **FAST), out=run, progress=False)
    with pytest.raises(DataError, match=r"the data given \(in-memory tuple.*\) is not the data the run started on"):
        fpt.fit(fpt.build(data=(X, relabelled), body=tiny_bert_dir, steps=4, **FAST), out=run, resume=True,
                progress=False)
    assert fpt.Run(run).summary()["steps"] == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", fpt.train.DataUnchecked)
        resumed = fpt.fit(fpt.build(data=(X.copy(), y.copy()), body=tiny_bert_dir, steps=4, **FAST), out=run,
                          resume=True, progress=False)
    assert resumed["steps"] == 4


@pytest.mark.parametrize("edit", ["first-block", "size"])
def test_data_above_the_whole_hash_limit_is_sampled_in_blocks(tmp_path, monkeypatch, edit):
    monkeypatch.setattr(digest, "BLOCK", 1024)
    monkeypatch.setattr(digest, "WHOLE_BYTES", 4096)
    monkeypatch.setattr(digest, "MIN_SAMPLE", 2048)
    path = tmp_path / "big.npz"
    path.write_bytes(bytes(range(256)) * 1000)  # 256,000 bytes: 4 blocks of 1 KiB hashed, the rest not
    first = fingerprint.of_path(path)
    assert first["sampled"] and first["bytes"] == 256_000
    data = bytearray(path.read_bytes())
    if edit == "size":
        data += b"\0"  # a size change is always seen
    else:
        data[0] ^= 1  # the first block is always sampled
    path.write_bytes(bytes(data))
    assert fingerprint.changed(first, fingerprint.of_path(path)) == "big.npz changed"


def test_a_closed_form_run_records_its_datas_fingerprint_too(tiny_bert_dir, tmp_path):
    data = _write(tmp_path / "d.csv", _rows())
    run = tmp_path / "run"
    fpt.fit(fpt.build(data=str(data), body=tiny_bert_dir, fit="closed-form", cf_members=1, device="cpu",
                      baselines="none"), out=run, progress=False)
    assert json.loads((run / "data_fingerprint.json").read_text()) == fingerprint.of_path(data)


def test_a_folder_of_many_small_files_over_the_limit_reads_about_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(digest, "WHOLE_BYTES", 64 << 10)
    monkeypatch.setattr(digest, "MIN_SAMPLE", 1024)
    for i in range(20):
        (tmp_path / f"{i:02d}.png").write_bytes(bytes([i]) * (32 << 10))  # 640 KiB in all
    read = []
    hashed = digest._file_digest
    monkeypatch.setattr(digest, "_file_digest", lambda p, size, budget: read.append(budget) or hashed(p, size, budget))
    first = fingerprint.of_path(tmp_path)
    assert first["sampled"] and sum(read) == 20 * 3277  # each file's share of 64 KiB: about 64 KiB, not 640
    (tmp_path / "07.png").rename(tmp_path / "07b.png")  # a file renamed (moved to another class): always seen
    assert fingerprint.changed(first, fingerprint.of_path(tmp_path)) == "07.png was removed"


def _hashes(monkeypatch) -> list[str]:
    """The paths fingerprint.of_path hashes from now on (each call a read of every byte of the data)."""
    hashed, of_path = [], fingerprint.of_path
    monkeypatch.setattr(fingerprint, "of_path", lambda path: hashed.append(str(path)) or of_path(path))
    return hashed


@pytest.mark.parametrize("mode", ["ensemble", "refit"])
def test_the_runs_of_one_command_record_the_fingerprint_of_one_read_hashed_once(tiny_bert_dir, tmp_path, monkeypatch,
                                                                               mode):
    data = _write(tmp_path / "d.csv", _rows())
    hashed = _hashes(monkeypatch)
    out = tmp_path / "run"
    fpt.train_run(dict(data=str(data), body=tiny_bert_dir, steps=2, fit="gradient", **FAST,
                       **({"ensemble": 2} if mode == "ensemble" else {})), out, refit=mode == "refit", say=None)
    runs = [out / "members" / "seed0", out / "members" / "seed1"] if mode == "ensemble" else [out / "selection", out]
    assert hashed == [str(data)]  # was 2 and 3: each member, its rebuild to be scored, the refit run read it again
    started = fingerprint.of_path(data)
    assert [json.loads((run / "data_fingerprint.json").read_text()) for run in runs] == [started, started]


def _hub_revision(cache, revision: str, labels: list[str]) -> None:
    """A revision of the Hugging Face dataset someone/tiny in ``cache`` as datasets stores one it downloaded
    (NAME/CONFIG/VERSION/HASH/: its Arrow file and dataset_info.json), which offline it reads, the newest first."""
    import datasets
    from datasets.arrow_writer import ArrowWriter

    folder = cache / "someone___tiny" / "default" / "0.0.0" / revision
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    ds = datasets.Dataset.from_dict({"x1": [float(v) for v in rng.normal(size=len(labels))], "label": labels})
    with ArrowWriter(path=str(folder / "tiny-train.arrow")) as writer:
        writer.write_table(ds.data.table)
        writer.finalize()
    splits = datasets.SplitDict({"train": datasets.SplitInfo("train", num_examples=len(ds), dataset_name="tiny")})
    datasets.DatasetInfo(features=ds.features, config_name="default", dataset_name="tiny",
                         splits=splits).write_to_directory(str(folder))
    newest = max([p.stat().st_mtime for p in folder.parent.iterdir()] + [0]) + 10
    os.utime(folder, (newest, newest))  # the newest folder: what datasets reads


def test_a_hub_dataset_whose_cached_revision_changed_is_refused_on_resume(tiny_bert_dir, tmp_path, monkeypatch):
    import datasets

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "cache"))
    labels = ["ab"[i % 2] for i in range(40)]
    _hub_revision(tmp_path / "cache", "aaa", labels)
    run = tmp_path / "run"
    fpt.fit(fpt.build(data="someone/tiny", body=tiny_bert_dir, steps=2, **FAST), out=run, progress=False)
    saved = json.loads((run / "data_fingerprint.json").read_text())  # was absent: a hub id is no file of_path reads
    assert (saved["kind"], sorted(saved["digests"])) == ("hub", ["train/tiny-train.arrow"])
    config = fpt.train.resume_config(run, {"steps": 4})
    _hub_revision(tmp_path / "cache", "bbb", labels)  # a new revision of the same content: the same data
    assert fpt.fit(fpt.build(config), out=run, resume=True, progress=False)["steps"] == 4
    _hub_revision(tmp_path / "cache", "ccc", labels[1:2] + labels[0:1] + labels[2:])  # two labels swapped
    with pytest.raises(DataError) as info:  # was: resumed in silence on the new revision
        fpt.fit(fpt.build(fpt.train.resume_config(run, {"steps": 6})), out=run, resume=True, progress=False)
    assert str(info.value) == (
        f"someone/tiny: train/tiny-train.arrow changed since the run in {run} started on it (its content hash differs "
        "from data_fingerprint.json's: the datasets cache holds another revision of it now); train it into a new "
        "out, or, offline, remove the newer revision's folder from the datasets cache (the newest is read)")
    assert fpt.Run(run).summary()["steps"] == 4


def test_a_hub_dataset_held_in_memory_is_fingerprinted_by_its_tables():
    import datasets

    ds = datasets.Dataset.from_dict({"x1": [0.5, 1.5, 2.5], "label": ["a", "b", "a"]})
    first = fingerprint.of_datasets(datasets.DatasetDict({"train": ds}))
    assert (first["kind"], list(first["digests"])) == ("hub", ["train"]) and not ds.cache_files
    assert fingerprint.of_datasets(datasets.Dataset.from_dict({"x1": [0.5, 1.5, 2.5], "label": ["a", "b", "a"]})) == first
    swapped = datasets.Dataset.from_dict({"x1": [0.5, 1.5, 2.5], "label": ["b", "a", "a"]})
    assert fingerprint.changed(first, fingerprint.of_datasets(swapped)) == "train changed"


@pytest.mark.parametrize("mode", ["ensemble", "refit"])
def test_a_run_joined_to_one_trained_on_other_data_is_refused(tiny_bert_dir, tmp_path, mode):
    """An ensemble stopped after its first member, or a --refit after its selection run, then continued on changed
    data: the finished run is read by no resume check, and the next one started on the new data was combined with
    it (members averaged, a step count chosen on the old data) in silence."""
    import shutil

    data = _write(tmp_path / "d.csv", _rows())
    out = tmp_path / "run"
    fields = dict(data=str(data), body=tiny_bert_dir, steps=2, fit="gradient", **FAST)
    if mode == "ensemble":
        fpt.train_run({**fields, "ensemble": 2}, out, say=None)
        for name in ("ensemble.json", "summary.json", "members/seed1"):  # as if stopped after its first member
            shutil.rmtree(out / name) if (out / name).is_dir() else (out / name).unlink()
        finished, since = out / "members" / "seed0", f"member members/seed0 of the ensemble in {out} was trained on it"
    else:
        fpt.train_run(fields, out, refit=True, say=None)
        for path in out.iterdir():  # as if stopped after its selection run
            if path.name != "selection":
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        finished, since = out / "selection", f"the selection run {out / 'selection'} chose the refit's step count on it"
    _write(data, _relabelled(_rows()))
    with pytest.raises(DataError) as info:  # was: the next member (the refit run) trained on the new data
        if mode == "ensemble":
            fpt.train_run({**fields, "ensemble": 2}, out, say=None)
        else:
            fpt.train_run(None, out, resume=True, say=None)
    assert str(info.value) == (f"{data}: the file changed since {since} (its content hash differs from "
                               "data_fingerprint.json's); restore the data it started with, or train the changed data "
                               "into a new out")  # fpt.train_run: Python's word for it
    assert sorted(p.name for p in (out / "members" if mode == "ensemble" else out).iterdir()) == [finished.name]


@pytest.mark.parametrize("mode", ["choose", "auto"])
def test_a_choice_resumed_on_changed_data_before_its_final_run_saved_anything_is_refused(tiny_bert_dir, tmp_path, mode):
    """--choose (or fit=auto) stopped after choosing, before its final run's first checkpoint: resumed, the final run
    started again on the changed data in silence, the choice made on the old (selection.json's fold figures)."""
    import shutil

    data = _write(tmp_path / "d.csv", _rows())
    out = tmp_path / "run"
    if mode == "choose":
        fpt.train_run(dict(data=str(data), body=tiny_bert_dir, steps=2, fit="gradient", **FAST), out, say=None,
                      choose=["readout=last", "readout=mean"], folds=2)
    else:
        fpt.train_run(dict(data=str(data), body=tiny_bert_dir, fit="auto", cf_members=1, device="cpu",
                           baselines="none"), out, say=None, folds=2)
    assert json.loads((out / "data_fingerprint.json").read_text()) == fingerprint.of_path(data)
    for name in ("checkpoint", "best", "summary.json", "metrics.jsonl"):  # as if stopped before its first checkpoint
        shutil.rmtree(out / name) if (out / name).is_dir() else (out / name).unlink(missing_ok=True)
    _write(data, _relabelled(_rows()))
    with pytest.raises(DataError) as info:  # was: the final run trained on the new data with the old choice
        fpt.train_run(None, out, resume=True, say=None)
    assert str(info.value) == (f"{data}: the file changed since the choice in {out / 'selection.json'} was made on it "
                               "(its content hash differs from data_fingerprint.json's); restore the data it started "
                               "with, or train the changed data into a new out")
    assert not (out / "summary.json").exists() and not (out / "checkpoint").exists()


@pytest.mark.parametrize("kind", ["frame", "tensors", "dataset"])
def test_every_kind_of_in_memory_data_a_run_resumes_from_is_fingerprinted_by_content(kind):
    """fpt.build(data=...) of a DataFrame, tensors or a datasets.Dataset writes a run that fpt.fit(..., resume=True)
    continues: a copy of the data is the same data, and one label swapped (same classes, same data.json) is not."""
    import datasets
    import pandas as pd
    import torch

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(12, 3)), np.arange(12) % 2
    swapped = y.copy()
    swapped[[0, 1]] = swapped[[1, 0]]

    def given(labels):
        if kind == "frame":
            return pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "label": np.array(["ab"[v] for v in labels])})
        if kind == "tensors":
            return torch.tensor(X, dtype=torch.float32), torch.tensor(labels)
        return datasets.Dataset.from_dict({"a": X[:, 0].tolist(), "label": labels.tolist()})

    first = fingerprint.of_memory(given(y))
    assert first is not None and first["kind"] == "memory"
    assert fingerprint.changed(first, fingerprint.of_memory(given(y.copy()))) is None
    assert fingerprint.changed(first, fingerprint.of_memory(given(swapped))) == "its content changed"


def _edited_after(monkeypatch, name: str, data) -> None:
    """``fpt.select.NAME`` (the comparison of the candidates) with the data edited as it returns: as if the file
    changed while the candidates were compared, a long time on real data."""
    real = getattr(fpt.select, name)

    def compared(*args, **kwargs):
        result = real(*args, **kwargs)
        _write(data, _relabelled(_rows()))
        return result

    monkeypatch.setattr(fpt.select, name, compared)


@pytest.mark.parametrize("mode", ["ensemble", "refit"])
def test_runs_after_a_choice_on_data_changed_since_the_choice_are_refused(tiny_bert_dir, tmp_path, monkeypatch, mode):
    """--choose with ensemble=2 (or --refit): the members (the selection run) read the data again after the choice,
    and trained on data edited meanwhile under a choice made on the old; the members were averaged in silence."""
    data = _write(tmp_path / "d.csv", _rows())
    out = tmp_path / "run"
    _edited_after(monkeypatch, "cross_validate", data)
    fields = dict(data=str(data), body=tiny_bert_dir, steps=2, fit="gradient", **FAST)
    with pytest.raises(DataError) as info:  # was: two members trained on the edited file, averaged; exit 0
        fpt.train_run({**fields, **({"ensemble": 2} if mode == "ensemble" else {})}, out, refit=mode == "refit",
                      say=None, choose=["readout=last", "readout=mean"], folds=2)
    assert str(info.value) == (f"{data}: the file changed since the choice in {out / 'selection.json'} was made on it "
                               "(its content hash differs from data_fingerprint.json's); restore the data it started "
                               "with, or train the changed data into a new out")
    assert sorted(p.name for p in out.iterdir()) == ["data_fingerprint.json", "selection.json"]  # nothing trained


def test_an_ensemble_after_fit_auto_on_data_changed_since_the_choice_is_refused(tiny_bert_dir, tmp_path, monkeypatch):
    from dataclasses import replace

    data = _write(tmp_path / "d.csv", _rows())
    out = tmp_path / "run"
    real = fpt.select.choose_fit  # the closed-form fit alone (gradient training out of budget): seconds, not 40
    monkeypatch.setattr(fpt.select, "choose_fit", lambda config, folds=None, progress=None: real(
        config, folds, progress, choice=replace(fpt.select.AUTO, gradient_budget_s=0)))
    _edited_after(monkeypatch, "choose_fit", data)
    with pytest.raises(DataError, match="since the choice in .*selection.json was made on it"):
        fpt.train_run(dict(data=str(data), body=tiny_bert_dir, fit="auto", cf_members=1, ensemble=2, device="cpu",
                           baselines="none"), out, say=None, folds=2)
    assert not (out / "members").exists()


@pytest.mark.parametrize("mode", ["closed-form", "refit"])
def test_controls_fitted_later_on_data_changed_since_the_run_are_refused(tiny_bert_dir, tmp_path, mode):
    """A finished run resumed with baselines=all trains its controls (and fits the classic models) then: a closed-form
    run's resume returns its summary unread, and a refit's baselines read the data again on their own, so an edit
    since the run was trained on put the controls on other data than the run they are compared with, in silence."""
    data = _write(tmp_path / "d.csv", _rows())
    out = tmp_path / "run"
    if mode == "closed-form":
        fpt.train_run(dict(data=str(data), body=tiny_bert_dir, fit="closed-form", cf_members=1, device="cpu",
                           baselines="fast"), out, say=None)
    else:
        fpt.train_run(dict(data=str(data), body=tiny_bert_dir, steps=2, fit="gradient", **FAST), out, refit=True,
                      say=None)
    summary = (out / "summary.json").read_text()
    _write(data, _relabelled(_rows()))
    with pytest.raises(DataError) as info:  # was: both controls trained on the edited file beside the run; exit 0
        fpt.train_run(None, out, resume=True, overrides={"baselines": "all"}, say=None)
    # a closed-form run's resume refuses it itself now, as any finished run resumed by fit on other data is
    since = "started on it" if mode == "closed-form" else "which its baselines are compared with, was trained on it"
    assert str(info.value) == (f"{data}: the file changed since the run in {out}{' ' if mode == 'closed-form' else ', '}"
                               f"{since} (its content hash differs from data_fingerprint.json's); "
                               "restore the data it started with, or train the changed data into a new out")
    assert not (out / "controls").exists() and (out / "summary.json").read_text() == summary

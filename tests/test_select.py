"""Choosing by k-fold cross-validation on the training examples (fpt.select, RunConfig.folds/fold, --choose)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import fpt
import fpt.select as select
from fpt import rundir
from fpt.cli import main
from fpt.config import RunConfig, from_dict
from fpt.data.base import RawData, Split, finish_splits
from fpt.errors import ConfigError, DataError


def _raw(n: int = 40, classes: int = 2, test: bool = False) -> RawData:
    """Examples numbered by an ``id`` feature, so that every split says which ones it holds."""
    y = np.array([[f"c{i % classes}"] for i in range(n)], dtype=object)
    splits = {"train": Split({"id": np.arange(n)}, y, "t.csv")}
    if test:  # the data's own test file (UCR's TEST)
        splits["test"] = Split({"id": np.arange(1000, 1010)}, y[:10], "t_TEST.csv")
    return RawData("tabular", splits, ["label"], "CSV file t.csv")


def _ids(split: Split) -> set[int]:
    return {int(i) for i in split.x["id"]}


@pytest.mark.parametrize("stratify", [True, False])
@pytest.mark.parametrize("own_test", [False, True])
def test_folds_partition_the_non_test_training_examples(stratify, own_test):
    k = 4
    plain = finish_splits(_raw(test=own_test), 0.2, 0.2, 7, stratify)
    runs = [finish_splits(_raw(test=own_test), 0.2, 0.2, 7, stratify, folds=k, fold=f) for f in range(k)]
    test = _ids(plain.splits["test"])
    pool = _ids(plain.splits["train"]) | _ids(plain.splits["val"])
    vals = [_ids(r.splits["val"]) for r in runs]
    for run, val in zip(runs, vals, strict=True):
        assert _ids(run.splits["test"]) == test  # the test split is the one a run without folds holds out
        assert _ids(run.splits["train"]) == pool - val  # every other non-test example trains
        assert "val fold" in run.split_from
    assert set().union(*vals) == pool and sum(map(len, vals)) == len(pool)  # disjoint, covering
    if stratify:  # two balanced classes: each fold's validation part is (nearly) half of each
        for run in runs:
            labels = list(run.splits["val"].y[:, 0])
            assert abs(labels.count("c0") - labels.count("c1")) <= 1
    again = finish_splits(_raw(test=own_test), 0.2, 0.2, 7, stratify, folds=k, fold=2)
    assert _ids(again.splits["val"]) == vals[2]  # deterministic for a split_seed
    other = finish_splits(_raw(test=own_test), 0.2, 0.2, 8, stratify, folds=k, fold=2)
    assert _ids(other.splits["val"]) != vals[2]


def test_folds_refuse_what_they_cannot_split():
    raw = _raw()
    with_val = RawData(raw.modality, {**raw.splits, "val": Split({"id": np.arange(5)}, raw.splits["train"].y[:5],
                                                                 "t_val.csv")}, raw.targets, raw.source)
    with pytest.raises(DataError, match=r"t_val.csv: the data has its own validation split.*drop --folds"):
        finish_splits(with_val, 0.2, 0.2, 0, True, folds=3, fold=0)
    lonely = _raw(12)
    lonely.splits["train"].y[0, 0] = "rare"
    with pytest.raises(DataError, match=r"t.csv: class 'rare' has 1 training example"):
        finish_splits(lonely, 0.2, None, 0, True, folds=3, fold=0)
    with pytest.raises(DataError, match=r"cannot make 9 folds; lower --folds"):
        finish_splits(_raw(8), 0.2, None, 0, False, folds=9, fold=0)


@pytest.mark.parametrize("fields, message", [
    ({"folds": 1, "fold": 0}, "config field 'folds'=1 must be >= 2"),
    ({"fold": 0}, "config field 'fold'=0 needs folds"),
    ({"folds": 5}, "config field 'folds'=5 needs fold"),
    ({"folds": 3, "fold": 3}, "config field 'fold'=3 must be in 0..2"),
])
def test_fold_fields_are_checked(tmp_path, fields, message):
    with pytest.raises(ConfigError) as info:
        RunConfig(data=str(_csv(tmp_path / "d.csv")), **fields)
    assert message in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ConfigError, match="apply only to your own dataset"):
        RunConfig(folds=3, fold=0)


def _csv(path: Path, n: int = 48) -> Path:
    """Two classes the first feature separates."""
    rng = np.random.default_rng(0)
    rows = ["x1,x2,label"] + [f"{rng.normal(scale=0.3) + 2 * (i % 2):.3f},{rng.normal():.3f},{'ab'[i % 2]}"
                              for i in range(n)]
    path.write_text("\n".join(rows) + "\n")
    return path


def _fields(path: Path, body: str, **kw) -> dict:
    return {"data": str(path), "body": body, "init": "random", "steps": 30, "batch_size": 8, "eval_every": 10,
            "device": "cpu", "seed": 0, "baselines": "none", **kw}


def _keys(value) -> set[str]:
    if isinstance(value, dict):
        return set(value).union(*map(_keys, value.values()))
    if isinstance(value, list):
        return set().union(*map(_keys, value)) if value else set()
    return set()


def test_cross_validate_picks_the_better_candidate_and_never_reads_test(tmp_path, tiny_gpt2_dir, monkeypatch):
    config = from_dict(RunConfig, _fields(_csv(tmp_path / "d.csv"), tiny_gpt2_dir))
    seen = []

    def spy(exp, **kw):  # what each fold run was given to evaluate
        seen.append((exp.config.fold, exp.data.eval_sets))
        return fpt.fit(exp, **kw)

    monkeypatch.setattr(select, "fit", spy)
    lines: list[str] = []
    result = select.cross_validate(config, [{"lr": 1e-9}, {"lr": 0.02}], folds=3, progress=lines.append)
    assert result.winner == 1 and result.candidates[1] == {"lr": 0.02}
    assert len(result.scores) == 2 and all(len(row) == 3 for row in result.scores)
    assert result.means[1] > result.means[0] and result.means[1] == pytest.approx(np.mean(result.scores[1]))
    assert result.stds[1] == pytest.approx(np.std(result.scores[1]))
    assert len(lines) == 6 and "fold 3/3" in lines[-1]
    assert [fold for fold, _ in seen] == [0, 1, 2, 0, 1, 2]
    for _, sets in seen:
        assert sets["test"] is sets["val"]  # the test examples were never evaluated
    data = result.to_json()
    json.dumps(data, allow_nan=False)
    assert not [k for k in _keys(data) if k.startswith("test")]
    assert data["winner_fields"] == {"lr": 0.02} and data["mean_val_accuracy"] == result.means


def test_rank_breaks_ties_by_loss_then_order():
    assert select.rank([0.9, 0.9, 0.8], [0.5, 0.4, 0.1]) == [1, 0, 2]
    assert select.rank([0.9, 0.9], [0.4, 0.4]) == [0, 1]
    assert select.rank([None, 0.1], [0.1, 0.9]) == [1, 0]


def test_cross_validate_refuses_paper_tasks_and_fold_candidates(tmp_path, tiny_gpt2_dir):
    with pytest.raises(ConfigError, match="give --data PATH"):
        select.cross_validate(RunConfig(), [{"lr": 0.01}])
    config = from_dict(RunConfig, _fields(_csv(tmp_path / "d.csv"), tiny_gpt2_dir))
    with pytest.raises(ConfigError, match="'folds' is the cross-validation's own"):
        select.cross_validate(config, [{"folds": 3}])


def test_choose_cross_validates_then_trains_the_winner_on_the_plain_split(tmp_path, tiny_gpt2_dir, capsys):
    path = _csv(tmp_path / "d.csv")
    common = ["train", "--data", str(path), "--body", tiny_gpt2_dir, "--init", "random", "--steps", "20",
              "--batch-size", "8", "--eval-every", "10", "--device", "cpu", "--baselines", "none", "--quiet"]
    out = tmp_path / "run"
    assert main([*common, "--out", str(out), "--choose", "lr=1e-9", "--choose", "lr=0.02 readout=mean",
                 "--folds", "2"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("choose 1/2 lr=1e-9: val accuracy ") and printed[0].endswith("over 2 folds")
    assert printed[1].endswith("<- chosen") and "lr=0.02 readout=mean" in printed[1]
    chosen = json.loads((out / rundir.SELECTION_FILE).read_text())
    assert chosen["winner"] == 1 and chosen["folds"] == 2 and chosen["choose"] == ["lr=1e-9", "lr=0.02 readout=mean"]
    assert not [k for k in _keys(chosen) if k.startswith("test")]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["selection"]["winner_fields"] == {"lr": 0.02, "readout": "mean"}
    assert summary["selection"]["mean_val_accuracy"] == chosen["mean_val_accuracy"]
    config = fpt.Run(out).config()
    assert config.lr == 0.02 and config.readout == "mean" and config.folds is None and config.fold is None
    # the final run is the plain run of the winner's fields
    plain = tmp_path / "plain"
    assert main([*common, "--out", str(plain), "--lr", "0.02", "--readout", "mean"]) == 0
    direct = json.loads((plain / "summary.json").read_text())
    assert direct["test_accuracy"] == summary["test_accuracy"]
    assert direct["task_info"]["split_sizes"] == summary["task_info"]["split_sizes"]
    capsys.readouterr()
    assert main([*common, "--out", str(out), "--choose", "lr=0.02"]) == 2  # refused before any fold trains
    assert "already holds a run" in capsys.readouterr().err


def test_a_stopped_choose_run_resumes_with_its_choice_on_record(tmp_path, tiny_gpt2_dir, capsys):
    path = _csv(tmp_path / "d.csv")
    common = ["train", "--data", str(path), "--body", tiny_gpt2_dir, "--init", "random", "--steps", "20",
              "--batch-size", "8", "--eval-every", "10", "--device", "cpu", "--baselines", "none", "--quiet"]
    out = tmp_path / "run"
    choose = ["--choose", "lr=1e-9", "--choose", "lr=0.02", "--folds", "2"]
    assert main([*common, "--out", str(out), *choose]) == 0
    finished = json.loads((out / "summary.json").read_text())
    saved = (out / rundir.SELECTION_FILE).read_text()
    (out / "summary.json").unlink()  # as if stopped after its last checkpoint, before the summary
    capsys.readouterr()
    assert main([*common, "--out", str(out), *choose]) == 2  # the choice is not made again over a stopped run
    assert f"continue it (its choice included) with --resume {out}, or choose another --out" in capsys.readouterr().err
    assert main(["train", "--resume", str(out), "--quiet"]) == 0
    resumed = json.loads((out / "summary.json").read_text())
    assert resumed["selection"] == finished["selection"] and resumed["selection"]["winner_fields"] == {"lr": 0.02}
    assert (out / rundir.SELECTION_FILE).read_text() == saved
    (out / rundir.SELECTION_FILE).write_text("{not json")
    (out / "summary.json").unlink()
    capsys.readouterr()
    assert main(["train", "--resume", str(out), "--quiet"]) == 2
    assert "not a selection file written by fpt train --choose" in capsys.readouterr().err


def test_choose_needs_own_data(capsys):
    assert main(["train", "--choose", "lr=0.01"]) == 2
    err = capsys.readouterr().err
    assert "--choose cross-validates on your own data" in err and "Traceback" not in err


def test_default_folds_shrink_for_small_classes(tmp_path, tiny_gpt2_dir):
    # 48 examples: 24 per class, 0.2 of them test -> ~19 per class in the pool: 5 folds; 12 examples: 2 folds
    assert select.fold_count(from_dict(RunConfig, _fields(_csv(tmp_path / "a.csv"), tiny_gpt2_dir))) == 5
    assert select.fold_count(from_dict(RunConfig, _fields(_csv(tmp_path / "b.csv", 14), tiny_gpt2_dir))) == 2

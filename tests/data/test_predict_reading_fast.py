"""Reading a table at predict time (each feature checked against the model, the targets against its classes) and the
training label check run as passes over a column, not a Python step per cell: each gives what the step per cell gave
(the same arrays, bit for bit, and the same one-line errors naming the same first row and value), and the step per
cell is not taken once per row. A column's missing cells are found once per reading."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from fpt.data import base, dates, inputs, tables
from fpt.data.base import is_missing, plain_value
from fpt.errors import DataError, SchemaError


def _objects(items: list) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


class _Counting:
    def __init__(self, real) -> None:  # noqa: ANN001 (a builtin or a function)
        self.real, self.calls = real, 0

    def __call__(self, *args):  # noqa: ANN002, ANN204
        self.calls += 1
        return self.real(*args)


# ---------------------------------------------------------------------------------- _check_feature, as it was per cell

def _feature_per_cell(col: np.ndarray, f: dict, where: str, max_categories: int, allow_unseen: bool) -> np.ndarray:
    """tables._check_feature of numeric and categorical columns as it was written, a step per cell (the reference)."""
    name, missing = f["name"], is_missing(col)
    if f["kind"] == "numeric":
        if col.dtype.kind in "iubf":
            return col
        out = np.full(len(col), np.nan)
        for i in np.flatnonzero(~missing):
            try:
                out[i] = float(col[i])
            except (TypeError, ValueError):
                raise SchemaError(f"{where}: column {name!r}, row {i + 1}: {col[i]!r} is not a number, but the model "
                                  "was trained on numbers in this column; fix the value or leave it empty "
                                  "(missing)") from None
        for i in np.flatnonzero(np.isinf(out)):  # refused since round 13 ('inf' read as a number is still infinite)
            raise SchemaError(f"{where}: column {name!r}, row {i + 1}: {out[i]} is infinite, but the model reads finite "
                              "numbers; give a finite number or leave it missing (NaN)")
        return out
    values = np.array([None if m else str(plain_value(v)) if col.dtype.kind in "iubf" else str(v)
                       for v, m in zip(col, missing, strict=True)], dtype=object)
    if len(f["categories"]) < max_categories and not allow_unseen:
        known = set(f["categories"])
        for i in np.flatnonzero(~missing):
            if values[i] not in known:
                raise SchemaError(f"{where}: column {name!r}, row {i + 1}: category {values[i]!r} was not seen in "
                                  f"training (the model knows {base.shown([repr(c) for c in f['categories']], 10)}); "
                                  f"fix the value, {tables.allow_unseen_fix()}")
    return values


def _outcome(fn, *args):  # noqa: ANN001, ANN002, ANN202
    try:
        return "ok", fn(*args)
    except SchemaError as exc:
        return "error", str(exc)


def _same(a: np.ndarray, b: np.ndarray) -> None:
    """Bit for bit: the dtype, each float's bits (NaN and -0.0 too), each object's type and value."""
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype.kind == "f":
        np.testing.assert_array_equal(a.view(np.uint64), b.view(np.uint64))
    else:
        assert [type(v) for v in a] == [type(v) for v in b]
        assert list(a) == list(b)


NUMERIC_POOL = [None, "", " ", "1.5", " 2 ", "-0", "1e3", "nan", "inf", 1, 2.5, -0.0, True, float("nan"), "1_0"]
TEXT_POOL = [None, "", "  ", "a", "b", "c", " a", float("nan"), 1, 2.0, True]
CODE_POOL = [0.0, -0.0, 1.0, 2.5, float("nan"), 7.0, 1e20]


@pytest.mark.parametrize("allow_unseen", [False, True])
def test_check_feature_matches_the_step_per_cell_on_mixed_columns(allow_unseen: bool) -> None:
    rng = np.random.default_rng(0)
    numeric = {"name": "n", "kind": "numeric", "mean": 0.0, "std": 1.0}
    text = {"name": "t", "kind": "categorical", "categories": ["a", "b", "1"], "offset": 0}
    codes = {"name": "k", "kind": "categorical", "categories": ["0", "1", "2.5", "7"], "offset": 0}
    outcomes = set()
    for _ in range(300):
        n = int(rng.integers(0, 12))
        cases = [
            (_objects([NUMERIC_POOL[i] for i in rng.integers(0, len(NUMERIC_POOL), n)]), numeric),
            (_objects([NUMERIC_POOL[i] for i in rng.integers(0, len(NUMERIC_POOL), n)] + ["x1"]), numeric),
            (_objects([TEXT_POOL[i] for i in rng.integers(0, len(TEXT_POOL), n)]), text),
            (_objects([TEXT_POOL[i] for i in rng.integers(0, 5, n)]), text),  # text and gaps alone
            (np.array([CODE_POOL[i] for i in rng.integers(0, len(CODE_POOL), n)]), codes),
            (rng.integers(0, 3, n), codes),
        ]
        for col, f in cases:
            for limit in (20, 3):  # 3: the category list may be cut, so anything unseen goes to the unknown slot
                want = _outcome(_feature_per_cell, col, f, "x.csv", limit, allow_unseen)
                got = _outcome(tables._check_feature, col, f, "x.csv", limit, allow_unseen)
                assert got[0] == want[0], (col, got, want)
                if want[0] == "error":
                    assert got[1] == want[1]
                else:
                    _same(got[1], want[1])
                outcomes.add((f["name"], want[0]))
    assert outcomes >= {("n", "ok"), ("n", "error"), ("t", "ok"), ("k", "ok")}
    if not allow_unseen:
        assert ("t", "error") in outcomes and ("k", "error") in outcomes


def test_check_feature_errors_name_the_first_offending_row() -> None:
    numeric = {"name": "amount", "kind": "numeric", "mean": 0.0, "std": 1.0}
    col = _objects(["1.5", None, "2", "abc", "x", " "])
    with pytest.raises(SchemaError) as err:
        tables._check_feature(col, numeric, "new.csv", 20, False)
    assert str(err.value) == ("new.csv: column 'amount', row 4: 'abc' is not a number, but the model was trained on "
                              "numbers in this column; fix the value or leave it empty (missing)")
    city = {"name": "city", "kind": "categorical", "categories": ["Paris", "Rome"], "offset": 0}
    col = _objects(["Paris", None, "  ", "Rome", "Oslo", "Lima"])
    with pytest.raises(SchemaError, match=r"^new.csv: column 'city', row 5: category 'Oslo' was not seen in training "
                                          r"\(the model knows 'Paris', 'Rome'\); fix the value, or pass --allow-unseen"):
        tables._check_feature(col, city, "new.csv", 20, False)
    out = tables._check_feature(col, city, "new.csv", 20, True)  # allowed: the unknown slot, the gaps None
    assert list(out) == ["Paris", None, None, "Rome", "Oslo", "Lima"]
    codes = {"name": "code", "kind": "categorical", "categories": ["1", "2"], "offset": 0}
    with pytest.raises(SchemaError, match=r"row 3: category '2.5' was not seen"):
        tables._check_feature(np.array([1.0, np.nan, 2.5, 3.0]), codes, "new.csv", 20, False)


def test_check_feature_takes_no_step_per_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    to_float = _Counting(float)
    monkeypatch.setattr(tables, "float", to_float, raising=False)
    naming = _Counting(plain_value)
    monkeypatch.setattr(tables, "plain_value", naming)
    numeric = {"name": "n", "kind": "numeric", "mean": 0.0, "std": 1.0}
    out = tables._check_feature(_objects(["1.5", None, "2", " "] * 500), numeric, "x.csv", 20, False)
    assert np.nansum(out) == 3.5 * 500 and np.isnan(out).sum() == 1000
    codes = {"name": "k", "kind": "categorical", "categories": ["1", "2"], "offset": 0}
    out = tables._check_feature(np.array([1.0, 2.0, np.nan, 1.0] * 500), codes, "x.csv", 20, False)
    assert list(out[:4]) == ["1", "2", None, "1"]
    assert to_float.calls == 0  # a float() per present cell: 1,000
    assert naming.calls == 2  # once per distinct code, not per cell: 1,500


# ---------------------------------------------------------------------------------- check_labels at predict

def _schema(classes: list | None) -> SimpleNamespace:
    return SimpleNamespace(prep=SimpleNamespace(classes=None if classes is None else [classes]), targets=["label"],
                           modality="tabular")


def test_check_labels_names_the_first_unknown_label_and_reads_each_distinct_once(monkeypatch) -> None:
    naming = _Counting(plain_value)
    monkeypatch.setattr(inputs, "plain_value", naming)
    y = _objects([1, 0.0, True, np.int64(1), 1.0] * 400)[:, None]
    inputs.check_labels(y, _schema([0, 1]), "new.csv")  # 1.0 and True are the class 1, as plain_value reads them
    assert naming.calls <= 2  # a label per distinct value (1, 0.0), not per row: 2,000
    y = _objects(["yes", "no", "yes", "maybe", "never"])[:, None]
    with pytest.raises(SchemaError, match=r"^new.csv: target 'label', row 4: label 'maybe' is not one of the model's "
                                          r"classes \('no', 'yes'\)"):
        inputs.check_labels(y, _schema(["no", "yes"]), "new.csv")
    with pytest.raises(TypeError, match="unhashable"):  # a list as a label: a traceback, as it always was
        inputs.check_labels(_objects(["no", "yes", [1]])[:, None], _schema(["no", "yes"]), "new.csv")


def test_check_labels_of_a_regression_reads_numbers_in_one_cast(monkeypatch: pytest.MonkeyPatch) -> None:
    to_float = _Counting(float)
    monkeypatch.setattr(inputs, "float", to_float, raising=False)
    inputs.check_labels(_objects([1.5, 2, "3.25", True] * 500)[:, None], _schema(None), "new.csv")
    assert to_float.calls == 0
    with pytest.raises(SchemaError, match=r"^new.csv: target 'label', row 3: 'n/a' is not a number, but the model "
                                          r"predicts numbers"):
        inputs.check_labels(_objects([1.5, "2", "n/a", "x"])[:, None], _schema(None), "new.csv")


def test_a_bytearray_in_a_numeric_feature_is_read_as_float_reads_it() -> None:
    """numpy's cast reads a bytearray as the numbers of its bytes ([51.] for b'3'); float() as the text it holds."""
    numeric = {"name": "n", "kind": "numeric", "mean": 0.0, "std": 1.0}
    out = tables._check_feature(_objects([bytearray(b"3"), "1"]), numeric, "x.csv", 20, False)
    assert list(out) == [3.0, 1.0]


# ---------------------------------------------------------------------------------- the training label check

def _csv(path: Path, labels: list[str]) -> Path:
    path.write_text("x,label\n" + "".join(f"{i},{v}\n" for i, v in enumerate(labels)))
    return path


@pytest.mark.parametrize(("labels", "message"), [
    (["1", "2", "01", "1"], "holds '1' and '01', two labels as written that read as the one number 1"),
    (["0", "-0", "1"], "holds '0' and '-0', two labels as written that read as the one number -0"),
    (["3", " 1.0", "1 ", "2"], "holds '1.0' and '1', two labels as written that read as the one number 1"),
    (["7", "inf", "Infinity"], "holds 'inf' and 'Infinity', two labels as written that read as the one number inf"),
])
def test_label_check_names_the_first_clashing_pair(tmp_path: Path, labels: list[str], message: str) -> None:
    path = _csv(tmp_path / "t.csv", labels)
    with pytest.raises(DataError, match="^" + str(path).replace(".", r"\.") + r": target column 'label' "
                                        + message.replace("(", r"\("), ):
        tables.label_text_check([path], ["label"])


def test_label_check_across_files_names_the_earlier_file(tmp_path: Path) -> None:
    train = _csv(tmp_path / "train.csv", ["1", "2", "1"])
    test = _csv(tmp_path / "test.csv", ["2", "1", "02"])
    with pytest.raises(DataError, match=r"test.csv: target column 'label' holds '2' and '02' \('2' in .*train.csv\)"):
        tables.label_text_check([train, test], ["label"])
    tables.label_text_check([train, _csv(tmp_path / "val.csv", ["2", "1"])], ["label"])  # the same texts: fine


def test_label_check_passes_labels_that_differ_as_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    to_float = _Counting(float)
    monkeypatch.setattr(tables, "float", to_float, raising=False)
    tables.label_text_check([_csv(tmp_path / "t.csv", ["nan", "NaN", "a", "1", "2"])], ["label"])  # NaN: no clash
    assert to_float.calls == 5  # not all numbers: a float() per distinct text, as before
    to_float.calls = 0
    tables.label_text_check([_csv(tmp_path / "u.csv", [str(i) for i in range(2000)] * 2)], ["label"])
    assert to_float.calls == 0  # all numbers: one cast; a float() per distinct text was 2,000


# ---------------------------------------------------------------------------------- missing cells found once

def _table(path: Path, rows: int = 1500) -> Path:
    rng = np.random.default_rng(0)
    lines = ["code,size,label"]
    for i in range(rows):
        code = "" if i % 50 == 7 else f"c{rng.integers(0, 4)}"
        lines.append(f"{code},{rng.normal():.3f},{'yes' if i % 2 else 'no'}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _count_missing(monkeypatch: pytest.MonkeyPatch, rows: int) -> list[int]:
    """is_missing's calls on whole columns (``rows`` long: not the first 1,000 rows some checks look at first), by
    the array they read (its id)."""
    calls: list[int] = []

    def counting(values):  # noqa: ANN001, ANN202
        if len(values) == rows:
            calls.append(id(values))
        return is_missing(values)

    for module in (base, tables, inputs, dates):
        monkeypatch.setattr(module, "is_missing", counting)
    return calls


def test_training_read_finds_each_text_columns_missing_cells_once(tmp_path: Path, monkeypatch) -> None:
    from fpt import data

    path = _table(tmp_path / "t.csv")
    calls = _count_missing(monkeypatch, 1500)
    raw = data.load(str(path))
    assert len(calls) == 2  # code and label, once each; the feature check and the target check read them again: 4
    code = raw.splits["train"].x["code"]
    assert code.dtype == object and sum(v is None for v in code) == 30


def test_predict_read_finds_each_text_columns_missing_cells_once(tmp_path: Path, monkeypatch) -> None:
    from fpt.data.tokenisers import TabularTokens

    path = _table(tmp_path / "t.csv")
    cols = tables.read_columns(path)
    tok = TabularTokens.fit({"code": cols["code"], "size": cols["size"]}, 20)
    prep = SimpleNamespace(modality="tabular", features=["code", "size"], targets=["label"], tokeniser=tok,
                           classes=[["no", "yes"]], dropped=[], series_id=[])
    calls = _count_missing(monkeypatch, 1500)
    read = inputs.read_inputs(path, inputs.Schema(prep))
    assert len(calls) == 2  # the reader's, of code and label; the feature and target checks took them: 4
    assert list(read.x["code"][:8]) == list(cols["code"][:8]) and read.x["code"][7] is None
    assert read.y[:2, 0].tolist() == ["no", "yes"]


# ---------------------------------------------------------------------------------- tokens checked as finite

@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_check_finite_finds_any_non_finite_token_without_a_mask_of_every_value(bad: float, dtype, monkeypatch) -> None:
    from fpt.data import tokenisers

    sizes: list[int] = []
    real = torch.isfinite
    monkeypatch.setattr(torch, "isfinite", lambda x: sizes.append(x.numel()) or real(x))
    x = torch.randn(40, 3, 7).to(dtype)
    assert tokenisers.check_finite(x, "new.csv") is x
    for at in [(0, 0, 0), (17, 1, 3), (39, 2, 6)]:
        y = x.clone()
        y[at] = bad
        y[25, 0, 0] = bad
        with pytest.raises(DataError, match=rf"^new.csv: example {at[0] + 1 if at[0] < 25 else 26} \(2 in all\) gives "
                                            r"values beyond float32's range"):
            tokenisers.check_finite(y, "new.csv")
    assert sizes[0] == 2  # the least and greatest values, not a mask of all 840 (the mask is made only to name one)

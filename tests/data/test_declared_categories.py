"""A column whose type declares it categorical (a pandas category dtype of numbers, an Arrow dictionary as
df.to_parquet and to_feather write one) is read as categories, not standardised as a number (fpt.data.categories):
in fpt.build(data=df), in fpt train --data FILE.parquet, and at predict, where the same codes given as plain numbers
find their categories by value."""

from __future__ import annotations

import numpy as np
import pytest

import fpt
from fpt.baselines import features as baseline_features
from fpt.cli import main
from fpt.data import load
from fpt.data.categories import category_names, file_categories
from fpt.errors import SchemaError

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")
CLOSED = {"init": "random", "fit": "closed-form", "device": "cpu", "baselines": "none"}


def _frame(n: int = 60) -> pd.DataFrame:
    codes = np.array([10, 20, 30])[np.arange(n) % 3]
    rng = np.random.default_rng(0)
    return pd.DataFrame({"x": rng.normal(size=n).round(3), "code": pd.Categorical(codes),
                         # ordered, of floats with gaps: one-hot as any other, the gaps missing
                         "grade": pd.Categorical(np.where(np.arange(n) % 5 == 0, np.nan, (np.arange(n) % 2) + 1.5),
                                                 ordered=True),
                         "label": np.where(codes == 20, "b", "a")})


def _kinds(tok: dict) -> dict[str, tuple[str, list[str] | None]]:
    return {f["name"]: (f["kind"], sorted(f["categories"]) if f["kind"] == "categorical" else None)
            for f in tok["features"]}


def test_category_names_write_numbers_as_the_tokeniser_names_them():
    values = np.array([10, 20.0, np.nan, 2.5, True], dtype=object)
    assert category_names(values).tolist() == ["10", "20", None, "2.5", "True"]
    assert category_names(np.array(["a", None], dtype=object)).tolist() == ["a", None]


def test_a_dataframe_category_of_numbers_is_categorical_and_predicts_plain_numbers_by_value(tmp_path, tiny_bert_dir):
    frame = _frame()
    exp = fpt.build(data=frame, target="label", body=tiny_bert_dir, **CLOSED)
    kinds = _kinds(exp.data.fitted["tokeniser"])
    # before: code was ('numeric', None), its mean 20 and std 8.2; grade numeric likewise
    assert kinds == {"x": ("numeric", None), "code": ("categorical", ["10", "20", "30"]),
                     "grade": ("categorical", ["1.5", "2.5"])}
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    new = frame.drop(columns="label")
    declared = model.predict(new)
    assert (declared == frame["label"].to_numpy()).mean() == 1.0  # the code alone gives the label
    # the same codes as plain ints, as floats (a gap makes pandas read them so) and as text: the same categories
    for plain in (new.assign(code=new["code"].astype(int), grade=new["grade"].astype(float)),
                  new.assign(code=new["code"].astype(float)), new.assign(code=new["code"].astype(str))):
        assert model.predict(plain).tolist() == declared.tolist()
    with pytest.raises(SchemaError, match=r"inputs\.iloc\[0\]\['code'\]: category '40' was not seen"):
        model.predict(new.assign(code=40))


def test_a_category_target_keeps_its_values(tiny_bert_dir):
    frame = _frame().assign(label=lambda f: pd.Categorical(np.where(f["code"] == 20, 1, 0)))
    exp = fpt.build(data=frame, target="label", body=tiny_bert_dir, **CLOSED)
    assert exp.data.objective.name == "classification" and exp.data.fitted["classes"] == [[0, 1]]


@pytest.mark.parametrize("suffix", [".parquet", ".feather"])
def test_a_file_category_column_of_ints_reads_as_categories_for_the_run_and_its_baselines(tmp_path, suffix,
                                                                                         tiny_bert_dir):
    frame = _frame()
    path = tmp_path / f"t{suffix}"
    frame.to_parquet(path) if suffix == ".parquet" else frame.to_feather(path)
    # pyarrow reads a Parquet dictionary of ints back as int64 (so does pandas): the declaration is the stored schema
    assert file_categories(path, "parquet" if suffix == ".parquet" else "arrow") == {"code", "grade"}
    raw = load(str(path))
    assert raw.splits["train"].x["code"][:3].tolist() == ["10", "20", "30"]
    exp = fpt.build(data=str(path), body=tiny_bert_dir, **{**CLOSED, "baselines": "fast"})
    assert _kinds(exp.data.fitted["tokeniser"])["code"] == ("categorical", ["10", "20", "30"])
    # the classic models read the same tokens: the code's one-hot slots, one per category and the shared slot
    _, sets = baseline_features(exp.data)
    x, _ = sets["train"]
    code = next(f for f in exp.data.fitted["tokeniser"]["features"] if f["name"] == "code")
    slots = x[:, 1, 2 + code["offset"]: 3 + code["offset"] + len(code["categories"])]
    assert x[:, 1, 0].tolist() == [0.0] * len(x) and slots.sum(axis=1).tolist() == [1.0] * len(x)
    out = tmp_path / "run"
    assert main(["train", "--data", str(path), "--body", tiny_bert_dir, "--init", "random", "--fit", "closed-form",
                 "--device", "cpu", "--out", str(out)]) == 0
    frame.drop(columns="label").assign(code=lambda f: f["code"].astype(int)).to_csv(tmp_path / "new.csv", index=False)
    assert main(["predict", str(out), str(tmp_path / "new.csv"), "--out", str(tmp_path / "p.csv")]) == 0
    assert pd.read_csv(tmp_path / "p.csv")["prediction"].tolist() == frame["label"].tolist()


@pytest.mark.parametrize("given", ["DataFrame", ".parquet", ".feather"])
def test_a_declared_category_target_of_many_integers_is_classification_under_auto(tmp_path, given, tiny_bert_dir):
    # 25 distinct integer codes: by its values (over 20 integers) regression, which is how they were read before
    codes = np.arange(75) % 25 * 7
    frame = pd.DataFrame({"x": codes / 7 + np.random.default_rng(0).normal(size=75) * 0.1,
                          "label": pd.Categorical(codes)})
    data: object = frame
    if given != "DataFrame":
        data = str(tmp_path / f"t{given}")
        frame.to_parquet(data) if given == ".parquet" else frame.to_feather(data)
    with pytest.warns(fpt.data.base.ObjectiveInferred,
                      match=r"objective classification, inferred from the values \('label' is declared categorical\)"):
        exp = fpt.build(data=data, target="label", body=tiny_bert_dir, **CLOSED)
    assert exp.data.objective.name == "classification" and exp.data.spec.num_classes == 25
    assert exp.data.fitted["classes"] == [sorted(set(codes.tolist()))]
    # objective given: the values as numbers, as asked
    exp = fpt.build(data=data, target="label", objective="regression", body=tiny_bert_dir, **CLOSED)
    assert exp.data.objective.name == "regression"

"""Decimals and dates in a table as practitioners have them: a database's decimals in Parquet, read as a category per
amount."""

from __future__ import annotations

import decimal

import numpy as np
import pandas as pd

import fpt
from fpt.data import load

CLOSED = {"init": "random", "fit": "closed-form", "baselines": "none", "device": "cpu"}


def test_parquet_decimals_are_numbers_not_a_category_per_amount(tmp_path, tiny_bert_dir):
    n = 40
    amounts = [decimal.Decimal(f"{i * 7 % 40}.25") for i in range(n)]
    frame = pd.DataFrame({"amount": amounts, "label": ["big" if a > 20 else "small" for a in amounts]})
    frame.to_parquet(tmp_path / "t.parquet")
    import pyarrow.parquet as pq

    assert str(pq.read_schema(tmp_path / "t.parquet").field("amount").type) == "decimal128(4, 2)"
    raw = load(str(tmp_path / "t.parquet"))
    assert raw.splits["train"].x["amount"].dtype == np.float64
    assert raw.splits["train"].x["amount"].tolist() == [float(a) for a in amounts]
    exp = fpt.build(data=str(tmp_path / "t.parquet"), body=tiny_bert_dir, **CLOSED)
    fpt.fit(exp, out=tmp_path / "run", progress=False)
    model = fpt.load(tmp_path / "run")
    (feature,) = model.preprocessing.tokeniser.features
    assert feature["kind"] == "numeric" and 15 < feature["mean"] < 25  # of the training split's amounts, 0.25..39.25
    new = pd.DataFrame({"amount": [decimal.Decimal("99.99")]})  # an amount never seen: a number, not a category
    new.to_parquet(tmp_path / "new.parquet")
    assert len(model.predict(str(tmp_path / "new.parquet"))) == 1
    regression = pd.DataFrame({"x": np.arange(n) * 1.0, "price": amounts})  # a decimal target is a quantity
    regression.to_parquet(tmp_path / "r.parquet")
    assert load(str(tmp_path / "r.parquet")).splits["train"].y.dtype == np.float64

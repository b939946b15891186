"""Symbol sequences handed to fpt.build as arrays, as an NLP practitioner holds them: (texts, labels), a list or a
1-D array or Series of strings. They are read as the scikit-learn estimators read texts given as X: a table of one
text column, ``text``, read as symbol sequences. They were refused ('arrays hold numbers'), and before that the fix
said X.reshape(-1, 1), which was refused in turn for its dtype (<U3), or, as objects, read each text as one category."""

from __future__ import annotations

import numpy as np
import pytest

import fpt
from fpt.errors import DataError

pd = pytest.importorskip("pandas")
WORDS = ["abc", "de"] * 15


@pytest.mark.parametrize("texts", [WORDS, np.array(WORDS), pd.Series(WORDS)], ids=["list", "array", "series"])
def test_texts_as_arrays_are_read_as_a_table_column_of_texts(texts, tiny_bert_dir):
    labels = [0, 1] * 15
    table = fpt.build(data=pd.DataFrame({"text": texts, "y": labels}), body=tiny_bert_dir, init="random",
                      device="cpu", fit="closed-form")
    for data in ((texts, labels), {"X": texts, "y": labels}):
        exp = fpt.build(data=data, body=tiny_bert_dir, init="random", device="cpu", fit="closed-form")
        assert exp.data.fitted == table.data.fitted and exp.data.fitted["tokeniser"]["kind"] == "sequence"
    # read as a table's columns of numbers, as modality='tabular' asks, texts are refused naming the column to use
    with pytest.raises(DataError, match=r"^data arrays: X: one text per example \('abc', ...\); arrays hold numbers"):
        fpt.build(data=(texts, labels), body=tiny_bert_dir, init="random", device="cpu", modality="tabular")

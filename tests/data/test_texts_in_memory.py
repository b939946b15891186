"""Symbol sequences handed to fpt.build as arrays, as an NLP practitioner holds them: (texts, labels), a list or a
1-D array or Series of strings. Arrays hold numbers; the refusal names the table column that reads texts. It said
X.reshape(-1, 1), which was refused in turn for its dtype (<U3), or, as objects, read each text as one category."""

from __future__ import annotations

import numpy as np
import pytest

import fpt
from fpt.errors import DataError

pd = pytest.importorskip("pandas")
WORDS = ["abc", "de"] * 15


@pytest.mark.parametrize("texts", [WORDS, np.array(WORDS), pd.Series(WORDS)], ids=["list", "array", "series"])
def test_texts_as_arrays_name_the_table_column_that_reads_them(texts, tiny_bert_dir):
    labels = [0, 1] * 15
    for data in ((texts, labels), {"X": texts, "y": labels}):
        with pytest.raises(DataError) as err:
            fpt.build(data=data, body=tiny_bert_dir, init="random", device="cpu")
        assert str(err.value).startswith("data arrays: X: one text per example ('abc', ...); arrays hold numbers: "
                                         "give the texts as a table's column, data=pd.DataFrame({'text': X, 'label': "
                                         "y}), whose one text column is read as symbol sequences (modality='sequence')")
    exp = fpt.build(data=pd.DataFrame({"text": texts, "label": labels}), body=tiny_bert_dir, init="random",
                    device="cpu", fit="closed-form")  # the fix it names works
    assert exp.data.fitted["tokeniser"]["kind"] == "sequence"

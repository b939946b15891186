"""The tokenisers build windows and one-hot slots with the field's libraries (numpy's sliding_window_view,
pandas' index lookup), and their tokens equal an independent construction (issue 38, item 7)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fpt.data import tokenisers
from fpt.data.tokenisers import SeriesTokens, TabularTokens


@pytest.mark.parametrize(("patch", "stride"), [(4, 4), (3, 1), (5, 2), (1, 1)])
def test_series_windows_are_sliding_window_views_equal_to_unfold(monkeypatch, patch, stride):
    rng = np.random.default_rng(patch * 10 + stride)
    series = [rng.normal(size=(2, int(n))).astype(np.float32) for n in rng.integers(3, 30, 12)]
    tok = SeriesTokens.fit(series, patch, stride, "none")
    calls = []
    real = tokenisers.sliding_window_view
    monkeypatch.setattr(tokenisers, "sliding_window_view", lambda *a, **k: calls.append(1) or real(*a, **k))
    x, lengths = tok(series)
    assert len(calls) == len(series)
    for i, s in enumerate(series):  # torch's unfold over the zero-padded series: (C, count, patch) -> (count, C * patch)
        count = int(lengths[i])
        padded = torch.zeros(2, max((count - 1) * stride + patch, s.shape[1]), dtype=torch.float64)
        padded[:, : s.shape[1]] = torch.from_numpy(s.astype(np.float64))
        windows = padded.unfold(1, patch, stride)[:, :count].permute(1, 0, 2).reshape(count, -1)
        assert torch.equal(x[i, :count], windows.float()) and not x[i, count:].any()


def test_one_hot_slots_are_a_lookup_not_the_one_hot_encoders_check_per_value(monkeypatch):
    import sklearn.preprocessing

    col = np.array(["a", "b", None, "c", "a", "d", "zz", "", "b", "a"] * 3, dtype=object)
    tok = TabularTokens.fit({"c": col[:20]}, 2)  # keeps a and b (most frequent); the rest share one slot
    assert tok.features[0]["categories"] == ["a", "b"]

    def refused(**_: object) -> None:  # it checked each value in Python: seconds at 200,000 rows
        raise AssertionError("OneHotEncoder used")

    monkeypatch.setattr(sklearn.preprocessing, "OneHotEncoder", refused)
    x, _ = tok({"c": np.array(["a", "zz", None, "b", "new", ""], dtype=object)})
    slots = x[:, 0, 2:].numpy()  # [a, b, shared]
    assert slots.tolist() == [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]]
    assert x[:, 0, 1].tolist() == [0, 0, 1, 0, 0, 1]  # missing: None and empty text

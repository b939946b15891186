"""Your own data's modalities as declared entries, as the formats are in ``fpt.data.formats``.

Each names its tokeniser (``fpt.data.tokenisers``: fitted on train, saved in data.json), the RunConfig
fields that shape its tokens, whether its examples are padded to a batch's longest, the features that
classic models and linear probes read (computed from the tokens, so they see what the model sees), the
classic models fitted beside a run (``fpt.baselines.MODELS``), and what ``fpt predict`` takes for it.
A new modality is its tokeniser class plus one entry here; tests/data/test_kinds.py checks every entry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from fpt.data.tokenisers import KINDS
from fpt.errors import DataError


@dataclass(frozen=True)
class Modality:
    name: str
    options: Mapping[str, str | None]  # RunConfig field -> the tokeniser JSON key holding its fitted value (or None)
    pads: bool  # examples of several lengths: padded and masked, the model takes their lengths
    features: Callable[[np.ndarray, dict[str, Any], int], np.ndarray]  # (tokens (N, T, ...), tokeniser JSON, vocab)
    baselines: tuple[str, ...]  # the classic models fitted beside a run, in order (fpt.baselines.MODELS)
    predict_input: str  # what fpt predict reads for it, named when it is given something else
    # the input schema in words and numbers (the model card, an export's config.json): (fitted tokeniser, feature
    # columns, the summary's task_info) -> its keys beside "modality" and "targets"
    describe: Callable[[Any, list[str], Mapping[str, Any]], dict[str, Any]]

    @property
    def tokeniser(self) -> type:
        """The tokeniser class (``fit_from``, ``check_json``, ``to_json``...): the same name in data.json."""
        return KINDS[self.name]


def token_features(x: np.ndarray, tok: dict[str, Any], vocab: int) -> np.ndarray:
    """The tokens themselves (tables: one standardised token per feature; images: normalised patches)."""
    return x


def series_features(x: np.ndarray, tok: dict[str, Any], vocab: int) -> np.ndarray:
    """(N, C, L) normalised series rebuilt from their (N, T, patch * C) windows (zeros past each one's end)."""
    n, t, _ = x.shape
    c, patch, stride = tok["channels"], tok["patch"], tok["stride"]
    windows = x.reshape(n, t, c, patch)  # each token: channel-major (C, patch), as fpt.data.tokenisers cut them
    if stride >= patch:  # no overlap: the windows in order (points between windows are not in any token)
        return windows.transpose(0, 2, 1, 3).reshape(n, c, t * patch)
    head = windows[:, :-1, :, :stride].transpose(0, 2, 1, 3).reshape(n, c, (t - 1) * stride)
    return np.concatenate([head, windows[:, -1]], axis=2)


def symbol_counts(x: np.ndarray, tok: dict[str, Any], vocab: int) -> np.ndarray:
    """(N, vocab) counts of each symbol id (a bag of symbols; padding, id 0, not counted)."""
    return np.stack([np.bincount(row[row > 0], minlength=vocab) for row in x]).astype(np.float32)


def max_points(tok: Any) -> int:
    """The most points of a series the tokeniser keeps (its sequence length of windows)."""
    return (tok.max_tokens - 1) * tok.stride + tok.patch


def _table_schema(tok: Any, features: list[str], info: Mapping[str, Any]) -> dict[str, Any]:
    return {"features": [{"name": f["name"], "kind": f["kind"],
                          **({"categories": f["categories"]} if f["kind"] == "categorical" else {})}
                         for f in tok.features]}


def _image_schema(tok: Any, features: list[str], info: Mapping[str, Any]) -> dict[str, Any]:
    return {"image": {"size": tok.image_size, "channels": tok.channels, "patch_size": tok.patch_size}}


def _series_schema(tok: Any, features: list[str], info: Mapping[str, Any]) -> dict[str, Any]:
    return {"series": {"channels": tok.channels, "patch": tok.patch, "stride": tok.stride,
                       "max_points": max_points(tok), "train_lengths": info.get("train_lengths")}}


def _sequence_schema(tok: Any, features: list[str], info: Mapping[str, Any]) -> dict[str, Any]:
    return {"features": features, "sequence": {"mode": tok.mode, "max_len": tok.max_len, "vocabulary": len(tok.vocab)}}


TABLE_FILE = "one table file (e.g. DIR/test.csv)"
MODALITIES: dict[str, Modality] = {m.name: m for m in (
    Modality("tabular", {"max_categories": None}, False, token_features, ("linear", "boosting"), TABLE_FILE,
             _table_schema),
    Modality("image", {"image_size": "image_size", "patch_size": "patch_size", "image_channels": "channels"},
             False, token_features, ("linear",), "a folder of images", _image_schema),
    Modality("timeseries", {"series_patch": "patch", "series_stride": "stride", "series_norm": "norm"},
             True, series_features, ("nearest", "minirocket"), "its *_TEST.ts or .tsv file", _series_schema),
    Modality("sequence", {"sequence_tokens": "mode", "sequence_max_len": "max_len"},
             True, symbol_counts, ("linear", "boosting"), TABLE_FILE, _sequence_schema),
)}
PADDED = tuple(name for name, m in MODALITIES.items() if m.pads)  # the tokenisers that pad and return lengths


def modality(name: str) -> Modality:
    if name not in MODALITIES:
        raise DataError(f"modality {name!r}: fpt knows {', '.join(MODALITIES)}")
    return MODALITIES[name]


__all__ = ["MODALITIES", "PADDED", "Modality", "max_points", "modality", "series_features", "symbol_counts", "token_features"]

"""The saved tokeniser's fixed arithmetic as a torch module, so that ``fpt export --onnx`` can also write a graph
that takes raw features (``model_raw.onnx``), not tokens.

Only the tokenisers whose work is arithmetic on fixed shapes fit in a graph:

- tabular with numeric columns only: raw (batch, F) float32 in the training column order, NaN where missing ->
  one token per column ``[standardised value, missing indicator]`` (text columns would need string lookups);
- time series whose training series all had one length L: raw (batch, C, L) float32 (NaN where missing) ->
  the normalisation (per series and channel, the training statistics, or none) and the windows.

Images (resizing, decoding), sequences (a vocabulary of strings) and series of varied lengths stay with the
tokens graph (``model.onnx``) and fpt's tokeniser. ``raw_tokeniser`` says why when it cannot build one.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

Tensor = torch.Tensor


class TabularRaw(nn.Module):
    """(B, F) numbers, NaN where missing -> tokens (B, F, 2): [(x - mean) / std or 0, missing]."""

    def __init__(self, tok: Any) -> None:
        super().__init__()
        self.register_buffer("mean", torch.tensor([f["mean"] for f in tok.features], dtype=torch.float32))
        self.register_buffer("std", torch.tensor([f["std"] for f in tok.features], dtype=torch.float32))

    def forward(self, x: Tensor) -> Tensor:
        missing = torch.isnan(x)  # (B, F)
        value = torch.where(missing, torch.zeros_like(x), (x - self.mean) / self.std)
        return torch.stack([value, missing.float()], dim=-1)  # (B, F, 2)


class SeriesRaw(nn.Module):
    """(B, C, L) series of the one training length, NaN where missing -> tokens (B, T, C * patch)."""

    def __init__(self, tok: Any, length: int) -> None:
        super().__init__()
        self.patch, self.stride, self.norm, self.length = tok.patch, tok.stride, tok.norm, length
        self.count = min(tok.max_tokens, 1 + max(0, -(-(length - tok.patch) // tok.stride)))
        self.need = max((self.count - 1) * tok.stride + tok.patch, length)
        self.register_buffer("mean", torch.tensor(tok.mean, dtype=torch.float32)[:, None])  # (C, 1)
        self.register_buffer("std", torch.tensor(tok.std, dtype=torch.float32)[:, None])
        self.difference = tok.difference  # cf_difference: the first difference's channels after the series'
        if tok.difference:
            self.register_buffer("diff_mean", torch.tensor(tok.diff_mean, dtype=torch.float32)[:, None])
            self.register_buffer("diff_std", torch.tensor(tok.diff_std, dtype=torch.float32)[:, None])

    def forward(self, x: Tensor) -> Tensor:
        series = self.normalise(x, self.mean, self.std)  # (B, C, L)
        if self.difference:  # as fpt.data.tokenisers.first_difference: the first point's 0
            diff = torch.cat([torch.zeros_like(x[..., :1]), x[..., 1:] - x[..., :-1]], dim=-1)
            series = torch.cat([series, self.normalise(diff, self.diff_mean, self.diff_std)], dim=1)  # (B, 2C, L)
        x = nn.functional.pad(series, (0, self.need - self.length))  # (B, C, need)
        windows = x.unfold(2, self.patch, self.stride)[:, :, : self.count]  # (B, C, T, patch)
        return windows.permute(0, 2, 1, 3).reshape(x.shape[0], self.count, -1)  # (B, T, C * patch)

    def normalise(self, x: Tensor, mean: Tensor, std: Tensor) -> Tensor:
        missing = torch.isnan(x)  # (B, C, L)
        if self.norm == "series":  # nanmean / nanstd (population) per series and channel, as numpy's
            present = (~missing).float()
            n = present.sum(-1, keepdim=True).clamp(min=1)
            filled = torch.where(missing, torch.zeros_like(x), x)
            mean = filled.sum(-1, keepdim=True) / n
            var = (torch.where(missing, torch.zeros_like(x), x - mean) ** 2).sum(-1, keepdim=True) / n
            std = var.sqrt()
            x = (x - mean) / torch.where(std > 0, std, torch.ones_like(std))
        elif self.norm == "global":
            x = (x - mean) / std
        return torch.where(torch.isnan(x), torch.zeros_like(x), x)  # missing points are the mean


class RawModel(nn.Module):
    """Raw features -> the tokeniser's arithmetic -> the model's logits (B, outputs, classes)."""

    def __init__(self, tokens: nn.Module, model: nn.Module, lengths: bool) -> None:
        super().__init__()
        self.tokens, self.model, self.lengths = tokens, model, lengths

    def forward(self, x: Tensor) -> Tensor:
        t = self.tokens(x)
        if not self.lengths:
            return self.model(t)
        lengths = torch.full((t.shape[0],), t.shape[1], dtype=torch.int64, device=t.device)
        return self.model(t, lengths)


# The coarsest step, in training standard deviations, that float32 inputs may round a column's (or channel's) values
# to. fpt standardises in float64; the graph's inputs are float32, whose steps near 1.7e9 (a timestamp) are 128: a
# column of spread 50 there reached the model 2.6 standard deviations off, while the export's check, on inputs near
# 0, passed.
FLOAT32_RESOLUTION = 1e-4


def float32_steps(mean: Any, std: Any) -> np.ndarray:
    """Per column or channel: float32's spacing near its training values (|mean| + 4 std), in its std."""
    mean, std = np.asarray(mean, dtype=np.float64), np.asarray(std, dtype=np.float64)
    return np.spacing((np.abs(mean) + 4 * std).astype(np.float32)).astype(np.float64) / std


def _unresolved(names: list[str], mean: Any, std: Any, what: str) -> str | None:
    """Why float32 inputs cannot carry these columns (channels) to ``FLOAT32_RESOLUTION``, or None."""
    steps = float32_steps(mean, std)
    worst = int(np.argmax(steps))
    if not steps[worst] > FLOAT32_RESOLUTION:
        return None
    return (f"float32 inputs round {what} {names[worst]!r} (mean {float(np.asarray(mean)[worst]):.6g}, std "
            f"{float(np.asarray(std)[worst]):.3g}) to steps of {steps[worst] * float(np.asarray(std)[worst]):.3g}, "
            f"{steps[worst]:.2g} of its standard deviation; model.onnx takes fpt's tokens")


def _tabular(tok: Any, info: dict[str, Any]) -> tuple[nn.Module | None, tuple[int, ...], str]:
    text = list(dict.fromkeys(f["name"] for f in tok.features if f["kind"] == "categorical"))
    if text:
        return None, (), f"text columns ({', '.join(text[:3])}) need fpt's category lookup"
    dates = list(dict.fromkeys(f["name"] for f in tok.features if f["kind"] == "datetime"))
    if dates:
        return None, (), f"date columns ({', '.join(dates[:3])}) need fpt's reading of dates and calendars"
    coarse = _unresolved([f["name"] for f in tok.features], [f["mean"] for f in tok.features],
                         [f["std"] for f in tok.features], "column")
    if coarse:
        return None, (), coarse
    names = ", ".join(f["name"] for f in tok.features)
    return TabularRaw(tok), (len(tok.features),), f"(batch, {len(tok.features)}) float32 columns {names}; NaN where missing"


def _series(tok: Any, info: dict[str, Any]) -> tuple[nn.Module | None, tuple[int, ...], str]:
    lengths = str(info.get("train_lengths") or "")
    lo, _, hi = lengths.partition("..")
    if not lo.isdigit() or lo != hi:
        return None, (), f"training series of varied lengths ({lengths or 'unknown'}) give a varied token count"
    length = int(lo)
    # normalised, a series' values are read at its spread (the training statistics'; per series, a narrower one);
    # unnormalised, fpt's tokens are float32 too
    coarse = None if tok.norm == "none" else _unresolved([str(c) for c in range(tok.channels)], tok.mean, tok.std,
                                                          "channel")
    if coarse:
        return None, (), coarse
    return SeriesRaw(tok, length), (tok.channels, length), f"(batch, {tok.channels}, {length}) float32 series; NaN " \
                                                           "where missing"


# modality (fpt.data.modalities) -> its tokeniser as ONNX arithmetic; the others decode images or look up strings
RAW: dict[str, Any] = {"tabular": _tabular, "timeseries": _series}


def raw_tokeniser(prep: Any, info: dict[str, Any]) -> tuple[nn.Module | None, tuple[int, ...], str]:
    """(the module, the raw input's shape after the batch, what it takes) or (None, (), why not)."""
    if prep.modality not in RAW:
        return None, (), f"a {prep.modality} tokeniser is not fixed arithmetic (decoding, strings)"
    return RAW[prep.modality](prep.tokeniser, info)


__all__ = ["RAW", "RawModel", "SeriesRaw", "TabularRaw", "raw_tokeniser"]

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

from fpt.data.resolution import FLOAT32_RESOLUTION, float32_steps

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


class RawTokens(nn.Module):
    """Raw features -> the tokeniser's arithmetic -> the tokens model.onnx takes (``x``, and ``lengths``: all of them
    real): traced alone and joined to model.onnx, the raw graph needs no second
    trace of the model (fpt.export.write_raw_onnx)."""

    def __init__(self, tokens: nn.Module, lengths: bool) -> None:
        super().__init__()
        self.tokens, self.lengths = tokens, lengths

    def forward(self, x: Tensor) -> tuple[Tensor, ...]:
        t = self.tokens(x)
        if not self.lengths:
            return (t,)
        return t, torch.full((t.shape[0],), t.shape[1], dtype=torch.int64, device=t.device)


class RawModel(RawTokens):
    """Raw features -> the tokeniser's arithmetic -> the model's logits (B, outputs, classes): ``RawTokens``' tokens,
    then the model."""

    def __init__(self, tokens: nn.Module, model: nn.Module, lengths: bool) -> None:
        super().__init__(tokens, lengths)
        self.model = model

    def forward(self, x: Tensor) -> Tensor:  # type: ignore[override]
        return self.model(*super().forward(x))


def _unresolved(names: list[str], steps: Any, said: list[str]) -> str | None:
    """Why float32 inputs cannot carry these columns (channels) to ``FLOAT32_RESOLUTION`` (each's ``steps``, in the
    spread it is normalised by; ``said``: how each was measured), or None."""
    steps = np.asarray(steps, dtype=np.float64)
    worst = int(np.argmax(steps))
    if not steps[worst] > FLOAT32_RESOLUTION:
        return None
    return f"float32 inputs round {names[worst]} {said[worst]}; model.onnx takes fpt's tokens"


def _global(mean: Any, std: Any) -> tuple[np.ndarray, list[str]]:
    """Steps (and their words) of columns or channels normalised by their training mean and std: float32's spacing
    near their training values (|mean| + 4 std). fpt standardises in float64; the graph's inputs are float32, whose
    steps near 1.7e9 (a timestamp) are 128: a column of spread 50 there reached the model 2.6 standard deviations off,
    while the export's check, on inputs near 0, passed."""
    mean, std = np.asarray(mean, dtype=np.float64), np.asarray(std, dtype=np.float64)
    steps = float32_steps(np.abs(mean) + 4 * std, std)
    return steps, [f"(mean {m:.6g}, std {s:.3g}) to steps of {t * s:.3g}, {t:.2g} of its standard deviation"
                   for m, s, t in zip(mean, std, steps, strict=True)]


def _tabular(tok: Any, info: dict[str, Any]) -> tuple[nn.Module | None, tuple[int, ...], str]:
    text = list(dict.fromkeys(f["name"] for f in tok.features if f["kind"] == "categorical"))
    if text:
        return None, (), f"text columns ({', '.join(text[:3])}) need fpt's category lookup"
    dates = list(dict.fromkeys(f["name"] for f in tok.features if f["kind"] == "datetime"))
    if dates:
        return None, (), f"date columns ({', '.join(dates[:3])}) need fpt's reading of dates and calendars"
    coarse = _unresolved([f"column {f['name']!r}" for f in tok.features],
                         *_global([f["mean"] for f in tok.features], [f["std"] for f in tok.features]))
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
    coarse = _unresolved(*_series_steps(tok))
    if coarse:
        return None, (), coarse
    return SeriesRaw(tok, length), (tok.channels, length), f"(batch, {tok.channels}, {length}) float32 series; NaN " \
                                                           "where missing"


def _series_steps(tok: Any) -> tuple[list[str], np.ndarray, list[str]]:
    """(names, steps, words) of a series tokeniser's token channels: the series' channels, then their first
    differences (cf_difference, which the graph takes of the rounded inputs). Each is read at the spread it is
    normalised by: per series and channel, a series' own (at 1e6 + 0.001 x signal: steps of 60 of its spread, where
    its channel's, 1e3 across series, passed), else the channel's; unnormalised, fpt's tokens are float32 too."""
    names = [f"channel {c}" for c in range(tok.channels)]
    if tok.difference:
        names += [f"channel {c}'s first difference" for c in range(tok.channels)]
    if tok.float32_steps:  # measured on the training series when fitted (fpt.data.resolution.series_steps)
        per = "a training series' own standard deviation (normalised per series)" if tok.norm == "series" else \
            "its standard deviation"
        return names, np.asarray(tok.float32_steps), [f"to steps of {t:.2g} of {per}" for t in tok.float32_steps]
    # a run before those were measured: the channels' training mean and std, the one figure saved
    steps, said = _global(tok.mean, tok.std)
    if tok.norm == "none":
        steps = np.zeros_like(steps)
    if tok.difference:
        near = np.abs(np.asarray(tok.mean)) + 4 * np.asarray(tok.std)
        diff = float32_steps(near, tok.diff_std)
        steps = np.concatenate([steps, diff])
        said += [f"(values near {m:.6g}, differences of std {s:.3g}) to steps of {t:.2g} of that std"
                 for m, s, t in zip(near, tok.diff_std, diff, strict=True)]
    return names, steps, said


# modality (fpt.data.modalities) -> its tokeniser as ONNX arithmetic; the others decode images or look up strings
RAW: dict[str, Any] = {"tabular": _tabular, "timeseries": _series}


def raw_tokeniser(prep: Any, info: dict[str, Any]) -> tuple[nn.Module | None, tuple[int, ...], str]:
    """(the module, the raw input's shape after the batch, what it takes) or (None, (), why not)."""
    if prep.modality not in RAW:
        return None, (), f"a {prep.modality} tokeniser is not fixed arithmetic (decoding, strings)"
    return RAW[prep.modality](prep.tokeniser, info)


__all__ = ["RAW", "RawModel", "SeriesRaw", "TabularRaw", "raw_tokeniser"]

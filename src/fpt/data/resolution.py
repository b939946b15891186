"""How finely float32 carries training values, in the spread each is normalised by: what decides whether a graph
that takes raw float32 inputs (``fpt.onnx_raw``: ``model_raw.onnx``) reads them as fpt does, which keeps float64
until a value is normalised.

float32's steps near 1e6 are 0.0625; a series there whose own spread is 0.001 (normalised per series) is rounded to
noise, though its channel's spread across series (1e3) is carried to 6e-5 of it. So a series' step is measured
against the spread it is normalised by: its own per series and channel (``norm`` series), the channel's (global); and
a first difference's (cf_difference), which the graph takes of the rounded inputs, against the difference's spread.
"""

from __future__ import annotations

import warnings

import numpy as np

# float32's spacing near a channel's (column's) values, in the spread it is normalised by, above which float32 cannot
# carry it: a sensor's 1e6 offset has steps of 0.0625, so a variation of 0.001 on top of it reads as a constant
FLOAT32_RESOLUTION = 1e-4


def float32_steps(magnitude: object, spread: object) -> np.ndarray:
    """float32's spacing near ``magnitude`` (the largest absolute value), in units of ``spread``, elementwise."""
    magnitude, spread = np.asarray(magnitude, dtype=np.float64), np.asarray(spread, dtype=np.float64)
    return np.spacing(np.abs(magnitude).astype(np.float32)).astype(np.float64) / spread


def _per_series(series: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(largest |value|, std) per training series and channel, (N, C) each; a series of no spread has std NaN."""
    with warnings.catch_warnings():  # a channel missing throughout a series: NaN, left out below
        warnings.simplefilter("ignore", RuntimeWarning)
        if len({s.shape for s in series}) == 1:
            stack = np.stack(series).astype(np.float64)  # (N, C, L)
            top, std = np.nanmax(np.abs(stack), axis=-1), np.nanstd(stack, axis=-1)
        else:
            top = np.stack([np.nanmax(np.abs(s.astype(np.float64)), axis=-1) for s in series])
            std = np.stack([np.nanstd(s.astype(np.float64), axis=-1) for s in series])
    return top, np.where(std > 0, std, np.nan)  # a constant series normalises to 0 whatever its rounding


def _worst(steps: np.ndarray) -> list[float]:
    """The coarsest step per channel over series ((N, C) -> C), 0 where none is known."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return [float(v) for v in np.nan_to_num(np.nanmax(steps, axis=0), nan=0.0)]


def series_steps(series: list[np.ndarray], diffs: list[np.ndarray] | None, norm: str, std: list[float],
                 diff_std: list[float]) -> list[float]:
    """Per token channel (the C channels, then the C channels' first differences where ``diffs`` are given): the
    coarsest step, in the spread it is normalised by, to which float32 rounds the training series (``series``,
    (C, L) each; ``diffs`` their first differences; ``std``, ``diff_std`` the channels' global spreads)."""
    top, own = _per_series(series)
    if norm == "series":
        steps = float32_steps(top, own)
    elif norm == "global":
        steps = float32_steps(top, np.asarray(std)[None, :])
    else:  # not normalised: fpt's tokens are the float32 values the graph takes
        steps = np.zeros_like(top)
    out = _worst(steps)
    if diffs is not None:  # taken in the graph of the rounded values: their step against the difference's spread
        spread = _per_series(diffs)[1] if norm == "series" else np.asarray(diff_std)[None, :]
        out += _worst(float32_steps(top, spread))
    return out


__all__ = ["FLOAT32_RESOLUTION", "float32_steps", "series_steps"]

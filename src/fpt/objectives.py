"""What a task's outputs are judged by: the loss, the metrics, which one selects, and predictions.

Training (``fpt.train``) asks the task's objective for everything that depends on it, so a new
objective is one class here:

- ``Classification`` (the paper's tasks, the default): cross-entropy over every prediction;
  the metric is accuracy, which selects. Logits (B, k * m, C), labels (B, k * m) class indices.
- ``Regression``: mean squared error on targets standardised with the training set's mean and
  standard deviation (``mean``, ``scale``, one per target); metrics: R² (mean over targets,
  selects), MAE and MSE in the targets' own units. Outputs (B, m, 1), targets (B, m) floats.

``tally`` returns additive sums for a batch, so metrics over a whole set are exact whatever
the batch sizes; ``summarise`` turns summed tallies into metrics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from fpt.errors import DataError

Tensor = torch.Tensor


@dataclass(frozen=True)
class Classification:
    name: str = field(default="classification", init=False)
    metric: str = field(default="accuracy", init=False)  # selects the checkpoint, reaches the target
    reported: tuple[str, ...] = field(default=("accuracy",), init=False)  # summary keys: val_<m>, test_<m>, ...
    # --data targets of different class counts (several target columns): each output's own count. The head has the
    # largest count's slots for every output; a slot an output has no class for is never its answer (``masked``), as
    # the predictions written (fpt.predictor) never give it. Empty: every output has every slot (the paper's tasks).
    sizes: tuple[int, ...] = ()

    def loss(self, out: Tensor, y: Tensor) -> Tensor:
        return F.cross_entropy(out.reshape(-1, out.shape[-1]).float(), y.reshape(-1))

    def masked(self, out: Tensor) -> Tensor:
        """``out`` (B, P, C) with the slots an output has no class for at -inf (output p has ``sizes[p % m]``)."""
        classes = out.shape[-1]
        if not self.sizes or all(s >= classes for s in self.sizes):
            return out
        shape = out.shape
        out = out.reshape(shape[0], -1, classes)
        sizes = torch.tensor(self.sizes, device=out.device).repeat(out.shape[1] // len(self.sizes))  # (P,)
        missing = torch.arange(classes, device=out.device)[None, :] >= sizes[:, None]  # (P, C)
        return out.masked_fill(missing, float("-inf")).reshape(shape)

    def tally(self, out: Tensor, y: Tensor) -> np.ndarray:
        out = self.masked(out.reshape(len(y), -1, out.shape[-1]))
        correct = int((out.reshape(-1, out.shape[-1]).argmax(-1) == y.reshape(-1)).sum())
        return np.array([correct, y.numel()], dtype=np.float64)

    def summarise(self, sums: np.ndarray) -> dict[str, float]:
        return {"accuracy": int(sums[0]) / int(sums[1])}

    def predict(self, out: Tensor) -> Tensor:
        return self.masked(out).argmax(-1)

    def to_json(self) -> dict[str, Any]:
        return {"objective": self.name}


CLASSIFICATION = Classification()


@dataclass(frozen=True)
class Regression:
    mean: tuple[float, ...]  # per target, of the training set
    scale: tuple[float, ...]  # per target (standard deviation; 1 where it is 0)
    name: str = field(default="regression", init=False)
    metric: str = field(default="r2", init=False)
    reported: tuple[str, ...] = field(default=("r2", "mae", "mse"), init=False)

    def loss(self, out: Tensor, y: Tensor) -> Tensor:
        return F.mse_loss(out.reshape(y.shape).float(), y.float())

    def tally(self, out: Tensor, y: Tensor) -> np.ndarray:
        """Per target (rows): squared error, absolute error, sum y, sum y², count; standardised units."""
        pred = out.reshape(y.shape).double()
        y = y.double()
        err = pred - y
        rows = [err.pow(2).sum(0), err.abs().sum(0), y.sum(0), y.pow(2).sum(0), torch.full_like(y[0], len(y))]
        return torch.stack(rows).cpu().numpy()  # (5, m)

    def summarise(self, sums: np.ndarray) -> dict[str, float]:
        sse, sae, sy, syy, n = sums
        total = syy - sy * sy / n  # per target, about the set's own mean
        r2 = np.where(total > 0, 1 - sse / np.maximum(total, 1e-12), 0.0)
        scale = np.asarray(self.scale)
        return {"r2": float(r2.mean()), "mae": float((sae / n * scale).mean()),
                "mse": float((sse / n * scale ** 2).mean())}

    def predict(self, out: Tensor) -> Tensor:
        """Predictions (B, m) in the targets' own units, float64 on the CPU: in float32 a target whose mean is large
        against its spread (a timestamp near 1.7e9, spread 100) would come back in steps of 128."""
        pred = out.reshape(out.shape[0], -1).detach().cpu().double()
        return pred * torch.tensor(self.scale, dtype=torch.float64) + torch.tensor(self.mean, dtype=torch.float64)

    def to_json(self) -> dict[str, Any]:
        return {"objective": self.name, "mean": list(self.mean), "scale": list(self.scale)}


Objective = Classification | Regression


def from_json(data: dict[str, Any]) -> Objective:
    if data.get("objective") == "regression":
        mean, scale = data.get("mean"), data.get("scale")
        if not isinstance(mean, list) or not isinstance(scale, list) or len(mean) != len(scale) or not mean or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in mean + scale):
            raise DataError(f"objective mean {str(mean)[:40]} / scale {str(scale)[:40]}: expected two lists of finite "
                             "numbers, one per target")
        # a scale of 0 (a tampered file) would make every prediction the mean; fitting writes 1 for it
        return Regression(tuple(map(float, mean)), tuple(float(v) if v > 0 else 1.0 for v in scale))
    if data.get("objective") not in (None, "classification"):
        raise DataError(f"objective {str(data.get('objective'))[:40]!r}: expected classification or regression")
    return CLASSIFICATION


__all__ = ["CLASSIFICATION", "Classification", "Objective", "Regression", "from_json"]

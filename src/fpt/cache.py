"""Frozen-feature caching: when only the output head trains, run the body once.

The body's features for every training and held-out example are computed a single time
(in eval mode: no dropout), and training then touches only the head: the paper's
Table 10 linear probe, whose epochs run orders of magnitude faster.
"""

from __future__ import annotations

import time
from dataclasses import replace

import torch
from torch import nn

from fpt.experiment import Experiment
from fpt.freeze import group_of_parameters
from fpt.model import FPT
from fpt.tasks.base import Batch, TensorSource


class CachedHead(nn.Module):
    """The FPT's own head applied to cached features (B, k, D); parameter names match FPT's."""

    def __init__(self, model: FPT) -> None:
        super().__init__()
        self.head = model.head
        self.num_classes = model.spec.num_classes

    def forward(self, feats: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        out = self.head(feats)  # (B, k, m * C)
        return out.view(out.shape[0], -1, self.num_classes)  # (B, k * m, C)


def cache_eligible(exp: Experiment) -> tuple[bool, str]:
    groups = group_of_parameters(exp.model)
    trained = {groups[n] for n, p in exp.model.named_parameters() if p.requires_grad}
    if trained != {"output"}:
        return False, f"groups below the head train ({', '.join(sorted(trained - {'output'}))})"
    if not isinstance(exp.data.train, TensorSource):
        return False, "the training stream is generated afresh for every batch"
    if exp.data.train.transform is not None and getattr(exp.data.train.transform, "random", True):
        return False, "training inputs are randomly transformed (augmentation)"
    return True, ""


@torch.inference_mode()
def features(exp: Experiment, data: Batch, transform=None) -> Batch:
    model = exp.model.eval()
    size = exp.config.eval_batch_size
    parts = []
    for start in range(0, len(data), size):
        part = data.slice(start, start + size)
        if transform is not None:  # a deterministic tokeniser of stored inputs (uint8 images)
            part = Batch(transform(part.x, None), part.y, part.lengths)
        part = part.to(exp.device)
        parts.append(model.features(part.x, part.lengths).cpu())  # (b, k, D)
    return Batch(torch.cat(parts), data.y, None)


def cached_view(exp: Experiment) -> tuple[Experiment, float]:
    """An experiment that trains the same head on cached features; and the caching time (s)."""
    start = time.perf_counter()
    train = exp.data.train
    cached_train = TensorSource(features(exp, train.data, train.transform), train.seed)
    evals = {name: features(exp, batch) for name, batch in exp.data.eval_sets.items()}
    data = replace(exp.data, train=cached_train, eval_sets=evals)
    view = replace(exp, model=CachedHead(exp.model).to(exp.device), data=data, _compiled=None)
    return view, time.perf_counter() - start

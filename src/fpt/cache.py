"""Frozen-prefix caching: run the frozen part of the body once, train the rest on its output.

When no parameter below block j trains and the inputs are fixed (a finite training set, no
random augmentation), the hidden states entering block j are the same at every epoch: they
are computed a single time for every training and held-out example, and training runs only
blocks j.. and the head on them.

- Nothing in the body trains (only the output head: the paper's Table 10 linear probe): the
  features the head reads, (N, k, D), are cached; epochs run orders of magnitude faster. With
  readout flatten they are (N, 1, T * D), as large as a prefix, and held to the same limit.
- The first trained parameter is in block j > 0 (e.g. ``--freeze output,attention@-1``): the
  hidden states entering block j, (N, T, D), are cached, within ``PREFIX_CACHE_MAX_BYTES``.
  The prefix is computed without dropout, so this path is taken only when ``dropout=0``
  (then it is exact: the same steps as the uncached run).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import torch

from fpt.freeze import BLOCK_PARAM
from fpt.inference import batched_outputs
from fpt.model import FEATURES
from fpt.pipeline import Experiment
from fpt.tasks.base import Batch, TensorSource

PREFIX_CACHE_MAX_BYTES = 4 * 2**30  # cached (N, T, D) hidden states beyond this are not worth the memory


@dataclass(frozen=True)
class CachePlan:
    """What can be cached: ``start`` is the first block that must run (None: cannot cache)."""

    start: int | None
    why_not: str = ""


def plan_cache(exp: Experiment) -> CachePlan:
    """The first block that must run during training, or why nothing can be cached."""
    model = exp.model
    first = model.layers
    for name, p in model.named_parameters():
        if not p.requires_grad or name.startswith("head."):
            continue
        block = BLOCK_PARAM.match(name)
        if block is None:
            return CachePlan(None, f"parameters outside the blocks and the head train ({name})")
        first = min(first, int(block[1]))
    if not isinstance(exp.data.train, TensorSource):
        return CachePlan(None, "the training stream is generated afresh for every batch")
    if exp.data.train.transform is not None and getattr(exp.data.train.transform, "random", True):
        return CachePlan(None, "training inputs are randomly transformed (augmentation)")
    if exp.config.padding == "ignore" and exp.config.trim_padding and exp.data.train.data.lengths is not None:
        return CachePlan(None, "padding=ignore reads the last position of each trimmed batch, which depends on how "
                               "batches are formed; set trim_padding=false to cache")
    if first == model.layers:
        # readout=flatten's features are every position's states: as large as a cached prefix, so as limited.
        too_big = _too_big(exp, "readout=flatten's features") if model.readout == "flatten" else ""
        return CachePlan(None, too_big) if too_big else CachePlan(FEATURES)
    if first == 0:
        return CachePlan(None, "block 0 trains, so no frozen prefix precedes it")
    if exp.config.dropout > 0:
        return CachePlan(None, f"dropout={exp.config.dropout} in the frozen blocks would be lost by caching them; "
                               "set dropout=0 to cache the frozen prefix")
    if getattr(model.body, "variant", None) == "official":
        return CachePlan(None, "the official LSTM cell draws random initial states at every forward pass, "
                               "which caching its blocks would fix once")
    too_big = _too_big(exp, "the prefix's hidden states")
    return CachePlan(None, too_big) if too_big else CachePlan(first)


def _too_big(exp: Experiment, what: str) -> str:
    """Why ``what``, (N, T, D) cached states of every example, would not be worth the memory; '' when they would."""
    model = exp.model
    examples = len(exp.data.train) + sum(len(b) for b in exp.data.eval_sets.values())
    size = examples * model.spec.seq_len * model.body.width * 4
    if size > PREFIX_CACHE_MAX_BYTES:
        return f"{what} would take {size / 2**30:.1f} GiB (more than {PREFIX_CACHE_MAX_BYTES / 2**30:.0f} GiB)"
    return ""


def cache_eligible(exp: Experiment) -> tuple[bool, str]:
    plan = plan_cache(exp)
    return plan.start is not None, plan.why_not


def _encode(exp: Experiment, data: Batch, start: int, transform=None) -> Batch:
    """Features (N, k, D) (flatten: (N, 1, T * D)) for ``start`` FEATURES, else the hidden states (N, T, D)
    entering block ``start``."""
    model = exp.model

    def encode(x: torch.Tensor, lengths: torch.Tensor | None) -> torch.Tensor:
        if start == FEATURES:
            return model.features(x, lengths)  # (b, k, D)
        return model.hidden(x, lengths, layers=start)  # (b, T, D)

    # A deterministic tokeniser of stored inputs (uint8 images) runs a batch at a time; the model in the precision
    # the uncached model computes in.
    x = batched_outputs(exp, data.x, data.lengths, call=encode,
                        transform=None if transform is None else (lambda xb: transform(xb, None)))
    return Batch(x, data.y, None if start == FEATURES else data.lengths)


def features(exp: Experiment, data: Batch, transform=None) -> Batch:
    """The features the head reads, (N, k, D), for every example of ``data``."""
    return _encode(exp, data, FEATURES, transform)


def cached_view(exp: Experiment) -> tuple[Experiment, float]:
    """The same experiment (the same model) fed cached inputs; and the caching time (s).

    Its data are the encoded examples and its ``input_start`` tells the model where they enter
    (FPT.forward's ``start``), so training, evaluation and checkpoints see one FPT throughout.
    """
    plan = plan_cache(exp)
    if plan.start is None:
        raise ValueError(f"nothing can be cached: {plan.why_not}")
    start = time.perf_counter()
    train = exp.data.train
    cached_train = TensorSource(_encode(exp, train.data, plan.start, train.transform), train.seed, bucket=train.bucket)
    evals = {name: _encode(exp, batch, plan.start) for name, batch in exp.data.eval_sets.items()}
    data = replace(exp.data, train=cached_train, eval_sets=evals)
    view = replace(exp, data=data, input_start=plan.start, _compiled=None)
    return view, time.perf_counter() - start

"""Batched inference, the one loop every reader of a model shares: evaluation (``fpt.train.evaluate``,
``predict``), prediction (``fpt.predictor.Predictor``), scikit-learn (``fpt.sklearn``), cached features
(``fpt.cache``) and attention maps (``fpt.analysis.attention``).

A model is run with dropout off, under ``torch.inference_mode`` and the run's precision (bf16 autocast
on CUDA by default: a bf16 run stores its frozen weights in bf16), ``batch_size`` examples at a time.
An ``Experiment`` runs through ``Experiment.forward`` (compiled when asked, fed from its ``input_start``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import torch

from fpt.pipeline import Experiment, autocast
from fpt.settings import RunConfig

Tensor = torch.Tensor


@contextlib.contextmanager
def inference(model: Experiment | torch.nn.Module, device: torch.device | None = None,
              precision: str | None = None) -> Iterator[None]:
    """Dropout off, ``torch.inference_mode`` and the precision's autocast (an Experiment's own by default)."""
    if isinstance(model, Experiment):
        cast = model.autocast
        model = model.model
    else:
        cast = autocast(precision or RunConfig.precision, device if device is not None else torch.device("cpu"))
    model.eval()
    with torch.inference_mode(), cast:
        yield


def _to(t: Tensor | None, device: torch.device) -> Tensor | None:
    """``t`` on ``device``; from pinned host memory on CUDA so that the copy overlaps with compute."""
    if t is None or device.type == "cpu" or t.device.type != "cpu":
        return t if t is None else t.to(device)
    return t.pin_memory().to(device, non_blocking=True)


def _forward(model: Experiment | torch.nn.Module) -> Callable[[Tensor, Tensor | None], Tensor]:
    if isinstance(model, Experiment):
        return model.forward
    return lambda x, lengths: model(x, lengths)


def length_order(lengths: Tensor | None, trim: bool) -> Tensor | None:
    """With padding trimmed: examples sorted by length (batches of similar lengths waste less padding)."""
    return torch.argsort(lengths) if trim and lengths is not None else None


def iter_outputs(model: Experiment | torch.nn.Module, x: Tensor, lengths: Tensor | None = None,
                 batch_size: int | None = None, device: torch.device | None = None, precision: str | None = None,
                 *, trim: bool = False, starts: Iterable[int] | None = None,
                 call: Callable[[Tensor, Tensor | None], Tensor] | None = None,
                 transform: Callable[[Tensor], Tensor] | None = None) -> Iterator[tuple[int, Tensor]]:
    """(start, outputs on the device) of each batch ``x[start:start + batch_size]``, in order.

    ``model``: an Experiment (its forward, precision, device and eval_batch_size by default) or a model
    run under ``precision`` on ``device``. ``trim``: drop the padding past a batch's longest example.
    ``starts``: the batches to run (default: all). ``call``: what to run instead of the forward (x, lengths).
    ``transform``: tokenises each batch of stored inputs (x) on the CPU before it moves to the device.
    """
    if isinstance(model, Experiment):
        device = device or model.device
        batch_size = batch_size or model.config.eval_batch_size
    if device is None or batch_size is None:
        raise ValueError("iter_outputs: a model needs a device and a batch size")
    call = call or _forward(model)
    for start in starts if starts is not None else range(0, len(x), batch_size):
        xb = x[start:start + batch_size]
        lb = None if lengths is None else lengths[start:start + batch_size]
        if transform is not None:
            xb = transform(xb)
        if trim and lb is not None and xb.shape[1]:
            xb = xb[:, : int(lb.max())]
        with inference(model, device, precision):
            out = call(_to(xb, device), _to(lb, device))
        yield start, out


@torch.inference_mode()
def batched_outputs(model: Experiment | torch.nn.Module, x: Tensor, lengths: Tensor | None = None,
                    batch_size: int | None = None, device: torch.device | None = None, precision: str | None = None,
                    *, trim: bool = False, progress: bool = False, desc: str = "predict", **kwargs: Any) -> Tensor:
    """Outputs (N, ...) as fp32 on the CPU for every example of ``x``, in the order given; see ``iter_outputs``.
    With ``trim``, examples run sorted by length (as ``fpt.train.evaluate`` runs them). ``progress``: a bar of the
    examples done on a terminal's stderr (tqdm; nothing when stderr is a file or a pipe), named ``desc``."""
    order = length_order(lengths, trim)
    if order is not None:
        x, lengths = x[order], lengths[order]
    from tqdm.auto import tqdm

    outs = []
    with tqdm(total=len(x), unit="ex", desc=desc, disable=None if progress else True, leave=False) as bar:
        for _, out in iter_outputs(model, x, lengths, batch_size, device, precision, trim=trim, **kwargs):
            outs.append(out.float().cpu())
            bar.update(len(out))
    logits = torch.cat(outs)
    return logits[torch.argsort(order)] if order is not None else logits


__all__ = ["batched_outputs", "inference", "iter_outputs", "length_order"]

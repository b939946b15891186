"""Dropout whose random mask is cheap on CPU.

On CPU ``torch.bernoulli_`` (behind ``nn.Dropout``, ``F.dropout`` and the dropout of
``scaled_dot_product_attention``) draws one Mersenne-Twister number per element on one thread:
at MiniLM's shapes it was the largest single cost of a bf16 training step (bench/step_time.py,
docs/results/performance.md). Here one 64-bit draw feeds four elements: 15 uniform bits each,
compared with ``round(p * 2**15)``. The drop probability is that threshold over 2**15 (0.1 ->
0.100006) and the kept values are scaled by its complement, so the expectation is exact. The
draws come from torch's default generator, so ``torch.manual_seed`` makes masks repeatable.

Other devices keep torch's own kernels (CUDA's are fast, and fused attention supports dropout
there). ``set_fast(False)`` restores torch's dropout on CPU too (bit-for-bit the older runs' masks).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from fpt.bodies.swap import replace_modules

Tensor = torch.Tensor

FAST = True
BITS = 15  # random_() on int64 leaves the top bit 0: the low 15 bits of each 16-bit lane are uniform
LEVELS = 1 << BITS


def set_fast(enabled: bool) -> None:
    global FAST
    FAST = enabled


def active(x: Tensor, p: float, training: bool) -> bool:
    """Whether ``dropout(x, p, training)`` takes the cheap path (CPU, 0 < p < 1, training)."""
    return FAST and training and 0.0 < p < 1.0 and x.device.type == "cpu"


def keep_mask(shape: torch.Size | tuple[int, ...], p: float, device: torch.device | str = "cpu") -> Tensor:
    """Boolean mask of ``shape``, True (kept) with probability ``1 - round(p * 2**15) / 2**15``."""
    n = 1
    for s in shape:
        n *= int(s)
    words = torch.empty((n + 3) // 4, dtype=torch.int64, device=device).random_()
    lanes = words.view(torch.int16)[:n].bitwise_and(LEVELS - 1)
    return lanes.ge(round(p * LEVELS)).view(shape)


def dropout(x: Tensor, p: float, training: bool = True) -> Tensor:
    """``F.dropout(x, p, training)`` with a cheap mask on CPU."""
    if not active(x, p, training):
        return F.dropout(x, p, training)
    kept = 1.0 - round(p * LEVELS) / LEVELS
    return x * keep_mask(x.shape, p, x.device).to(x.dtype).mul_(1.0 / kept)


class Dropout(nn.Dropout):
    """``nn.Dropout`` through :func:`dropout`."""

    def forward(self, x: Tensor) -> Tensor:
        return dropout(x, self.p, self.training)


def use_fast_dropout(module: nn.Module) -> None:
    """Replace every plain ``nn.Dropout`` inside ``module`` (Hugging Face's included) with :class:`Dropout`."""
    replace_modules(module, lambda child: Dropout(child.p, child.inplace) if type(child) is nn.Dropout else None)

"""Multi-head attention on already-projected q, k, v, shared by every transformer body.

Dimension legend: B batch, T tokens, H heads, E head width, D = H * E model width.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from fpt.bodies import dropout

Tensor = torch.Tensor


# Fused scaled-dot-product attention is the default; the explicit softmax path exists so
# benchmarks can measure what fusing buys (bench/throughput.py --eager-attention), and it is the
# training path on CPU: there fused attention with dropout falls back to the same softmax path with
# torch's slow per-element mask (fpt.bodies.dropout), and without dropout its bf16 CPU backward was
# 2.3x slower than the explicit path's (fp32: within 2%; bench/step_time.py, docs/results/performance.md).
FUSED = True
TRAIN_EXPLICIT_ON_CPU = True


def set_fused(enabled: bool) -> None:
    global FUSED
    FUSED = enabled


def set_train_explicit_on_cpu(enabled: bool) -> None:
    global TRAIN_EXPLICIT_ON_CPU
    TRAIN_EXPLICIT_ON_CPU = enabled


def uses_fused(q: Tensor, dropout_p: float) -> bool:
    """Whether :func:`sdpa` takes the fused kernel for these queries."""
    if not FUSED or dropout.active(q, dropout_p, True):
        return False
    training = torch.is_grad_enabled() and q.requires_grad
    return not (TRAIN_EXPLICIT_ON_CPU and training and q.device.type == "cpu" and q.dtype != torch.float32)


def sdpa(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, dropout_p: float, is_causal: bool = False,
         scale: float | None = None) -> Tensor:
    """Attention on (B, H, T, E) tensors; ``mask`` is boolean (True = may attend) or an additive float bias."""
    if uses_fused(q, dropout_p):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, is_causal=is_causal,
                                              scale=scale)
    scores = q @ k.transpose(-1, -2) * (scale if scale is not None else 1 / math.sqrt(q.shape[-1]))  # (B, H, Tq, Tk)
    if is_causal:
        mask = torch.ones(q.shape[2], k.shape[2], dtype=torch.bool, device=q.device).tril()
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else scores + mask
    return dropout.dropout(scores.softmax(-1), dropout_p) @ v


def split_heads(x: Tensor, heads: int) -> Tensor:
    B, T, D = x.shape
    return x.view(B, T, heads, D // heads).transpose(1, 2)  # (B, H, T, E)


def merge_heads(x: Tensor) -> Tensor:
    B, H, T, E = x.shape
    return x.transpose(1, 2).reshape(B, T, H * E)  # (B, T, D)


def _mask(pad_mask: Tensor | None, causal: bool, T: int, device: torch.device) -> Tensor | None:
    """Boolean mask (B or 1, 1, T, T), True where a query may attend to a key."""
    mask = None
    if causal:
        mask = torch.ones(T, T, dtype=torch.bool, device=device).tril()[None, None]
    if pad_mask is not None:
        keys = pad_mask[:, None, None, :]  # (B, 1, 1, T)
        mask = keys if mask is None else mask & keys
    return mask


def attend(q: Tensor, k: Tensor, v: Tensor, *, heads: int, causal: bool,
           pad_mask: Tensor | None, dropout_p: float) -> Tensor:
    """Fused scaled-dot-product attention; q, k, v are (B, T, D), result (B, T, D)."""
    q, k, v = (split_heads(t, heads) for t in (q, k, v))  # (B, H, T, E)
    if causal and pad_mask is None:
        out = sdpa(q, k, v, None, dropout_p, is_causal=True)
    else:
        mask = _mask(pad_mask, causal, q.shape[2], q.device)
        out = sdpa(q, k, v, mask, dropout_p)
    return merge_heads(out)


def probabilities(q: Tensor, k: Tensor, *, heads: int, causal: bool, pad_mask: Tensor | None) -> Tensor:
    """The attention matrix itself (B, H, T, T), for analysis; not on the training path."""
    q, k = split_heads(q, heads), split_heads(k, heads)
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])  # (B, H, T, T)
    mask = _mask(pad_mask, causal, q.shape[2], q.device)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return scores.softmax(dim=-1)


def row_mask(rows: Tensor, T: int, causal: bool, pad_mask: Tensor | None) -> Tensor | None:
    """Boolean mask (B, 1, k, T) for queries at positions ``rows`` (B, k) over all T keys."""
    mask = None
    if causal:
        mask = (torch.arange(T, device=rows.device)[None, None, :] <= rows[:, :, None])[:, None]  # (B, 1, k, T)
    if pad_mask is not None:
        keys = pad_mask[:, None, None, :]  # (B, 1, 1, T)
        mask = keys if mask is None else mask & keys
    return mask


def attend_rows(q: Tensor, k: Tensor, v: Tensor, rows: Tensor, *, heads: int, causal: bool,
                pad_mask: Tensor | None, dropout_p: float) -> Tensor:
    """Attention for only the queries at ``rows``: q (B, k, D) against k, v (B, T, D) -> (B, k, D)."""
    mask = row_mask(rows, k.shape[1], causal, pad_mask)
    q, k, v = (split_heads(t, heads) for t in (q, k, v))  # (B, H, *, E)
    return merge_heads(sdpa(q, k, v, mask, dropout_p))


def gather_rows(h: Tensor, rows: Tensor) -> Tensor:
    """h (B, T, D) at positions rows (B, k) -> (B, k, D)."""
    return h.gather(1, rows[..., None].expand(-1, -1, h.shape[-1]))

"""Longformer bodies: RoBERTa-like post-norm blocks with sliding-window attention (Table 17).

Longformer's attention lets token i see key j only when |i - j| <= w/2, where w is the
layer's ``attention_window`` (512 for longformer-base, so windows only bite on tasks longer
than 257 tokens), plus "global" tokens that see and are seen by everything. We use no
global tokens: the window is applied exactly, as a band mask over dense fused attention.
That gives Longformer's outputs (tested against Hugging Face's chunked implementation) but
not its memory saving, which needs sequences far longer than the paper's tasks.

The ``query_global`` / ``key_global`` / ``value_global`` projections only serve global tokens,
so they are never used; they sit in the "attention" group (frozen by every paper policy)
so that every parameter still has exactly one group.

Everything else is the BERT/RoBERTa body: learned absolute positions, which start after
the padding index (pad_token_id + 1 = 2), trimmed to the task's length, and a LayerNorm
over the embeddings.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from fpt.bodies import attention
from fpt.bodies.base import BODIES, FAMILIES, BodySpec
from fpt.bodies.bert import BertBody
from fpt.bodies.hub import load_model
from fpt.errors import ConfigError

Tensor = torch.Tensor

LONGFORMER_HUB = "allenai/longformer-base-4096"
# allenai/longformer-base-4096's config: RoBERTa-base with 4096 (+2 offset) positions and a 512 window.
LONGFORMER_BASE = {
    "num_hidden_layers": 12, "hidden_size": 768, "num_attention_heads": 12, "intermediate_size": 3072,
    "attention_window": 512, "max_position_embeddings": 4098, "type_vocab_size": 1, "vocab_size": 50265,
    "layer_norm_eps": 1e-5, "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2, "sep_token_id": 2,
}


def band_mask(queries: Tensor, T: int, one_sided: int, pad_mask: Tensor | None) -> Tensor:
    """Boolean mask (1 or B, 1, k, T): query at position ``queries`` may see key j.

    ``queries`` is (k,) for positions shared by the batch, or (B, k). Key j is visible when
    |i - j| <= one_sided and j is a real token. A padded query also keeps itself: with its
    whole window padded its row would be empty, and an all-masked row gives NaN, which
    would reach real tokens in the next block through zero attention weights (0 * NaN).
    """
    keys = torch.arange(T, device=queries.device)
    rows = queries if queries.dim() == 2 else queries[None]  # (1 or B, k)
    offset = keys[None, None, :] - rows[:, :, None]  # (1 or B, k, T)
    mask = offset.abs() <= one_sided
    if pad_mask is not None:
        mask = mask & (pad_mask[:, None, :] | (offset == 0))  # (B, k, T)
    return mask[:, None]  # (1 or B, 1, k, T)


@FAMILIES.register("longformer")
class LongformerBody(BertBody):
    position_offset = 2  # RoBERTa's: position ids start at padding_idx + 1
    groups = {
        **BertBody.groups,
        "attention": r"^blocks\.\d+\.attention\.(self\.(query|key|value)(_global)?|output\.dense)\.",
    }

    def __init__(self, hf_model: nn.Module, spec: BodySpec) -> None:
        pad = hf_model.config.pad_token_id
        if pad + 1 != self.position_offset:
            raise ConfigError(f"body {spec.name!r}: its position ids start at pad_token_id + 1 = {pad + 1}, but fpt's "
                              "Longformer body needs pad_token_id 1 (as allenai/longformer-base-4096); choose such a checkpoint")
        super().__init__(hf_model, spec)

    def _window(self, index: int) -> int:
        # Read from the block itself, so a body cut to its first layers keeps the right windows.
        return self.blocks[index].attention.self.one_sided_attn_window_size

    def _attend(self, q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> Tensor:
        q, k, v = (attention.split_heads(t, self.heads) for t in (q, k, v))  # (B, H, *, E)
        out = attention.sdpa(q, k, v, mask, self.dropout if self.training else 0.0)
        return attention.merge_heads(out)  # (B, *, D)

    def _attend_all(self, index: int, q: Tensor, k: Tensor, v: Tensor, pad_mask: Tensor | None) -> Tensor:
        T = q.shape[1]
        return self._attend(q, k, v, band_mask(torch.arange(T, device=q.device), T, self._window(index), pad_mask))

    def _attend_rows(self, index: int, q: Tensor, k: Tensor, v: Tensor, rows: Tensor,
                     pad_mask: Tensor | None) -> Tensor:
        return self._attend(q, k, v, band_mask(rows, k.shape[1], self._window(index), pad_mask))  # mask (B, 1, k, T)

    def attention_weights(self, index: int, h: Tensor, pad_mask: Tensor | None) -> Tensor:
        q, k, _ = self._qkv(index, h)
        q, k = attention.split_heads(q, self.heads), attention.split_heads(k, self.heads)  # (B, H, T, E)
        T = h.shape[1]
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])  # (B, H, T, T)
        mask = band_mask(torch.arange(T, device=h.device), T, self._window(index), pad_mask)
        return scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)


def longformer_config():
    from transformers import LongformerConfig

    return LongformerConfig(**LONGFORMER_BASE)


@BODIES.register("longformer-base")
def build_longformer_base(spec: BodySpec) -> LongformerBody:
    config = longformer_config() if spec.init == "random" else None
    return LongformerBody(load_model(LONGFORMER_HUB, spec.init, spec.seed, config), spec)

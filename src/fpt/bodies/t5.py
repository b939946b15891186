"""T5 encoder bodies: bidirectional, pre-norm blocks with relative position biases (Table 17).

Only the encoder stack is used (``T5EncoderModel``); the decoder and the token embeddings
are never loaded for the named bodies. What makes T5 differ from the other families:

- No absolute positions. Position enters each block as a learned scalar bias per head and
  per bucket of relative distance, added to the attention scores; one table (num_buckets,
  H), stored in the first block, is shared by all blocks. We move that table out of block 0
  into ``positions``: it is the body's only positional parameter and forms the
  "positions" group. It is not a (T, D) table as the Body protocol's comment says, and it
  is not trimmed: every bucket is kept (32 x H values in all), since which buckets a task
  reaches depends on distances, not on a row count.
- No 1/sqrt(E) scaling of the scores: T5 folds it into the initialisation of the query
  weights, so attention runs with scale=1.
- RMS-style layer norms (a weight, no bias, no mean subtraction) and a ReLU (or gated
  GELU) feed-forward without biases; dropout after the final norm, as in Hugging Face.

``t5-small`` and ``t5-base`` load pretrained weights from the hub, or build offline from
their known hyperparameters with ``--init random``.
"""

from __future__ import annotations

import functools

import torch
from torch import nn

from fpt.bodies import attention
from fpt.bodies.base import BODIES, FAMILIES, BodySpec, set_dropout
from fpt.bodies.hub import load_model

Tensor = torch.Tensor

# name -> (layers, d_model, heads, d_kv, d_ff), from the released configs (ReLU feed-forward).
T5_SIZES = {
    "t5-small": (6, 512, 8, 64, 2048),
    "t5-base": (12, 768, 12, 64, 3072),
}


@functools.lru_cache(maxsize=16)
def relative_buckets(length: int, num_buckets: int, max_distance: int, device: torch.device) -> Tensor:
    """Bucket (T, T) of key j's distance from query i, bidirectional, as the T5 encoder buckets it."""
    from transformers.models.t5.modeling_t5 import T5Attention

    pos = torch.arange(length, device=device)
    return T5Attention._relative_position_bucket(pos[None, :] - pos[:, None], bidirectional=True,
                                                 num_buckets=num_buckets, max_distance=max_distance)


def _attend_biased(q: Tensor, k: Tensor, v: Tensor, bias: Tensor, heads: int, dropout_p: float) -> Tensor:
    """Unscaled attention (T5 folds the scale into its init) with an additive bias (B or 1, H, Tq, Tk)."""
    q, k, v = (attention.split_heads(t, heads) for t in (q, k, v))  # (B, H, *, E)
    return attention.merge_heads(attention.sdpa(q, k, v, bias.to(q.dtype), dropout_p, scale=1.0))  # (B, Tq, HE)


@FAMILIES.register("t5")
class T5Body(nn.Module):
    causal = False
    groups = {
        "positions": r"^positions$",
        "layernorm": r"^(blocks\.\d+\.layer\.[01]\.layer_norm|final_layer_norm)\.",
        "attention": r"^blocks\.\d+\.layer\.0\.SelfAttention\.",
        "feedforward": r"^blocks\.\d+\.layer\.1\.DenseReluDense\.",
    }

    def __init__(self, hf_model: nn.Module, spec: BodySpec) -> None:
        super().__init__()
        # T5EncoderModel (named bodies) or T5Model (AutoModel, for a local directory): the same encoder stack.
        stack = hf_model.encoder
        config = stack.config
        self.width = config.d_model
        self.heads = config.num_heads
        self.num_buckets = config.relative_attention_num_buckets
        self.max_distance = config.relative_attention_max_distance
        self.dropout = spec.dropout
        first = stack.block[0].layer[0].SelfAttention
        self.positions = nn.Parameter(first.relative_attention_bias.weight.detach().clone())  # (num_buckets, H)
        # The table now lives here only, so it is one parameter in one group, and dropping
        # blocks (``layers=``) cannot drop it.
        del first.relative_attention_bias
        first.has_relative_attention_bias = False
        self.drop = nn.Dropout(spec.dropout)
        self.blocks = stack.block
        self.final_layer_norm = stack.final_layer_norm
        set_dropout(self, spec.dropout)

    def embed(self, h: Tensor) -> Tensor:
        return self.drop(h)  # (B, T, D): positions enter every block as attention biases instead

    def _bias(self, queries: Tensor | None, T: int, pad_mask: Tensor | None, device: torch.device) -> Tensor:
        """Additive attention bias: relative positions plus -inf on padded keys.

        (1 or B, H, T, T) for all queries, or (B, H, k, T) for the queries at ``queries`` (B, k).
        """
        buckets = relative_buckets(T, self.num_buckets, self.max_distance, device)  # (T, T)
        if queries is None:
            bias = self.positions.T[:, buckets][None]  # (1, H, T, T)
        else:
            bias = self.positions[buckets[queries]].permute(0, 3, 1, 2)  # (B, H, k, T)
        if pad_mask is not None:
            keys = torch.zeros(pad_mask.shape, dtype=bias.dtype, device=device).masked_fill(~pad_mask, float("-inf"))
            bias = bias + keys[:, None, None, :]  # (B, H, *, T)
        return bias

    def block(self, index: int, h: Tensor, pad_mask: Tensor | None) -> Tensor:
        attn_layer, ff_layer = self.blocks[index].layer
        sa = attn_layer.SelfAttention
        x = attn_layer.layer_norm(h)
        a = _attend_biased(sa.q(x), sa.k(x), sa.v(x), self._bias(None, h.shape[1], pad_mask, h.device),
                           self.heads, self.dropout if self.training else 0.0)
        h = h + attn_layer.dropout(sa.o(a))  # (B, T, D)
        return ff_layer(h)  # h + dropout(DenseReluDense(layer_norm(h)))

    def block_rows(self, index: int, h: Tensor, pad_mask: Tensor | None, rows: Tensor) -> Tensor:
        """Block ``index`` computed only for the tokens at ``rows`` (B, k): (B, k, D)."""
        attn_layer, ff_layer = self.blocks[index].layer
        sa = attn_layer.SelfAttention
        x = attn_layer.layer_norm(h)  # (B, T, D)
        q = sa.q(attention.gather_rows(x, rows))  # (B, k, HE)
        a = _attend_biased(q, sa.k(x), sa.v(x), self._bias(rows, h.shape[1], pad_mask, h.device),
                           self.heads, self.dropout if self.training else 0.0)
        out = attention.gather_rows(h, rows) + attn_layer.dropout(sa.o(a))  # (B, k, D)
        return ff_layer(out)

    def final_norm(self, h: Tensor) -> Tensor:
        return self.drop(self.final_layer_norm(h))

    def attention_weights(self, index: int, h: Tensor, pad_mask: Tensor | None) -> Tensor:
        attn_layer = self.blocks[index].layer[0]
        sa = attn_layer.SelfAttention
        x = attn_layer.layer_norm(h)
        q, k = attention.split_heads(sa.q(x), self.heads), attention.split_heads(sa.k(x), self.heads)  # (B, H, T, E)
        scores = q @ k.transpose(-1, -2) + self._bias(None, h.shape[1], pad_mask, h.device)  # (B, H, T, T), unscaled
        return scores.softmax(dim=-1)


def t5_config(name: str):
    from transformers import T5Config

    layers, width, heads, d_kv, d_ff = T5_SIZES[name]
    return T5Config(num_layers=layers, d_model=width, num_heads=heads, d_kv=d_kv, d_ff=d_ff,
                    feed_forward_proj="relu", relative_attention_num_buckets=32, vocab_size=32128)


def load_encoder(source: str, init: str, seed: int, config=None) -> nn.Module:
    """A ``T5EncoderModel``: AutoModel would build a ``T5Model``, decoder included."""
    from transformers import T5EncoderModel

    return load_model(source, init, seed, config, model_class=T5EncoderModel)


@BODIES.register(*T5_SIZES)
def build_t5(spec: BodySpec) -> T5Body:
    config = t5_config(spec.name) if spec.init == "random" else None
    return T5Body(load_encoder(spec.name, spec.init, spec.seed, config), spec)

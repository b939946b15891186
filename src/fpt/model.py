"""The Frozen Pretrained Transformer: input layer -> frozen body -> output head.

Dimension legend:
    B  batch            T  tokens per example (the task's sequence length)
    d  token dimension  V  vocabulary size (discrete tokens)
    D  body width       k  output tokens read by the head
    m  predictions per output token   C  classes per prediction
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from fpt.bodies import Body

Tensor = torch.Tensor


@dataclass(frozen=True)
class InputSpec:
    """The shape of a task as the model sees it."""

    seq_len: int  # T
    num_classes: int  # C
    token_dim: int | None = None  # d, for continuous tokens (a linear input layer)
    vocab_size: int | None = None  # V, for discrete tokens (an embedding table)
    num_outputs: int = 1  # k: the head reads the last k real tokens
    per_token: int = 1  # m: predictions made from each of those tokens

    def __post_init__(self) -> None:
        if (self.token_dim is None) == (self.vocab_size is None):
            raise ValueError("InputSpec needs exactly one of token_dim (continuous) or vocab_size (discrete)")
        if not 1 <= self.num_outputs <= self.seq_len:
            raise ValueError(f"num_outputs={self.num_outputs} must be in 1..seq_len={self.seq_len}")


def input_layer(spec: InputSpec, width: int) -> nn.Module:
    if spec.vocab_size is not None:
        layer = nn.Embedding(spec.vocab_size, width)
        nn.init.normal_(layer.weight, std=0.02)
        return layer
    layer = nn.Linear(spec.token_dim, width)
    # Orthogonal init keeps the input's geometry, which matters most when this layer is frozen.
    nn.init.orthogonal_(layer.weight, gain=math.sqrt(2))
    nn.init.zeros_(layer.bias)
    return layer


class FPT(nn.Module):
    def __init__(self, body: Body, spec: InputSpec, layers: int | None = None) -> None:
        super().__init__()
        if layers is not None and not 1 <= layers <= len(body.blocks):
            raise ValueError(f"layers={layers} must be in 1..{len(body.blocks)} for this body")
        self.spec = spec
        self.input = input_layer(spec, body.width)
        self.body = body
        self.layers = layers if layers is not None else len(body.blocks)
        self.head = nn.Linear(body.width, spec.per_token * spec.num_classes)

    def pad_mask(self, x: Tensor, lengths: Tensor | None) -> Tensor | None:
        if lengths is None:
            return None
        return torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]  # (B, T)

    def hidden(self, x: Tensor, lengths: Tensor | None = None) -> Tensor:
        """Final hidden states (B, T, D) for tokens x: (B, T, d) floats or (B, T) ids."""
        mask = self.pad_mask(x, lengths)
        h = self.body.embed(self.input(x))  # (B, T, D)
        for i in range(self.layers):
            h = self.body.block(i, h, mask)  # (B, T, D)
        return self.body.final_norm(h)

    def read(self, h: Tensor, lengths: Tensor | None) -> Tensor:
        """The hidden states of the last k real tokens (B, k, D); padding is never read."""
        k = self.spec.num_outputs
        if lengths is None:
            return h[:, -k:]
        idx = lengths[:, None] - k + torch.arange(k, device=h.device)[None, :]  # (B, k)
        return h.gather(1, idx[..., None].expand(-1, -1, h.shape[-1]))

    def forward(self, x: Tensor, lengths: Tensor | None = None) -> Tensor:
        """Logits (B, k * m, C)."""
        out = self.head(self.read(self.hidden(x, lengths), lengths))  # (B, k, m * C)
        B = out.shape[0]
        return out.view(B, -1, self.spec.num_classes)  # (B, k * m, C)

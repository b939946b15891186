"""What a frozen body is, and how one is looked up by name.

A body maps input embeddings (B, T, D) to hidden states (B, T, D). It exposes its
blocks in order so callers can run only the first X, cache a frozen prefix, or read
attention; its parameter groups are declared as data (regexes over its own
parameter names) so freeze policies never guess from names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import torch
from torch import nn

from fpt.bodies.dropout import use_fast_dropout
from fpt.errors import BodyUnavailableError, ConfigError  # noqa: F401  (re-exported: raised here)
from fpt.registry import Registry
from fpt.settings import RunConfig

Tensor = torch.Tensor


@runtime_checkable
class Body(Protocol):
    """The frozen part of an FPT. Implementations are ``nn.Module`` subclasses."""

    width: int
    blocks: nn.ModuleList
    # (T, D): only the rows the task uses; None without learned positions (LSTMs); for T5 its
    # relative attention bias table (num_buckets, H), shared by every block.
    positions: nn.Parameter | None
    groups: dict[str, str]  # group name -> regex over the body's parameter names
    causal: bool

    def embed(self, h: Tensor) -> Tensor:
        """Add positions (and any family-specific embedding norm) to input embeddings."""

    def block(self, index: int, h: Tensor, pad_mask: Tensor | None) -> Tensor:
        """Run block ``index``; ``pad_mask`` (B, T) is True on real tokens."""

    def final_norm(self, h: Tensor) -> Tensor:
        """The norm after the last block (identity for post-norm families)."""

    # Optional: ``block_rows(index, h, pad_mask, rows) -> (B, k, D)`` computes a block for the
    # tokens at ``rows`` (B, k) only; FPT uses it for the last block when the body has it.

    def attention_weights(self, index: int, h: Tensor, pad_mask: Tensor | None) -> Tensor:
        """Attention probabilities (B, H, T, T) of block ``index`` for its input ``h``."""


@dataclass(frozen=True)
class BodySpec:
    """How to build a body: which weights, how initialised, for how many positions."""

    name: str
    init: str = RunConfig.init  # pretrained | random
    seq_len: int = 64
    dropout: float = RunConfig.dropout
    seed: int = RunConfig.seed
    vit_positions: str = RunConfig.vit_positions  # ViT only: resized (pretrained table fitted to seq_len) | official
    lstm_variant: str = RunConfig.lstm_variant  # LSTM only: fpt (nn.LSTM + LayerNorm) | official (the official LNLSTM)


# Families turn a loaded Hugging Face model into a Body: model_type -> builder.
FAMILIES: Registry = Registry("body family")
# Named bodies resolve a short name to weights/config: name -> resolver.
BODIES: Registry = Registry("body")


class TooManyPositions(ConfigError):
    """A task's examples make more tokens than the body has learned positions (``needed``, ``available``): the
    pipeline names the data's own fix for a --data run (fpt.data.modalities' ``fewer_tokens``)."""

    def __init__(self, needed: int, available: int, body: str) -> None:
        self.needed, self.available, self.body = needed, available, body
        super().__init__(f"the task needs {needed} positions but body {body!r} has only {available} learned "
                         "positions; shorten the task's sequences (e.g. task.max_len=...) or choose a body with more "
                         "positions")


def trimmed_positions(table: Tensor, seq_len: int, body_name: str) -> nn.Parameter:
    """Keep only the first ``seq_len`` rows of a learned position table.

    The paper counts (and trains) l x width position parameters, so the unused rows are
    dropped rather than frozen.
    """
    if seq_len > table.shape[0]:
        raise TooManyPositions(seq_len, table.shape[0], body_name)
    return nn.Parameter(table[:seq_len].detach().clone())


def set_dropout(module: nn.Module, p: float) -> None:
    """Every dropout inside ``module`` at rate ``p``, through fpt's CPU-cheap dropout."""
    use_fast_dropout(module)
    for sub in module.modules():
        if isinstance(sub, nn.Dropout):
            sub.p = p

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
from torch.nn import functional as F

from fpt.bodies import Body
from fpt.bodies.dropout import Dropout
from fpt.errors import ConfigError, SchemaError
from fpt.settings import READOUTS, RunConfig

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
            raise ConfigError("InputSpec needs exactly one of token_dim (continuous) or vocab_size (discrete)")
        for name in ("seq_len", "num_classes", "token_dim", "vocab_size", "num_outputs", "per_token"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ConfigError(f"InputSpec {name}={value!r} must be an integer >= 1")
        if not 1 <= self.num_outputs <= self.seq_len:
            raise ConfigError(f"num_outputs={self.num_outputs} must be in 1..seq_len={self.seq_len}")


INPUT_INITS = ("gpt2", "official")
OFFICIAL_ORTH_GAIN = 1.41  # the official code's orth_gain (scripts/run.py), a rounded sqrt(2)


def input_layer(spec: InputSpec, width: int, init: str = "gpt2") -> nn.Module:
    """The trainable input layer: an embedding table for discrete tokens, else a linear layer.

    ``init``: ``gpt2`` draws the table N(0, 0.02) (GPT-2's own embedding init) and the linear
    layer orthogonal with gain sqrt(2); ``official`` keeps nn.Embedding's default N(0, 1) and
    uses gain 1.41, as the official FPT code does. Biases start at 0 either way.
    """
    if init not in INPUT_INITS:
        raise ConfigError(f"input init {init!r} is not one of {', '.join(INPUT_INITS)}")
    if spec.vocab_size is not None:
        layer = nn.Embedding(spec.vocab_size, width)  # PyTorch's default init: N(0, 1), the official code's
        if init == "gpt2":
            nn.init.normal_(layer.weight, std=0.02)
        return layer
    layer = nn.Linear(spec.token_dim, width)
    # Orthogonal init keeps the input's geometry, which matters most when this layer is frozen.
    nn.init.orthogonal_(layer.weight, gain=math.sqrt(2) if init == "gpt2" else OFFICIAL_ORTH_GAIN)
    nn.init.zeros_(layer.bias)
    return layer


PADDING = ("mask", "ignore")
FEATURES = -1  # FPT.forward's ``start`` for inputs that are already the head's features (B, k, D)


class FPT(nn.Module):
    # The run's fields default as a RunConfig built without resolve() does (the paper's). input_dropout is a rate:
    # the run's input_dropout (a bool) gives it the body's dropout rate (fpt.pipeline.build_model).
    def __init__(self, body: Body, spec: InputSpec, last_block_rows: bool = RunConfig.last_block_rows,
                 input_init: str = RunConfig.input_init, input_dropout: float = 0.0, padding: str = RunConfig.padding,
                 readout: str = RunConfig.readout) -> None:
        super().__init__()
        if padding not in PADDING:
            raise ConfigError(f"padding {padding!r} is not one of {', '.join(PADDING)}")
        if readout not in READOUTS:
            raise ConfigError(f"readout {readout!r} is not one of {', '.join(READOUTS)}")
        if readout == "mean" and spec.num_outputs != 1:
            raise ConfigError(f"readout=mean pools every token into one output, but this task reads "
                              f"{spec.num_outputs} output tokens; use readout=last")
        if readout == "flatten" and spec.num_outputs != 1:
            raise ConfigError(f"readout=flatten reads every token into one output, but this task reads "
                              f"{spec.num_outputs} output tokens; use readout=last")
        self.spec = spec
        self.input = input_layer(spec, body.width, input_init)
        # The official code's input network ends in a dropout after a linear layer (none after an
        # embedding table); it has no parameters, so checkpoints are the same with or without it.
        self.input_drop = Dropout(input_dropout) if input_dropout > 0 and spec.token_dim is not None else None
        # "ignore": the official code's handling of padded batches (no attention mask, read the last position).
        self.padding = padding
        self.body = body
        self.layers = len(body.blocks)  # every block runs (``config.layers`` keeps the first X: fpt.pipeline.build_model)
        # "last": the head reads the last k real tokens (the paper's); "mean": the mean of every real
        # token's final state (B, 1, D), as bodies pretrained with mean pooling (MiniLM) were read;
        # "flatten": every position's final state side by side (B, 1, T * D), GPT4TS's classification
        # head, which keeps the per-position detail that pooling and the last token lose.
        self.readout = readout
        reads = body.width * (spec.seq_len if readout == "flatten" else 1)
        self.head = nn.Linear(reads, spec.per_token * spec.num_classes)
        # The head reads k tokens, so the last block need only compute those (when the body can).
        self.last_block_rows = last_block_rows and hasattr(body, "block_rows") and readout == "last"

    def embed(self, x: Tensor) -> Tensor:
        """Input layer (and its dropout, if any), then the body's positions: (B, T, D)."""
        h = self.input(x)  # (B, T, D)
        if self.input_drop is not None:
            h = self.input_drop(h)
        return self.body.embed(h)

    def pad_mask(self, x: Tensor, lengths: Tensor | None) -> Tensor | None:
        if lengths is None or self.padding == "ignore":
            return None
        return torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]  # (B, T)

    def output_rows(self, x: Tensor, lengths: Tensor | None) -> Tensor:
        """Positions (B, k) of the last k real tokens: the ones the head reads; never padding.

        With ``padding="ignore"`` (the official code) they are the batch's last k positions instead.
        """
        k, T = self.spec.num_outputs, x.shape[1]
        if lengths is None or self.padding == "ignore":  # ignore: the batch's last k positions, padding or not
            last = torch.full((x.shape[0],), T, device=x.device)
        else:
            last = lengths
        return last[:, None] - k + torch.arange(k, device=x.device)[None, :]  # (B, k)

    def hidden(self, x: Tensor, lengths: Tensor | None = None, layers: int | None = None) -> Tensor:
        """Hidden states (B, T, D) after the first ``layers`` blocks (default all, then the final norm)."""
        mask = self.pad_mask(x, lengths)
        h = self.embed(x)  # (B, T, D)
        for i in range(self.layers if layers is None else layers):
            h = self.body.block(i, h, mask)  # (B, T, D)
        return self.body.final_norm(h) if layers is None else h

    def read(self, h: Tensor, lengths: Tensor | None) -> Tensor:
        """The hidden states of the last k real tokens (B, k, D)."""
        rows = self.output_rows(h, lengths)
        return h.gather(1, rows[..., None].expand(-1, -1, h.shape[-1]))

    def features(self, x: Tensor, lengths: Tensor | None = None) -> Tensor:
        """What the head sees: final hidden states of the last k real tokens (B, k, D); with readout
        mean their mean (B, 1, D); with readout flatten every position's, zeros past each length (B, 1, T * D)."""
        return self.features_from(self.embed(x), lengths, start=0)

    def features_from(self, h: Tensor, lengths: Tensor | None, start: int) -> Tensor:
        """``features`` from the hidden states (B, T, D) entering block ``start`` (a cached frozen prefix)."""
        mask = self.pad_mask(h, lengths)
        full = self.layers if not self.last_block_rows else self.layers - 1
        for i in range(start, full):
            h = self.body.block(i, h, mask)  # (B, T, D)
        if self.readout == "mean":
            h = self.body.final_norm(h)  # (B, T, D)
            if mask is None:
                return h.mean(1, keepdim=True)  # (B, 1, D)
            w = mask[..., None].to(h.dtype)  # (B, T, 1)
            return (h * w).sum(1, keepdim=True) / w.sum(1, keepdim=True)  # (B, 1, D)
        if self.readout == "flatten":
            return self.flatten(self.body.final_norm(h), mask)
        if not self.last_block_rows:
            return self.read(self.body.final_norm(h), lengths)
        h = self.body.block_rows(self.layers - 1, h, mask, self.output_rows(h, lengths))  # (B, k, D)
        return self.body.final_norm(h)

    def flatten(self, h: Tensor, mask: Tensor | None) -> Tensor:
        """Final states (B, T', D), T' <= T, as one row of T * D per example: readout flatten's features (B, 1, T * D)."""
        T = self.spec.seq_len
        if h.shape[1] > T:
            raise SchemaError(f"readout=flatten has head weights for seq_len={T} positions, but an example has "
                              f"{h.shape[1]} tokens; give at most {T}")
        if mask is not None:
            # masked_fill, not a product: whatever a padded position holds (even inf) must not reach the head.
            h = h.masked_fill(~mask[..., None], 0.0)
        # A trimmed batch (or shorter inputs) is zero-filled to T, so every position keeps its own head weights.
        h = F.pad(h, (0, 0, 0, T - h.shape[1]))  # (B, T, D)
        return h.reshape(h.shape[0], 1, -1)  # (B, 1, T * D)

    def forward(self, x: Tensor, lengths: Tensor | None = None, start: int = 0) -> Tensor:
        """Logits (B, k * m, C).

        ``start`` says where ``x`` enters the model: 0, tokens (B, T, d) or ids (B, T); j >= 1, the
        hidden states (B, T, D) entering block j (a cached frozen prefix); ``FEATURES``, the
        features the head reads (B, k, D), or (B, 1, T * D) with readout flatten (a cached linear
        probe). See fpt.cache.
        """
        if start == FEATURES:
            feats = x  # (B, k, D)
        elif start == 0:
            feats = self.features(x, lengths)  # (B, k, D)
        else:
            feats = self.features_from(x, lengths, start)  # (B, k, D)
        out = self.head(feats)  # (B, k, m * C)
        return out.view(out.shape[0], -1, self.spec.num_classes)  # (B, k * m, C)

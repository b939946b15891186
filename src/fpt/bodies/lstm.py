"""Layer-normalised LSTM bodies: the frozen random LSTMs of the paper's Tables 3-5.

Each block is one single-layer ``nn.LSTM`` (width in, width out) followed by a LayerNorm;
``h = norm(lstm(h))``, or ``h = h + norm(lstm(h))`` with residual connections. Keeping
"LSTM then LayerNorm" identical in every variant means the residual ablation changes one
thing only (the skip connection) and every variant has the same parameter set, apart from
the optional learned positions.

The released FPT code (``universal_computation/models/lstm.py``, LNLSTM) differs: it
normalises inside the cell (Ba et al. 2016), which needs a Python loop over time steps
instead of cuDNN, and it draws fresh random initial states on every forward pass, so
evaluation is not deterministic. The default (``lstm_variant="fpt"``) keeps zero initial
states and the normalisation after a cuDNN LSTM. ``lstm_variant="official"``
(``BodySpec.lstm_variant``) builds the official cell instead, written from its description
(``OfficialLSTMBlock``):

- per step, ``pre = LN(W_i x_t) + LN(W_h h_{t-1})``; gates i, f, o = sigmoid of the first
  three quarters, g = tanh of the last; ``c_t = LN(f c_{t-1} + i g)`` (the normalised cell
  is the carried state); ``h_t = dropout(o tanh(c_t))`` (the dropped-out output is also the
  recurrent state);
- its layer norm uses the unbiased variance with eps 1e-6 inside the square root, and
  draws both gain and shift uniformly in +-1/sqrt(n) (not 1 and 0);
- every weight and bias of W_i, W_h uniform in +-1/sqrt(width);
- initial h and c drawn N(0, sqrt(2 / (2 * width))) from the global random stream at
  every forward pass;
- no LayerNorm after the block, no other dropout inside the body; with residual
  connections ``h = h + block(h)``; the positional variant adds a zero-initialised
  1024-row table (the official code's commented-out ``lstm_pos_embed``).

Only the cell's layer-norm gains and shifts train under ``--freeze paper``, as in the
official code (its freeze rule trains parameters named ``ln``).

Names: ``lstm-3``, ``lstm-12``, ``lstm-12-residual`` and ``lstm-12-residual-positional``,
all 768 wide (GPT-2's width, as in the paper), and the same four with ``-w384`` appended,
384 wide: MiniLM's width, which the quick scale pairs with MiniLM as the paper paired
768 with GPT-2 (and which costs a 2-core CPU a quarter of the work). There are no
pretrained weights, so only ``--init random`` (or ``checkpoint:PATH`` from ``fpt
pretrain``) builds them.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from fpt.bodies.base import BODIES, BodySpec, set_dropout, trimmed_positions
from fpt.bodies.dropout import dropout as fast_dropout
from fpt.errors import BodyUnavailableError, ConfigError, option

Tensor = torch.Tensor

# name -> (layers, residual, positional)
LSTM_VARIANTS = {
    "lstm-3": (3, False, False),
    "lstm-12": (12, False, False),
    "lstm-12-residual": (12, True, False),
    "lstm-12-residual-positional": (12, True, True),
}
LSTM_WIDTH = 768
# Suffix -> width of the narrower variants (the width of the transformer they stand beside).
WIDTH_SUFFIXES = {"-w384": 384}
# Position rows are drawn from a table at least this long and then trimmed, so a task's
# first T rows are the same whatever its length (as with a transformer's learned table).
POSITION_TABLE_ROWS = 1024


class LSTMBlock(nn.Module):
    """One LSTM layer and the LayerNorm after it: (B, T, D) -> (B, T, D)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.lstm = nn.LSTM(width, width, num_layers=1, batch_first=True)
        self.norm = nn.LayerNorm(width)

    def forward(self, h: Tensor) -> Tensor:
        # No initial state given: nn.LSTM starts from zeros, so outputs are deterministic.
        out, _ = self.lstm(h)  # (B, T, D)
        return self.norm(out)  # (B, T, D)


LSTM_CELLS = ("fpt", "official")
OFFICIAL_LN_EPS = 1e-6  # the official LNLSTM's LayerNorm epsilon


class CellNorm(nn.Module):
    """The official LNLSTM's layer norm over the last dim: unbiased variance, eps inside the root,
    gain and shift both drawn U(-1/sqrt(n), 1/sqrt(n))."""

    def __init__(self, n: int) -> None:
        super().__init__()
        bound = 1 / math.sqrt(n)
        self.weight = nn.Parameter(torch.empty(n).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.empty(n).uniform_(-bound, bound))

    def forward(self, x: Tensor) -> Tensor:
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True)  # unbiased, as torch.var's default
        return self.weight * (x - mean) / torch.sqrt(var + OFFICIAL_LN_EPS) + self.bias


class OfficialLSTMBlock(nn.Module):
    """One layer of the official code's LNLSTM (unidirectional): (B, T, D) -> (B, T, D)."""

    def __init__(self, width: int, dropout: float) -> None:
        super().__init__()
        self.width = width
        self.dropout = dropout
        self.i2h = nn.Linear(width, 4 * width)
        self.h2h = nn.Linear(width, 4 * width)
        bound = 1 / math.sqrt(width)
        for p in (*self.i2h.parameters(), *self.h2h.parameters()):
            nn.init.uniform_(p, -bound, bound)
        self.ln_i2h = CellNorm(4 * width)
        self.ln_h2h = CellNorm(4 * width)
        self.ln_cell = CellNorm(width)

    def initial_state(self, h: Tensor) -> tuple[Tensor, Tensor]:
        # Fresh every call, from the global random stream (Xavier-style std over input + hidden).
        std = math.sqrt(2.0 / (2 * self.width))
        shape = (h.shape[0], self.width)
        return (torch.randn(shape, device=h.device, dtype=h.dtype) * std,
                torch.randn(shape, device=h.device, dtype=h.dtype) * std)

    def forward(self, h: Tensor) -> Tensor:
        D = self.width
        hx, cx = self.initial_state(h)  # (B, D) each
        # The input projection and its norm act on each step separately, so all steps at once.
        xi = self.ln_i2h(self.i2h(h))  # (B, T, 4D)
        outs = []
        for t in range(h.shape[1]):
            pre = xi[:, t] + self.ln_h2h(self.h2h(hx))  # (B, 4D)
            gates = pre[:, : 3 * D].sigmoid()
            i, f, o = gates[:, :D], gates[:, D: 2 * D], gates[:, 2 * D:]
            g = pre[:, 3 * D:].tanh()
            cx = self.ln_cell(f * cx + i * g)  # the normalised cell is the state carried on
            hx = fast_dropout(o * cx.tanh(), self.dropout, self.training)  # output and recurrent state
            outs.append(hx)
        return torch.stack(outs, dim=1)  # (B, T, D)


class LSTMBody(nn.Module):
    """A stack of ``LSTMBlock``s behind the same interface as the transformer bodies.

    ``positions`` is a (T, D) parameter only for positional variants and None otherwise
    (an LSTM knows order without them; the ``Body`` protocol's type says ``nn.Parameter``).
    """

    causal = True  # unidirectional: position t sees only positions <= t
    groups = {
        "positions": r"^positions$",
        "layernorm": r"^blocks\.\d+\.(norm|ln_i2h|ln_h2h|ln_cell)\.",
        "recurrent": r"^blocks\.\d+\.(lstm|i2h|h2h)\.",
    }

    def __init__(self, spec: BodySpec, layers: int, width: int, residual: bool, positional: bool) -> None:
        super().__init__()
        if spec.lstm_variant not in LSTM_CELLS:
            raise ConfigError(f"lstm_variant {spec.lstm_variant!r} is not one of {', '.join(LSTM_CELLS)}")
        self.width = width
        self.residual = residual
        self.dropout = spec.dropout
        self.variant = spec.lstm_variant
        official = self.variant == "official"
        block = (lambda: OfficialLSTMBlock(width, spec.dropout)) if official else (lambda: LSTMBlock(width))
        self.blocks = nn.ModuleList(block() for _ in range(layers))
        if positional and official:
            # The official code's (commented-out) lstm_pos_embed: zeros(1, 1024, width), kept whole.
            self.positions = nn.Parameter(torch.zeros(max(POSITION_TABLE_ROWS, spec.seq_len), width))
        elif positional:
            table = torch.randn(max(POSITION_TABLE_ROWS, spec.seq_len), width) * 0.02
            self.positions = trimmed_positions(table, spec.seq_len, spec.name)
        else:
            self.register_parameter("positions", None)
        # The official body has no dropout of its own outside the cell.
        self.drop = nn.Dropout(0.0 if official else spec.dropout)
        if not official:
            set_dropout(self, spec.dropout)

    def embed(self, h: Tensor) -> Tensor:
        if self.positions is not None:
            h = h + self.positions[: h.shape[1]]  # (B, T, D)
        return self.drop(h)

    def block(self, index: int, h: Tensor, pad_mask: Tensor | None) -> Tensor:
        # Padding is on the right and the LSTM runs left to right, so a real token's state
        # never depends on padding: pad_mask is not needed (and packing would be slower).
        out = self.drop(self.blocks[index](h))  # (B, T, D)
        return h + out if self.residual else out

    def final_norm(self, h: Tensor) -> Tensor:
        # Every block already ends in a LayerNorm (or normalises its cell, official); a final
        # one would add parameters the paper's LSTM does not have.
        return h

    def attention_weights(self, index: int, h: Tensor, pad_mask: Tensor | None) -> Tensor:
        raise NotImplementedError(
            "LSTM bodies have no attention, so there are no attention weights to show; "
            f"use a transformer body (e.g. {option('body', 'gpt2')}) for attention maps"
        )


def build_lstm(spec: BodySpec, layers: int, width: int = LSTM_WIDTH, residual: bool = False,
               positional: bool = False) -> LSTMBody:
    """A random LSTM body; the same ``spec.seed`` always gives the same weights."""
    if spec.init == "pretrained":
        raise BodyUnavailableError(
            f"LSTM bodies have no pretrained weights; use {option('init', 'random')} (body {spec.name!r})"
        )
    if spec.init != "random":
        raise ConfigError(f"LSTM body {spec.name!r}: unknown init {spec.init!r}; use {option('init', 'random')}")
    # Forking keeps the caller's random stream untouched; devices=[] leaves CUDA alone.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(spec.seed)
        return LSTMBody(spec, layers, width, residual, positional)


def _variant(name: str) -> tuple[int, bool, bool, int]:
    """(layers, residual, positional, width) of a registered LSTM name."""
    for suffix, width in WIDTH_SUFFIXES.items():
        if name.endswith(suffix):
            return (*LSTM_VARIANTS[name[: -len(suffix)]], width)
    return (*LSTM_VARIANTS[name], LSTM_WIDTH)


@BODIES.register(*LSTM_VARIANTS, *(name + suffix for name in LSTM_VARIANTS for suffix in WIDTH_SUFFIXES))
def build_named_lstm(spec: BodySpec) -> LSTMBody:
    layers, residual, positional, width = _variant(spec.name)
    return build_lstm(spec, layers, width, residual, positional)

"""Layer-normalised LSTM bodies: the frozen random LSTMs of the paper's Tables 3-5.

Each block is one single-layer ``nn.LSTM`` (width in, width out) followed by a LayerNorm;
``h = norm(lstm(h))``, or ``h = h + norm(lstm(h))`` with residual connections. Keeping
"LSTM then LayerNorm" identical in every variant means the residual ablation changes one
thing only (the skip connection) and every variant has the same parameter set, apart from
the optional learned positions.

The released FPT code (``universal_computation/models/lstm.py``, LNLSTM) differs, and
we chose not to copy it: it normalises inside the cell (pre-activations and cell state,
Ba et al. 2016), which needs a Python loop over time steps instead of cuDNN, and it
draws fresh random initial states on every forward pass, so evaluation is not
deterministic. Here initial states are zeros and the normalisation sits after the LSTM.

Names: ``lstm-3``, ``lstm-12``, ``lstm-12-residual`` and ``lstm-12-residual-positional``,
all 768 wide (GPT-2's width, as in the paper), and the same four with ``-w384`` appended,
384 wide: MiniLM's width, which the quick scale pairs with MiniLM as the paper paired
768 with GPT-2 (and which costs a 2-core CPU a quarter of the work). There are no
pretrained weights, so only ``--init random`` (or ``checkpoint:PATH`` from ``fpt
pretrain``) builds them.
"""

from __future__ import annotations

import torch
from torch import nn

from fpt.bodies.base import BODIES, BodySpec, BodyUnavailableError, set_dropout, trimmed_positions

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


class LSTMBody(nn.Module):
    """A stack of ``LSTMBlock``s behind the same interface as the transformer bodies.

    ``positions`` is a (T, D) parameter only for positional variants and None otherwise
    (an LSTM knows order without them; the ``Body`` protocol's type says ``nn.Parameter``).
    """

    causal = True  # unidirectional: position t sees only positions <= t
    groups = {
        "positions": r"^positions$",
        "layernorm": r"^blocks\.\d+\.norm\.",
        "recurrent": r"^blocks\.\d+\.lstm\.",
    }

    def __init__(self, spec: BodySpec, layers: int, width: int, residual: bool, positional: bool) -> None:
        super().__init__()
        self.width = width
        self.residual = residual
        self.dropout = spec.dropout
        self.blocks = nn.ModuleList(LSTMBlock(width) for _ in range(layers))
        if positional:
            table = torch.randn(max(POSITION_TABLE_ROWS, spec.seq_len), width) * 0.02
            self.positions = trimmed_positions(table, spec.seq_len, spec.name)
        else:
            self.register_parameter("positions", None)
        self.drop = nn.Dropout(spec.dropout)
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
        # Every block already ends in a LayerNorm; a final one would add parameters the
        # paper's LSTM does not have.
        return h

    def attention_weights(self, index: int, h: Tensor, pad_mask: Tensor | None) -> Tensor:
        raise NotImplementedError(
            "LSTM bodies have no attention, so there are no attention weights to show; "
            "use a transformer body (e.g. --body gpt2) for attention maps"
        )


def build_lstm(spec: BodySpec, layers: int, width: int = LSTM_WIDTH, residual: bool = False,
               positional: bool = False) -> LSTMBody:
    """A random LSTM body; the same ``spec.seed`` always gives the same weights."""
    if spec.init == "pretrained":
        raise BodyUnavailableError(
            f"LSTM bodies have no pretrained weights; use --init random (body {spec.name!r})"
        )
    if spec.init != "random":
        raise ValueError(f"LSTM body {spec.name!r}: unknown init {spec.init!r}; use --init random")
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

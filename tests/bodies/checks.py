"""Checks every body adapter's tests share: the last block read for a few rows only agrees with the full block."""

from __future__ import annotations

import torch

from fpt.bodies import Body
from fpt.model import FPT, InputSpec


def assert_block_rows_agree(body: Body, layer: int, h: torch.Tensor, mask: torch.Tensor, rows: torch.Tensor) -> None:
    """``block_rows`` (the rows the output head reads) equals those rows of the full ``block``."""
    full = body.block(layer, h, mask)
    torch.testing.assert_close(body.block_rows(layer, h, mask, rows),
                               full.gather(1, rows[..., None].expand(-1, -1, full.shape[-1])))


def assert_fpt_last_block_rows_agree(body: Body, lengths: list[int], token_dim: int = 5) -> None:
    """FPT's output with ``last_block_rows`` (the last block computed for the read rows only) equals its output
    with the whole last block, on sequences of ``lengths`` (the longest is the input's length)."""
    seq_len = max(lengths)
    model = FPT(body, InputSpec(seq_len=seq_len, num_classes=3, token_dim=token_dim, num_outputs=2))
    x, n = torch.randn(len(lengths), seq_len, token_dim), torch.tensor(lengths)
    model.last_block_rows = False
    whole = model(x, n)
    model.last_block_rows = True
    torch.testing.assert_close(model(x, n), whole)

"""Small pure functions that turn raw data into tokens."""

from __future__ import annotations

import numpy as np


def chunk_tokens(bits: np.ndarray, token_dim: int) -> np.ndarray:
    """(B, L) values -> (B, L / token_dim, token_dim) tokens, in order."""
    B, L = bits.shape
    if L % token_dim:
        raise ValueError(f"sequence length {L} is not a multiple of the token dimension {token_dim}")
    return bits.reshape(B, L // token_dim, token_dim)

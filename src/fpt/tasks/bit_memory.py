"""Bit Memory: recall which of 5 stored bitstrings a half-masked query came from.

Input: 5 random strings of 1000 bits in {-1, +1}, then a 6th: one of them with each bit
set to 0 with probability 0.5; chunked into 50-bit tokens (120 tokens). Output: the
original string, 50 bits from each of the last 20 tokens. Copying the visible bits
alone scores about 75% per bit.

Recalling a token from its own visible bits alone has a ceiling below 100% when tokens are short:
another stored string can agree with a query token's few visible bits by chance, and only the
other tokens of the query tell the strings apart. ``per_token_ceiling`` is that ceiling, exactly
(100% at the paper's 50-bit tokens; 97.05% at the quick scale's 10-bit tokens, so a model must
combine evidence across tokens to pass it).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np
import torch

from fpt.errors import ConfigError
from fpt.model import InputSpec
from fpt.settings import TaskDefaults
from fpt.tasks.base import EVAL_STREAM, TASKS, VAL_STREAM, Batch, DataSource, GeneratedSource, TaskData
from fpt.transforms import chunk_tokens


@dataclass(frozen=True)
class BitMemoryOptions:
    n_strings: int = 5
    n_bits: int = 1000
    token_dim: int = 50
    mask_prob: float = 0.5
    eval_size: int = 500

    def __post_init__(self) -> None:
        if self.n_bits % self.token_dim:
            raise ConfigError(f"bit-memory: n_bits={self.n_bits} must be a multiple of token_dim={self.token_dim}")
        if self.n_strings < 1 or not 0 <= self.mask_prob < 1 or self.eval_size < 1:
            raise ConfigError("bit-memory: need n_strings >= 1, 0 <= mask_prob < 1, eval_size >= 1")


def sample_bit_memory(rng: np.random.Generator, size: int, o: BitMemoryOptions) -> Batch:
    strings = rng.choice(np.array([-1.0, 1.0], dtype=np.float32), size=(size, o.n_strings, o.n_bits))
    chosen = strings[np.arange(size), rng.integers(o.n_strings, size=size)]  # (B, n_bits)
    query = np.where(rng.random((size, o.n_bits)) < o.mask_prob, np.float32(0), chosen)
    seq = np.concatenate([strings.reshape(size, -1), query], axis=1)  # (B, (n+1) * n_bits)
    x = chunk_tokens(seq, o.token_dim)  # (B, T, token_dim)
    y = (chosen > 0).astype(np.int64)  # (B, n_bits): bit b of output token t is t * token_dim + b
    return Batch(torch.from_numpy(x), torch.from_numpy(y))


def per_token_ceiling(o: BitMemoryOptions) -> float:
    """Per-bit accuracy of the best recall that reads each query token alone: every stored token
    at the same position that agrees with the visible bits is a candidate, and each masked bit
    takes the majority vote of the candidates (ties half right), which is Bayes-optimal given that
    token only. Exact: a token with v visible bits has k ~ Binomial(n_strings - 1, 2**-v) other
    candidates besides the true one, whose masked bits are fair coins."""
    d, others, keep = o.token_dim, o.n_strings - 1, 1 - o.mask_prob
    wrong = 0.0
    for v in range(d + 1):
        p_v = comb(d, v) * keep**v * o.mask_prob ** (d - v)
        q = 0.5**v
        for k in range(others + 1):
            p_k = comb(others, k) * q**k * (1 - q) ** (others - k)
            # votes for the true bit: 1 + A of the k + 1 candidates, A ~ Binomial(k, 1/2)
            miss = sum(comb(k, a) * 0.5**k * (1.0 if 2 * a + 1 < k else 0.5 if 2 * a + 1 == k else 0.0)
                       for a in range(k + 1))
            wrong += p_v * p_k * miss * (d - v) / d
    return 1 - wrong


@TASKS.register("bit-memory")
class BitMemory:
    Options = BitMemoryOptions
    defaults = TaskDefaults(target=0.99)

    def build(self, o: BitMemoryOptions, seed: int, source: DataSource) -> TaskData:
        def sample(rng: np.random.Generator, size: int) -> Batch:
            return sample_bit_memory(rng, size, o)

        spec = InputSpec(
            seq_len=(o.n_strings + 1) * o.n_bits // o.token_dim, num_classes=2, token_dim=o.token_dim,
            num_outputs=o.n_bits // o.token_dim, per_token=o.token_dim,
        )
        # Validation and test are independent draws, each of eval_size examples, never seen in training.
        val = sample(np.random.default_rng([seed, VAL_STREAM]), o.eval_size)
        test = sample(np.random.default_rng([seed, EVAL_STREAM]), o.eval_size)
        return TaskData(spec, GeneratedSource(sample, seed), {"val": val, "test": test},
                        info={"metric": "per-bit accuracy", "copy_visible_baseline": 1 - o.mask_prob / 2,
                              "per_token_ceiling": round(per_token_ceiling(o), 6)})

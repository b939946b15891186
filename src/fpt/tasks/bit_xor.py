"""Bit XOR: the bitwise XOR of two random bitstrings, one bit per token.

Input: 2 strings of n bits (values 0/1), 2n tokens of dimension 1. Output: the n XOR
bits, one from each of the last n tokens. Chance is 50% per bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from fpt.errors import ConfigError
from fpt.model import InputSpec
from fpt.settings import TaskDefaults
from fpt.tasks.base import EVAL_STREAM, TASKS, VAL_STREAM, Batch, DataSource, GeneratedSource, TaskData


@dataclass(frozen=True)
class BitXorOptions:
    n_bits: int = 5
    eval_size: int = 1000

    def __post_init__(self) -> None:
        if self.n_bits < 1 or self.eval_size < 1:
            raise ConfigError("bit-xor: n_bits and eval_size must be >= 1")


def sample_bit_xor(rng: np.random.Generator, size: int, n_bits: int) -> Batch:
    bits = rng.integers(0, 2, size=(size, 2 * n_bits))
    y = np.bitwise_xor(bits[:, :n_bits], bits[:, n_bits:])  # (B, n)
    x = bits.astype(np.float32)[..., None]  # (B, 2n, 1)
    return Batch(torch.from_numpy(x), torch.from_numpy(y.astype(np.int64)))


@TASKS.register("bit-xor")
class BitXor:
    Options = BitXorOptions
    defaults = TaskDefaults(target=1.0)  # every bit right

    def build(self, o: BitXorOptions, seed: int, source: DataSource) -> TaskData:
        def sample(rng: np.random.Generator, size: int) -> Batch:
            return sample_bit_xor(rng, size, o.n_bits)

        spec = InputSpec(seq_len=2 * o.n_bits, num_classes=2, token_dim=1, num_outputs=o.n_bits)
        # Validation and test are independent draws, each of eval_size examples, never seen in training.
        val = sample(np.random.default_rng([seed, VAL_STREAM]), o.eval_size)
        test = sample(np.random.default_rng([seed, EVAL_STREAM]), o.eval_size)
        return TaskData(spec, GeneratedSource(sample, seed), {"val": val, "test": test},
                        info={"metric": "per-bit accuracy", "chance": 0.5})

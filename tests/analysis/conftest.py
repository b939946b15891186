"""Tiny trained runs (a few steps on CPU) that the analysis tests read."""

from __future__ import annotations

from pathlib import Path

import pytest


def _fit(out: Path, **fields) -> Path:
    import fpt

    exp = fpt.build(init="random", batch_size=4, eval_every=3, steps=6, device="cpu", **fields)
    fpt.fit(exp, out=out, progress=False)
    return out


@pytest.fixture(scope="session")
def xor_run(tiny_gpt2_dir, tmp_path_factory) -> Path:
    """bit-xor on a causal 2-block, 4-head body."""
    return _fit(tmp_path_factory.mktemp("runs") / "xor", task="bit-xor", body=tiny_gpt2_dir,
                task_options={"eval_size": 32})


@pytest.fixture(scope="session")
def memory_run(tiny_bert_dir, tmp_path_factory) -> Path:
    """bit-memory (3 strings of 20 bits, 10-bit tokens: 8 tokens) on a bidirectional body."""
    return _fit(tmp_path_factory.mktemp("runs") / "memory", task="bit-memory", body=tiny_bert_dir,
                task_options={"n_strings": 3, "n_bits": 20, "token_dim": 10, "eval_size": 16})

"""One contract per registry: every registered body family, named body and task keeps the promises the
rest of fpt relies on. A new entry is checked here without a test of its own."""

from __future__ import annotations

import re

import pytest
import torch

from fpt.bodies import BODIES, FAMILIES, BodySpec, build_body
from fpt.errors import BodyUnavailableError, ConfigError, DataError
from fpt.tasks import TASKS
from fpt.tasks.base import DataSource, build_task

# The smallest config of each family's Hugging Face model type (random weights, no network).
TINY = {"num_hidden_layers": 2, "hidden_size": 32, "num_attention_heads": 4, "intermediate_size": 64,
        "max_position_embeddings": 64}
FAMILY_CONFIGS = {
    "gpt2": {"n_layer": 2, "n_embd": 32, "n_head": 4, "n_positions": 64, "vocab_size": 50},
    "bert": {**TINY, "vocab_size": 50},
    "roberta": {**TINY, "vocab_size": 50, "max_position_embeddings": 70, "pad_token_id": 1},
    "electra": {**TINY, "vocab_size": 50, "embedding_size": 32},
    "longformer": {**TINY, "vocab_size": 50, "attention_window": [4, 4], "max_position_embeddings": 70,
                   "pad_token_id": 1},
    "t5": {"num_layers": 2, "d_model": 32, "num_heads": 4, "d_kv": 8, "d_ff": 64, "vocab_size": 50},
    "vit": {**TINY, "image_size": 16, "patch_size": 4},
}


def test_every_family_has_a_tiny_config_here():
    assert sorted(FAMILY_CONFIGS) == sorted(FAMILIES.names())


@pytest.fixture(scope="module")
def family_dirs(tmp_path_factory) -> dict[str, str]:
    from transformers import AutoConfig, AutoModel

    out = {}
    for family, fields in FAMILY_CONFIGS.items():
        path = tmp_path_factory.mktemp(f"tiny-{family}")
        torch.manual_seed(0)
        AutoModel.from_config(AutoConfig.for_model(family, **fields)).save_pretrained(path)
        out[family] = str(path)
    return out


@pytest.mark.parametrize("family", sorted(FAMILY_CONFIGS))
def test_body_family_contract(family, family_dirs):
    """Embeds (B, T, D) tokens, runs each block to the same shape, owns every parameter in exactly one
    group (what freeze policies select), says whether it attends causally, and is seeded."""
    body = build_body(BodySpec(family_dirs[family], "random", seq_len=8, dropout=0.0, seed=3))
    twin = build_body(BodySpec(family_dirs[family], "random", seq_len=8, dropout=0.0, seed=3))
    assert isinstance(body.causal, bool) and len(body.blocks) >= 1
    d = body.width
    x = torch.randn(2, 8, d)
    with torch.no_grad():
        h = body.embed(x)
        for i in range(len(body.blocks)):
            h = body.block(i, h, None)
        h = body.final_norm(h)
    assert h.shape == (2, 8, d) and torch.isfinite(h).all()
    patterns = {g: re.compile(p) for g, p in body.groups.items()}
    for name, _ in body.named_parameters():
        assert len([g for g, p in patterns.items() if p.search(name)]) == 1, name
    assert {"positions", "layernorm", "attention", "feedforward"} <= set(body.groups)
    for (n, a), (_, b) in zip(body.named_parameters(), twin.named_parameters(), strict=True):
        assert torch.equal(a, b), n


SMALL_BODIES = [n for n in BODIES.names() if n == "minilm" or n == "no-lm" or n.startswith("lstm-3")]


@pytest.mark.parametrize("name", BODIES.names())
def test_named_body_contract(name):
    """Every named body resolves offline: the small ones build with random weights; the others (hub weights,
    large sizes) are not built here, but naming them never needs the network to fail or succeed quickly."""
    assert callable(BODIES.get(name))
    if name not in SMALL_BODIES:
        return
    try:
        body = build_body(BodySpec(name, "random", seq_len=8, dropout=0.0))
    except BodyUnavailableError as exc:  # allowed: a one-line reason, never a traceback of the hub client
        assert "\n" not in str(exc)
        return
    assert sum(p.numel() for p in body.parameters()) > 0


# The options that keep each task small; tasks whose files are not on this machine must say so in one line.
TASK_OPTIONS = {
    "bit-xor": {"eval_size": 32},
    "bit-memory": {"n_strings": 2, "n_bits": 20, "token_dim": 10, "eval_size": 16},
    "digits": {},
    "mnist-5k": {},
    "listops": {"generate": True, "n_train": 40, "generate_val": 20, "generate_test": 20, "max_len": 60,
                "generate_min_len": 10, "generate_max_len": 60, "generate_max_depth": 2},
}


@pytest.mark.parametrize("name", TASKS.names())
def test_task_contract(name, tmp_path):
    """A task gives an input spec, a training stream whose batches match it, and distinct validation and test
    sets of the same shape; or, without its files, a one-line DataError/ConfigError naming what to do."""
    try:
        data = build_task(name, TASK_OPTIONS.get(name, {}), seed=0, source=DataSource(tmp_path, False))
    except (DataError, ConfigError) as exc:
        assert name not in TASK_OPTIONS, f"{name} should build offline: {exc}"
        assert "\n" not in str(exc).strip() and str(exc)
        return
    spec = data.spec
    batch = data.train.batch(0, 4)
    assert len(batch) == 4 and batch.x.shape[1] <= spec.seq_len
    if batch.x.is_floating_point():
        assert batch.x.shape[-1] == spec.token_dim
    assert data.val in data.eval_sets and data.test in data.eval_sets and data.val != data.test
    for held_out in (data.eval_sets[data.val], data.eval_sets[data.test]):
        assert held_out.x.shape[1:] == data.eval_sets[data.val].x.shape[1:] and len(held_out) > 0
    assert data.objective is not None and isinstance(data.info, dict)

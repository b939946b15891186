"""The no-lm control body: one MiniLM-wide block, trained from scratch, under every freeze policy."""

from __future__ import annotations

import torch

from fpt.bodies import BODIES, Body, BodySpec, build_body
from fpt.bodies.one_layer import MINILM_BLOCK, NAME
from fpt.config import RunConfig
from fpt.freeze import count_parameters
from fpt.model import InputSpec
from fpt.pipeline import build_model


def test_registered_one_block_at_minilm_width():
    assert NAME == "no-lm" and NAME in BODIES.names()
    body = build_body(BodySpec(NAME, "random", seq_len=12, dropout=0.0, seed=0))
    assert isinstance(body, Body) and len(body.blocks) == 1 and body.width == MINILM_BLOCK["hidden_size"] == 384
    assert body.heads == 12 and body.positions.shape == (12, 384)
    assert not body.causal


def test_every_parameter_trains_whatever_the_policy():
    spec = InputSpec(seq_len=6, num_classes=3, token_dim=5)
    for policy in ("paper", "output"):
        model = build_model(RunConfig(body=NAME, freeze=policy, device="cpu"), spec)
        assert all(p.requires_grad for n, p in model.named_parameters() if n.startswith("body.")), policy
        counts = count_parameters(model)
        assert counts["attention"].trainable == counts["attention"].total > 0
        assert counts["feedforward"].trainable == counts["feedforward"].total > 0
    out = model(torch.randn(2, 6, 5), torch.tensor([6, 3]))
    assert out.shape == (2, 1, 3) and torch.isfinite(out).all()


def test_pretrained_and_random_init_build_the_same_seeded_body():
    a = build_body(BodySpec(NAME, "pretrained", seq_len=4, seed=3)).state_dict()
    b = build_body(BodySpec(NAME, "random", seq_len=4, seed=3)).state_dict()
    c = build_body(BodySpec(NAME, "random", seq_len=4, seed=4)).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)

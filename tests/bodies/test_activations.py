import sys

import torch
from torch import nn
from transformers.activations import NewGELUActivation

from fpt.bodies import BodySpec, build_body
from fpt.bodies.activations import use_fused_activations


def test_torch_tanh_gelu_is_hugging_faces_gelu_new_to_rounding():
    x = torch.linspace(-12, 12, 100_001, dtype=torch.float64).float().requires_grad_()
    ours, theirs = nn.GELU(approximate="tanh")(x), NewGELUActivation()(x)
    assert torch.allclose(ours, theirs, rtol=1e-6, atol=1e-6)
    (g_ours,) = torch.autograd.grad(ours.sum(), x)
    (g_theirs,) = torch.autograd.grad(theirs.sum(), x)
    assert torch.allclose(g_ours, g_theirs, rtol=1e-5, atol=2e-6)  # tails: 0 against -1.1e-6
    xb = x.detach().bfloat16()
    assert torch.allclose(nn.GELU(approximate="tanh")(xb).float(), NewGELUActivation()(xb).float(), rtol=2e-2, atol=1e-2)


def test_every_gpt2_block_gets_the_fused_activation_and_the_same_outputs(tiny_gpt2_dir):
    body = build_body(BodySpec(tiny_gpt2_dir, init="pretrained", seq_len=16, dropout=0.0))
    assert not any(isinstance(m, NewGELUActivation) for m in body.modules())
    fused = [m for m in body.modules() if isinstance(m, nn.GELU)]
    assert len(fused) == len(body.blocks) and all(m.approximate == "tanh" for m in fused)

    h = torch.randn(3, 16, body.width)
    body.eval()
    ours = body.block(0, h, None)
    for block in body.blocks:
        block.mlp.act = NewGELUActivation()
    assert torch.allclose(ours, body.block(0, h, None), atol=1e-5)


def test_bodies_without_gelu_new_are_left_alone(tiny_bert_dir):
    body = build_body(BodySpec(tiny_bert_dir, init="pretrained", seq_len=16, dropout=0.0))
    assert use_fused_activations(body) == 0
    assert not any(isinstance(m, nn.GELU) and m.approximate == "tanh" for m in body.modules())


def test_a_body_that_is_not_hugging_faces_builds_without_importing_transformers(monkeypatch):
    """An LSTM body imported transformers.activations (3 s of CPU: transformers, torch.distributed.tensor, ...) only
    to look for a GELU it cannot hold; every fpt train --body lstm-* process paid it."""
    for name in [m for m in sys.modules if m == "transformers" or m.startswith("transformers.")]:
        monkeypatch.setitem(sys.modules, name, None)  # importing any of them now raises ImportError
    body = build_body(BodySpec("lstm-3-w384", init="random", seq_len=8, dropout=0.0))
    assert use_fused_activations(body) == 0
    h = body.embed(torch.zeros(2, 8, body.width))
    assert body.final_norm(body.block(0, h, None)).shape == (2, 8, 384)

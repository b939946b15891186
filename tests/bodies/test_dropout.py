"""fpt.bodies.dropout: the CPU-cheap mask keeps dropout's meaning (rate, scale, gradient, seeding)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from fpt.bodies import attention, dropout
from fpt.bodies.base import set_dropout


@pytest.fixture
def fast():
    previous = dropout.FAST
    dropout.set_fast(True)
    yield
    dropout.set_fast(previous)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_drop_rate_and_expectation_match_the_requested_p(fast, p):
    torch.manual_seed(0)
    x = torch.ones(400_000)
    y = dropout.dropout(x, p, training=True)
    dropped = (y == 0).float().mean().item()
    assert dropped == pytest.approx(p, abs=0.003)  # 400k draws: the std is <= 0.0008
    assert y.mean().item() == pytest.approx(1.0, abs=0.01)  # kept values scaled by 1 / (1 - p)
    kept = y[y != 0]
    assert torch.allclose(kept, torch.full_like(kept, 1.0 / (1.0 - round(p * 2**15) / 2**15)))


def test_every_lane_of_the_random_words_is_used_uniformly(fast):
    # Four elements share one 64-bit draw; a lane that was not uniform would show as a rate off p.
    torch.manual_seed(1)
    keep = dropout.keep_mask((100_000, 4), 0.25)
    rates = 1 - keep.float().mean(0)
    assert torch.allclose(rates, torch.full((4,), 0.25), atol=0.01)


def test_seeded_masks_repeat_and_differ_between_calls(fast):
    torch.manual_seed(3)
    a, b = dropout.keep_mask((1000,), 0.1), dropout.keep_mask((1000,), 0.1)
    torch.manual_seed(3)
    assert torch.equal(a, dropout.keep_mask((1000,), 0.1))
    assert not torch.equal(a, b)


def test_gradient_is_the_mask_times_the_scale(fast):
    torch.manual_seed(0)
    x = torch.randn(64, 32, requires_grad=True)
    y = dropout.dropout(x, 0.3, training=True)
    y.sum().backward()
    scale = 1.0 / (1.0 - round(0.3 * 2**15) / 2**15)
    assert torch.allclose(x.grad, (y != 0).float() * scale)


def test_identity_when_not_training_or_p_zero_and_zeros_at_p_one(fast):
    x = torch.randn(8, 8)
    assert dropout.dropout(x, 0.1, training=False) is x
    assert torch.equal(dropout.dropout(x, 0.0, training=True), x)
    assert torch.equal(dropout.dropout(x, 1.0, training=True), torch.zeros_like(x))


def test_keeps_dtype_and_shape(fast):
    x = torch.randn(2, 3, 5, dtype=torch.bfloat16)
    y = dropout.dropout(x, 0.2, training=True)
    assert y.dtype == torch.bfloat16 and y.shape == x.shape


def test_set_fast_false_is_torchs_own_dropout():
    previous = dropout.FAST
    dropout.set_fast(False)
    try:
        x = torch.randn(1000)
        torch.manual_seed(5)
        ours = dropout.dropout(x, 0.1, training=True)
        torch.manual_seed(5)
        assert torch.equal(ours, F.dropout(x, 0.1, training=True))
    finally:
        dropout.set_fast(previous)


def test_set_dropout_replaces_plain_dropout_modules_and_sets_p(fast):
    net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.Sequential(nn.Dropout(0.2)))
    set_dropout(net, 0.1)
    drops = [m for m in net.modules() if isinstance(m, nn.Dropout)]
    assert len(drops) == 2 and all(type(m) is dropout.Dropout and m.p == 0.1 for m in drops)
    net.eval()
    x = torch.randn(3, 4)
    assert torch.equal(net(x), net[0](x))


def test_attention_with_dropout_on_cpu_matches_the_fused_path_without_it(fast):
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, 7, 8) for _ in range(3))
    mask = torch.ones(2, 1, 1, 7, dtype=torch.bool)
    mask[0, ..., 5:] = False
    fused = attention.sdpa(q, k, v, mask, 0.0)
    # p so small that no element is dropped (round(1e-6 * 2**15) == 0): the cheap path's softmax
    # attention must equal the fused kernel's.
    eager = attention.sdpa(q, k, v, mask, 1e-6)
    assert torch.allclose(eager, fused, atol=1e-5)
    dropped = attention.sdpa(q, k, v, mask, 0.5)
    assert not torch.allclose(dropped, fused, atol=1e-3)


def test_cpu_training_takes_the_explicit_path_only_where_it_was_measured_faster(fast):
    q = torch.randn(1, 2, 3, 4)
    assert attention.uses_fused(q, 0.0)  # inference
    assert attention.uses_fused(q.requires_grad_(), 0.0)  # fp32 training without dropout: equal speed, fused
    assert not attention.uses_fused(q, 0.1)  # dropout: the cheap mask needs the explicit path
    qb = torch.randn(1, 2, 3, 4, dtype=torch.bfloat16, requires_grad=True)
    assert not attention.uses_fused(qb, 0.0)  # bf16 training: the explicit path
    with torch.no_grad():
        assert attention.uses_fused(qb, 0.0)
    attention.set_train_explicit_on_cpu(False)
    try:
        assert attention.uses_fused(qb, 0.0) and not attention.uses_fused(q, 0.1)
    finally:
        attention.set_train_explicit_on_cpu(True)

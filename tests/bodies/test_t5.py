"""T5 encoder body: T5EncoderModel's own forward, the relative bias table as positions, groups."""

import re

import pytest
import torch
from tests.bodies.checks import assert_block_rows_agree, assert_fpt_last_block_rows_agree

from fpt.bodies import BODIES, FAMILIES, Body, BodySpec, build_body
from fpt.bodies import attention as attention_module
from fpt.bodies.t5 import T5_SIZES, T5Body, t5_config
from fpt.errors import BodyUnavailableError

W, H, BUCKETS = 32, 4, 8


@pytest.fixture(scope="module", params=["relu", "gated-gelu"])
def tiny_t5_dir(request, tmp_path_factory) -> str:
    """A whole T5Model (encoder and decoder), as AutoModel would load a local T5 directory."""
    from transformers import T5Config, T5Model

    path = tmp_path_factory.mktemp(f"tiny-t5-{request.param}")
    torch.manual_seed(0)
    # d_kv * heads (48) != d_model (32), as in the larger T5s; max_distance 16 < T so far buckets are shared.
    config = T5Config(num_layers=2, d_model=W, num_heads=H, d_kv=12, d_ff=64, vocab_size=50,
                      relative_attention_num_buckets=BUCKETS, relative_attention_max_distance=16,
                      feed_forward_proj=request.param)
    T5Model(config).save_pretrained(path)
    return str(path)


def _run(body, x, pad_mask=None):
    h = body.embed(x)
    for i in range(len(body.blocks)):
        h = body.block(i, h, pad_mask)
    return body.final_norm(h)


def _reference(path, x, pad_mask=None):
    from transformers import T5EncoderModel

    model = T5EncoderModel.from_pretrained(path).eval()
    kwargs = {"attention_mask": pad_mask.long()} if pad_mask is not None else {}
    return model(inputs_embeds=x, **kwargs).last_hidden_state


@torch.no_grad()
@pytest.mark.parametrize("fused", [True, False])
def test_forward_matches_t5_encoder_model(tiny_t5_dir, fused, monkeypatch):
    monkeypatch.setattr(attention_module, "FUSED", fused)
    body = build_body(BodySpec(tiny_t5_dir, "pretrained", seq_len=20)).eval()
    assert isinstance(body, T5Body) and isinstance(body, Body) and not body.causal
    x = torch.randn(2, 20, W)
    torch.testing.assert_close(_run(body, x), _reference(tiny_t5_dir, x), atol=1e-5, rtol=1e-4)
    mask = torch.tensor([[True] * 20, [True] * 13 + [False] * 7])
    ours, ref = _run(body, x, mask), _reference(tiny_t5_dir, x, mask)
    torch.testing.assert_close(ours[0], ref[0], atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(ours[1, :13], ref[1, :13], atol=1e-5, rtol=1e-4)


def test_positions_are_the_shared_relative_bias_table(tiny_t5_dir):
    from transformers import T5EncoderModel

    body = build_body(BodySpec(tiny_t5_dir, "pretrained", seq_len=7))
    hf = T5EncoderModel.from_pretrained(tiny_t5_dir)
    table = hf.encoder.block[0].layer[0].SelfAttention.relative_attention_bias.weight
    assert isinstance(body.positions, torch.nn.Parameter) and tuple(body.positions.shape) == (BUCKETS, H)
    assert torch.equal(body.positions, table)
    # moved, not copied: no block holds a bias table any more
    assert not any("relative_attention_bias" in n for n, _ in body.named_parameters())
    assert not any("relative_attention_bias" in n for n in body.state_dict())


def test_groups_cover_every_parameter_exactly_once(tiny_t5_dir):
    body = build_body(BodySpec(tiny_t5_dir, "random", seq_len=8))
    patterns = {g: re.compile(p) for g, p in body.groups.items()}
    names = [n for n, _ in body.named_parameters()]
    assert not any("decoder" in n or "shared" in n or "embed_tokens" in n for n in names)
    for name in names:
        hits = [g for g, p in patterns.items() if p.search(name)]
        assert len(hits) == 1, (name, hits)
    counts = {g: sum(p.numel() for n, p in body.named_parameters() if patterns[g].search(n)) for g in patterns}
    assert counts["positions"] == BUCKETS * H
    assert counts["layernorm"] == (2 * 2 + 1) * W  # two RMS norms (weight only) per block + the final norm


def test_random_init_is_seeded(tiny_t5_dir):
    a, b, c = (build_body(BodySpec(tiny_t5_dir, "random", seq_len=4, seed=s)) for s in (1, 1, 2))
    w = "blocks.0.layer.0.SelfAttention.q.weight"
    assert torch.equal(a.state_dict()[w], b.state_dict()[w]) and not torch.equal(a.state_dict()[w], c.state_dict()[w])
    assert torch.equal(a.positions, b.positions) and not torch.equal(a.positions, c.positions)


@torch.no_grad()
def test_attention_weights_block_rows_and_fpt(tiny_t5_dir):
    body = build_body(BodySpec(tiny_t5_dir, "random", seq_len=6)).eval()
    h = body.embed(torch.randn(2, 6, W))
    mask = torch.tensor([[True] * 6, [True] * 4 + [False] * 2])
    a = body.attention_weights(0, h, mask)
    assert a.shape == (2, H, 6, 6)
    torch.testing.assert_close(a.sum(-1), torch.ones(2, H, 6))
    assert torch.all(a[1, :, :, 4:] == 0)
    assert_block_rows_agree(body, 1, h, mask, torch.tensor([[4, 5], [2, 3]]))
    assert_fpt_last_block_rows_agree(body, [6, 4])


def test_positions_train_through_every_block(tiny_t5_dir):
    body = build_body(BodySpec(tiny_t5_dir, "random", seq_len=5))
    _run(body, torch.randn(2, 5, W)).sum().backward()
    assert body.positions.grad is not None and body.positions.grad.abs().sum() > 0


def test_named_bodies_have_known_hyperparameters_and_fail_fast_offline(monkeypatch):
    assert T5_SIZES == {"t5-small": (6, 512, 8, 64, 2048), "t5-base": (12, 768, 12, 64, 3072)}
    c = t5_config("t5-base")
    assert (c.num_layers, c.d_model, c.num_heads, c.d_kv, c.d_ff, c.is_gated_act) == (12, 768, 12, 64, 3072, False)
    assert {"t5-small", "t5-base"} <= set(BODIES.names()) and "t5" in FAMILIES
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", "/nonexistent-fpt-test-cache")
    with pytest.raises(BodyUnavailableError, match="HF_HUB_OFFLINE is set"):
        build_body(BodySpec("t5-small", "pretrained", seq_len=4))

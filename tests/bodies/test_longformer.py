"""Longformer body: a band mask over fused attention gives LongformerModel's sliding-window outputs."""

import re

import pytest
import torch
from tests.bodies.checks import assert_block_rows_agree, assert_fpt_last_block_rows_agree

from fpt.bodies import BODIES, FAMILIES, Body, BodySpec, build_body
from fpt.bodies import attention as attention_module
from fpt.bodies.longformer import LONGFORMER_BASE, LongformerBody, band_mask, longformer_config
from fpt.errors import BodyUnavailableError

W, H = 32, 4
WINDOWS = [4, 8]  # per layer: one-sided windows 2 and 4, both narrower than the sequences below


@pytest.fixture(scope="module")
def tiny_longformer_dir(tmp_path_factory) -> str:
    from transformers import LongformerConfig, LongformerModel

    path = tmp_path_factory.mktemp("tiny-longformer")
    torch.manual_seed(0)
    config = LongformerConfig(num_hidden_layers=2, hidden_size=W, num_attention_heads=H, intermediate_size=64,
                              attention_window=WINDOWS, max_position_embeddings=66, vocab_size=50,
                              type_vocab_size=1, pad_token_id=1, layer_norm_eps=1e-5)
    LongformerModel(config).save_pretrained(path)
    return str(path)


def _run(body, x, pad_mask=None):
    h = body.embed(x)
    for i in range(len(body.blocks)):
        h = body.block(i, h, pad_mask)
    return body.final_norm(h)


def _reference(path, x, pad_mask):
    from transformers import LongformerModel

    model = LongformerModel.from_pretrained(path).eval()
    return model(inputs_embeds=x, attention_mask=pad_mask.long()).last_hidden_state


@torch.no_grad()
@pytest.mark.parametrize("T", [16, 13])  # 13: Hugging Face pads to a multiple of the window itself
@pytest.mark.parametrize("fused", [True, False])
def test_forward_matches_longformer_model(tiny_longformer_dir, T, fused, monkeypatch):
    monkeypatch.setattr(attention_module, "FUSED", fused)
    body = build_body(BodySpec(tiny_longformer_dir, "pretrained", seq_len=T)).eval()
    assert isinstance(body, LongformerBody) and isinstance(body, Body) and not body.causal
    x = torch.randn(3, T, W)
    mask = torch.ones(3, T, dtype=torch.bool)
    mask[1, 9:] = False
    mask[2, 3:] = False  # most windows of the padded queries hold no real token at all
    ours, ref = _run(body, x, mask), _reference(tiny_longformer_dir, x, mask)
    assert torch.isfinite(ours).all()
    for b in range(3):  # Hugging Face zeroes padded queries' attention; only real tokens are compared
        n = int(mask[b].sum())
        torch.testing.assert_close(ours[b, :n], ref[b, :n], atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(_run(body, x[:1]), ref[:1], atol=1e-5, rtol=1e-4)  # no mask at all


def test_window_actually_limits_attention(tiny_longformer_dir):
    """Changing a token outside every window of token 0 leaves token 0's first-block output alone."""
    body = build_body(BodySpec(tiny_longformer_dir, "random", seq_len=16)).eval()
    h = body.embed(torch.randn(1, 16, W))
    h2 = h.clone()
    h2[0, 5] += 1.0  # one-sided window of block 0 is 2
    with torch.no_grad():
        torch.testing.assert_close(body.block(0, h, None)[0, :3], body.block(0, h2, None)[0, :3])
        assert not torch.allclose(body.block(0, h, None)[0, 3:8], body.block(0, h2, None)[0, 3:8])


def test_band_mask():
    m = band_mask(torch.arange(6), 6, 1, None)[0, 0]
    assert torch.equal(m, (torch.arange(6)[:, None] - torch.arange(6)[None]).abs() <= 1)
    pad = torch.tensor([[True, True, False, False, False, False]])
    m = band_mask(torch.arange(6), 6, 1, pad)[0, 0]
    assert m[0].tolist() == [True, True, False, False, False, False]
    assert m[4].tolist() == [False, False, False, False, True, False]  # a padded query keeps only itself
    rows = band_mask(torch.tensor([[2, 5]]), 6, 1, None)[0, 0]
    assert rows.tolist() == [[False, True, True, True, False, False], [False, False, False, False, True, True]]


def test_groups_cover_every_parameter_exactly_once(tiny_longformer_dir):
    body = build_body(BodySpec(tiny_longformer_dir, "random", seq_len=8))
    patterns = {g: re.compile(p) for g, p in body.groups.items()}
    for name, _ in body.named_parameters():
        hits = [g for g, p in patterns.items() if p.search(name)]
        assert len(hits) == 1, (name, hits)
    assert re.search(patterns["attention"], "blocks.0.attention.self.query_global.weight")
    counts = {g: sum(p.numel() for n, p in body.named_parameters() if patterns[g].search(n)) for g in patterns}
    assert counts["positions"] == 8 * W
    assert counts["layernorm"] == (2 * 2 * 2 + 2) * W
    assert counts["attention"] == 2 * 7 * (W * W + W)  # q, k, v, their global twins, output dense


def test_positions_skip_the_padding_offset(tiny_longformer_dir):
    from transformers import LongformerModel

    body = build_body(BodySpec(tiny_longformer_dir, "pretrained", seq_len=5))
    table = LongformerModel.from_pretrained(tiny_longformer_dir).embeddings.position_embeddings.weight
    assert torch.equal(body.positions, table[2:7])
    with pytest.raises(ValueError, match="needs 65 positions .* has only 64"):
        build_body(BodySpec(tiny_longformer_dir, "random", seq_len=65))


def test_random_init_is_seeded(tiny_longformer_dir):
    a, b, c = (build_body(BodySpec(tiny_longformer_dir, "random", seq_len=4, seed=s)) for s in (1, 1, 2))
    w = "blocks.0.attention.self.query.weight"
    assert torch.equal(a.state_dict()[w], b.state_dict()[w]) and not torch.equal(a.state_dict()[w], c.state_dict()[w])


@torch.no_grad()
def test_attention_weights_block_rows_and_fpt(tiny_longformer_dir):
    body = build_body(BodySpec(tiny_longformer_dir, "random", seq_len=10)).eval()
    h = body.embed(torch.randn(2, 10, W))
    mask = torch.tensor([[True] * 10, [True] * 7 + [False] * 3])
    a = body.attention_weights(0, h, mask)
    assert a.shape == (2, H, 10, 10)
    torch.testing.assert_close(a.sum(-1), torch.ones(2, H, 10))
    assert torch.all(a[1, :, :7, 7:] == 0)
    far = (torch.arange(10)[:, None] - torch.arange(10)[None]).abs() > WINDOWS[0] // 2
    assert torch.all(a[:, :, far] == 0)
    assert_block_rows_agree(body, 1, h, mask, torch.tensor([[8, 9], [5, 6]]))
    assert_fpt_last_block_rows_agree(body, [10, 7])


def test_named_body_has_known_hyperparameters_and_fails_fast_offline(monkeypatch):
    c = longformer_config()
    assert (c.num_hidden_layers, c.hidden_size, c.num_attention_heads, c.intermediate_size) == (12, 768, 12, 3072)
    assert (c.attention_window, c.max_position_embeddings, c.pad_token_id) == (512, 4098, 1)
    assert LONGFORMER_BASE["type_vocab_size"] == 1
    assert "longformer-base" in BODIES and "longformer" in FAMILIES
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", "/nonexistent-fpt-test-cache")
    with pytest.raises(BodyUnavailableError, match="HF_HUB_OFFLINE is set"):
        build_body(BodySpec("longformer-base", "pretrained", seq_len=4))

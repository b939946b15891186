"""ViT body: Hugging Face's own forward, CLS-free positions resized to the task, groups."""

import re

import pytest
import torch
from tests.bodies.checks import assert_block_rows_agree

from fpt.bodies import BODIES, FAMILIES, Body, BodySpec, build_body
from fpt.bodies.vit import VIT_BASE, ViTBody, resize_positions, vit_config
from fpt.errors import BodyUnavailableError
from fpt.model import FPT, InputSpec

W, GRID = 32, 4  # tiny ViT: width 32, 8 x 8 pixels in 2 x 2 patches -> a 4 x 4 grid


@pytest.fixture(scope="module")
def tiny_vit_dir(tmp_path_factory) -> str:
    from transformers import ViTConfig, ViTModel

    path = tmp_path_factory.mktemp("tiny-vit")
    torch.manual_seed(0)
    config = ViTConfig(num_hidden_layers=2, hidden_size=W, num_attention_heads=4, intermediate_size=64,
                       image_size=2 * GRID, patch_size=2, num_channels=3)
    ViTModel(config).save_pretrained(path)
    return str(path)


def _run(body, h, pad_mask=None):
    for i in range(len(body.blocks)):
        h = body.block(i, h, pad_mask)
    return body.final_norm(h)


@torch.no_grad()
@pytest.mark.parametrize("padded", [False, True])
def test_forward_matches_huggingface_with_its_cls_token_put_back(tiny_vit_dir, padded):
    """Our blocks on [CLS, patches] give ViTModel(pixel_values) exactly.

    The body has no CLS token, so for this check only we prepend HF's (plus its position
    row 0); the patch tokens get the body's own positions, which must be rows 1.. of HF's.
    """
    from transformers import ViTModel

    hf = ViTModel.from_pretrained(tiny_vit_dir).eval()
    body = build_body(BodySpec(tiny_vit_dir, "pretrained", seq_len=GRID * GRID)).eval()
    assert isinstance(body, ViTBody) and isinstance(body, Body) and not body.causal
    pixels = torch.randn(2, 3, 2 * GRID, 2 * GRID)
    patches = hf.embeddings.patch_embeddings(pixels)  # (B, 16, D)
    cls = (hf.embeddings.cls_token + hf.embeddings.position_embeddings[:, :1]).expand(2, -1, -1)
    h = torch.cat([cls, body.embed(patches)], dim=1)  # (B, 17, D)
    mask = torch.ones(2, 1 + GRID * GRID, dtype=torch.bool)
    if padded:
        mask[1, 11:] = False
    ours = _run(body, h, mask if padded else None)
    ref = hf(pixel_values=pixels, attention_mask=mask.long() if padded else None).last_hidden_state
    torch.testing.assert_close(ours[0], ref[0], atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(ours[1, :11], ref[1, :11], atol=1e-5, rtol=1e-4)


def test_checkpoints_in_the_hubs_older_layout_load(tiny_vit_dir):
    """The hub's ViT checkpoints name encoder.layer.N.attention.attention.query; save_pretrained
    writes that layout too, so the equivalence test above already loads through the renaming."""
    from pathlib import Path

    from safetensors import safe_open

    with safe_open(str(Path(tiny_vit_dir) / "model.safetensors"), "pt") as f:
        assert "encoder.layer.0.attention.attention.query.weight" in set(f.keys())
    body = build_body(BodySpec(tiny_vit_dir, "pretrained", seq_len=4))
    with safe_open(str(Path(tiny_vit_dir) / "model.safetensors"), "pt") as f:
        assert torch.equal(body.blocks[1].mlp.fc2.weight, f.get_tensor("encoder.layer.1.output.dense.weight"))


def test_resize_keeps_the_table_when_the_length_matches():
    table = torch.randn(16, 3)
    out = resize_positions(table, 16)
    assert torch.equal(out, table) and out.data_ptr() != table.data_ptr()


def test_resize_square_lengths_is_2d_and_row_major():
    # feature 0 = grid row, feature 1 = grid column, feature 2 constant
    r, c = torch.meshgrid(torch.arange(float(GRID)), torch.arange(float(GRID)), indexing="ij")
    table = torch.stack([r.flatten(), c.flatten(), torch.full((GRID * GRID,), 5.0)], dim=1)  # (16, 3)
    for side in (2, 3, 8):
        out = resize_positions(table, side * side).reshape(side, side, 3)
        torch.testing.assert_close(out[..., 2], torch.full((side, side), 5.0))
        # rows vary only down the grid, columns only across it: the layout survived
        torch.testing.assert_close(out[..., 0], out[:, :1, 0].expand(side, side))
        torch.testing.assert_close(out[..., 1], out[:1, :, 1].expand(side, side))
        assert torch.all(out[1:, 0, 0] > out[:-1, 0, 0]) and torch.all(out[0, 1:, 1] > out[0, :-1, 1])


def test_resize_other_lengths_is_1d_linear_keeping_both_ends():
    table = torch.stack([torch.arange(16.0), torch.ones(16)], dim=1)  # (16, 2): a ramp and a constant
    for n in (5, 10, 40):
        out = resize_positions(table, n)
        torch.testing.assert_close(out[:, 0], torch.linspace(0, 15, n))
        torch.testing.assert_close(out[:, 1], torch.ones(n))


@pytest.mark.parametrize("seq_len", [GRID * GRID, 64, 10, 1])
def test_positions_are_a_trainable_table_of_the_tasks_length(tiny_vit_dir, seq_len):
    body = build_body(BodySpec(tiny_vit_dir, "pretrained", seq_len=seq_len))
    assert isinstance(body.positions, torch.nn.Parameter) and tuple(body.positions.shape) == (seq_len, W)
    x = torch.randn(2, seq_len, 5)
    assert FPT(body, InputSpec(seq_len=seq_len, num_classes=3, token_dim=5))(x).shape == (2, 1, 3)


def test_groups_cover_every_parameter_exactly_once(tiny_vit_dir):
    body = build_body(BodySpec(tiny_vit_dir, "random", seq_len=8))
    patterns = {g: re.compile(p) for g, p in body.groups.items()}
    names = [n for n, _ in body.named_parameters()]
    assert not any("patch_embeddings" in n or "pooler" in n or "cls_token" in n for n in names)
    for name in names:
        hits = [g for g, p in patterns.items() if p.search(name)]
        assert len(hits) == 1, (name, hits)
    counts = {g: sum(p.numel() for n, p in body.named_parameters() if patterns[g].search(n)) for g in patterns}
    assert counts["positions"] == 8 * W
    assert counts["layernorm"] == (2 * 2 * 2 + 2) * W  # 2 norms (weight, bias) per block + the final norm


def test_random_init_is_seeded(tiny_vit_dir):
    a, b, c = (build_body(BodySpec(tiny_vit_dir, "random", seq_len=4, seed=s)) for s in (1, 1, 2))
    w = "blocks.0.attention.q_proj.weight"
    assert torch.equal(a.state_dict()[w], b.state_dict()[w]) and not torch.equal(a.state_dict()[w], c.state_dict()[w])
    assert torch.equal(a.positions, b.positions)


@torch.no_grad()
def test_attention_weights_and_block_rows(tiny_vit_dir):
    body = build_body(BodySpec(tiny_vit_dir, "random", seq_len=6)).eval()
    h = body.embed(torch.randn(2, 6, W))
    mask = torch.tensor([[True] * 6, [True] * 4 + [False] * 2])
    a = body.attention_weights(0, h, mask)
    assert a.shape == (2, 4, 6, 6)
    torch.testing.assert_close(a.sum(-1), torch.ones(2, 4, 6))
    assert torch.all(a[1, :, :, 4:] == 0)
    assert_block_rows_agree(body, 0, h, mask, torch.tensor([[4, 5], [2, 3]]))


def test_named_body_is_vit_b16_and_fails_fast_offline(monkeypatch):
    c = vit_config()
    assert (c.num_hidden_layers, c.hidden_size, c.num_attention_heads, c.intermediate_size) == (12, 768, 12, 3072)
    assert (c.image_size // c.patch_size) ** 2 == 196 and VIT_BASE["patch_size"] == 16
    assert "vit" in BODIES and "vit" in FAMILIES
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", "/nonexistent-fpt-test-cache")
    with pytest.raises(BodyUnavailableError, match="HF_HUB_OFFLINE is set"):
        build_body(BodySpec("vit", "pretrained", seq_len=4))


def test_official_positions_are_a_new_zero_table_of_1024_rows(tiny_vit_dir):
    from fpt.freeze import apply_policy, count_parameters

    body = build_body(BodySpec(tiny_vit_dir, "pretrained", seq_len=GRID * GRID, vit_positions="official"))
    assert isinstance(body.positions, torch.nn.Parameter) and tuple(body.positions.shape) == (1024, W)
    assert torch.all(body.positions == 0)
    model = FPT(body, InputSpec(seq_len=GRID * GRID, num_classes=3, token_dim=5))
    apply_policy(model, "paper")
    assert body.positions.requires_grad and count_parameters(model)["positions"].trainable == 1024 * W
    assert model(torch.randn(2, GRID * GRID, 5)).shape == (2, 1, 3)
    h = torch.randn(2, GRID * GRID, W)
    torch.testing.assert_close(body.eval().embed(h), h)  # zero positions add nothing at the start
    resized = build_body(BodySpec(tiny_vit_dir, "pretrained", seq_len=GRID * GRID))  # the default is unchanged
    assert tuple(resized.positions.shape) == (GRID * GRID, W) and resized.positions.abs().sum() > 0
    with pytest.raises(ValueError, match="vit_positions"):
        build_body(BodySpec(tiny_vit_dir, "random", seq_len=4, vit_positions="learned"))


def test_the_official_codes_vit_weights_are_a_named_body(monkeypatch):
    from fpt.bodies.vit import VIT_HUB_FT_IN1K

    assert "vit-in21k-ft-in1k" in BODIES and VIT_HUB_FT_IN1K == "google/vit-base-patch16-224"
    with torch.device("meta"):
        body = build_body(BodySpec("vit-in21k-ft-in1k", "random", seq_len=64, vit_positions="official"))
    assert len(body.blocks) == 12 and body.width == 768 and tuple(body.positions.shape) == (1024, 768)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", "/nonexistent-fpt-test-cache")
    with pytest.raises(BodyUnavailableError, match="HF_HUB_OFFLINE is set"):
        build_body(BodySpec("vit-in21k-ft-in1k", "pretrained", seq_len=4))

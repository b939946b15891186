"""LSTM bodies (Tables 3-5): tiny widths on CPU through the same FPT as the transformers."""

import math

import pytest
import torch
from torch import nn

from fpt.bodies import BODIES, Body, BodySpec, build_body
from fpt.bodies.lstm import LSTM_VARIANTS, LSTM_WIDTH, build_lstm
from fpt.config import RunConfig
from fpt.errors import BodyUnavailableError
from fpt.freeze import apply_policy, count_parameters, group_of_parameters
from fpt.model import FPT, InputSpec
from fpt.pipeline import build_model

W = 16  # tiny width: every variant's real depth, but cheap


def tiny(name: str, seq_len: int = 8, seed: int = 0, dropout: float = 0.0):
    layers, residual, positional = LSTM_VARIANTS[name]
    spec = BodySpec(name, "random", seq_len=seq_len, dropout=dropout, seed=seed)
    return build_lstm(spec, layers, W, residual, positional)


def lstm_params(layers: int, width: int) -> int:
    # weight_ih + weight_hh (4D x D each) and bias_ih + bias_hh (4D each) per layer
    return layers * 4 * (2 * width * width + 2 * width)


@pytest.mark.parametrize("name", list(LSTM_VARIANTS))
def test_shapes_through_fpt(name):
    body = tiny(name)
    assert isinstance(body, Body) and body.causal and body.width == W
    assert len(body.blocks) == LSTM_VARIANTS[name][0]
    x = torch.randn(3, 8, 5)
    assert FPT(body, InputSpec(seq_len=8, num_classes=4, token_dim=5))(x).shape == (3, 1, 4)
    ids = torch.randint(0, 7, (3, 8))
    spec = InputSpec(seq_len=8, num_classes=2, vocab_size=7, num_outputs=3, per_token=2)
    assert FPT(body, spec)(ids, torch.tensor([8, 5, 3])).shape == (3, 6, 2)


@pytest.mark.parametrize("name", list(LSTM_VARIANTS))
def test_groups_cover_every_parameter_and_paper_policy_freezes_recurrent(name):
    layers, _, positional = LSTM_VARIANTS[name]
    model = FPT(tiny(name), InputSpec(seq_len=8, num_classes=3, token_dim=4))
    groups = group_of_parameters(model)  # raises unless every parameter is in exactly one group
    apply_policy(model, "paper")
    for n, p in model.named_parameters():
        assert p.requires_grad == (groups[n] != "recurrent"), n
    counts = count_parameters(model)
    assert counts["recurrent"].total == lstm_params(layers, W) and counts["recurrent"].trainable == 0
    assert counts["layernorm"].trainable == counts["layernorm"].in_blocks == layers * 2 * W
    assert counts["positions"].trainable == (8 * W if positional else 0)
    assert counts["attention"].total == counts["feedforward"].total == 0


def test_seeded_rebuild_is_identical_and_seed_matters():
    a, b, c = (tiny("lstm-12-residual-positional", seed=s) for s in (1, 1, 2))
    sa, sb, sc = a.state_dict(), b.state_dict(), c.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert not torch.equal(sa["blocks.0.lstm.weight_hh_l0"], sc["blocks.0.lstm.weight_hh_l0"])
    assert not torch.equal(sa["positions"], sc["positions"])


def test_building_leaves_the_global_random_stream_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    tiny("lstm-3")
    assert torch.equal(torch.rand(3), expected)


def test_variants_differ_only_where_expected():
    names = {n: {k for k, _ in tiny(n).named_parameters()} for n in LSTM_VARIANTS}
    assert names["lstm-12"] == names["lstm-12-residual"]  # residuals add no parameters
    assert names["lstm-12-residual-positional"] - names["lstm-12-residual"] == {"positions"}
    assert names["lstm-3"] < names["lstm-12"]
    assert tiny("lstm-12").positions is None and tiny("lstm-12-residual-positional").positions.shape == (8, W)


@torch.no_grad()
def test_residual_adds_the_block_input_and_positions_are_added_once():
    plain, residual = tiny("lstm-12").eval(), tiny("lstm-12-residual").eval()  # same seed: same weights
    h = torch.randn(2, 8, W)
    torch.testing.assert_close(residual.block(0, h, None), h + plain.block(0, h, None))
    torch.testing.assert_close(residual.final_norm(h), h)
    positional = tiny("lstm-12-residual-positional").eval()
    torch.testing.assert_close(positional.embed(h), h + positional.positions)
    torch.testing.assert_close(plain.embed(h), h)


@pytest.mark.parametrize("name", ["lstm-3", "lstm-12-residual-positional"])
@torch.no_grad()
def test_output_at_real_positions_ignores_padding_content(name):
    model = FPT(tiny(name), InputSpec(seq_len=8, num_classes=3, token_dim=4, num_outputs=2)).eval()
    lengths = torch.tensor([8, 5, 2])
    x = torch.randn(3, 8, 4)
    noisy = x.clone()
    pad = torch.arange(8)[None, :] >= lengths[:, None]  # (B, T): True on padding
    noisy[pad] = 100 * torch.randn(int(pad.sum()), 4)
    h, h_noisy = model.hidden(x, lengths), model.hidden(noisy, lengths)
    torch.testing.assert_close(h[~pad], h_noisy[~pad])
    assert not torch.allclose(h[pad], h_noisy[pad])  # padding itself did change
    torch.testing.assert_close(model(x, lengths), model(noisy, lengths))


def test_pretrained_and_stats_are_refused_with_the_way_out():
    for init in ("pretrained", "stats"):
        with pytest.raises(BodyUnavailableError, match="no pretrained weights; use --init random"):
            build_body(BodySpec("lstm-3", init, seq_len=8))


def test_attention_weights_are_refused_clearly():
    body = tiny("lstm-3")
    with pytest.raises(NotImplementedError, match="no attention"):
        body.attention_weights(0, torch.randn(1, 8, W), None)


def test_dropout_setting_reaches_every_dropout():
    body = tiny("lstm-3", dropout=0.3)
    ps = {m.p for m in body.modules() if isinstance(m, torch.nn.Dropout)}
    assert ps == {0.3} and body.dropout == 0.3


def test_named_bodies_are_registered_at_gpt2_width():
    assert set(LSTM_VARIANTS) <= set(BODIES.names())
    assert LSTM_VARIANTS["lstm-12-residual-positional"] == (12, True, True)
    model = build_model(RunConfig(body="lstm-3", init="random"), InputSpec(seq_len=64, num_classes=10, token_dim=16))
    counts = count_parameters(model)
    assert model.body.width == LSTM_WIDTH == 768 and len(model.body.blocks) == 3
    assert counts["recurrent"].total == lstm_params(3, 768) == 14_174_208
    assert counts["layernorm"].trainable == 3 * 2 * 768
    assert counts["positions"].total == 0


@pytest.mark.parametrize("name", list(LSTM_VARIANTS))
def test_w384_variants_match_minilm_width(name):
    with torch.device("meta"):
        wide = build_model(RunConfig(body=name, init="random"), InputSpec(seq_len=8, num_classes=2, token_dim=4))
        narrow = build_model(RunConfig(body=f"{name}-w384", init="random"), InputSpec(seq_len=8, num_classes=2, token_dim=4))
    layers, residual, positional = LSTM_VARIANTS[name]
    assert narrow.body.width == 384 and len(narrow.body.blocks) == layers == len(wide.body.blocks)
    assert narrow.body.residual == residual and (narrow.body.positions is not None) == positional
    assert count_parameters(narrow)["recurrent"].total == lstm_params(layers, 384)


def test_saved_body_round_trips_through_checkpoint_init(tmp_path):
    from fpt.bodies.init import save_body

    spec = BodySpec("lstm-3", "random", seq_len=8, seed=5)
    body = build_body(spec)
    save_body(body, spec, tmp_path)
    again = build_body(BodySpec("lstm-3", f"checkpoint:{tmp_path}", seq_len=8, seed=9))
    assert all(torch.equal(v, again.state_dict()[k]) for k, v in body.state_dict().items())


def test_frozen_lstm_body_learns_a_toy_task():
    torch.manual_seed(0)
    model = FPT(tiny("lstm-3", seq_len=6), InputSpec(seq_len=6, num_classes=2, token_dim=3))
    apply_policy(model, "paper")
    x = torch.randn(64, 6, 3)
    y = (x[:, -1, 0] > 0).long()  # depends on the last token, which the head reads
    frozen = {n: p.detach().clone() for n, p in model.named_parameters() if not p.requires_grad}
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    losses = []
    for _ in range(30):
        loss = torch.nn.functional.cross_entropy(model(x)[:, 0], y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.75 * losses[0], losses
    assert all(torch.equal(p, frozen[n]) for n, p in model.named_parameters() if n in frozen)


# The official code's LNLSTM (lstm_variant="official").

OFFICIAL_CODE = "/work/shared/official"


def tiny_official(name: str, seq_len: int = 8, seed: int = 0, dropout: float = 0.0):
    layers, residual, positional = LSTM_VARIANTS[name]
    spec = BodySpec(name, "random", seq_len=seq_len, dropout=dropout, seed=seed, lstm_variant="official")
    return build_lstm(spec, layers, W, residual, positional)


@pytest.mark.parametrize("name", list(LSTM_VARIANTS))
def test_official_variant_normalises_inside_the_cell(name):
    from fpt.bodies.lstm import CellNorm, LSTMBlock, OfficialLSTMBlock

    layers, _, positional = LSTM_VARIANTS[name]
    official, ours = tiny_official(name), tiny(name)
    assert all(isinstance(b, OfficialLSTMBlock) for b in official.blocks)
    assert all(isinstance(b, LSTMBlock) for b in ours.blocks)
    assert not any(isinstance(m, (nn.LayerNorm, nn.LSTM)) for m in official.modules())  # no norm after the block
    assert sum(isinstance(m, CellNorm) for m in official.modules()) == 3 * layers  # i2h, h2h and cell norms
    assert not any(isinstance(m, CellNorm) for m in ours.modules())
    model = FPT(official, InputSpec(seq_len=8, num_classes=3, token_dim=4))
    groups = group_of_parameters(model)
    apply_policy(model, "paper")
    counts = count_parameters(model)
    assert counts["layernorm"].trainable == layers * 2 * (4 * W + 4 * W + W)
    assert counts["recurrent"].trainable == 0 and counts["recurrent"].total == layers * 2 * (4 * W * W + 4 * W)
    assert all(p.requires_grad == (groups[n] != "recurrent") for n, p in model.named_parameters())
    if positional:  # the official code's lstm_pos_embed: zeros, 1024 rows
        assert tuple(official.positions.shape) == (1024, W) and torch.all(official.positions == 0)
    else:
        assert official.positions is None


def test_official_initialisation_is_uniform_with_the_codes_bounds():
    block = tiny_official("lstm-3").blocks[0]
    for p in (*block.i2h.parameters(), *block.h2h.parameters()):
        assert p.abs().max() <= 1 / math.sqrt(W) and p.std() > 0.5 / math.sqrt(3 * W)
    for norm, n in ((block.ln_i2h, 4 * W), (block.ln_h2h, 4 * W), (block.ln_cell, W)):
        for p in (norm.weight, norm.bias):  # neither 1 nor 0: U(-1/sqrt(n), 1/sqrt(n)), as the code draws them
            assert p.abs().max() <= 1 / math.sqrt(n) and p.std() > 0.5 / math.sqrt(3 * n)


@torch.no_grad()
def test_official_cell_matches_its_equations_step_by_step():
    block = tiny_official("lstm-3").blocks[0].eval()
    h = torch.randn(2, 3, W)
    torch.manual_seed(7)
    out = block(h)
    torch.manual_seed(7)
    hx, cx = block.initial_state(h)  # the same draws

    def norm(m, x):
        mean, var = x.mean(-1, keepdim=True), x.var(-1, unbiased=True, keepdim=True)
        return m.weight * (x - mean) / (var + 1e-6).sqrt() + m.bias

    for t in range(3):
        pre = norm(block.ln_i2h, h[:, t] @ block.i2h.weight.T + block.i2h.bias) + norm(
            block.ln_h2h, hx @ block.h2h.weight.T + block.h2h.bias)
        i, f, o, g = pre[:, :W].sigmoid(), pre[:, W:2 * W].sigmoid(), pre[:, 2 * W:3 * W].sigmoid(), pre[:, 3 * W:].tanh()
        cx = norm(block.ln_cell, f * cx + i * g)
        hx = o * cx.tanh()
        torch.testing.assert_close(out[:, t], hx)


@torch.no_grad()
def test_official_initial_states_are_random_at_every_forward():
    body = tiny_official("lstm-3").eval()
    h = torch.randn(2, 5, W)
    a, b = body.block(0, h, None), body.block(0, h, None)
    assert not torch.allclose(a, b)  # the official code's evaluation is not deterministic either
    torch.manual_seed(0)
    a = body.block(0, h, None)
    torch.manual_seed(0)
    torch.testing.assert_close(body.block(0, h, None), a)


def test_official_dropout_is_inside_the_cell_only():
    body = tiny_official("lstm-3", dropout=0.5)
    assert all(m.p == 0 for m in body.modules() if isinstance(m, nn.Dropout))
    assert all(b.dropout == 0.5 for b in body.blocks)
    h = torch.randn(4, 6, W)
    body.train()
    torch.manual_seed(0)
    out = body.block(0, h, None)
    assert 0.3 < (out == 0).float().mean().item() < 0.7


def test_official_variant_through_the_config():
    model = build_model(RunConfig(body="lstm-3-w384", init="random", lstm_variant="official"),
                        InputSpec(seq_len=4, num_classes=2, token_dim=3))
    assert model.body.variant == "official" and len(model.body.blocks) == 3 and model.body.width == 384
    with pytest.raises(ValueError, match="lstm_variant"):
        build_lstm(BodySpec("lstm-3", "random", seq_len=4, lstm_variant="gru"), 3, W, False, False)


@torch.no_grad()
@pytest.mark.skipif(not __import__("os").path.isdir(OFFICIAL_CODE), reason="the official code is not on this machine")
def test_official_variant_equals_the_official_lnlstm(monkeypatch):
    """The same weights and initial states give the same outputs as the released LNLSTM (imported, not copied)."""
    monkeypatch.syspath_prepend(OFFICIAL_CODE)
    from universal_computation.models.lstm import LNLSTM

    torch.manual_seed(0)
    ref = LNLSTM(input_size=W, hidden_size=W, num_layers=3, batch_first=True, residual=True, dropout=0.0,
                 bidirectional=0).eval()
    body = tiny_official("lstm-12-residual")  # residual like the reference
    del body.blocks[3:]
    for i, layer in enumerate(ref.layers):
        ours = body.blocks[i]
        for name in ("i2h", "h2h"):
            getattr(ours, name).weight.copy_(getattr(layer, name).weight)
            getattr(ours, name).bias.copy_(getattr(layer, name).bias)
        for name in ("ln_i2h", "ln_h2h", "ln_cell"):
            getattr(ours, name).weight.copy_(getattr(layer, name).alpha.view(-1))
            getattr(ours, name).bias.copy_(getattr(layer, name).beta.view(-1))
    x = torch.randn(2, 5, W)
    states = [(torch.randn(1, 2, W), torch.randn(1, 2, W)) for _ in range(3)]
    expected, _ = ref(x, hiddens=states)
    draws = iter(states)

    def given_state(h):
        hx, cx = next(draws)
        return hx[0], cx[0]

    for block in body.blocks:
        monkeypatch.setattr(block, "initial_state", given_state)
    h = body.eval().embed(x)
    for i in range(3):
        h = body.block(i, h, None)
    torch.testing.assert_close(body.final_norm(h), expected, atol=1e-5, rtol=1e-4)

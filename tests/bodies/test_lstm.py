"""LSTM bodies (Tables 3-5): tiny widths on CPU through the same FPT as the transformers."""

import pytest
import torch

from fpt.bodies import BODIES, Body, BodySpec, BodyUnavailableError, build_body
from fpt.bodies.lstm import LSTM_VARIANTS, LSTM_WIDTH, build_lstm
from fpt.config import RunConfig
from fpt.experiment import build_model
from fpt.freeze import apply_policy, count_parameters, group_of_parameters
from fpt.model import FPT, InputSpec

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
    assert FPT(body, InputSpec(seq_len=8, num_classes=4, token_dim=5), layers=2)(x).shape == (3, 1, 4)


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

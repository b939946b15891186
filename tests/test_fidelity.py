"""Options that restore the official FPT code's behaviour (docs/fidelity.md), checked numerically."""

import math

import pytest
import torch
from torch import nn

from fpt.bodies import BodySpec, build_body
from fpt.config import RunConfig
from fpt.errors import ConfigError
from fpt.model import FPT, OFFICIAL_ORTH_GAIN, InputSpec, input_layer
from fpt.pipeline import build_model

DISCRETE = InputSpec(seq_len=8, num_classes=3, vocab_size=2000)
CONTINUOUS = InputSpec(seq_len=8, num_classes=3, token_dim=16)


def test_defaults_are_unchanged():
    c = RunConfig()
    assert (c.input_init, c.input_dropout, c.padding, c.vit_positions, c.lstm_variant) == (
        "gpt2", False, "mask", "resized", "fpt")


@pytest.mark.parametrize("field", ["input_init", "padding", "vit_positions", "lstm_variant"])
def test_bad_values_name_the_field(field):
    with pytest.raises(ConfigError, match=field):
        RunConfig(**{field: "nonsense"})


def test_embedding_init_gpt2_vs_official():
    torch.manual_seed(0)
    ours = input_layer(DISCRETE, 64, "gpt2").weight
    official = input_layer(DISCRETE, 64, "official").weight
    assert abs(ours.std().item() - 0.02) < 0.001
    assert abs(official.std().item() - 1.0) < 0.02 and abs(official.mean().item()) < 0.01  # nn.Embedding's N(0, 1)


def test_linear_init_gpt2_vs_official_gain():
    for init, gain in (("gpt2", math.sqrt(2)), ("official", OFFICIAL_ORTH_GAIN)):
        layer = input_layer(CONTINUOUS, 64, init)
        torch.testing.assert_close(layer.weight.T @ layer.weight, gain**2 * torch.eye(16), atol=1e-5, rtol=1e-5)
        assert torch.all(layer.bias == 0)
    with pytest.raises(ValueError, match="input init"):
        input_layer(CONTINUOUS, 64, "xavier")


def test_input_init_reaches_the_model_through_the_config(tiny_gpt2_dir):
    for init, std in (("gpt2", 0.02), ("official", 1.0)):
        model = build_model(RunConfig(body=tiny_gpt2_dir, init="random", input_init=init), DISCRETE)
        assert abs(model.input.weight.std().item() - std) < 0.05 * std


def test_input_dropout_acts_on_linear_inputs_only(tiny_gpt2_dir):
    body = build_body(BodySpec(tiny_gpt2_dir, "random", seq_len=8, dropout=0.0))
    model = FPT(body, CONTINUOUS, input_dropout=0.5).train()
    x = torch.randn(64, 8, 16)
    torch.manual_seed(0)
    dropped = model.embed(x) - body.positions  # body dropout is 0: only the input dropout acts
    clean = model.input(x)
    zero = dropped == 0
    assert 0.45 < zero.float().mean().item() < 0.55
    torch.testing.assert_close(dropped[~zero], 2 * clean[~zero])  # survivors scaled by 1 / (1 - p)
    torch.testing.assert_close(model.eval().embed(x), clean + body.positions)  # off in eval mode
    assert FPT(body, DISCRETE, input_dropout=0.5).input_drop is None  # no dropout after an embedding
    assert FPT(body, CONTINUOUS).input_drop is None  # default: none
    config = RunConfig(body=tiny_gpt2_dir, init="random", dropout=0.3, input_dropout=True)
    assert build_model(config, CONTINUOUS).input_drop.p == 0.3  # the official rate: the body's dropout


@torch.no_grad()
@pytest.mark.parametrize("which", ["gpt2", "bert"])
def test_padding_ignore_reads_the_last_position_without_a_mask(which, tiny_gpt2_dir, tiny_bert_dir):
    path = {"gpt2": tiny_gpt2_dir, "bert": tiny_bert_dir}[which]
    spec = InputSpec(seq_len=12, num_classes=10, vocab_size=16)
    torch.manual_seed(0)
    model = FPT(build_body(BodySpec(path, "random", seq_len=12, dropout=0.0)), spec).eval()
    x = torch.randint(1, 16, (3, 12))
    lengths = torch.tensor([12, 7, 3])
    masked = model(x, lengths)
    model.padding = "ignore"
    assert model.pad_mask(x, lengths) is None
    assert model.output_rows(x, lengths).tolist() == [[11], [11], [11]]
    ignored = model(x, lengths)
    torch.testing.assert_close(ignored, model(x))  # lengths play no part
    torch.testing.assert_close(ignored[0], masked[0])  # the full-length example is read at the same place
    assert not torch.allclose(ignored[1:], masked[1:])  # the shorter ones are read at a padding position
    model.padding = "mask"
    torch.testing.assert_close(model(x, lengths), masked)


def test_padding_option_reaches_the_model(tiny_gpt2_dir):
    model = build_model(RunConfig(body=tiny_gpt2_dir, init="random", padding="ignore"), DISCRETE)
    assert model.padding == "ignore"
    with pytest.raises(ValueError, match="padding"):
        FPT(model.body, DISCRETE, padding="sometimes")


def test_paper_scale_uses_the_official_options():
    from fpt.experiments.grid import expand

    cells = {(c.row, c.column): c.config for c in expand("table2", "paper").cells if c.config is not None}
    for config in cells.values():
        assert (config.input_init, config.input_dropout, config.vit_positions, config.lstm_variant) == (
            "official", True, "official", "official")
    listops, homology = cells[("language_gpt2", "listops")], cells[("language_gpt2", "remote-homology")]
    assert listops.padding == homology.padding == "ignore" and not listops.trim_padding
    assert cells[("language_gpt2", "mnist")].task_options["image_size"] == 28
    quick = [c.config for c in expand("table2", "quick").cells if c.config is not None]
    assert all(c.input_init == "gpt2" and c.padding == "mask" for c in quick)


def test_official_positions_are_not_the_default_for_any_body():
    body = build_body(BodySpec("lstm-12-residual-positional", "random", seq_len=8))
    assert body.positions.shape == (8, 768) and body.positions.abs().sum() > 0
    assert isinstance(body.blocks[0].norm, nn.LayerNorm)

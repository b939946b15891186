import pytest
import torch

from fpt.bodies import BodySpec, build_body
from fpt.model import FPT, InputSpec, input_layer


def _model(path, spec):
    torch.manual_seed(0)
    return FPT(build_body(BodySpec(path, "random", seq_len=spec.seq_len, dropout=0.0)), spec).eval()


def test_continuous_and_discrete_shapes(tiny_body_dir):
    spec = InputSpec(seq_len=10, num_classes=2, token_dim=1, num_outputs=5)
    assert _model(tiny_body_dir, spec)(torch.randn(3, 10, 1)).shape == (3, 5, 2)
    spec = InputSpec(seq_len=12, num_classes=10, vocab_size=16)
    assert _model(tiny_body_dir, spec)(torch.randint(0, 16, (4, 12))).shape == (4, 1, 10)
    spec = InputSpec(seq_len=12, num_classes=2, token_dim=5, num_outputs=2, per_token=5)
    assert _model(tiny_body_dir, spec)(torch.randn(2, 12, 5)).shape == (2, 10, 2)


@torch.no_grad()
def test_padding_is_never_read(tiny_body_dir):
    """The logits of a padded example equal those of the same example unpadded."""
    spec = InputSpec(seq_len=12, num_classes=10, vocab_size=16)
    model = _model(tiny_body_dir, spec)
    x = torch.randint(1, 16, (1, 7))
    padded = torch.cat([x, torch.zeros(1, 5, dtype=torch.long)], dim=1)
    alone = model(x)
    torch.testing.assert_close(model(padded, torch.tensor([7])), alone, atol=1e-5, rtol=1e-4)
    garbage = torch.cat([x, torch.randint(1, 16, (1, 5))], dim=1)
    torch.testing.assert_close(model(garbage, torch.tensor([7])), alone, atol=1e-5, rtol=1e-4)


def test_orthogonal_input_init_with_gain_sqrt2():
    layer = input_layer(InputSpec(seq_len=4, num_classes=2, token_dim=16), 64)
    w = layer.weight  # (64, 16): orthonormal columns scaled by sqrt(2)
    torch.testing.assert_close(w.T @ w, 2 * torch.eye(16), atol=1e-5, rtol=1e-5)
    assert torch.all(layer.bias == 0)
    emb = input_layer(InputSpec(seq_len=4, num_classes=2, vocab_size=1000), 64)
    assert abs(emb.weight.std().item() - 0.02) < 0.002


def test_first_layers_only(tiny_gpt2_dir):
    from fpt.config import RunConfig
    from fpt.pipeline import build_model

    spec = InputSpec(seq_len=6, num_classes=2, token_dim=3)
    model = build_model(RunConfig(body=tiny_gpt2_dir, init="random", layers=1), spec)
    assert model.layers == 1 and len(model.body.blocks) == 1
    with pytest.raises(ValueError, match="layers=3 must be in 1..2"):
        build_model(RunConfig(body=tiny_gpt2_dir, init="random", layers=3), spec)


def test_input_spec_validation():
    with pytest.raises(ValueError, match="exactly one of token_dim"):
        InputSpec(seq_len=4, num_classes=2)
    with pytest.raises(ValueError, match="num_outputs=5 must be in 1..seq_len=4"):
        InputSpec(seq_len=4, num_classes=2, token_dim=1, num_outputs=5)


@torch.no_grad()
@pytest.mark.parametrize("discrete", [False, True])
def test_last_block_for_read_tokens_only_gives_the_same_logits(tiny_body_dir, discrete):
    spec = (InputSpec(seq_len=12, num_classes=10, vocab_size=16, num_outputs=2) if discrete
            else InputSpec(seq_len=12, num_classes=3, token_dim=4, num_outputs=3))
    model = _model(tiny_body_dir, spec)
    assert model.last_block_rows
    x = torch.randint(1, 16, (4, 12)) if discrete else torch.randn(4, 12, 4)
    lengths = torch.tensor([12, 7, 3, 9]) if discrete else None
    fast = model(x, lengths)
    model.last_block_rows = False
    torch.testing.assert_close(fast, model(x, lengths), atol=1e-5, rtol=1e-4)


def test_trimmed_batches_give_the_same_logits(tiny_body_dir):
    from fpt.tasks.base import Batch

    spec = InputSpec(seq_len=12, num_classes=10, vocab_size=16)
    model = _model(tiny_body_dir, spec)
    x = torch.randint(1, 16, (3, 12))
    b = Batch(x, torch.zeros(3, 1, dtype=torch.long), torch.tensor([5, 7, 2]))
    t = b.trim()
    assert t.x.shape == (3, 7)
    with torch.no_grad():
        torch.testing.assert_close(model(t.x, t.lengths), model(b.x, b.lengths), atol=1e-5, rtol=1e-4)


@torch.no_grad()
def test_mean_readout_pools_the_real_tokens_only(tiny_body_dir):
    spec = InputSpec(seq_len=12, num_classes=10, vocab_size=16)
    torch.manual_seed(0)
    model = FPT(build_body(BodySpec(tiny_body_dir, "random", seq_len=12, dropout=0.0)), spec, readout="mean").eval()
    x = torch.randint(1, 16, (1, 7))
    h = model.hidden(x)  # (1, 7, D): every block, then the final norm
    torch.testing.assert_close(model.features(x), h.mean(1, keepdim=True))  # the head reads the mean state
    padded = torch.cat([x, torch.randint(1, 16, (1, 5))], dim=1)  # padding of any value is never pooled
    torch.testing.assert_close(model(padded, torch.tensor([7])), model(x), atol=1e-5, rtol=1e-4)
    with pytest.raises(ValueError, match="readout=mean pools every token into one output"):
        FPT(model.body, InputSpec(seq_len=10, num_classes=2, token_dim=1, num_outputs=5), readout="mean")

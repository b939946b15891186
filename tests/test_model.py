import pytest
import torch

from fpt.bodies import BodySpec, build_body
from fpt.model import FPT, READOUTS, InputSpec, input_layer


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


@torch.no_grad()
@pytest.mark.parametrize("readout", READOUTS)
def test_no_readout_reads_padding(tiny_body_dir, readout):
    """Whatever the padding past a length holds, and however much of it there is, the logits are the same."""
    spec = InputSpec(seq_len=12, num_classes=3, token_dim=4)
    torch.manual_seed(0)
    model = FPT(build_body(BodySpec(tiny_body_dir, "random", seq_len=12, dropout=0.0)), spec, readout=readout).eval()
    x = torch.randn(2, 12, 4)
    lengths = torch.tensor([7, 12])
    want = model(x, lengths)
    garbage = x.clone()
    garbage[0, 7:] = torch.randn(5, 4) * 100
    torch.testing.assert_close(model(garbage, lengths), want, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(model(x[:1, :7]), want[:1], atol=1e-5, rtol=1e-4)  # shorter input, no lengths


@torch.no_grad()
def test_flatten_readout_reads_every_position_through_one_linear_layer(tiny_body_dir):
    spec = InputSpec(seq_len=6, num_classes=3, token_dim=2, per_token=4)
    torch.manual_seed(0)
    model = FPT(build_body(BodySpec(tiny_body_dir, "random", seq_len=6, dropout=0.0)), spec, readout="flatten").eval()
    D = model.body.width
    assert (model.head.in_features, model.head.out_features) == (6 * D, 4 * 3)
    x, lengths = torch.randn(3, 6, 2), torch.tensor([6, 4, 1])
    assert model(x, lengths).shape == (3, 4, 3)
    h = model.hidden(x, lengths)  # (3, 6, D)
    feats = model.features(x, lengths)  # (3, 1, 6 * D): position t's state at columns t*D..(t+1)*D
    assert feats.shape == (3, 1, 6 * D)
    torch.testing.assert_close(feats[0, 0], h[0].reshape(-1))
    torch.testing.assert_close(feats[1, 0, : 4 * D], h[1, :4].reshape(-1))
    assert not feats[1, 0, 4 * D:].any() and not feats[2, 0, D:].any()  # past the length: zeros
    # the last position's weights matter (mean pooling would not tell positions apart)
    moved = x.clone()
    moved[0] = x[0].flip(0)
    assert not torch.allclose(model(moved[:1]), model(x[:1]))
    with pytest.raises(ValueError, match="readout=flatten reads every token into one output.*use readout=last"):
        FPT(model.body, InputSpec(seq_len=10, num_classes=2, token_dim=1, num_outputs=5), readout="flatten")
    with pytest.raises(ValueError, match="seq_len=6 positions"):  # (bodies with a position table stop sooner)
        model.flatten(torch.zeros(1, 7, D), None)


def test_flatten_head_trains_in_the_output_group(tiny_gpt2_dir):
    from fpt.freeze import apply_policy, group_of_parameters

    spec = InputSpec(seq_len=8, num_classes=2, token_dim=3)
    torch.manual_seed(0)
    model = FPT(build_body(BodySpec(tiny_gpt2_dir, "random", seq_len=8, dropout=0.0)), spec, readout="flatten")
    assert group_of_parameters(model)["head.weight"] == "output"
    apply_policy(model, "output")
    assert model.head.weight.requires_grad and not model.input.weight.requires_grad
    x, lengths = torch.randn(16, 8, 3), torch.randint(2, 9, (16,))
    y = (x[torch.arange(16), 0, 0] > 0).long()  # the first token decides: the last token alone cannot see it
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    losses = []
    for _ in range(15):
        loss = torch.nn.functional.cross_entropy(model(x, lengths)[:, 0], y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


def test_config_and_model_list_the_same_readouts():
    from fpt.config import READOUTS as CONFIG_READOUTS
    from fpt.config import RunConfig

    assert CONFIG_READOUTS is READOUTS  # one tuple, declared with the run's fields (fpt.settings)
    assert RunConfig(readout="flatten").readout == "flatten"
    with pytest.raises(ValueError, match="'readout'='pool' must be one of last, mean, flatten"):
        RunConfig(readout="pool")


def test_flatten_on_a_task_of_several_output_tokens_names_the_fix(tiny_gpt2_dir):
    import fpt
    from fpt.errors import ConfigError

    with pytest.raises(ConfigError, match="readout=flatten .* this task reads 5 output tokens; use readout=last"):
        fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", readout="flatten", device="cpu")

import pytest
import torch

from fpt.config import RunConfig
from fpt.freeze import GROUPS, POLICIES, apply_policy, count_parameters, group_of_parameters, resolve_policy
from fpt.model import InputSpec
from fpt.pipeline import build_model


def test_paper_policy_trains_input_positions_layernorm_output():
    assert resolve_policy("paper") == {"input", "positions", "layernorm", "output"}
    assert resolve_policy("output,layernorm") == {"output", "layernorm"}
    assert resolve_policy("output+input") == {"output", "input"}
    with pytest.raises(ValueError, match="unknown group"):
        resolve_policy("output,bias")


@pytest.mark.parametrize("policy", POLICIES.names())
def test_every_policy_sets_exactly_its_groups(tiny_body_dir, policy):
    spec = InputSpec(seq_len=8, num_classes=3, token_dim=4)
    lora = "lora" in POLICIES.get(policy)
    if lora:
        pytest.importorskip("peft")
    model = build_model(RunConfig(body=tiny_body_dir, init="random", freeze=policy), spec)
    groups = group_of_parameters(model)
    trained = {g for g in POLICIES.get(policy) if "@" not in g}
    for name, p in model.named_parameters():
        if "@" not in "".join(POLICIES.get(policy)) or groups[name] != "attention":
            assert p.requires_grad == (groups[name] in trained), name
    # transformers have no recurrent weights; only a policy with lora adds adapters
    assert set(groups.values()) == set(GROUPS) - {"recurrent"} - (set() if lora else {"lora"})
    apply_policy(model, "output")
    assert {groups[n] for n, p in model.named_parameters() if p.requires_grad} == {"output"}


def test_gpt2_base_counts_match_the_paper():
    """SPEC: GPT-2 base on CIFAR-10 shapes (d_in 16, 64 tokens, 10 classes)."""
    spec = InputSpec(seq_len=64, num_classes=10, token_dim=16)
    counts = count_parameters(build_model(RunConfig(body="gpt2", init="random"), spec))
    assert counts["output"].trainable == 7690
    assert counts["input"].trainable == 13056
    assert counts["positions"].trainable == 49152
    assert counts["layernorm"].in_blocks == 36864
    assert counts["layernorm"].total - counts["layernorm"].in_blocks == 1536
    assert counts["attention"].trainable == 0 and counts["attention"].total == 12 * (768 * 2304 + 2304 + 768 * 768 + 768)


def test_block_selector_trains_only_the_last_attention_layer(tiny_gpt2_dir):
    spec = InputSpec(seq_len=8, num_classes=3, token_dim=4)
    model = build_model(RunConfig(body=tiny_gpt2_dir, init="random", freeze="paper+feedforward+last-attention"), spec)
    attn = {n: p.requires_grad for n, p in model.named_parameters() if ".attn." in n}
    assert attn and all(v == n.startswith("body.blocks.1.") for n, v in attn.items())
    assert resolve_policy("output,attention@0") == {"output", "attention@0"}
    with pytest.raises(ValueError, match="unknown group"):
        resolve_policy("output,attn@0")


def test_stats_init_keeps_each_tensors_mean_and_std(tiny_gpt2_dir):
    from fpt.bodies import BodySpec, build_body

    pre = dict(build_body(BodySpec(tiny_gpt2_dir, "pretrained", seq_len=8)).named_parameters())
    stats = dict(build_body(BodySpec(tiny_gpt2_dir, "stats", seq_len=8, seed=1)).named_parameters())
    w = "blocks.0.attn.c_attn.weight"
    assert not torch.equal(pre[w], stats[w])
    assert abs(pre[w].std().item() - stats[w].std().item()) < 0.1 * pre[w].std().item()
    assert abs(pre[w].mean().item() - stats[w].mean().item()) < 0.01


def test_checkpoint_init_loads_a_saved_body(tiny_gpt2_dir, tmp_path):
    from fpt.bodies import BodySpec, build_body
    from fpt.bodies.init import save_body
    from fpt.errors import BodyUnavailableError

    spec = BodySpec(tiny_gpt2_dir, "random", seq_len=6, seed=3)
    saved = build_body(spec)
    with torch.no_grad():
        saved.blocks[0].attn.c_attn.weight.add_(1.0)
    save_body(saved, spec, tmp_path / "b")
    loaded = build_body(BodySpec(tiny_gpt2_dir, f"checkpoint:{tmp_path / 'b'}", seq_len=10, seed=0))
    torch.testing.assert_close(loaded.blocks[0].attn.c_attn.weight, saved.blocks[0].attn.c_attn.weight)
    torch.testing.assert_close(loaded.positions[:6], saved.positions)  # rows both have
    with pytest.raises(BodyUnavailableError, match="fpt pretrain"):
        build_body(BodySpec(tiny_gpt2_dir, f"checkpoint:{tmp_path / 'nothing'}", seq_len=6))


def test_first_layers_only_drops_the_rest(tiny_gpt2_dir):
    spec = InputSpec(seq_len=8, num_classes=3, token_dim=4)
    model = build_model(RunConfig(body=tiny_gpt2_dir, init="random", layers=1), spec)
    assert len(model.body.blocks) == 1 and model.layers == 1
    assert not any(n.startswith("body.blocks.1.") for n, _ in model.named_parameters())

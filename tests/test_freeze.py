import pytest

from fpt.config import RunConfig
from fpt.experiment import build_model
from fpt.freeze import GROUPS, POLICIES, apply_policy, count_parameters, group_of_parameters, resolve_policy
from fpt.model import InputSpec


def test_paper_policy_trains_input_positions_layernorm_output():
    assert resolve_policy("paper") == {"input", "positions", "layernorm", "output"}
    assert resolve_policy("output,layernorm") == {"output", "layernorm"}
    assert resolve_policy("output+input") == {"output", "input"}
    with pytest.raises(ValueError, match="unknown group"):
        resolve_policy("output,bias")


@pytest.mark.parametrize("policy", POLICIES.names())
def test_every_policy_sets_exactly_its_groups(tiny_body_dir, policy):
    spec = InputSpec(seq_len=8, num_classes=3, token_dim=4)
    model = build_model(RunConfig(body=tiny_body_dir, init="random", freeze=policy), spec)
    groups = group_of_parameters(model)
    trained = POLICIES.get(policy)
    for name, p in model.named_parameters():
        assert p.requires_grad == (groups[name] in trained), name
    assert set(groups.values()) == set(GROUPS) - {"recurrent"}  # transformers have no recurrent weights
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

"""Freeze policies over named parameter groups, and per-group parameter counts.

Groups: input, positions, layernorm, attention, feedforward, recurrent (declared by each
body family as regexes over its parameter names), output, and lora (adapters a policy with it adds
to the body: fpt.bodies.lora). A policy is the set of groups that train.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from torch import nn

from fpt.bodies.lora import LORA_GROUP, is_lora_parameter
from fpt.errors import ConfigError
from fpt.registry import Registry

# "recurrent" holds the weights of recurrent (LSTM) bodies, which have no attention/feed-forward.
GROUPS = ("input", "positions", "layernorm", "attention", "feedforward", "recurrent", "output", "lora")
# A closed-form fit's ppv thresholds (fpt.feature_map) are fitted with its head, and saved with it: output.
MODEL_GROUPS = {"input": r"^input\.", "output": r"^(head|thresholds)\."}

POLICIES: Registry = Registry("freeze policy")
PAPER = {"input", "positions", "layernorm", "output"}
for _name, _groups in {
    "paper": PAPER,  # the paper's FPT
    "output": {"output"},  # Tables 10, 12, 18-21: a linear probe
    "output+input": {"output", "input"},  # Table 16: layer norm frozen
    "output+positions": {"output", "positions"},
    "output+layernorm": {"output", "layernorm"},  # Table 11
    "output+layernorm+input": {"output", "layernorm", "input"},  # Tables 19/21, successive
    "paper-input-frozen": PAPER - {"input"},  # input layer kept at its orthogonal init
    "paper-layernorm-frozen": PAPER - {"layernorm"},
    "paper+feedforward": PAPER | {"feedforward"},  # Table 13
    "paper+attention": PAPER | {"attention"},
    "paper+both": PAPER | {"attention", "feedforward"},
    "paper+feedforward+last-attention": PAPER | {"feedforward", "attention@-1"},  # Table 14
    "paper+lora": PAPER | {"lora"},  # own data: low-rank adapters in the attention (fpt.bodies.lora)
    "none": set(GROUPS) - {"lora"},  # everything trains: a transformer trained from its init
}.items():
    POLICIES.register(_name)(frozenset(_groups))

# "group@i" selects a group's parameters in block i only (negative i counts from the end).
_SELECTOR = re.compile(r"^(?P<group>[a-z]+)(@(?P<block>-?\d+))?$")
BLOCK_PARAM = re.compile(r"^body\.blocks\.(\d+)\.")  # a parameter of block i


def resolve_policy(policy: str) -> frozenset[str]:
    """A registered policy name, or groups (optionally ``group@block``) joined by ',' or '+'."""
    if policy in POLICIES:
        return POLICIES.get(policy)
    parts = frozenset(g.strip() for g in re.split(r"[,+]", policy) if g.strip())
    bad = sorted(p for p in parts if not (m := _SELECTOR.match(p)) or m["group"] not in GROUPS)
    if not parts or bad:
        raise ConfigError(
            f"freeze policy {policy!r}: unknown group(s) {bad}. Use a policy "
            f"({', '.join(POLICIES.names())}) or groups from {', '.join(GROUPS)} joined by ',' "
            "(group@i limits a group to block i, e.g. attention@-1)"
        )
    return parts


def policy_groups(policy: str) -> frozenset[str]:
    """The groups a policy trains anywhere, block selectors dropped (``attention@-1`` -> ``attention``)."""
    return frozenset(_SELECTOR.match(g)["group"] for g in resolve_policy(policy))


def is_trained(name: str, group: str, trained: frozenset[str], num_blocks: int) -> bool:
    if group in trained:
        return True
    block = BLOCK_PARAM.match(name)
    if block is None:
        return False
    i = int(block[1])
    return f"{group}@{i}" in trained or f"{group}@{i - num_blocks}" in trained


def group_of_parameters(model: nn.Module) -> dict[str, str]:
    """Parameter name -> group, checking that every parameter is in exactly one group."""
    patterns = {g: re.compile(p) for g, p in MODEL_GROUPS.items()}
    body_patterns = {g: re.compile(p) for g, p in model.body.groups.items()}
    out: dict[str, str] = {}
    for name, _ in model.named_parameters():
        if is_lora_parameter(name):  # inside an attention projection, so the body's regexes match it too
            hits = [LORA_GROUP]
        elif name.startswith("body."):
            hits = [g for g, p in body_patterns.items() if p.search(name[len("body."):])]
        else:
            hits = [g for g, p in patterns.items() if p.search(name)]
        if len(hits) != 1:
            raise RuntimeError(f"parameter {name!r} matches groups {hits}; body group regexes must cover it exactly once")
        out[name] = hits[0]
    return out


def apply_policy(model: nn.Module, policy: str) -> frozenset[str]:
    """Set requires_grad from the policy; returns the trained groups.

    A body trained from scratch (``no-lm``: nothing in it is pretrained) names the groups that train
    under every policy in its ``always_trained``."""
    trained = resolve_policy(policy) | getattr(model.body, "always_trained", frozenset())
    groups = group_of_parameters(model)
    num_blocks = len(model.body.blocks)
    for name, param in model.named_parameters():
        param.requires_grad_(is_trained(name, groups[name], trained, num_blocks))
    return trained


@dataclass(frozen=True)
class GroupCount:
    trainable: int
    total: int
    in_blocks: int  # parameters inside the body's blocks (vs. embeddings / final norm)


def count_parameters(model: nn.Module) -> dict[str, GroupCount]:
    """Per-group counts (the paper's accounting: only the position rows the task uses)."""
    groups = group_of_parameters(model)
    counts = {g: [0, 0, 0] for g in GROUPS}
    for name, param in model.named_parameters():
        c = counts[groups[name]]
        n = param.numel()
        c[0] += n if param.requires_grad else 0
        c[1] += n
        c[2] += n if name.startswith("body.blocks.") else 0
    return {g: GroupCount(*c) for g, c in counts.items()}


def parameter_totals(counts: dict[str, GroupCount] | nn.Module) -> GroupCount:
    """Every group together (trainable, total, in_blocks): of a model, or of its ``count_parameters``."""
    if isinstance(counts, nn.Module):
        counts = count_parameters(counts)
    return GroupCount(*(sum(getattr(c, f) for c in counts.values()) for f in ("trainable", "total", "in_blocks")))

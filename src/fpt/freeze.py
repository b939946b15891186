"""Freeze policies over named parameter groups, and per-group parameter counts.

Groups: input, positions, layernorm, attention, feedforward, recurrent (declared by each
body family as regexes over its parameter names) and output. A policy is the set of
groups that train.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from torch import nn

from fpt.registry import Registry

# "recurrent" holds the weights of recurrent (LSTM) bodies, which have no attention/feed-forward.
GROUPS = ("input", "positions", "layernorm", "attention", "feedforward", "recurrent", "output")
MODEL_GROUPS = {"input": r"^input\.", "output": r"^head\."}

POLICIES: Registry = Registry("freeze policy")
for _name, _groups in {
    "paper": {"input", "positions", "layernorm", "output"},
    "output": {"output"},
    "output+input": {"output", "input"},
    "output+positions": {"output", "positions"},
    "output+layernorm": {"output", "layernorm"},
    "output+layernorm+input": {"output", "layernorm", "input"},
    "paper+feedforward": {"input", "positions", "layernorm", "output", "feedforward"},
    "paper+attention": {"input", "positions", "layernorm", "output", "attention"},
    "paper+both": {"input", "positions", "layernorm", "output", "attention", "feedforward"},
    "none": set(GROUPS),
}.items():
    POLICIES.register(_name)(frozenset(_groups))


def resolve_policy(policy: str) -> frozenset[str]:
    """A registered policy name, or a comma/plus-separated list of groups."""
    if policy in POLICIES:
        return POLICIES.get(policy)
    groups = frozenset(g.strip() for g in re.split(r"[,+]", policy) if g.strip())
    unknown = groups - set(GROUPS)
    if not groups or unknown:
        raise ValueError(
            f"freeze policy {policy!r}: unknown group(s) {sorted(unknown)}. Use a policy "
            f"({', '.join(POLICIES.names())}) or groups from {', '.join(GROUPS)} joined by ','"
        )
    return groups


def group_of_parameters(model: nn.Module) -> dict[str, str]:
    """Parameter name -> group, checking that every parameter is in exactly one group."""
    patterns = {g: re.compile(p) for g, p in MODEL_GROUPS.items()}
    body_patterns = {g: re.compile(p) for g, p in model.body.groups.items()}
    out: dict[str, str] = {}
    for name, _ in model.named_parameters():
        if name.startswith("body."):
            hits = [g for g, p in body_patterns.items() if p.search(name[len("body."):])]
        else:
            hits = [g for g, p in patterns.items() if p.search(name)]
        if len(hits) != 1:
            raise RuntimeError(f"parameter {name!r} matches groups {hits}; body group regexes must cover it exactly once")
        out[name] = hits[0]
    return out


def apply_policy(model: nn.Module, policy: str) -> frozenset[str]:
    """Set requires_grad from the policy; returns the trained groups."""
    trained = resolve_policy(policy)
    groups = group_of_parameters(model)
    for name, param in model.named_parameters():
        param.requires_grad_(groups[name] in trained)
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

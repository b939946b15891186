"""Checks a dry run makes on every cell without data or weights: what would fail minutes into a real run.

The body's architecture is built with ``init=random`` on the meta device (no memory, no
weights, no network: every registered body has its config offline), so ``layers`` is
checked against the body's real depth, and the freeze policy and task options are parsed.
"""

from __future__ import annotations

import functools

from fpt.config import RunConfig, from_dict
from fpt.errors import ConfigError


@functools.lru_cache(maxsize=64)
def body_depth(body: str) -> int | str:
    """Number of blocks of ``body`` (its random-init architecture), or why it cannot be known offline."""
    import torch

    from fpt.bodies import BodySpec, build_body

    try:
        with torch.device("meta"):
            built = build_body(BodySpec(body, "random", seq_len=8, dropout=0.0))
    except Exception as exc:  # noqa: BLE001 - a hub id without a cached config: not checkable offline
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"
    return len(built.blocks)


def check_config(config: RunConfig) -> list[str]:
    """Errors in a cell's config that only show when the run starts; [] when it is sound."""
    from fpt.freeze import resolve_policy
    from fpt.tasks import TASKS

    errors = []
    try:
        task = TASKS.get(config.task)
        from_dict(task.Options, config.task_options, where=f"task {config.task!r} options")
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        errors.append(str(exc))
    try:
        resolve_policy(config.freeze)
    except ConfigError as exc:
        errors.append(str(exc))
    if config.layers is not None:
        depth = body_depth(config.body)
        if isinstance(depth, int) and not 1 <= config.layers <= depth:
            errors.append(f"layers={config.layers} must be in 1..{depth} for body {config.body!r} ({depth} blocks)")
    return errors

"""Frozen bodies. Adding one is a new module here with a registry decorator; nothing else."""

from __future__ import annotations

from fpt.bodies.base import BODIES, FAMILIES, Body, BodySpec, BodyUnavailableError
from fpt.registry import import_submodules

import_submodules(__name__)


def build_body(spec: BodySpec) -> Body:
    """A body by registered name (``gpt2``, ``minilm``, ...), hub id or local directory.

    ``spec.init`` is pretrained, random, stats or checkpoint:PATH (see fpt.bodies.init).
    """
    from fpt.bodies.hub import load_config, load_model
    from fpt.bodies.init import build_spec, finish_init

    base = build_spec(spec)
    if spec.name in BODIES:
        return finish_init(BODIES.get(spec.name)(base), spec)
    config = load_config(spec.name)
    family = FAMILIES.get(config.model_type)
    return finish_init(family(load_model(spec.name, base.init, spec.seed, config), base), spec)


__all__ = ["BODIES", "FAMILIES", "Body", "BodySpec", "BodyUnavailableError", "build_body"]

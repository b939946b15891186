"""Frozen bodies. Adding one is a new module here with a registry decorator; nothing else."""

from __future__ import annotations

from fpt.bodies.base import BODIES, FAMILIES, Body, BodySpec, BodyUnavailableError
from fpt.registry import import_submodules

import_submodules(__name__)


def build_body(spec: BodySpec) -> Body:
    """A body by registered name (``gpt2``, ``minilm``, ...), hub id or local directory."""
    from fpt.bodies.hub import load_config, load_model

    if spec.name in BODIES:
        return BODIES.get(spec.name)(spec)
    config = load_config(spec.name)
    family = FAMILIES.get(config.model_type)
    return family(load_model(spec.name, spec.init, spec.seed, config), spec)


__all__ = ["BODIES", "FAMILIES", "Body", "BodySpec", "BodyUnavailableError", "build_body"]

"""Frozen bodies. Adding one is a new module here with a registry decorator; nothing else."""

from __future__ import annotations

from pathlib import Path

from fpt.bodies.base import BODIES, FAMILIES, Body, BodySpec, TooManyPositions
from fpt.errors import BodyUnavailableError
from fpt.registry import import_submodules

import_submodules(__name__)


def build_body(spec: BodySpec) -> Body:
    """A body by registered name (``gpt2``, ``minilm``, ...), hub id or local directory.

    ``spec.init`` is pretrained, random, stats or checkpoint:PATH (see fpt.bodies.init).
    """
    from fpt.bodies.activations import use_fused_activations
    from fpt.bodies.hub import load_config, load_model
    from fpt.bodies.init import build_spec, finish_init

    base = build_spec(spec)
    if spec.name in BODIES:
        body = BODIES.get(spec.name)(base)
    else:
        config = load_config(spec.name)
        body = FAMILIES.get(config.model_type)(load_model(spec.name, base.init, spec.seed, config), base)
    use_fused_activations(body)
    return finish_init(body, spec)


def located(name: str) -> str:
    """A body given as a relative local folder, as the absolute folder: it means the directory the run was started
    in, as --data does, so that a run's config.yaml names the folder and fpt eval and predict from another directory
    (or on a moved run) load it, not 'not in the local Hugging Face cache'. A registered name (minilm, gpt2) stays a
    name, as ``build_body`` reads it before any folder of that name; a hub id with no such folder stays an id."""
    local = Path(name).expanduser()
    if name in BODIES or local.is_absolute() or not local.is_dir():
        return name
    return str(local.absolute())


__all__ = ["BODIES", "FAMILIES", "Body", "BodySpec", "BodyUnavailableError", "TooManyPositions", "build_body", "located"]

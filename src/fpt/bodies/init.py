"""Initialisations beyond pretrained/random: pretrained statistics only, and saved bodies.

``stats``: every body tensor is redrawn from a Gaussian with the pretrained tensor's own
mean and standard deviation (the paper's Table 9), so only per-layer scale survives.
``checkpoint:PATH``: a body whose every parameter was trained by ``fpt pretrain``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from torch import nn

from fpt.bodies.base import BodySpec
from fpt.errors import BodyUnavailableError, option
from fpt.rundir import BODY_FILE, BODY_META

CHECKPOINT_PREFIX = "checkpoint:"


def init_located(init: str) -> str:
    """``checkpoint:PATH`` with a relative PATH, as the absolute PATH: it means the directory the run was started in,
    as --data and a --body folder do, so that a run's config.yaml names the saved body and fpt predict, eval and
    --resume from another directory (or on a moved run) load it, not 'PATH/body.safetensors does not exist'. Always a
    path, never a name: made absolute whether or not it exists yet (loading it says so). Any other init as given."""
    if not init.startswith(CHECKPOINT_PREFIX):
        return init
    path = Path(init[len(CHECKPOINT_PREFIX):]).expanduser()
    return init if path.is_absolute() else f"{CHECKPOINT_PREFIX}{path.absolute()}"


def base_init(init: str) -> str:
    """The init the underlying body is built with before any resampling or loading."""
    if init == "stats":
        return "pretrained"
    if init.startswith(CHECKPOINT_PREFIX):
        return "random"
    return init


@torch.no_grad()
def resample_with_statistics(body: nn.Module, seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    for _, param in sorted(body.named_parameters(), key=lambda item: item[0]):
        mean, std = param.mean().item(), (param.std().item() if param.numel() > 1 else 0.0)
        param.copy_(torch.randn(param.shape, generator=gen) * std + mean)


def save_body(body: nn.Module, spec: BodySpec, path: Path) -> None:
    """Write a body for ``--init checkpoint:PATH`` (all its tensors, plus how to rebuild it)."""
    from fpt import rundir

    path.mkdir(parents=True, exist_ok=True)
    tensors = {n: t.detach().cpu().contiguous() for n, t in body.state_dict().items()}
    meta = {"body": spec.name, "seq_len": str(spec.seq_len), "format": "fpt-body-1"}
    # body.json first, the tensors last: readers take BODY_FILE's presence to mean the body is complete,
    # and each file is written to a temporary name, fsynced and renamed, so a kill never leaves half of one.
    rundir.write_text(path / BODY_META, json.dumps({"body": spec.name, "seq_len": spec.seq_len}, indent=1))
    rundir.write_with(path / BODY_FILE, lambda tmp: save_file(tensors, tmp, metadata=meta))


@torch.no_grad()
def load_saved_body(body: nn.Module, spec: BodySpec, path: Path) -> None:
    """Copy a saved body's tensors into a freshly built body of the same architecture.

    Position tables may differ in length between the pretraining task and this one: the
    rows both have are copied, extra rows keep their fresh initialisation.
    """
    file = path / BODY_FILE
    init = option("init", f"checkpoint:{path}")
    if not file.is_file():
        raise BodyUnavailableError(f"{init}: {file} does not exist; write one with fpt pretrain")
    try:
        saved_name = json.loads((path / BODY_META).read_text())["body"] if (path / BODY_META).is_file() else None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BodyUnavailableError(f"{init}: {path / BODY_META} is not fpt pretrain's {BODY_META} "
                                   f"({type(exc).__name__}); write the checkpoint again with fpt pretrain") from None
    if saved_name is not None and saved_name != spec.name:
        raise BodyUnavailableError(
            f"{init} holds a {saved_name!r} body but {option('body')} is {spec.name!r}; use "
            f"{option('body', saved_name)}")
    try:
        tensors = load_file(file)
    except (SafetensorError, OSError) as exc:  # e.g. a pickle renamed .safetensors: never unpickled
        raise BodyUnavailableError(f"{init}: {file} is not a safetensors file ({str(exc).splitlines()[0]}); "
                                   "write it with fpt pretrain") from None
    own = body.state_dict()
    missing = sorted(set(own) - set(tensors))
    if missing:
        raise BodyUnavailableError(f"{file} lacks tensors {missing[:5]} of body {spec.name!r}: saved from another architecture")
    for name, target in own.items():
        source = tensors[name]
        if name.endswith("positions") and source.shape[1:] == target.shape[1:]:
            rows = min(source.shape[0], target.shape[0])
            target[:rows].copy_(source[:rows])
        elif source.shape != target.shape:
            raise BodyUnavailableError(f"{file}: {name} has shape {tuple(source.shape)}, body expects {tuple(target.shape)}")
        else:
            target.copy_(source)


def finish_init(body: nn.Module, spec: BodySpec) -> nn.Module:
    if spec.init == "stats":
        resample_with_statistics(body, spec.seed)
    elif spec.init.startswith(CHECKPOINT_PREFIX):
        load_saved_body(body, spec, Path(spec.init[len(CHECKPOINT_PREFIX):]))
    return body


def build_spec(spec: BodySpec) -> BodySpec:
    return replace(spec, init=base_init(spec.init))

"""Checkpoints: only the trained parameters (safetensors), plus what resuming needs.

A checkpoint directory holds
    trainable.safetensors  trained tensors; metadata: body fingerprint and run config
    optimizer.safetensors  Adam moments by parameter name (resume only)
    state.json             step, best accuracy, RNG state (resume only)
and is written to a temporary directory first, then swapped in, so a kill at any
moment leaves either the old or the new checkpoint, never half of one.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file
from torch import nn


class CheckpointError(RuntimeError):
    """A checkpoint that is missing, corrupt, or belongs to another body."""


def trainable_state(model: nn.Module) -> dict[str, torch.Tensor]:
    return {n: p.detach().cpu().contiguous() for n, p in model.named_parameters() if p.requires_grad}


def fingerprint(model: nn.Module) -> str:
    """SHA-256 of every frozen tensor (names, shapes, values): which body a checkpoint needs."""
    h = hashlib.sha256()
    frozen = [(n, p) for n, p in model.named_parameters() if not p.requires_grad]
    frozen += list(model.named_buffers())
    for name, tensor in sorted(frozen, key=lambda item: item[0]):
        t = tensor.detach().cpu().contiguous()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()[:16]


def _optimizer_tensors(model: nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, torch.Tensor]:
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    out: dict[str, torch.Tensor] = {}
    for index, state in optimizer.state_dict()["state"].items():
        for key, value in state.items():
            out[f"{names[index]}::{key}"] = torch.as_tensor(value).detach().cpu().contiguous()
    return out


def save(path: Path, model: nn.Module, config: dict[str, Any], body_fingerprint: str,
         optimizer: torch.optim.Optimizer | None = None, state: dict[str, Any] | None = None) -> None:
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    meta = {"fingerprint": body_fingerprint, "config": json.dumps(config), "format": "fpt-1"}
    save_file(trainable_state(model), tmp / "trainable.safetensors", metadata=meta)
    if optimizer is not None:
        save_file(_optimizer_tensors(model, optimizer), tmp / "optimizer.safetensors")
        rng = {"torch_cpu": torch.get_rng_state()}
        if torch.cuda.is_available():
            rng.update({f"torch_cuda{i}": s for i, s in enumerate(torch.cuda.get_rng_state_all())})
        save_file(rng, tmp / "rng.safetensors")
    if state is not None:
        (tmp / "state.json").write_text(json.dumps(state, indent=1))
    old = path.with_name(path.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if path.exists():
        path.rename(old)
    tmp.rename(path)
    shutil.rmtree(old, ignore_errors=True)


def read_metadata(path: Path) -> dict[str, str]:
    from safetensors import safe_open

    file = Path(path) / "trainable.safetensors"
    if not file.is_file():
        raise CheckpointError(f"{file} does not exist: not a checkpoint directory (expected trainable.safetensors)")
    with safe_open(str(file), "pt") as f:
        return dict(f.metadata() or {})


def load_trainable(path: Path, model: nn.Module, expected_fingerprint: str) -> None:
    """Load trained tensors into ``model`` after checking the frozen body is the same."""
    file = Path(path) / "trainable.safetensors"
    meta = read_metadata(path)
    if meta.get("fingerprint") != expected_fingerprint:
        raise CheckpointError(
            f"{file} was trained on a frozen body with fingerprint {meta.get('fingerprint')!r}, but the "
            f"rebuilt body has {expected_fingerprint!r}: the body weights, init seed or architecture differ "
            "(a different --body/--init/--seed, or changed weights in the cache)"
        )
    tensors = load_file(file)
    params = dict(model.named_parameters())
    expected = {n for n, p in params.items() if p.requires_grad}
    if set(tensors) != expected:
        missing, extra = sorted(expected - set(tensors)), sorted(set(tensors) - expected)
        raise CheckpointError(f"{file}: trained tensors do not match the model (missing {missing[:5]}, unexpected {extra[:5]})")
    with torch.no_grad():
        for name, tensor in tensors.items():
            if params[name].shape != tensor.shape:
                expected_shape = tuple(params[name].shape)
                raise CheckpointError(f"{file}: {name} has shape {tuple(tensor.shape)}, model expects {expected_shape}")
            params[name].copy_(tensor)


def load_resume_state(path: Path, model: nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """Restore optimizer moments and RNG; returns state.json."""
    path = Path(path)
    try:
        state = json.loads((path / "state.json").read_text())
        tensors = load_file(path / "optimizer.safetensors")
        rng = load_file(path / "rng.safetensors")
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{path}: cannot resume, checkpoint incomplete or corrupt ({exc})") from None
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    sd = optimizer.state_dict()
    sd["state"] = {}
    for index, name in enumerate(names):
        entry = {k.split("::", 1)[1]: v for k, v in tensors.items() if k.split("::", 1)[0] == name}
        if entry:
            sd["state"][index] = entry
    optimizer.load_state_dict(sd)
    torch.set_rng_state(rng["torch_cpu"])
    cuda = [rng[k] for k in sorted(rng) if k.startswith("torch_cuda")]
    if cuda and torch.cuda.is_available() and len(cuda) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(cuda)
    return state

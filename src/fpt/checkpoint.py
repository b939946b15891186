"""Checkpoints: only the trained parameters (safetensors), plus what resuming needs.

A run directory has two checkpoint *slots*, ``checkpoint/`` (the latest step, for
``--resume``) and ``best/`` (the validation-selected parameters, for ``fpt eval``). Each
slot holds versioned, immutable checkpoint directories and a pointer to the current one:

    checkpoint/current                        "step-00000100": the committed version
    checkpoint/step-00000100/                 the current version
        trainable.safetensors  trained tensors; metadata: body fingerprint and run config
        optimizer.safetensors  Adam moments by parameter name (latest only)
        rng.safetensors        RNG state (latest only)
        state.json             format, step, sha256 of every file above, training state
    checkpoint/step-00000090/                 the previous version, kept as a fallback

A new version is written to a hidden temporary directory (every file fsynced), renamed
into place in one step, and committed by atomically replacing the pointer file; only then
is anything older than the previous version deleted. A kill at any moment therefore
leaves at least one complete version. Loading verifies the checksums (and the state
file's own digest) before anything is used; a version that fails falls back to the
previous one with a warning, and when none is left the error names the file and the
remedy. Every user finds checkpoints through ``find`` / ``has_checkpoint`` /
``rundir.checkpoint_paths`` rather than hard-coding paths; the names are ``fpt.rundir``'s.

Run directories written before versioning (``checkpoint/`` holding the files directly, and
``checkpoint.tmp`` / ``checkpoint.old`` left by a killed save) are still read, and are
replaced by the versioned layout at the next save.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import struct
import sys
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load as load_bytes
from safetensors.torch import save as save_bytes
from torch import nn

from fpt.errors import CheckpointError, ConfigError, option
from fpt.rundir import (
    BEST,
    LATEST,
    OPTIMIZER,
    POINTER,
    RNG,
    SLOTS,
    STATE,
    TRAINABLE,
    TrainState,
    clear_debris,
    fsync_dir,
    tmp_name,
    write_error,
    write_text,
)

FORMAT = "fpt-2"
KEEP = 2  # the current version and the previous one
_VERSION = re.compile(r"^step-(\d{8,})(?:\.(\d+))?$")
_LEGACY_FILES = (TRAINABLE, OPTIMIZER, RNG, STATE)

__all__ = ["BEST", "LATEST", "CheckpointError", "committed_step", "find", "fingerprint", "has_checkpoint",
           "load_resume_state", "load_trainable", "read_metadata", "rewind", "save", "slot", "trainable_state",
           "version_step"]


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


def _digest(doc: dict[str, Any]) -> str:
    body = {k: v for k, v in doc.items() if k != "digest"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


# ---------------------------------------------------------------------------------------------- layout

def slot(run_dir: str | Path, which: str) -> Path:
    """The slot directory of a run: ``which`` is 'checkpoint' (latest) or 'best'."""
    if which not in SLOTS:
        raise ConfigError(f"which={which!r}: expected 'checkpoint' or 'best'")
    return Path(run_dir) / which


def _version_key(path: Path) -> tuple[int, int] | None:
    m = _VERSION.match(path.name)
    return (int(m.group(1)), int(m.group(2) or 0)) if m and path.is_dir() else None


def _versions(slot_dir: Path) -> list[Path]:
    """Version directories, newest first."""
    if not slot_dir.is_dir():
        return []
    found = [(key, p) for p in slot_dir.iterdir() if (key := _version_key(p)) is not None]
    return [p for _, p in sorted(found, reverse=True)]


def _pointer_target(slot_dir: Path) -> Path | None:
    try:
        name = (slot_dir / POINTER).read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None
    target = slot_dir / name
    return target if _VERSION.match(name) and target.is_dir() else None


def _legacy(slot_dir: Path) -> list[Path]:
    """Checkpoints in the pre-versioning layout: the slot itself, then what a killed save left."""
    out = [slot_dir] if (slot_dir / TRAINABLE).is_file() else []
    tmp = slot_dir.with_name(slot_dir.name + ".tmp")
    if (tmp / TRAINABLE).is_file() and ((tmp / STATE).is_file() or slot_dir.name != LATEST):
        out.append(tmp)  # the old save wrote state.json last: with it, the new copy was complete
    old = slot_dir.with_name(slot_dir.name + ".old")
    if (old / TRAINABLE).is_file():
        out.append(old)
    return out


def _candidates(slot_dir: Path) -> list[Path]:
    pointed = _pointer_target(slot_dir)
    versions = _versions(slot_dir)
    first = [pointed] if pointed is not None else []
    return first + [v for v in versions if v != pointed] + _legacy(slot_dir)


def has_checkpoint(run_dir: str | Path, which: str = LATEST) -> bool:
    """Whether the run directory holds any checkpoint in slot ``which`` (complete or not: ``find`` checks)."""
    return bool(_candidates(slot(run_dir, which)))


def committed_step(run_dir: str | Path, which: str = LATEST) -> int | None:
    """The step of slot ``which``'s committed version (None when nothing is committed yet)."""
    try:
        m = _VERSION.match((slot(run_dir, which) / POINTER).read_text().strip())
    except (OSError, UnicodeDecodeError):
        return None
    return int(m.group(1)) if m else None


def version_step(version: Path) -> int | None:
    """The step a checkpoint version's state.json records (None for an old layout without one)."""
    try:
        return int(json.loads((Path(version) / STATE).read_text())["step"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


# ---------------------------------------------------------------------------------------------- saving

def _free_name(slot_dir: Path, step: int) -> str:
    base = f"step-{step:08d}"
    name, n = base, 1
    while (slot_dir / name).exists():  # an abandoned version of this step (resumed from an earlier one)
        n += 1
        name = f"{base}.{n}"
    return name


def _write_synced(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def save(slot_dir: str | Path, model: nn.Module, config: dict[str, Any], body_fingerprint: str,
         optimizer: torch.optim.Optimizer | None = None, state: TrainState | None = None,
         step: int | None = None) -> Path:
    """Write a new version into ``slot_dir`` and commit it; returns the version directory.

    ``state`` (the training state, for resume) gives the step; otherwise ``step`` does.
    """
    slot_dir = Path(slot_dir)
    step = state.step if state is not None else int(step or 0)
    meta = {"fingerprint": body_fingerprint, "config": json.dumps(config), "format": "fpt-1"}
    files = {TRAINABLE: save_bytes(trainable_state(model), metadata=meta)}
    if optimizer is not None:
        files[OPTIMIZER] = save_bytes(_optimizer_tensors(model, optimizer))
        rng = {"torch_cpu": torch.get_rng_state()}
        if torch.cuda.is_available():
            rng.update({f"torch_cuda{i}": s for i, s in enumerate(torch.cuda.get_rng_state_all())})
        files[RNG] = save_bytes(rng)
    doc: dict[str, Any] = {"format": FORMAT, "step": step,
                           "checksums": {n: hashlib.sha256(b).hexdigest() for n, b in files.items()}}
    if state is not None:
        doc["state"] = state.to_json()
    doc["digest"] = _digest(doc)
    files[STATE] = json.dumps(doc, indent=1).encode()

    previous = None
    tmp = None
    try:
        slot_dir.mkdir(parents=True, exist_ok=True)
        clear_debris(slot_dir)
        previous = _pointer_target(slot_dir)
        name = _free_name(slot_dir, step)
        tmp = tmp_name(slot_dir / name)
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        for fname, data in files.items():  # state.json last
            _write_synced(tmp / fname, data)
        fsync_dir(tmp)
        os.rename(tmp, slot_dir / name)
        tmp = None
        fsync_dir(slot_dir)
    except OSError as exc:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        raise _save_error(slot_dir, step, exc, previous) from None
    kept = f"the current checkpoint {previous.name} is intact" if previous else "nothing was replaced"
    write_text(slot_dir / POINTER, name + "\n", kept=kept)  # the commit
    _prune(slot_dir, keep={name, previous.name if previous else None})
    _remove_legacy(slot_dir)
    return slot_dir / name


def _save_error(slot_dir: Path, step: int, exc: OSError, previous: Path | None) -> CheckpointError:
    kept = (f"the newest complete checkpoint {previous} is intact (resume from it once the cause is fixed)"
            if previous is not None else "no earlier checkpoint was changed")
    return write_error(slot_dir / f"step-{step:08d}", exc, kept)


def _prune(slot_dir: Path, keep: set[str | None]) -> None:
    """Delete versions other than ``keep`` (the new one and the previous current one)."""
    kept = {k for k in keep if k}
    versions = _versions(slot_dir)
    if len(kept) < KEEP:  # no previous current one (a lost pointer): keep the newest other version
        other = next((v.name for v in versions if v.name not in kept), None)
        kept |= {other} if other else set()
    for v in versions:
        if v.name not in kept:
            shutil.rmtree(v, ignore_errors=True)


def _remove_legacy(slot_dir: Path) -> None:
    for name in _LEGACY_FILES:
        with contextlib.suppress(FileNotFoundError):
            (slot_dir / name).unlink()
    for suffix in (".tmp", ".old"):
        shutil.rmtree(slot_dir.with_name(slot_dir.name + suffix), ignore_errors=True)


def rewind(run_dir: str | Path, which: str, step: int) -> None:
    """Forget versions of slot ``which`` newer than ``step`` (a resumed run replays those steps)."""
    slot_dir = slot(run_dir, which)
    versions = _versions(slot_dir)
    newer = [v for v in versions if _version_key(v)[0] > step]
    if not newer:
        return
    older = [v for v in versions if _version_key(v)[0] <= step]
    if older:
        write_text(slot_dir / POINTER, older[0].name + "\n")
    else:
        with contextlib.suppress(FileNotFoundError):
            (slot_dir / POINTER).unlink()
    for v in newer:
        shutil.rmtree(v, ignore_errors=True)


def commit(version: Path) -> None:
    """Point the slot at ``version`` (after resuming from a fallback)."""
    version = Path(version)
    if _version_key(version) is not None and _pointer_target(version.parent) != version:
        write_text(version.parent / POINTER, version.name + "\n")


# ---------------------------------------------------------------------------------------------- loading

class _Verified:
    """A checkpoint version whose files were read and checked."""

    def __init__(self, path: Path, step: int | None, files: dict[str, bytes], state: TrainState | None) -> None:
        self.path, self.step, self.files, self.state = path, step, files, state


def _parse(file: Path, data: bytes) -> dict[str, torch.Tensor]:
    try:
        return load_bytes(data)
    except Exception as exc:  # noqa: BLE001 - safetensors raises its own error type for every kind of damage
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CheckpointError(f"{file} is not a valid safetensors file ({len(data)} bytes: {why}): "
                              "truncated or corrupt") from None


def _read(file: Path) -> bytes:
    try:
        return file.read_bytes()
    except FileNotFoundError:
        raise CheckpointError(f"{file} is missing: the checkpoint is incomplete") from None
    except OSError as exc:
        raise CheckpointError(f"{file} cannot be read ({exc.strerror or exc})") from None


def _verify(path: Path) -> _Verified:
    """Read and check a version (or legacy) directory; CheckpointError naming the file if it fails."""
    state_file = path / STATE
    if _version_key(path) is None:
        return _verify_legacy(path)
    raw = _read(state_file)
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{state_file} is not valid JSON ({exc}): truncated or corrupt") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise CheckpointError(f"{state_file} is not an fpt checkpoint state (format {FORMAT} expected)")
    if doc.get("digest") != _digest(doc):
        raise CheckpointError(f"{state_file} does not match its digest: corrupt")
    step, sums = doc.get("step"), doc.get("checksums")
    if isinstance(step, bool) or not isinstance(step, int) or step < 0 or not isinstance(sums, dict) or TRAINABLE not in sums:
        raise CheckpointError(f"{state_file}: step or checksums missing or malformed")
    files = {}
    for name, expected in sums.items():
        if not isinstance(name, str) or "/" in name or name.startswith("."):
            raise CheckpointError(f"{state_file}: bad file name {name!r}")
        data = _read(path / name)
        if hashlib.sha256(data).hexdigest() != expected:
            raise CheckpointError(f"{path / name} does not match its sha256 in state.json ({len(data)} bytes): "
                                  "truncated or corrupt")
        files[name] = data
    state = doc.get("state")
    if state is not None:
        state = TrainState.from_json(state, str(state_file))
        if state.step != step:
            raise CheckpointError(f"{state_file}: training state step {state.step} is not the version's {step}")
    _finite(path / TRAINABLE, _parse(path / TRAINABLE, files[TRAINABLE]))
    return _Verified(path, step, files, state)


def _verify_legacy(path: Path) -> _Verified:
    files = {}
    for name in (TRAINABLE, OPTIMIZER, RNG):
        if (path / name).is_file() or name == TRAINABLE:
            files[name] = _read(path / name)
            tensors = _parse(path / name, files[name])
            if name == TRAINABLE:
                _finite(path / name, tensors)
    state = None
    if (path / STATE).is_file():
        try:
            state = json.loads(_read(path / STATE))
        except (ValueError, UnicodeDecodeError) as exc:
            raise CheckpointError(f"{path / STATE} is not valid JSON ({exc}): truncated or corrupt") from None
        state = TrainState.from_json(state, str(path / STATE))
    return _Verified(path, state.step if state else None, files, state)


def _finite(file: Path, tensors: dict[str, torch.Tensor]) -> None:
    for name, t in tensors.items():
        if t.is_floating_point() and not torch.isfinite(t).all():
            raise CheckpointError(f"{file}: tensor {name} holds NaN or inf values: corrupt")


def _open(path: str | Path, which: str | None = None, step: int | None = None) -> _Verified:
    """The newest complete, verified checkpoint at ``path``.

    ``path`` is a run directory (with ``which``), a slot, a version directory, or a checkpoint
    directory in the old layout. With ``step``, only a version of that step will do.
    """
    path = Path(path)
    if which is not None:
        path = slot(path, which)
    candidates = [path] if _version_key(path) is not None else _candidates(path)
    if step is not None:
        candidates = [c for c in candidates if _version_key(c) is None or _version_key(c)[0] == step]
    if not candidates:
        if not path.exists():
            raise CheckpointError(f"{path / TRAINABLE} does not exist: not a checkpoint directory (none written "
                                  "there by fpt train)")
        what = f" for step {step}" if step is not None else ""
        raise CheckpointError(f"{path} holds no checkpoint{what}")
    failures = []
    for candidate in candidates:
        try:
            found = _verify(candidate)
        except CheckpointError as exc:
            failures.append(str(exc))
            continue
        if step is not None and found.step is not None and found.step != step:
            failures.append(f"{candidate} is step {found.step}, not {step}")
            continue
        if failures:
            print(f"fpt: warning: {failures[0]}; using the previous complete checkpoint {candidate} instead",
                  file=sys.stderr)
        return found
    more = f" (and {len(failures) - 1} older one(s) failed too)" if len(failures) > 1 else ""
    raise CheckpointError(f"{failures[0]}{more}; no complete checkpoint is left in {path}: start the run again "
                          f"with a new {option('out')} (or delete the run directory)")


def find(path: str | Path, which: str | None = None, step: int | None = None) -> Path:
    """The directory of the newest complete, verified checkpoint (see ``_open``)."""
    return _open(path, which, step).path


def _metadata(found: _Verified) -> dict[str, str]:
    data = found.files[TRAINABLE]
    try:
        (size,) = struct.unpack("<Q", data[:8])
        header = json.loads(data[8:8 + size])
    except (struct.error, ValueError) as exc:
        raise CheckpointError(f"{found.path / TRAINABLE}: unreadable header ({exc})") from None
    return dict(header.get("__metadata__") or {})


def read_metadata(path: Path) -> dict[str, str]:
    """The metadata of the trained tensors (body fingerprint, config) of a verified checkpoint."""
    return _metadata(_open(path))


def load_trainable(path: Path, model: nn.Module, expected_fingerprint: str) -> Path:
    """Load trained tensors into ``model`` after checking the frozen body is the same; returns the version used."""
    found = _open(path)
    file = found.path / TRAINABLE
    meta = _metadata(found)
    if meta.get("fingerprint") != expected_fingerprint:
        raise CheckpointError(
            f"{file} was trained on a frozen body with fingerprint {meta.get('fingerprint')!r}, but the "
            f"rebuilt body has {expected_fingerprint!r}: the body weights, init seed or architecture differ "
            f"(a different {'/'.join(option(name) for name in ('body', 'init', 'seed'))}, or changed weights in the "
            "cache)"
        )
    tensors = _parse(file, found.files[TRAINABLE])
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
    return found.path


def load_resume_state(path: Path, model: nn.Module, optimizer: torch.optim.Optimizer) -> TrainState:
    """Restore optimizer moments and RNG; returns the training state (validated)."""
    found = _open(path)
    if found.state is None or OPTIMIZER not in found.files or RNG not in found.files:
        raise CheckpointError(f"{found.path}: cannot resume: it holds no optimizer state and training state "
                              "(a best/ checkpoint?); resume from the run's checkpoint/")
    tensors = _parse(found.path / OPTIMIZER, found.files[OPTIMIZER])
    rng = _parse(found.path / RNG, found.files[RNG])
    if "torch_cpu" not in rng:
        raise CheckpointError(f"{found.path / RNG}: no torch_cpu RNG state")
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    sd = optimizer.state_dict()
    sd["state"] = {}
    for index, name in enumerate(names):
        entry = {k.split("::", 1)[1]: v for k, v in tensors.items() if k.split("::", 1)[0] == name}
        if entry:
            sd["state"][index] = entry
    try:
        optimizer.load_state_dict(sd)
        torch.set_rng_state(rng["torch_cpu"])
    except (ValueError, RuntimeError, KeyError) as exc:
        raise CheckpointError(f"{found.path / OPTIMIZER}: does not fit this model's optimizer ({exc})") from None
    cuda = [rng[k] for k in sorted(rng) if k.startswith("torch_cuda")]
    if cuda and torch.cuda.is_available() and len(cuda) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(cuda)
    return found.state

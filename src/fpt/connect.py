"""Remote services asked once, with a timeout, before any work or lock: a service that does not answer is one
line in seconds naming the setting and the fix, not minutes of a client's retries.

``check_reachable(url_or_host_port, setting, fix)`` opens (and closes) one TCP connection with ``TIMEOUT``
seconds to give; ``fpt.tracking`` asks it for an MLflow server (``http(s)://``), ``fpt.experiments.ray_executor``
for a Ray cluster (``host:port``, ``ray://host:port``, ``auto``). It says nothing about what answers: the
service's own client still reports a wrong service; this only turns silence and refusals into a message.
"""

from __future__ import annotations

import math
import os
import socket
from urllib.parse import urlsplit

from fpt.errors import ConfigError

TIMEOUT = 5.0  # seconds, unless FPT_CONNECT_TIMEOUT gives others (``wait_seconds``)
# What is sent once connected, so that "answers" means the service said something back (a port that accepts and
# stays silent, a black-holing middlebox, is no service): gRPC's HTTP/2 preface with an empty SETTINGS frame (Ray's
# GCS and its ray:// client server reply with their SETTINGS), and an HTTP/1.0 HEAD (an MLflow server replies).
GRPC_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
HTTP_HELLO = b"HEAD / HTTP/1.0\r\nHost: fpt\r\n\r\n"


def host_port(address: str, default_port: int | None = None) -> tuple[str, int] | None:
    """(host, port) of ``http://host:port/...``, ``ray://host:port`` or ``host:port``; None when there is none."""
    text = address.strip()
    try:
        parts = urlsplit(text if "://" in text else f"tcp://{text}")
        host, port = parts.hostname, parts.port  # .port raises ValueError for a port that is not a number
    except ValueError:
        return None
    if port is None:
        port = default_port if default_port is not None else {"http": 80, "https": 443}.get(parts.scheme)
    if not host or port is None:
        return None
    return host, port


def wait_seconds() -> float:
    """The seconds to wait for a service: ``FPT_CONNECT_TIMEOUT`` if set, else ``TIMEOUT``. Read when asked, and
    refused in one line unless a number above 0: read at import, '5s' raised ValueError in any command that imported
    this module (fpt train --log mlflow said 'this is a bug in fpt'), -1 a ValueError of the socket's, and 0 reported
    every server as not answering ('Operation now in progress')."""
    given = os.environ.get("FPT_CONNECT_TIMEOUT", "").strip()
    if not given:
        return TIMEOUT
    try:
        seconds = float(given)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise ConfigError(f"FPT_CONNECT_TIMEOUT={given!r}: give the seconds to wait for a remote service as a number "
                          f"above 0 (FPT_CONNECT_TIMEOUT=10), or unset it to wait {TIMEOUT:g}")
    return seconds


def check_reachable(address: str, setting: str, fix: str, default_port: int | None = None,
                    timeout: float | None = None, hello: bytes | None = None) -> None:
    """A ConfigError unless a TCP connection to ``address`` opens within ``timeout`` seconds (default ``TIMEOUT``)
    and, given ``hello`` (sent once connected), the service answers it with at least one byte in that time.

    ``setting`` names where the address came from (``--address 127.0.0.1:1``, ``MLFLOW_TRACKING_URI=...``) and
    ``fix`` says what to do instead; both go into the one-line message."""
    timeout = wait_seconds() if timeout is None else timeout
    found = host_port(address, default_port)
    if found is None:
        raise ConfigError(f"{setting}: not an address of the form host:port; {fix}")
    host, port = found
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            if hello is None:
                return
            sock.sendall(hello)
            if sock.recv(1):
                return
            why = "it closed the connection without answering"
    except TimeoutError:
        why = f"no answer within {timeout:g} s"
    except OSError as exc:  # refused, unreachable, unknown host, reset
        why = exc.strerror or type(exc).__name__
    raise ConfigError(f"{setting}: nothing answers at {host}:{port} ({why}); {fix}")


__all__ = ["GRPC_HELLO", "HTTP_HELLO", "TIMEOUT", "check_reachable", "host_port", "wait_seconds"]

"""Names from users turned into file names that stay where they are put.

A name built from user text (a task, a body id such as ``org/model``, an init such as
``checkpoint:../..``) must never become a path: ``safe_run_name`` maps any text to one path
component that cannot climb out of its folder, name a hidden file or look like an option.
"""

from __future__ import annotations

import hashlib
import re

MAX_NAME = 120  # characters; longer names are cut and keep a hash of the whole text
_UNSAFE = re.compile(r"[^A-Za-z0-9._+=-]+")
_WINDOWS_RESERVED = re.compile(r"(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?", re.IGNORECASE)


def safe_run_name(*parts: object) -> str:
    """One safe path component made of ``parts`` joined by '-', e.g. ``bit-xor-minilm-checkpoint_..-20250101``.

    Every run of characters other than ASCII letters, digits and ``. _ + = -`` becomes ``_`` (so
    ``/``, ``\\``, ``:``, NUL, spaces and newlines are gone); leading dots and dashes are dropped
    (no ``..``, no hidden file, no ``-option``); an empty result is ``run``; a name over
    ``MAX_NAME`` characters is cut and ends in a hash of the full text, so distinct inputs stay distinct.
    """
    text = "-".join(str(p) for p in parts)
    name = _UNSAFE.sub("_", text).lstrip(".-")
    name = re.sub(r"_{2,}", "_", name) or "run"
    if _WINDOWS_RESERVED.fullmatch(name):
        name = f"run-{name}"
    if len(name) > MAX_NAME:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        name = f"{name[:MAX_NAME - 13].rstrip('.')}-{digest}"
    if name in (".", ".."):  # unreachable after lstrip; kept as the invariant this function promises
        name = "run"
    return name

"""Reading a file fpt may not have written, within bounds: its size before it is read, its values once parsed.

Below every reader: config files (fpt.config) and the run directory's files (fpt.rundir.stored, which keeps each
kind's limit) go through ``read_bytes`` and ``expanded``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fpt.errors import CheckpointError

CONFIG_LIMIT = 4 << 20  # a YAML config file (a run's config.yaml, a user's): larger than fpt writes by far
MAX_NODES = 1_000_000  # a YAML or JSON document's values once aliases are expanded


def read_bytes(path: str | Path, limit: int, error: type[Exception] = CheckpointError) -> bytes:
    """``path``'s bytes, unless it is larger than ``limit``: a file far larger than fpt ever writes is refused
    before it is read."""
    path = Path(path)
    size = path.stat().st_size
    if size > limit:
        raise error(f"{path} holds {size:,} bytes, more than fpt writes in such a file ({limit:,}): not "
                    "fpt's file, or corrupt; restore it or move it away")
    return path.read_bytes()


def expanded(data: Any, path: Any, limit: int = MAX_NODES, error: type[Exception] = CheckpointError) -> Any:
    """``data`` unless it holds more than ``limit`` values once shared ones (YAML aliases) count each time they
    appear: a 'billion laughs' file is a few hundred bytes that every reader would expand without end."""
    stack, seen = [data], 0
    while stack:
        item = stack.pop()
        seen += 1
        if seen > limit:
            raise error(f"{path}: holds more than {limit:,} values once its aliases (&name/*name) are "
                        "expanded: not a file fpt wrote; write the values out, or restore the file")
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return data


__all__ = ["CONFIG_LIMIT", "MAX_NODES", "expanded", "read_bytes"]

"""Steps to converge (the paper's Table 6), with one documented criterion.

A run has converged at the first evaluation whose held-out accuracy is within
``tolerance`` (absolute, default 1 point) of the best held-out accuracy the run reaches.
A run that keeps improving until its last step therefore reports its last steps: read
the figure together with whether the run stopped on target/patience or on its step cap.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

DEFAULT_TOLERANCE = 0.01


def steps_to_converge(history: Sequence[dict[str, Any]], key: str, tolerance: float = DEFAULT_TOLERANCE) -> int | None:
    values = [(row["step"], row[key]) for row in history if key in row]
    if not values:
        return None
    best = max(v for _, v in values)
    return next(step for step, v in values if v >= best - tolerance)

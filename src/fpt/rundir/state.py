"""The training state: where a run stands, as a checkpoint saves it for --resume."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from fpt.errors import CheckpointError


@dataclass
class TrainState:
    """Where a training run stands: what ``fit`` updates each step and a checkpoint saves for ``--resume``
    (state.json's ``state``, one key per field, as the plain dict of older versions wrote it)."""

    step: int = 0
    best_score: float = -1.0  # the selection metric's best: validation accuracy, or R² for regression
    best_loss: float | None = None  # the validation loss there (tie_break=loss); None: unknown (saved before it)
    best_step: int = 0
    steps_to_target: int | None = None
    wall_seconds: float = 0.0
    train_seconds: float = 0.0
    train_examples: int = 0
    evals_since_best: int = 0
    diverged_at: int | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: Any, where: str) -> TrainState:
        """A saved state, checked field by field (a CheckpointError naming ``where`` and the field)."""
        if not isinstance(doc, dict):
            raise CheckpointError(f"{where}: the training state is not a JSON object")
        if "best_score" not in doc and "best_accuracy" in doc:  # written before it was named for R² too
            doc = {("best_score" if k == "best_accuracy" else k): v for k, v in doc.items()}
        missing = sorted(set(_STATE_TYPES) - _OPTIONAL_STATE - set(doc))
        if missing:
            raise CheckpointError(f"{where}: the training state lacks {missing}: not a resumable checkpoint")
        values = {}
        for name, types in _STATE_TYPES.items():
            value = doc.get(name)
            if isinstance(value, bool) or not isinstance(value, types):
                raise CheckpointError(f"{where}: {name} is {value!r}, expected {' or '.join(t.__name__ for t in types)}")
            values[name] = value
        if values["step"] < 0 or not 0 <= values["best_step"] <= values["step"]:
            raise CheckpointError(f"{where}: step {values['step']} / best_step {values['best_step']} are inconsistent")
        return cls(**values)


# A saved state's fields and their JSON types (a float field accepts an int); best_loss may be absent.
_JSON_TYPES = {"int": (int,), "float": (float, int), "int | None": (int, type(None)),
               "float | None": (float, int, type(None))}
_STATE_TYPES: dict[str, tuple[type, ...]] = {f.name: _JSON_TYPES[f.type] for f in fields(TrainState)}
_OPTIONAL_STATE = {"best_loss"}

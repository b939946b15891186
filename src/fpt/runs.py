"""A run directory as an object: where its files are, what they say, and the trained model.

``fpt train --out DIR`` writes (``fpt.train``; every write atomic, see ``fpt.rundir``):

    DIR/config.yaml      the resolved RunConfig
    DIR/metrics.jsonl    one row per evaluation
    DIR/summary.json     the final scores (written when training ends)
    DIR/data.json        --data runs: the fitted tokeniser, class map and target scaler
    DIR/checkpoint/      the latest trained parameters (for --resume)
    DIR/best/            the validation-selected trained parameters
    DIR/run.lock         the writer lock while a process writes the run

``Run(DIR)`` names those paths once (other modules use these constants rather than spelling
the names), reads the config and summary, rebuilds the trained model ready to predict
(``Run.load``: best/ if present, else the latest checkpoint) and exports it (``Run.export``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fpt.checkpoint import BEST, LATEST, find, has_checkpoint
from fpt.rundir import LOCK_FILE

if TYPE_CHECKING:  # only for annotations: importing them here would make ``fpt.train -> fpt.runs`` circular
    from fpt.config import RunConfig
    from fpt.predictor import Predictor
    from fpt.tasks.user_data import Preprocessing

CONFIG = "config.yaml"
METRICS = "metrics.jsonl"
SUMMARY = "summary.json"
DATA = "data.json"
WHICH = (BEST, LATEST)  # the checkpoint slots a model can be loaded from


@dataclass(frozen=True, init=False)
class Run:
    """The run directory ``path`` (written by ``fpt train``)."""

    path: Path

    def __init__(self, path: str | Path) -> None:  # a str or a Path, kept as a Path
        object.__setattr__(self, "path", Path(path))

    # ------------------------------------------------------------------------------------------ paths

    @property
    def config_path(self) -> Path:
        return self.path / CONFIG

    @property
    def metrics_path(self) -> Path:
        return self.path / METRICS

    @property
    def summary_path(self) -> Path:
        return self.path / SUMMARY

    @property
    def data_path(self) -> Path:
        return self.path / DATA

    @property
    def checkpoint_dir(self) -> Path:
        return self.path / LATEST

    @property
    def best_dir(self) -> Path:
        return self.path / BEST

    @property
    def lock_path(self) -> Path:
        return self.path / LOCK_FILE

    def is_run(self) -> bool:
        """Whether ``path`` holds a run's config (the one file every run directory has)."""
        return self.config_path.is_file()

    # ------------------------------------------------------------------------------------------ reading

    def config(self, overrides: dict[str, Any] | None = None) -> RunConfig:
        """The saved RunConfig, with the changes resuming allows (see ``fpt.train.resume_config``)."""
        from fpt.train import resume_config

        return resume_config(self.path, overrides)

    def summary(self) -> dict[str, Any] | None:
        """summary.json (None while the run has not finished)."""
        if not self.summary_path.is_file():
            return None
        try:
            return json.loads(self.summary_path.read_text())
        except (ValueError, UnicodeDecodeError) as exc:
            from fpt.errors import CheckpointError

            raise CheckpointError(f"{self.summary_path} is not valid JSON ({exc}): truncated or corrupt; "
                                  "re-evaluate with fpt eval or train again") from None

    def metrics(self) -> list[dict[str, Any]]:
        if not self.metrics_path.is_file():
            return []
        return [json.loads(line) for line in self.metrics_path.read_text().splitlines() if line.strip()]

    def preprocessing(self) -> Preprocessing | None:
        """What turns raw inputs into tokens and outputs into labels (``--data`` runs), from data.json."""
        if not self.data_path.is_file():
            return None
        from fpt.errors import CheckpointError
        from fpt.tasks.user_data import Preprocessing

        try:
            return Preprocessing.from_json(json.loads(self.data_path.read_text()))
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
            raise CheckpointError(f"{self.data_path} cannot be read ({type(exc).__name__}: {exc}): truncated or "
                                  "corrupt; train the run again (it holds the fitted tokeniser)") from None

    def checkpoint(self, which: str | None = None) -> Path:
        """The newest complete, verified checkpoint version: ``which`` best or checkpoint; None: best/ if
        the run has one, else the latest."""
        if which is None:
            which = BEST if has_checkpoint(self.path, BEST) else LATEST
        if which not in WHICH:
            raise ValueError(f"which={which!r}: expected 'best' or 'checkpoint'")
        if not self.is_run():
            raise FileNotFoundError(f"{self.config_path} does not exist: {self.path} is not a run directory written "
                                    "by fpt train")
        return find(self.path, which)

    # ------------------------------------------------------------------------------------------ the model

    def load(self, which: str | None = None, device: str | None = None) -> Predictor:
        """The trained model ready to predict (``fpt.predictor.Predictor``), from ``which`` checkpoint.

        --data runs need only this directory and the body (data.json holds the preprocessing); a paper
        task is built once to learn its input shape (its files are read as ``fpt eval`` reads them).
        """
        from fpt.predictor import from_run

        return from_run(self, which, device)

    def export(self, out: str | Path, which: str | None = None, onnx: bool = False, force: bool = False) -> Path:
        """Write a self-contained model directory (``fpt.export``); returns it."""
        from fpt.export import export_run

        return export_run(self, Path(out), which=which, onnx=onnx, force=force)


__all__ = ["CONFIG", "DATA", "METRICS", "SUMMARY", "WHICH", "Run"]

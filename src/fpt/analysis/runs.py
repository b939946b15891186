"""Reading run directories written by ``fit``: config, metrics, summary, and the rebuilt model.

Every analysis reads runs through these functions so that the file layout (config.yaml,
metrics.jsonl, summary.json, checkpoint/, best/) is known in one place besides train.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

# Directories inside a run (or a results tree) that never hold runs of their own.
_NOT_RUNS = {"checkpoint", "best", "checkpoint.tmp", "best.tmp", "checkpoint.old", "best.old", "body"}


def is_run_dir(path: Path) -> bool:
    return (Path(path) / "config.yaml").is_file() and (
        (Path(path) / "metrics.jsonl").is_file() or (Path(path) / "summary.json").is_file())


def find_runs(root: Path) -> list[Path]:
    """Run directories at or below ``root``, sorted by path."""
    root = Path(root)
    if is_run_dir(root):
        return [root]
    found = [p.parent for p in root.rglob("config.yaml") if not _NOT_RUNS & set(p.relative_to(root).parts[:-1])]
    return sorted(p for p in found if is_run_dir(p))


def read_config(run_dir: Path) -> dict[str, Any]:
    path = Path(run_dir) / "config.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: {run_dir} is not a run directory written by fpt train")
    return yaml.safe_load(path.read_text()) or {}


def read_metrics(run_dir: Path) -> list[dict[str, Any]]:
    path = Path(run_dir) / "metrics.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def read_summary(run_dir: Path) -> dict[str, Any] | None:
    path = Path(run_dir) / "summary.json"
    return json.loads(path.read_text()) if path.is_file() else None


def eval_sets(rows: list[dict[str, Any]]) -> list[str]:
    """Held-out set names logged during training (``fit`` logs validation only)."""
    names: list[str] = []
    for row in rows[:1]:
        for key in row:
            if key.endswith("_accuracy") and not key.startswith("train_"):
                names.append(key[: -len("_accuracy")])
    return names


def run_label(config: dict[str, Any]) -> str:
    """What distinguishes runs in a legend: task / body / init / freeze (+ layers)."""
    body = Path(str(config.get("body", "?"))).name  # a local model directory shows as its last part
    init = str(config.get("init", "?"))
    if init.startswith("checkpoint:"):
        init = "checkpoint"  # the full path would swamp the legend
    label = f"{config.get('task', '?')} / {body} / {init} / {config.get('freeze', '?')}"
    return label + (f" / {config['layers']} layers" if config.get("layers") else "")


def load_run(run_dir: Path, which: str = "checkpoint", device: str | None = None):
    """The run's experiment rebuilt with its trained parameters loaded (as ``fpt eval`` does)."""
    import fpt
    from fpt.checkpoint import find, load_trainable
    from fpt.train import resume_config

    if which not in ("checkpoint", "best"):
        raise ValueError(f"which={which!r}: expected 'checkpoint' or 'best'")
    config = resume_config(Path(run_dir), {"device": device} if device else None)
    exp = fpt.build(config)
    load_trainable(find(Path(run_dir), which), exp.model, exp.body_fingerprint)
    return exp

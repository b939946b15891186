"""Reading run directories written by ``fit``: config, metrics, summary, and the rebuilt model.

Every analysis reads runs through these functions; the file names are ``fpt.runs``' (config.yaml,
metrics.jsonl, summary.json, checkpoint/, best/), the one place that spells them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from fpt.runs import CONFIG, METRICS, SUMMARY

# Directories inside a run (or a results tree) that never hold runs of their own.
_NOT_RUNS = {"checkpoint", "best", "checkpoint.tmp", "best.tmp", "checkpoint.old", "best.old", "body"}


def is_run_dir(path: Path) -> bool:
    return (Path(path) / CONFIG).is_file() and (
        (Path(path) / METRICS).is_file() or (Path(path) / SUMMARY).is_file())


def find_runs(root: Path) -> list[Path]:
    """Run directories at or below ``root``, sorted by path."""
    root = Path(root)
    if is_run_dir(root):
        return [root]
    found = [p.parent for p in root.rglob(CONFIG) if not _NOT_RUNS & set(p.relative_to(root).parts[:-1])]
    return sorted(p for p in found if is_run_dir(p))


def read_config(run_dir: Path) -> dict[str, Any]:
    path = Path(run_dir) / CONFIG
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: {run_dir} is not a run directory written by fpt train")
    return yaml.safe_load(path.read_text()) or {}


def read_metrics(run_dir: Path) -> list[dict[str, Any]]:
    path = Path(run_dir) / METRICS
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def read_summary(run_dir: Path) -> dict[str, Any] | None:
    path = Path(run_dir) / SUMMARY
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
    from fpt.checkpoint import load_trainable
    from fpt.runs import Run

    run = Run(run_dir)
    config = run.config({"device": device} if device else None)
    exp = fpt.build(config)
    load_trainable(run.checkpoint(which), exp.model, exp.body_fingerprint)
    return exp

"""Learning curves of one or more runs, from their metrics.jsonl (and, optionally, as TensorBoard events).

Accuracy and loss, training (averaged over the steps since the previous evaluation) and
held-out (the primary evaluation set), against optimizer steps and against wall-clock
seconds: the paper's convergence comparison (Table 6) is about the first, cost about the second.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

from fpt import rundir
from fpt.errors import RunError
from fpt.rundir import CONFIG, METRICS, read_config, read_metrics


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



class TensorBoardUnavailable(RuntimeError):
    """torch.utils.tensorboard cannot be imported (the tensorboard package is missing)."""


def labels(run_dirs: list[Path]) -> list[str]:
    """Legend entries from each run's config; runs that would read the same get their directory name too."""
    base = [run_label(read_config(d)) for d in run_dirs]
    repeated = Counter(base)
    return [f"{b} ({Path(d).name})" if repeated[b] > 1 else b for b, d in zip(base, run_dirs, strict=True)]


SOFTWARE = "fpt plot"  # a PNG's Software text: how fpt plot knows a curves.png as its own


def plot_curves(run_dirs: list[Path], path: Path, title: str = "") -> list[Path]:
    """A 2 x 2 figure (accuracy, loss) x (steps, wall seconds); returns the runs that had metrics to plot."""
    from matplotlib.figure import Figure

    runs = [(Path(d), read_metrics(Path(d))) for d in run_dirs]
    runs = [(d, rows) for d, rows in runs if rows]
    if not runs:
        raise RunError(f"no metrics.jsonl rows in {', '.join(map(str, run_dirs))}: nothing to plot yet")
    names = labels([d for d, _ in runs])
    fig = Figure(figsize=(12, 7.5), dpi=110, layout="constrained")
    axes = fig.subplots(2, 2)
    colours = [f"C{i % 10}" for i in range(len(runs))]
    for (_, rows), name, colour in zip(runs, names, colours, strict=True):
        held_out = (eval_sets(rows) or ["test"])[0]
        for r, x_key in enumerate(("step", "wall_seconds")):
            for c, metric in enumerate(("accuracy", "loss")):
                ax = axes[r][c]
                xs = [row[x_key] for row in rows]
                ax.plot(xs, [row.get(f"train_{metric}") for row in rows], color=colour, lw=1.2, alpha=0.7,
                        label=f"{name}: train")
                ax.plot(xs, [row.get(f"{held_out}_{metric}") for row in rows], color=colour, lw=1.6, ls="--",
                        marker="o", ms=2.5, label=f"{name}: {held_out}")
    losses = [v for _, rows in runs for row in rows for k, v in row.items() if k.endswith("_loss") and v and v > 0]
    for r, x_label in enumerate(("optimizer steps", "wall-clock seconds")):
        for c, metric in enumerate(("accuracy", "loss")):
            ax = axes[r][c]
            ax.set_xlabel(x_label)
            ax.set_ylabel(metric)
            ax.set_title(f"{metric} vs {x_label}", fontsize=10)
            ax.grid(alpha=0.3)
            if metric == "loss" and losses and max(losses) > 20 * min(losses):
                ax.set_yscale("log")  # cross-entropy spans decades once a task is solved
    handles, texts = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, texts, loc="outside lower center", ncol=2 if len(texts) > 4 else 1, fontsize=7)
    fig.suptitle(title or "solid: training (mean since last evaluation); dashed: held-out", fontsize=10)
    if not isinstance(path, (str, Path)):  # a file object (the report's inline figures)
        fig.savefig(path, metadata={"Software": SOFTWARE})
        return [d for d, _ in runs]
    fmt = Path(path).suffix.lstrip(".").lower() or "png"
    # atomic (a link at path is replaced, not written through); a PNG says it is fpt's (fpt plot replaces its own)
    rundir.write_with(path, lambda tmp: fig.savefig(tmp, format=fmt,
                                                    metadata={"Software": SOFTWARE} if fmt == "png" else None))
    return [d for d, _ in runs]


def write_tensorboard(run_dirs: list[Path], log_root: Path | None = None) -> list[Path]:
    """TensorBoard event files for each run (in LOG_ROOT/<run name>, or RUN_DIR/tensorboard): its evaluations, and
    the summary's numbers as ``summary/...`` at its last step, as ``fpt train --log tensorboard`` logs them. The run's
    events already there (an earlier fpt plot, the run's live tracker) are dropped, so that the curves are the run's
    once: appended beside them, every point was shown twice (three times after a second plot), each curve doubling
    back. In RUN_DIR/tensorboard, the run's own, that is a purge; under LOG_ROOT, where another run of the same name
    may have written, only the files named for this run are deleted (``fpt.tracking.drop_own_events``)."""
    from fpt.rundir import read_summary
    from fpt.tracking import after_earlier_events, check_log_dir, drop_own_events, summary_scalars

    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError as exc:
        raise TensorBoardUnavailable(
            f"--tensorboard needs the tensorboard package ({exc}); install it with: pip install tensorboard") from None
    written = []
    logs = {Path(run_dir): log_root / Path(run_dir).name if log_root is not None else Path(run_dir) / "tensorboard"
            for run_dir in run_dirs}
    for log_dir in logs.values():  # every folder before any is written
        check_log_dir(log_dir, "--tensorboard")
    for run_dir, log_dir in logs.items():
        rows = read_metrics(run_dir)
        if not rows:
            continue
        start = _start_time(run_dir, rows)
        if log_root is None:
            # purge_step=0: TensorBoard drops what the folder's earlier files logged (every step), this file states all
            writer = SummaryWriter(log_dir=str(log_dir), purge_step=0 if after_earlier_events(log_dir) else None)
        else:
            points = {(k, row["step"]): v for row in rows for k, v in _scalars(row).items()}
            writer = SummaryWriter(log_dir=str(log_dir), filename_suffix=drop_own_events(log_dir, run_dir, points))
        with writer:
            writer.add_text("config", "    " + (run_dir / CONFIG).read_text().replace("\n", "\n    "), 0)
            for row in rows:
                for key, value in _scalars(row).items():
                    writer.add_scalar(key, value, row["step"], walltime=start + row["wall_seconds"])
            summary = read_summary(run_dir) or {}
            if isinstance(summary.get("steps"), int):
                for key, value in summary_scalars(summary).items():
                    writer.add_scalar(f"summary/{key}", value, summary["steps"])
        written.append(log_dir)
    return written


def _start_time(run_dir: Path, rows: list[dict[str, Any]]) -> float:
    # metrics.jsonl was last written at its last row, wall_seconds after the run started.
    return os.path.getmtime(run_dir / METRICS) - float(rows[-1].get("wall_seconds", 0.0))


def _scalars(row: dict[str, Any]) -> dict[str, float]:
    """metrics.jsonl keys as TensorBoard tags: accuracy/train, loss/test, ..."""
    out = {}
    for key, value in row.items():
        for metric in ("accuracy", "loss"):
            if key.endswith(f"_{metric}") and isinstance(value, (int, float)):
                out[f"{metric}/{key[: -len(metric) - 1]}"] = float(value)
    return out

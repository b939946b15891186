"""Paper-vs-ours tables for a reproduced table: results.csv and report.md."""

from __future__ import annotations

import csv
import json
import platform
import sys
from pathlib import Path
from typing import Any

from fpt.experiments.grid import Table
from fpt.experiments.runner import cell_dir, metric_value

CSV_FIELDS = ["table", "scale", "row", "column", "metric", "paper", "ours", "difference", "status", "task",
              "task_options", "body", "init", "freeze", "layers", "steps", "stopped", "best_test_accuracy",
              "wall_seconds", "epoch_seconds", "feature_cache_seconds", "run_dir", "note"]


def result_rows(table: Table, results: list[dict[str, Any]], out: Path) -> list[dict[str, Any]]:
    rows = []
    for r in results:
        cell, summary = r["cell"], r["summary"] or {}
        ours = metric_value(summary, cell.metric) if summary else None
        cfg = cell.config
        rows.append({
            "table": table.name, "scale": table.scale, "row": cell.row, "column": cell.column, "metric": cell.metric,
            "paper": cell.paper, "ours": None if ours is None else round(ours, 2),
            "difference": None if ours is None or cell.paper is None else round(ours - cell.paper, 2),
            "status": r["status"], "task": cfg.task if cfg else "", "task_options": json.dumps(cfg.task_options) if cfg else "",
            "body": cfg.body if cfg else "", "init": cfg.init if cfg else "", "freeze": cfg.freeze if cfg else "",
            "layers": cfg.layers if cfg else "", "steps": summary.get("steps"), "stopped": summary.get("stopped"),
            "best_test_accuracy": summary.get("best_test_accuracy"), "wall_seconds": summary.get("wall_seconds"),
            "epoch_seconds": summary.get("epoch_seconds"), "feature_cache_seconds": summary.get("feature_cache_seconds"),
            "run_dir": str(cell_dir(out, cell)) if cfg else "", "note": r["note"],
        })
    return rows


def _fmt(value: Any, metric: str) -> str:
    if value is None or value == "":
        return "–"
    return f"{value:.0f}" if metric.startswith("steps") else f"{value:.1f}"


def write_report(table: Table, results: list[dict[str, Any]], out: Path, command: str) -> list[dict[str, Any]]:
    out.mkdir(parents=True, exist_ok=True)
    rows = result_rows(table, results, out)
    with open(out / "results.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    by_cell = {(r["row"], r["column"]): r for r in rows}
    lines = [f"# {table.title}", "", f"Scale `{table.scale}`. Produced by:", "", f"    {command}", "",
             "Each cell: **ours** / paper (ours − paper). Metric: "
             + ", ".join(sorted({r['metric'] for r in rows})) + " (accuracies in %).", ""]
    lines.append("| | " + " | ".join(table.columns) + " |")
    lines.append("|---" * (len(table.columns) + 1) + "|")
    for row in table.rows:
        cells = []
        for col in table.columns:
            r = by_cell[(row, col)]
            if r["status"] != "done":
                cells.append(f"{r['status']} / {_fmt(r['paper'], r['metric'])}")
            else:
                diff = "" if r["difference"] is None else f" ({r['difference']:+.1f})"
                cells.append(f"**{_fmt(r['ours'], r['metric'])}** / {_fmt(r['paper'], r['metric'])}{diff}")
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    lines += ["", "What produced each of our figures (task, options, body, init, freeze):", ""]
    for r in rows:
        if r["status"] == "done":
            lines.append(f"- {r['row']} / {r['column']}: task `{r['task']}` {r['task_options']}, body `{r['body']}`, "
                         f"init `{r['init']}`, freeze `{r['freeze']}`"
                         + (f", layers {r['layers']}" if r["layers"] else "")
                         + f"; {r['steps']} steps, stopped on {r['stopped']}, {r['wall_seconds']} s"
                         + _speed(r))
    skipped = [r for r in rows if r["status"] != "done"]
    if skipped:
        lines += ["", "Not run:", ""]
        lines += [f"- {r['row']} / {r['column']}: {r['status']}: {r['note']}" for r in skipped]
    if table.notes:
        lines += ["", f"Notes: {table.notes}"]
    lines += ["", f"Python {sys.version.split()[0]}, {platform.platform()}, torch {_version('torch')}, "
              f"transformers {_version('transformers')}."]
    (out / "report.md").write_text("\n".join(lines) + "\n")
    return rows


def _speed(r: dict[str, Any]) -> str:
    """Epoch time, and for a cached linear probe the one-time feature pass (Table 10's speed-up)."""
    text = f", {r['epoch_seconds']:.3g} s per training epoch" if r.get("epoch_seconds") else ""
    if r.get("feature_cache_seconds") is not None:
        text += f" on features cached once in {r['feature_cache_seconds']} s"
    return text


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"

"""Paper tables as grids of runs: rows x task columns, at a scale (quick | paper).

A table file (tables/NAME.yaml) names its rows and columns as RunConfig overrides; the
task columns' defaults at each scale live in tasks.yaml. Every cell resolves to a
validated RunConfig, or to a reason it is skipped at that scale.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

from fpt.config import ConfigError, RunConfig, from_dict, merge

SCALES = ("quick", "paper")
SPECIAL = {"column", "metric", "skip", "cells", "paper_row"}
PRETRAIN_PREFIX = "pretrain:"


@dataclass(frozen=True)
class Cell:
    row: str
    column: str
    config: RunConfig | None  # None when skipped
    metric: str
    paper: float | None
    skip: str | None = None
    pretrain_task: str | None = None  # init "pretrain:TASK": a body pretrained on TASK first


@dataclass(frozen=True)
class Table:
    name: str
    title: str
    scale: str
    rows: list[str]
    columns: list[str]
    cells: list[Cell]
    notes: str = ""


def _files():
    return resources.files("fpt.experiments")


def table_names() -> list[str]:
    names = [p.name[: -len(".yaml")] for p in (_files() / "tables").iterdir() if p.name.endswith(".yaml")]
    return sorted(names, key=lambda n: (len(n.split("_")[0]), n))


def paper_results() -> dict[str, Any]:
    return json.loads((_files() / "paper_results.json").read_text())


def _load(name: str) -> dict[str, Any]:
    path = _files() / "tables" / f"{name}.yaml"
    if not path.is_file():
        raise ConfigError(f"unknown table {name!r}; tables: {', '.join(table_names())}")
    return yaml.safe_load(path.read_text())


def paper_value(results: dict[str, Any], key: str, row: str, column: str, transpose: bool) -> float | None:
    table = results.get(key, {})
    outer, inner = (column, row) if transpose else (row, column)
    entry = table.get(outer)
    if isinstance(entry, dict):
        value = entry.get(inner)
    elif isinstance(entry, list):
        tasks = table.get("tasks", [])
        value = entry[tasks.index(inner)] if inner in tasks else None
    else:
        value = entry
    return float(value) if isinstance(value, (int, float)) else None


def _columns(spec: Any) -> dict[str, dict[str, Any]]:
    if isinstance(spec, list):
        return {name: {"column": name} for name in spec}
    return {name: {"column": name, **(value or {})} for name, value in spec.items()}


def expand(name: str, scale: str) -> Table:
    if scale not in SCALES:
        raise ConfigError(f"unknown scale {scale!r}; use one of {', '.join(SCALES)}")
    spec = _load(name)
    tasks = yaml.safe_load((_files() / "tasks.yaml").read_text())
    standard = tasks[scale]
    bodies = tasks.get(f"{scale}_bodies", {})
    at_scale = (spec.get("scales") or {}).get(scale) or {}
    results = paper_results()
    columns = _columns(spec["columns"])
    scale_columns = at_scale.get("columns") or {}
    scale_rows = at_scale.get("rows") or {}
    cells = []
    for row, row_spec in spec["rows"].items():
        row_spec = row_spec or {}
        srow = scale_rows.get(row) or {}
        for column, col_spec in columns.items():
            layers = [
                standard.get(col_spec["column"], {}),
                spec.get("base") or {}, at_scale.get("base") or {},
                col_spec, scale_columns.get(column) or {},
                row_spec, srow,
                (row_spec.get("cells") or {}).get(column) or {}, (srow.get("cells") or {}).get(column) or {},
            ]
            skip = at_scale.get("skip") or next((lay["skip"] for lay in layers if lay.get("skip")), None)
            fields: dict[str, Any] = {}
            metric = spec.get("metric", "test_accuracy")
            for lay in layers:
                metric = lay.get("metric", metric)
                fields = merge(fields, {k: v for k, v in lay.items() if k not in SPECIAL})
            paper = paper_value(results, spec["paper"], row_spec.get("paper_row", row), column,
                                bool(spec.get("transpose")))
            if skip:
                cells.append(Cell(row, column, None, metric, paper, skip=str(skip)))
                continue
            if "body" in fields:
                fields["body"] = bodies.get(fields["body"], fields["body"])
            pretrain = None
            if str(fields.get("init", "")).startswith(PRETRAIN_PREFIX):
                pretrain = fields["init"][len(PRETRAIN_PREFIX):]
                fields["init"] = "random"  # replaced by checkpoint:PATH once the pretraining run exists
            config = from_dict(RunConfig, fields, where=f"table {name} ({scale}) cell {row}/{column}")
            cells.append(Cell(row, column, config, metric, paper, pretrain_task=pretrain))
    return Table(name, spec["title"], scale, list(spec["rows"]), list(columns), cells, spec.get("notes", ""))

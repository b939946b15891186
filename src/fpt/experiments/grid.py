"""Paper tables as grids of runs: rows x task columns, at a scale (quick | paper).

A table file (tables/NAME.yaml) names its rows and columns as RunConfig overrides; the
task columns' defaults at each scale live in tasks.yaml. Every cell resolves to a
validated RunConfig, to a reason it is skipped at that scale, or to a figure the paper
quotes from the literature (``quoted``: shown with its source, never run).

Layers, later ones winning: the task column at the scale (tasks.yaml), the table's
``base``, the scale's ``base``, the column, the scale's column, the row, the scale's row,
the row's ``cells`` entry for the column, the scale's row ``cells`` entry. A table whose
rows set the body must not also set it in a column (the row would win): put the shared
body in ``base`` instead (Table 12 does).

Special keys (not RunConfig fields): ``column`` (the task column a table column runs),
``metric``, ``skip`` (why a cell does not run), ``cells``, ``paper_row`` (the row's key in
paper_results.json), ``name`` (what a task column runs at a scale, when that is not the
paper's task: quick's ``digits-patch`` stands where CIFAR-10 is), ``compare`` (why a
column's figure cannot be compared with the paper's: no difference is printed),
``quoted`` (the source of a literature figure the paper quotes), ``paper: null`` / ``true``
(the cell shows no paper figure, another row holds it / shows it after all), ``lr_grid`` (a list of
learning rates, at the table's top level or in any layer: under ``fpt reproduce --tuned-lr`` each
cell runs seed 0 at every lr of it, takes the lr with the best validation figure and runs every
seed there; without the flag the cell runs at its own lr, the paper's protocol).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from fpt.config import RunConfig, from_dict, merge, near, read_yaml, show
from fpt.errors import ConfigError

SCALES = ("quick", "paper")
SPECIAL = {"column", "metric", "skip", "cells", "paper_row", "name", "compare", "quoted", "paper", "lr_grid"}
PRETRAIN_PREFIX = "pretrain:"


@dataclass(frozen=True)
class Cell:
    row: str
    column: str  # the column's name at this scale (quick: what actually runs, e.g. digits-patch)
    config: RunConfig | None  # None when skipped or quoted
    metric: str
    paper: float | None
    skip: str | None = None
    pretrain_task: str | None = None  # init "pretrain:TASK": a body pretrained on TASK first
    paper_column: str = ""  # the column's key in the table file and in paper_results.json
    quoted: str | None = None  # the paper's figure is quoted from this source: not an FPT run
    compare: str | None = None  # None: same task as the paper's figure; else why no difference is printed
    lr_grid: tuple[float, ...] | None = None  # fpt reproduce --tuned-lr: lr chosen on seed 0's validation figure

    @property
    def key(self) -> str:
        return self.paper_column or self.column


@dataclass(frozen=True)
class Derived:
    """A row the report computes from other rows' results (e.g. Table 6's speed-up)."""

    name: str
    kind: str  # "ratio": numerator row / denominator row of the metric; "epoch_speedup": uncached / cached epoch
    numerator: str = ""
    denominator: str = ""
    paper: dict[str, Any] = field(default_factory=dict)  # paper column -> figure (number or text)
    label: str = ""


@dataclass(frozen=True)
class Table:
    name: str
    title: str
    scale: str
    rows: list[str]
    columns: list[str]
    cells: list[Cell]
    notes: str = ""
    derived: list[Derived] = field(default_factory=list)
    counts: dict[str, Any] | None = None  # parameter columns (Table 8): {column, spec}
    paper_key: str = ""
    column_keys: list[str] = field(default_factory=list)  # the columns' keys in the table file (paper's names)

    def key_of(self, column: str) -> str:
        return dict(zip(self.columns, self.column_keys or self.columns, strict=True)).get(column, column)


def _files():
    return resources.files("fpt.experiments")


def _number(name: str) -> tuple[int, str]:
    m = re.match(r"table(\d+)", name)
    return (int(m.group(1)) if m else 10**6, name)


def table_names() -> list[str]:
    names = [p.name[: -len(".yaml")] for p in (_files() / "tables").iterdir() if p.name.endswith(".yaml")]
    return sorted(names, key=_number)


def paper_results() -> dict[str, Any]:
    return json.loads((_files() / "paper_results.json").read_text())


def tasks_spec() -> dict[str, Any]:
    return yaml.safe_load((_files() / "tasks.yaml").read_text())


TABLE_KEYS = {"title", "paper", "columns", "rows", "base", "scales", "notes", "derived", "counts", "transpose",
              "metric", "same_as", "lr_grid"}
TABLE_SUFFIXES = (".yaml", ".yml")


def load_spec(name: str) -> dict[str, Any]:
    """A table: a packaged name (``table3``) or the path of a table file in the same format (``my_grid.yaml``).

    ``same_as: OTHER`` takes the packaged table OTHER's grid and keeps this file's title and notes.
    """
    known = table_names()
    # Checked against the list before any path is built: a packaged name is never a path (../tasks, /etc/x).
    if isinstance(name, str) and name in known:
        spec = yaml.safe_load((_files() / "tables" / f"{name}.yaml").read_text())
    elif isinstance(name, str) and name.endswith(TABLE_SUFFIXES):
        spec = _user_table(Path(name))
    else:
        raise ConfigError(f"unknown table {show(name)}; tables: {', '.join(known)} (or 'all', 'list', or the path "
                          f"of your own table file, FILE.yaml, in their format: docs/sweeps.md)")
    if "same_as" in spec:
        return {**load_spec(spec["same_as"]), **{k: v for k, v in spec.items() if k != "same_as"}}
    return spec


# What a trial cannot do: a trial (a table's cell, a sweep's config) is fpt.train.fit alone
# (fpt.experiments.planned.run_planned), one model that fits no classic models beside it. baselines: all trained every
# trial and fitted none, silently; ensemble: 2 failed every trial after its data was read, with an error naming fit().
def _no_baselines(value: Any) -> str | None:
    if value in (None, "auto", "none"):
        return None
    return ("a trial fits no baselines (trials are compared with each other); remove the key, and fit them beside the "
            f"config you choose with fpt train --data ... --baselines {value}")


def _one_model(value: Any) -> str | None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 1:
        return None  # 1, or a value from_dict refuses with its own message
    return ("a trial trains one model; remove the key, and train the ensemble of the config you choose with fpt train "
            f"--data ... --ensemble {value}")


TRIAL_LIMITS = {"baselines": _no_baselines, "ensemble": _one_model}


def _user_table(path: Path) -> dict[str, Any]:
    """A user's table file, checked for what expand() relies on; every problem names the file and the key."""
    if not path.is_file():
        raise ConfigError(f"{path}: no such table file; give the path of a YAML table (rows x columns) or one of "
                          f"the paper's tables (fpt reproduce list)")
    spec = read_yaml(path, "table file")  # within a size, as UTF-8, no key given twice, no alias bomb: one line
    if not isinstance(spec, dict):
        raise ConfigError(f"{path}: a table file is a mapping with 'columns' and 'rows' (see docs/sweeps.md)")
    for key in spec:
        if key not in TABLE_KEYS:
            hint = near(key, sorted(TABLE_KEYS)) or f"; keys: {', '.join(sorted(TABLE_KEYS))}"
            raise ConfigError(f"{path}: unknown key {show(key)}{hint}")
    if "same_as" in spec:
        if spec["same_as"] not in table_names():
            raise ConfigError(f"{path}: same_as {show(spec['same_as'])} is not one of the paper's tables "
                              f"(fpt reproduce list)")
        return {"title": path.stem, **spec}
    for key in ("columns", "rows"):
        value = spec.get(key)
        if not value or not isinstance(value, (dict, list) if key == "columns" else dict):
            shape = "a list of task columns or a mapping of column -> config fields" if key == "columns" \
                else "a mapping of row -> config fields (null for none)"
            raise ConfigError(f"{path}: '{key}' must be {shape}")
    rows_and_columns = list(spec["rows"].items()) + (list(spec["columns"].items()) if isinstance(spec["columns"], dict)
                                                      else [])
    for entry, value in rows_and_columns:
        if value is not None and not isinstance(value, dict):
            raise ConfigError(f"{path}: {show(entry)}: give a mapping of config fields (e.g. {{lr: 0.001}}) or nothing")
    for key in ("base", "scales"):
        if spec.get(key) is not None and not isinstance(spec[key], dict):
            raise ConfigError(f"{path}: '{key}' must be a mapping")
    for scale in spec.get("scales") or {}:
        if scale not in SCALES:
            raise ConfigError(f"{path}: scales.{scale}: unknown scale; use {' or '.join(SCALES)}")
    # No paper figures unless the file names a table of paper_results.json.
    return {"title": path.stem, "paper": "", **spec}


def default_out_name(name: str) -> str:
    """The results folder's name for a table: its name, or a table file's stem."""
    return Path(name).stem if name.endswith(TABLE_SUFFIXES) else name


def paper_value(results: dict[str, Any], key: str, row: str, column: str, transpose: bool) -> float | None:
    value = paper_raw(results, key, row, column, transpose)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def paper_raw(results: dict[str, Any], key: str, row: str, column: str, transpose: bool) -> Any:
    table = results.get(key, {})
    outer, inner = (column, row) if transpose else (row, column)
    entry = table.get(outer)
    if isinstance(entry, dict):
        return entry.get(inner)
    if isinstance(entry, list):
        tasks = table.get("tasks", [])
        return entry[tasks.index(inner)] if inner in tasks else None
    return entry


def _lr_grid(value: Any, table: str, row: str, column: str) -> tuple[float, ...] | None:
    """A cell's declared ``lr_grid`` (table, row, column or cell level; null: none), checked."""
    if value is None:
        return None
    if not isinstance(value, list) or not value or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in value):
        raise ConfigError(f"table {table} cell {row}/{column}: lr_grid must be a list of learning rates > 0, "
                          f"e.g. [1.0e-4, 3.0e-4, 1.0e-3, 3.0e-3]; got {show(value)}")
    return tuple(float(v) for v in dict.fromkeys(value))


def _columns(spec: Any) -> dict[str, dict[str, Any]]:
    if isinstance(spec, list):
        return {name: {"column": name} for name in spec}
    return {name: {"column": name, **(value or {})} for name, value in spec.items()}


def column_name(key: str, task_column: str, standard: dict[str, Any]) -> str:
    """A column's name at a scale: what it runs when that is not the paper's task."""
    runs = standard.get("name")
    if not runs or runs == task_column and key == task_column:
        return key
    return runs if key == task_column else f"{key} ({runs})"


def expand(name: str, scale: str) -> Table:
    if scale not in SCALES:
        raise ConfigError(f"unknown scale {scale!r}; use one of {', '.join(SCALES)}")
    spec = load_spec(name)
    tasks = tasks_spec()
    standard = tasks[scale]
    bodies = tasks.get(f"{scale}_bodies", {})
    at_scale = (spec.get("scales") or {}).get(scale) or {}
    results = paper_results()
    columns = _columns(spec["columns"])
    scale_columns = at_scale.get("columns") or {}
    scale_rows = at_scale.get("rows") or {}
    names = {key: column_name(key, c["column"], standard.get(c["column"], {})) for key, c in columns.items()}
    cells = []
    for row, row_spec in spec["rows"].items():
        row_spec = row_spec or {}
        srow = scale_rows.get(row) or {}
        for column, col_spec in columns.items():
            layers = [
                {"lr_grid": spec["lr_grid"]} if "lr_grid" in spec else {},
                standard.get(col_spec["column"], {}),
                spec.get("base") or {}, at_scale.get("base") or {},
                col_spec, scale_columns.get(column) or {},
                row_spec, srow,
                (row_spec.get("cells") or {}).get(column) or {}, (srow.get("cells") or {}).get(column) or {},
            ]
            skip = at_scale.get("skip") or next((lay["skip"] for lay in reversed(layers) if lay.get("skip")), None)
            quoted = next((lay["quoted"] for lay in reversed(layers) if lay.get("quoted")), None)
            compare = "; ".join(dict.fromkeys(str(lay["compare"]) for lay in layers if lay.get("compare")))
            fields: dict[str, Any] = {"preset": "paper"}  # the paper's settings, whatever fpt train's defaults
            metric = spec.get("metric", "test_accuracy")
            for lay in layers:
                metric = lay.get("metric", metric)
                fields = merge(fields, {k: v for k, v in lay.items() if k not in SPECIAL})
            paper = paper_value(results, spec["paper"], row_spec.get("paper_row", row), column,
                                bool(spec.get("transpose")))
            shown = next((lay["paper"] for lay in reversed(layers) if "paper" in lay), True)
            if not shown:
                paper = None  # `paper: null`: this cell shows no paper figure (another row holds it)
            lr_grid = next((lay["lr_grid"] for lay in reversed(layers) if "lr_grid" in lay), None)
            common = dict(paper_column=column, compare=compare or None, lr_grid=_lr_grid(lr_grid, name, row, column))
            if quoted:
                cells.append(Cell(row, names[column], None, metric, paper, quoted=str(quoted), **common))
                continue
            if skip:
                cells.append(Cell(row, names[column], None, metric, paper, skip=str(skip), **common))
                continue
            if "body" in fields:
                fields["body"] = bodies.get(fields["body"], fields["body"])
            pretrain = None
            if str(fields.get("init", "")).startswith(PRETRAIN_PREFIX):
                pretrain = fields["init"][len(PRETRAIN_PREFIX):]
                fields["init"] = "random"  # replaced by checkpoint:PATH once the pretraining run exists
            if col_spec["column"] not in standard and "task" not in fields:
                # without a task column's defaults or a task of its own, the cell would silently run RunConfig's
                # default task (bit-xor) under another name
                raise ConfigError(f"table {name} ({scale}) column {str(col_spec['column'])[:60]!r}: not a task column"
                                  f"{near(str(col_spec['column']), list(standard))} (task columns: "
                                  f"{', '.join(sorted(standard))}); name one, or give the column a task: field")
            where = f"table {name} ({scale}) cell {row}/{column}"
            for key, refusal in TRIAL_LIMITS.items():
                if (why := refusal(fields.get(key))) is not None:
                    raise ConfigError(f"{where}: {key}: {show(fields[key])}: {why}")
            config = from_dict(RunConfig, fields, where=where)
            cells.append(Cell(row, names[column], config, metric, paper, pretrain_task=pretrain, **common))
    derived = [Derived(d_name, d.get("kind", "ratio"), d.get("numerator", ""), d.get("denominator", ""),
                       {c: paper_raw(results, spec["paper"], d.get("paper_row", d_name), c, bool(spec.get("transpose")))
                        for c in columns}, d.get("label", d_name))
               for d_name, d in (spec.get("derived") or {}).items()]
    return Table(name, spec["title"], scale, list(spec["rows"]), [names[c] for c in columns], cells,
                 spec.get("notes", ""), derived, spec.get("counts"), spec["paper"], list(columns))

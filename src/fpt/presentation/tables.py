"""Paper-vs-ours tables for a reproduced table: results.csv and report.md.

One results.csv row per cell (its seeds aggregated: mean, sample std, n), plus rows the
report computes from other rows (Table 6's speed-up, Table 10's epoch speed-up) and
counted parameters (Table 8). A difference against the paper is printed only where our
task is the paper's (``compared`` = yes); every column shows the chance and majority-class
accuracy (the training set's most frequent class, fpt.train.baselines) on the split it is measured on, and a cell
not above the majority class is marked.
"""

from __future__ import annotations

import csv
import json
import os
import platform
import statistics
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fpt import rundir
from fpt.convergence import binomial_margin, converged, eval_sizes, health, run_health
from fpt.experiments.grid import Cell, Table
from fpt.experiments.runner import ACCURACIES, metric_value
from fpt.presentation.document import md_cell
from fpt.presentation.verdict_provenance import distinct_commits
from fpt.provenance import run_commit
from fpt.rundir import read_metrics

CSV_FIELDS = ["table", "scale", "row", "column", "paper_column", "metric", "split", "paper", "ours", "ours_std", "n",
              "seeds", "values", "difference", "compared", "status", "chance", "majority", "majority_margin",
              "above_majority", "collapsed", "at_chance", "flags", "test_accuracy",
              "val_accuracy", "test_accuracy_last", "selected_step", "steps_to_converge", "converge_bound", "task",
              "task_options", "body", "init", "freeze", "layers", "lr", "lr_grid", "lr_val", "lr_chosen", "lr_seed",
              "max_steps", "steps", "stopped", "wall_seconds", "epoch_seconds", "feature_cache_seconds", "commits", "dirty",
              "run_dir", "note"]
NOT_COMPARED = "†"
BELOW_MAJORITY = "not above majority"
COLLAPSED, AT_CHANCE, LOWER_BOUND, NO_LEARNING = "collapsed", "at chance", ">=", "no learning"


# --- one cell's figure from a run's summary ------------------------------------------------------

def measured(summary: dict[str, Any], metric: str, comparable: bool) -> tuple[float | None, str]:
    """(value, split): the accuracy on the split the paper measured when the task is the paper's
    (``task_info.paper_split``: ListOps with the paper's tokenisation was scored on val), else on test."""
    if metric == "test_accuracy":
        split = (summary.get("task_info") or {}).get("paper_split")
        ours = (summary.get("eval") or {}).get(f"{split}_accuracy") if split else None
        if comparable and split and split != summary.get("test_set") and ours is not None:
            return 100.0 * float(ours), split
        return metric_value(summary, metric), summary.get("test_set") or "test"
    split = {"val_accuracy": summary.get("val_set") or "val", "train_accuracy": "train",
             "train_eval_accuracy": "train"}.get(metric, "")
    return metric_value(summary, metric), split


def majority(summary: dict[str, Any], split: str) -> tuple[float | None, float | None]:
    """(chance, majority-class accuracy of ``split``) in percent, from the summary's baselines."""
    b = summary.get("baselines") or {}
    chance, major = b.get("chance"), (b.get("majority") or {}).get(split)
    return (None if chance is None else 100.0 * chance), (None if major is None else 100.0 * major)


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def aggregate(table: Table, cell: Cell, runs: list[dict[str, Any]], out: Path) -> dict[str, Any]:
    """One results.csv row for a cell from its runs (one per seed)."""
    cfg = cell.config
    comparable = not cell.compare
    row = _cell_fields(table, cell)
    if cell.quoted or cell.skip:
        return {**row, "status": runs[0]["status"], "note": runs[0]["note"], "n": 0, "seeds": ""}
    row.update(_lr_fields(runs, cfg))
    search = runs[0].get("lr_search")
    every = [r for r in runs if r["summary"]]  # provenance: the chooser's run too
    if search and search.get("seed") is not None:  # the seed that chose the lr is not a reported seed
        row["lr_seed"] = search["seed"]
        runs = [r for r in runs if r.get("seed") != search["seed"]]
        if not runs:
            return {**row, "status": "not run", "n": 0, "seeds": "",
                    "note": f"only seed {search['seed']} was given, and it chose the lr: give --seeds "
                            f"{search['seed']},1,2,3 to report three other seeds"}
    done = [r for r in runs if r["summary"]]
    summaries = [r["summary"] for r in done]
    values, splits = zip(*(measured(s, cell.metric, comparable) for s in summaries), strict=True) if done else ((), ())
    split = splits[0] if splits else ""
    healths = [run_health(r["run_dir"], r["summary"], split or None) if r.get("run_dir") is not None
               else health(r["summary"], [], eval_sizes(r["summary"]), split or None) for r in done]
    curves = _curves(done, cfg.steps if cfg else None)
    bound = ""
    if cell.metric == "steps_to_converge":  # reach-and-stay (fpt.convergence.converged), a cap-bound step as >= N
        values, bound = tuple(c["step"] for c in curves), _converge_bound([c["bound"] for c in curves])
    numbers = [v for v in values if v is not None]
    ours = _mean(numbers)
    seeds_done = [str(r.get("seed", cfg.seed)) for r in done]
    flagged = {name: [seed for seed, h in zip(seeds_done, healths, strict=True) if h.get(key)]
               for name, key in ((COLLAPSED, "collapsed"), (AT_CHANCE, "at_chance"))}
    provenance = [r["summary"] for r in every]
    commits = distinct_commits(c for c in (run_commit(s)[0] for s in provenance) if c)
    dirty = sum(bool(run_commit(s)[1]) for s in provenance)
    row.update({
        "split": split, "ours": _round(ours), "n": len(numbers),
        "ours_std": _round(statistics.stdev(numbers)) if len(numbers) > 1 else None,
        "seeds": ";".join(str(r.get("seed", cfg.seed)) for r in runs),
        "values": ";".join("" if v is None else f"{_round(v)}" for v in values),
        "collapsed": f"yes: seeds {';'.join(flagged[COLLAPSED])}" if flagged[COLLAPSED] else ("no" if done else ""),
        "at_chance": f"yes: seeds {';'.join(flagged[AT_CHANCE])}" if flagged[AT_CHANCE] else ("no" if done else ""),
        "flags": " | ".join(dict.fromkeys(f"seed {seed}: {why}" for seed, h in zip(seeds_done, healths, strict=True)
                                          for why in h.get("reasons", []) if not why.startswith("not above"))),
        "converge_bound": bound,
        "commits": ";".join(commits) + (";unrecorded" if len(commits) < len(provenance) and
                                        any(run_commit(s)[0] is None for s in provenance) else ""),
        "dirty": f"{dirty} of {len(provenance)}" if provenance else "",
        "difference": _round(ours - cell.paper) if ours is not None and cell.paper is not None and comparable else None,
        "status": "done" if len(done) == len(runs) else ("partial" if done else runs[0]["status"]),
        "run_dir": ";".join(_rel(r["run_dir"], out) for r in runs if r.get("run_dir") is not None),
        "note": "; ".join(dict.fromkeys(r["note"] for r in runs if r["note"])),
    })
    if summaries:
        row.update(_summary_fields(cell, summaries, split, ours, healths, curves))
    return row


def _cell_fields(table: Table, cell: Cell) -> dict[str, Any]:
    """What a row says about its cell, run or not: where it sits, what it runs, what the paper reports."""
    cfg = cell.config
    return {
        "table": table.name, "scale": table.scale, "row": cell.row, "column": cell.column,
        "paper_column": cell.key, "metric": cell.metric, "paper": cell.paper,
        "compared": "yes" if not cell.compare else f"no: {cell.compare}",
        "task": cfg.task if cfg else "", "task_options": json.dumps(cfg.task_options) if cfg else "",
        "body": cfg.body if cfg else "", "init": cfg.init if cfg else "", "freeze": cfg.freeze if cfg else "",
        "layers": cfg.layers if cfg else "", "max_steps": cfg.steps if cfg else "",
    }


def _lr_fields(runs: list[dict[str, Any]], cfg: Any) -> dict[str, Any]:
    """The learning rate, and (fpt reproduce --tuned-lr) the grid, each lr's seed-0 validation figure and the chosen one."""
    out: dict[str, Any] = {"lr": runs[0].get("lr", cfg.lr) if cfg else ""}
    search = runs[0].get("lr_search")
    if search:
        out["lr_grid"] = ";".join(f"{lr:g}" for lr in search["grid"])
        out["lr_val"] = ";".join(f"{lr:g}:{'–' if v is None else f'{v:.2f}'}" for lr, v in search["val"].items())
        out["lr_chosen"] = "" if search["chosen"] is None else f"{search['chosen']:g}"
    return out


def _curves(done: list[dict[str, Any]], cap: int | None) -> list[dict[str, Any]]:
    """Each finished run's reach-and-stay convergence (fpt.convergence.converged)."""
    curves = [converged(read_metrics(r["run_dir"]) if r.get("run_dir") is not None else [],
                        f"{r['summary'].get('val_set') or 'val'}_accuracy", r["summary"].get("stopped"), cap)
              for r in done]
    for c, r in zip(curves, done, strict=True):  # no metrics.jsonl to read: the summary's own figure
        if c["reason"] == "no evaluations" and r["summary"].get("steps_to_converge") is not None:
            c.update(step=r["summary"]["steps_to_converge"], bound="=", reason="summary.json's steps_to_converge")
    return curves


def _converge_bound(bounds: list[str]) -> str:
    """How the seeds' steps to converge bound the figure: a cap-bound step as >= N, no learning named."""
    bound = LOWER_BOUND if LOWER_BOUND in bounds else (NO_LEARNING if bounds and not any(bounds) else "")
    if "" in bounds and any(bounds):
        bound = f"{bound or '='}; {NO_LEARNING} in {bounds.count('')} of {len(bounds)} seeds"
    return bound


def _summary_fields(cell: Cell, summaries: list[dict[str, Any]], split: str, ours: float | None,
                    healths: list[dict[str, Any]], curves: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures read from the finished runs' summaries: chance and majority, the means beside the cell's metric."""
    row: dict[str, Any] = {}
    chance, major = majority(summaries[0], split)
    row["chance"], row["majority"] = _round(chance), _round(major)
    if cell.metric in ACCURACIES and ours is not None and major is not None:
        # The figure on the split it is measured on (test, at the selected step), beyond the one-sided 95%
        # binomial margin for that split's size (fpt.convergence.binomial_margin): not a validation spike.
        size = (healths[0].get("eval_examples") or {}).get(split) if healths else None
        margin = 100.0 * binomial_margin(major / 100.0, size)
        row["majority_margin"] = _round(margin) if size else None
        row["above_majority"] = "yes" if ours > major + margin + 1e-9 else "no"
    for key in ("test_accuracy", "val_accuracy", "test_accuracy_last"):
        row[key] = _round(_mean([v for s in summaries if (v := metric_value(s, key)) is not None]))
    for key in ("selected_step", "steps", "wall_seconds", "epoch_seconds", "feature_cache_seconds"):
        found = [float(s[key]) for s in summaries if s.get(key) is not None]
        row[key] = None if not found else s_value(round(statistics.fmean(found), 4))
    found = [c["step"] for c in curves if c["step"] is not None]
    row["steps_to_converge"] = None if not found else s_value(round(statistics.fmean(found), 4))
    row["stopped"] = ";".join(dict.fromkeys(str(s.get("stopped")) for s in summaries))
    return row


def s_value(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def _rel(path: Path, out: Path) -> str:
    return Path(os.path.relpath(Path(path).absolute(), Path(out).absolute())).as_posix()


# --- rows computed from other rows --------------------------------------------------------------

def derived_rows(table: Table, rows: list[dict[str, Any]], runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_cell = {(r["row"], r["column"]): r for r in rows}
    summaries: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in runs:
        if r["summary"]:
            summaries.setdefault((r["cell"].row, r["cell"].column), []).append(r["summary"])
    out = []
    for d in table.derived:
        for column in table.columns:
            key = table.key_of(column)
            paper = d.paper.get(key)
            num, den = by_cell.get((d.numerator, column), {}), by_cell.get((d.denominator, column), {})
            value, why = None, ""
            if d.kind == "ratio":
                a, b = num.get("ours"), den.get("ours")
                if a is not None and b:
                    value = a / b
                else:
                    why = f"needs {d.numerator} and {d.denominator} finished"
            elif d.kind == "epoch_speedup":
                ratios = [s["feature_cache_seconds"] / s["epoch_seconds"] for s in summaries.get((d.numerator, column), [])
                          if s.get("feature_cache_seconds") and s.get("epoch_seconds")]
                value = _mean(ratios)
                why = "" if ratios else f"needs {d.numerator} finished with cached features"
            compared = [r.get("compared", "yes") for r in (num, den) if r]
            reasons = [c[len("no: "):] for c in compared if c.startswith("no")]
            numeric = isinstance(paper, (int, float)) and not isinstance(paper, bool)
            out.append({
                "table": table.name, "scale": table.scale, "row": d.name, "column": column, "paper_column": key,
                "metric": d.kind, "paper": paper, "ours": _round(value), "n": 1 if value is not None else 0,
                "difference": _round(value - paper) if value is not None and numeric and not reasons else None,
                "compared": "yes" if not reasons else f"no: {reasons[0]}",
                "status": "derived" if value is not None else "not derived", "note": why or d.label,
            })
    return out


def count_rows(table: Table) -> list[dict[str, Any]]:
    """Table 8's parameter columns: fpt's own count (meta device) of each row's paper-scale config."""
    if not table.counts:
        return []
    from fpt.experiments import expand, paper_results

    paper_table = expand(table.name, "paper")
    figures = paper_results().get(table.paper_key, {})
    column = table.counts["column"]
    out = []
    for row in paper_table.rows:
        cell = next((c for c in paper_table.cells if c.row == row and c.key == column), None)
        counted = parameter_count(cell.config, table.counts.get("spec")) if cell and cell.config else None
        for name, index, paper_field in (("total_params", 1, "total_params"), ("trained_params", 0, "trained_params")):
            paper = (figures.get(row) or {}).get(paper_field)
            value = counted[index] if isinstance(counted, tuple) else None
            out.append({"table": table.name, "scale": table.scale, "row": row, "column": name, "paper_column": name,
                        "metric": "parameters", "paper": paper, "ours": value, "n": 1 if value is not None else 0,
                        "compared": "no: fpt counts the body without word embeddings and with only the positions "
                                    "the task uses, with CIFAR-10's 48-dimensional patches",
                        "status": "counted" if value is not None else "not counted",
                        "body": cell.config.body if cell and cell.config else "",
                        "note": counted if isinstance(counted, str) else "paper-scale config, meta device"})
    return out


def parameter_count(config, spec: dict[str, Any] | None) -> tuple[int, int] | str:
    """(trained, total) parameters of ``config`` on the meta device; the task's shape from its data, else ``spec``."""
    from fpt.freeze import parameter_totals
    from fpt.model import InputSpec
    from fpt.pipeline import architecture_counts, task_spec

    try:
        shape = task_spec(config, config.task_options)
    except Exception:  # noqa: BLE001 - no data on disk: the table's declared shape
        if not spec:
            return "the task's data is needed for its input shape"
        shape = InputSpec(**spec)
    try:
        totals = parameter_totals(architecture_counts(config, shape))
    except Exception as exc:  # noqa: BLE001 - reported in the table
        return f"not counted: {str(exc).splitlines()[0][:120]}"
    return totals.trainable, totals.total


# --- text ---------------------------------------------------------------------------------------

def _float(value: Any) -> float | None:
    if value is None or value == "":
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def fmt(value: Any, metric: str) -> str:
    number = _float(value)
    if number is None:
        return "–" if value in (None, "") else str(value)
    if metric == "parameters":
        return f"{number / 1e6:.1f}M" if number >= 1e6 else f"{number / 1e3:.0f}K"
    if metric.startswith("steps"):
        return f"{number:.0f}"
    if metric in ("ratio", "epoch_speedup"):
        return f"{number:.3g}x" if metric == "epoch_speedup" else f"{number:.2g}"
    return f"{number:.1f}"


def cell_text(r: Mapping[str, Any], bold: bool = True) -> str:
    """A cell as **ours** ± std (n) / paper (difference); † where not compared; the majority mark."""
    metric, status = r["metric"], r["status"]
    paper = fmt(r.get("paper"), metric)
    if isinstance(r.get("paper"), str) and metric == "parameters":
        paper = r["paper"]
    if status == "quoted":
        return f"quoted: {paper}"
    if _float(r.get("ours")) is None:
        if str(r.get("converge_bound") or "") == NO_LEARNING:
            return f"{NO_LEARNING} / {paper}"
        return f"{status} / {paper}"
    ours = fmt(r["ours"], metric)
    bound = str(r.get("converge_bound") or "")
    if bound.startswith(LOWER_BOUND):
        ours = f"{LOWER_BOUND} {ours}"  # a step count that hit the cap: a lower bound
    text = f"**{ours}**" if bold else ours
    n = int(_float(r.get("n")) or 0)
    if n > 1:
        std = _float(r.get("ours_std"))
        text += f" ± {fmt(std, metric) if std is not None else '?'} (n={n})"
    if status == "partial":
        text += f" [{n} of {len(str(r.get('seeds')).split(';'))} seeds]"
    text += f" / {paper}"
    diff = _float(r.get("difference"))
    if diff is not None:
        text += f" ({diff:+.1f})"
    elif str(r.get("compared", "yes")).startswith("no") and paper != "–":
        text += f" {NOT_COMPARED}"
    if r.get("above_majority") == "no":
        text += f" ⚠ {BELOW_MAJORITY}"
    for flag, name in (("collapsed", COLLAPSED), ("at_chance", AT_CHANCE)):
        if str(r.get(flag) or "").startswith("yes"):
            text += f" ⚠ {name} ({str(r[flag])[len('yes: '):]})"
    if r.get("lr_chosen"):
        text += f" [lr {r['lr_chosen']} of {r.get('lr_grid')}" + (
            f", chosen by seed {r['lr_seed']}: not reported]" if r.get("lr_seed") not in (None, "") else "]")
    return text


def grid(rows: list[Mapping[str, Any]], bold: bool = True) -> tuple[list[str], list[list[str]]]:
    """The report's table: header and body (cell rows, then per-column chance/majority and comparison)."""
    names = list(dict.fromkeys(r["row"] for r in rows))
    columns = list(dict.fromkeys(r["column"] for r in rows))
    by_cell = {(r["row"], r["column"]): r for r in rows}
    body = [[row, *(cell_text(by_cell[(row, c)], bold) if (row, c) in by_cell else "" for c in columns)]
            for row in names]
    base = []
    for c in columns:
        found = [r for r in rows if r["column"] == c and _float(r.get("majority")) is not None]
        base.append(f"{fmt(found[0].get('chance'), 'acc')} / {fmt(found[0]['majority'], 'acc')} ({found[0]['split']})"
                    if found else "–")
    if any(b != "–" for b in base):
        body.append(["chance / majority class", *base])
    compared = []
    for c in columns:
        flags = {str(r.get("compared", "yes")).startswith("yes") for r in rows if r["column"] == c
                 and r.get("paper") not in (None, "") and r["status"] not in ("quoted", "skipped")}
        compared.append("yes" if flags == {True} else "no" if flags == {False} else "partly" if flags else "–")
    body.append(["compared with the paper", *compared])
    return ["", *columns], body


def comparison_notes(rows: list[Mapping[str, Any]]) -> list[str]:
    reasons: dict[str, list[str]] = {}
    for r in rows:
        compared = str(r.get("compared", "yes"))
        if compared.startswith("no") and r["status"] not in ("quoted", "skipped"):
            reasons.setdefault(compared[len("no: "):], []).append(f"{r['row']}/{r['column']}")
    return [f"{NOT_COMPARED} {reason} ({_cells(cells)})" for reason, cells in reasons.items()]


def _cells(cells: list[str]) -> str:
    return ", ".join(cells) if len(cells) <= 4 else f"{', '.join(cells[:3])} and {len(cells) - 3} more"


def write_csv(rows: list[dict[str, Any]], path: Path) -> None:
    """Atomically (temporary name, then renamed): a stop mid-write leaves the old file or none, never half of one."""
    import io

    buf = io.StringIO(newline="")
    writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    rundir.write_text(path, buf.getvalue())


def result_rows(table: Table, results: list[dict[str, Any]], out: Path) -> list[dict[str, Any]]:
    """results.csv rows: one per cell (seeds aggregated), then derived and counted rows."""
    by_cell: dict[int, list[dict[str, Any]]] = {}
    for r in results:
        by_cell.setdefault(id(r["cell"]), []).append(r)
    rows = [aggregate(table, cell, by_cell[id(cell)], out) for cell in table.cells if id(cell) in by_cell]
    return rows + derived_rows(table, rows, results) + count_rows(table)


def write_report(table: Table, results: list[dict[str, Any]], out: Path, command: str) -> list[dict[str, Any]]:
    out.mkdir(parents=True, exist_ok=True)
    rows = result_rows(table, results, out)
    write_csv(rows, out / "results.csv")
    metrics = sorted({r["metric"] for r in rows if r["status"] not in ("derived", "counted", "not derived",
                                                                         "not counted")})
    header, body = grid(rows)
    lines = [f"# {table.title}", "", f"Scale `{table.scale}`. Produced by:", "", f"    {command}", "",
             "Each cell: **ours** / paper (ours − paper). Metric: " + ", ".join(metrics)
             + " (accuracies in %). Several seeds: mean ± sample std (n). " + f"{NOT_COMPARED}: not the paper's "
             "task (or the paper's figure is not its own run): the paper's figure is shown, no difference. "
             f"⚠ {BELOW_MAJORITY}: our accuracy (the measured split, at the selected step) does not beat always "
             "answering the split's most frequent class by the one-sided 95% binomial margin for the split's size. "
             f"⚠ {COLLAPSED}: a seed's last validation losses sit at the uniform-output level (ln C) at the majority "
             f"class's accuracy; ⚠ {AT_CHANCE}: a seed's selected validation accuracy is within that margin of the "
             "majority class: no verdict reads such a cell. Steps to converge: the first evaluation from which the "
             f"curve stays at its plateau; {LOWER_BOUND} N where that was only at the step cap; {NO_LEARNING} where "
             "the plateau is not above the first evaluation.", ""]
    lines.append("| " + " | ".join(map(md_cell, header)) + " |")
    lines.append("|---" * len(header) + "|")
    lines += ["| " + " | ".join(map(md_cell, line)) + " |" for line in body]
    notes = comparison_notes(rows)
    if notes:
        lines += ["", "Not compared with the paper:", "", *(f"- {n}" for n in notes)]
    quoted = [r for r in rows if r["status"] == "quoted"]
    if quoted:
        lines += ["", "Quoted by the paper from the literature (not runs):", ""]
        lines += [f"- {r['row']} / {r['column']}: {fmt(r['paper'], r['metric'])} from {r['note']}" for r in quoted]
    computed = [r for r in rows if r["status"] in ("derived", "not derived", "counted", "not counted")]
    if computed:
        lines += ["", "Computed from the runs:", ""]
        lines += [f"- {n}" for n in dict.fromkeys(f"{r['row']}: {r['note']}" for r in computed)]
    split_notes = {f"{r['column']}: compared on `{r['split']}`, the split the paper measured (our test accuracy "
                   f"{fmt(r['test_accuracy'], 'acc')})" for r in rows
                   if r["status"] in ("done", "partial") and r["metric"] == "test_accuracy"
                   and r.get("split") not in (None, "", "test") and r.get("test_accuracy") is not None}
    if split_notes:
        lines += ["", "Splits:", "", *(f"- {n}" for n in sorted(split_notes))]
    lines += ["", "What produced each of our figures (task, options, body, init, freeze):", ""]
    for r in rows:
        if r["status"] in ("done", "partial"):
            lines.append(f"- {r['row']} / {r['column']}: task `{r['task']}` {r['task_options']}, body `{r['body']}`, "
                         f"init `{r['init']}`, freeze `{r['freeze']}`"
                         + (f", layers {r['layers']}" if r["layers"] else "")
                         + f"; seeds {r['seeds']}; {r['steps']} steps of {r['max_steps']}, stopped on {r['stopped']}, "
                         f"selected step {r['selected_step']}, {r['wall_seconds']} s" + _speed(r)
                         + f"; run `{r['run_dir']}`")
    skipped = [r for r in rows if r["status"] in ("skipped", "failed", "not run")]
    if skipped:
        lines += ["", "Not run:", ""]
        lines += [f"- {r['row']} / {r['column']}: {r['status']}: {r['note']}" for r in skipped]
    if table.notes:
        lines += ["", f"Notes: {table.notes}"]
    lines += ["", f"Python {sys.version.split()[0]}, {platform.platform()}, torch {_version('torch')}, "
              f"transformers {_version('transformers')}."]
    rundir.write_text(out / "report.md", "\n".join(lines) + "\n")
    return rows


def _speed(r: dict[str, Any]) -> str:
    """Epoch time, and for a cached linear probe the one-time feature pass (Table 10's speed-up)."""
    text = f", {float(r['epoch_seconds']):.3g} s per training epoch" if r.get("epoch_seconds") else ""
    if r.get("feature_cache_seconds") is not None:
        text += f" on features cached once in {r['feature_cache_seconds']} s"
    return text


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"

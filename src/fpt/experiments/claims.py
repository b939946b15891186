"""The paper's qualitative claims, checked against reproduced tables: claims.md, verdicts computed.

Each claim is a set of checks; a check is a relation between rows of one table (``a > b``,
increasing, ...) tested column by column. A column counts only where the paper's own
figures show the relation; there, ours hold / do not hold / are inconclusive (a cell
missing, a cell not above the majority class, or the difference within the seeds' std).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HOLDS, FAILS, INCONCLUSIVE = "holds", "does not hold", "inconclusive"
COMPUTED = ("parameters", "ratio", "epoch_speedup")  # results.csv rows that are not runs


@dataclass(frozen=True)
class Check:
    table: str
    rows: tuple[str, ...]
    relation: str  # decreasing | increasing | less | at_least | max | recovers
    tolerance: float = 0.0  # at_least: a >= b - tolerance (points)
    columns: tuple[str, ...] = ()  # paper column keys; () = all
    transpose: bool = False  # the relation is between columns (given in ``rows``) within each row

    def describe(self) -> str:
        r, rel = self.rows, self.relation
        if rel == "recovers":
            text = f"{r[0]} recovers at least half of the gap from {r[2]} to {r[1]}"
        elif rel == "max":
            text = f"{r[0]} > each of {', '.join(r[1:])}"
        elif rel == "at_least":
            text = f"{r[0]} >= {r[1]} - {self.tolerance:g}"
        elif rel == "less":
            text = f"{r[0]} < {r[1]}"
        else:
            text = (" > " if rel == "decreasing" else " < ").join(r)
        return f"{text} ({self.table}{', between columns' if self.transpose else ''})"


@dataclass(frozen=True)
class Claim:
    text: str
    checks: tuple[Check, ...]


CLAIMS = (
    Claim("A language-pretrained frozen body beats a random one, which beats a frozen random LSTM (Tables 2, 3)",
          (Check("table2", ("language_gpt2", "random"), "decreasing"),
           Check("table3", ("transformer", "lstm_3_layer"), "decreasing"))),
    Claim("Initialising with only the pretrained statistics (per-layer mean and std) comes close to pretrained "
          "(Table 9)", (Check("table9", ("statistics_only", "pretrained", "default_random"), "recovers"),)),
    Claim("Training only the output layer (a linear probe) is below FPT (Table 10)",
          (Check("table10", ("output_only", "fpt"), "less"),)),
    Claim("Layer norm is the most important single group to train (Tables 18, 20)",
          (Check("table18", ("output_layernorm", "output_input", "output_positions"), "max"),
           Check("table20", ("output_layernorm", "output_input", "output_positions"), "max"))),
    Claim("Deeper and larger bodies do better (Tables 8, 11)",
          (Check("table8", ("base", "medium", "large"), "increasing", columns=("fpt",)),
           Check("table11", ("1", "6"), "less", transpose=True))),
    Claim("Training more of the body helps (feed-forward layers) or diverges (attention) (Tables 13, 14)",
          (Check("table14", ("fpt", "plus_all_feedforward", "plus_all_feedforward_and_last_attention"), "increasing"),
           Check("table13", ("fpt", "plus_feedforward"), "less"))),
    Claim("FPT matches a transformer fully trained on the task (within 2 points or better) (Table 1)",
          (Check("table1", ("fpt", "full_transformer"), "at_least", tolerance=2.0),)),
    Claim("FPT converges in fewer steps than the same frozen architecture with random weights (Table 6)",
          (Check("table6", ("fpt", "random"), "less"),)),
)


def _float(value: Any) -> float | None:
    try:
        return None if value in (None, "") else float(value)
    except (TypeError, ValueError):
        return None


def read_table(root: Path, table: str) -> list[dict[str, str]]:
    path = Path(root) / table / "results.csv"
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def relation_holds(relation: str, values: list[float], margin: float, tolerance: float = 0.0) -> bool | None:
    """True / False, or None when a needed difference is within ``margin`` (the seeds' std)."""
    def gt(a: float, b: float) -> bool | None:  # a > b beyond the margin
        if a - b > margin:
            return True
        if b - a > margin or (margin == 0 and a == b):
            return False
        return None

    if relation == "recovers":
        stats, pre, rnd = values
        return gt(stats - rnd, 0.5 * (pre - rnd))
    if relation == "at_least":
        return gt(values[0] + tolerance, values[1]) if values[0] + tolerance != values[1] else True
    pairs = {"decreasing": list(zip(values, values[1:], strict=False)),
             "increasing": [(b, a) for a, b in zip(values, values[1:], strict=False)],
             "less": [(values[1], values[0])],
             "max": [(values[0], v) for v in values[1:]]}[relation]
    outcomes = [gt(a, b) for a, b in pairs]
    if False in outcomes:
        return False
    return None if None in outcomes else True


def check_column(check: Check, cells: dict[str, dict[str, str]]) -> tuple[str, str, list, list]:
    """(outcome, reason, paper figures, ours) for one column of a check."""
    paper = [_float(cells.get(r, {}).get("paper")) for r in check.rows]
    ours = [_float(cells.get(r, {}).get("ours")) for r in check.rows]
    if None in paper:
        return "skip", "the paper has no figure", paper, ours
    if relation_holds(check.relation, paper, 0.0, check.tolerance) is not True:
        return "skip", "the paper's own figures do not show it", paper, ours
    if None in ours:
        missing = [r for r, v in zip(check.rows, ours, strict=True) if v is None]
        return INCONCLUSIVE, f"cells missing: {', '.join(missing)}", paper, ours
    below = [r for r in check.rows if cells[r].get("above_majority") == "no"]
    if below:
        return INCONCLUSIVE, f"not above the majority class: {', '.join(below)}", paper, ours
    stds = [_float(cells[r].get("ours_std")) or 0.0 for r in check.rows]
    margin = max(stds)
    result = relation_holds(check.relation, ours, margin, check.tolerance)
    if result is None:
        return INCONCLUSIVE, f"difference within the seeds' std ({margin:.2g})", paper, ours
    return (HOLDS, "", paper, ours) if result else (FAILS, "", paper, ours)


def combine(outcomes: list[tuple[str, str]]) -> tuple[str, str]:
    """One verdict from (outcome, where) pairs."""
    holds = [w for o, w in outcomes if o == HOLDS]
    fails = [w for o, w in outcomes if o == FAILS]
    unsure = [w for o, w in outcomes if o == INCONCLUSIVE]
    if holds and fails:
        return INCONCLUSIVE, f"holds in {', '.join(holds)}; not in {', '.join(fails)}"
    if holds:
        return HOLDS, f"in {', '.join(holds)}" + (f" (inconclusive in {', '.join(unsure)})" if unsure else "")
    if fails:
        return FAILS, f"in {', '.join(fails)}" + (f" (inconclusive in {', '.join(unsure)})" if unsure else "")
    return INCONCLUSIVE, "no column could be decided" + (f": {', '.join(unsure)}" if unsure else "")


def evaluate(root: Path) -> list[dict[str, Any]]:
    """Every claim with its checks' per-column figures and the verdicts."""
    out = []
    for claim in CLAIMS:
        checks, overall = [], []
        for check in claim.checks:
            rows = read_table(root, check.table)
            by: dict[str, dict[str, dict[str, str]]] = {}
            for r in rows:
                key = r.get("paper_column") or r["column"]
                if r.get("metric") in COMPUTED or (check.columns and key not in check.columns):
                    continue
                if check.transpose:
                    by.setdefault(r["row"], {})[key] = r
                else:
                    by.setdefault(r["column"], {})[r["row"]] = r
            columns = []
            for column, cells in by.items():
                outcome, reason, paper, ours = check_column(check, cells)
                spread = [(_float(cells.get(r, {}).get("ours_std")), int(_float(cells.get(r, {}).get("n")) or 0))
                          for r in check.rows]
                columns.append({"column": column, "outcome": outcome, "reason": reason, "paper": paper, "ours": ours,
                                "spread": spread})
            decided = [(c["outcome"], f"{check.table}/{c['column']}" + (f" [{c['reason']}]" if c["reason"] else ""))
                       for c in columns if c["outcome"] != "skip"]
            verdict, why = combine(decided) if decided else (
                INCONCLUSIVE, f"{check.table}: no results" if not rows else "no column where the paper shows it")
            checks.append({"check": check, "columns": columns, "verdict": verdict, "why": why})
            overall.append((verdict, check.table))
        verdict, why = combine(overall)
        out.append({"claim": claim, "checks": checks, "verdict": verdict, "why": why})
    return out


def _fmt(values: list, spread: list | None = None) -> str:
    """Figures joined by ' / '; with ``spread`` [(std, n)], a figure over several seeds gets '± std (n=N)'."""
    spread = spread or [(None, 1)] * len(values)
    return " / ".join("–" if v is None else f"{v:g}" + (f" ± {std:g} (n={n})" if n > 1 and std is not None else "")
                      for v, (std, n) in zip(values, spread, strict=True))


def write_claims(root: Path, path: Path | None = None) -> Path:
    """Write claims.md (default ROOT/claims.md) from ROOT/tableN/results.csv."""
    root = Path(root)
    path = Path(path) if path else root / "claims.md"
    scales = {r.get("scale") for t in {c.table for cl in CLAIMS for c in cl.checks} for r in read_table(root, t)}
    lines = ["# The paper's claims against our results", "",
             f"Computed by `fpt claims --results {root}` from the tables' results.csv (scale: "
             f"{', '.join(sorted(s for s in scales if s)) or 'no results'}). A column counts only where the paper's own "
             "figures show the relation. Inconclusive: cells missing, a cell not above the majority class, the "
             "difference within the seeds' std, or columns disagreeing. At the quick scale the columns are stand-in "
             "tasks: the verdicts are about the qualitative pattern only.", ""]
    for item in evaluate(root):
        lines += [f"## {item['claim'].text}", "", f"**Verdict: {item['verdict']}** ({item['why']}).", ""]
        for check in item["checks"]:
            lines += [f"- {check['check'].describe()}: {check['verdict']} ({check['why']})"]
            rows = "/".join(check["check"].rows)
            for c in check["columns"]:
                reason = f" ({c['reason']})" if c["reason"] else ""
                lines.append(f"  - {c['column']}: paper {rows} = {_fmt(c['paper'])}; ours = {_fmt(c['ours'], c.get('spread'))}: "
                             f"{c['outcome']}{reason}")
        lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))
    return path

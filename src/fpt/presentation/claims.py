"""The paper's qualitative claims, checked against reproduced tables: claims.md, verdicts computed.

Each claim is a set of checks; a check is a relation between rows of one table (``a > b``,
increasing, ...) tested column by column. A column counts only where the paper's own figures
show the relation. There, ours hold / do not hold / are inconclusive by the declared rule
(RULE, printed at the head of claims.md): every cell read needs at least MIN_SEEDS seeds, none
collapsed or at chance, its test figure above the majority class by the binomial margin, and a
step count that is not a cap-bound lower bound; two cells are compared with Welch's t-test
(alpha ALPHA) on their seeds' mean, std and n.

Every check is judged twice where the runs exist: under the paper's fixed lr (``tableN/``) and
under lr tuned per cell on validation (``tableN-tuned/``, ``fpt reproduce --tuned-lr``). The
runs a verdict reads are checked for provenance: one commit, a clean tree.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HOLDS, FAILS, INCONCLUSIVE = "holds", "does not hold", "inconclusive"
NOT_RUN = "not run"
COMPUTED = ("parameters", "ratio", "epoch_speedup")  # results.csv rows that are not runs
ALPHA = 0.05
MIN_SEEDS = 3
EQUIVALENCE_Z = 1.645  # "close": |difference| + 1.645 standard errors within the tolerance
TUNED = "-tuned"
RULE = (f"**Rule.** A cell is evidence only with n >= {MIN_SEEDS} seeds, no seed collapsed (last validation "
        "losses at the uniform-output level ln C) or at chance (selected validation accuracy within the one-sided "
        "95% binomial margin of the majority class), its test figure at the selected step above the majority class "
        "by that margin for the test set's size, and (steps to converge) a step count that neither hit the step cap "
        "(a lower bound) nor shows no learning; any other cell makes its column inconclusive. Two cells are compared "
        f"with Welch's t-test (unequal variances) on their seeds' mean, std and n at alpha {ALPHA}: a > b holds "
        "when the difference is significant and positive, does not hold when significant and negative, and is "
        "inconclusive otherwise. 'Close' (within a tolerance) holds when |difference| + 1.645 standard errors is "
        "within the tolerance. Columns disagreeing make a check inconclusive.")


@dataclass(frozen=True)
class Check:
    table: str
    rows: tuple[str, ...]
    relation: str  # decreasing | increasing | less | at_least | max | recovers | close | unstable | within
    tolerance: float = 0.0  # at_least: a >= b - tolerance; close: |a - b| <= tolerance (points)
    columns: tuple[str, ...] = ()  # paper column keys; () = all
    transpose: bool = False  # the relation is between columns (given in ``rows``) within each row
    bounds: tuple[float, float] = (0.0, 0.0)  # within: a computed figure in [low, high]
    metric: str = ""  # the results.csv metric the check reads (default: the cells', derived rows excluded)

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
        elif rel == "close":
            text = f"|{r[0]} - {r[1]}| <= {self.tolerance:g}"
        elif rel == "unstable":
            text = f"{r[0]} fails to train (collapses, diverges or stays at chance)"
        elif rel == "within":
            text = f"{r[0]} in [{self.bounds[0]:g}, {self.bounds[1]:g}]"
        else:
            text = (" > " if rel == "decreasing" else " < ").join(r)
        return f"{text} ({self.table}{', between columns' if self.transpose else ''})"


@dataclass(frozen=True)
class Claim:
    text: str
    checks: tuple[Check, ...]
    note: str = ""


CLAIMS = (
    Claim("A language-pretrained frozen body beats a random one, which beats a frozen random LSTM (Tables 2, 3)",
          (Check("table2", ("language_gpt2", "random"), "decreasing"),
           Check("table3", ("transformer", "lstm_3_layer"), "decreasing"))),
    Claim("A body pretrained on bit memory lies between the random body and the language-pretrained one (Table 2)",
          (Check("table2", ("language_gpt2", "bit_memory_pretrained", "random"), "decreasing"),)),
    Claim("Initialising with only the pretrained statistics (per-layer mean and std) comes close to pretrained "
          "(Table 9)", (Check("table9", ("statistics_only", "pretrained", "default_random"), "recovers"),)),
    Claim("Training only the output layer (a linear probe) is below FPT (Table 10)",
          (Check("table10", ("output_only", "fpt"), "less"),)),
    Claim("The linear probe on cached features trains epochs 500-2000x faster than FPT (Table 10)",
          (Check("table10", ("epoch_speedup",), "within", bounds=(500.0, 2000.0), metric="epoch_speedup"),),
          note="a timing ratio, not a seed figure: judged on its value, without the seed rule"),
    Claim("Layer norm is the most important single group to train (Tables 18, 20)",
          (Check("table18", ("output_layernorm", "output_input", "output_positions"), "max"),
           Check("table20", ("output_layernorm", "output_input", "output_positions"), "max"))),
    Claim("Freezing layer norm hurts (Table 16)",
          (Check("table16", ("trained_layernorm", "frozen_layernorm"), "decreasing", transpose=True),)),
    Claim("Deeper and larger bodies do better (Tables 8, 11)",
          (Check("table8", ("base", "medium", "large"), "increasing", columns=("fpt",)),
           Check("table11", ("1", "6"), "less", transpose=True))),
    Claim("With only the first 2 layers, the pretrained body is far above the random one (Table 11)",
          (Check("table11", ("pretrained", "random"), "decreasing", columns=("2",)),)),
    Claim("A frozen random LSTM gains nothing from 12 layers over 3 (Table 4); residual connections and then "
          "positions make the 12-layer LSTM better (Table 5)",
          (Check("table4", ("lstm_12_layer", "lstm_3_layer"), "at_least", tolerance=2.0),
           Check("table5", ("lstm_12_layer_residual_positional", "lstm_12_layer_residual", "lstm_12_layer"),
                 "decreasing"))),
    Claim("FPT underfits: its train accuracy is close to its test accuracy (Table 7)",
          (Check("table7", ("train", "test"), "close", tolerance=2.0, transpose=True, columns=("train", "test")),),
          note="read for FPT's row only (the other rows are the paper's quoted baselines)"),
    Claim("Training more of the body helps (feed-forward layers) or diverges (attention) (Tables 13, 14)",
          (Check("table14", ("fpt", "plus_all_feedforward", "plus_all_feedforward_and_last_attention"), "increasing"),
           Check("table13", ("fpt", "plus_feedforward"), "less"))),
    Claim("Training the attention layers diverges (Table 13)", (Check("table13", ("plus_attention",), "unstable"),),
          note="the paper reports divergence in its text: its figures are not checked for it. A seed counts as "
               "failing when it collapsed, diverged or selected a validation accuracy at chance"),
    Claim("Other language-pretrained bodies do about as well as GPT-2 (Table 17)",
          (Check("table17", ("bert", "gpt2"), "at_least", tolerance=2.0),),
          note="at the quick scale only MiniLM (BERT family) runs: GPT-2, T5 and Longformer need the hub"),
    Claim("FPT matches a transformer fully trained on the task (within 2 points or better) (Table 1)",
          (Check("table1", ("fpt", "full_transformer"), "at_least", tolerance=2.0),)),
    Claim("FPT converges in fewer steps than the same frozen architecture with random weights (Table 6)",
          (Check("table6", ("fpt", "random"), "less"),)),
    Claim("Bit XOR stays solvable as the strings grow longer (the paper's length scaling)", (),
          note="no table of fpt runs Bit XOR at several lengths: not run"),
)

# The critics' controls (step 12, Tables 1, 13, 14): FPT against the whole model fine-tuned and against no language
# model (one trained transformer block, fpt.bodies.one_layer).
CONTROLS = (("table1", "control_no_lm"), ("table13", "control_no_lm"), ("table14", "control_no_lm"),
            ("table1", "control_full_finetune"), ("table13", "control_full_finetune"),
            ("table14", "control_full_finetune"))


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
    """On single figures (the paper's): True / False, or None when a needed difference is within ``margin``."""
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
    if relation == "close":
        return abs(values[0] - values[1]) <= tolerance + margin
    pairs = {"decreasing": list(zip(values, values[1:], strict=False)),
             "increasing": [(b, a) for a, b in zip(values, values[1:], strict=False)],
             "less": [(values[1], values[0])],
             "max": [(values[0], v) for v in values[1:]]}[relation]
    outcomes = [gt(a, b) for a, b in pairs]
    if False in outcomes:
        return False
    return None if None in outcomes else True


# --- the seed rule: Welch's t-test on (mean, std, n) -------------------------------------------------

@dataclass(frozen=True)
class Stat:
    mean: float
    std: float
    n: int


def welch_p(a: Stat, b: Stat) -> float:
    """Two-sided p-value of Welch's t-test (scipy.stats.ttest_ind_from_stats, equal_var=False); both stds 0:
    0 when the means differ, 1 when equal."""
    if a.std == 0 and b.std == 0:
        return 1.0 if a.mean == b.mean else 0.0
    from scipy.stats import ttest_ind_from_stats

    p = ttest_ind_from_stats(a.mean, a.std, a.n, b.mean, b.std, b.n, equal_var=False).pvalue
    return 1.0 if p is None or math.isnan(p) else float(p)


def greater(a: Stat, b: Stat, offset: float = 0.0) -> bool | None:
    """a + offset > b by Welch's test at ALPHA: True; significantly below: False; else None."""
    shifted = Stat(a.mean + offset, a.std, a.n)
    if welch_p(shifted, b) >= ALPHA:
        return None
    return shifted.mean > b.mean


def relation_test(relation: str, stats: list[Stat], tolerance: float = 0.0) -> bool | None:
    """A relation between cells by the seed rule (Welch): True / False / None (inconclusive)."""
    if relation == "recovers":
        s, pre, rnd = stats
        mid = Stat((pre.mean + rnd.mean) / 2, math.hypot(pre.std, rnd.std) / 2, min(pre.n, rnd.n))
        return greater(s, mid)
    if relation == "at_least":
        return greater(stats[0], stats[1], tolerance)
    if relation == "close":
        a, b = stats
        se = math.sqrt(a.std ** 2 / a.n + b.std ** 2 / b.n)
        diff = abs(a.mean - b.mean)
        if diff + EQUIVALENCE_Z * se <= tolerance:
            return True
        return False if diff - EQUIVALENCE_Z * se > tolerance else None
    pairs = {"decreasing": list(zip(stats, stats[1:], strict=False)),
             "increasing": [(b, a) for a, b in zip(stats, stats[1:], strict=False)],
             "less": [(stats[1], stats[0])],
             "max": [(stats[0], v) for v in stats[1:]]}[relation]
    outcomes = [greater(a, b) for a, b in pairs]
    if False in outcomes:
        return False
    return None if None in outcomes else True


# --- a cell's evidence: results.csv's columns, else its runs (results written before step 12) ----------

def cell_evidence(r: dict[str, str], table_dir: Path | None = None) -> dict[str, Any]:
    """{stat, n, collapsed, at_chance, diverged, above, bound, commits, dirty, runs} of one results.csv row.

    Rows written before step 12 lack the flag columns: they are computed from the runs the row names
    (run_dir, relative to the table's folder) when they are there.
    """
    ev: dict[str, Any] = {"collapsed": [], "at_chance": [], "diverged": [], "above": r.get("above_majority") or None,
                          "bound": r.get("converge_bound") or "", "commits": set(), "dirty": 0, "runs": 0,
                          "unrecorded": 0}
    mean, std, n = _float(r.get("ours")), _float(r.get("ours_std")), int(_float(r.get("n")) or 0)
    if "collapsed" in r and r.get("collapsed") not in (None, ""):  # written by step 12's tables
        for key in ("collapsed", "at_chance"):
            text = r.get(key) or ""
            ev[key] = text[len("yes: seeds "):].split(";") if text.startswith("yes") else []
        ev["diverged"] = ["?"] if "diverged at" in (r.get("flags") or "") else []
        commits = [c for c in (r.get("commits") or "").split(";") if c]
        ev["commits"] = {c for c in commits if c != "unrecorded"}
        ev["unrecorded"] = int("unrecorded" in commits)
        dirty = (r.get("dirty") or "").split(" of ")
        ev["dirty"], ev["runs"] = (int(dirty[0]), int(dirty[1])) if len(dirty) == 2 else (0, n)
    elif table_dir is not None and r.get("run_dir"):
        _from_runs(ev, r, Path(table_dir))
        if ev.get("stat") is not None:
            mean, std, n = ev["stat"].mean, ev["stat"].std, ev["stat"].n
    ev["stat"] = None if mean is None or n == 0 else Stat(mean, std or 0.0, max(n, 1))
    ev["n"] = n
    return ev


def _from_runs(ev: dict[str, Any], r: dict[str, str], table_dir: Path) -> None:
    import statistics

    from fpt.convergence import binomial_margin, converged, read_history, run_health
    from fpt.presentation.tables import measured
    from fpt.provenance import run_commit
    from fpt.rundir import read_summary

    values, bounds, size = [], [], None
    seeds = (r.get("seeds") or "").split(";")
    for i, rel in enumerate(p for p in (r.get("run_dir") or "").split(";") if p):
        run_dir = table_dir / rel
        summary = read_summary(run_dir)
        if summary is None:
            continue
        seed = seeds[i] if i < len(seeds) else str(i)
        ev["runs"] += 1
        commit, dirty = run_commit(summary)
        if commit:
            ev["commits"].add(commit)
        else:
            ev["unrecorded"] += 1
        ev["dirty"] += bool(dirty)
        if r.get("metric") == "steps_to_converge":
            c = converged(read_history(run_dir), f"{summary.get('val_set') or 'val'}_accuracy", summary.get("stopped"))
            bounds.append(c["bound"])
            value = c["step"]
            split = None
        else:
            value, split = measured(summary, r.get("metric") or "test_accuracy", str(r.get("compared", "yes")) == "yes")
        h = run_health(run_dir, summary, split)
        size = size or (h.get("eval_examples") or {}).get(split or "")
        for key in ("collapsed", "at_chance", "diverged"):
            if h.get(key):
                ev[key].append(seed)
        if value is not None:
            values.append(float(value))
    if r.get("metric") == "steps_to_converge" and bounds:
        ev["bound"] = ">=" if ">=" in bounds else ("no learning" if "" in bounds else "")
    if values:
        ev["stat"] = Stat(statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0, len(values))
        major = _float(r.get("majority"))
        if major is not None and r.get("metric") in ("test_accuracy", "val_accuracy", "train_accuracy"):
            margin = 100.0 * binomial_margin(major / 100.0, size)
            ev["above"] = "yes" if ev["stat"].mean > major + margin + 1e-9 else "no"
    elif r.get("metric") == "steps_to_converge":
        ev["stat"] = None


def _not_evidence(check: Check, cells: dict[str, dict[str, str]], evidence: dict[str, dict[str, Any]]) -> str:
    """Why some cell of a column is not evidence under the rule ('' when every cell is)."""
    reasons = []
    for row in check.rows:
        ev = evidence[row]
        if ev["stat"] is None:
            reasons.append(f"{row}: {'no learning' if ev['bound'] == 'no learning' else 'missing'}")
        elif ev["collapsed"] or ev["at_chance"]:
            what = "collapsed" if ev["collapsed"] else "at chance"
            reasons.append(f"{row}: {what} (seeds {';'.join(ev['collapsed'] or ev['at_chance'])}), not evidence")
        elif ev["above"] == "no":
            reasons.append(f"{row}: not above the majority class (test, binomial margin)")
        elif ev["bound"].startswith(">="):
            reasons.append(f"{row}: steps hit the cap (a lower bound)")
        elif ev["n"] < MIN_SEEDS:
            reasons.append(f"{row}: n={ev['n']} < {MIN_SEEDS} seeds")
    return "; ".join(reasons)


def check_column(check: Check, cells: dict[str, dict[str, str]], table_dir: Path | None = None,
                 ) -> tuple[str, str, list, list]:
    """(outcome, reason, paper figures, ours) for one column of a check."""
    paper = [_float(cells.get(r, {}).get("paper")) for r in check.rows]
    ours = [_float(cells.get(r, {}).get("ours")) for r in check.rows]
    if check.relation == "within":
        value = ours[0]
        if value is None:
            return INCONCLUSIVE, f"{check.rows[0]} not computed", paper, ours
        return (HOLDS if check.bounds[0] <= value <= check.bounds[1] else FAILS), "", paper, ours
    if check.relation != "unstable":
        if None in paper:
            return "skip", "the paper has no figure", paper, ours
        if relation_holds(check.relation, paper, 0.0, check.tolerance) is not True:
            return "skip", "the paper's own figures do not show it", paper, ours
    skipped = [r for r in check.rows if cells.get(r, {}).get("status") in ("skipped", "quoted")]
    if skipped:
        return "skip", f"not run at this scale: {', '.join(skipped)}", paper, ours
    if any(r not in cells for r in check.rows):
        missing = [r for r in check.rows if r not in cells]
        return INCONCLUSIVE, f"cells missing: {', '.join(missing)}", paper, ours
    # A cell with no finished run of its own is no evidence, even where a run it would share (a tuned cell's
    # grid run at the paper's lr) exists on disk.
    not_run = [r for r in check.rows if cells[r].get("status") not in ("done", "partial")]
    if not_run:
        return "skip", f"not run: {', '.join(not_run)}", paper, ours
    evidence = {r: cell_evidence(cells[r], table_dir) for r in check.rows}
    if check.relation == "unstable":
        ev = evidence[check.rows[0]]
        # A seed that learnt nothing fails as surely as one that diverged: a constant answer at the label prior
        # has a loss below ln C (so it is not "collapsed"), but its selected accuracy sits at the majority's.
        unstable = set(ev["collapsed"]) | set(ev["diverged"]) | set(ev["at_chance"])
        if ev["n"] < MIN_SEEDS:
            return INCONCLUSIVE, f"n={ev['n']} < {MIN_SEEDS} seeds", paper, ours
        if len(unstable) >= ev["n"]:
            return HOLDS, f"every seed collapsed, diverged or at chance ({';'.join(sorted(unstable))})", paper, ours
        if not unstable:
            return FAILS, "every seed learnt (none collapsed, diverged or at chance)", paper, ours
        return INCONCLUSIVE, f"{len(unstable)} of {ev['n']} seeds collapsed, diverged or at chance", paper, ours
    why = _not_evidence(check, cells, evidence)
    if why:
        return INCONCLUSIVE, why, paper, ours
    result = relation_test(check.relation, [evidence[r]["stat"] for r in check.rows], check.tolerance)
    if result is None:
        return INCONCLUSIVE, f"Welch's t-test not significant at {ALPHA}", paper, ours
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


def _by_column(check: Check, rows: list[dict[str, str]]) -> dict[str, dict[str, dict[str, str]]]:
    by: dict[str, dict[str, dict[str, str]]] = {}
    for r in rows:
        key = r.get("paper_column") or r["column"]
        if check.metric:
            if r.get("metric") != check.metric:
                continue
        elif r.get("metric") in COMPUTED:
            continue
        if check.columns and key not in check.columns:
            continue
        if check.transpose:
            by.setdefault(r["row"], {})[key] = r
        else:
            by.setdefault(r["column"], {})[r["row"]] = r
    if check.table == "table7":  # FPT's row only: the others are quoted baselines
        by = {k: v for k, v in by.items() if k.startswith("fpt")}
    return by


def evaluate_check(root: Path, check: Check, table: str) -> dict[str, Any]:
    rows = read_table(root, table)
    columns, provenance = [], {"commits": set(), "dirty": 0, "runs": 0, "unrecorded": 0}
    for column, cells in _by_column(check, rows).items():
        outcome, reason, paper, ours = check_column(check, cells, Path(root) / table)
        spread = [(_float(cells.get(r, {}).get("ours_std")), int(_float(cells.get(r, {}).get("n")) or 0))
                  for r in check.rows]
        if outcome != "skip":
            for r in check.rows:
                if r in cells and check.relation != "within":
                    ev = cell_evidence(cells[r], Path(root) / table)
                    provenance["commits"] |= ev["commits"]
                    provenance["dirty"] += ev["dirty"]
                    provenance["runs"] += ev["runs"]
                    provenance["unrecorded"] += ev["unrecorded"]
        columns.append({"column": column, "outcome": outcome, "reason": reason, "paper": paper, "ours": ours,
                        "spread": spread})
    decided = [(c["outcome"], f"{table}/{c['column']}" + (f" [{c['reason']}]" if c["reason"] else ""))
               for c in columns if c["outcome"] != "skip"]
    if not rows:
        verdict, why = (NOT_RUN if table.endswith(TUNED) else INCONCLUSIVE), f"{table}: no results"
    elif decided:
        verdict, why = combine(decided)
    else:
        verdict, why = INCONCLUSIVE, "no column where the paper shows it"
    return {"check": check, "table": table, "columns": columns, "verdict": verdict, "why": why,
            "provenance": provenance}


def provenance_line(prov: dict[str, Any]) -> tuple[str, bool]:
    """(text, clean): whether the runs read come from one commit and a clean tree."""
    commits = sorted(prov["commits"])
    if not prov["runs"] and not commits:
        return "no runs read", True
    problems = []
    if len(commits) > 1:
        problems.append(f"mixes {len(commits)} commits ({', '.join(commits)})")
    if prov["dirty"]:
        problems.append(f"{prov['dirty']} of {prov['runs']} runs from a tree with uncommitted changes")
    if prov["unrecorded"]:
        problems.append(f"{prov['unrecorded']} runs without a recorded commit")
    if problems:
        return "; ".join(problems), False
    return f"one commit ({commits[0] if commits else '?'}), clean tree", True


def evaluate(root: Path) -> list[dict[str, Any]]:
    """Every claim with its checks' per-column figures and the verdicts, at fixed lr and (where run) tuned lr."""
    out = []
    for claim in CLAIMS:
        checks, overall, tuned_overall = [], [], []
        prov: dict[str, Any] = {"commits": set(), "dirty": 0, "runs": 0, "unrecorded": 0}
        for check in claim.checks:
            fixed = evaluate_check(root, check, check.table)
            tuned = evaluate_check(root, check, check.table + TUNED)
            fixed["tuned"] = tuned
            checks.append(fixed)
            overall.append((fixed["verdict"], check.table))
            if tuned["verdict"] != NOT_RUN:
                tuned_overall.append((tuned["verdict"], check.table + TUNED))
            for p in (fixed["provenance"], tuned["provenance"]):
                prov["commits"] |= p["commits"]
                for k in ("dirty", "runs", "unrecorded"):
                    prov[k] += p[k]
        if claim.checks:
            verdict, why = combine(overall)
        else:
            verdict, why = INCONCLUSIVE, claim.note or "no check"
        tuned_verdict, tuned_why = combine(tuned_overall) if tuned_overall else (NOT_RUN, "no tuned-lr results")
        text, clean = provenance_line(prov)
        out.append({"claim": claim, "checks": checks, "verdict": verdict, "why": why, "tuned_verdict": tuned_verdict,
                    "tuned_why": tuned_why, "provenance": text, "clean": clean})
    return out


def controls(root: Path) -> list[str]:
    """Per table and column: FPT against each control row, at fixed lr and tuned lr (Welch, as the verdicts)."""
    lines = []
    for table, control in CONTROLS:
        for suffix, label in (("", "fixed lr"), (TUNED, "tuned lr")):
            rows = read_table(root, table + suffix)
            by: dict[str, dict[str, dict[str, str]]] = {}
            for r in rows:
                if r.get("metric") not in COMPUTED:
                    by.setdefault(r["column"], {})[r["row"]] = r
            for column, cells in by.items():
                if "fpt" not in cells or control not in cells or cells[control].get("status") in ("skipped", "quoted"):
                    continue
                check = Check(table + suffix, ("fpt", control), "decreasing")
                evidence = {r: cell_evidence(cells[r], Path(root) / (table + suffix)) for r in check.rows}
                why = _not_evidence(check, cells, evidence)
                # as in check_column: a cell with no finished run of its own (a tuned cell whose grid run at the
                # paper's lr exists on disk) is not run, whatever runs it names
                not_run = [r for r in check.rows if cells[r].get("status") not in ("done", "partial")]
                if not_run:
                    text = f"{', '.join(not_run)} not run"
                elif evidence[control]["stat"] is None and not evidence[control]["bound"]:
                    text = f"{control} not run"
                elif why:
                    text = f"inconclusive ({why})"
                else:
                    result = greater(evidence["fpt"]["stat"], evidence[control]["stat"])
                    text = ("the language model helps: FPT above the control" if result else
                            "the control does better than FPT" if result is False else
                            "the control does as well (no significant difference)")
                figure = {r: _fmt([_float(cells[r].get("ours"))], [(_float(cells[r].get("ours_std")),
                                                                    int(_float(cells[r].get("n")) or 0))])
                          for r in check.rows}
                lines.append(f"- {table}{suffix} / {column} ({label}): FPT {figure['fpt']} vs {control} "
                             f"{figure[control]}: {text}")
    return lines


def _fmt(values: list, spread: list | None = None) -> str:
    """Figures joined by ' / '; with ``spread`` [(std, n)], a figure over several seeds gets '± std (n=N)'."""
    spread = spread or [(None, 0)] * len(values)
    return " / ".join("–" if v is None else f"{v:g}" + (f" ± {std:g} (n={n})" if n > 1 and std is not None else
                                                        f" (n={n})" if n == 1 else "")
                      for v, (std, n) in zip(values, spread, strict=True))


def write_claims(root: Path, path: Path | None = None) -> Path:
    """Write claims.md (default ROOT/claims.md) from ROOT/tableN/results.csv (and ROOT/tableN-tuned/)."""
    root = Path(root)
    path = Path(path) if path else root / "claims.md"
    scales = {r.get("scale") for t in {c.table for cl in CLAIMS for c in cl.checks} for r in read_table(root, t)}
    items = evaluate(root)
    mixed = sum(not item["clean"] for item in items)
    lines = ["# The paper's claims against our results", "",
             f"Computed by `fpt claims --results {root}` from the tables' results.csv (scale: "
             f"{', '.join(sorted(s for s in scales if s)) or 'no results'}). A column counts only where the paper's own "
             "figures show the relation. Each verdict is given under the paper's fixed learning rate (tableN/) and "
             "under a learning rate chosen per cell on seed 0's validation figure from the table's lr_grid "
             "(tableN-tuned/, `fpt reproduce --tuned-lr`; 'not run' where those runs do not exist). At the quick "
             "scale the columns are stand-in tasks: the verdicts are about the qualitative pattern only.", "",
             RULE, "",
             f"**Provenance.** {mixed} of {len(items)} verdicts read runs that mix commits, come from a tree with "
             "uncommitted changes, or lack a recorded commit (each verdict's line says which).", ""]
    for item in items:
        claim = item["claim"]
        lines += [f"## {claim.text}", "",
                  f"**Verdict (paper's fixed lr): {item['verdict']}** ({item['why']}).", "",
                  f"**Verdict (lr tuned per cell): {item['tuned_verdict']}** ({item['tuned_why']}).", "",
                  f"Provenance: {item['provenance']}.", ""]
        if claim.note:
            lines += [f"Note: {claim.note}.", ""]
        for check in item["checks"]:
            tuned = check["tuned"]
            lines += [f"- {check['check'].describe()}: {check['verdict']} ({check['why']}); tuned lr: "
                      f"{tuned['verdict']}" + (f" ({tuned['why']})" if tuned["verdict"] != NOT_RUN else "")]
            rows = "/".join(check["check"].rows)
            for variant in (check, tuned):
                for c in variant["columns"]:
                    reason = f" ({c['reason']})" if c["reason"] else ""
                    lines.append(f"  - {variant['table']}/{c['column']}: paper {rows} = {_fmt(c['paper'])}; ours = "
                                 f"{_fmt(c['ours'], c.get('spread'))}: {c['outcome']}{reason}")
        lines.append("")
    lines += ["## The critics' controls: where the language model helps", "",
              "FPT against the whole pretrained model fine-tuned (Rothermel et al. 2021) and against no language "
              "model: the same input layer and head around one trained transformer block (Tan et al. 2024). Same "
              "rule as the verdicts.", ""]
    lines += controls(root) or ["- not run: no control rows in the results yet"]
    lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))
    return path

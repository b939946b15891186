"""The paper's qualitative claims, checked against reproduced tables: claims.md, verdicts computed.

Each claim is a set of checks; a check is a relation between rows of one table (``a > b``, increasing, ...) tested
column by column. A column counts only where the paper's own figures show the relation. The rules
(fpt.presentation.claims_md.RULE, printed at the head of claims.md; one function each: fpt.presentation.verdict_stats
for the statistics, fpt.presentation.verdict_provenance for which runs may be read):

- evidence: a cell needs n >= MIN_SEEDS reported seeds, none collapsed or at chance, its test figure above the
  majority class by the binomial margin (Wilson), and a step count that is not a cap-bound lower bound;
- two cells: Welch's t-test (t distribution at Welch's degrees of freedom, never a normal quantile); "close": the
  two one-sided tests at Welch's df;
- several columns: one p-value per column, Holm's step-down correction over the columns where the paper shows the
  relation; the verdict names the columns that carry it. Several checks of one claim: every check must hold;
- tuned lr: the seed that chose the lr on its validation figure is not one of the reported seeds;
- provenance: a verdict reads only cells from the declared commit with a clean tree (or reproduced there), else it
  is "inconclusive (provenance)" and names the cells.

Every check is judged twice where the runs exist: under the paper's fixed lr (``tableN/``) and under lr tuned per
cell on validation (``tableN-tuned/``, ``fpt reproduce --tuned-lr``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fpt.presentation.relations import RELATIONS, Relation
from fpt.presentation.results_csv import read_results
from fpt.presentation.verdict_provenance import Gate, declared_commit, distinct_commits, read_reproduced
from fpt.presentation.verdict_stats import ALPHA, HOLDS_DIRECTION, Stat, holm, welch_p

HOLDS, FAILS, INCONCLUSIVE = "holds", "does not hold", "inconclusive"
PROVENANCE = "inconclusive (provenance)"
NOT_RUN = "not run"
COMPUTED = ("parameters", "ratio", "epoch_speedup")  # results.csv rows that are not runs
MIN_SEEDS = 3
TUNED = "-tuned"
TRAIN_EVALUATION = "train_eval_accuracy"  # Table 7's train figure: the training set evaluated (fpt.train)
@dataclass(frozen=True)
class Check:
    table: str
    rows: tuple[str, ...]
    relation: str  # a key of fpt.presentation.relations.RELATIONS: decreasing, increasing, less, max, at_least, ...
    tolerance: float = 0.0  # at_least: a >= b - tolerance; close: |a - b| <= tolerance (points)
    columns: tuple[str, ...] = ()  # paper column keys; () = all
    transpose: bool = False  # the relation is between columns (given in ``rows``) within each row
    bounds: tuple[float, float] = (0.0, 0.0)  # within: a computed figure in [low, high]; solved: [threshold, 100]
    metric: str = ""  # the results.csv metric the check reads (default: the cells', derived rows excluded)
    row_metrics: tuple[str, ...] = ()  # the metric each of ``rows`` must carry (else the column is not evidence)

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ValueError(f"claims: check on {self.table}: relation {self.relation!r} is not one of "
                              f"{', '.join(RELATIONS)} (fpt.presentation.relations.RELATIONS)")

    @property
    def rel(self) -> Relation:
        return RELATIONS[self.relation]

    def describe(self) -> str:
        text = self.rel.text(self.rows, self.tolerance, self.bounds)
        return f"{text} ({self.table}{', between columns' if self.transpose else ''})"


@dataclass(frozen=True)
class Claim:
    text: str
    checks: tuple[Check, ...]
    note: str = ""


BIT_XOR_LENGTH = "bit_xor_length"  # bench/tables/bit_xor_length.yaml's results folder
SOLVED = 99.0  # per-bit accuracy (%) that counts as solving Bit XOR (the paper's FPT: 100)

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
          (Check("table7", ("train", "test"), "close", tolerance=2.0, transpose=True, columns=("train", "test"),
                 row_metrics=(TRAIN_EVALUATION, "test_accuracy")),),
          note="read for FPT's row only (the other rows are the paper's quoted baselines); the train figure is an "
               "evaluation of the training set at the selected step (runs written before it have none)"),
    Claim("Training more of the body helps (feed-forward layers) or diverges (attention) (Tables 13, 14)",
          (Check("table14", ("fpt", "plus_all_feedforward", "plus_all_feedforward_and_last_attention"), "increasing"),
           Check("table13", ("fpt", "plus_feedforward"), "less"))),
    Claim("Training the attention layers diverges (Table 13)",
          (Check("table13", ("plus_attention",), "unstable", columns=("mnist", "cifar10")),),
          note="the paper reports divergence in its text, on MNIST and CIFAR-10 only: those columns (their quick "
               "stand-ins) are read, its figures are not checked for it. A seed counts as failing when it "
               "collapsed, diverged or selected a validation accuracy at chance"),
    Claim("Other language-pretrained bodies do about as well as GPT-2 (Table 17)",
          (Check("table17", ("bert", "gpt2"), "at_least", tolerance=2.0),),
          note="at the quick scale only MiniLM (BERT family) runs: GPT-2, T5 and Longformer need the hub"),
    Claim("FPT matches a transformer fully trained on the task (within 2 points or better) (Table 1)",
          (Check("table1", ("fpt", "full_transformer"), "at_least", tolerance=2.0),)),
    Claim("FPT converges in fewer steps than the same frozen architecture with random weights (Table 6)",
          (Check("table6", ("fpt", "random"), "less"),)),
    Claim("Bit XOR stays solvable as the strings grow longer (the paper's length scaling)",
          (Check(BIT_XOR_LENGTH, ("fpt",), "solved", bounds=(SOLVED, 100.0)),),
          note=f"the table file bench/tables/{BIT_XOR_LENGTH}.yaml (fpt reproduce bench/tables/{BIT_XOR_LENGTH}.yaml "
               f"--scale quick --seeds 0,1,2), results in {BIT_XOR_LENGTH}/: FPT at each string length; solved: per-bit "
               f"test accuracy >= {SOLVED:g} by a one-sided 95% t bound"),
)

# The critics' controls (Tables 1, 13, 14): FPT against the whole model fine-tuned and against no language
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
    """ROOT/TABLE/results.csv's rows, each field a verdict reads checked (fpt.presentation.results_csv)."""
    return read_results(Path(root) / table / "results.csv")


def relation_holds(relation: str, values: list[float], margin: float, tolerance: float = 0.0) -> bool | None:
    """On single figures (the paper's): True / False, or None when a needed difference is within ``margin``."""
    return RELATIONS[relation].paper(values, margin, tolerance)


# --- the seed rule on one column (no correction): Welch / TOST ------------------------------------------

def greater(a: Stat, b: Stat, offset: float = 0.0) -> bool | None:
    """a + offset > b by Welch's test at ALPHA: True; significantly below: False; else None."""
    shifted = Stat(a.mean + offset, a.std, a.n)
    if welch_p(shifted, b) >= ALPHA:
        return None
    return shifted.mean > b.mean


def relation_test(relation: str, stats: list[Stat], tolerance: float = 0.0) -> bool | None:
    """A relation between the cells of ONE column by the seed rule: True / False / None (inconclusive)."""
    direction, p = RELATIONS[relation].test(stats, tolerance, (0.0, 0.0))
    if p >= ALPHA:
        return None
    return direction == HOLDS_DIRECTION


# --- a cell's evidence: results.csv's columns, else its runs (results.csv without the flag columns) ----

def _chooser(r: dict[str, str]) -> str | None:
    """The seed that chose a tuned cell's lr (results.csv's lr_seed; rows written before it: the first seed)."""
    if not r.get("lr_chosen"):
        return None
    return r.get("lr_seed") or (r.get("seeds") or "").split(";")[0] or None


def _without_chooser(ev: dict[str, Any], r: dict[str, str]) -> None:
    """A tuned row written before the chooser was left out (its seeds list it, first): its figure without it."""
    import statistics

    chooser, seeds = _chooser(r), [s for s in (r.get("seeds") or "").split(";") if s]
    if chooser is None or chooser not in seeds or r.get("status") not in ("done", "partial"):
        return
    # the chooser's run is the grid's (it must have finished for an lr to be chosen): always the first figure
    values = [float(v) for v in (r.get("values") or "").split(";")[1:] if v != ""]
    ev["chooser"] = chooser
    ev["n"] = len(values)
    ev["stat"] = Stat(statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0,
                      len(values)) if values else None
    for key in ("collapsed", "at_chance"):
        ev[key] = [s for s in ev[key] if s != chooser]


def cell_evidence(r: dict[str, str], table_dir: Path | None = None) -> dict[str, Any]:
    """{stat, n, collapsed, at_chance, diverged, above, bound, commits, dirty, runs, chooser} of one results.csv row.

    Rows written before results.csv had the flag columns lack them: they are computed from the runs the row names
    (run_dir, relative to the table's folder) when they are there. A tuned row's lr-choosing seed is left out.
    """
    ev: dict[str, Any] = {"collapsed": [], "at_chance": [], "diverged": [], "above": r.get("above_majority") or None,
                          "bound": r.get("converge_bound") or "", "commits": set(), "dirty": 0, "runs": 0,
                          "unrecorded": 0, "chooser": None}
    mean, std, n = _float(r.get("ours")), _float(r.get("ours_std")), int(_float(r.get("n")) or 0)
    if "collapsed" in r and r.get("collapsed") not in (None, ""):  # results.csv with the flag columns
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
    _without_chooser(ev, r)
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
        if ev["stat"] is None and cells[row].get("metric") == TRAIN_EVALUATION:
            reasons.append(f"{row}: no {TRAIN_EVALUATION} (runs written before the training split was evaluated "
                           "at the selected step have none: rerun them)")
        elif ev["stat"] is None:
            reasons.append(f"{row}: {'no learning' if ev['bound'] == 'no learning' else 'missing'}")
        elif ev["collapsed"] or ev["at_chance"]:
            what = "collapsed" if ev["collapsed"] else "at chance"
            reasons.append(f"{row}: {what} (seeds {';'.join(ev['collapsed'] or ev['at_chance'])}), not evidence")
        elif ev["above"] == "no":
            reasons.append(f"{row}: not above the majority class (test, binomial margin)")
        elif ev["bound"].startswith(">="):
            reasons.append(f"{row}: steps hit the cap (a lower bound)")
        elif ev["n"] < MIN_SEEDS:
            chooser = f" (seed {ev['chooser']} chose the lr: not reported)" if ev.get("chooser") else ""
            reasons.append(f"{row}: n={ev['n']} < {MIN_SEEDS} seeds{chooser}")
    return "; ".join(reasons)


def check_column(check: Check, cells: dict[str, dict[str, str]], table_dir: Path | None = None) -> dict[str, Any]:
    """One column of a check: {outcome, reason, paper, ours, spread, direction, p, evidence}.

    ``p`` (with ``direction``) is the column's test, before the correction over columns (``evaluate_check``); None
    when the column is decided without one (skipped, not evidence, or a check judged on every column)."""
    paper = [_float(cells.get(r, {}).get("paper")) for r in check.rows]
    ours = [_float(cells.get(r, {}).get("ours")) for r in check.rows]
    spread = [(_float(cells.get(r, {}).get("ours_std")), int(_float(cells.get(r, {}).get("n")) or 0))
              for r in check.rows]
    out = {"outcome": INCONCLUSIVE, "reason": "", "paper": paper, "ours": ours, "spread": spread, "direction": None,
           "p": None, "evidence": {}}

    def done(outcome: str, reason: str = "") -> dict[str, Any]:
        return {**out, "outcome": outcome, "reason": reason}

    rel = check.rel
    if rel.value is not None:
        if ours[0] is None:
            return done(INCONCLUSIVE, f"{check.rows[0]} not computed")
        return done(HOLDS if rel.value(ours[0], check.bounds) else FAILS)
    if rel.paper is not None:
        if None in paper:
            return done("skip", "the paper has no figure")
        if rel.paper(paper, 0.0, check.tolerance) is not True:
            return done("skip", "the paper's own figures do not show it")
    skipped = [r for r in check.rows if cells.get(r, {}).get("status") in ("skipped", "quoted")]
    if skipped:
        return done("skip", f"not run at this scale: {', '.join(skipped)}")
    if any(r not in cells for r in check.rows):
        missing = [r for r in check.rows if r not in cells]
        return done(INCONCLUSIVE, f"cells missing: {', '.join(missing)}")
    # A cell with no finished run of its own is no evidence, even where a run it would share (a tuned cell's
    # grid run at the paper's lr) exists on disk. Its column stays in the family the correction counts (p = 1):
    # the family is the columns where the paper shows the claim, so running fewer of them makes no claim easier.
    not_run = [r for r in check.rows if cells[r].get("status") not in ("done", "partial")]
    if not_run:
        return done(INCONCLUSIVE, f"not run: {', '.join(not_run)}")
    evidence = {r: cell_evidence(cells[r], table_dir) for r in check.rows}
    out["evidence"] = evidence
    stats = [evidence[r]["stat"] for r in check.rows]
    out["ours"] = [None if s is None else round(s.mean, 2) for s in stats]
    out["spread"] = [(None if s is None else round(s.std, 2), evidence[r]["n"]) for s, r in zip(stats, check.rows,
                                                                                             strict=True)]
    if rel.seeds is not None:
        ev = evidence[check.rows[0]]
        if ev["n"] < MIN_SEEDS:
            chooser = f" (seed {ev['chooser']} chose the lr: not reported)" if ev.get("chooser") else ""
            return done(INCONCLUSIVE, f"n={ev['n']} < {MIN_SEEDS} seeds{chooser}")
        holds, reason = rel.seeds(set(ev["collapsed"]) | set(ev["diverged"]) | set(ev["at_chance"]), ev["n"])
        return done({True: HOLDS, False: FAILS, None: INCONCLUSIVE}[holds], reason)
    wrong = [f"{r}: {cells[r].get('metric')}, not {m}" for r, m in zip(check.rows, check.row_metrics, strict=False)
             if cells[r].get("metric") != m]
    if wrong:
        return done(INCONCLUSIVE, "; ".join(wrong) + (" (the last window's minibatch accuracy, dropout on: not an "
                                                      "evaluation of the training set)"
                                                      if any(TRAIN_EVALUATION in w for w in wrong) else ""))
    why = _not_evidence(check, cells, evidence)
    if why:
        return done(INCONCLUSIVE, why)
    direction, p = rel.test(stats, check.tolerance, check.bounds)
    if rel.explain is not None:
        out["reason"] = rel.explain(stats, check.tolerance)
    return {**out, "direction": direction, "p": p}


def _no_column(columns: list[dict[str, Any]], table: str) -> str:
    """Why no column was read, by reason: the paper not showing the relation is one, a cell not run here another."""
    by_reason: dict[str, list[str]] = {}
    for c in columns:
        by_reason.setdefault(c["reason"] or "skipped", []).append(f"{table}/{c['column']}")
    return "no column to read" + "".join(f"{'; ' if i else ': '}{', '.join(cols)} [{reason}]"
                                         for i, (reason, cols) in enumerate(by_reason.items()))


def _decide(check: Check, columns: list[dict[str, Any]], table: str) -> tuple[str, str]:
    """The check's verdict from its columns (rule 3), each column's outcome set in place."""
    family = [c for c in columns if c["outcome"] != "skip"]
    if check.rel.every_column:
        for c in family:
            if c["p"] is not None:
                c["outcome"] = (HOLDS if c["direction"] == HOLDS_DIRECTION else FAILS) if c["p"] < ALPHA else INCONCLUSIVE
                c["reason"] = f"one-sided t p = {c['p']:.3g}"
        if not family:
            return INCONCLUSIVE, _no_column(columns, table)
        names = [f"{table}/{c['column']}" for c in family]
        if all(c["outcome"] == HOLDS for c in family):
            return HOLDS, f"in every column read: {', '.join(names)}"
        failing = [f"{table}/{c['column']}" for c in family if c["outcome"] == FAILS]
        if failing:
            return FAILS, f"in {', '.join(failing)}"
        unsure = [f"{table}/{c['column']}" + (f" [{c['reason']}]" if c["reason"] else "") for c in family
                  if c["outcome"] != HOLDS]
        return INCONCLUSIVE, f"must hold in every column; inconclusive in {', '.join(unsure)}"
    pvalues = {c["column"]: (c["p"] if c["p"] is not None else 1.0) for c in family}
    significant = holm(pvalues)
    for c in family:
        if c["p"] is None:
            continue
        detail = f"{check.rel.test_name} p = {c['p']:.3g}" + (f"; {c['reason']}" if c["reason"] else "")
        if c["column"] in significant:
            c["outcome"] = HOLDS if c["direction"] == HOLDS_DIRECTION else FAILS
            c["reason"] = f"{detail} < Holm's {significant[c['column']]:.3g}"
        else:
            c["outcome"] = INCONCLUSIVE
            c["reason"] = f"{detail}: not significant after Holm over {len(family)} column(s)"
    holds = [f"{table}/{c['column']}" for c in family if c["outcome"] == HOLDS]
    fails = [f"{table}/{c['column']}" for c in family if c["outcome"] == FAILS]
    unsure = [f"{table}/{c['column']}" + (f" [{c['reason']}]" if c["reason"] else "") for c in family
              if c["outcome"] == INCONCLUSIVE]
    family_text = f"Holm over {len(family)} column(s) at {ALPHA}"
    rest = f"; inconclusive in {', '.join(unsure)}" if unsure else ""
    if holds and fails:
        return INCONCLUSIVE, f"holds in {', '.join(holds)}; not in {', '.join(fails)} ({family_text})"
    if holds:
        return HOLDS, f"carried by {', '.join(holds)} ({family_text}){rest}"
    if fails:
        return FAILS, f"carried by {', '.join(fails)} ({family_text}){rest}"
    if not family:
        return INCONCLUSIVE, _no_column(columns, table)
    return INCONCLUSIVE, f"no column significant ({family_text}): {', '.join(unsure)}"


def column_verdict(check: Check, cells: dict[str, dict[str, str]], table_dir: Path | None = None) -> tuple[str, str]:
    """(outcome, reason) of one column judged alone: its own test, a family of one (no correction)."""
    column = {**check_column(check, cells, table_dir), "column": "_"}
    _decide(check, [column], check.table)
    return column["outcome"], column["reason"]


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
    if check.table.removesuffix(TUNED) == "table7":  # FPT's row only: the others are quoted baselines
        by = {k: v for k, v in by.items() if k.startswith("fpt")}
    return by


def _read_cells(check: Check, table: str, rows: list[dict[str, str]], column: str, cells: dict[str, dict[str, str]],
                table_dir: Path) -> list[tuple[tuple[str, str, str], dict[str, Any], str]]:
    """The cells of a column a verdict reads, for the provenance gate: its check's rows; a computed figure (Table
    10's speed-up) is read from the runs of every row of its column."""
    if check.rel.value is not None:
        picked = [r for r in rows if r["column"] == column and r.get("metric") not in COMPUTED]
    else:
        picked = [cells[r] for r in check.rows if r in cells]
    return [((table, r["row"], r["column"]), cell_evidence(r, table_dir), r.get("values") or "") for r in picked]


def evaluate_check(root: Path, check: Check, table: str, gate: Gate | None = None) -> dict[str, Any]:
    """One check on TABLE (a fixed-lr table or its -tuned twin): its columns, verdict and the cells it read."""
    gate = gate or Gate()
    rows = read_table(root, table)
    table_dir = Path(root) / table
    columns, read = [], []
    for column, cells in _by_column(check, rows).items():
        c = check_column(check, cells, table_dir)
        columns.append({**c, "column": column})
        if c["outcome"] != "skip":
            read += _read_cells(check, table, rows, column, cells, table_dir)
    if not rows:
        verdict, why = (NOT_RUN if table.endswith(TUNED) else INCONCLUSIVE), f"{table}: no results"
    else:
        verdict, why = _decide(check, columns, table)
    problems = gate.problems(read)
    if problems and verdict != NOT_RUN:
        verdict, why = PROVENANCE, f"was {verdict}; cells not from {_gate_name(gate)}: {'; '.join(problems)}"
    return {"check": check, "table": table, "columns": columns, "verdict": verdict, "why": why, "read": read,
            "provenance": problems}


def _gate_name(gate: Gate) -> str:
    return f"commit {gate.commit[:7]} with a clean tree" if gate.commit else "one commit with a clean tree"


def combine_checks(outcomes: list[tuple[str, str]]) -> tuple[str, str]:
    """A claim's verdict from its checks' (verdict, table): every check must hold (rule 3)."""
    provenance = [w for o, w in outcomes if o == PROVENANCE]
    fails = [w for o, w in outcomes if o == FAILS]
    holds = [w for o, w in outcomes if o == HOLDS]
    unsure = [w for o, w in outcomes if o == INCONCLUSIVE]
    if provenance:
        return PROVENANCE, f"cells that fail the provenance gate in {', '.join(provenance)}"
    if fails:
        return FAILS, f"in {', '.join(fails)}" + (f" (holds in {', '.join(holds)})" if holds else "")
    if holds and not unsure:
        return HOLDS, f"in {', '.join(holds)}"
    if holds:
        return INCONCLUSIVE, f"holds in {', '.join(holds)}; inconclusive in {', '.join(unsure)} (every check must hold)"
    return INCONCLUSIVE, f"inconclusive in {', '.join(unsure)}" if unsure else "no check"


def _label(result: dict[str, Any]) -> str:
    """A check's name in its claim's verdict; with the cells that failed the gate when that decided it."""
    if result["verdict"] == PROVENANCE:
        return f"{result['table']} ({'; '.join(result['provenance'])})"
    return result["table"]


def make_gate(root: Path, commit: str | None = None) -> Gate:
    return Gate(declared_commit(root, commit), read_reproduced(root))


def evaluate(root: Path, commit: str | None = None) -> list[dict[str, Any]]:
    """Every claim with its checks' per-column figures and the verdicts, at fixed lr and (where run) tuned lr."""
    gate = make_gate(root, commit)
    out = []
    for claim in CLAIMS:
        checks, overall, tuned_overall, read, tuned_read = [], [], [], [], []
        for check in claim.checks:
            fixed = evaluate_check(root, check, check.table, gate)
            tuned = evaluate_check(root, check, check.table + TUNED, gate)
            fixed["tuned"] = tuned
            checks.append(fixed)
            overall.append((fixed["verdict"], _label(fixed)))
            read += fixed["read"]
            if tuned["verdict"] != NOT_RUN:
                tuned_overall.append((tuned["verdict"], _label(tuned)))
                tuned_read += tuned["read"]
        verdict, why = combine_checks(overall) if claim.checks else (INCONCLUSIVE, claim.note or "no check")
        tuned_verdict, tuned_why = (combine_checks(tuned_overall) if tuned_overall
                                    else (NOT_RUN, "no tuned-lr results"))
        # across checks too: without a declared commit, one commit for all the cells of the claim's verdict
        for cells, which in ((read, "fixed"), (tuned_read, "tuned")):
            problems = gate.problems(cells)
            current = verdict if which == "fixed" else tuned_verdict
            if problems and current not in (PROVENANCE, NOT_RUN):
                text = f"was {current}; cells not from {_gate_name(gate)}: {'; '.join(problems)}"
                verdict, why = (PROVENANCE, text) if which == "fixed" else (verdict, why)
                tuned_verdict, tuned_why = (PROVENANCE, text) if which == "tuned" else (tuned_verdict, tuned_why)
        provenance = gate.problems(read + tuned_read)
        out.append({"claim": claim, "checks": checks, "verdict": verdict, "why": why, "tuned_verdict": tuned_verdict,
                    "tuned_why": tuned_why, "provenance": _provenance_line(read + tuned_read, provenance),
                    "clean": not provenance})
    return out


def _provenance_line(read: list[tuple[tuple[str, str, str], dict[str, Any], str]], problems: list[str]) -> str:
    runs = sum(ev["runs"] for _, ev, _ in read)
    commits = distinct_commits(c for _, ev, _ in read for c in ev["commits"])
    dirty = sum(ev["dirty"] for _, ev, _ in read)
    unrecorded = sum(ev["unrecorded"] for _, ev, _ in read)
    text = (f"{runs} runs read from {len(commits)} commit(s) ({', '.join(commits) or 'none'}); {dirty} from a tree "
            f"with uncommitted changes; {unrecorded} cell(s) with runs without a recorded commit")
    return text + (f"; {len(problems)} cell(s) fail the gate" if problems else "; every cell passes the gate")

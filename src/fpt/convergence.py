"""Steps to converge (the paper's Table 6), with one documented criterion.

A run has converged at the first evaluation whose held-out accuracy is within
``tolerance`` (absolute, default 1 point) of the best held-out accuracy the run reaches.
A run that keeps improving until its last step therefore reports its last steps: read
the figure together with whether the run stopped on target/patience or on its step cap.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fpt.rundir import CONFIG, read_config
from fpt.rundir import read_metrics as read_history  # claims.py reads it by this name

DEFAULT_TOLERANCE = 0.01


def steps_to_converge(history: Sequence[dict[str, Any]], key: str, tolerance: float = DEFAULT_TOLERANCE) -> int | None:
    values = [(row["step"], row[key]) for row in history if key in row]
    if not values:
        return None
    best = max(v for _, v in values)
    return next(step for step, v in values if v >= best - tolerance)


# --- converged and stayed, collapse, chance (computed from a run's curve and summary) -------------

Z_ONE_SIDED_95 = 1.645  # one-sided 95%: a figure counts as above the majority class beyond this many std errors
COLLAPSE_LOSS_TOLERANCE = 0.02  # nats below ln(C) still counted as the uniform-output level
COLLAPSE_LAST_EVALUATIONS = 3
PLATEAU_TOLERANCE = 0.02  # absolute: a curve "stays" at its plateau when every later evaluation is within this
LEARNING_MARGIN = 0.05  # absolute: a plateau this far above the first evaluation, else "no learning"


def converged(history: Sequence[dict[str, Any]], key: str, stopped: str | None = None, cap: int | None = None,
              tolerance: float = PLATEAU_TOLERANCE, learning: float = LEARNING_MARGIN) -> dict[str, Any]:
    """Steps to converge with reach-and-stay (Table 6, as the report reads it; summary.json keeps steps_to_converge).

    The plateau is the median of the last three evaluations; the run converged at the first evaluation from
    which every later one is within ``tolerance`` of it. A plateau not ``learning`` above the first evaluation
    is no learning (step None). A run stopped by its step cap whose convergence is its last evaluation, or
    whose last three evaluations still spread by more than ``tolerance``, is a lower bound (``bound`` ">="):
    it may still have been improving.
    Returns {step, bound ("=" | ">=" | ""), reason}.
    """
    values = [(int(row["step"]), float(row[key])) for row in history if row.get(key) is not None]
    if not values:
        return {"step": None, "bound": "", "reason": "no evaluations"}
    tail = sorted(v for _, v in values[-3:])
    plateau = tail[len(tail) // 2]
    if plateau - values[0][1] < learning and len(values) > 1:
        return {"step": None, "bound": "", "reason": f"no learning: plateau {plateau:.3g} within {learning:g} of the "
                                                     f"first evaluation {values[0][1]:.3g}"}
    step = values[-1][0]
    for i in range(len(values)):
        if all(v >= plateau - tolerance for _, v in values[i:]):
            step = values[i][0]
            break
    moving = tail[-1] - tail[0] > tolerance  # the last evaluations still spread beyond the tolerance: no plateau yet
    capped = stopped == "steps" and (step == values[-1][0] or moving or (cap is not None and step >= cap))
    if capped:
        return {"step": step, "bound": ">=", "reason": "reached its plateau only at the step cap"}
    return {"step": step, "bound": "=", "reason": ""}


def binomial_margin(p: float, n: int | None, z: float = Z_ONE_SIDED_95) -> float:
    """How far above an accuracy ``p`` measured on ``n`` examples its one-sided upper confidence bound lies (z = 1.645:
    95%), by Wilson's score interval (scipy.stats.binomtest(...).proportion_ci(method="wilson")); 0 when n is unknown.

    Wilson, not the Wald margin z * sqrt(p (1 - p) / n): Wald's collapses to 0 at p = 0 and p = 1 and is too narrow
    on small sets, so a run that always answers the majority class of a 20-example set would count as above it."""
    if not n or n <= 0:
        return 0.0
    # scipy.stats' own arithmetic (norm.cdf is special.ndtr; scipy/stats/_binomtest.py, _binom_wilson_conf_int,
    # two-sided, no continuity correction), written out: every fit ends here (health), and importing scipy.stats
    # cost each fpt train process ~1 CPU-s. tests/test_convergence.py checks it equals binomtest's bound exactly.
    from scipy.special import ndtr, ndtri

    n = int(n)
    k = min(max(round(p * n), 0), n)  # p is an observed proportion of n examples
    confidence = 2.0 * float(ndtr(z)) - 1.0  # two-sided level whose upper bound is one-sided at z
    if k == n:
        return max(1.0 - p, 0.0)
    z2 = ndtri(0.5 + 0.5 * confidence)
    share = k / n
    denom = 2 * (n + z2**2)
    high = (2 * n * share + z2**2) / denom + z2 / denom * math.sqrt(4 * n * share * (1 - share) + z2**2)
    return max(float(high) - p, 0.0)


def eval_sizes(summary: dict[str, Any], task_options: dict[str, Any] | None = None) -> dict[str, int]:
    """Examples in each held-out set: the summary's record (health.eval_examples, task_info.split_sizes), else the
    task options (eval_size; listops' generate_val / generate_test), else the task's default options."""
    recorded = (summary.get("health") or {}).get("eval_examples")
    if recorded:
        return {k: int(v) for k, v in recorded.items() if v}
    split_sizes = (summary.get("task_info") or {}).get("split_sizes") or {}
    sizes = {k: int(v) for k, v in split_sizes.items() if k != "train" and v}
    if sizes:
        return sizes
    options = dict(task_options or {})
    if "eval_size" not in options and summary.get("task") in DEFAULT_EVAL_SIZE:
        options["eval_size"] = DEFAULT_EVAL_SIZE[summary["task"]]
    if "eval_size" in options:
        return {"val": int(options["eval_size"]), "test": int(options["eval_size"])}
    out = {}
    for split, option in (("val", "generate_val"), ("test", "generate_test")):
        if options.get(option):
            out[split] = int(options[option])
    return out


DEFAULT_EVAL_SIZE = {"bit-xor": 1000, "bit-memory": 500}  # the tasks' Options defaults (fpt.tasks.bit_*)


def health(summary: dict[str, Any], history: Sequence[dict[str, Any]], sizes: dict[str, int] | None = None,
           split: str | None = None) -> dict[str, Any]:
    """A run's flags for readers of its figures (classification; a regression run gets all False / None).

    collapsed: the last evaluations' validation loss at the uniform-output level (>= ln C - 0.02) with the
      validation accuracy within the binomial margin of the majority class: the body outputs one answer.
    at_chance: the selected validation accuracy within the binomial margin of the majority class.
    above_majority: the figure on ``split`` (default the test set) at the selected step beyond the majority class
      by the one-sided 95% binomial margin for that split's size (None: no figure or no baseline).
    diverged: the run stopped on divergence (its ``diverged_at``).
    Sizes (eval_sizes) give the margins; an unknown size gives margin 0 (said in ``reasons``).
    """
    base = summary.get("baselines") or {}
    out: dict[str, Any] = {"collapsed": False, "at_chance": False, "above_majority": None,
                           "diverged": summary.get("diverged_at") is not None, "reasons": [],
                           "eval_examples": dict(sizes or {})}
    if out["diverged"]:
        out["reasons"].append(f"diverged at step {summary['diverged_at']}")
    chance, major = base.get("chance"), base.get("majority") or {}
    if not chance:
        return out
    sizes = sizes or {}
    val_set, test_set = summary.get("val_set") or "val", summary.get("test_set") or "test"
    split = split or test_set
    level = math.log(round(1.0 / float(chance)))
    maj_val = major.get(val_set)
    margin_val = binomial_margin(maj_val, sizes.get(val_set)) if maj_val is not None else 0.0
    if maj_val is not None and not sizes.get(val_set):
        out["reasons"].append(f"{val_set} size unknown: margin 0")
    acc_key, loss_key = f"{val_set}_accuracy", f"{val_set}_loss"
    last = [row for row in history if row.get(loss_key) is not None][-COLLAPSE_LAST_EVALUATIONS:]
    if last and maj_val is not None and all(
            float(row[loss_key]) >= level - COLLAPSE_LOSS_TOLERANCE
            and float(row.get(acc_key, 0.0)) <= maj_val + margin_val for row in last):
        out["collapsed"] = True
        out["reasons"].append(f"collapsed: the last {len(last)} evaluations' {val_set} loss >= ln {round(1 / chance)} "
                              f"- {COLLAPSE_LOSS_TOLERANCE:g} ({level:.3f}) at the majority class's accuracy")
    val = summary.get("val_accuracy")
    if val is not None and maj_val is not None and float(val) <= maj_val + margin_val:
        out["at_chance"] = True
        out["reasons"].append(f"at chance: selected {val_set} accuracy {100 * float(val):.2f} <= majority "
                              f"{100 * maj_val:.2f} + {100 * margin_val:.2f} (one-sided 95%, n={sizes.get(val_set)})")
    figure = (summary.get("eval") or {}).get(f"{split}_accuracy")
    if figure is None and split == test_set:
        figure = summary.get("test_accuracy")
    maj = major.get(split)
    if figure is not None and maj is not None:
        margin = binomial_margin(maj, sizes.get(split))
        out["above_majority"] = float(figure) > maj + margin
        if not out["above_majority"]:
            out["reasons"].append(f"not above majority: {split} accuracy {100 * float(figure):.2f} <= "
                                  f"{100 * maj:.2f} + {100 * margin:.2f} (one-sided 95%, n={sizes.get(split)})")
    return out


def run_health(run_dir: Any, summary: dict[str, Any], split: str | None = None) -> dict[str, Any]:
    """health() of a finished run directory: the summary's own record when it has one (and ``split`` is its
    test set), else computed from metrics.jsonl, config.yaml's task options and the summary (runs written
    before these flags existed)."""
    recorded = summary.get("health")
    if recorded and (split is None or split == summary.get("test_set")):
        return recorded
    options: dict[str, Any] = {}
    if (Path(run_dir) / CONFIG).is_file():
        options = read_config(run_dir).get("task_options") or {}
    return health(summary, read_history(run_dir), eval_sizes(summary, options), split)

"""The statistics behind claims.md's verdicts, each a small function that its rule (fpt.presentation.claims.RULE)
names: Welch's t-test between two cells' seeds, the two one-sided tests (TOST) at Welch's degrees of freedom for
"close", one p-value per column, and Holm's step-down correction over the columns of a check.

Why t and not a normal quantile: with n = 3 seeds a cell's standard error has 2 degrees of freedom, where the t
quantile (2.92 one-sided 95% at df 2) is far above the normal one (1.645).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

ALPHA = 0.05
HOLDS_DIRECTION, FAILS_DIRECTION = "holds", "fails"


@dataclass(frozen=True)
class Stat:
    mean: float
    std: float
    n: int


def welch_se_df(a: Stat, b: Stat) -> tuple[float, float]:
    """(standard error of a.mean - b.mean, Welch-Satterthwaite degrees of freedom); df is inf when both stds are 0."""
    va, vb = a.std ** 2 / a.n, b.std ** 2 / b.n
    se = math.sqrt(va + vb)
    den = (va ** 2 / (a.n - 1) if a.n > 1 else 0.0) + (vb ** 2 / (b.n - 1) if b.n > 1 else 0.0)
    return se, (va + vb) ** 2 / den if den > 0 else math.inf


def welch_p(a: Stat, b: Stat) -> float:
    """Two-sided p-value of Welch's t-test (scipy.stats.ttest_ind_from_stats, equal_var=False); both stds 0:
    0 when the means differ, 1 when equal."""
    if a.std == 0 and b.std == 0:
        return 1.0 if a.mean == b.mean else 0.0
    from scipy.stats import ttest_ind_from_stats

    p = ttest_ind_from_stats(a.mean, a.std, a.n, b.mean, b.std, b.n, equal_var=False).pvalue
    return 1.0 if p is None or math.isnan(p) else float(p)


def t_quantile(df: float, alpha: float = ALPHA) -> float:
    """The one-sided (1 - alpha) quantile of Student's t at ``df`` degrees of freedom (the normal's at df = inf)."""
    from scipy.stats import norm, t

    return float(norm.ppf(1 - alpha) if math.isinf(df) else t.ppf(1 - alpha, df))


def tost(a: Stat, b: Stat, tolerance: float) -> tuple[float, float]:
    """(p that |a - b| < tolerance, p that |a - b| > tolerance): the two one-sided t-tests at Welch's df.

    The first is TOST's p (the larger of the two one-sided p-values), below alpha exactly when
    |difference| + t(1 - alpha, df) x se < tolerance. The second tests the difference beyond the tolerance on the
    side the mean lies (doubled: the side is chosen after looking)."""
    from scipy.stats import t

    diff = a.mean - b.mean
    se, df = welch_se_df(a, b)
    if se == 0:
        return (0.0, 1.0) if abs(diff) < tolerance else (1.0, 0.0) if abs(diff) > tolerance else (1.0, 1.0)
    within = max(float(t.sf((diff + tolerance) / se, df)), float(t.cdf((diff - tolerance) / se, df)))
    beyond = min(float(t.sf((abs(diff) - tolerance) / se, df)) * 2.0, 1.0)
    return within, beyond


def pair_p(a: Stat, b: Stat, offset: float = 0.0) -> tuple[str, float]:
    """(direction, two-sided Welch p) of a + offset > b: 'holds' when a + offset is above b, else 'fails'."""
    shifted = Stat(a.mean + offset, a.std, a.n)
    p = welch_p(shifted, b)
    return (HOLDS_DIRECTION if shifted.mean > b.mean else FAILS_DIRECTION), (p if shifted.mean != b.mean else 1.0)


def ordered_pairs(relation: str, cells: Sequence[T]) -> list[tuple[T, T]]:
    """The (a, b) pairs an ordering relation between cells asks to be a > b: decreasing (each above the next),
    increasing (each below the next), less (the first below the second), max (the first above each other one). The
    paper's figures and the seed rule read the same pairs (fpt.presentation.relations)."""
    return {"decreasing": list(zip(cells, cells[1:], strict=False)),
            "increasing": [(b, a) for a, b in zip(cells, cells[1:], strict=False)],
            "less": [(cells[1], cells[0])],
            "max": [(cells[0], v) for v in cells[1:]]}[relation]


def pairs_p(pairs: list[tuple[Stat, Stat, float]]) -> tuple[str, float]:
    """One column's (direction, p) for a relation of pairs (a, b, offset), each asking a + offset > b.

    A relation of several pairs (a > b > c; a > each of b, c) holds only when every pair does: its p is the largest
    of the pairs' (an intersection-union test needs no correction). It fails when any pair goes the other way: the
    smallest such p, times the number of pairs (Bonferroni within the column). Each relation builds its pairs
    (fpt.presentation.relations)."""
    tested = [pair_p(a, b, offset) for a, b, offset in pairs]
    against = [p for direction, p in tested if direction == FAILS_DIRECTION]
    if against:
        return FAILS_DIRECTION, min(1.0, len(pairs) * min(against))
    return HOLDS_DIRECTION, max(p for _, p in tested)


def holm(pvalues: dict[str, float], alpha: float = ALPHA) -> dict[str, float]:
    """Holm's step-down: {key: the threshold its p was held to} for the keys whose p is significant, over the family
    ``pvalues`` (m = its size): the i-th smallest p is held to alpha / (m - i + 1) until the first that fails."""
    m = len(pvalues)
    out = {}
    for i, (key, p) in enumerate(sorted(pvalues.items(), key=lambda kv: (kv[1], kv[0]))):
        threshold = alpha / (m - i)
        if p >= threshold:
            break
        out[key] = threshold
    return out


__all__ = ["ALPHA", "Stat", "holm", "ordered_pairs", "pair_p", "pairs_p", "t_quantile", "tost", "welch_p", "welch_se_df"]

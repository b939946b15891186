"""The relations a claim's check asks of its rows' cells, one entry of RELATIONS each (``Check.relation`` names
one): how it reads, whether the paper's own figures show it, and how one column's seeds test it
(fpt.presentation.verdict_stats). A new relation is one entry here; fpt.presentation.claims reads them all alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from fpt.presentation.verdict_stats import (
    FAILS_DIRECTION,
    HOLDS_DIRECTION,
    Stat,
    ordered_pairs,
    pairs_p,
    t_quantile,
    tost,
    welch_se_df,
)

Bounds = tuple[float, float]


@dataclass(frozen=True)
class Relation:
    """One relation between a check's rows. ``tolerance`` and ``bounds`` are the check's
    (fpt.presentation.claims.Check); ``rows`` its row names."""

    text: Callable[[tuple[str, ...], float, Bounds], str]  # the relation in words, e.g. "a > b"
    # The paper's single figures (values, margin, tolerance): True / False, or None when a needed difference is
    # within ``margin``. None (no function): the paper's figures are not read for it.
    paper: Callable[[list[float], float, float], bool | None] | None = None
    # One column's seeds (stats, tolerance, bounds): (direction, p) before the correction over columns. None: the
    # column is judged without a test between cells (``value`` or ``seeds``).
    test: Callable[[list[Stat], float, Bounds], tuple[str, float]] | None = None
    test_name: str = "Welch"  # how a column's reason names its test
    explain: Callable[[list[Stat], float], str] | None = None  # the test in figures, for the column's reason
    every_column: bool = False  # holds only where it holds in every column read (each column alone, no Holm)
    # A computed figure (value, bounds) -> holds: read from the row's own figure, not its seeds; its provenance
    # reads the runs of every row of its column (the figure is computed from them).
    value: Callable[[float, Bounds], bool] | None = None
    # The seeds that failed (collapsed, diverged or at chance) of n reported: (holds, reason) with holds None for
    # inconclusive.
    seeds: Callable[[set[str], int], tuple[bool | None, str]] | None = None


def _above(a: float, b: float, margin: float) -> bool | None:
    """a > b beyond ``margin``: True; b above a beyond it (or equal, without a margin): False; else None."""
    if a - b > margin:
        return True
    if b - a > margin or (margin == 0 and a == b):
        return False
    return None


def _every(outcomes: list[bool | None]) -> bool | None:
    if False in outcomes:
        return False
    return None if None in outcomes else True


def _ordering(name: str, text: Callable[[tuple[str, ...]], str]) -> Relation:
    """A relation of ordered pairs (fpt.presentation.verdict_stats.ordered_pairs): every pair a > b."""
    return Relation(
        text=lambda rows, tolerance, bounds: text(rows),
        paper=lambda values, margin, tolerance: _every([_above(a, b, margin) for a, b in ordered_pairs(name, values)]),
        test=lambda stats, tolerance, bounds: pairs_p([(a, b, 0.0) for a, b in ordered_pairs(name, stats)]))


def _recovers_test(stats: list[Stat], tolerance: float, bounds: Bounds) -> tuple[str, float]:
    s, pre, rnd = stats
    # the midpoint of pretrained and random: its standard error is half the two cells' combined one
    mid = Stat((pre.mean + rnd.mean) / 2, math.hypot(pre.std, rnd.std) / 2, min(pre.n, rnd.n))
    return pairs_p([(s, mid, 0.0)])


def _close_test(stats: list[Stat], tolerance: float, bounds: Bounds) -> tuple[str, float]:
    within, beyond = tost(stats[0], stats[1], tolerance)
    return (HOLDS_DIRECTION, within) if within <= beyond else (FAILS_DIRECTION, beyond)


def _close_explain(stats: list[Stat], tolerance: float) -> str:
    se, df = welch_se_df(stats[0], stats[1])
    diff = abs(stats[0].mean - stats[1].mean)
    return (f"|difference| {diff:.2f} + t(0.95, df {df:.2f}) {t_quantile(df):.2f} x se {se:.3f} = "
            f"{diff + t_quantile(df) * se:.2f} vs tolerance {tolerance:g}")


def solved_p(stat: Stat, threshold: float) -> tuple[str, float]:
    """(direction, p) of one cell's mean at or above ``threshold``: one-sided one-sample t-tests (df n - 1)."""
    from scipy.stats import t

    if stat.std == 0 or stat.n < 2:
        return (HOLDS_DIRECTION, 0.0) if stat.mean >= threshold else (FAILS_DIRECTION, 0.0 if stat.n >= 2 else 1.0)
    z = (stat.mean - threshold) / (stat.std / math.sqrt(stat.n))
    above, below = float(t.sf(z, stat.n - 1)), float(t.cdf(z, stat.n - 1))  # H1: mean > threshold / < threshold
    return (HOLDS_DIRECTION, above) if above <= below else (FAILS_DIRECTION, below)


def _unstable(failed: set[str], n: int) -> tuple[bool | None, str]:
    # A seed that learnt nothing fails as surely as one that diverged: a constant answer at the label prior has a
    # loss below ln C (so it is not "collapsed"), but its selected accuracy sits at the majority's.
    if len(failed) >= n:
        return True, f"every seed collapsed, diverged or at chance ({';'.join(sorted(failed))})"
    if not failed:
        return False, "every seed learnt (none collapsed, diverged or at chance)"
    return None, f"{len(failed)} of {n} seeds collapsed, diverged or at chance"


RELATIONS: dict[str, Relation] = {
    "decreasing": _ordering("decreasing", " > ".join),
    "increasing": _ordering("increasing", " < ".join),
    "less": _ordering("less", lambda r: f"{r[0]} < {r[1]}"),
    "max": _ordering("max", lambda r: f"{r[0]} > each of {', '.join(r[1:])}"),
    "at_least": Relation(
        text=lambda r, tolerance, bounds: f"{r[0]} >= {r[1]} - {tolerance:g}",
        paper=lambda v, margin, tolerance: _above(v[0] + tolerance, v[1], margin) if v[0] + tolerance != v[1] else True,
        test=lambda stats, tolerance, bounds: pairs_p([(stats[0], stats[1], tolerance)])),
    "recovers": Relation(
        text=lambda r, tolerance, bounds: f"{r[0]} recovers at least half of the gap from {r[2]} to {r[1]}",
        paper=lambda v, margin, tolerance: _above(v[0] - v[2], 0.5 * (v[1] - v[2]), margin),
        test=_recovers_test),
    "close": Relation(
        text=lambda r, tolerance, bounds: f"|{r[0]} - {r[1]}| <= {tolerance:g}",
        paper=lambda v, margin, tolerance: abs(v[0] - v[1]) <= tolerance + margin,
        test=_close_test, test_name="TOST", explain=_close_explain),
    "unstable": Relation(
        text=lambda r, tolerance, bounds: f"{r[0]} fails to train (collapses, diverges or stays at chance)",
        every_column=True, seeds=_unstable),
    "within": Relation(
        text=lambda r, tolerance, bounds: f"{r[0]} in [{bounds[0]:g}, {bounds[1]:g}]",
        every_column=True, value=lambda v, bounds: bounds[0] <= v <= bounds[1]),
    "solved": Relation(
        text=lambda r, tolerance, bounds: f"{r[0]} solves it (mean >= {bounds[0]:g} by a one-sided t bound)",
        test=lambda stats, tolerance, bounds: solved_p(stats[0], bounds[0]), every_column=True),
}

__all__ = ["RELATIONS", "Relation", "solved_p"]

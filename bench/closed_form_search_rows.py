"""Where the closed-form head searches its penalty on a large table (issue 40, item 5): cross-validated on TRAIN only.

    python bench/closed_form_search_rows.py --out docs/results/own-data/closed-form/search-rows \
        --datasets linear-10k,classification-10k,friedman-10k,mnist-5k-7x7

The ridge head's leave-one-out search decomposes the F x F covariance of every fitted example (F = 3,880 at the
defaults): on the 10,000-row table of the speed sitting (docs/results/own-data/closed-form/speed/) that is 14.6 of
its 73 s, idle. Above ``fpt.closed_form.CONTROLS_UP_TO`` (2,000) fitted examples a run already fits its controls on
a seeded, stratified subsample of 2,000 rows and searches the penalty over them for the language model's line. The
question: may the run's own head take its penalty and the tokens' scale from the leave-one-out search over the same
2,000 rows (a 2,000 x 2,000 Gram matrix) and be fitted at them on every fitted example (one Cholesky factor), without
losing accuracy? Under a Gaussian prior on the weights the best penalty does not grow with the examples (it is the
noise's variance over the prior's), so a penalty chosen on a quarter of the rows should carry; this measures it.

The sets and the features are bench/closed_form_members.py's (the same cache, E=10 of repeat 0: block 0, max, the
tokens beside them, seeds 0-9 at scales 1,2,4,8,16), each table's test hold-out dropped (nothing reads a test
split). Both recipes are scored on the same 5 stratified folds (seed 0) of the training examples, and **each fold's
head searches its own penalty on its own training part** (nested: the held-out fold never chooses):

- ``all rows``: fpt.closed_form.fit_head with ``search_rows=None`` (leave-one-out over every example of the part);
- ``2,000 rows``: the same with ``search_rows=2000`` (leave-one-out over a seeded, stratified 2,000 of them, the fit
  at that penalty on every example of the part).

**The rule, declared here before any figure was read** (``decide``; the tolerances of the members study, another
cost cut, bench/closed_form_members.py): ``2,000 rows`` is adopted when its mean CV over the sets is at most
0.005 below ``all rows``' and on no set more than 0.01 below it (accuracy, R²: the same units); else ``all rows``
stays.

Writes ``OUT/search_rows.jsonl`` (one line per set and recipe: fold scores, the penalties and scales each fold
chose, seconds of a loaded machine: not timings) and ``OUT/table.md``.
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
RECIPES = {"all rows": None, "2,000 rows": 2000}
BASE = "all rows"
MEAN_LOSS, SET_LOSS = 0.005, 0.01  # the rule's tolerances against ``all rows`` (decide)
FOLDS, FOLD_SEED = 5, 0


def nested_folds(x: np.ndarray, y: np.ndarray, classify: bool, classes: int, inputs: int,
                 search_rows: int | None) -> tuple[list[float], list[dict[str, Any]]]:
    """Each fold's head fitted (its penalty searched) on its training part alone and scored on the fold."""
    from fpt.closed_form import _score, fit_head, folds_of
    from fpt.feature_map import DEFAULTS

    design = replace(DEFAULTS, search_rows=search_rows)
    scores, chosen = [], []
    for train, val in folds_of(y, classify, FOLDS, FOLD_SEED):
        w, b, info = fit_head(x[train], y[train], classify, classes, design, FOLD_SEED, inputs)
        scores.append(_score(classify, x[val].astype(np.float64) @ w.T + b, y[val], classes))
        chosen.append({k: info.get(k) for k in ("alpha", "input_scale", "cv_score", "search")})
    return scores, chosen


def decide(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The declared rule: ``2,000 rows`` when its mean CV over the sets measured by both recipes is at most
    ``MEAN_LOSS`` below ``all rows``' and on no set more than ``SET_LOSS`` below; else ``all rows``."""
    cv = {(r["dataset"], r["recipe"]): r["cv"] for r in rows}
    sets = [d for d in dict.fromkeys(r["dataset"] for r in rows) if all((d, k) in cv for k in RECIPES)]
    if not sets:
        return {"sets": [], "chosen": BASE}
    diffs = [cv[(d, "2,000 rows")] - cv[(d, BASE)] for d in sets]
    mean, worst = statistics.mean(diffs), min(diffs)
    chosen = "2,000 rows" if mean >= -MEAN_LOSS and worst >= -SET_LOSS else BASE
    return {"sets": sets, "chosen": chosen, "mean": mean, "worst": worst}


def _penalties(chosen: list[dict[str, Any]]) -> str:
    return ", ".join(format(c["alpha"], "g") for c in chosen)


def table(rows: list[dict[str, Any]]) -> str:
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    cv = {(r["dataset"], r["recipe"]): r for r in rows}
    lines = ["CV figure (5 nested folds; accuracy, friedman-10k R²) ± the std of the fold figures; in brackets the "
             "penalties the folds chose", "",
             "| recipe | " + " | ".join(f"{d} ({cv[(d, BASE)]['n_train']:,})" if (d, BASE) in cv else d
                                     for d in names) + " | mean |", "|---|" + "---|" * (len(names) + 1)]
    for k in RECIPES:
        got = [cv.get((d, k)) for d in names]
        cells = ["–" if g is None else f"{g['cv']:.4f} ± {statistics.pstdev(g['fold_scores']):.4f} "
                 f"({_penalties(g['chosen'])})" for g in got]
        full = [g["cv"] for g in got if g]
        tail = f" | {statistics.mean(full):.4f} |" if len(full) == len(names) else " | – |"
        lines.append(f"| {k} | " + " | ".join(cells) + tail)
    d = decide(rows)
    if d["sets"]:
        lines += ["", f"2,000 rows less all rows over {len(d['sets'])} sets: mean {d['mean']:+.4f}, worst set "
                  f"{d['worst']:+.4f}. The rule (at most {MEAN_LOSS} below on the mean, {SET_LOSS} on a set): "
                  f"**{d['chosen']}**"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(HERE))
    from closed_form_members import append_row, features, table_arguments, write_study_table, write_table

    args = table_arguments(__doc__.splitlines()[0]).parse_args(argv)
    from own_data import read_rows

    args.out.mkdir(parents=True, exist_ok=True)
    results = args.out / "search_rows.jsonl"
    done = {(r["dataset"], r["recipe"]) for r in read_rows(results)}
    for name in [d.strip() for d in args.datasets.split(",") if d.strip()]:
        path = write_table(name, args.cache / "data")
        x, y, classes, inputs = features(name, path, 10, 0, args.cache, args.body)
        classify = y.dtype.kind != "f"
        for recipe, rows_searched in RECIPES.items():
            if (name, recipe) in done:
                continue
            started = time.perf_counter()
            scores, chosen = nested_folds(x, y, classify, classes, inputs, rows_searched)
            row = {"dataset": name, "recipe": recipe, "search_rows": rows_searched, "n_train": len(y),
                   "n_features": int(x.shape[1]), "metric": "accuracy" if classify else "r2", "fold_scores": scores,
                   "cv": statistics.mean(scores), "chosen": chosen,
                   "seconds": round(time.perf_counter() - started, 2)}
            append_row(results, row, ("dataset", "recipe", "cv", "seconds"))
    write_study_table(results, args.out, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())

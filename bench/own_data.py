"""FPT on every bundled own-data set, beside what a user would otherwise run (issue 26's benchmark).

    python bench/own_data.py --out docs/results/own-data                      # everything, 3 seeds
    python bench/own_data.py --out /tmp/b --datasets GunPoint,wine --seeds 0  # a subset
    python bench/own_data.py --out docs/results/own-data --controls           # + random-body and no-lm controls

Datasets: every classification set aeon ships (``aeon/datasets/data/NAME/NAME_TRAIN.ts`` whose header says
``@classLabel true``; the ``_eq`` equal-length copies are left out), scikit-learn's breast cancer, wine, iris
and digits, and diabetes (regression, R²). UCR/UEA sets keep the archive's own TRAIN/TEST split, and
validation is carved from TRAIN (fpt's ``val_fraction``); scikit-learn's sets are written to CSV and split by
fpt (seeded, stratified). Every choice (FPT's step, each baseline's hyper-parameters) reads validation only.

Each (dataset, seed) is one ``fpt train --data`` run in ``OUT/runs/DATASET/seedS`` with its default budget
(fitted to the training examples) and ``--baselines fast`` (``all`` with ``--controls``); the baselines are
the run's own (fpt.baselines: 1-NN Euclidean and MiniRocket for series; logistic / ridge regression and
gradient boosting for tables), fitted on the same split. One JSON line per (dataset, method, seed) goes to
``OUT/results.jsonl``; a row already there is not run again (the benchmark resumes where it stopped).
``OUT/results.md`` holds the table: per dataset each method's test figure (FPT and controls: mean ± std over
seeds), then mean accuracy and mean rank over the classification sets, and total wall time per method.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

SKLEARN_SETS = {"breast-cancer": "load_breast_cancer", "wine": "load_wine", "iris": "load_iris", "digits": "load_digits",
                "diabetes": "load_diabetes"}
FPT = "fpt"


def aeon_sets() -> dict[str, Path]:
    """name -> TRAIN file of every classification set aeon bundles."""
    try:
        import aeon
    except ImportError:
        return {}
    root = Path(aeon.__file__).parent / "datasets" / "data"
    out = {}
    for train in sorted(root.glob("*/*_TRAIN.ts")):
        name = train.name[: -len("_TRAIN.ts")]
        if name != train.parent.name or not train.with_name(f"{name}_TEST.ts").is_file():
            continue  # the _eq copies, and sets without a TEST file
        head = train.read_text(errors="replace")[:20000].lower()
        if "@classlabel true" in head:
            out[name] = train
    return out


def sklearn_csv(name: str, folder: Path) -> Path:
    import sklearn.datasets as skd

    path = folder / f"{name}.csv"
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        frame = getattr(skd, SKLEARN_SETS[name])(as_frame=True).frame
        frame.to_csv(path, index=False)
    return path


def datasets(out: Path) -> dict[str, Path]:
    return {**aeon_sets(), **{name: out / "data" / f"{name}.csv" for name in SKLEARN_SETS}}


def read_rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue  # a line cut by a kill: that row is run again
    return rows


def run_one(name: str, data: Path, seed: int, out: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    """One fpt run of ``data`` (with its baselines): the rows of every method it measured."""
    from fpt.baselines import beside_run
    from fpt.config import RunConfig
    from fpt.pipeline import BUDGET_FIELDS, build
    from fpt.train import fit

    fields = {"data": str(data), "body": args.body, "seed": seed, "device": args.device,
              "baselines": "all" if args.controls else "fast"}
    if args.steps:
        fields.update(steps=args.steps, eval_every=args.eval_every or max(1, args.steps // 5))
    run_dir = out / "runs" / name / f"seed{seed}"
    if run_dir.exists():
        shutil.rmtree(run_dir)  # stopped before its rows were written: train it again
    started = time.perf_counter()
    exp = build(RunConfig(**fields), scale_budget=() if args.steps else BUDGET_FIELDS)
    summary = beside_run(exp, fit(exp, out=run_dir, progress=False), run_dir)
    compared = summary["baselines_models"]
    metric = compared["metric"]
    base = {"dataset": name, "seed": seed, "metric": metric, "n_train": summary["task_info"]["split_sizes"]["train"],
            "n_test": summary["task_info"]["split_sizes"].get("test")}
    rows = [{**base, "method": FPT, "val": summary.get(f"val_{metric}"), "test": summary.get(f"test_{metric}"),
             "seconds": round(time.perf_counter() - started, 3), "steps": summary["steps"],
             "selected_step": summary["selected_step"], "run": str(run_dir)}]
    for method, e in compared.get("models", {}).items():
        rows.append({**base, "method": method, "val": e["val"], "test": e["test"], "seconds": e["seconds"],
                     "chosen": e.get("chosen")})
    for method, e in compared.get("controls", {}).items():
        rows.append({**base, "method": method, "val": e["val"], "test": e["test"], "seconds": e["seconds"]})
    for note in compared.get("notes", []):
        rows.append({**base, "method": "note", "note": note})
    return rows


def _mean_std(values: list[float]) -> str:
    if not values:
        return "–"
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{statistics.mean(values):.3f} ± {statistics.stdev(values):.3f}"


def table(rows: list[dict[str, Any]]) -> str:
    """The markdown table of ``rows``: per dataset the test figure of every method, then means and ranks."""
    latest = {(r["dataset"], r["method"], r["seed"]): r for r in rows if r.get("method") != "note"}  # a rerun's row wins
    rows = [r for r in latest.values() if r.get("test") is not None]
    methods = list(dict.fromkeys([FPT, *(r["method"] for r in rows)]))
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    per: dict[tuple[str, str], list[float]] = {}
    seconds: dict[str, float] = {}
    for r in rows:
        per.setdefault((r["dataset"], r["method"]), []).append(float(r["test"]))
        seconds[r["method"]] = seconds.get(r["method"], 0.0) + float(r.get("seconds") or 0)
    metric_of = {r["dataset"]: r["metric"] for r in rows}
    lines = ["| dataset | metric | " + " | ".join(methods) + " |", "|---|---|" + "---|" * len(methods)]
    # Means and ranks within each group of classification sets measured by the same methods (the series
    # sets by 1-NN and MiniRocket, the tables by logistic regression and gradient boosting): a rank over
    # methods that saw different datasets would compare nothing.
    groups: dict[tuple[str, ...], list[dict[str, float]]] = {}
    for name in names:
        scores = {m: statistics.mean(per[(name, m)]) for m in methods if (name, m) in per}
        lines.append(f"| {name} | {metric_of[name]} | "
                     + " | ".join(_mean_std(per.get((name, m), [])) for m in methods) + " |")
        if metric_of[name] == "accuracy" and len(scores) > 1:
            groups.setdefault(tuple(m for m in methods if m in scores), []).append(scores)
    for group, sets in groups.items():
        ranks: dict[str, list[float]] = {m: [] for m in group}
        for scores in sets:
            ordered = sorted(scores.values(), reverse=True)
            for m, v in scores.items():
                ranks[m].append(statistics.mean([i + 1 for i, o in enumerate(ordered) if o == v]))  # ties share
        others = " / ".join(m for m in group if m != FPT)
        lines.append(f"| mean accuracy ({len(sets)} sets with {others}) | accuracy | "
                     + " | ".join(f"{statistics.mean(s[m] for s in sets):.3f}" if m in group else "–" for m in methods)
                     + " |")
        lines.append(f"| mean rank ({len(sets)} sets with {others}) | rank | "
                     + " | ".join(f"{statistics.mean(ranks[m]):.2f}" if m in group else "–" for m in methods) + " |")
    lines.append("| wall time, all rows | seconds | " + " | ".join(f"{seconds.get(m, 0):.0f}" for m in methods) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, type=Path, help="folder for results.jsonl, results.md, runs/ and data/")
    p.add_argument("--datasets", default="all", help="comma-separated names (aeon's and breast-cancer, wine, iris, "
                                                      "digits, diabetes), or all")
    p.add_argument("--seeds", default="0,1,2", help="FPT seeds, comma-separated (default 0,1,2)")
    p.add_argument("--controls", action="store_true", help="also the random-body and no-lm controls (two more trainings "
                                                           "per run)")
    p.add_argument("--body", default="minilm")
    p.add_argument("--device", default="auto")
    p.add_argument("--steps", type=int, help="a fixed step budget (default: fpt's, fitted to each training split)")
    p.add_argument("--eval-every", type=int, help="with --steps: evaluate every N steps (default steps/5)")
    args = p.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    known = datasets(out)
    chosen = list(known) if args.datasets == "all" else [n.strip() for n in args.datasets.split(",") if n.strip()]
    unknown = [n for n in chosen if n not in known]
    if unknown:
        print(f"own_data.py: unknown dataset(s) {unknown}; known: {', '.join(known)}", file=sys.stderr)
        return 2
    seeds = [int(s) for s in args.seeds.split(",")]
    results = out / "results.jsonl"
    done = {(r["dataset"], r["seed"]) for r in read_rows(results) if r.get("method") == FPT}
    for name in chosen:
        path = sklearn_csv(name, out / "data") if name in SKLEARN_SETS else known[name]
        for seed in seeds:
            if (name, seed) in done:
                continue
            rows = run_one(name, path, seed, out, args)
            if seed != seeds[0]:  # the classic models do not depend on fpt's seed: one row each, from the first
                rows = [r for r in rows if r["method"] == FPT or r["method"] in ("random body", "no language model")]
            with results.open("a") as f:
                for row in rows[1:] + rows[:1]:  # fpt's row last: present only once the others are written
                    f.write(json.dumps(row) + "\n")
            print(json.dumps({k: rows[0][k] for k in ("dataset", "seed", "metric", "val", "test", "seconds")}), flush=True)
    text = table(read_rows(results))
    (out / "results.md").write_text(f"# FPT beside what you would otherwise run\n\n`python bench/own_data.py "
                                    f"{' '.join(sys.argv[1:] if argv is None else argv)}`\n\n{text}")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A seed ensemble of FPT on a UCR set, through scikit-learn: soft voting over FPTClassifier members.

    OMP_NUM_THREADS=1 python bench/ucr_ensemble.py data/user/GunPoint/GunPoint_TRAIN.ts --seeds 0,1,2,3,4 \\
        --option series_patch=5 --option lr=0.001 --option steps=400 --option eval_every=400 --jobs 2 \\
        --out docs/results/data/gunpoint-ensemble.jsonl

Every member is ``fpt.sklearn.FPTClassifier(modality="timeseries", seed=S, **options)`` fitted on the whole TRAIN
file; each holds out its own seeded, stratified ``val_fraction`` of it for validation (the split seed is the
member's seed), so the members differ in their initialisation, their batches and the series they train on.
``sklearn.ensemble.VotingClassifier(voting="soft")`` averages their class probabilities. The TEST file is read
once, after every member is fitted: the ensemble's test accuracy is the figure this script reports; the members'
own test accuracies and validation accuracies are written beside it, so the ensemble's gain over one member can
be read from the same run.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np


def _value(text: str):  # noqa: ANN202 (int, float or str)
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_options(items: list[str]) -> dict:
    options = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"--option {item!r}: give KEY=VALUE, e.g. series_patch=5")
        options[key] = _value(value)
    return options


def univariate(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(n, L) series and their labels from a UCR .ts file; only equal-length univariate sets fit a 2-D X."""
    from fpt.data.timeseries import read_ts

    xs, ys, _ = read_ts(path)
    shapes = {x.shape for x in xs}
    if len(shapes) != 1 or next(iter(shapes))[0] != 1:
        raise SystemExit(f"{path}: {sorted(shapes)[:3]}: this script takes equal-length univariate series")
    return np.stack([x[0] for x in xs]).astype(np.float64), np.asarray([str(y) for y in np.ravel(ys)])


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("train", type=Path, help="the *_TRAIN.ts file; its *_TEST.ts beside it is the test set")
    p.add_argument("--seeds", default="0,1,2,3,4")
    p.add_argument("--option", action="append", default=[], help="an FPTClassifier argument, KEY=VALUE")
    p.add_argument("--jobs", type=int, default=1, help="members fitted at once (joblib processes)")
    p.add_argument("--out", type=Path, default=None, help="append the result as one JSON line")
    args = p.parse_args(argv)
    import sklearn
    import torch
    from sklearn.ensemble import VotingClassifier

    from fpt.data.timeseries import pair
    from fpt.sklearn import FPTClassifier

    train_path, test_path = pair(args.train)
    if test_path is None:
        raise SystemExit(f"{args.train}: no *_TEST file beside it")
    seeds = [int(s) for s in args.seeds.split(",") if s]
    options = parse_options(args.option)
    X, y = univariate(train_path)
    members = [(f"seed{s}", FPTClassifier(modality="timeseries", seed=s, **options)) for s in seeds]
    ensemble = VotingClassifier(members, voting="soft", n_jobs=args.jobs)
    started = time.perf_counter()
    ensemble.fit(X, y)
    fit_seconds = time.perf_counter() - started
    X_test, y_test = univariate(test_path)  # read only now: nothing above could look at it
    member_rows = []
    for (name, _), member in zip(members, ensemble.estimators_, strict=True):
        predicted = ensemble.le_.inverse_transform(member.predict(X_test))  # members were fitted on encoded labels
        member_rows.append({"member": name, "val_accuracy": member.summary_["val_accuracy"],
                            "selected_step": member.summary_["selected_step"],
                            "test_accuracy": float((predicted == y_test).mean())})
    row = {"data": str(args.train), "test": str(test_path), "seeds": seeds, "options": options,
           "rule": "soft voting (mean class probability) over the members; the ensemble's test accuracy is reported",
           "train_size": len(y), "test_size": len(y_test),
           "test_accuracy": float((ensemble.predict(X_test) == y_test).mean()),
           "members": member_rows,
           "member_test_accuracy_mean": float(np.mean([m["test_accuracy"] for m in member_rows])),
           "fit_seconds": round(fit_seconds, 1), "jobs": args.jobs,
           "environment": {"python": platform.python_version(), "torch": torch.__version__,
                           "sklearn": sklearn.__version__}}
    print(json.dumps(row))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "a") as f:
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()

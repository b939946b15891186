"""The classic models' thread count on small data: gradient boosting (scikit-learn's HistGradientBoosting, OpenMP)
fitted under one thread and under every core, idle and beside busy processes, at a few table sizes.

    python bench/classic_threads.py --out docs/results/bench/classic_threads.json

Why: fpt.baselines fits the classic models on one thread below ``CLASSIC_ONE_THREAD_VALUES`` training values. OpenMP
threads wait for each other at every parallel region; when another process holds a core, each wait lasts a scheduler
slice, so on small data all cores can be far slower than one. ``--busy N`` starts N processes that spin at normal
priority for the length of the sitting (as a notebook, a second training or a browser would); without it the machine
must be idle (suspend a rerun lane first: bash bench/rerun_lane.sh suspend). Each size is fitted ``--repeats`` times
per thread count, alternating, and the median reported.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from closed_form_speed import processor  # noqa: E402


def _spin() -> None:  # a busy process: the load another program puts on a core
    while True:
        pass


def fit_seconds(rows: int, features: int, threads: int) -> float:
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    X = rng.normal(size=(rows, features))
    y = (X[:, 0] + X[:, 1] ** 2 > 1).astype(int)
    with threadpool_limits(limits=threads):
        start = time.perf_counter()
        HistGradientBoostingClassifier(random_state=0, early_stopping=False).fit(X, y)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="300x12,10000x20,80000x20", help="ROWSxFEATURES, comma-separated")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--busy", type=int, nargs="*", default=[0, 2], help="busy processes beside each sitting")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    results = []
    for busy in args.busy:
        spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(busy)]
        for p in spinners:
            p.start()
        try:
            for size in args.sizes.split(","):
                rows, features = (int(v) for v in size.split("x"))
                times: dict[int, list[float]] = {cores: [], 1: []}
                for _ in range(args.repeats):
                    for threads in (cores, 1):  # alternated: drift in the machine hits both alike
                        times[threads].append(fit_seconds(rows, features, threads))
                row = {"busy_processes": busy, "rows": rows, "features": features,
                       **{f"median_s_{t}_threads": round(statistics.median(v), 4) for t, v in times.items()},
                       "all_s": {str(t): [round(s, 4) for s in v] for t, v in times.items()}}
                row["ratio_all_cores_over_one"] = round(row[f"median_s_{cores}_threads"] / row["median_s_1_threads"], 2)
                print(json.dumps({k: v for k, v in row.items() if k != "all_s"}), flush=True)
                results.append(row)
        finally:
            for p in spinners:
                p.terminate()
    out = {"processor": processor(), "cores": cores, "load_average_at_end": os.getloadavg(), "repeats": args.repeats,
           "command": "python bench/classic_threads.py " + " ".join(f"--{k} {v}" for k, v in (
               ("sizes", args.sizes), ("repeats", args.repeats))) + " --busy " + " ".join(map(str, args.busy)),
           "results": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

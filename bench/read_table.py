"""How long ``fpt.data.load`` takes on a big table, and where the time goes (cProfile's top entries).

    python bench/read_table.py                  # 500,000 rows: 5 text columns of short codes, 5 numbers, a label
    python bench/read_table.py --rows 100000 --repeats 3 --top 15

The table (seeded, ~32 MB at 500,000 rows) is written to a temporary folder and removed afterwards. Compare two
trees by running this with each tree's ``PYTHONPATH``, interleaved, on a quiet machine: the per-value Python loops
that once held most of the time (``is_missing``, the text columns' number check) show as their own entries.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import tempfile
import time
from pathlib import Path

import numpy as np

CODES = 40  # distinct short codes per text column


def write_table(path: Path, rows: int, seed: int = 0) -> None:
    """``rows`` rows: text columns t0..t4 (codes such as 'c17', a few missing), numbers x0..x4, and a label."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    cols: dict[str, np.ndarray] = {}
    for j in range(5):
        codes = np.array([f"c{k}" for k in range(CODES)], dtype=object)[rng.integers(0, CODES, rows)]
        codes[rng.random(rows) < 0.01] = None  # an empty cell: missing
        cols[f"t{j}"] = codes
    for j in range(5):
        cols[f"x{j}"] = np.round(rng.normal(size=rows), 6)
    cols["label"] = np.array(["yes", "no"], dtype=object)[rng.integers(0, 2, rows)]
    pd.DataFrame(cols).to_csv(path, index=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=500_000)
    ap.add_argument("--repeats", type=int, default=1, help="timed loads (the profile is one more)")
    ap.add_argument("--top", type=int, default=12, help="profile entries shown, by own time")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from fpt import data
    from fpt.data import fingerprint

    with tempfile.TemporaryDirectory(prefix="fpt-bench-read-") as tmp:
        path = Path(tmp) / "table.csv"
        write_table(path, args.rows)
        print(f"{path.name}: {args.rows} rows, {path.stat().st_size / 1e6:.1f} MB")
        data.load(str(path))  # warm: imports (pyarrow, pandas) are not the reading
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            data.load(str(path))
            times.append(time.perf_counter() - start)
        print(f"load: {min(times):.2f} s (best of {len(times)}; all: {', '.join(f'{t:.2f}' for t in times)})")
        hashed = []  # the content fingerprint fit records and a resume checks (fpt.data.fingerprint), beside it
        for _ in range(args.repeats):
            start = time.perf_counter()
            fingerprint.of_path(path)
            hashed.append(time.perf_counter() - start)
        print(f"fingerprint: {min(hashed) * 1000:.1f} ms ({min(hashed) / min(times):.1%} of the load; best of "
              f"{len(hashed)})")
        profile = cProfile.Profile()
        profile.runcall(data.load, str(path))
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(args.top)
    print(out.getvalue())


if __name__ == "__main__":
    main()

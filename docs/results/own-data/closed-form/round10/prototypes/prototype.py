"""Round 10's throwaway prototype (TRAIN only): fpt's closed-form fit on a set's TRAIN file alone, its own CV figure.

    python docs/results/own-data/closed-form/round10/prototypes/prototype.py PLAID series_norm=series

The TRAIN file is given to fpt as in-memory arrays, so fpt carves its own validation and test fifths from it (the
archive's TEST file is never read); the figure is the mean of the fit's 5 fold scores over the examples it fitted.
Any further argument KEY=VALUE is a RunConfig field (the value read as JSON where it parses). Sets are bench/
own_data.py's names, written into /tmp/fpt-prototype-data when they come from a package (bench/package_sets.py).
"""
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[6] / "bench"))

import fpt  # noqa: E402
from fpt.data.timeseries import read_ts  # noqa: E402
from own_data import data_path, datasets  # noqa: E402

name, opts = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:])
for k, v in list(opts.items()):
    try:
        opts[k] = json.loads(v)
    except ValueError:
        pass
out = Path("/tmp/fpt-prototype-data")
x, y, _ = read_ts(data_path(name, datasets(out), out))
seed = int(opts.pop("seed", 0))
started = time.time()
exp = fpt.build(data=(x, y), fit="closed-form", seed=seed, device="cpu", **opts)
run = Path(tempfile.mkdtemp()) / "run"
fpt.fit(exp, out=run, progress=False)
record = json.loads((run / "summary.json").read_text())["closed_form"]
print(json.dumps({"set": name, **opts, "seed": seed, "cv": round(statistics.mean(record["fold_scores"]), 4),
                  "loo": round(record["cv_score"], 4), "members": record["members"], "features": record["features"],
                  "s": round(time.time() - started, 1)}), flush=True)

"""Wall seconds of ``fpt train --data`` per stage, for issue 40's speed target (a UCR/UEA set of up to 1,000
series x 1,000 points, or a 10,000-row table, with baselines and controls in under 60 s on an idle 2-core CPU).

    python bench/closed_form_speed.py --dataset GunPoint --out /tmp/speed.json           # aeon's bundled copy
    python bench/closed_form_speed.py --synthetic series:1000x1000 --out /tmp/series.json  # 1,000 series, 1,000 points
    python bench/closed_form_speed.py --synthetic table:10000x20 --out /tmp/table.json     # 10,000 rows, 20 columns
    python bench/closed_form_speed.py --data my.csv --option fit=closed-form --out /tmp/mine.json

It runs one plain ``fpt train --data`` in this process (the default fit, auto, unless ``--option fit=...``) into a
temporary run directory, and reads the stages from what the run records: the fit's choice (``selection.json``:
seconds per candidate compared), the final fit (``summary.json``: features, head, fold scores), each classic model
and each control (``baselines_models``), and the rest of the wall time (reading and tokenising the files, writing
the run). Prints one line per stage and writes them, with the machine (processor, cores, torch threads) and the
command, to ``--out`` as JSON. Timings are the machine's at that moment: measure on an idle one.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np


def processor() -> str:
    """The CPU's model name (Linux /proc/cpuinfo; else the platform's word)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _series(root: Path, n: int, length: int, rng: np.random.Generator) -> Path:
    """A two-class .ts pair of random walks whose class is their drift (TEST a quarter of TRAIN's size)."""
    from user_data_files import write_ts

    folder = root / "synthetic"
    folder.mkdir(parents=True, exist_ok=True)
    for split, size in (("TRAIN", n), ("TEST", max(1, n // 4))):
        y = rng.integers(0, 2, size)
        drift = np.where(y == 1, 0.05, -0.05)[:, None]
        X = np.cumsum(rng.normal(size=(size, length)) + drift, axis=1)[:, None, :]  # (n, 1, L)
        write_ts(folder / f"synthetic_{split}.ts", "synthetic", X, np.array(["ab"[v] for v in y]))
    return folder / "synthetic_TRAIN.ts"


def _table(root: Path, n: int, d: int, rng: np.random.Generator) -> Path:
    """A CSV whose class is the sign of a noisy linear score of its columns."""
    x = rng.normal(size=(n, d))
    y = (x @ rng.normal(size=d) + 0.5 * rng.normal(size=n) > 0).astype(int)
    path = root / "synthetic.csv"
    header = ",".join([*(f"x{j}" for j in range(d)), "label"])
    rows = "\n".join(",".join([*(f"{v:.4f}" for v in row), str(label)]) for row, label in zip(x, y, strict=True))
    path.write_text(header + "\n" + rows + "\n")
    return path


def make_synthetic(spec: str, root: Path, seed: int = 0) -> Path:
    """``series:NxL`` or ``table:NxD`` written under ``root``; returns what --data names."""
    kind, _, size = spec.partition(":")
    try:
        n, d = (int(v) for v in size.lower().split("x"))
    except ValueError:
        raise SystemExit(f"--synthetic {spec!r}: give series:NxL or table:NxD (e.g. series:1000x1000)") from None
    rng = np.random.default_rng(seed)
    if kind == "series":
        return _series(root, n, d, rng)
    if kind == "table":
        return _table(root, n, d, rng)
    raise SystemExit(f"--synthetic {spec!r}: kind must be series or table")


def stages(out: Path, wall: float) -> dict[str, float]:
    """Seconds per stage of the run in ``out``, from selection.json and summary.json."""
    summary = json.loads((out / "summary.json").read_text())
    result: dict[str, float] = {}
    selection = out / "selection.json"
    if selection.is_file():
        for name, seconds in (json.loads(selection.read_text()).get("seconds") or {}).items():
            result[f"choice: {name}"] = seconds
    record = summary.get("closed_form")
    if record:
        for name, seconds in record["seconds"].items():
            result[f"fit: closed form {name}"] = seconds
    else:
        result["fit: gradient training"] = summary.get("wall_seconds") or 0.0
    models = summary.get("baselines_models") or {}
    for name, entry in (models.get("models") or {}).items():
        result[f"baseline: {name}"] = entry.get("seconds") or 0.0
    for name, entry in (models.get("controls") or {}).items():
        result[f"control: {name}"] = entry.get("seconds") or 0.0
    if (models.get("controls_subsample") or {}).get("seconds") is not None:  # the run's fold figures on their rows
        result["controls: the run's folds on their rows"] = models["controls_subsample"]["seconds"]
    result["rest (reading, tokenising, writing)"] = round(max(0.0, wall - sum(result.values())), 3)
    result["total"] = round(wall, 3)
    return result


def main() -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))  # user_data_files, beside this script
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--dataset", help="a UCR/UEA set aeon bundles (written as .ts files first), e.g. GunPoint")
    what.add_argument("--synthetic", help="series:NxL or table:NxD, drawn here (seeded)")
    what.add_argument("--data", help="any file or folder fpt train --data reads")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="a config field for the run (e.g. fit=closed-form); repeatable")
    parser.add_argument("--out", required=True, help="the JSON file to write")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from fpt.cli import main as fpt_main

    with tempfile.TemporaryDirectory(prefix="fpt-speed-") as tmp:
        root = Path(tmp)
        if args.dataset:
            from user_data_files import write_ucr

            write_ucr(root, names=(args.dataset,))
            data = root / args.dataset / f"{args.dataset}_TRAIN.ts"
        elif args.synthetic:
            data = make_synthetic(args.synthetic, root)
        else:
            data = Path(args.data)
        argv = ["train", "--data", str(data), "--out", str(root / "run"), "--quiet", *args.option]
        started = time.perf_counter()
        code = fpt_main(argv)
        wall = time.perf_counter() - started
        if code != 0:
            raise SystemExit(f"fpt train exited {code}")
        result = stages(root / "run", wall)
        summary = json.loads((root / "run" / "summary.json").read_text())
    for name, seconds in result.items():
        print(f"{name:<45} {seconds:8.2f} s")
    doc = {"command": "fpt " + " ".join(argv[:2] + ["DATA"] + argv[3:4] + ["OUT", *argv[5:]]),
           "data": args.dataset or args.synthetic or args.data, "stages_seconds": result,
           "fit": "closed-form" if "closed_form" in summary else "gradient",
           "test": {k: summary.get(k) for k in ("test_accuracy", "test_r2") if k in summary},
           "machine": {"processor": processor(), "cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
                       "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None}}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()

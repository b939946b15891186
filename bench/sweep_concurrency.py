"""Sweep wall time against trials run at once, and local vs Ray results, on this machine.

    python bench/sweep_concurrency.py --out docs/results/bench/sweep_concurrency.jsonl
    python bench/sweep_concurrency.py --settings local:1 local:2 --keep /tmp/sweeps   # a part of it

Each setting runs ``fpt sweep SPEC`` from scratch (a fresh store: nothing reused) as a
subprocess and records its wall time, the CPU cores and load average it started on, and the
results table (configs ranked by validation accuracy, test beside it). Settings are
``local:N`` (N trials at once as local subprocesses, ``cores // N`` threads each, at least
one) and ``ray:N`` (Ray Tune trials on a local Ray instance with all cores, N at once). The
last line compares every setting's table with the first one's: trials with the same
threads per trial compute the same numbers, so their tables must match exactly; with other
thread counts float summation order differs and they may differ in the last digits.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPEC = Path(__file__).resolve().parent.parent / "examples" / "sweep-xor-lr.yaml"
COLUMNS = ("rank", "config", "val_accuracy_mean", "val_accuracy_std", "test_accuracy_mean", "test_accuracy_std",
           "n", "steps_mean")


def table(out: Path) -> list[dict[str, str]]:
    """The ranked configs: the swept fields (results.json's ``swept``) and COLUMNS."""
    swept = json.loads((out / "results.json").read_text()).get("swept", [])
    with open(out / "results.csv", newline="") as f:
        return [{k: row.get(k, "") for k in (*swept, *COLUMNS)} for row in csv.DictReader(f)]


def run_setting(setting: str, spec: Path, root: Path, cores: int) -> dict:
    executor, _, n = setting.partition(":")
    if executor not in ("local", "ray") or not n.isdigit() or int(n) < 1:
        raise SystemExit(f"setting {setting!r}: give local:N or ray:N with N >= 1")
    parallel = int(n)
    threads = max(1, cores // parallel)
    out = root / setting.replace(":", "-")
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-m", "fpt", "sweep", str(spec), "--out", str(out), "--parallel", str(parallel),
           "--threads-per-trial", str(threads), "--quiet"]
    if executor == "ray":
        cmd += ["--executor", "ray", "--num-cpus", str(cores)]
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    seconds = time.perf_counter() - t0
    row = {"setting": setting, "executor": executor, "parallel": parallel, "threads_per_trial": threads,
           "wall_seconds": round(seconds, 1), "returncode": proc.returncode, "load_average_start": round(load, 2),
           "command": " ".join(["fpt"] + cmd[3:])}
    if proc.returncode == 0:
        row["results"] = table(out)
    else:
        row["error"] = (proc.stderr or proc.stdout)[-2000:]
    return row


def compare(rows: list[dict]) -> list[str]:
    """Each setting's table against the first setting with the same threads per trial (those must match exactly),
    and against the very first setting (other thread counts may differ in float summation, hence in the last digits
    or a step reached)."""
    lines = []
    for i, r in enumerate(rows[1:], 1):
        peer = next((q for q in rows[:i] if q["threads_per_trial"] == r["threads_per_trial"]), None)
        against = [peer] if peer is not None else []
        if rows[0] is not peer:
            against.append(rows[0])
        verdicts = [f"{'the same table as' if r['results'] == q['results'] else 'a different table from'} "
                    f"{q['setting']} ({q['threads_per_trial']} thread(s) per trial)" for q in against]
        lines.append(f"{r['setting']} ({r['threads_per_trial']} thread(s) per trial, {r['wall_seconds']} s): "
                     + "; ".join(verdicts))
    return lines


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--spec", type=Path, default=SPEC)
    p.add_argument("--settings", nargs="+", default=["local:1", "local:2", "local:4", "ray:2"])
    p.add_argument("--out", type=Path, default=None, help="append one JSON line per setting to this file")
    p.add_argument("--keep", type=Path, default=None, help="write the sweeps here (default: a temporary folder)")
    args = p.parse_args(argv)
    import torch

    cores = os.cpu_count() or 1
    root = args.keep or Path(tempfile.mkdtemp(prefix="fpt-sweep-bench-"))
    machine = {"cpu": platform.processor() or platform.machine(), "cores": cores, "python": platform.python_version(),
               "torch": torch.__version__}
    sitting = time.strftime("%Y-%m-%dT%H:%M:%S")
    rows = []
    for setting in args.settings:
        row = {"sitting": sitting, "spec": str(args.spec.name), "machine": machine, **run_setting(setting, args.spec,
                                                                                                 root, cores)}
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k not in ("results", "machine")}), flush=True)
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            with open(args.out, "a") as f:
                f.write(json.dumps(row) + "\n")
    ok = [r for r in rows if "results" in r]
    if ok:
        first = ok[0]
        print(f"\nresults of {first['setting']} (configs ranked by validation accuracy):")
        for r in first["results"]:
            print("  " + "  ".join(f"{k}={v}" for k, v in r.items()))
        for line in compare(ok):
            print(line)
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Wall time to a target accuracy with the defaults a user gets (``fpt train``).

    python bench/time_to_accuracy.py                         # bit-xor 100%, mnist-5k 90%
    python bench/time_to_accuracy.py --runs bit-memory:0.99 --max-steps 3000

Prints one JSON line per run: steps and seconds to the target (None if not reached).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import fpt


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", nargs="+", default=["bit-xor:1.0", "mnist-5k:0.9"], help="TASK:TARGET pairs")
    p.add_argument("--body", default="minilm")
    p.add_argument("--init", default="pretrained")
    p.add_argument("--max-steps", type=int, default=5000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--precision", default="auto", choices=["auto", "fp32", "bf16"],
                   help="bf16 autocast also runs on CPUs with native bf16 (AVX512-BF16/AMX)")
    args = p.parse_args(argv)
    for item in args.runs:
        task, target = item.split(":")
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            exp = fpt.build(task=task, body=args.body, init=args.init, target=float(target), steps=args.max_steps,
                            seed=args.seed, precision=args.precision)
            built = time.perf_counter() - start
            summary = fpt.fit(exp, out=Path(tmp) / "run", progress=False)
        print(json.dumps({
            "task": task, "target": float(target), "body": args.body, "init": args.init, "precision": args.precision,
            "batch_size": exp.config.batch_size, "eval_every": exp.config.eval_every,
            "steps_to_target": summary["steps_to_target"], "reached": summary["steps_to_target"] is not None,
            "train_seconds": summary["wall_seconds"], "setup_seconds": round(built, 2),
            "total_seconds": round(time.perf_counter() - start, 2), "final_accuracy": summary["test_accuracy"],
        }), flush=True)


if __name__ == "__main__":
    main()

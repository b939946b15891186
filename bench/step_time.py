"""Milliseconds per training step and seconds per whole-validation evaluation: fp32, bf16 with per-call
weight casts (autocast alone), bf16 with the frozen weights stored in bf16 (what fpt does).

One process builds the three models and alternates them (rounds x steps each), so load drifts hit all
three alike; run it on an idle machine. Prints one JSON line per model and batch size, appended to --out.

    python bench/step_time.py --task bit-xor --body minilm --batch-sizes 4 16 \
        --out docs/results/bench/step_time.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--task", default="bit-xor")
    p.add_argument("--body", default="minilm")
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[4, 16])
    p.add_argument("--steps", type=int, default=30, help="timed steps per model per round")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", help="JSONL file the lines are appended to")
    args = p.parse_args()

    import torch

    import fpt
    from fpt import experiment
    from fpt.train import evaluate, train_step

    torch.set_num_threads(args.threads)
    store = experiment.store_frozen_bf16
    variants = (("fp32", "fp32", True), ("bf16-cast-per-call", "bf16", False), ("bf16-stored", "bf16", True))
    exps = {}
    for name, precision, stored in variants:
        experiment.store_frozen_bf16 = store if stored else (lambda model: 0)
        exps[name] = fpt.build(task=args.task, body=args.body, precision=precision, device="cpu")
    experiment.store_frozen_bf16 = store
    optimizers = {k: torch.optim.Adam([q for q in e.model.parameters() if q.requires_grad], lr=1e-3)
                  for k, e in exps.items()}
    load = os.getloadavg()[0]
    lines = []
    for batch in args.batch_sizes:
        times: dict[str, list[float]] = {k: [] for k in exps}
        for _ in range(args.rounds):
            for k, e in exps.items():
                for i in range(3):  # warm-up
                    train_step(e, optimizers[k], e.data.train.batch(i, batch))
                t = time.perf_counter()
                for i in range(args.steps):
                    train_step(e, optimizers[k], e.data.train.batch(i, batch))
                times[k].append((time.perf_counter() - t) / args.steps * 1000)
        for k, v in times.items():
            lines.append({"what": "train_step_ms", "model": k, "batch_size": batch, "median": round(statistics.median(v), 2),
                          "rounds": [round(x, 2) for x in v]})
    evals: dict[str, list[float]] = {k: [] for k in exps}
    for _ in range(args.rounds):
        for k, e in exps.items():
            t = time.perf_counter()
            evaluate(e, sets=[e.data.val])
            evals[k].append(time.perf_counter() - t)
    for k, v in evals.items():
        n = len(exps[k].data.eval_sets[exps[k].data.val])
        lines.append({"what": "eval_seconds", "model": k, "examples": n, "median": round(statistics.median(v), 3),
                      "rounds": [round(x, 3) for x in v]})
    for line in lines:
        line.update(task=args.task, body=args.body, threads=args.threads, load_average_start=round(load, 2),
                    torch=torch.__version__, time=time.strftime("%Y-%m-%dT%H:%M:%S"))
        text = json.dumps(line)
        print(text)
        if args.out:
            with open(args.out, "a") as f:
                f.write(text + "\n")


if __name__ == "__main__":
    main()

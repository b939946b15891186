"""Epoch time of the output-only linear probe (Table 10): cached features vs the uncached path.

    python bench/linear_probe.py                                     # ListOps, paper tokenisation, 512 tokens
    python bench/linear_probe.py --task digits task.tokens=pixel     # any task, options as task.KEY=VALUE

Both paths train the same head (``--freeze output``, dropout 0) with the same batches.
Uncached: every step runs the frozen body (timed over ``--uncached-steps`` steps, then
scaled to one epoch: the body's cost does not depend on which examples are drawn).
Cached: the body's features are computed once, then whole epochs train the head on them.
Prints one JSON line: seconds per epoch for each path, the one-time caching cost and the
ratio (the paper: 500-2000x).
"""

from __future__ import annotations

import argparse
import json
import math
import time

import torch

import fpt
from fpt.cache import cached_view
from fpt.config import parse_overrides
from fpt.train import train_step


def seconds_per_step(exp: fpt.Experiment, steps: int, warmup: int = 2) -> float:
    trainable = [p for p in exp.model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(trainable, lr=exp.config.lr)
    for i in range(warmup):
        train_step(exp, optimizer, exp.data.train.batch(i, exp.config.batch_size))
    start = time.perf_counter()
    for i in range(warmup, warmup + steps):
        train_step(exp, optimizer, exp.data.train.batch(i, exp.config.batch_size))
    return (time.perf_counter() - start) / steps


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", default="listops")
    p.add_argument("--body", default="minilm")
    p.add_argument("--init", default="pretrained")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--uncached-steps", type=int, default=10)
    p.add_argument("--cached-epochs", type=int, default=3)
    p.add_argument("--data-dir", default="data/bench")
    p.add_argument("overrides", nargs="*", help="task.KEY=VALUE options (default for listops: 2,000 generated "
                                                 "training examples, paper tokenisation, 512 tokens)")
    args = p.parse_args(argv)
    options = parse_overrides(args.overrides).get("task_options", {})
    if args.task == "listops" and not options:
        options = {"tokenisation": "paper", "generate": True, "n_train": 2000, "generate_val": 200, "generate_test": 200}
    exp = fpt.build(task=args.task, task_options=options, body=args.body, init=args.init, freeze="output",
                    dropout=0.0, batch_size=args.batch_size, cache_features="on", data_dir=args.data_dir)
    n_train = len(exp.data.train)
    steps_per_epoch = math.ceil(n_train / args.batch_size)
    uncached_epoch = seconds_per_step(exp, args.uncached_steps) * steps_per_epoch

    start = time.perf_counter()
    cached, cache_seconds = cached_view(exp)
    cached_epoch = seconds_per_step(cached, args.cached_epochs * steps_per_epoch) * steps_per_epoch
    print(json.dumps({
        "task": args.task, "task_options": options, "body": args.body, "tokens": exp.data.spec.seq_len,
        "train_examples": n_train, "batch_size": args.batch_size, "steps_per_epoch": steps_per_epoch,
        "uncached_epoch_seconds": round(uncached_epoch, 3), "cached_epoch_seconds": round(cached_epoch, 5),
        "epoch_speedup": round(uncached_epoch / cached_epoch, 1),
        "feature_cache_seconds": round(cache_seconds, 2),
        "cached_total_seconds": round(time.perf_counter() - start, 2),
        "threads": torch.get_num_threads(), "device": str(exp.device),
    }))


if __name__ == "__main__":
    main()

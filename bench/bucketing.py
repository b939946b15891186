"""What length bucketing saves on a variable-length task: padded tokens per epoch and step time.

    python bench/bucketing.py                                  # ListOps, LRA tokenisation, GPT-2's 1024 positions
    python bench/bucketing.py --steps 0 task.max_len=2000      # token counts only, LRA's full length

For ``bucket_batches`` 0 (plain shuffling) and the default, prints one JSON line each: the
tokens a whole epoch computes once every batch is trimmed to its longest example, the share
of them that is padding, and (with ``--steps``) measured training seconds per step.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import torch

import fpt
from fpt.config import RunConfig, parse_overrides
from fpt.train import train_step


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", default="listops")
    p.add_argument("--body", default="gpt2")
    p.add_argument("--init", default="random")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--buckets", type=int, nargs="+", default=[0, RunConfig().bucket_batches])
    p.add_argument("--steps", type=int, default=3, help="training steps timed per setting (0: counts only)")
    p.add_argument("--data-dir", default="data/bench")
    p.add_argument("overrides", nargs="*", help="task.KEY=VALUE options")
    args = p.parse_args(argv)
    options = {"tokenisation": "lra", "max_len": 1024, "generate": True, "n_train": 2000,
               "generate_val": 200, "generate_test": 200}
    options.update(parse_overrides(args.overrides).get("task_options", {}))
    for bucket in args.buckets:
        exp = fpt.build(task=args.task, task_options=options, body=args.body, init=args.init, batch_size=args.batch_size,
                        bucket_batches=bucket, data_dir=args.data_dir)
        train = exp.data.train
        steps = math.ceil(len(train) / args.batch_size)
        computed = real = 0
        for i in range(steps):
            lengths = train.batch(i, args.batch_size).lengths
            computed += int(lengths.max()) * len(lengths)
            real += int(lengths.sum())
        row = {"task": args.task, "task_options": options, "bucket_batches": bucket, "train_examples": len(train),
               "tokens_per_epoch": computed, "padding_share": round(1 - real / computed, 4)}
        if args.steps:
            optimizer = torch.optim.Adam([q for q in exp.model.parameters() if q.requires_grad], lr=exp.config.lr)
            train_step(exp, optimizer, train.batch(0, args.batch_size))  # warm-up
            start = time.perf_counter()
            for i in range(1, args.steps + 1):
                train_step(exp, optimizer, train.batch(i, args.batch_size))
            row["seconds_per_step"] = round((time.perf_counter() - start) / args.steps, 3)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()

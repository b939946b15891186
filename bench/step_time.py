"""Milliseconds per training step and seconds per whole-validation evaluation, per variant of the step.

Variants (``--variants``):

- ``fp32``: what fpt runs by default on CPU (fp32, its CPU-cheap dropout mask, fused Adam);
- ``fp32-torch-dropout``: the same with torch's own dropout and plain (per-tensor) Adam, as before;
- ``bf16-cast-per-call``: bf16 autocast alone (it casts every frozen fp32 weight on every call);
- ``bf16-stored``: bf16 with the frozen matmul weights stored in bf16 (what ``precision: bf16`` does);
- ``bf16-stored-torch-dropout``: that with torch's dropout and plain Adam;
- ``fp32-fused-attention``, ``bf16-stored-fused-attention``: fpt's step, but training attention through
  torch's fused kernel on CPU where no dropout is drawn (``--dropout 0``), as before;
- ``fp32-hf-gelu``, ``bf16-stored-hf-gelu``: fpt's step with Hugging Face's Python ``gelu_new`` put back
  where fpt runs torch's fused tanh-GELU (GPT-2 bodies; fpt.bodies.activations), as before.

One process builds the models and alternates them (rounds x steps each), so load drifts hit all
alike; run it on an idle machine. Prints one JSON line per variant and batch size, appended to --out.

    python bench/step_time.py --task bit-xor --body minilm --batch-sizes 4 16 \
        --out docs/results/bench/step_time.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import NamedTuple


class Variant(NamedTuple):
    precision: str
    stored: bool  # frozen matmul weights stored in bf16
    fpt_step: bool  # fpt's cheap dropout masks and fused Adam (False: torch's dropout, per-tensor Adam)
    explicit_attention: bool  # CPU training attention on the explicit softmax path where fpt takes it
    fused_gelu: bool = True  # torch's tanh-GELU kernel where Hugging Face computes gelu_new in Python


VARIANTS = {
    "fp32": Variant("fp32", True, True, True),
    "fp32-torch-dropout": Variant("fp32", True, False, True),
    "fp32-fused-attention": Variant("fp32", True, True, False),
    "bf16-cast-per-call": Variant("bf16", False, True, True),
    "bf16-stored": Variant("bf16", True, True, True),
    "bf16-stored-torch-dropout": Variant("bf16", True, False, True),
    "bf16-stored-fused-attention": Variant("bf16", True, True, False),
    "fp32-hf-gelu": Variant("fp32", True, True, True, fused_gelu=False),
    "bf16-stored-hf-gelu": Variant("bf16", True, True, True, fused_gelu=False),
}


def _python_gelu(model) -> None:
    """Put Hugging Face's Python gelu_new back where fpt.bodies.activations swapped in torch's kernel."""
    from torch import nn
    from transformers.activations import NewGELUActivation

    from fpt.bodies.swap import replace_modules

    replace_modules(model, lambda child: NewGELUActivation()
                    if isinstance(child, nn.GELU) and child.approximate == "tanh" else None)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--task", default="bit-xor")
    p.add_argument("--task-option", action="append", default=[], metavar="KEY=VALUE",
                   help="a task option, e.g. image_size=28 (YAML value)")
    p.add_argument("--body", default="minilm")
    p.add_argument("--init", default="pretrained", help="the body's init, e.g. random (GPT-2 builds offline)")
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[4, 16])
    p.add_argument("--variants", nargs="+", default=["fp32", "bf16-cast-per-call", "bf16-stored"], choices=list(VARIANTS))
    p.add_argument("--dropout", type=float, default=0.1, help="the body's dropout (config field dropout)")
    p.add_argument("--steps", type=int, default=30, help="timed steps per model per round")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", help="JSONL file the lines are appended to")
    p.add_argument("--label", help="recorded in every line, e.g. the commit measured, to compare code versions")
    args = p.parse_args()

    import torch

    import fpt
    from fpt import pipeline
    from fpt.bodies import attention, dropout
    from fpt.config import parse_overrides
    from fpt.train import evaluate, make_optimizer, train_step

    torch.set_num_threads(args.threads)
    # fpt's own reading: a malformed pair or one option given twice with two values is an error, not the last kept
    options = parse_overrides([f"task.{o}" for o in args.task_option], where="--task-option")
    task_options = options.get("task_options", {})
    store = pipeline.store_frozen_bf16
    exps, optimizers = {}, {}
    for name in args.variants:
        variant = VARIANTS[name]
        pipeline.store_frozen_bf16 = store if variant.stored else (lambda model: 0)
        exps[name] = e = fpt.build(task=args.task, task_options=task_options, body=args.body, init=args.init,
                                   precision=variant.precision, dropout=args.dropout, device="cpu")
        if not variant.fused_gelu:
            _python_gelu(e.model)
        trainable = [q for q in e.model.parameters() if q.requires_grad]
        optimizers[name] = make_optimizer(trainable, 1e-3) if variant.fpt_step else torch.optim.Adam(trainable, lr=1e-3)
    pipeline.store_frozen_bf16 = store

    def steps(name: str, n: int, batch: int) -> None:
        dropout.set_fast(VARIANTS[name].fpt_step)
        attention.set_train_explicit_on_cpu(VARIANTS[name].explicit_attention)
        e = exps[name]
        for i in range(n):
            train_step(e, optimizers[name], e.data.train.batch(i, batch))

    load = os.getloadavg()[0]
    lines = []
    for batch in args.batch_sizes:
        times: dict[str, list[float]] = {k: [] for k in exps}
        for _ in range(args.rounds):
            for k in exps:
                steps(k, 3, batch)  # warm-up
                t = time.perf_counter()
                steps(k, args.steps, batch)
                times[k].append((time.perf_counter() - t) / args.steps * 1000)
        for k, v in times.items():
            lines.append({"what": "train_step_ms", "model": k, "batch_size": batch, "median": round(statistics.median(v), 2),
                          "rounds": [round(x, 2) for x in v]})
    dropout.set_fast(True)
    attention.set_train_explicit_on_cpu(True)
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
    from time_to_accuracy import machine_info  # bench/ is this script's directory: the same machine record

    info = machine_info()
    machine = {"cpu": info["cpu"], "bf16_instructions": info.get("bf16_instructions"),
               "bf16_matmul_speedup": info.get("bf16_speedup")}
    for line in lines:
        line.update(**machine)
        line.update(task=args.task, task_options=task_options, body=args.body, init=args.init, dropout=args.dropout,
                    threads=args.threads, load_average_start=round(load, 2), torch=torch.__version__,
                    time=time.strftime("%Y-%m-%dT%H:%M:%S"), **({"label": args.label} if args.label else {}))
        text = json.dumps(line)
        print(text)
        if args.out:
            with open(args.out, "a") as f:
                f.write(text + "\n")


if __name__ == "__main__":
    main()

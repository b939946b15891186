"""fpt params: trainable and total parameters per group (the paper's accounting)."""

from __future__ import annotations

import argparse
import dataclasses
import json

from fpt.errors import ConfigError

HELP = "count trainable and total parameters per group for a body, task shape and freeze policy"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--body", default="minilm", help="a body fpt list names, a Hugging Face id or a local directory "
                   "(default: minilm)")
    p.add_argument("--init", default="pretrained", help="pretrained | random | stats | checkpoint:PATH "
                                                              "(default: pretrained)")
    p.add_argument("--freeze", default="paper", help="freeze policy, as fpt list names them (default: paper)")
    p.add_argument("--layers", type=int, default=None)
    p.add_argument("--task", default=None, help="take the shape from a task; or give it with the flags below")
    p.add_argument("--token-dim", type=int, default=None, help="continuous token dimension d")
    p.add_argument("--vocab-size", type=int, default=None, help="discrete vocabulary size V")
    p.add_argument("--seq-len", type=int, default=None)
    p.add_argument("--classes", type=int, default=None)
    p.add_argument("--outputs", type=int, default=1, help="output tokens k read by the head (default: 1)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def count(args: argparse.Namespace) -> dict:
    from fpt.config import RunConfig
    from fpt.freeze import parameter_totals
    from fpt.model import InputSpec
    from fpt.pipeline import architecture_counts
    from fpt.tasks import build_task

    config = RunConfig(body=args.body, init=args.init, freeze=args.freeze, layers=args.layers,
                       task=args.task or "bit-xor")
    if args.task:
        spec = build_task(args.task, {}, 0).spec
    else:
        for flag in ("token_dim", "vocab_size", "seq_len", "classes", "outputs"):
            value = getattr(args, flag)
            if value is not None and value < 1:
                raise ConfigError(f"--{flag.replace('_', '-')} {value}: must be >= 1")
        missing = [f for f in ("seq_len", "classes") if getattr(args, f) is None]
        if missing or (args.token_dim is None) == (args.vocab_size is None):
            raise ConfigError("give --task, or --seq-len, --classes and one of --token-dim / --vocab-size")
        spec = InputSpec(seq_len=args.seq_len, num_classes=args.classes, token_dim=args.token_dim,
                         vocab_size=args.vocab_size, num_outputs=args.outputs)
    counts = architecture_counts(config, spec)
    groups = {g: {**dataclasses.asdict(c), "outside_blocks": c.total - c.in_blocks} for g, c in counts.items()}
    totals = parameter_totals(counts)
    trainable, total = totals.trainable, totals.total
    return {"body": args.body, "init": args.init, "freeze": args.freeze, "spec": dataclasses.asdict(spec),
            "groups": groups, "trainable": trainable, "total": total, "trainable_share": trainable / total}


def run(args: argparse.Namespace) -> int:
    result = count(args)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"{'group':<12} {'trainable':>12} {'total':>14} {'in blocks':>12} {'outside':>10}")
    for g, c in result["groups"].items():
        print(f"{g:<12} {c['trainable']:>12,} {c['total']:>14,} {c['in_blocks']:>12,} {c['outside_blocks']:>10,}")
    print(f"{'all':<12} {result['trainable']:>12,} {result['total']:>14,}   "
          f"({100 * result['trainable_share']:.3f}% trained)")
    print("(word embeddings of the body are not part of an FPT and are not counted)")
    return 0

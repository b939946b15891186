"""fpt weights: per-layer mean and std of a body's attention and feed-forward weights (Figure 6)."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "per-layer mean/std of a body's attention and feed-forward weights and biases vs the default init"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--body", required=True, help="a registered body (fpt list), Hugging Face id or local directory")
    p.add_argument("--init", action="append", default=None,
                   help="pretrained | random | stats | checkpoint:PATH; repeat to overlay (default: pretrained)")
    p.add_argument("--seed", type=int, default=0, help="seed for random/stats init (default: 0)")
    p.add_argument("--out", default=None, help="output directory (default: weights/BODY)")


def run(args: argparse.Namespace) -> int:
    from fpt.analysis.weights import body_stats, plot, write_csv

    inits = args.init or ["pretrained"]
    out = Path(args.out or f"weights/{Path(args.body).name}")
    stats = [s for init in inits for s in body_stats(args.body, init, args.seed)]
    out.mkdir(parents=True, exist_ok=True)
    write_csv(stats, out / "weights.csv")
    plot(stats, out / "weights.png", f"{Path(args.body).name} ({', '.join(inits)}): per-layer weight statistics")
    print(f"{'init':<12} {'layer':>5} {'group':<12} {'weight std':>11} {'bias std':>9} {'init std':>9}")
    by_key = {(s.init, s.layer, s.group, s.kind): s for s in stats}
    for (init, layer, group, kind), s in by_key.items():
        if kind == "weight" and group != "layernorm":
            bias = by_key.get((init, layer, group, "bias"))
            print(f"{init:<12} {layer:>5} {group:<12} {s.std:>11.4f} {bias.std if bias else float('nan'):>9.4f} "
                  f"{s.init_std:>9.4f}")
    print(f"written: {out / 'weights.csv'}, {out / 'weights.png'}")
    return 0

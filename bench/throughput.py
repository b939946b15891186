"""Training and evaluation throughput of FPT per task shape and body, with MFU.

Prints one JSON line per configuration: samples/s (train, eval), peak memory, FLOPs
per example (counted by torch's FlopCounterMode on the real step), achieved FLOP/s and
its ratio to this machine's own matrix-multiply peak, measured in the same run.

    python bench/throughput.py                       # every shape, gpt2 (random) and minilm
    python bench/throughput.py --shapes bit-memory cifar10 --bodies gpt2 --batch-size 16
    python bench/throughput.py --no-last-block-rows --eager-attention   # optimisations off
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import time

import torch

from fpt.bodies import attention
from fpt.config import RunConfig
from fpt.model import InputSpec
from fpt.pipeline import build_model
from fpt.train import make_optimizer

# (seq_len, token_dim or None, vocab or None, classes, outputs k, predictions per output m)
SHAPES = {
    "bit-memory": (120, 50, None, 2, 20, 50),
    "bit-xor": (10, 1, None, 2, 5, 1),
    "mnist": (64, 16, None, 10, 1, 1),
    "cifar10": (64, 48, None, 10, 1, 1),
    "cifar10-lra": (1024, 1, None, 10, 1, 1),
    "listops": (512, None, 16, 10, 1, 1),
}


def matmul_peak(device: torch.device, dtype: torch.dtype, seconds: float = 3.0) -> float:
    """FLOP/s of a large square matmul: the practical ceiling for this machine and dtype."""
    n = 4096 if device.type == "cuda" else 1536
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    for _ in range(3):
        a @ b
    _sync(device)
    reps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        a @ b
        reps += 1
    _sync(device)
    return 2 * n**3 * reps / (time.perf_counter() - start)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def _batch(spec: InputSpec, size: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    if spec.vocab_size is not None:
        x = torch.randint(1, spec.vocab_size, (size, spec.seq_len), device=device)
    else:
        x = torch.randn(size, spec.seq_len, spec.token_dim, device=device)
    y = torch.randint(0, spec.num_classes, (size, spec.num_outputs * spec.per_token), device=device)
    return x, y


def _flops(fn) -> int:
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def measure(shape: str, body: str, args: argparse.Namespace, device: torch.device, peak: float) -> dict:
    seq_len, dim, vocab, classes, k, m = SHAPES[shape]
    spec = InputSpec(seq_len=seq_len, num_classes=classes, token_dim=dim, vocab_size=vocab, num_outputs=k, per_token=m)
    config = RunConfig(body=body, init=args.init, last_block_rows=not args.no_last_block_rows, dropout=0.1)
    model = build_model(config, spec).to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = make_optimizer(params, 1e-3)  # fpt's training step: torch's fused Adam
    x, y = _batch(spec, args.batch_size, device)
    xe, ye = _batch(spec, args.eval_batch_size, device)
    amp = torch.autocast(device.type, dtype=torch.bfloat16, enabled=args.bf16)

    def train_step() -> None:
        model.train()
        opt.zero_grad(set_to_none=True)
        with amp:
            logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits.float().reshape(-1, classes), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()

    @torch.inference_mode()
    def eval_step() -> None:
        model.eval()
        with amp:
            model(xe)

    def timed(fn, n_examples: int) -> tuple[float, float]:
        fn()  # warm-up
        _sync(device)
        reps, start = 0, time.perf_counter()
        while reps < args.min_reps or time.perf_counter() - start < args.seconds:
            fn()
            reps += 1
        _sync(device)
        elapsed = time.perf_counter() - start
        return n_examples * reps / elapsed, elapsed / reps

    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    train_flops = _flops(train_step) / args.batch_size
    eval_flops = _flops(eval_step) / args.eval_batch_size
    train_sps, _ = timed(train_step, args.batch_size)
    eval_sps, _ = timed(eval_step, args.eval_batch_size)
    if device.type == "cuda":
        peak_mem = torch.cuda.max_memory_allocated() / 2**20
    else:
        peak_mem = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # process high-water mark, MiB
    return {
        "shape": shape, "body": body, "init": args.init, "batch_size": args.batch_size,
        "eval_batch_size": args.eval_batch_size, "device": str(device), "threads": torch.get_num_threads(),
        "bf16": args.bf16, "last_block_rows": not args.no_last_block_rows, "fused_attention": not args.eager_attention,
        "train_samples_per_s": round(train_sps, 3), "eval_samples_per_s": round(eval_sps, 3),
        "train_gflop_per_example": round(train_flops / 1e9, 3), "eval_gflop_per_example": round(eval_flops / 1e9, 3),
        "train_tflops": round(train_sps * train_flops / 1e12, 4), "eval_tflops": round(eval_sps * eval_flops / 1e12, 4),
        "matmul_peak_tflops": round(peak / 1e12, 4),
        "train_mfu": round(train_sps * train_flops / peak, 4), "eval_mfu": round(eval_sps * eval_flops / peak, 4),
        "peak_memory_mib": round(peak_mem, 1),
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    p.add_argument("--bodies", nargs="+", default=["gpt2", "minilm"])
    p.add_argument("--init", default="random")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--eval-batch-size", type=int, default=64)
    p.add_argument("--seconds", type=float, default=10.0, help="minimum timing window per measurement")
    p.add_argument("--min-reps", type=int, default=2)
    p.add_argument("--device", default="auto")
    p.add_argument("--bf16", action="store_true", help="bf16 autocast (peak measured in bf16 too)")
    p.add_argument("--no-last-block-rows", action="store_true", help="compute every token in the last block")
    p.add_argument("--eager-attention", action="store_true", help="explicit softmax attention instead of fused SDPA")
    args = p.parse_args(argv)
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else
                          ("cpu" if args.device == "auto" else args.device))
    attention.set_fused(not args.eager_attention)
    peak = matmul_peak(device, torch.bfloat16 if args.bf16 else torch.float32)
    print(json.dumps({"machine": platform.processor() or platform.machine(), "python": sys.version.split()[0],
                      "torch": torch.__version__, "device": str(device), "threads": torch.get_num_threads(),
                      "matmul_peak_tflops": round(peak / 1e12, 4)}), flush=True)
    for body in args.bodies:
        for shape in args.shapes:
            print(json.dumps(measure(shape, body, args, device, peak)), flush=True)


if __name__ == "__main__":
    main()

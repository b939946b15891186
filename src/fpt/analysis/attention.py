"""Attention maps of a trained run (the paper's Figures 3-5), and how much attention lands where it should.

The maps are read from one block of the rebuilt model: the body runs up to that block
(embedding, then the blocks before it) and the block's attention probabilities are
taken for held-out examples. Token positions are named as the task lays them out, and
for tasks whose answer depends on known positions (the bit tasks) a score says how much
of each output token's attention falls on those positions. That turns "pretrained
attends more sharply than random" into a number.

Dimension legend: N examples, H heads, T tokens, k output tokens (the ones the head reads).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from fpt import rundir
from fpt.errors import ConfigError, option, python_entry
from fpt.registry import Registry
from fpt.rundir import LATEST
from fpt.tasks.base import Batch

Tensor = torch.Tensor

# Per-example matrices are saved only up to this many floats (N*H*T*T); beyond it, the mean.
MAX_SAVED_FLOATS = 32_000_000


@dataclass(frozen=True)
class TokenLayout:
    """How a task's token positions are named."""

    labels: list[str]  # one name per position (T)
    outputs: list[int]  # positions the head reads, for fixed-length tasks (highlighted in plots)
    spans: list[tuple[str, int, int]] = field(default_factory=list)  # named [start, stop) ranges, for long inputs


class TaskView(Protocol):
    """What the attention analysis knows about one task's token layout."""

    what: str  # one line: what the headline score measures

    def layout(self, options: Any, seq_len: int) -> TokenLayout: ...

    def targets(self, options: Any, batch: Batch) -> dict[str, Tensor]:
        """Named (N, k, T) masks, True on the keys output token j needs; the first is the headline."""


# A task without a view gets integer positions and no score; adding one is a decorated class.
VIEWS: Registry = Registry("attention view")


@VIEWS.register("bit-xor")
class BitXorView:
    what = "attention mass each output token b_j puts on the two bits it XORs (a_j and b_j)"

    def layout(self, options: Any, seq_len: int) -> TokenLayout:
        n = options.n_bits
        labels = [f"a{i}" for i in range(n)] + [f"b{i}" for i in range(n)]
        # The head reads the last n tokens, which are the second string's bits: token b_j predicts a_j XOR b_j.
        return TokenLayout(labels, list(range(n, 2 * n)), [("a", 0, n), ("b", n, 2 * n)])

    def targets(self, options: Any, batch: Batch) -> dict[str, Tensor]:
        n = options.n_bits
        j = torch.arange(n)
        mask = torch.zeros(n, 2 * n, dtype=torch.bool)  # (k, T)
        mask[j, j] = True  # a_j
        mask[j, n + j] = True  # b_j: the output token itself
        return {"xor_inputs": mask.expand(len(batch), n, 2 * n)}


@VIEWS.register("bit-memory")
class BitMemoryView:
    what = "attention mass the query tokens put on the stored string the query was drawn from"

    def layout(self, options: Any, seq_len: int) -> TokenLayout:
        per = options.n_bits // options.token_dim  # tokens per string
        labels = [f"s{i}.{c}" for i in range(options.n_strings) for c in range(per)] + [f"q.{c}" for c in range(per)]
        spans = [(f"s{i}", i * per, (i + 1) * per) for i in range(options.n_strings)]
        spans.append(("query", options.n_strings * per, (options.n_strings + 1) * per))
        return TokenLayout(labels, list(range(options.n_strings * per, (options.n_strings + 1) * per)), spans)

    def targets(self, options: Any, batch: Batch) -> dict[str, Tensor]:
        n, per = options.n_strings, options.n_bits // options.token_dim
        N, T = len(batch), batch.x.shape[1]
        strings = batch.x[:, : n * per].reshape(N, n, options.n_bits)  # (N, n, bits), values -1/+1
        # The target is the chosen string itself, so the stored string equal to it is the one queried.
        equal = ((strings > 0) == batch.y[:, None, :].bool()).all(-1)  # (N, n)
        if not bool(equal.any(-1).all()):
            raise ValueError("bit-memory: an example's target equals none of its stored strings")
        chosen = equal.int().argmax(-1)  # (N,): the first matching string
        start = chosen * per  # (N,)
        keys = torch.arange(T)[None, None, :]  # (1, 1, T)
        whole = (keys >= start[:, None, None]) & (keys < (start + per)[:, None, None])  # (N, 1, T)
        chunk = keys == (start[:, None, None] + torch.arange(per)[None, :, None])  # (N, k, T): same 50 bits
        return {"matching_string": whole.expand(N, per, T), "matching_chunk": chunk}


class GenericView:
    what = ""

    def layout(self, options: Any, seq_len: int) -> TokenLayout:
        return TokenLayout([str(t) for t in range(seq_len)], [])

    def targets(self, options: Any, batch: Batch) -> dict[str, Tensor]:
        return {}


def view_for(task: str) -> TaskView:
    return VIEWS.get(task)() if task in VIEWS else GenericView()


# --- computing maps ---------------------------------------------------------------------------

def block_attention(model: Any, x: Tensor, lengths: Tensor | None, layer: int, precision: str | None = None) -> Tensor:
    """Attention probabilities (N, H, T, T) of block ``layer`` of an FPT, dropout off, in the run's ``precision``
    (fp32 or bf16; default: bf16 when the model stores weights in bf16, as a bf16 run stores its frozen ones)."""
    from fpt.inference import inference

    blocks = len(model.body.blocks)
    if not 0 <= layer < blocks:
        raise ConfigError(f"{option('layer', str(layer), placeholder=True)}: this model runs blocks 0..{blocks - 1}")
    if precision is None:
        precision = "bf16" if any(p.dtype == torch.bfloat16 for p in model.parameters()) else "fp32"
    with inference(model, x.device, precision):
        h = model.hidden(x, lengths, layers=layer)  # (N, T, D): embedding, then blocks < layer
        try:
            return model.body.attention_weights(layer, h, model.pad_mask(x, lengths)).float()
        except NotImplementedError as exc:  # LSTM bodies have no attention
            raise ConfigError(str(exc)) from None


def uniform_attention(mask: Tensor) -> Tensor:
    """Attention spread evenly over the allowed keys: the chance level for a score. mask (N, 1, T, T)."""
    m = mask.float()
    return m / m.sum(-1, keepdim=True).clamp_min(1)


def allowed_keys(N: int, T: int, causal: bool, pad_mask: Tensor | None) -> Tensor:
    """Boolean (N, 1, T, T): which keys each query may attend to."""
    mask = torch.ones(N, 1, T, T, dtype=torch.bool)
    if causal:
        mask &= torch.ones(T, T, dtype=torch.bool).tril()
    if pad_mask is not None:
        mask &= pad_mask[:, None, None, :].cpu()
    return mask


def output_attention(attn: Tensor, rows: Tensor) -> Tensor:
    """The attention rows (N, H, k, T) of the output tokens at ``rows`` (N, k)."""
    N, H, T, _ = attn.shape
    index = rows[:, None, :, None].expand(N, H, rows.shape[1], T)
    return attn.gather(2, index)


def mass_on(attn: Tensor, rows: Tensor, target: Tensor) -> Tensor:
    """Attention mass (N, H, k) each output token puts on its target keys (N, k, T)."""
    return (output_attention(attn, rows) * target[:, None].float()).sum(-1)


def entropy(attn: Tensor, rows: Tensor) -> Tensor:
    """Entropy in nats (N, H, k) of the output tokens' attention: lower is sharper."""
    p = output_attention(attn, rows)
    return -(p * p.clamp_min(1e-12).log()).sum(-1)


def _summary(values: Tensor, baseline: Tensor) -> dict[str, Any]:
    per_head = values.mean(dim=(0, 2))  # (H,): mean over examples and output tokens
    return {"mean": round(float(per_head.mean()), 4), "per_head": [round(float(v), 4) for v in per_head],
            "uniform_baseline": round(float(baseline.mean()), 4)}


def score(attn: Tensor, rows: Tensor, targets: dict[str, Tensor], allowed: Tensor) -> dict[str, Any]:
    """Mean and per-head attention mass on each target, the entropy of output tokens, and their chance levels."""
    uniform = uniform_attention(allowed)
    out = {name: _summary(mass_on(attn, rows, t), mass_on(uniform, rows, t)) for name, t in targets.items()}
    out["entropy"] = _summary(entropy(attn, rows), entropy(uniform, rows))
    return out


@dataclass
class AttentionResult:
    attn: Tensor  # (N, H, T, T)
    rows: Tensor  # (N, k): output token positions
    layout: TokenLayout
    targets: dict[str, Tensor]
    scores: dict[str, Any]
    info: dict[str, Any]  # task, body, init, freeze, layer, ...

    @property
    def headline(self) -> str | None:
        return next(iter(self.targets), None)


@python_entry
def analyse(exp: Any, layer: int = 0, examples: int = 16, info: dict[str, Any] | None = None) -> AttentionResult:
    """Attention of block ``layer`` on the first ``examples`` examples of the test set."""
    from fpt.config import from_dict
    from fpt.tasks import TASKS

    if examples < 1:
        raise ConfigError(f"{option('examples', str(examples), placeholder=True)} must be >= 1")
    cfg = exp.config
    batch = exp.data.eval_sets[exp.data.test].slice(0, examples)
    batch = batch.trim() if batch.lengths is not None else batch
    x = batch.x.to(exp.device)
    lengths = None if batch.lengths is None else batch.lengths.to(exp.device)
    attn = block_attention(exp.model, x, lengths, layer, exp.precision).cpu()  # (N, H, T, T)
    rows = exp.model.output_rows(x, lengths).cpu()  # (N, k)
    pad = exp.model.pad_mask(x, lengths)
    options = from_dict(TASKS.get(cfg.task).Options, cfg.task_options, where=f"task {cfg.task!r} options")
    view = view_for(cfg.task)
    targets = view.targets(options, batch)
    N, H, T, _ = attn.shape
    scores = score(attn, rows, targets, allowed_keys(N, T, exp.model.body.causal, None if pad is None else pad.cpu()))
    meta = {"task": cfg.task, "task_options": cfg.task_options, "body": cfg.body, "init": cfg.init,
            "freeze": cfg.freeze, "layer": layer, "examples": N, "heads": H, "seq_len": T,
            "causal": bool(exp.model.body.causal), "what": view.what, **(info or {})}
    return AttentionResult(attn, rows, view.layout(options, T), targets, scores, meta)


@python_entry
def analyse_run(run_dir: Path, layer: int = 0, examples: int = 16, which: str = LATEST,
                device: str | None = None) -> AttentionResult:
    """``analyse`` on a run directory's checkpoint (latest or best)."""
    from fpt.run import Run

    exp = Run(run_dir).experiment(which, device)
    return analyse(exp, layer, examples, {"run_dir": str(run_dir), "which": which})


# --- plotting and files -----------------------------------------------------------------------

def _ticks(ax: Any, layout: TokenLayout, T: int, fontsize: float) -> None:
    if T <= 40:
        ticks = list(range(T))
        ax.set_xticks(ticks, layout.labels[:T], rotation=90, fontsize=fontsize)
        ax.set_yticks(ticks, layout.labels[:T], fontsize=fontsize)
        for t, label in zip(ticks, ax.get_yticklabels(), strict=True):
            if t in layout.outputs:
                label.set_color("tab:red")  # output rows: what the head reads
        return
    if layout.spans:
        centres = [(a + b - 1) / 2 for _, a, b in layout.spans]
        names = [name for name, _, _ in layout.spans]
        ax.set_xticks(centres, names, fontsize=fontsize)
        ax.set_yticks(centres, names, fontsize=fontsize)
        for _, a, _ in layout.spans[1:]:
            ax.axhline(a - 0.5, color="white", lw=0.4, alpha=0.6)
            ax.axvline(a - 0.5, color="white", lw=0.4, alpha=0.6)
    else:
        step = max(1, T // 8)
        ticks = list(range(0, T, step))
        ax.set_xticks(ticks, [layout.labels[t] for t in ticks], fontsize=fontsize)
        ax.set_yticks(ticks, [layout.labels[t] for t in ticks], fontsize=fontsize)
    if layout.outputs and T > 40:
        ax.axhline(min(layout.outputs) - 0.5, color="tab:red", lw=0.8, ls="--")


def _heatmap(ax: Any, matrix: np.ndarray, layout: TokenLayout, title: str, fontsize: float = 7) -> Any:
    image = ax.imshow(matrix, cmap="viridis", vmin=0.0, vmax=max(float(matrix.max()), 1e-6), interpolation="nearest")
    ax.set_title(title, fontsize=fontsize + 2)
    _ticks(ax, layout, matrix.shape[0], fontsize)
    ax.set_xlabel("key (attended to)", fontsize=fontsize)
    ax.set_ylabel("query", fontsize=fontsize)
    return image


def _figure(width: float, height: float) -> Any:
    # A bare Figure (no pyplot) renders with Agg and keeps no global state between calls.
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=110, layout="constrained")


def plot_heads(attn_mean: np.ndarray, layout: TokenLayout, path: Path, title: str) -> None:
    """One heatmap per head (H, T, T), averaged over examples."""
    H = attn_mean.shape[0]
    cols = math.ceil(math.sqrt(H))
    rows = math.ceil(H / cols)
    fig = _figure(3.2 * cols, 3.2 * rows + 0.4)
    axes = fig.subplots(rows, cols, squeeze=False)
    for h, ax in enumerate(axes.flat):
        if h < H:
            _heatmap(ax, attn_mean[h], layout, f"head {h}", fontsize=5)
        else:
            ax.axis("off")
    fig.suptitle(title, fontsize=9)
    _save_figure(fig, path)


def plot_map(matrix: np.ndarray, layout: TokenLayout, path: Path, title: str, marks: np.ndarray | None = None) -> None:
    """One heatmap (T, T); ``marks`` (T, T) outlines the cells a score counts."""
    T = matrix.shape[0]
    size = min(9.0, 3.0 + T * 0.12)
    fig = _figure(size + 1.0, size)
    ax = fig.subplots()
    image = _heatmap(ax, matrix, layout, title, fontsize=7 if T <= 40 else 6)
    if marks is not None and marks.any():
        qy, kx = np.nonzero(marks)
        ax.scatter(kx, qy, s=max(2.0, 300.0 / T), facecolors="none", edgecolors="tab:red", linewidths=0.6)
    fig.colorbar(image, ax=ax, shrink=0.8, label="attention probability")
    _save_figure(fig, path)


def _save_figure(fig: Any, path: Path) -> None:
    """Atomically (temporary name, then renamed): a stop mid-write leaves the old image or none, never half of one."""
    rundir.write_with(path, lambda tmp: fig.savefig(tmp, format=Path(path).suffix.lstrip(".") or "png"))


def _save_array(array: np.ndarray, path: Path) -> None:
    def save(tmp: Path) -> None:
        with open(tmp, "wb") as f:  # a file object: np.save would add .npy to the temporary name
            np.save(f, array)

    rundir.write_with(path, save)


def _marks(result: AttentionResult, example: int) -> np.ndarray | None:
    name = result.headline
    if name is None:
        return None
    T = result.attn.shape[-1]
    marks = np.zeros((T, T), dtype=bool)
    rows = result.rows[example].numpy()
    marks[rows] = result.targets[name][example].numpy()
    return marks


def write(result: AttentionResult, out: Path) -> dict[str, Any]:
    """heads.png, mean.png, example0.png, attention.npy / attention_mean.npy and score.json in ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    # score.json, written last, says the folder is whole (fpt report reads only folders that have one): an older
    # one goes first, so a write stopped halfway never sits beside it as if it were its maps
    (out / "score.json").unlink(missing_ok=True)
    attn = result.attn.numpy().astype(np.float32)  # (N, H, T, T)
    mean = attn.mean(0)  # (H, T, T)
    _save_array(mean, out / "attention_mean.npy")
    saved_all = attn.size <= MAX_SAVED_FLOATS
    if saved_all:
        _save_array(attn, out / "attention.npy")
    info = result.info
    where = f"{info['task']} / {Path(str(info['body'])).name} / {info['init']} / {info['freeze']}, block {info['layer']}"
    plot_heads(mean, result.layout, out / "heads.png", f"{where}: each head, mean of {attn.shape[0]} examples")
    plot_map(mean.mean(0), result.layout, out / "mean.png", f"{where}\nmean over heads and {attn.shape[0]} examples")
    plot_map(attn[0].mean(0), result.layout, out / "example0.png", f"{where}\nexample 0, mean over heads"
             + ("; circles: positions scored" if result.headline else ""), _marks(result, 0))
    headline = result.headline
    doc = {**info, "headline": None if headline is None else {"name": headline, **result.scores[headline]},
           "scores": result.scores, "labels": result.layout.labels, "outputs": result.layout.outputs,
           "files": {"per_example": "attention.npy" if saved_all else None, "mean": "attention_mean.npy",
                     "heads": "heads.png", "mean_plot": "mean.png", "example_plot": "example0.png"}}
    rundir.write_text(out / "score.json", json.dumps(doc, indent=1))
    return doc


def default_out(run_dir: Path, which: str, layer: int) -> Path:
    return Path(run_dir) / "attention" / f"{which}-layer{layer}"

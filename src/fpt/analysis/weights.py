"""Per-layer statistics of a body's weights and biases (the paper's Figure 6).

For each block, the attention and feed-forward parameters are pooled (classified by the
body's own group regexes, weight vs bias by the name's suffix) and their mean and
standard deviation are compared with the default initialisation: std
``initializer_range`` (0.02 for GPT-2 and BERT) for weights, 0 for biases.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn

from fpt import rundir
from fpt.settings import RunConfig

PLOTTED_GROUPS = ("attention", "feedforward", "recurrent")  # recurrent: LSTM bodies
DEFAULT_INIT_STD = 0.02
_BLOCK = re.compile(r"^blocks\.(\d+)\.")
CSV_FIELDS = ["body", "init", "layer", "group", "kind", "count", "mean", "std", "init_std"]


@dataclass(frozen=True)
class LayerStat:
    body: str
    init: str
    layer: int
    group: str  # a body group (attention, feedforward, layernorm, ...)
    kind: str  # weight | bias
    count: int  # parameters pooled
    mean: float
    std: float
    init_std: float  # the default init's std for this kind (0 for biases)


def kind_of(name: str) -> str | None:
    """weight or bias, from the parameter name's last part (LSTMs: weight_ih_l0, bias_hh_l0); else None."""
    last = name.rsplit(".", 1)[-1]
    return next((kind for kind in ("weight", "bias") if last.startswith(kind)), None)


def initializer_range(body: nn.Module) -> float:
    """The Hugging Face config's initializer_range, found on any submodule that keeps its config."""
    for module in body.modules():
        value = getattr(getattr(module, "config", None), "initializer_range", None)
        if isinstance(value, (int, float)):
            return float(value)
    return DEFAULT_INIT_STD


@torch.no_grad()
def layer_stats(body: nn.Module, body_name: str = "", init: str = "") -> list[LayerStat]:
    """Mean and std of every (block, group, weight|bias) pool of a body's parameters."""
    patterns = {g: re.compile(p) for g, p in body.groups.items()}
    init_std = initializer_range(body)
    pools: dict[tuple[int, str, str], list[torch.Tensor]] = {}
    for name, param in body.named_parameters():
        block, kind = _BLOCK.match(name), kind_of(name)
        if block is None or kind is None:
            continue  # positions and the final/embedding norms are not per-layer weights
        groups = [g for g, p in patterns.items() if p.search(name)]
        if len(groups) != 1:
            raise RuntimeError(f"parameter {name!r} matches groups {groups}; body group regexes must cover it once")
        pools.setdefault((int(block[1]), groups[0], kind), []).append(param.detach().float().reshape(-1).cpu())
    stats = []
    for (layer, group, kind), parts in sorted(pools.items()):
        values = torch.cat(parts)
        std = float(values.std()) if values.numel() > 1 else 0.0
        stats.append(LayerStat(body_name, init, layer, group, kind, values.numel(), float(values.mean()), std,
                               init_std if kind == "weight" else 0.0))
    return stats


def body_stats(body: str, init: str = RunConfig.init, seed: int = RunConfig.seed) -> list[LayerStat]:
    """Build a body (no task, few positions) and return its per-layer statistics."""
    from fpt.bodies import BodySpec, build_body

    built = build_body(BodySpec(body, init, seq_len=1, dropout=0.0, seed=seed))
    return layer_stats(built, body, init)


def write_csv(stats: list[LayerStat], path: Path) -> None:
    """Atomically (temporary name, then renamed): a stop mid-write leaves the old file or none, never half of one."""
    buf = io.StringIO(newline="")
    writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS)
    writer.writeheader()
    writer.writerows(asdict(s) for s in stats)
    rundir.write_text(path, buf.getvalue())


def plot(stats: list[LayerStat], path: Path, title: str = "") -> None:
    """2 x 2 panels: std (top) and mean (bottom) of weights (left) and biases (right), per layer."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(11, 7), dpi=110, layout="constrained")
    axes = fig.subplots(2, 2, sharex=True)
    runs = sorted({(s.body, s.init) for s in stats})
    colours = {"attention": "tab:blue", "feedforward": "tab:orange", "recurrent": "tab:green"}
    styles = [("-", "o"), ("--", "s"), (":", "^"), ("-.", "D")]  # one (line, marker) per body/init
    for col, kind in enumerate(("weight", "bias")):
        for row, stat in enumerate(("std", "mean")):
            ax = axes[row][col]
            for r, (body, init) in enumerate(runs):
                for group in PLOTTED_GROUPS:
                    pts = [s for s in stats if (s.body, s.init, s.group, s.kind) == (body, init, group, kind)]
                    if pts:
                        label = group + (f" ({Path(body).name}, {init})" if len(runs) > 1 else "")
                        line, marker = styles[r % len(styles)]
                        ax.plot([s.layer for s in pts], [getattr(s, stat) for s in pts], marker=marker, ms=4,
                                color=colours[group], ls=line, mfc="none" if r else colours[group], label=label)
            default = _default_line(stats, kind, stat)
            ax.axhline(default, color="black", lw=1, ls=":", label=f"default init ({default:g})")
            ax.set_title(f"{'weights' if kind == 'weight' else 'biases'}: {stat} per layer", fontsize=10)
            ax.set_ylabel(stat)
            ax.grid(alpha=0.3)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # layers are whole numbers
            if row == 1:
                ax.set_xlabel("layer")
            ax.legend(fontsize=7)
    if title:
        fig.suptitle(title)
    rundir.write_with(path, lambda tmp: fig.savefig(tmp, format=Path(path).suffix.lstrip(".") or "png"))


def _default_line(stats: list[LayerStat], kind: str, stat: str) -> float:
    # Default init: weights ~ N(0, initializer_range), biases 0; so every mean line is 0.
    if stat == "mean" or kind == "bias":
        return 0.0
    return next((s.init_std for s in stats if s.kind == "weight"), DEFAULT_INIT_STD)

"""Seed ensembles: runs of one configuration that differ only in their seed, combined.

On a training file of 30-50 series one FPT run's test accuracy moves by 5-10 points with the seed
(docs/results/own-data). Averaging the members' predictions removes the seed's share of that variance
at the cost of N trainings. Classification averages the members' predicted probabilities (the combined
"logits" are the log of the mean probability, so the reported loss is the ensemble's own negative
log-likelihood); regression averages the members' outputs.

Members must share their data split (``split_seed``, ``val_fraction``, ``folds``...): the ensemble is
scored on held-out sets, and a member trained on another member's validation or test examples would make
its figures meaningless. ``check_members`` refuses that, by comparing the held-out labels and the
preprocessing fitted on train.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from fpt.config import RunConfig
from fpt.data import read_once
from fpt.errors import ConfigError, option
from fpt.inference import batched_outputs
from fpt.pipeline import Experiment
from fpt.predictor import combine
from fpt.run import Run
from fpt.rundir import MEMBERS, is_ensemble

Tensor = torch.Tensor
# RunConfig fields that may differ between members: the seed, and what changes where or how fast a run ran,
# not what it learnt.
NOT_COMPARED = frozenset({"seed", "device", "eval_batch_size", "compile", "data_dir", "download"})


def member_seeds(seed: int, size: int) -> list[int]:
    """The seeds of an ensemble of ``size`` members whose first member is the run's own ``seed``."""
    if size < 1:
        raise ConfigError(f"ensemble={size}: give the number of members, >= 1 (1: a single run)")
    return [seed + i for i in range(size)]


def member_dir(out: str | Path, seed: int) -> Path:
    return Path(out) / MEMBERS / f"seed{seed}"


def check_members(exps: Sequence[Experiment], names: Sequence[str] | None = None) -> None:
    """Refuse members that are not seeds of one configuration on one data split (one line, naming the member)."""
    if not exps:
        raise ConfigError("an ensemble needs at least one member run")
    names = list(names) if names is not None else [f"member {i + 1}" for i in range(len(exps))]
    first, where = exps[0], names[0]
    base = _compared(first.config)
    for exp, name in zip(exps[1:], names[1:], strict=True):
        differs = sorted(k for k, v in _compared(exp.config).items() if base.get(k) != v)
        if differs:
            key = differs[0]
            raise ConfigError(f"{name}: {key}={getattr(exp.config, key)!r}, but {where} has "
                              f"{getattr(first.config, key)!r}; an ensemble's members differ only in their seed")
        if exp.data.fitted != first.data.fitted or set(exp.data.eval_sets) != set(first.data.eval_sets) or any(
                not torch.equal(exp.data.eval_sets[s].y, first.data.eval_sets[s].y) for s in first.data.eval_sets):
            raise ConfigError(f"{name}: its held-out examples or preprocessing differ from {where}'s; an ensemble's "
                              "members must share their data split (the same data, split_seed and fractions)")


def _compared(config: RunConfig) -> dict[str, Any]:
    return {f.name: getattr(config, f.name) for f in dataclasses.fields(config) if f.name not in NOT_COMPARED}


def member_outputs(exp: Experiment, split: str) -> Tensor:
    """One member's outputs for every example of held-out set ``split``, in the set's order (fp32, CPU)."""
    batch = exp.data.eval_sets[split]
    return batched_outputs(exp, batch.x, batch.lengths, exp.config.eval_batch_size, trim=exp.config.trim_padding)


@torch.inference_mode()
def evaluate(exps: Sequence[Experiment], sets: Sequence[str] | None = None,
             names: Sequence[str] | None = None) -> dict[str, float]:
    """The ensemble's metrics and loss on each held-out set (``sets``; default every one), keyed as
    ``fpt.train.evaluate`` keys one run's (``test_accuracy``, ``val_loss``, ...)."""
    check_members(exps, names)
    first = exps[0]
    objective = first.data.objective
    chosen = list(sets) if sets is not None else list(first.data.eval_sets)
    unknown = sorted(set(chosen) - set(first.data.eval_sets))
    if unknown:
        raise ConfigError(f"no held-out set(s) {unknown}; these runs have {sorted(first.data.eval_sets)}")
    out: dict[str, float] = {}
    for split in chosen:
        y = first.data.eval_sets[split].y
        logits = combine([member_outputs(exp, split) for exp in exps], objective)
        out.update({f"{split}_{k}": v for k, v in objective.summarise(objective.tally(logits, y)).items()})
        out[f"{split}_loss"] = float(objective.loss(logits, y))
    return out


def evaluate_runs(paths: Sequence[str | Path], sets: Sequence[str] | None = None,
                  which: str | None = None) -> dict[str, float]:
    """``evaluate`` of the run directories ``paths`` (each at its ``which`` checkpoint: default best)."""
    exps = [Run(p).experiment(which) for p in paths]
    return evaluate(exps, sets, [str(p) for p in paths])


@read_once()  # the members (built, then reloaded to be scored) read the data's files, and hash them, once
def fit(config: RunConfig, out: str | Path, *, progress: bool = False,
        say: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Train ``config.ensemble`` members (seeds ``config.seed`` on) in ``OUT/members/seedS`` and score them together;
    writes ``OUT/ensemble.json`` and ``OUT/summary.json`` (the ensemble's figures, each member's) and returns the
    summary. A member already finished in OUT is read, not trained again; one stopped early is resumed.

    What ``config`` leaves unset is resolved for each member's data (the members share their split, so their
    budgets are equal). ``say``: called with a line per finished member."""
    from fpt import rundir
    from fpt.checkpoint import has_checkpoint
    from fpt.pipeline import build
    from fpt.train import check_joined_run
    from fpt.train import fit as fit_one

    out = Path(out)
    seeds = member_seeds(config.seed, config.ensemble)
    if is_ensemble(out) or Run(out).is_run():
        raise FileExistsError(f"{out} already holds {'an ensemble' if is_ensemble(out) else 'a run'}; "
                              f"choose another {option('out')}")
    for seed in seeds:  # before any member trains: members of two datasets would be scored as one ensemble
        path = member_dir(out, seed)
        if has_checkpoint(path) or Run(path).summary() is not None:
            check_joined_run(config, path, f"member {path.relative_to(out)} of the ensemble in {out} was trained on it")
    rows, paths, first = [], [], {}
    for seed in seeds:
        path = member_dir(out, seed)
        member = Run(path)
        if member.summary() is None:
            exp = build(dataclasses.replace(config, seed=seed, ensemble=1))
            fit_one(exp, out=path, resume=member.is_run(), progress=progress)
        summary = member.summary() or {}
        first = first or summary
        metric = "accuracy" if "val_accuracy" in summary else "r2"
        rows.append({"seed": seed, "run": str(path.relative_to(out)), f"val_{metric}": summary.get(f"val_{metric}"),
                     f"test_{metric}": summary.get(f"test_{metric}"), "selected_step": summary.get("selected_step"),
                     "steps": summary.get("steps"), "wall_seconds": summary.get("wall_seconds")})
        paths.append(path)
        if say is not None:
            say(f"ensemble: member {len(paths)}/{len(seeds)} (seed {seed}): val {metric} "
                f"{_num(summary.get(f'val_{metric}'))}, test {_num(summary.get(f'test_{metric}'))}")
    # reloaded from best/, so a member read from disk and one trained now are scored alike
    exps = [Run(p).experiment() for p in paths]
    figures = evaluate(exps, names=[str(p) for p in paths])
    summary = {**figures, "ensemble": {"size": len(seeds), "seeds": seeds, "members": rows,
                                       "combined": "mean class probability" if
                                       exps[0].data.objective.name == "classification" else "mean output"},
               "selected_step": [r["selected_step"] for r in rows], "steps": sum(r["steps"] or 0 for r in rows),
               "wall_seconds": round(sum(r["wall_seconds"] or 0 for r in rows), 3),
               **{k: first[k] for k in ("task", "body", "init", "freeze", "val_set", "test_set", "baselines", "task_info",
                                  "device", "precision", "environment") if k in first}}
    with rundir.lock(out, what="fpt train (ensemble)"):
        rundir.write_ensemble(out, {"seeds": seeds, "members": [r["run"] for r in rows],
                                    "written": time.strftime("%Y-%m-%dT%H:%M:%S")})
        rundir.write_summary(out, summary)
    return summary


def _num(value: Any) -> str:
    return "-" if value is None else f"{value:.4f}"


__all__ = ["check_members", "evaluate", "evaluate_runs", "fit", "member_dir", "member_outputs", "member_seeds"]

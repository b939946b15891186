"""Statistics of a task's data: split sizes, token counts, truncation, class balance."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from fpt.tasks.base import Batch, TaskData, TensorSource

GENERATED_SAMPLE = 1000  # examples drawn to describe an unbounded generated training stream


def _lengths(batch: Batch) -> np.ndarray:
    if batch.lengths is not None:
        return batch.lengths.numpy()
    return np.full(len(batch), batch.x.shape[1])


def split_stats(batch: Batch, objective: Any = None) -> dict[str, Any]:
    lengths = _lengths(batch)
    if batch.y.is_floating_point():  # regression: the targets' spread in their own units, not class shares
        y = batch.y.double()
        if objective is not None and hasattr(objective, "scale"):
            y = y * torch.tensor(objective.scale, dtype=torch.float64) + torch.tensor(objective.mean, dtype=torch.float64)
        return {"examples": len(batch),
                "tokens": {"min": int(lengths.min()), "median": float(np.median(lengths)), "max": int(lengths.max())},
                "targets": {"mean": [round(float(v), 4) for v in y.mean(0)], "std": [round(float(v), 4) for v in y.std(0)],
                            "min": [round(float(v), 4) for v in y.min(0).values],
                            "max": [round(float(v), 4) for v in y.max(0).values]}}
    labels, counts = torch.unique(batch.y, return_counts=True)
    total = int(counts.sum())
    return {
        "examples": len(batch),
        "tokens": {"min": int(lengths.min()), "median": float(np.median(lengths)), "max": int(lengths.max())},
        "class_balance": {int(c): round(int(n) / total, 4) for c, n in zip(labels.tolist(), counts.tolist(), strict=True)},
    }


def task_stats(data: TaskData) -> dict[str, Any]:
    if isinstance(data.train, TensorSource):
        train = split_stats(data.train.data, data.objective)
        if data.train.transform is not None:
            train["tokens"] = {"min": data.spec.seq_len, "median": float(data.spec.seq_len), "max": data.spec.seq_len}
    else:
        train = {**split_stats(data.train.batch(0, GENERATED_SAMPLE)), "examples": "generated (unbounded)",
                 "described_from": GENERATED_SAMPLE}
    splits = {"train": train, **{name: split_stats(b, data.objective) for name, b in data.eval_sets.items()}}
    return {"spec": {k: v for k, v in vars(data.spec).items() if v is not None}, "splits": splits,
            "val_set": data.val, "test_set": data.test, "info": data.info,
            **({"fitted": data.fitted} if data.fitted is not None else {})}

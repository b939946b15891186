"""What a task hands to training: its input shape, a training stream and held-out sets.

Training batches are a pure function of (seed, batch index), so a resumed run sees
exactly the batches an uninterrupted run would have seen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, is_dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import numpy as np
import torch

from fpt.config import from_dict
from fpt.errors import (
    DataError,  # noqa: F401  (re-exported: raised here)
    config_file,
)
from fpt.model import InputSpec
from fpt.objectives import CLASSIFICATION, Objective
from fpt.registry import Registry
from fpt.settings import TaskDefaults

Tensor = torch.Tensor

TRAIN_STREAM, EVAL_STREAM, VAL_STREAM = 0, 1, 2  # generated tasks: independent train, test and validation draws


class Batch(NamedTuple):
    x: Tensor  # (B, T, d) float tokens or (B, T) integer ids
    y: Tensor  # (B, k * m) class indices; regression: (B, m) standardised float targets
    lengths: Tensor | None = None  # (B,) real tokens per example when padded on the right

    def __len__(self) -> int:  # type: ignore[override]
        return self.x.shape[0]

    def slice(self, start: int, stop: int) -> Batch:
        lengths = None if self.lengths is None else self.lengths[start:stop]
        return Batch(self.x[start:stop], self.y[start:stop], lengths)

    def trim(self) -> Batch:
        """Drop the columns past the longest real sequence (right padding no example uses)."""
        if self.lengths is None or self.x.shape[1] == 0:
            return self
        return Batch(self.x[:, : int(self.lengths.max())], self.y, self.lengths)

    def to(self, device: torch.device | str) -> Batch:
        device = torch.device(device)
        if device.type == "cpu":
            return self
        # Pinned host memory lets the copy overlap with compute on the GPU.
        tensors = [t if t is None or t.device.type != "cpu" else t.pin_memory() for t in self]
        return Batch(*(None if t is None else t.to(device, non_blocking=True) for t in tensors))


class TrainSource(Protocol):
    def batch(self, index: int, size: int) -> Batch:
        """The ``index``-th training batch of ``size`` examples (deterministic)."""


@dataclass(frozen=True)
class GeneratedSource:
    """Fresh examples drawn for every batch from a seed derived from (seed, index)."""

    sample: Callable[[np.random.Generator, int], Batch]
    seed: int

    def batch(self, index: int, size: int) -> Batch:
        return self.sample(np.random.default_rng([self.seed, TRAIN_STREAM, index]), size)


@dataclass(frozen=True)
class TensorSource:
    """A finite training set read in a fresh seeded permutation every epoch.

    ``transform`` (optional) maps a batch of stored inputs to model tokens, e.g. random
    augmentation of uint8 images then patchify; it gets a generator seeded from the batch
    index so augmentation is reproducible on resume.

    ``bucket`` > 0 (sets with ``lengths``): each epoch's permutation is cut into windows of
    ``bucket`` batches, each window is sorted by length and its batches are shuffled, so a
    batch holds examples of similar length and trimming its padding saves most of the work.
    """

    data: Batch
    seed: int
    transform: Callable[[Tensor, torch.Generator], Tensor] | None = None
    bucket: int = 0
    # The latest epoch's order, so each step does not redraw (and re-sort) the whole epoch.
    _orders: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.data)

    def epoch_order(self, epoch: int, size: int) -> np.ndarray:
        """The order (n,) in which epoch ``epoch`` reads the examples, for batches of ``size``."""
        key = (epoch, size)
        if key not in self._orders:
            self._orders.clear()
            self._orders[key] = self._draw_order(epoch, size)
        return self._orders[key]

    def _draw_order(self, epoch: int, size: int) -> np.ndarray:
        n = len(self.data)
        rng = np.random.default_rng([self.seed, TRAIN_STREAM, epoch])
        perm = rng.permutation(n)
        if not self.bucket or self.data.lengths is None:
            return perm
        lengths = self.data.lengths.numpy()
        window = self.bucket * size
        parts = []
        for start in range(0, n, window):
            chunk = perm[start:start + window]
            chunk = chunk[np.argsort(lengths[chunk], kind="stable")]  # (w,) short to long
            batches = [chunk[i:i + size] for i in range(0, len(chunk), size)]
            parts += [batches[i] for i in rng.permutation(len(batches))]  # no short-to-long curriculum
        return np.concatenate(parts)

    def evaluation_sample(self, limit: int) -> Batch:
        """Up to ``limit`` training examples (all of a smaller set; else a fixed draw from the source's seed), as
        the model reads them without augmentation: the training split evaluated (fpt.train, Table 7's train)."""
        n = len(self.data)
        if n <= limit:
            idx = torch.arange(n)
        else:
            idx = torch.randperm(n, generator=torch.Generator().manual_seed(self.seed))[:limit].sort().values
        x = self.data.x[idx]
        if self.transform is not None:
            transform = self.transform
            if is_dataclass(transform) and getattr(transform, "augment", False):
                transform = replace(transform, augment=False)  # as the held-out sets are tokenised
            x = transform(x, torch.Generator().manual_seed(self.seed))
        return Batch(x, self.data.y[idx], None if self.data.lengths is None else self.data.lengths[idx])

    def batch(self, index: int, size: int) -> Batch:
        n = len(self.data)
        positions = np.arange(index * size, (index + 1) * size)
        rows = np.empty(size, dtype=np.int64)
        for epoch in np.unique(positions // n):
            sel = positions // n == epoch
            rows[sel] = self.epoch_order(int(epoch), size)[positions[sel] % n]
        idx = torch.from_numpy(rows)
        batch = Batch(self.data.x[idx], self.data.y[idx], None if self.data.lengths is None else self.data.lengths[idx])
        if self.transform is not None:
            seed = int(np.random.default_rng([self.seed, TRAIN_STREAM, index, 1]).integers(2**62))
            gen = torch.Generator().manual_seed(seed)
            batch = Batch(self.transform(batch.x, gen), batch.y, batch.lengths)  # _replace breaks with __len__
        return batch


@dataclass
class TaskData:
    """A task's data. ``val`` and ``test`` name two different sets of ``eval_sets``.

    Training reads only ``val``: stopping at the target, patience, the best checkpoint and
    steps-to-converge. ``test`` (and any further held-out set, e.g. TAPE's three test
    splits) is evaluated once training ends, at the validation-selected step and at the last.
    """

    spec: InputSpec
    train: TrainSource
    eval_sets: dict[str, Batch]
    info: dict[str, Any] = field(default_factory=dict)  # what a result depends on (tokenisation, ...)
    val: str = "val"
    test: str = "test"
    objective: Objective = CLASSIFICATION  # loss, metrics and selection (fpt.objectives); y is float for regression
    fitted: dict[str, Any] | None = None  # JSON of preprocessing fitted on train (tokeniser, classes, target scaler): data.json
    # own data: the content fingerprint of the read it was built from (RawData.fingerprint): data_fingerprint.json
    fingerprint: dict[str, Any] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        missing = [name for name in (self.val, self.test) if name not in self.eval_sets]
        if missing or self.val == self.test:
            raise ValueError(f"a task needs distinct validation and test sets; val={self.val!r}, test={self.test!r}, "
                             f"held-out sets: {sorted(self.eval_sets)}")

    @property
    def reported(self) -> list[str]:
        """Held-out sets reported after training: every one but validation, the test set first."""
        return [self.test, *(name for name in self.eval_sets if name not in (self.val, self.test))]


@dataclass(frozen=True)
class DataSource:
    """Where a task finds its files, and whether it may download missing ones."""

    root: Path = Path("data")
    download: bool = False


class Task(Protocol):
    """A registered task class; it may also declare ``defaults = TaskDefaults(...)`` (lr, patience, target)."""

    Options: type

    def build(self, options: Any, seed: int, source: DataSource) -> TaskData: ...


def _not_a_task(obj: Any) -> str | None:
    """Why a plugin's entry point object cannot be a task (None when it can)."""
    if not isinstance(obj, type):
        return f"it names {type(obj).__name__} {obj!r}, not a task class (a class with Options and build)"
    import dataclasses

    missing = [a for a in ("Options", "build") if not hasattr(obj, a)]
    if missing or not dataclasses.is_dataclass(obj.Options) or not callable(obj.build):
        what = f"no {' or '.join(missing)}" if missing else "an Options that is not a dataclass" \
            if not dataclasses.is_dataclass(obj.Options) else "a build that is not callable"
        return f"class {obj.__name__} has {what}; a task class has an Options dataclass and " \
               "build(options, seed, source) -> TaskData"
    return None


TASK_PLUGINS = "fpt.tasks"  # entry point group of tasks from other distributions (read when a name is listed or missing)
TASKS: Registry = Registry("task", plugins=TASK_PLUGINS, check=_not_a_task)


def task_defaults(name: str) -> TaskDefaults:
    """What task ``name`` declares about its runs (its class's ``defaults``; the paper's lr and nothing else
    when it declares none)."""
    return getattr(TASKS.get(name), "defaults", TaskDefaults())


def build_task(name: str, options: dict[str, Any], seed: int, source: DataSource | None = None) -> TaskData:
    task = TASKS.get(name)()
    file = config_file("task_options")  # a config file's task_options: an unknown key there names the file
    parsed = from_dict(task.Options, options, where=f"{file + ': ' if file else ''}task {name!r} options")
    return task.build(parsed, seed, source or DataSource())

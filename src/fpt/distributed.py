"""Data-parallel training: one process per device, DistributedDataParallel over the trained parameters.

``torchrun --nproc-per-node N -m fpt train ...`` (or ``fpt train --nproc N``, which starts
torchrun's launcher in this process) runs N copies of ``fpt train``. Each joins the process
group (gloo on CPU, NCCL on CUDA, chosen from the device; on CUDA rank r uses ``cuda:LOCAL_RANK``)
and ``fit`` then trains as follows:

- **Batches.** ``batch_size`` is the global batch. Every rank draws the same global batch (a
  pure function of the seed and the step, like a single process) and keeps its own contiguous
  ``batch_size / N`` slice: the shards of a step are disjoint and together are exactly the
  batch one process would train on, for every task. ``batch_size`` must divide by N.
- **Gradients.** ``DistributedDataParallel`` all-reduces (averages) the gradients of the
  trained parameters only. Its reducer buckets only parameters with ``requires_grad``, and
  every frozen parameter and every buffer is also put on DDP's ignore list, so the start-up
  broadcast skips them too: the frozen body is never communicated. Each rank builds the same
  frozen body itself; ``data_parallel`` checks that their fingerprints agree instead. The mean
  of the ranks' mean losses is the global mean loss, so after an optimizer step every rank
  holds the parameters one process would (up to float rounding).
- **Decisions.** The training loss and accuracy of a step are averaged over the ranks, and
  evaluation is shared out by whole evaluation batches (rank r evaluates batches r, r + N,
  ...) whose per-batch sums are gathered and added in the single-process order: every rank
  sees the same numbers as one process would and takes the same decisions (target, patience,
  divergence, the selected step).
- **Files.** Only rank 0 takes the run directory's lock and writes (metrics.jsonl,
  checkpoints, summary, trackers, the progress bar). On ``--resume`` rank 0 reads the
  checkpoint and sends the training state, the evaluations so far and Adam's moments to the
  other ranks; DDP's start-up broadcast gives them rank 0's trained parameters.
- **Dropout.** With N > 1 every rank reseeds its generator at each step from (seed, rank,
  step), so a resumed run draws the masks an uninterrupted one would.

With one process (no process group, or a world of 1) nothing here changes what training does.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
from torch import nn

from fpt.errors import ConfigError, FptWarning, RunError, option
from fpt.pipeline import Experiment, resolve_device
from fpt.rundir import TrainState
from fpt.tasks.base import Batch


@dataclass(frozen=True)
class Group:
    """This process's place in a data-parallel run: ``rank`` of ``size`` processes."""

    rank: int = 0
    size: int = 1
    device: torch.device = torch.device("cpu")  # where collectives put their tensors (CUDA under NCCL)

    @property
    def is_main(self) -> bool:
        """Whether this process writes the run directory (rank 0)."""
        return self.rank == 0

    def per_rank(self, batch_size: int, grad_accum: int = 1) -> int:
        """Examples per rank in a step of the global ``batch_size``; ConfigError if it does not divide."""
        if batch_size % self.size:
            raise ConfigError(f"batch_size={batch_size} is the global batch and must divide evenly over "
                              f"{self.size} processes; give a multiple of {self.size}")
        per = batch_size // self.size
        if per % grad_accum:
            raise ConfigError(f"grad_accum={grad_accum} must divide the {per} examples each of {self.size} "
                              f"processes trains on per step (batch_size={batch_size})")
        return per

    def shard(self, batch: Batch) -> Batch:
        """This rank's contiguous slice of a global batch."""
        if self.size == 1:
            return batch
        per = self.per_rank(len(batch))
        return batch.slice(self.rank * per, (self.rank + 1) * per)

    def mine(self, items: range) -> range:
        """The items this rank handles: every ``size``-th one, from its rank on."""
        return items[self.rank::self.size]

    def merge(self, parts: dict) -> dict:
        """Every rank's ``parts`` (disjoint keys) in one dict, on every rank."""
        if self.size == 1:
            return parts
        gathered: list[dict | None] = [None] * self.size
        dist.all_gather_object(gathered, parts)
        return {k: v for part in gathered for k, v in part.items()}

    def from_main(self, value: Any) -> Any:
        """Rank 0's ``value`` (anything picklable), on every rank."""
        if self.size == 1:
            return value
        box = [value if self.is_main else None]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def step_mean(self, loss: float, sums: np.ndarray | int) -> tuple[float, np.ndarray | int]:
        """A step's training loss averaged over the ranks and its tallies summed (each rank: its shard's)."""
        if self.size == 1:
            return loss, sums
        flat = np.concatenate([[loss], np.asarray(sums, dtype=np.float64).ravel()])
        t = torch.tensor(flat, dtype=torch.float64, device=self.device)
        dist.all_reduce(t)
        total = t.cpu().numpy()
        shape = np.shape(sums)
        return float(total[0]) / self.size, total[1:].reshape(shape) if shape else total[1:].sum()

    def seed_step(self, seed: int, step: int) -> None:
        """With several ranks: seed this rank's dropout for ``step`` from (seed, rank, step)."""
        if self.size > 1:
            torch.manual_seed(int(np.random.default_rng([seed, 0x44445030, self.rank, step]).integers(2**62)))


SINGLE = Group()


class MainFailed(RuntimeError):
    """Rank 0 stopped before training began (it reported why); the other ranks stop too."""


class BatchCapped(FptWarning):
    """A batch larger than the finite training set was cut to the whole set (``step_batch``)."""


def step_batch(exp: Experiment, ranks: int = 1, note: bool = True) -> int:
    """The global batch each optimizer step draws: ``batch_size``, or where a finite training set holds fewer
    examples, the whole set once (down to a multiple of grad_accum x ``ranks``, so that it still divides), with a
    note. Drawn as asked, a step read every example batch_size / n times over, a permutation per pass: 100,000 over 12
    examples was 8,334 passes a step and 35 minutes for the 200 steps of a --data budget (a run that seemed to hang),
    for the gradient of the whole set reweighted at random."""
    cfg, train = exp.config, exp.data.train
    examples = len(train) if hasattr(train, "__len__") else None  # a generated stream is never used up
    if examples is None or cfg.batch_size <= examples:
        return cfg.batch_size
    unit = ranks * cfg.grad_accum
    whole = examples - examples % unit
    if whole == 0:
        raise ConfigError(f"grad_accum={cfg.grad_accum} over {ranks} process(es) splits each step into {unit} parts, but "
                          f"the training set holds {examples} examples; give a smaller grad_accum")
    if note:
        warnings.warn(BatchCapped(
            f"batch_size={cfg.batch_size} is more than the {examples} training examples: each step reads "
            f"{'the whole training set' if whole == examples else f'{whole} of them'} once ({whole}), not every "
            f"example {_times(cfg.batch_size / examples)} times over; give "
            f"{option('batch_size', str(whole), placeholder=True)} or less to say so"),
            stacklevel=3)
    return whole


def _times(ratio: float) -> str:
    return f"{ratio:,.0f}" if ratio >= 10 else f"{ratio:.1f}"


def current() -> Group:
    """The process group this process trains in (``SINGLE`` without one, or in a world of one)."""
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return SINGLE
    cuda = dist.get_backend() == "nccl"
    device = torch.device("cuda", torch.cuda.current_device()) if cuda else torch.device("cpu")
    return Group(dist.get_rank(), dist.get_world_size(), device)


TORCHRUN_MARKS = ("LOCAL_RANK", "RANK", "WORLD_SIZE")  # torchrun sets all three (and TORCHELASTIC_RUN_ID) per process


def launched() -> bool:
    """Whether torchrun (or torch.distributed.run) started this process. LOCAL_RANK alone does not say so: some
    schedulers and containers set LOCAL_RANK=0 for a single process, which fpt read as a torchrun rank (no baselines
    beside the run, the summary printed as a rank's, SIGTERM not handled, fit=auto and --nproc refused)."""
    return "TORCHELASTIC_RUN_ID" in os.environ or all(name in os.environ for name in TORCHRUN_MARKS)


def launch_marks() -> str:
    """The torchrun variables set in this process's environment, as NAME=VALUE words (for messages)."""
    return " ".join(f"{n}={os.environ[n]}" for n in ("TORCHELASTIC_RUN_ID", *TORCHRUN_MARKS) if n in os.environ)


def init_from_env(device: str) -> Group:
    """Join the process group torchrun describes in the environment (gloo for CPU, NCCL for CUDA).

    A world of one (or no torchrun) joins nothing and returns ``SINGLE``.
    """
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world == 1 or (dist.is_available() and dist.is_initialized()):
        return current()
    if not dist.is_available():
        raise ConfigError("this PyTorch build has no torch.distributed: data-parallel training needs it")
    # WORLD_SIZE (with LOCAL_RANK) left in a shell or a job's environment, without torchrun: its env:// rendezvous
    # failed with a ValueError read as a bug ('environment variable RANK expected, but not set')
    missing = [name for name in ("RANK", "MASTER_ADDR", "MASTER_PORT") if name not in os.environ]
    if missing:
        given = " ".join(f"{n}={os.environ[n]}" for n in ("WORLD_SIZE", "LOCAL_RANK", "RANK") if n in os.environ)
        raise ConfigError(f"{given} is set but {', '.join(missing)} is not, which torchrun sets for each process it "
                          f"starts: start the processes with torchrun --nproc-per-node {world} -m fpt -- train ... (or "
                          "fpt train --nproc N), or unset WORLD_SIZE and LOCAL_RANK to train in one process")
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    kind = resolve_device(device).type
    if kind == "cuda":
        if device.startswith("cuda:"):
            raise ConfigError(f"device={device!r} under torchrun: give device=cuda (or auto); each process uses "
                              "cuda:LOCAL_RANK")
        if local_rank >= torch.cuda.device_count():
            raise ConfigError(f"process LOCAL_RANK={local_rank} has no GPU: this machine has "
                              f"{torch.cuda.device_count()}; start at most that many processes per node")
        torch.cuda.set_device(local_rank)
        backend = "nccl"
    elif kind == "cpu":
        backend = "gloo"
    else:
        raise ConfigError(f"data-parallel training runs on CPU (gloo) or CUDA (NCCL), not on {kind}")
    dist.init_process_group(backend)
    _joined.append(True)
    return current()


_joined: list[bool] = []  # whether init_from_env started the process group (shutdown ends only that one)


def shutdown() -> None:
    """Leave the process group that ``init_from_env`` joined."""
    if _joined and dist.is_initialized():
        dist.destroy_process_group()
    _joined.clear()


def launch(nproc: int, argv: list[str]) -> int:
    """Run ``python -m fpt *argv`` in ``nproc`` processes through torchrun's launcher (this node only).

    Returns the exit code: 0, or that of the first process that failed.
    """
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.run import get_args_parser, run

    args = get_args_parser().parse_args(["--standalone", f"--nproc-per-node={nproc}", "--module", "fpt"])
    args.training_script_args = list(argv)  # set here: torchrun's parser would read fpt's --log as its --log-dir
    try:
        run(args)
    except ChildFailedError as exc:
        codes = [failure.exitcode for failure in exc.failures.values()]
        return next((code for code in codes if code > 0), 1)
    return 0


def strip_option(argv: list[str], name: str) -> list[str]:
    """``argv`` without ``--name VALUE`` / ``--name=VALUE``."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == name:
            skip = True
        elif not arg.startswith(name + "="):
            out.append(arg)
    return out


# ------------------------------------------------------------------------------------------- the wrapped model

@dataclass
class DataParallelExperiment(Experiment):
    """An experiment whose training forward passes go through DistributedDataParallel.

    ``model`` stays the plain model (parameter names, checkpoints and evaluation are unchanged);
    only a forward pass that builds a graph in training mode uses ``ddp``.
    """

    group: Group = SINGLE
    ddp: nn.Module | None = None
    _compiled_ddp: nn.Module | None = field(default=None, repr=False)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        if not (self.model.training and torch.is_grad_enabled()):
            return super().forward(x, lengths)
        if self.config.compile and self._compiled_ddp is None:
            self._compiled_ddp = torch.compile(self.ddp)
        with self.autocast:
            return (self._compiled_ddp or self.ddp)(x, lengths, self.input_start)


def frozen_names(model: nn.Module) -> list[str]:
    """What DDP must never communicate: every frozen parameter and every buffer."""
    return [n for n, p in model.named_parameters() if not p.requires_grad] + [n for n, _ in model.named_buffers()]


def data_parallel(exp: Experiment, group: Group) -> Experiment:
    """``exp`` with its training forward passes under DDP (unchanged with one process)."""
    if group.size == 1:
        return exp
    prints = [None] * group.size
    dist.all_gather_object(prints, exp.body_fingerprint)
    if len(set(prints)) > 1:
        raise RunError(f"the ranks built different frozen bodies (fingerprints {prints}); every rank must load "
                       f"the same body weights: give every node the same {option('body')} files or hub revision (a "
                       "shared cache)")
    nn.parallel.DistributedDataParallel._set_params_and_buffers_to_ignore_for_model(exp.model, frozen_names(exp.model))
    device_ids = [exp.device.index if exp.device.index is not None else torch.cuda.current_device()] \
        if exp.device.type == "cuda" else None
    # The constructor broadcasts rank 0's trained parameters (not the ignored ones): a resumed run's, on every rank.
    ddp = nn.parallel.DistributedDataParallel(exp.model, device_ids=device_ids)
    fields = {name: getattr(exp, name) for name in Experiment.__dataclass_fields__ if name != "_compiled"}
    return DataParallelExperiment(**fields, group=group, ddp=ddp)


def group_of(exp: Experiment) -> Group:
    return exp.group if isinstance(exp, DataParallelExperiment) else SINGLE


def accumulating(exp: Experiment, last: bool) -> contextlib.AbstractContextManager:
    """Around a micro-batch's forward and backward: DDP all-reduces the gradients with the last one only."""
    if isinstance(exp, DataParallelExperiment) and not last:
        return exp.ddp.no_sync()
    return contextlib.nullcontext()


def share_start(group: Group, optimizer: torch.optim.Optimizer, resume: bool, state: TrainState,
                history: list[dict[str, Any]]) -> tuple[bool, TrainState, list[dict[str, Any]]]:
    """Rank 0's starting point on every rank: whether it resumes, the training state, the evaluations
    so far and (resumed) Adam's moments. The trained parameters follow in ``data_parallel``."""
    if group.size == 1:
        return resume, state, history
    moments = None
    if group.is_main and resume:
        sd = optimizer.state_dict()
        moments = {**sd, "state": {i: {k: v.cpu() if torch.is_tensor(v) else v for k, v in s.items()}
                                   for i, s in sd["state"].items()}}  # CPU: unpickled on another rank's device
    try:
        resume, state, history, moments = group.from_main((resume, state, history, moments))
    except (RuntimeError, ConnectionError) as exc:  # gloo: rank 0 exited (a run directory error, ...)
        if group.is_main:
            raise
        raise MainFailed(f"rank 0 stopped before training began ({type(exc).__name__}); its error says why") from None
    if moments is not None and not group.is_main:
        optimizer.load_state_dict(moments)
    return resume, dataclasses.replace(state), list(history)


def broadcast_parameters(group: Group, params: list[torch.Tensor]) -> None:
    """Rank 0's values of ``params`` on every rank."""
    if group.size == 1:
        return
    with torch.no_grad():
        for p in params:
            dist.broadcast(p.data, src=0)


__all__ = ["SINGLE", "DataParallelExperiment", "Group", "MainFailed", "accumulating", "broadcast_parameters", "current",
           "data_parallel", "frozen_names", "group_of", "init_from_env", "launch", "launched", "share_start",
           "shutdown", "strip_option"]

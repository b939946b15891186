"""The one training loop every command shares: train_step, evaluate, fit."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from fpt import checkpoint, distributed, rundir, tracking
from fpt.bodies import located
from fpt.bodies.init import init_located
from fpt.config import RunConfig
from fpt.convergence import health, steps_to_converge
from fpt.errors import ConfigError, DataError, FptWarning, option, python_entry, speaks_flags
from fpt.feature_map import CLOSED_FORM
from fpt.inference import iter_outputs, length_order
from fpt.outputs import refuse_unexpanded
from fpt.pipeline import Experiment
from fpt.provenance import environment
from fpt.rundir import CONFIG, DATA, SUMMARY, TrainState
from fpt.tasks import Batch

# Fields that may change when a stopped run is resumed; anything else would make the
# resumed run a different experiment.
RESUMABLE_CHANGES = {"steps", "device", "stop_at_target", "patience", "target", "eval_batch_size", "data_dir", "download",
                     "baselines"}  # baselines: what is fitted beside the run (fpt.baselines), not the run itself
# The resumable changes that give a finished run more to do: train further, stop later, fit other baselines beside it.
MORE_TO_DO = ("steps", "stop_at_target", "patience", "target", "baselines")


def make_optimizer(params: list[torch.nn.Parameter], lr: float) -> torch.optim.Adam:
    """Adam, fused into one kernel where torch has one for these tensors. FPT trains ~30 small tensors
    (layer norms, positions, input and output layers): the per-tensor loop of plain Adam was a
    measurable part of a short-sequence step on CPU (bench/step_time.py)."""
    fused = bool(params) and all(p.is_floating_point() and p.device.type in ("cpu", "cuda") for p in params)
    return torch.optim.Adam(params, lr=lr, fused=fused)


def train_step(exp: Experiment, optimizer: torch.optim.Optimizer, batch: Batch) -> tuple[float, np.ndarray]:
    """One optimizer step over ``batch`` in ``grad_accum`` micro-batches: (loss, the objective's tallies).

    Data-parallel (``fit`` under torchrun): ``batch`` is this rank's share and so are the returned
    loss and tallies; DDP averages the gradients over the ranks before the step."""
    model, cfg, objective = exp.model, exp.config, exp.data.objective
    model.train()
    optimizer.zero_grad(set_to_none=True)
    n = len(batch)
    micro = n // cfg.grad_accum
    total_loss, sums = 0.0, 0
    for start in range(0, n, micro):
        part = batch.slice(start, start + micro)
        part = (part.trim() if cfg.trim_padding else part).to(exp.device)
        with distributed.accumulating(exp, last=start + micro >= n):  # DDP: all-reduce with the last micro-batch
            out = exp.forward(part.x, part.lengths)
            loss = objective.loss(out, part.y)
            (loss * (len(part) / n)).backward()
        total_loss += loss.item() * len(part) / n
        sums = sums + objective.tally(out.detach(), part.y)
    if cfg.clip > 0:
        torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], cfg.clip)
    optimizer.step()
    return total_loss, sums


@torch.inference_mode()
def evaluate(exp: Experiment, data: Batch | None = None, batch_size: int | None = None,
             sets: list[str] | None = None) -> dict[str, float]:
    """Metrics (accuracy, or the task objective's: R², MAE, MSE) and loss over whole held-out sets:
    ``data``, the named ``sets``, or every one.

    Inside a data-parallel ``fit`` every rank evaluates every N-th batch; the batches' sums are
    gathered and added in the order one process adds them, so the numbers are one process's."""
    if data is not None:
        chosen = {"_": data}
    else:
        unknown = sorted(set(sets or ()) - set(exp.data.eval_sets))
        if unknown:
            raise ConfigError(f"no held-out set(s) {unknown}; this task has {sorted(exp.data.eval_sets)}")
        chosen = {name: exp.data.eval_sets[name] for name in (sets or exp.data.eval_sets)}
    out: dict[str, float] = {}
    for name, batch in chosen.items():
        prefix = "" if name == "_" else f"{name}_"
        out.update({f"{prefix}{key}": value for key, value in summarise(exp, tallies(exp, batch, batch_size)).items()})
    return out


@torch.inference_mode()
def tallies(exp: Experiment, batch: Batch, batch_size: int | None = None) -> tuple[float, Any, int]:
    """(loss sum, the objective's tallies, count) over ``batch``: additive, so two disjoint parts' tallies
    added are the whole's (``summarise`` turns them into metrics)."""
    size = batch_size or exp.config.eval_batch_size
    objective, trim, group = exp.data.objective, exp.config.trim_padding, distributed.group_of(exp)
    order = length_order(batch.lengths, trim)  # the order does not change accuracy
    if order is not None:
        batch = Batch(batch.x[order], batch.y[order], batch.lengths[order])
    parts = {}  # start -> (loss sum, tallies, count) of the batches this rank evaluates
    for start, logits in iter_outputs(exp, batch.x, batch.lengths, size, trim=trim,
                                      starts=group.mine(range(0, len(batch), size))):
        y = batch.y[start:start + size].to(exp.device)
        parts[start] = (objective.loss(logits, y).item() * y.numel(), objective.tally(logits, y), y.numel())
    loss_sum, sums, count = 0.0, 0, 0
    for _, (batch_loss, batch_sums, batch_count) in sorted(group.merge(parts).items()):
        loss_sum += batch_loss
        sums = sums + batch_sums
        count += batch_count
    return loss_sum, sums, count


def summarise(exp: Experiment, tally: tuple[float, Any, int]) -> dict[str, float]:
    """The metrics and mean loss of ``tallies``' (loss sum, tallies, count)."""
    loss_sum, sums, count = tally
    return {**exp.data.objective.summarise(sums), "loss": loss_sum / count}


def add_tallies(a: tuple[float, Any, int], b: tuple[float, Any, int]) -> tuple[float, Any, int]:
    return a[0] + b[0], a[1] + b[1], a[2] + b[2]


def majority_classes(y: torch.Tensor, num_classes: int) -> torch.Tensor:
    """Each output position's most frequent class in ``y`` (N, k), the lowest class on a tie: (k,)."""
    y = y.reshape(len(y), -1)
    counts = torch.stack([torch.bincount(col, minlength=num_classes) for col in y.T])  # (k, C)
    return torch.from_numpy(np.argmax(counts.numpy(), axis=-1))  # numpy's argmax: the first of equal counts


def majority_accuracy(y: torch.Tensor, classes: torch.Tensor) -> float:
    """Accuracy on labels ``y`` (N, k) of always answering ``classes`` (k,), one class per output position."""
    y = y.reshape(len(y), -1)
    return float((y == classes.to(y.device)).sum() / y.numel())


def training_labels(data: Any) -> torch.Tensor:
    """The labels the model learns from: a finite training set's own, else (a generated stream) a draw of the
    stream as large as its largest held-out set."""
    stored = getattr(data.train, "data", None)
    if stored is not None:
        return stored.y
    return data.train.batch(0, max(len(b) for b in data.eval_sets.values())).y


def baselines(exp: Experiment) -> dict[str, Any]:
    """Chance, and the accuracy on every held-out set of always answering the training set's majority class (per
    output position; ``majority_class``): what a result must beat. The class is the training split's, never a held-out
    set's own (whose most frequent class is known only from the labels it is scored on).

    Regression: the metrics of always predicting the training mean (R² about 0).
    """
    objective = exp.data.objective
    if objective.name != "classification":
        return {"train_mean": {name: {k: round(v, 4) for k, v in
                                      objective.summarise(objective.tally(torch.zeros_like(b.y), b.y)).items()}
                               for name, b in exp.data.eval_sets.items()}}
    classes = exp.data.spec.num_classes
    sizes = getattr(objective, "sizes", ()) or (classes,)  # targets of different class counts: each its own
    answer = majority_classes(training_labels(exp.data), classes)
    return {"chance": float(np.mean([1 / size for size in sizes])),
            "majority": {name: round(majority_accuracy(b.y, answer), 4) for name, b in exp.data.eval_sets.items()},
            "majority_class": answer.tolist()}


@torch.inference_mode()
def predict(exp: Experiment, x: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
    """Predicted classes (B, k * m) for raw tokens x (regression: values (B, m) in the targets' units)."""
    if not isinstance(x, torch.Tensor) or (lengths is not None and not isinstance(lengths, torch.Tensor)):
        # a NumPy array or a DataFrame failed deep in the batching ('numpy.ndarray' object has no attribute 'to'); the
        # raw inputs of own data need the fitted tokeniser, which fpt.load's Predictor applies
        given = type(x if not isinstance(x, torch.Tensor) else lengths)
        raise DataError(f"fpt.predict(exp, x): {'x' if given is type(x) else 'lengths'} is a {given.__module__}."
                        f"{given.__name__}; fpt.predict takes the model's tokens as a torch.Tensor, as exp.data's sets "
                        "hold them (exp.data.eval_sets['test'].x; torch.as_tensor for tokens in an array). For raw "
                        "inputs (arrays, DataFrames, files): fpt.fit(exp, out=DIR), then fpt.load(DIR).predict(X), "
                        "which applies the tokeniser fitted on the training split")
    if x.is_floating_point() and x.dtype != torch.float32 and exp.data.spec.token_dim is not None:
        # torch.as_tensor of a NumPy array keeps its float64 (NumPy's default), which the float32 (or bf16) input layer
        # refused deep in the forward ('mat1 and mat2 must have the same dtype'); fpt.load's Predictor reads it so too
        x = x.float()
    return torch.cat([exp.data.objective.predict(logits).cpu() for _, logits in iter_outputs(exp, x, lengths)])


def _check_resume(saved: RunConfig, wanted: RunConfig | None) -> RunConfig:
    if wanted is None:
        return saved
    changed = {k for k, v in wanted.to_dict().items() if saved.to_dict()[k] != v}
    for name, where in (("body", located), ("init", init_located)):
        if name in changed and where(getattr(saved, name)) == where(getattr(wanted, name)):
            # the folder (body, checkpoint:PATH) the run started with, named as it was then: the run saved it
            # absolute (fpt.pipeline.resolved)
            changed.discard(name)
            wanted = replace(wanted, **{name: getattr(saved, name)})
    if changed - RESUMABLE_CHANGES:
        raise ConfigError(
            f"cannot resume with changed field(s) {sorted(changed - RESUMABLE_CHANGES)}: that would be a "
            f"different experiment. Only {sorted(RESUMABLE_CHANGES)} may change on resume; start a new {option('out')}"
        )
    return wanted


def _same_run(out: Path, wanted: RunConfig) -> None:
    """Refuse to continue a run, or to return a finished run's summary, as ``wanted``'s unless fpt wrote it for the
    same experiment (the fields ``RESUMABLE_CHANGES`` names may differ): a summary.json of a user's, or another
    config's run, was read back as this run's result, and another config's checkpoint trained on, without a word."""
    from fpt.pipeline import same_experiment

    if not rundir.written_by_fpt(out):
        raise ConfigError(f"{out} holds summary.json but no config.yaml written by fpt train, so it is not a finished "
                          "fpt run: choose another out (a new or empty folder)")
    saved = resume_config(out)
    if not same_experiment(saved, replace(wanted, **{k: getattr(saved, k) for k in RESUMABLE_CHANGES})):
        raise ConfigError(f"{out} holds a run of another config than the one resumed; resume it with its own "
                          f"config ({_resume_command(out)}), or choose another {option('out')}")


def _resume_command(out: Path) -> str:
    """What continues the run in ``out`` with its own config, as the surface in force says it (the command line's
    command to it, fpt.train_run to a Python caller: fpt.fit's resume=True resumes the experiment it is given)."""
    return f"fpt train --resume {out}" if speaks_flags() else f"fpt.train_run(None, {str(out)!r}, resume=True)"


def _trainable(model: torch.nn.Module) -> list[torch.nn.Parameter]:
    return [p for p in model.parameters() if p.requires_grad]


@python_entry
def fit(exp: Experiment, out: str | Path | None = None, resume: bool = False, progress: bool = True,
        trackers: Sequence[str | tracking.Tracker] = ()) -> dict[str, Any]:
    """Train until ``steps``, the target accuracy, patience, or divergence; returns the summary.

    Every decision (stop at target, patience, the selected checkpoint, steps to converge)
    reads the validation set only. When training ends, the test set (and any other held-out
    set) is evaluated at the validation-selected step and at the last step; the model is
    left at the selected step's parameters.

    With ``out``, holds the run directory's writer lock (fpt.rundir) for the whole run and
    writes config.yaml, metrics.jsonl, summary.json, checkpoint/ (latest, for resume) and
    best/ (the validation-selected parameters); see fpt.checkpoint for their layout.
    ``resume=True`` continues from the newest complete checkpoint; a run directory stopped
    before its first checkpoint starts again from step 0 (its stale rows are removed); a finished
    run with nothing more to do (``finished``) returns its summary and changes nothing.

    ``trackers``: live tracking, "tensorboard", "mlflow" or ``fpt.tracking.Tracker`` objects.

    ``exp.config.seed`` decides dropout and the batches, whatever the caller seeded: fit draws from a fork of torch's
    generators and leaves the caller's random stream where it was.

    Each fit of ``exp`` starts from its trained parameters as built (a notebook cell run again, or after Ctrl-C, gives
    the first fit's figures); ``resume=True`` continues a run directory's checkpoint instead.

    Under torch.distributed (torchrun) every rank calls ``fit``: data-parallel training of the
    trained parameters with ``batch_size`` the global batch; only rank 0 locks and writes ``out``,
    tracks and shows progress (see fpt.distributed).
    """
    if exp.config.ensemble > 1:  # one model trained where N were asked for would be a silently different result
        raise ConfigError(f"ensemble={exp.config.ensemble} trains {exp.config.ensemble} models: train it with "
                          "fpt.train_run(config, out) (or fpt.ensemble.fit(config, out)); fit() trains one (ensemble=1)")
    if exp.config.fit == "auto":  # the choice trains candidates on folds: a library function above this loop
        raise ConfigError("fit=auto chooses between the closed-form fit and gradient training by cross-validation: "
                          "build the experiment with fpt.build(...), which makes the choice (fpt.select.choose_fit), "
                          "or train the config with fpt.train_run(config, out); fit() fits one (fit=closed-form or "
                          "fit=gradient)")
    if out is not None:  # out='~/runs/x' made a folder named '~' in the working directory (Python expands no '~')
        refuse_unexpanded(out)
    if not distributed.current().is_main:
        out, trackers = None, ()  # the other ranks of a data-parallel run never write the run directory
    # config.seed decides dropout and batches (torch.manual_seed(seed) inside): on a fork of torch's generators, so
    # that the caller's stream goes on after fit as it would have without it (it was left reseeded and advanced)
    devices = [exp.device.index or 0] if exp.device.type == "cuda" else []
    # gradients on whatever the caller's mode (a fit under torch.no_grad(), inference_mode() or set_grad_enabled(False)
    # failed at its first backward: 'element 0 of tensors does not require grad'), as Lightning's Trainer.fit trains;
    # evaluation inside turns them off itself
    with torch.random.fork_rng(devices=devices), torch.inference_mode(False), torch.enable_grad(), \
            tracking.session(trackers) as track:
        if out is None:
            return _fit(exp, None, resume, progress, track)
        with rundir.lock(out, what="fpt train"):
            summary = _fit(exp, Path(out), resume, progress, track)
            if exp.fit_choice is not None:  # fpt.build chose the fit: its record beside the run, as fpt train's
                summary = rundir.record_selection(out, exp.fit_choice, summary)
            return summary


def _fit(exp: Experiment, out: Path | None, resume: bool, progress: bool, track: tracking.Tracker) -> dict[str, Any]:
    """``fit``, with the run directory (if any) locked by the caller: cache features, open the run directory, share
    the start over the ranks, train, evaluate the selected and last steps, write the summary."""
    # (data-parallel ranks decide together, fpt.distributed.share_start: there such a run is evaluated again)
    if out and resume and distributed.current().size == 1 and (done := finished(out, exp.config)) is not None:
        _check_finished_data(exp, out)
        return done  # its files and its trackers are left as they are
    if exp.config.fit == CLOSED_FORM:
        return _fit_closed_form(exp, out, resume, track, progress)
    group = distributed.current()
    # the global batch (at most the training set) must divide over the ranks
    group.per_rank(distributed.step_batch(exp, group.size), exp.config.grad_accum)
    _start_afresh(exp)
    exp, cache_seconds = _feature_cache(exp)
    optimizer = make_optimizer(_trainable(exp.model), exp.config.lr)
    resume, state, history = _open_run_dir(exp, out, resume, optimizer)
    val_subset = _val_subset(exp)
    resume, state, history = distributed.share_start(group, optimizer, resume, state, history)  # rank 0's
    model = exp.model
    exp = distributed.data_parallel(exp, group)  # DDP over the trained parameters (several ranks only)
    if not resume:
        torch.manual_seed(exp.config.seed)  # dropout; a resumed run restores the saved RNG state instead
    loop = _Loop(exp, model, out, optimizer, state, history, val_subset, track,
                 started=time.perf_counter() - state.wall_seconds)
    stop_reason = loop.run(progress)
    last_val = loop.last_val[1] if loop.last_val and loop.last_val[0] == state.step else None
    final = _final_evaluation(exp, out, state, history, loop.best_params, stop_reason, last_val, loop.best_val)
    state.wall_seconds = time.perf_counter() - loop.started
    summary = _summary(exp, state, history, final, stop_reason)
    summary["feature_cache_seconds"] = None if cache_seconds is None else round(cache_seconds, 3)
    if final["selected"] is not None:  # the model is at the selected step: the training split evaluated there
        summary.update(_train_evaluation(exp, final["selected"]))
    # Collapse, chance and the test figure against the majority class (fpt.convergence.health): derived from the
    # curve and the figures above, recorded so that readers need not recompute them.
    summary["health"] = health(summary, history, {name: int(b.y.shape[0]) for name, b in exp.data.eval_sets.items()})
    if out:
        rundir.write_summary(out, summary)
    track.finish(summary)
    return summary


def _start_afresh(exp: Experiment) -> None:
    """Put ``exp``'s trained parameters back as built before a fit trains them (a resumed run then loads its
    checkpoint over them). A notebook cell of fpt.fit(exp) run again, or after Ctrl-C stopped it, trained on from where
    the last fit left the model: more steps than its summary says, figures no fresh fit of the config gives. As
    scikit-learn's fit, each fit starts from the same model; the copy is kept on the CPU, off the accelerator."""
    params = {name: p for name, p in exp.model.named_parameters() if p.requires_grad}
    if exp._untrained is None:
        exp._untrained = {name: p.detach().to("cpu", copy=True) for name, p in params.items()}
        return
    with torch.no_grad():
        for name, value in exp._untrained.items():
            if name in params:  # a parameter frozen by hand since is left as it is
                params[name].copy_(value)


def _feature_cache(exp: Experiment) -> tuple[Experiment, float | None]:
    """``exp`` reading cached body features where ``cache_features`` allows it, and the seconds caching took."""
    if exp.config.cache_features == "off":
        return exp, None
    from fpt.cache import cache_eligible, cached_view

    eligible, why = cache_eligible(exp)
    if exp.config.cache_features == "on" and not eligible:
        raise ConfigError(f"cache_features=on, but features cannot be cached: {why}")
    if not eligible:
        return exp, None
    return cached_view(exp)


def _open_run_dir(exp: Experiment, out: Path | None, resume: bool,
                  optimizer: torch.optim.Optimizer) -> tuple[bool, TrainState, list[dict[str, Any]]]:
    """Start ``out`` afresh or continue it: (whether it resumes, the training state, the evaluations so far).

    Resuming loads the newest complete checkpoint into the model and ``optimizer``; a run directory stopped before its
    first checkpoint starts again from step 0; a fresh start refuses a directory that already holds a run."""
    if not out:
        return resume, TrainState(), []
    state, history, fingerprint = TrainState(), [], None
    rundir.clear_debris(out)  # temporary files of a killed run
    started_before = checkpoint.has_checkpoint(out)
    finished = (out / SUMMARY).exists()
    if resume and not started_before and not finished:
        resume = False  # stopped before its first checkpoint: nothing to continue, start it again
        rundir.start_clean(out)
    elif resume:
        if rundir.written_by_fpt(out):  # fit(resume=True) from Python: the CLI's --resume checked it already
            _same_run(out, exp.config)
        _check_same_data(exp, out)  # before anything in the run directory changes: the fitted values (data.json),
        fingerprint = _check_same_content(exp, out)  # then the content, which many edits leave them as they were
        version = checkpoint.load_trainable(checkpoint.slot(out, checkpoint.LATEST), exp.model, exp.body_fingerprint)
        state = checkpoint.load_resume_state(version, exp.model, optimizer)
        history = rundir.truncate_metrics(out, state.step)
        state.steps_to_target = _steps_to_target(exp, history)  # the target may be another one now
        checkpoint.commit(version)  # after a fallback, the pointer names the version we continue from
        checkpoint.rewind(out, checkpoint.BEST, state.step)  # a best/ saved after it is replayed
    elif started_before or finished:
        raise FileExistsError(rundir.already_a_run(out))
    else:
        rundir.start_clean(out)
    if not resume:
        fingerprint = data_fingerprint(exp)
        if fingerprint is not None and (out / rundir.SELECTION_FILE).exists():
            _check_choice_data(exp, out, fingerprint)
    rundir.write_config(out, exp.config)
    if exp.data.fitted is not None:  # what turns raw inputs into tokens and outputs into labels/values
        rundir.write_data(out, exp.data.fitted)
    if fingerprint is not None:
        rundir.write_data_fingerprint(out, fingerprint)
    return resume, state, history


def _steps_to_target(exp: Experiment, history: list[dict[str, Any]]) -> int | None:
    """The first evaluation of ``history`` at the run's target, as ``_Loop._select`` records it. A resumed run
    reads it again from its rows: resumed under another ``target``, it kept the step the old one was reached at
    (summary.json: target 1.0, steps_to_target 3, for a run whose best validation accuracy was 0.57)."""
    target, key = exp.config.target, f"{exp.data.val}_{exp.data.objective.metric}"
    if target is None:
        return None
    return next((row["step"] for row in history if row.get(key) is not None and row[key] >= target), None)


class DataUnchecked(FptWarning):
    """A run resumed that recorded no fingerprint of its data: its content is not checked this once."""


def data_fingerprint(exp: Experiment) -> dict[str, Any] | None:
    """The content fingerprint of ``exp``'s own data (``fpt.data.fingerprint``): its in-memory data's, taken when it
    was built, else the one taken when its ``--data`` was read; None for a paper task, or data it cannot hash."""
    from fpt.data import fingerprint

    if exp.data.fitted is None:  # a paper task: its files are the task's, not the user's
        return None
    if exp.data_fingerprint is not None:
        return exp.data_fingerprint
    if exp.data.fingerprint is not None:  # taken at the read: every run built from it records the same, hashed once
        return exp.data.fingerprint
    data = exp.config.data  # a TaskData built without fpt.data.load (by hand): hashed here, as before
    return fingerprint.of_path(data) if isinstance(data, str) and not data.startswith("in-memory ") else None


def _check_same_content(exp: Experiment, out: Path) -> dict[str, Any] | None:
    """Refuse to resume ``out`` when its data's content is not what the run started on (data_fingerprint.json): a
    CSV edited in place, same shape and name, other values, gave the same data.json and resumed in silence, its
    first steps trained on one dataset and the rest on another. Returns the fingerprint to record (None: none)."""
    from fpt.data.fingerprint import changed, check_unchanged

    now = data_fingerprint(exp)
    if now is None:
        return None
    saved = rundir.read_data_fingerprint(out)
    if saved is None:
        import warnings

        warnings.warn(DataUnchecked(
            f"{out} records no fingerprint of its data (started before fpt recorded one): the data's content is not "
            f"checked against what it started on, only {DATA}'s fitted values; recorded now for later resumes"),
            stacklevel=4)
        return now
    record = out / rundir.DATA_FINGERPRINT
    if now.get("kind") == "memory" and changed(saved, now) is not None:
        raise DataError(f"{record}: the data given ({exp.config.data}) is not the data the run started on (its content "
                        f"hash differs); pass the data it started with, or train the new data into a new {option('out')}")
    check_unchanged(saved, now, str(Path(exp.config.data)), f"the run in {out} started on it", record)
    return now


def _check_finished_data(exp: Experiment, out: Path) -> None:
    """Refuse to return the summary of the finished run in ``out`` for ``exp`` built on other data than the run was
    trained on (data.json's fitted values, data_fingerprint.json's content hash), as a resume that trains checks:
    ``fit(exp, out, resume=True)`` of a finished run returned its summary as the result for the data given, unread.
    A run that recorded no fingerprint is checked by data.json alone (nothing is recorded: nothing is written)."""
    _check_same_data(exp, out)
    if rundir.read_data_fingerprint(out) is not None:
        _check_same_content(exp, out)


def _check_choice_data(exp: Experiment, out: Path, now: dict[str, Any]) -> None:
    """Refuse to start the final run of a choice (--choose, fit=auto: selection.json in ``out``) on other data than
    the candidates were compared on (the data_fingerprint.json written beside it): changed after the choice, or
    before a resume of a run stopped before its first checkpoint, it trained on the new data with the old choice."""
    from fpt.data.fingerprint import check_unchanged

    saved = rundir.read_data_fingerprint(out)
    if saved is not None and saved.get("kind") != "memory":
        check_unchanged(saved, now, str(Path(exp.config.data)),
                        f"the choice in {out / rundir.SELECTION_FILE} was made on it", out / rundir.DATA_FINGERPRINT)


def check_joined_run(config: RunConfig, run: Path, since: str) -> None:
    """Refuse ``config``'s data when its content is not what ``run`` recorded (data_fingerprint.json): a run that the
    runs to come join, an ensemble's finished member or a refit's selection run, read by no resume check of its own,
    and a run started now on the new data would be combined with one trained on the old. ``since``: the phrase for
    ``run`` in the message. Reads the data (inside ``read_once``, the read those runs' builds share)."""
    from fpt.data.fingerprint import check_unchanged

    saved = rundir.read_data_fingerprint(run) if config.data is not None else None
    if saved is None or saved.get("kind") == "memory":  # nothing recorded; data given in Python: its own check
        return
    now = read_fingerprint(config)
    if now is not None:
        check_unchanged(saved, now, str(Path(config.data)), since, run / rundir.DATA_FINGERPRINT)


def read_fingerprint(config: RunConfig) -> dict[str, Any] | None:
    """The content fingerprint of ``config``'s ``--data`` as ``fpt.data.load`` reads it (inside ``read_once``: the
    read the builds in the block share); None for a paper task, or data it cannot hash."""
    from fpt.data import read_config

    raw = read_config(config)
    return None if raw is None else raw.fingerprint


def _check_same_data(exp: Experiment, out: Path) -> None:
    """Refuse to resume ``out`` when its data.json (the tokeniser, class map and target scaler fitted on the training
    split when it started) is not what the data gives now: the file changed (rows added, values edited), so the split
    or the standardisation did, and the steps to come would train the checkpoint's parameters on other examples than
    its first steps, test rows perhaps among them, while data.json was silently rewritten to the new data's."""
    from fpt.tasks.user_data import Preprocessing

    saved = rundir.read_data(out) if exp.data.fitted is not None else None
    if saved is None:
        return
    try:  # both as this fpt writes them: a field added since the run started takes its default on both sides
        before = Preprocessing.from_json(saved).to_json()
        now = Preprocessing.from_json(json.loads(json.dumps(exp.data.fitted))).to_json()
    except (ValueError, KeyError, TypeError):  # unreadable (a half-written file): rewritten below, as before
        return
    # a tokeniser field measured since the run started (a series' float32_steps) is no change of the data: as saved
    for key in set(now.get("tokeniser") or {}) - set(saved.get("tokeniser") or {}):
        now["tokeniser"][key] = (before.get("tokeniser") or {}).get(key)
    differing = [key for key in sorted(set(before) | set(now)) if before.get(key) != now.get(key)]
    if differing:
        where = exp.config.data if isinstance(exp.config.data, str) else "the data given"
        _check_same_reading(exp, out, before.get("tokeniser"), now.get("tokeniser"), where)
        raise DataError(f"{out / DATA}: {where} gives another {', '.join(map(repr, differing))} than the run was "
                        "trained with: the data changed since the run started; resume with the data it started with, "
                        f"or train the new data into a new {option('out')}")


def _check_same_reading(exp: Experiment, out: Path, before: Any, now: Any, where: str) -> None:
    """Refuse to resume ``out`` naming the columns fpt now reads otherwise than the run did (fpt.data.readings: text
    dates and durations, text categories before), and whether the data's content is what the run started on (then
    the cause is fpt's reading, not the data)."""
    from fpt.data.fingerprint import changed
    from fpt.data.readings import holding, read_otherwise

    otherwise = read_otherwise(before, now)
    if otherwise is None:
        return
    saved, found = rundir.read_data_fingerprint(out), data_fingerprint(exp)
    if saved is not None and found is not None and changed(saved, found) is not None:
        return  # the data changed: said as such (below, and _check_same_content)
    same = saved is not None and found is not None
    cause = ("fpt's reading of it changed since the run started (the data's content is the one it started on)" if same
             else "fpt's reading of it changed since the run started, or its values did")
    if holding():  # read as the run read it, and still otherwise: this fpt cannot read the column so
        fix = f"train the data into a new {option('out')} (or resume with the fpt version that started the run)"
    else:
        fix = f"resume it with {_resume_command(out)}, which reads the data as the run read it"
    raise DataError(f"{out / DATA}: {where} reads {otherwise}: {cause}; {fix}")


@dataclass
class _Window:
    """The training steps since the last evaluation: summed loss, the objective's tallies, their count."""

    loss: float = 0.0
    sums: Any = 0
    steps: int = 0

    def add(self, loss: float, sums: Any) -> None:
        self.loss += loss
        self.sums = self.sums + sums
        self.steps += 1


@dataclass
class _Loop:
    """The gradient steps of one ``fit``: step, evaluate validation every ``eval_every`` steps, keep the selected
    parameters, checkpoint, and stop at ``steps``, the target, patience or divergence. ``model`` is the
    experiment's own (not DDP's wrapper): what checkpoints save."""

    exp: Experiment
    model: torch.nn.Module
    out: Path | None
    optimizer: torch.optim.Optimizer
    state: TrainState
    history: list[dict[str, Any]]
    val_subset: tuple[Batch, Batch] | None
    track: tracking.Tracker
    started: float  # perf_counter at step 0 (a resumed run's earlier seconds included)
    best_params: list[torch.Tensor] | None = None  # the selected parameters, kept in memory (only the trained ones)
    window: _Window = field(default_factory=_Window)  # the steps since the last evaluation
    # The whole validation set's figures this process computed at the last evaluation (its step) and at the selected
    # one: the final evaluation takes them instead of evaluating the same parameters on the same set again.
    last_val: tuple[int, dict[str, float]] | None = None
    best_val: dict[str, float] | None = None

    def run(self, progress: bool) -> str:
        """Train to the end; returns why it stopped: "steps", "target", "patience" or "diverged"."""
        cfg, state, group = self.exp.config, self.state, distributed.current()
        bar = tqdm(total=cfg.steps, initial=state.step, desc=f"{cfg.task}/{cfg.body}",
                   disable=not (progress and group.is_main) or None, dynamic_ncols=True)
        self.track.start(self.exp, self.out, state.step)
        stop_reason = "steps"
        while state.step < cfg.steps:
            loss, sums = self._step(group)
            bar.update(1)
            self.track.step(state, loss)
            if not math.isfinite(loss) or loss > cfg.diverge_loss:
                state.diverged_at = state.step
                stop_reason = "diverged"
                break
            self.window.add(loss, sums)
            if state.step % cfg.eval_every == 0 or state.step == cfg.steps:
                row, score = self._evaluate()
                bar.set_postfix(loss=f"{row['train_loss']:.3f}", val=f"{score:.4f}")
                reason = self._select(score, row.get(f"{self.exp.data.val}_loss"))
                # The trackers get an evaluation once the checkpoint of its step is committed: a run stopped before
                # that resumes from the previous one and evaluates this step again, and MLflow cannot take back a
                # point logged twice. One stopped after it has the row in metrics.jsonl, which resuming logs then.
                self.track.evaluated(row)
                if reason is not None:
                    stop_reason = reason
                    break
        bar.close()
        return stop_reason

    def _step(self, group: distributed.Group) -> tuple[float, Any]:
        """One optimizer step on this rank's share of the step's batch: the whole batch's mean loss and tallies."""
        cfg, state, t0 = self.exp.config, self.state, time.perf_counter()
        group.seed_step(cfg.seed, state.step)  # several ranks: dropout seeded by (seed, rank, step)
        size = distributed.step_batch(self.exp, group.size, note=False)
        batch = group.shard(self.exp.data.train.batch(state.step, size))  # this rank's part
        loss, sums = group.step_mean(*train_step(self.exp, self.optimizer, batch))  # the whole batch's, on every rank
        state.train_seconds += time.perf_counter() - t0
        state.train_examples += len(batch) * group.size
        state.step += 1
        return loss, sums

    def _evaluate(self) -> tuple[dict[str, Any], float]:
        """Validation now: the metrics row (the training window's figures beside it), recorded in metrics.jsonl, and
        its selection score."""
        exp, state, window = self.exp, self.state, self.window
        objective = exp.data.objective
        val_key = f"{exp.data.val}_{objective.metric}"  # what selects: accuracy, or R² for regression
        metrics = _validate(exp, self.val_subset, val_key)
        # a subset's figures, or its tallies added to the rest's (another summation order), are not evaluate()'s
        self.last_val = (state.step, metrics) if self.val_subset is None else None
        state.wall_seconds = time.perf_counter() - self.started
        row = {"step": state.step, "wall_seconds": round(state.wall_seconds, 3),
               "train_loss": window.loss / window.steps,
               **{f"train_{k}": v for k, v in objective.summarise(window.sums).items()}, **metrics}
        self.window = _Window()
        self.history.append(row)
        if self.out:
            rundir.append_metrics(self.out, row)
        return row, metrics[val_key]

    def _select(self, score: float, val_loss: float | None) -> str | None:
        """Keep an evaluation that ``improves`` on the selected one (in memory and best/), checkpoint latest/, and
        say whether training stops here ("target", "patience") or goes on (None)."""
        cfg, state, out = self.exp.config, self.state, self.out
        if improves(state, score, val_loss, cfg.tie_break):
            state.best_score, state.best_loss, state.best_step, state.evals_since_best = score, val_loss, state.step, 0
            self.best_params = [p.detach().clone() for p in _trainable(self.model)]
            self.best_val = self.last_val[1] if self.last_val and self.last_val[0] == state.step else None
            if out:
                checkpoint.save(checkpoint.slot(out, checkpoint.BEST), self.model, cfg.to_dict(),
                                self.exp.body_fingerprint, step=state.step)
        else:
            state.evals_since_best += 1
        reached = cfg.target is not None and score >= cfg.target
        if reached and state.steps_to_target is None:
            state.steps_to_target = state.step
        if out:
            checkpoint.save(checkpoint.slot(out, checkpoint.LATEST), self.model, cfg.to_dict(),
                            self.exp.body_fingerprint, self.optimizer, state)
        if reached and cfg.stop_at_target:
            return "target"
        if cfg.patience is not None and state.evals_since_best >= cfg.patience:
            return "patience"
        return None


def _fit_closed_form(exp: Experiment, out: Path | None, resume: bool, track: tracking.Tracker,
                     progress: bool = False) -> dict[str, Any]:
    """``fit`` of fit=closed-form (fpt.closed_form): no step; one row in metrics.jsonl, the fitted pieces (members'
    input layers and the head) in best/ and checkpoint/, the summary as a gradient run's. A finished run is complete:
    resuming it returns its summary; one stopped before its summary is fitted again (it takes seconds)."""
    from fpt.closed_form import solve

    if distributed.current().size > 1:
        raise ConfigError(f"fit=closed-form fits in one process: drop {option('nproc')}")
    cfg = exp.config
    if out:
        rundir.clear_debris(out)
        finished = (out / SUMMARY).exists()
        if resume and finished:  # nothing to fit: its files and trackers are left as they are
            _same_run(out, cfg)
            _check_finished_data(exp, out)
            return rundir.read_summary(out)
        if not resume and (finished or checkpoint.has_checkpoint(out)):
            raise FileExistsError(rundir.already_a_run(out))
        rundir.start_clean(out)
        rundir.write_config(out, cfg)
        if exp.data.fitted is not None:
            rundir.write_data(out, exp.data.fitted)
        if (fingerprint := data_fingerprint(exp)) is not None:  # what it was fitted on, as a gradient run records
            if (out / rundir.SELECTION_FILE).exists():  # fit=auto's winner: fitted on the data it was chosen on
                _check_choice_data(exp, out, fingerprint)
            rundir.write_data_fingerprint(out, fingerprint)
    track.start(exp, out, 0)
    started = time.perf_counter()
    solved = solve(exp, progress=progress)
    wall = time.perf_counter() - started
    objective = exp.data.objective
    val = {k: v for k, v in solved["eval"].items() if k.startswith(f"{exp.data.val}_")}
    row = {"step": 0, "wall_seconds": round(wall, 3), "train_loss": solved["train"]["loss"],
           **{f"train_{k}": v for k, v in solved["train"].items() if k != "loss"}, **val}
    history = [row]
    if out:
        rundir.append_metrics(out, row)
    state = TrainState(best_score=val.get(f"{exp.data.val}_{objective.metric}"), wall_seconds=wall, train_seconds=wall)
    if out:
        for which in (checkpoint.BEST, checkpoint.LATEST):
            checkpoint.save(checkpoint.slot(out, which), exp.model, cfg.to_dict(), exp.body_fingerprint,
                            state=state if which == checkpoint.LATEST else None, step=0)
    summary = _summary(exp, state, history, {"selected": solved["eval"], "last": solved["eval"]}, CLOSED_FORM)
    # no step was taken: a throughput of 0 examples per second and the preset's batch size read as figures of a run
    # (printed, and logged to MLflow/TensorBoard as summary metrics); the fit's time is feature_cache_seconds
    summary.update(train_samples_per_second=None, global_batch_size=None)
    summary["closed_form"] = solved["closed_form"]
    summary["feature_cache_seconds"] = solved["closed_form"]["seconds"]["features"]
    summary["health"] = health(summary, history, {name: int(b.y.shape[0]) for name, b in exp.data.eval_sets.items()})
    if out:
        rundir.write_summary(out, summary)
    # A closed-form run is complete with its summary, and one stopped before it is fitted again from the start: its
    # row goes to the trackers only now, so that the attempt stopped left them nothing to log twice.
    track.evaluated(row)
    track.finish(summary)
    return summary


TRAIN_EVALUATION_EXAMPLES = 2000  # at most this many training examples (a fixed seeded draw) are evaluated


def _same_examples(a: Batch, b: Batch) -> bool:
    """Whether two batches hold the same examples in the same order (the same evaluation, to the last bit)."""
    if a.x.shape != b.x.shape or a.y.shape != b.y.shape or (a.lengths is None) != (b.lengths is None):
        return False
    return torch.equal(a.x, b.x) and torch.equal(a.y, b.y) and (a.lengths is None or torch.equal(a.lengths, b.lengths))


def _train_evaluation(exp: Experiment, held: dict[str, float] | None = None) -> dict[str, Any]:
    """The training split (up to TRAIN_EVALUATION_EXAMPLES of it) evaluated like the held-out sets, dropout off
    and no augmentation: train_eval_<metric> and train_eval_examples ({} for a generated stream). Not the
    summary's train_<metric>, the last window's minibatch figure with dropout on (Table 7 reads this one).

    ``held``: the held-out sets' figures at these parameters. A held-out set of exactly these examples (fpt.sklearn
    reports its training data as its test set) is not evaluated a second time: its figure is this one."""
    sample = getattr(exp.data.train, "evaluation_sample", None)
    if sample is None:
        return {}
    batch = sample(TRAIN_EVALUATION_EXAMPLES)
    name = exp.data.objective.metric
    for set_name, whole in exp.data.eval_sets.items():
        if f"{set_name}_{name}" in (held or {}) and _same_examples(batch, whole):
            return {f"train_eval_{name}": held[f"{set_name}_{name}"], "train_eval_examples": len(batch)}
    return {f"train_eval_{name}": evaluate(exp, batch).get(name), "train_eval_examples": len(batch)}


def _val_subset(exp: Experiment) -> tuple[Batch, Batch] | None:
    """(subset, the rest) of validation when ``eval_subset`` asks to evaluate fewer than all during training.

    A seeded draw (the run's seed), fixed for the whole run and the same after a resume."""
    n = exp.config.eval_subset
    whole = exp.data.eval_sets[exp.data.val]
    if n is None or n >= len(whole):
        return None
    order = torch.randperm(len(whole), generator=torch.Generator().manual_seed(exp.config.seed))
    parts = []
    for idx in (order[:n].sort().values, order[n:].sort().values):
        parts.append(Batch(whole.x[idx], whole.y[idx], None if whole.lengths is None else whole.lengths[idx]))
    return parts[0], parts[1]


def improves(state: TrainState, score: float, loss: float | None, tie_break: str) -> bool:
    """Whether an evaluation becomes the selected one: a higher validation score, or (``tie_break="loss"``) the
    same score at a lower validation loss. The first evaluation always does (R² can start below any bound)."""
    if score > state.best_score or not state.best_step:
        return True
    if score < state.best_score or tie_break != "loss" or loss is None:
        return False
    return state.best_loss is None or loss < state.best_loss  # None: unknown (a state saved before tie_break)


def _validate(exp: Experiment, subset: tuple[Batch, Batch] | None, val_key: str) -> dict[str, Any]:
    """A training-time evaluation of validation: the whole set, or the subset unless it reaches the target.

    A subset that reaches the target is not trusted alone: the rest of the set is evaluated then, and the
    whole set's figures (the subset's tallies added to the rest's, the same as evaluating it in one go) are
    the row's, so stopping at the target always reads the whole validation set. With a subset,
    ``val_examples`` says which one a row holds."""
    if subset is None:
        return evaluate(exp, sets=[exp.data.val])
    part, rest = subset
    part_tally = tallies(exp, part)
    metrics = {f"{exp.data.val}_{k}": v for k, v in summarise(exp, part_tally).items()}
    if exp.config.target is None or metrics[val_key] < exp.config.target:
        return {**metrics, "val_examples": len(part)}
    whole = summarise(exp, add_tallies(part_tally, tallies(exp, rest)))
    return {**{f"{exp.data.val}_{k}": v for k, v in whole.items()}, "val_examples": len(part) + len(rest)}


def _held_out(exp: Experiment, val: dict[str, float] | None) -> dict[str, float]:
    """``evaluate(exp)``: every held-out set, in order; validation's figures are ``val`` where given (the whole set's,
    computed by ``evaluate`` at these parameters during training: the same numbers, without a second pass)."""
    if val is None:
        return evaluate(exp)
    out: dict[str, float] = {}
    for name in exp.data.eval_sets:
        out.update(val if name == exp.data.val else evaluate(exp, sets=[name]))
    return out


def _final_evaluation(exp: Experiment, out: Path | None, state: TrainState, history: list[dict[str, Any]],
                      best_params: list[torch.Tensor] | None, reason: str, last_val: dict[str, float] | None = None,
                      best_val: dict[str, float] | None = None) -> dict[str, dict[str, float] | None]:
    """Every held-out set at the last step and at the validation-selected step (model left at the latter).
    ``last_val``, ``best_val``: the whole validation set's figures at those steps where training computed them."""
    last = None
    if reason != "diverged" or not history:
        last = _held_out(exp, last_val)  # a diverged model's last parameters are not finite: nothing to report there
    if not history:
        return {"selected": None, "last": last}
    if history[-1]["step"] == state.best_step and reason != "diverged":
        return {"selected": last, "last": last}
    trainable = _trainable(exp.model)
    with torch.no_grad():
        if best_params is not None:
            for p, saved in zip(trainable, best_params, strict=True):
                p.copy_(saved)
        elif out and checkpoint.has_checkpoint(out, checkpoint.BEST):  # resumed: the selected ones are on disk
            best = checkpoint.find(out, checkpoint.BEST, step=state.best_step)
            checkpoint.load_trainable(best, exp.model, exp.body_fingerprint)
        elif distributed.group_of(exp).is_main:
            raise RuntimeError("the validation-selected parameters are neither in memory nor in best/")
    if best_params is None:
        distributed.broadcast_parameters(distributed.group_of(exp), trainable)  # rank 0 read them from best/
    return {"selected": _held_out(exp, best_val if best_params is not None else None), "last": last}


def _summary(exp: Experiment, state: TrainState, history: list[dict[str, Any]],
             final: dict[str, dict[str, float] | None], reason: str) -> dict[str, Any]:
    data = exp.data
    objective = data.objective
    selected, last = final["selected"] or {}, final["last"] or {}
    last_row = history[-1] if history else {}
    # Classification: val_accuracy, test_accuracy, val_accuracy_last, ...; regression: val_r2, test_r2, test_mae, ...
    scores: dict[str, Any] = {}
    for name in objective.reported:
        scores[f"val_{name}"] = selected.get(f"{data.val}_{name}")
        scores[f"test_{name}"] = selected.get(f"{data.test}_{name}")
    for name in objective.reported:
        scores[f"val_{name}_last"] = last.get(f"{data.val}_{name}")
        scores[f"test_{name}_last"] = last.get(f"{data.test}_{name}")
    trained_on_val = exp.config.train_on_val  # fpt train --refit's second run: its "validation" is training data
    if trained_on_val:
        scores = {k: None if k.startswith("val_") else v for k, v in scores.items()}
    return {
        "task": exp.config.task, "body": exp.config.body, "init": exp.config.init, "freeze": exp.config.freeze,
        "val_set": data.val, "test_set": data.test,
        **scores,
        "selected_step": state.best_step if history else None,
        f"train_{objective.metric}": last_row.get(f"train_{objective.metric}"),
        "steps": state.step,
        "target": exp.config.target,
        "steps_to_target": None if trained_on_val else state.steps_to_target,
        "steps_to_converge": None if trained_on_val else steps_to_converge(history, f"{data.val}_{objective.metric}"),
        "stopped": reason,
        "diverged_at": state.diverged_at,
        "wall_seconds": round(state.wall_seconds, 3),
        "train_samples_per_second": round(state.train_examples / max(state.train_seconds, 1e-9), 3),
        "epoch_seconds": _epoch_seconds(exp, state),
        "eval": selected,
        "eval_last": last,
        "baselines": baselines(exp),
        "task_info": data.info,
        "body_fingerprint": exp.body_fingerprint,
        "device": str(exp.device),
        "precision": exp.precision,  # what precision auto resolved to on this machine
        "world_size": distributed.group_of(exp).size,  # processes (data-parallel ranks) that trained it
        "global_batch_size": distributed.step_batch(exp, distributed.group_of(exp).size, note=False),  # all ranks'
        "environment": environment(),
    }


def _epoch_seconds(exp: Experiment, state: TrainState) -> float | None:
    """Training seconds per pass over a finite training set (None for generated streams)."""
    if not hasattr(exp.data.train, "__len__") or not state.train_examples:
        return None
    seconds = len(exp.data.train) * state.train_seconds / state.train_examples
    return float(f"{seconds:.4g}")  # cached epochs take milliseconds: keep significant digits, not decimals


def finished(out: str | Path, config: RunConfig) -> dict[str, Any] | None:
    """The summary of the finished run in ``out`` when resuming it with ``config`` has nothing to do, else None (not
    finished, or ``config`` asks for more: a larger ``steps``, another stopping rule or ``baselines``, ``MORE_TO_DO``).
    Resuming such a run returns that summary and changes nothing: re-evaluating it rewrote summary.json (its wall
    time grew) and logged its summary to the trackers a second time."""
    summary = rundir.read_summary(out)
    if summary is None:
        return None
    _same_run(Path(out), config)  # another experiment's (or a user's) summary is not this one's result
    saved = resume_config(Path(out))
    return None if any(getattr(saved, name) != getattr(config, name) for name in MORE_TO_DO) else summary


def resume_config(out: Path, overrides: dict[str, Any] | None = None) -> RunConfig:
    """The saved config of a run directory, with the changes resuming allows."""
    from fpt.config import from_dict, from_saved, load_yaml, merge, target_alias

    path = Path(out) / CONFIG
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: {out} is not a run directory written by fpt train")
    saved = from_saved(load_yaml(path), where=str(path))
    if not overrides:
        return saved
    # target=COLUMN beside data names the column, as at the start (the command given again with --resume added); the
    # overrides' own, which then meets the saved column as a change (a clash of the two names was said instead)
    fields = merge(saved.to_dict(), target_alias(dict(overrides), "resume overrides", saved.data is not None))
    return _check_resume(saved, from_dict(RunConfig, fields, where="resume overrides"))


__all__ = ["baselines", "evaluate", "finished", "fit", "majority_accuracy", "majority_classes", "predict",
           "resume_config", "train_step"]

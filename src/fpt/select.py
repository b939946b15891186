"""Choosing between configurations for your own data by k-fold cross-validation on its training examples.

A validation split of 10-20 examples (GunPoint's 50 training series give 10 at ``val_fraction`` 0.2)
cannot tell two options apart: one example is 5-10 points of accuracy. ``cross_validate`` trains each
candidate (a few config fields, e.g. ``{"readout": "flatten"}``) once per fold of the training examples
that are not test (``RunConfig.folds``/``fold``: fold f validates, the other folds train) and ranks the
candidates by their mean fold validation score, then lower mean validation loss, then the order given.

The test split is held out before the folds are drawn, exactly as in a plain run, and is never read:
the fold runs evaluate their fold's validation examples in its place (``_without_test``), and no
``test_*`` figure is kept. ``fpt train --data FILE --choose "readout=last" --choose "readout=flatten"``
runs this, then trains the winner on the plain split (``fpt.cli.train``).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fpt.config import RunConfig, from_dict, merge, show
from fpt.data import read_once
from fpt.errors import ConfigError, option, speaks_flags
from fpt.feature_map import CLOSED_FORM
from fpt.pipeline import build
from fpt.tasks.base import TaskData
from fpt.train import fit

DEFAULT_FOLDS = 5
MIN_PER_CLASS = 2  # fewer default folds where a fold's validation part would hold fewer of the rarest class
# Fields a candidate may not set: the folds are the procedure's, and the data is what is cross-validated; a
# candidate that changed the objective, the target or the held-out test examples would be scored on another
# question (accuracy against R², or of another column), so its fold scores could not be ranked against the others'.
NOT_CANDIDATE_FIELDS = ("data", "folds", "fold", "train_on_val", "objective", "target_column", "drop_columns", "task",
                        "modality", "test_fraction", "split_seed")


@dataclass
class Selection:
    """Each candidate's fold validation figures at its fold runs' selected steps; ``winner`` indexes
    ``candidates``. A fold with no figure (a run that evaluated nothing) holds None and ranks its candidate last."""

    metric: str  # the objective's selecting metric: accuracy, or r2 for regression
    folds: int
    candidates: list[dict[str, Any]]
    scores: list[list[float | None]]  # [candidate][fold]
    losses: list[list[float | None]]  # [candidate][fold] validation loss at the same step
    steps: list[list[Any]]  # [candidate][fold] the selected step (an ensemble: its members')
    winner: int

    @property
    def means(self) -> list[float | None]:
        return [_mean(row) for row in self.scores]

    @property
    def stds(self) -> list[float | None]:
        # np.std (ddof 0), as scikit-learn's cv_results_ report it
        return [None if _mean(row) is None else float(np.std(row)) for row in self.scores]

    @property
    def mean_losses(self) -> list[float | None]:
        return [_mean(row) for row in self.losses]

    def to_json(self) -> dict[str, Any]:
        return {"metric": self.metric, "folds": self.folds, "winner": self.winner,
                "winner_fields": self.candidates[self.winner], "candidates": self.candidates,
                f"val_{self.metric}": self.scores, "val_loss": self.losses, "selected_steps": self.steps,
                f"mean_val_{self.metric}": self.means, f"std_val_{self.metric}": self.stds,
                "mean_val_loss": self.mean_losses}


def _mean(row: Sequence[float | None]) -> float | None:
    return None if not row or any(v is None or not math.isfinite(v) for v in row) else float(np.mean(row))


def rank(scores: Sequence[float | None], losses: Sequence[float | None]) -> list[int]:
    """Candidate indices best first: higher mean score, then lower mean loss, then the order given; None last."""
    def key(i: int) -> tuple:
        score, loss = scores[i], losses[i]
        return (score is None, -(score or 0.0), loss is None, loss or 0.0, i)

    return sorted(range(len(scores)), key=key)


def candidate_config(config: RunConfig, candidate: Mapping[str, Any], where: str = "candidate") -> RunConfig:
    """``config`` with ``candidate``'s fields, coerced and checked as a config file's would be."""
    _check_candidate(candidate, where)
    return from_dict(RunConfig, merge(config.to_dict(), dict(candidate)), where=where)


def _check_candidate(candidate: object, where: str) -> None:
    if not isinstance(candidate, Mapping) or not candidate:
        raise ConfigError(f"{where}: {show(candidate)} is not a mapping of config fields (e.g. readout=flatten)")
    banned = [k for k in candidate if k in NOT_CANDIDATE_FIELDS]
    if banned:
        raise ConfigError(f"{where}: {banned[0]!r} is the cross-validation's own, not an option to choose between; "
                          "drop it from the candidate")


def fit_candidate(config: RunConfig, candidate: Mapping[str, Any], where: str = "candidate") -> RunConfig:
    """fit=auto's ``candidate`` (a fit, and fields of its own) of ``config``: ``candidate_config`` with what the
    candidate's fit reads of ``config``. cf_difference is the closed-form fit's (a gradient run refuses it): a
    closed-form candidate takes ``config``'s (left unset, the series' entry declares it where the data is tokenised:
    fpt.settings.tokenised), any other fit none, so that each candidate's data is tokenised for its own fit. A
    candidate that names no fit takes the field's default (``config``'s auto is the choice, not a fit)."""
    _check_candidate(candidate, where)
    fit = candidate.get("fit", RunConfig.fit)
    reads = {"fit": fit, "cf_difference": config.cf_difference if fit == CLOSED_FORM else None}
    return candidate_config(config, {**reads, **candidate}, where)


def _without_test(data: TaskData) -> TaskData:
    """``data`` whose test slot holds the validation examples: ``fit`` evaluates its test set when training ends,
    and a fold run must not read the real one (its figures are dropped as well)."""
    val = data.eval_sets[data.val]
    return dataclasses.replace(data, eval_sets={data.val: val, data.test: val})


def fold_count(config: RunConfig, wanted: int = DEFAULT_FOLDS) -> int:
    """``wanted`` folds, fewer where each fold's validation part would hold fewer than ``MIN_PER_CLASS`` examples of
    the rarest class of the non-test training examples (regression: examples), never fewer than 2."""
    _check(config)
    smallest = _smallest_class(config)[0]
    return max(2, min(wanted, smallest // MIN_PER_CLASS))


def _smallest_class(config: RunConfig) -> tuple[int, bool]:
    """The example count of the rarest class among the non-test training examples (regression: all of them), and
    whether the data is a classification."""
    from fpt.data import load
    from fpt.data.base import finish_splits, infer_objective

    raw = load(config.data, config.target_column, config.modality, config.image_channels, config.image_size,
               config.drop_columns, config.series_id)
    train = raw.splits["train"]
    classify = infer_objective(train.y, raw.targets, config.objective, train.where, raw.declared,
                               raw.categorical_targets)[0] == "classification"
    # any fold gives the pool (train + val); it also refuses data with its own validation split, early
    pool = finish_splits(raw, config.val_fraction, config.test_fraction, config.split_seed, classify, folds=2, fold=0)
    labels = np.concatenate([pool.splits["train"].y[:, 0], pool.splits["val"].y[:, 0]]).astype(str)
    return (int(np.unique(labels, return_counts=True)[1].min()) if classify else len(labels)), classify


def check_folds(folds: object, where: str = "folds") -> int:
    """``folds`` as a whole number >= 2, or a one-line error (2.5, '3', None, True are refused, not coerced)."""
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or folds < 2:
        raise ConfigError(f"{where}={folds!r}: cross-validation needs a whole number of folds >= 2 (e.g. 5)")
    return int(folds)


def _check(config: RunConfig) -> None:
    if not isinstance(config, RunConfig):
        raise ConfigError(f"cross_validate takes a RunConfig, not a {type(config).__name__}: build one with "
                          "fpt.config.from_dict(RunConfig, fields) (or fpt.config.load)")
    if config.data is None:
        raise ConfigError("cross-validation folds the training examples of your own data: give "
                          f"{option('data', 'PATH', placeholder=True)} (task {config.task!r} has fixed splits)")
    if config.train_on_val:
        raise ConfigError("cross-validation scores each fold's validation split, which train_on_val trains on: drop "
                          "train_on_val")


class OverBudget(Exception):
    """``cross_validate`` stopped: its first fold run(s) projected the candidate's folds past ``budget_s``."""

    def __init__(self, seconds: float, projected: float) -> None:
        super().__init__(f"the first fold took {seconds:.0f} s; all folds would take about {projected:.0f} s")
        self.seconds, self.projected = seconds, projected


@read_once()  # the fold runs (and the fold count) read the data's files once
def cross_validate(config: RunConfig, candidates: Sequence[Mapping[str, Any]], folds: int = DEFAULT_FOLDS,
                   progress: Callable[[str], None] | None = None, budget_s: float | None = None) -> Selection:
    """Train every candidate (``config`` with its fields) on each of ``folds`` folds; the ranked result.

    What ``config`` and a candidate leave unset (None) is resolved for each fold's training examples, as for any
    run (``fpt.settings.resolve``). ``progress``: called with one line per fold run. ``budget_s``: after a
    candidate's first fold, raise ``OverBudget`` when its folds would take longer than this."""
    _check(config)
    if not candidates:
        raise ConfigError("cross-validation needs at least one candidate (a mapping of config fields)")
    folds = check_folds(folds)
    configs = [candidate_config(config, c, f"candidate {i + 1}") for i, c in enumerate(candidates)]
    smallest, classify = _smallest_class(config)  # before any fold is trained
    if folds > smallest:
        raise ConfigError(f"folds={folds}: the {'rarest class' if classify else 'data'} has only {smallest} training "
                          f"example(s) outside test, so some fold would validate on none of it; give at most "
                          f"{smallest} folds ({option('folds', str(max(2, smallest)), placeholder=True)})"
                          if smallest >= 2 else
                          f"folds={folds}: the {'rarest class' if classify else 'data'} has only {smallest} "
                          "training example outside test: cross-validation cannot fold it; add examples or drop "
                          f"{option('choose')}")
    scores: list[list[float | None]] = []
    losses: list[list[float | None]] = []
    steps: list[list[int | None]] = []
    metric = ""
    for i, (candidate, base) in enumerate(zip(candidates, configs, strict=True)):
        rows: tuple[list, list, list] = ([], [], [])
        started = time.perf_counter()
        for f in range(folds):
            metric, score, loss, step = _fold(dataclasses.replace(base, folds=folds, fold=f))
            if f == 0 and budget_s is not None and (time.perf_counter() - started) * folds > budget_s:
                raise OverBudget(time.perf_counter() - started, (time.perf_counter() - started) * folds)
            for row, value in zip(rows, (score, loss, step), strict=True):
                row.append(value)
            if progress is not None:
                shown = "-" if score is None else f"{score:.4f}"
                progress(f"cross-validation: candidate {i + 1}/{len(candidates)} ({describe(candidate)}), fold "
                         f"{f + 1}/{folds}: val {metric} {shown}")
        scores.append(rows[0])
        losses.append(rows[1])
        steps.append(rows[2])
    means = [_mean(row) for row in scores]
    winner = rank(means, [_mean(row) for row in losses])[0]
    # recorded as the config reads them (lr=1e-3 arrives as the text '1e-3' from YAML), JSON as summary.json's
    recorded = [{k: getattr(cfg, k) for k in c} for c, cfg in zip(candidates, configs, strict=True)]
    return Selection(metric, folds, recorded, scores, losses, steps, winner)


def _fold(config: RunConfig) -> tuple[str, float | None, float | None, int | list | None]:
    """One fold run of ``config`` (an ensemble: one per member seed, their predictions averaged): the metric's name,
    the fold validation score and loss at the selected step(s), and the step (a list of the members' steps)."""
    from fpt.ensemble import evaluate, member_seeds

    exps, steps = [], []
    for seed in member_seeds(config.seed, config.ensemble):
        exp = build(dataclasses.replace(config, seed=seed, ensemble=1))
        exp.data = _without_test(exp.data)
        summary = fit(exp, out=None, progress=False)  # leaves the model at the selected step's parameters
        exps.append(exp)
        steps.append(summary.get("selected_step"))
    metric, val = exps[0].data.objective.metric, exps[0].data.val
    if len(exps) == 1:
        score = summary.get(f"val_{metric}")
        loss = (summary.get("eval") or {}).get(f"{val}_loss")  # eval: None when nothing was evaluated
        return metric, score, loss, steps[0]
    figures = evaluate(exps, sets=[val])
    return metric, figures[f"{val}_{metric}"], figures[f"{val}_loss"], steps


# Training steps timed (after one warm-up step) to estimate a gradient candidate's runs. The closed-form fit's
# feature reading is no measure of them: its members read the series at other scales, in larger batches, without
# gradients (an estimate from it let a 10,000-row table's gradient run in at under 45 s; it took 203 s).
PROBE_STEPS = 3
# A projection this many times past the budget after fewer steps ends the timing: no step-to-step variation after
# the warm-up comes near it (a 10,000-row table's gradient runs project to minutes; its 3 steps took ~4 s of a
# plain run's 60).
FAR_PAST = 3.0


def _gradient_seconds(config: RunConfig, pool: int, runs: int, past: float = math.inf) -> float:
    """Seconds ``runs`` training runs of gradient candidate ``config`` would take here: a build and steps timed on
    the plain split, scaled to the steps and evaluations a run over ``pool`` examples (a fold's share of them when
    ``runs`` > 1) resolves to (fpt.settings.data_budget); an evaluated example counted as a third of a step's. The
    timing stops early once the steps timed so far project past ``FAR_PAST`` times ``past`` seconds."""
    import torch

    from fpt.distributed import step_batch
    from fpt.settings import DataFacts, data_budget
    from fpt.train import train_step

    started = time.perf_counter()
    exp = build(config)
    built = time.perf_counter() - started
    exp.data = _without_test(exp.data)
    size = step_batch(exp, note=False)  # at most the training set, as fit draws it
    values = config.to_dict()
    budget = {**values, **data_budget(values, DataFacts(max(1, pool * (runs - 1) // runs if runs > 1 else pool)))}
    evaluated = budget["steps"] / budget["eval_every"] * pool / max(runs, 2)

    def projected(step: float) -> float:
        return runs * (built + budget["steps"] * step + evaluated * step / (3 * size))

    optimizer = torch.optim.Adam([p for p in exp.model.parameters() if p.requires_grad], lr=exp.config.lr)
    train_step(exp, optimizer, exp.data.train.batch(0, size))  # warm-up: kernels chosen, buffers allocated
    started = time.perf_counter()
    for s in range(1, PROBE_STEPS + 1):
        train_step(exp, optimizer, exp.data.train.batch(s, size))
        estimate = projected((time.perf_counter() - started) / s)
        if estimate > FAR_PAST * past:
            break
    return estimate


@dataclass(frozen=True)
class AutoChoice:
    """What ``fit=auto`` compares, and how (cf-study sets these from its cross-validation on TRAIN splits)."""

    candidates: tuple[dict[str, Any], ...] = ({"fit": CLOSED_FORM}, {"fit": "gradient"})  # first wins a tie
    cv_max: int = 2000  # examples that are not test up to which the candidates are compared by k-fold; beyond, by val
    # Gradient training is compared only when its fold runs are estimated (from training steps timed on the data,
    # ``_gradient_seconds``) to take at most this many seconds; otherwise the record says it was not, why, and the
    # command that compares it. 45 s keeps a plain `fpt train --data` with its baselines and controls under a minute on a
    # 2-core CPU (issue 40's target); GunPoint's 5 gradient folds took 82-89 s there. The estimate can be wrong
    # (another machine, another precision): a k-fold comparison also stops after its first fold when that fold
    # projects the folds past ``overrun`` times the budget, and says so.
    gradient_budget_s: float = 45.0
    overrun: float = 1.5


AUTO = AutoChoice()


@dataclass
class FitChoice:
    """``choose_fit``'s result: the figures (``selection``, as --choose records them), the winner's config, how it
    was compared (k-fold or validation), notes (what was not compared, and why), and the closed-form winner's
    experiment, built (and where it was scored, its features already read: fitting it again reads none twice)."""

    selection: Selection
    config: RunConfig
    protocol: str
    notes: list[str]
    experiment: Any = None
    seconds: dict[str, float] = dataclasses.field(default_factory=dict)  # per candidate compared (describe()d)

    def to_json(self) -> dict[str, Any]:
        return {**self.selection.to_json(), "choose": [describe(c) for c in self.selection.candidates],
                "auto": True, "protocol": self.protocol, "notes": self.notes, "seconds": self.seconds}


@read_once()  # the candidates' builds, the fold count and the fold runs read the data's files once
def choose_fit(config: RunConfig, folds: int | None = None, progress: Callable[[str], None] | None = None,
               choice: AutoChoice = AUTO) -> FitChoice:
    """``fit=auto``: the closed-form fit against gradient training (``choice.candidates``), by k-fold
    cross-validation on the examples that are not test when they are at most ``choice.cv_max``, else by the
    validation split; the better mean wins (ties: the first candidate). Never reads the test split.

    A closed-form candidate is solved once on the plain split (fpt.closed_form.solve): its figures are its head's
    ``folds``-fold scores over the same examples (k-fold), or its validation score with validation held out (not
    solved, its figure None and a note, when no other candidate is compared on validation: it wins unscored). A
    gradient candidate trains once per fold (``cross_validate``), or once on the plain split; it is left out when
    its training is estimated to exceed ``choice.gradient_budget_s`` (a note says so)."""
    from fpt.closed_form import solve

    _check(config)
    configs = [fit_candidate(config, c, f"fit=auto candidate {describe(c)}") for c in choice.candidates]
    compared, scores, steps, notes, solved_exp = [], [], [], [], None
    k, pool, protocol, metric = 1, 0, "", ""
    order = sorted(range(len(configs)), key=lambda i: configs[i].fit != CLOSED_FORM)  # closed form first: it times
    results: dict[int, tuple[list, list]] = {}
    seconds: dict[str, float] = {}
    deferred: list[tuple[int, Any]] = []  # closed-form candidates compared on validation: solved last, if needed

    def closed_form_figures(i: int, exp: Any) -> None:
        started = time.perf_counter()
        solved = solve(exp, hold_out_val=True, folds=k if protocol == "k-fold" else 0,  # 0: no fold figures
                       progress=progress is not None)
        figures = (solved["closed_form"]["fold_scores"] if protocol == "k-fold"
                   else [solved["eval"][f"{exp.data.val}_{metric}"]])
        results[i] = (figures, [0] * len(figures))
        seconds[describe(choice.candidates[i])] = round(time.perf_counter() - started, 3)
        if progress is not None:
            progress(f"fit=auto: {describe(choice.candidates[i])}: val {metric} {_shown(figures)} "
                     f"({protocol}, {time.perf_counter() - started:.1f} s)")

    for i in order:
        cfg = configs[i]
        if cfg.fit == CLOSED_FORM:
            exp = build(cfg)
            pool = len(exp.data.train) + len(exp.data.eval_sets[exp.data.val])
            protocol, k = _protocol(config, pool, folds, choice, notes)
            metric = exp.data.objective.metric
            if solved_exp is None:
                solved_exp = (i, exp)
            if protocol == "validation":
                deferred.append((i, exp))
            else:
                closed_form_figures(i, exp)
            continue
        if not protocol:  # no closed-form candidate to measure the pool with
            pool = _pool_size(config)
            protocol, k = _protocol(config, pool, folds, choice, notes)
        started = time.perf_counter()
        got = _gradient_figures(cfg, choice.candidates[i], protocol, k, pool, choice, notes)
        if got is None:
            seconds[describe(choice.candidates[i])] = round(time.perf_counter() - started, 3)
            continue
        figures, run_steps, metric = got
        results[i] = (figures, run_steps)
        seconds[describe(choice.candidates[i])] = round(time.perf_counter() - started, 3)
        if progress is not None:
            progress(f"fit=auto: {describe(choice.candidates[i])}: val {metric} {_shown(figures)} "
                     f"({protocol}, {time.perf_counter() - started:.1f} s)")
    if deferred and (results or len(deferred) > 1):
        for i, exp in deferred:
            closed_form_figures(i, exp)
    elif deferred:
        # Alone on validation, the closed-form fit is chosen whatever it scores there: its head is not fitted on
        # train alone to be fitted again on train + validation by the run (on a 10,000-row table, a ridge search
        # over 6,400 x 3,840 features). Its figure is then the run's own, its cross-validation over every fitted
        # example (summary.json's closed_form.cv_score).
        i = deferred[0][0]
        results[i] = ([None], [0])
        notes.append(f"{describe(choice.candidates[i])} alone: not scored on the validation split (nothing to compare "
                     "it with); its figure is the run's own cross-validation estimate over train + validation")
    for i in range(len(configs)):
        if i in results:
            compared.append(i)
            scores.append(results[i][0])
            steps.append(results[i][1])
    means = [_mean(row) for row in scores]
    best = rank(means, [None] * len(means))[0]
    winner = compared[best]
    recorded = [{k_: getattr(configs[i], k_) for k_ in choice.candidates[i]} for i in compared]
    selection = Selection(metric, k, recorded, scores, [[None] * len(r) for r in scores], steps, best)
    experiment = solved_exp[1] if solved_exp is not None and solved_exp[0] == winner else None
    return FitChoice(selection, configs[winner], protocol, notes, experiment, seconds)


def _gradient_figures(cfg: RunConfig, candidate: Mapping[str, Any], protocol: str, k: int, pool: int,
                      choice: AutoChoice, notes: list[str]) -> tuple[list, list, str] | None:
    """Gradient candidate ``candidate``'s figures (per fold, or validation's), the steps selected and the metric;
    None, with a note, when its runs are estimated, or its first fold measured, past ``choice.gradient_budget_s``.
    ``cfg``: its config (``fit_candidate``), which the fold runs take as it is."""
    runs = k if protocol == "k-fold" else 1
    if math.isfinite(choice.gradient_budget_s):
        estimate = _gradient_seconds(cfg, pool, runs, past=choice.gradient_budget_s)
        if estimate > choice.gradient_budget_s:
            notes.append(_not_compared(candidate, f"its {runs} training run(s) would take about {estimate:.0f} s",
                                       choice))
            return None
    if protocol == "k-fold":
        try:
            sel = cross_validate(cfg, [candidate], k, budget_s=choice.overrun * choice.gradient_budget_s)
        except OverBudget as over:
            notes.append(_not_compared(candidate, str(over), choice))
            return None
        return sel.scores[0], sel.steps[0], sel.metric
    exp = build(cfg)
    exp.data = _without_test(exp.data)
    summary = fit(exp, out=None, progress=False)
    metric = exp.data.objective.metric
    return [summary.get(f"val_{metric}")], [summary.get("selected_step")], metric


def _not_compared(candidate: Mapping[str, Any], why: str, choice: AutoChoice) -> str:
    words = describe(candidate)
    given = (" " if speaks_flags() else ", ").join(
        option(k, v if isinstance(v, str) else str(v), placeholder=not isinstance(v, str)) for k, v in candidate.items())
    compare = (f"--choose 'fit=closed-form' --choose '{words}'" if speaks_flags() else
               f"fpt.train_run(config, out, choose=['fit=closed-form', {words!r}])")
    return (f"{words} not compared: {why} here (more than {choice.gradient_budget_s:.0f} s); compare it with "
            f"{compare}, or train it with {given}")


def _protocol(config: RunConfig, pool: int, folds: int | None, choice: AutoChoice,
              notes: list[str]) -> tuple[str, int]:
    """("k-fold", k) for at most ``choice.cv_max`` examples that are not test, else ("validation", 1); data with its own
    validation split cannot be folded, so it is compared on that split (a note says so)."""
    from fpt.errors import DataError

    if pool > choice.cv_max:
        return "validation", 1
    try:
        return "k-fold", fold_count(config, folds or DEFAULT_FOLDS)
    except DataError:  # the data's own validation split (the one reason a pool that built cannot be folded)
        notes.append("the data has its own validation split: the candidates are compared on it, not by k-fold")
        return "validation", 1


def _shown(figures: Sequence[float | None]) -> str:
    mean = _mean(figures)
    return "-" if mean is None else f"{mean:.4f} ± {float(np.std(figures)):.4f}"


def _pool_size(config: RunConfig) -> int:
    """Examples that are not test (train + validation) of ``config``'s data."""
    from fpt.data import load
    from fpt.data.base import finish_splits, infer_objective

    raw = load(config.data, config.target_column, config.modality, config.image_channels, config.image_size,
               config.drop_columns, config.series_id)
    train = raw.splits["train"]
    classify = infer_objective(train.y, raw.targets, config.objective, train.where, raw.declared,
                               raw.categorical_targets)[0] == "classification"
    split = finish_splits(raw, config.val_fraction, config.test_fraction, config.split_seed, classify)
    return len(split.splits["train"].y) + len(split.splits["val"].y)


def describe(candidate: Mapping[str, Any]) -> str:
    """``key=value`` words, as ``--choose`` takes them."""
    return " ".join(f"{k}={v}" for k, v in candidate.items())


__all__ = ["AUTO", "DEFAULT_FOLDS", "AutoChoice", "FitChoice", "OverBudget", "Selection", "candidate_config",
           "check_folds", "choose_fit", "cross_validate", "describe", "fold_count", "rank"]

"""What you would otherwise run, fitted beside every ``--data`` run on the same split.

``RunConfig.baselines`` (``fpt train --baselines``):

- ``fast`` (the default of ``--data`` runs, ``auto``): classic models, each fitted on the run's
  training split, its hyper-parameters chosen on the validation split only, then scored on test,
  with its wall time. Tables: logistic regression (classification) or ridge regression
  (regression) on the standardised features, and scikit-learn's HistGradientBoosting. Time series:
  1-NN Euclidean on the normalised series, and MiniRocket when aeon is installed (skipped with a
  note otherwise). Images: logistic regression on the pixels. Symbol sequences: logistic regression
  on symbol counts.
- ``all``: ``fast`` plus two controls, trained exactly like the run (its budget, selection and
  seed) in ``OUT/controls/``: ``random body`` (the same model on a frozen randomly initialised body,
  ``init=random``) and ``no language model`` (``body=no-lm``: the input layer and head around one
  trained transformer block, fpt.bodies.one_layer). They cost two more trainings.
- ``none``: nothing beside the run (paper tasks never have these; ``auto`` is ``none`` for them).

A refit run (``fpt train --refit``, fpt.refit) is compared with refit baselines (``beside_refit``), all
on the selection run's train/validation/test split: each model's hyper-parameters are still chosen on
validation (fitted on train), then the chosen model is fitted again on train + validation and scored on
test (``"protocol": "refit"``; its ``val`` is the figure that chose it); each control is itself a refit
run (fpt.refit.fit) in ``OUT/controls/``; fpt's validation figure is the selection run's, its test
figure the refit model's. So every row learns from the same examples before test (the published UCR
figures are of models trained on the whole TRAIN file, which is train + validation here).

The models read the features fpt's own tokeniser made of the same split (fitted on train): numeric
columns standardised with missing indicators and one-hot categories; series normalised as the run
normalised them (``series_norm``) and rebuilt from their windows; standardised pixels. So a model
and the run never differ in the data they saw, only in what learns from it.

The result is ``summary["baselines_models"]``: the metric, each model's validation and test figure,
chosen hyper-parameters and seconds, the controls, notes (what was skipped and why), the best on
validation among all of them and the run, and ``line``, the plain sentence the printout ends with.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from fpt import rundir
from fpt.config import DATA_TASK, RunConfig
from fpt.errors import option
from fpt.feature_map import CLOSED_FORM

FPT = "fpt"
REFIT = "refit"  # the protocol of a refit run's baselines (entries' and the result's "protocol")
REFIT_WORDS = "refit on train+validation"
CONTROLS = {"random body": {"init": "random"}, "no language model": {"body": "no-lm"}}
CONTROL_DIRS = {"random body": "random-body", "no language model": "no-lm"}
C_GRID = (0.01, 0.1, 1.0, 10.0, 100.0)  # logistic regression's inverse regularisation, chosen on validation
ALPHA_GRID = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)  # ridge
HGB_GRID = ({"learning_rate": 0.1, "max_leaf_nodes": 31}, {"learning_rate": 0.05, "max_leaf_nodes": 7},
            {"learning_rate": 0.2, "max_leaf_nodes": 15})
MIN_ROCKET_LENGTH = 9  # MiniRocket's kernels are 9 points long: shorter series are zero-padded
# The budget of the classic models, so that they never cost more than the run they sit beside (10,000 classes hung
# the default baselines for minutes): a model whose size rule says it would take too long is skipped before it
# starts, and a grid stops at the first point past BUDGET_SECONDS (the best so far is kept); notes say which.
BUDGET_SECONDS = 120.0  # per model, over its grid
MAX_WORK = {  # per model: a product of sizes its fit grows with (one fit of the grid), and what it is
    "logistic regression": (2e7, "examples x classes"), "gradient boosting": (5e6, "examples x classes"),
    "ridge regression": (5e9, "examples x features"), "1-NN Euclidean": (5e9, "examples x examples x values"),
    "MiniRocket": (5e7, "examples x points x channels")}


def level(config: RunConfig) -> str:
    """none, fast or all: what ``config.baselines`` asks for (``auto``: all for closed-form --data runs, fast for
    gradient ones, none for paper tasks)."""
    if config.task != DATA_TASK or config.train_on_val:  # a refit's second run: its split has no validation left
        return "none"
    if config.baselines == "auto":  # the controls of a closed-form fit cost two more feature reads, not trainings
        return "all" if config.fit == CLOSED_FORM else "fast"
    return config.baselines


# ---------------------------------------------------------------------------------------------- features


def features(data: Any) -> tuple[str, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """(modality, {split: (X, y)}) of a --data task's train, val and test splits: each modality's features
    (``fpt.data.modalities``), computed from the tokens."""
    from fpt.data.modalities import modality as declared

    tok = (data.fitted or {}).get("tokeniser", {})
    modality = tok.get("kind", data.info.get("modality"))
    features_of = declared(modality).features
    vocab = int(getattr(data.spec, "vocab_size", None) or 0)
    sets = {"train": data.train.data, "val": data.eval_sets[data.val], "test": data.eval_sets[data.test]}
    out = {}
    for name, batch in sets.items():
        y = batch.y.numpy()
        out[name] = (features_of(batch.x.numpy(), tok, vocab), y[:, 0] if y.ndim == 2 else y)
    return modality, out


# ---------------------------------------------------------------------------------------------- models


def _score(classify: bool, model: Any, x: np.ndarray, y: np.ndarray) -> float:
    from sklearn.metrics import accuracy_score, r2_score

    pred = model.predict(x)
    return float(accuracy_score(y, pred) if classify else r2_score(y, pred))


def _work(name: str, sets: dict, classify: bool) -> float:
    """The size that ``name``'s fit grows with on ``sets`` (``MAX_WORK`` says which product)."""
    x, y = sets["train"]
    n = len(x)
    classes = len(np.unique(y)) if classify else 1
    if name in ("logistic regression", "gradient boosting"):
        return float(n) * classes
    if name == "1-NN Euclidean":
        return float(n) * (len(sets["val"][0]) + len(sets["test"][0])) * int(np.prod(x.shape[1:]))
    return float(n) * int(np.prod(x.shape[1:]))


def over_budget(name: str, sets: dict, classify: bool) -> str | None:
    """A note when ``name`` would exceed its size rule on ``sets`` (it is then not fitted), else None."""
    limit, what = MAX_WORK.get(name, (float("inf"), ""))
    work = _work(name, sets, classify)
    if work <= limit:
        return None
    return (f"{name} skipped: {what} is {work:,.0f}, over the baselines' budget of {limit:,.0f} (it would take longer "
            f"than the run); {option('baselines', 'none')} drops the classic models")


def _choose(make: Callable[[dict], Any], grid: list[dict], sets: dict, classify: bool,
            refit: bool = False, name: str = "", notes: list[str] | None = None) -> dict[str, Any]:
    """Fit one model per grid point on train, keep the best on validation, score it on test; seconds for all.
    ``refit``: the chosen model is fitted again on train + validation before it is scored on test. The grid stops
    at the first point past ``BUDGET_SECONDS`` (said in ``notes``)."""
    started = time.perf_counter()
    best = None
    for i, params in enumerate(grid):
        if best is not None and time.perf_counter() - started > BUDGET_SECONDS:
            if notes is not None:
                notes.append(f"{name}: {len(grid) - i} of {len(grid)} grid points skipped (over the baselines' budget "
                             f"of {BUDGET_SECONDS:g} s); the best of the first {i} is reported")
            break
        model = _fit(make(params), *sets["train"])
        val = _score(classify, model, *sets["val"])
        if best is None or val > best[0]:
            best = (val, params, model)
    val, params, model = best
    if refit:
        (x_train, y_train), (x_val, y_val) = sets["train"], sets["val"]
        model = _fit(make(params), np.concatenate([x_train, x_val]), np.concatenate([y_train, y_val]))
    test = _score(classify, model, *sets["test"])
    return {"val": round(val, 4), "test": round(test, 4), "chosen": params,
            "seconds": round(time.perf_counter() - started, 3), **({"protocol": REFIT} if refit else {})}


def _fit(model: Any, x: np.ndarray, y: np.ndarray) -> Any:
    """``model.fit(x, y)``. fpt decided the objective (a UCR file's labels are classes, however many: PigCVP's 52 in
    104 series), so scikit-learn's guess from the label count that they "could represent a regression problem" is
    noise beside the run."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The number of unique classes is greater than 50%")
        return model.fit(x, y)


def _flat(sets: dict) -> dict:
    return {k: (x.reshape(len(x), -1), y) for k, (x, y) in sets.items()}


def _linear(classify: bool) -> tuple[str, Callable[[dict], Any], list[dict]]:
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if classify:
        return ("logistic regression", lambda p: make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000, **p)),
                [{"C": c} for c in C_GRID])
    return "ridge regression", lambda p: make_pipeline(StandardScaler(), Ridge(**p)), [{"alpha": a} for a in ALPHA_GRID]


def _boosting(classify: bool, seed: int) -> tuple[str, Callable[[dict], Any], list[dict]]:
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    cls = HistGradientBoostingClassifier if classify else HistGradientBoostingRegressor
    return "gradient boosting", lambda p: cls(random_state=seed, early_stopping=False, **p), list(HGB_GRID)


def _nearest(classify: bool) -> tuple[str, Callable[[dict], Any], list[dict]]:
    from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

    cls = KNeighborsClassifier if classify else KNeighborsRegressor
    return "1-NN Euclidean", lambda p: cls(n_neighbors=1), [{}]


def quiet_numba_threads() -> None:
    """numba's OpenMP thread pool (aeon's MiniRocket) and torch's, in one process, make every torch operation after a
    ``torch.set_num_threads`` ~100x slower (attention and matmuls: 0.1 s -> 10 s, measured on an AMD EPYC): numba's
    ``workqueue`` layer has no OpenMP runtime to collide with. A layer the user chose is left as it is."""
    import os
    import sys

    if "NUMBA_THREADING_LAYER" in os.environ:
        return
    os.environ["NUMBA_THREADING_LAYER"] = "workqueue"
    if "numba" in sys.modules:  # imported already: its config was read, but no pool starts before the first launch
        sys.modules["numba"].config.THREADING_LAYER = "workqueue"


def _minirocket(classify: bool, seed: int) -> tuple[str, Callable[[dict], Any], list[dict]] | str:
    quiet_numba_threads()
    try:
        if classify:
            from aeon.classification.convolution_based import MiniRocketClassifier as cls
        else:
            from aeon.regression.convolution_based import MiniRocketRegressor as cls
    except ImportError:
        return "MiniRocket skipped: aeon is not installed (pip install 'fpt[bench]' or aeon)"
    return "MiniRocket", lambda p: cls(random_state=seed), [{}]


def _padded(sets: dict) -> dict:
    """Series at least MiniRocket's kernel length (zero-padded on the right)."""
    out = {}
    for k, (x, y) in sets.items():
        if x.shape[2] < MIN_ROCKET_LENGTH:
            x = np.concatenate([x, np.zeros((*x.shape[:2], MIN_ROCKET_LENGTH - x.shape[2]), x.dtype)], axis=2)
        out[k] = (x.astype(np.float64), y)
    return out


# The classic models a modality may name (fpt.data.modalities): name -> (plan of (classify, seed), the view of
# the features it reads). A plan is (name, make, grid), or a line saying why the model is not there.
MODELS: dict[str, tuple[Callable[[bool, int], Any], Callable[[dict], dict]]] = {
    "linear": (lambda classify, seed: _linear(classify), _flat),
    "boosting": (_boosting, _flat),
    "nearest": (lambda classify, seed: _nearest(classify), _flat),
    "minirocket": (_minirocket, _padded),
}


# Below this many training values (rows x features), the classic models fit on one thread: threads buy little on
# small data, and OpenMP's barriers (HistGradientBoosting) and BLAS's spin-waits cost a scheduler slice each when
# another process holds a core: beside 2 or 6 busy processes, 2 threads took 1.5-6x one thread's time; idle, one
# thread costs 1.3x at 10,000 x 20 and 1.6x at 80,000 x 20 (docs/results/bench/classic_threads.json, AMD EPYC,
# 2 cores; bench/classic_threads.py). Above it, the libraries keep their own thread counts.
CLASSIC_ONE_THREAD_VALUES = 2_000_000


def classic_threads(sets: dict) -> int | None:
    """The thread limit the classic models fit under (threadpoolctl): 1 on small data, None (the libraries' own)."""
    x = sets["train"][0]
    return 1 if x.size < CLASSIC_ONE_THREAD_VALUES else None


def fit_models(data: Any, seed: int = RunConfig.seed, refit: bool = False) -> dict[str, Any]:
    """The classic models of a --data task on its own split: {"metric", "models": {name: {...}}, "notes"}.
    ``refit``: each chosen model is fitted again on train + validation before test (and the result, like each
    entry, says ``"protocol": "refit"``)."""
    classify = data.objective.name == "classification"
    metric = "accuracy" if classify else "r2"
    notes: list[str] = []
    protocol = {"protocol": REFIT} if refit else {}
    if data.train.data.y.reshape(len(data.train.data.y), -1).shape[1] != 1:
        return {"metric": metric, "models": {}, **protocol,
                "notes": ["classic models skipped: they predict one target per example"]}
    from fpt.data.modalities import modality as declared

    modality, sets = features(data)
    plans: list[tuple[tuple, dict]] = []
    for name in declared(modality).baselines:  # each modality names its classic models
        make, view = MODELS[name]
        plan = make(classify, seed)
        if isinstance(plan, str):  # not installed: said beside the others
            notes.append(plan)
        else:
            plans.append((plan, view(sets)))
    models: dict[str, Any] = {}
    import torch
    from threadpoolctl import threadpool_limits

    threads = torch.get_num_threads()
    try:
        for (name, make, grid), model_sets in plans:
            skipped = over_budget(name, model_sets, classify)
            if skipped:
                notes.append(skipped)
                continue
            try:
                with threadpool_limits(limits=classic_threads(model_sets)):
                    models[name] = _choose(make, grid, model_sets, classify, refit, name, notes)
            except (ValueError, MemoryError) as exc:  # e.g. a class too rare for the model: the run goes on
                notes.append(f"{name} failed: {str(exc).splitlines()[0][:160]}")
    finally:
        # aeon's MiniRocket sets the process's thread count to every core and leaves it there: the next
        # training in this process (a notebook, a benchmark) would oversubscribe the cores, 10x slower
        # beside another job (measured on ItalyPowerDemand after GunPoint).
        if torch.get_num_threads() != threads:  # only then: re-creating the thread pool is not free
            torch.set_num_threads(threads)
    return {"metric": metric, "models": models, "notes": notes, **protocol}


# ---------------------------------------------------------------------------------------------- controls


def run_controls(config: RunConfig, out: Path | None, progress: bool = False, refit: bool = False,
                 data: Any = None, sample: dict[str, Any] | None = None) -> dict[str, Any]:
    """The two controls of ``--baselines all``, each a full fpt run of ``config`` with one change.
    ``refit``: each is a refit run (fpt.refit.fit; ``config`` is then the selection run's), its validation
    figure the selection run's. ``data``: the run's task data, shared (tokenised once) instead of built again.
    A closed-form control records its fold scores, on the run's folds (fpt.closed_form.fold_scores). ``sample``:
    ``data`` holds a subsample of the run's fitted examples (``_controls_subsample``), recorded in each entry."""
    from fpt.pipeline import assemble, build
    from fpt.train import fit

    results = {}
    for name, change in CONTROLS.items():
        cfg = dataclasses.replace(config, baselines="none", **change)
        where = None if out is None else Path(out) / rundir.CONTROLS / CONTROL_DIRS[name]
        started = time.perf_counter()
        if refit:
            summary = _refit_control(cfg, where, progress)
            selected = summary["refit"]["selected_step"]
            # both runs' training, as fpt's own row counts it; the same after a resume found them finished
            seconds = (summary.get("wall_seconds") or 0) + (summary["refit"].get("selection_wall_seconds") or 0)
        else:
            exp = assemble(cfg, data) if data is not None else build(cfg)
            # a control a stopped attempt left (the run resumed) is read if finished, else continued, not refused
            summary = fit(exp, out=where, progress=progress, resume=where is not None and where.is_dir())
            selected = summary.get("selected_step")
            seconds = time.perf_counter() - started
        metric = "accuracy" if "test_accuracy" in summary else "r2"
        val, test = _figures(summary, metric)
        results[name] = {"val": val, "test": test, "change": change, "selected_step": selected,
                         "seconds": round(seconds, 3),
                         **({"protocol": REFIT, "refit_steps": summary.get("steps")} if refit else {}),
                         **({"fold_scores": summary["closed_form"]["fold_scores"],
                             "closed_form": _closed_form_words(summary["closed_form"])} if "closed_form" in summary else {}),
                         **({"run": str(where)} if where is not None else {}),
                         # its own count: a control finished before the subsample (read back on resume) fitted all
                         **({"fitted_examples": summary["closed_form"]["fitted_examples"], "of": sample["of"],
                             "subsample_seed": sample["seed"]} if sample is not None and "closed_form" in summary else {})}
    return results


def _refit_control(config: RunConfig, where: Path | None, progress: bool) -> dict[str, Any]:
    """A control's refit run; one that a stopped ``beside_refit`` left in ``where`` is continued, not refused."""
    import tempfile

    from fpt import refit

    if where is not None:
        return refit.fit(config, where, resume=where.is_dir(), progress=progress)
    with tempfile.TemporaryDirectory(prefix="fpt-control-") as tmp:  # a refit run needs a directory for its two runs
        return refit.fit(config, Path(tmp) / "run", progress=progress)


def _figures(summary: dict[str, Any], metric: str) -> tuple[float | None, float | None]:
    """(validation, test) of a run's summary; a refit run has no validation figure of its own (it trained on
    validation), so the selection run's, which chose its length of training, stands in."""
    refitted = summary.get("refit")
    val = refitted.get(f"selection_val_{metric}") if refitted else summary.get(f"val_{metric}")
    return _round(val), _round(summary.get(f"test_{metric}"))


def _round(value: Any) -> float | None:
    return None if value is None else round(float(value), 4)


# ---------------------------------------------------------------------------------------------- comparison


def compare(summary: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """``result`` with the run added: the best on validation among the models, the controls and fpt, and ``line``."""
    metric = result["metric"]
    val, test = _figures(summary, metric)
    ours = {"val": val, "test": test}
    refitted = "refit" in summary or result.get("protocol") == REFIT
    entries = {**result.get("models", {}), **result.get("controls", {})}
    candidates = [(name, e) for name, e in entries.items() if e.get("val") is not None]
    if ours["val"] is not None:
        candidates.append((FPT, ours))
    out = dict(result)
    if refitted:
        out["protocol"] = REFIT
    if not candidates:
        out["line"] = "no baselines were fitted" + (f" ({'; '.join(result['notes'])})" if result.get("notes") else "")
        return out
    best_name, best = max(candidates, key=lambda item: item[1]["val"])  # first of equals: models before fpt
    out["best_on_validation"] = {"name": best_name, "val": best["val"], "test": best["test"]}
    label = "R²" if metric == "r2" else ""
    line = f"best on validation: {best_name} ({label + ' ' if label else ''}val {_fmt(best['val'])}, test {_fmt(best['test'])})"
    if best_name != FPT:
        line += f"; fpt val {_fmt(ours['val'])}, test {_fmt(ours['test'])}"
    if refitted:
        line += f"; each chosen on validation, then {REFIT_WORDS}"
    out["line"] = line
    sample = result.get("controls_subsample")
    verdict = language_model_verdict(summary, result.get("controls") or {}, metric, sample)
    if verdict is not None:
        out["language_model"] = verdict
    return out


SIGNIFICANCE = 0.05  # the paired t-test's level for "helped" / "hurt" in the language-model line


def language_model_verdict(summary: dict[str, Any], controls: dict[str, Any], metric: str,
                           sample: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """Whether the language model helped on this data: the run's fold scores against each control's on the same
    folds (closed-form fits: fpt.closed_form.fold_scores over the examples fitted), mean ± std and a paired t-test
    per control, and one plain ``line``. None without fold scores on both sides (gradient runs, no controls).
    ``sample``: the controls were fitted on a subsample (``_controls_subsample``); the run's figures are its own
    fold scores over the same rows."""
    from scipy import stats

    ours = (sample["fold_scores"] if sample is not None else (summary.get("closed_form") or {}).get("fold_scores")) or []
    rows, words = {}, []
    for name, entry in controls.items():
        theirs = entry.get("fold_scores") or []
        if len(ours) < 2 or len(theirs) != len(ours):
            continue
        if sample is not None and entry.get("fitted_examples") != sample["examples"]:  # not the same rows: unpaired
            continue
        diff = np.asarray(ours) - np.asarray(theirs)
        # equal differences on every fold (to rounding: PigCVP's two folds, each one series in 52 apart) have no
        # spread to test; scipy's t would be a rounding error's, its p about 0
        spread = np.ptp(diff) > 1e-9 * max(1.0, float(np.abs(diff).max()))
        p = float(stats.ttest_rel(ours, theirs).pvalue) if spread else 1.0
        p = 1.0 if not np.isfinite(p) else p
        rows[name] = {"mean": float(np.mean(theirs)), "std": float(np.std(theirs)), "p": round(p, 4),
                      "difference": float(diff.mean())}
        words.append(f"{name} {np.mean(theirs):.3f} ± {np.std(theirs):.3f} (p = {p:.3f})")
    if not rows:
        return None
    # "yes" claims the run is above every control: each test at the level (an intersection-union test needs no
    # correction). "no" claims some control is above it, any one of the k tested: Holm's step-down over the k, so
    # two controls do not double the chance of a false "no" (the smallest p against level / k alone was Bonferroni's:
    # a control the run beats clearly, first in that order, left a second control above it held to level / k)
    better = all(r["difference"] > 0 and r["p"] < SIGNIFICANCE for r in rows.values())
    worse = any(rows[name]["difference"] < 0 for name in _holm(rows))
    answer = ("yes: above every control" if better else
              "no: a control is significantly better" if worse else "not shown: no significant difference from every control")
    label = "R²" if metric == "r2" else metric
    rows_words = ("" if sample is None else
                  f" of {sample['examples']} of the {sample['of']} fitted examples (seed {sample['seed']})")
    line = (f"did the language model help on this data? {answer} (fold {label} over {len(ours)} folds{rows_words}, "
            f"paired t-test: with it {np.mean(ours):.3f} ± {np.std(ours):.3f}; {'; '.join(words)})")
    return {"helped": better, "hurt": worse, "folds": len(ours), "mean": float(np.mean(ours)),
            "std": float(np.std(ours)), "controls": rows, "line": line,
            **({"examples": sample["examples"], "of": sample["of"], "seed": sample["seed"]} if sample else {})}


def _holm(rows: dict[str, dict[str, Any]]) -> list[str]:
    """The controls whose p is significant under Holm's step-down at ``SIGNIFICANCE`` over all of ``rows``: the i-th
    smallest p (from 0) is held to SIGNIFICANCE / (k - i) until the first that fails (as
    fpt.presentation.verdict_stats.holm, a layer above)."""
    ordered = sorted(rows, key=lambda name: (rows[name]["p"], name))
    significant = []
    for i, name in enumerate(ordered):
        if rows[name]["p"] >= SIGNIFICANCE / (len(ordered) - i):
            break
        significant.append(name)
    return significant


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def beside_run(exp: Any, summary: dict[str, Any], out: str | Path | None = None,
               progress: bool = False) -> dict[str, Any]:
    """Fit what ``exp.config.baselines`` asks for beside the finished run ``summary``; returns the summary with
    ``baselines_models`` added, rewritten to ``OUT/summary.json`` when ``out`` is given. Nothing is fitted (and the
    summary returned as is) for paper tasks and ``--baselines none``."""
    chosen = level(exp.config)
    if chosen == "none":
        return _settled(summary, out)
    if out is not None:
        _check_run_data(exp, Path(out))
        summary = _pending(summary, Path(out), chosen)
    # A closed-form fit learns from train + validation (fpt.closed_form): each model, chosen on validation, then
    # learns from the same examples before test (the refit protocol).
    # The controls first: after aeon's MiniRocket (numba's threads) the body's attention ran ~20x slower in this
    # process (GunPoint's closed-form controls: 1-3 s before it, 22 s after).
    sample = _controls_subsample(exp, summary) if chosen == "all" else None
    data = exp.data if sample is None else sample.pop("data")
    controls = (run_controls(exp.config, None if out is None else Path(out), progress, data=data, sample=sample)
                if chosen == "all" else None)
    result = fit_models(exp.data, exp.config.seed, refit="closed_form" in summary)
    if controls is not None:
        result["controls"] = controls
    if sample is not None:
        result["controls_subsample"] = sample
    return _with_comparison(summary, result, out)


def _controls_subsample(exp: Any, summary: dict[str, Any]) -> dict[str, Any] | None:
    """Above ``fpt.closed_form.CONTROLS_UP_TO`` fitted examples of a closed-form run: the seeded, stratified rows
    its controls are fitted on ("examples" of "of", "seed"), the task data holding only them ("data"), and the run's
    own fold figures over the same rows ("fold_scores", solved in "seconds"), which the language-model line compares.
    None below it."""
    from fpt import closed_form

    record = summary.get("closed_form") or {}
    fitted = record.get("fitted_examples") or 0
    if exp.config.fit != CLOSED_FORM or fitted <= closed_form.CONTROLS_UP_TO:
        return None
    classify = exp.data.objective.name == "classification"
    seed = exp.config.split_seed
    rows = closed_form.subsample(closed_form.fitted_targets(exp), classify, closed_form.CONTROLS_UP_TO, seed)
    started = time.perf_counter()
    scores = closed_form.subsample_fold_scores(exp, rows)
    return {"examples": len(rows), "of": fitted, "seed": seed, "stratified": classify, "fold_scores": scores,
            "seconds": round(time.perf_counter() - started, 3), "data": closed_form.subsampled_data(exp, rows)}


def beside_refit(summary: dict[str, Any], out: str | Path, progress: bool = False,
                 baselines: str | None = None) -> dict[str, Any]:
    """``beside_run`` for the refit run in ``out`` (fpt.refit.fit's ``summary``): what the selection run's config
    asks for (or ``baselines``, as a resumed run may change it), fitted on the selection run's split (the refit
    run's own has no validation left to choose on), each model refitted on train + validation before test, each
    control a refit run in ``OUT/controls/``."""
    from fpt.run import Run
    from fpt.rundir import SELECTION_RUN

    # The selection run's saved config, not the caller's: it has the budget fitted to the data, which the
    # controls must train with, and the split the models must be fitted on.
    config = Run(Path(out) / SELECTION_RUN).config()
    if baselines is not None:
        config = dataclasses.replace(config, baselines=baselines)
    chosen = level(config)
    if chosen == "none":
        return _settled(summary, out)
    from fpt.data import read_once
    from fpt.train import check_joined_run

    with read_once():  # the read checked is the one the models and the controls' runs fit on
        check_joined_run(config, Path(out), _compared_with(Path(out)))
        summary = _pending(summary, Path(out), chosen)
        result = fit_models(task_data(config), config.seed, refit=True)
        if chosen == "all":
            result["controls"] = run_controls(config, Path(out), progress, refit=True)
    return _with_comparison(summary, result, out)


def _compared_with(out: Path) -> str:
    return f"the run in {out}, which its baselines are compared with, was trained on it"


def _check_run_data(exp: Any, out: Path) -> None:
    """Refuse to fit baselines beside the run in ``out`` on other data than it recorded (data_fingerprint.json): a
    finished closed-form run resumed with baselines=all returns its summary without reading its data, and the
    controls and models were fitted on the data as edited since, compared with a run fitted on the old."""
    from fpt.data.fingerprint import check_unchanged
    from fpt.train import data_fingerprint

    saved = rundir.read_data_fingerprint(out)
    if saved is None or saved.get("kind") == "memory":  # nothing recorded; data given in Python: fit's own check
        return
    now = data_fingerprint(exp)
    if now is not None:
        check_unchanged(saved, now, str(Path(exp.config.data)), _compared_with(out), out / rundir.DATA_FINGERPRINT)


def task_data(config: RunConfig) -> Any:
    """The task data (splits, fitted tokeniser) ``fpt.pipeline.build`` would give ``config``, without its model."""
    from fpt.pipeline import task_options
    from fpt.tasks import build_task
    from fpt.tasks.base import DataSource

    return build_task(config.task, task_options(config), config.seed, DataSource(Path(config.data_dir), config.download))


def _pending(summary: dict[str, Any], out: Path, chosen: str) -> dict[str, Any]:
    """``summary`` (the run's, as fit wrote it) rewritten to ``out`` as waiting for its baselines (``chosen``: fast or
    all) before any is fitted: a run stopped while fitting them (minutes of controls' training) otherwise read as
    finished, in fpt runs and on resume, and its controls and models were never fitted. Returns it as it was."""
    summary = _without_pending(summary)
    with rundir.lock(out, what="fpt train (baselines)"):
        rundir.write_summary(out, {**summary, rundir.BASELINES_PENDING: chosen})
    return summary


def _settled(summary: dict[str, Any], out: str | Path | None) -> dict[str, Any]:
    """``summary`` with no baselines to fit: a mark of baselines pending from a stopped attempt is taken away (the
    run resumed with baselines=none)."""
    if rundir.BASELINES_PENDING not in summary:
        return summary
    summary = _without_pending(summary)
    if out is not None:
        with rundir.lock(out, what="fpt train (baselines)"):
            rundir.write_summary(out, summary)
    return summary


def _without_pending(summary: dict[str, Any]) -> dict[str, Any]:
    """``summary`` without the mark of baselines still to fit (a copy)."""
    return {k: v for k, v in summary.items() if k != rundir.BASELINES_PENDING}


def _with_comparison(summary: dict[str, Any], result: dict[str, Any], out: str | Path | None) -> dict[str, Any]:
    summary = {**_without_pending(summary), "baselines_models": compare(summary, result)}
    if out is not None:
        with rundir.lock(out, what="fpt train (baselines)"):
            rundir.write_summary(out, summary)
    return summary


def _closed_form_words(record: dict[str, Any]) -> str:
    """How a closed-form fit was chosen, in a few words (its members and their windows, its penalty, and what the
    validation figure is)."""
    penalty = f"alpha={record['alpha']:g}" if "alpha" in record else f"C={record.get('C')}"
    # with ppv pooling the head kept its columns or dropped them, by leave-one-out (fpt.closed_form.fit_head)
    ppv = {True: ", ppv kept", False: ", ppv dropped"}.get(record.get("ppv_kept"), "")
    windows = {"one": " at every token", "half": " every half window"}.get(record.get("hop"), "")
    members = f"{record['members']} members{windows}, " if "members" in record else ""
    return f"closed form: {members}{record.get('head')} {penalty}{ppv}, val: {record.get('val_figure')}"


def table_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The comparison as rows (fpt first, then the models and controls): name, kind, val, test, seconds, chosen."""
    result = summary.get("baselines_models") or {}
    metric = result.get("metric", "accuracy")
    val, test = _figures(summary, metric)
    refitted = summary.get("refit")
    if refitted:  # both runs' time; the step validation chose, then the refit's own length
        seconds = summary.get("wall_seconds")
        if seconds is not None and refitted.get("selection_wall_seconds") is not None:
            seconds += refitted["selection_wall_seconds"]
        rows = [{"name": FPT, "kind": "this run", "val": val, "test": test, "seconds": seconds,
                 "chosen": f"step {refitted.get('selected_step')}, refit {refitted.get('steps')} steps"}]
    else:
        rows = [{"name": FPT, "kind": "this run", "val": val, "test": test, "seconds": summary.get("wall_seconds"),
                 "chosen": _closed_form_words(summary["closed_form"]) if "closed_form" in summary
                 else f"step {summary.get('selected_step')}"}]

    def refit_words(e: dict[str, Any]) -> list[str]:
        return ["refit"] if e.get("protocol") == REFIT else []

    for name, e in (result.get("models") or {}).items():
        rows.append({"name": name, "kind": "classic model", **{k: e.get(k) for k in ("val", "test", "seconds")},
                     "chosen": ", ".join([*(f"{k}={v}" for k, v in (e.get("chosen") or {}).items()),
                                          *refit_words(e)]) or "-"})
    for name, e in (result.get("controls") or {}).items():
        rows.append({"name": name, "kind": "control", **{k: e.get(k) for k in ("val", "test", "seconds")},
                     "chosen": (e.get("closed_form") or ", ".join([f"step {e.get('selected_step')}", *refit_words(e)]))
                     + (f", fitted on {e['fitted_examples']} of {e['of']} rows" if "fitted_examples" in e else "")})
    return rows


__all__ = ["CONTROLS", "REFIT", "beside_refit", "beside_run", "compare", "features", "fit_models", "level",
           "run_controls", "table_rows", "task_data"]

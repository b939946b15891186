"""The closed-form fit (``fit=closed-form``): no gradient step. The frozen body is read once as a feature map
(fpt.feature_map.FeatureMap: seeded input layers, pooled block states), and a linear head is fitted in closed form.

1. Features: every example of the training, validation and test sets through the model once, in batches under
   torch.inference_mode and the run's precision (fpt.inference, as the cached probe of fpt.cache reads them),
   pooled inside the batch loop, so memory holds (N, F) and never (N, blocks, T, D).
2. The examples fitted: train and validation together (every example that is not test: nothing is selected on a
   held-out split, so none need be carved out), or train alone in a fold run of a cross-validation
   (``folds``/``fold``, fpt.select), whose validation fold is then scored as usual.
3. Standardised with the fitted examples' mean and std (``cf_standardise``), then the head: ``ridge`` (one-vs-rest
   +-1 targets for classes, the standardised targets for regression; its penalty chosen by exact leave-one-out over
   the fitted examples, near-ties to the larger: fpt.ridge, scikit-learn's RidgeCV computed over one
   eigendecomposition) or ``logistic``
   (LogisticRegressionCV, C by stratified k-fold; calibrated probabilities). The validation figure of a run fitted
   on train + validation is that cross-validation estimate (leave-one-out accuracy or R² at the chosen penalty),
   recorded as such; the test split is scored once.
4. The standardisation is folded into the head (W / std, b - W mean / std), so the saved model is one linear layer
   over the features: predict, export and ONNX need nothing else.

Beside the fit, ``fold_scores``: the same head fitted on k-1 folds of the fitted examples and scored on the k-th,
for every fold (seeded by ``split_seed``, stratified for classes); the controls are scored on the same folds, which
is what the line on whether the language model helped compares (fpt.baselines). Above ``CONTROLS_UP_TO`` fitted
examples the controls fit a seeded subsample of them (``subsampled_data``) and the run's figures compared are its
fold figures over the same rows (``subsample_fold_scores``); the run's own fold figures over every fitted example
are then not computed (read by nothing: its estimate is the head's cross-validation figure).
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from fpt.errors import ConfigError
from fpt.feature_map import ClosedForm, FeatureMap, options
from fpt.inference import batched_outputs
from fpt.model import FEATURES
from fpt.pipeline import Experiment
from fpt.ridge import LEAST, ridge_loo_at, ridge_loo_scaled
from fpt.tasks.base import Batch, TensorSource

LOO = "leave-one-out"
MISSING_CLASS_BIAS = -1e4  # a class absent from the fitted examples never wins (logistic head)


def read_features(exp: Experiment, batch: Batch, transform: Any = None, progress: str | None = None) -> np.ndarray:
    """The pooled features (N, F) of every example of ``batch`` (float32, on the CPU). ``progress``: the name of a bar
    of the examples read, on a terminal (the one long step of a closed-form fit: minutes on a large table)."""
    model = exp.model
    if not isinstance(model, FeatureMap):
        raise ConfigError(f"fit={exp.config.fit}: the model is not a feature map (fpt.feature_map); build it with "
                          "fit=closed-form")
    design = options(exp.config)
    if len(batch) * model.num_features > design.max_values:
        raise ConfigError(f"fit=closed-form: {len(batch)} examples x {model.num_features} features exceed "
                          f"{design.max_values} values held in memory; pool fewer blocks (cf_blocks=last), drop "
                          "flatten from cf_poolings, or use fewer cf_members")
    out = batched_outputs(exp, batch.x, batch.lengths, trim=exp.config.trim_padding,
                          call=lambda x, lengths: model.features(x, lengths)[:, 0],
                          transform=None if transform is None else (lambda xb: transform(xb, None)),
                          progress=progress is not None, desc=progress or "")
    return out.numpy()


def fit_thresholds(exp: Experiment, batch: Batch, seed: int, transform: Any = None) -> None:
    """Set a ppv pooling's thresholds (fpt.feature_map.FeatureMap.thresholds): per member and pooled block, each unit's
    ``ppv_quantiles`` over the real positions of at most ``ppv_examples`` of ``batch``'s examples (a seeded draw),
    labels unread. A model without ppv pooling is left as it is."""
    model = exp.model
    if not isinstance(model, FeatureMap) or not model.ppv_quantiles:
        return
    fitted_on = _FITTED_ON.get(model)
    if fitted_on is not None and fitted_on[0] is batch and fitted_on[1] == seed:  # fit=auto's choice fitted them
        return
    design = options(exp.config)
    rows = np.sort(np.random.default_rng(seed).permutation(len(batch))[:design.ppv_examples])
    x = batch.x[torch.from_numpy(rows)]
    lengths = None if batch.lengths is None else batch.lengths[torch.from_numpy(rows)]
    states = batched_outputs(exp, x, lengths, trim=exp.config.trim_padding, call=model.block_states,
                             transform=None if transform is None else (lambda xb: transform(xb, None))).numpy()
    width, q, start = model.body.width, tuple(model.ppv_quantiles), 0
    with torch.no_grad():
        for r, (e, _) in enumerate(model.reads):
            tokens = model.positions[e]
            for j in range(len(model.blocks)):
                h = states[:, start:start + tokens * width].reshape(len(rows), tokens, width)  # zeros past each end
                start += tokens * width
                if (np.abs(h).sum(-1) > 0).any():
                    model.thresholds[r][j].copy_(torch.from_numpy(unit_quantiles(h, q)).float())
    _FITTED_ON[model] = (batch, seed)


def unit_quantiles(states: np.ndarray, quantiles: Sequence[float]) -> np.ndarray:
    """Each unit's ``quantiles`` (q, D) over the real positions of block states (N, T, D), zeros past each end (a real
    LayerNorm'd state is never all zeros): ppv pooling's thresholds."""
    h = states.astype(np.float32)
    return np.quantile(h[np.abs(h).sum(-1) > 0], quantiles, axis=0)


# The batch and seed each model's ppv thresholds were last fitted on (``fit_thresholds``), while the model lives: the
# run after fit=auto's choice solves the same experiment again (as ``_READ`` keeps its features).
_FITTED_ON: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


# Features already read, per model: (batch, features) pairs. A choice between fits (fpt.select.choose_fit) solves
# a closed-form candidate, and the run that follows fits the same experiment again: its features are not read twice.
_READ: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def cached_features(exp: Experiment, batch: Batch, transform: Any = None, progress: str | None = None) -> np.ndarray:
    """``read_features``, once per (model, batch) for as long as the model lives."""
    seen = _READ.setdefault(exp.model, [])
    for known, feats in seen:
        if known is batch:
            return feats
    feats = read_features(exp, batch, transform, progress)
    seen.append((batch, feats))
    return feats


def _targets(y: torch.Tensor) -> np.ndarray:
    return y.reshape(len(y), -1).numpy()  # (N, m): class indices, or standardised values


def _onehot(y: np.ndarray, classes: int) -> np.ndarray:
    """(N, m * C) one-vs-rest targets, +1 for the class and -1 elsewhere (RidgeClassifier's coding)."""
    out = -np.ones((len(y), y.shape[1] * classes))
    for j in range(y.shape[1]):
        out[np.arange(len(y)), j * classes + y[:, j].astype(np.int64)] = 1.0
    return out


def _score(classify: bool, logits: np.ndarray, y: np.ndarray, classes: int) -> float:
    """Accuracy (over every target) or R² (mean over targets) of logits (N, m * C) against y (N, m)."""
    if classify:
        pred = logits.reshape(len(y), y.shape[1], classes).argmax(-1)
        return float((pred == y).mean())
    from sklearn.metrics import r2_score

    return float(r2_score(y, logits.reshape(y.shape)))


def fit_head(x: np.ndarray, y: np.ndarray, classify: bool, classes: int, design: ClosedForm,
             seed: int, inputs: int = 0, fixed: dict[str, Any] | None = None,
             member_widths: Sequence[int] | None = None, without_ppv: np.ndarray | None = None,
             norm_columns: dict[str, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """The head (W (m * C, F), b (m * C)) over raw features ``x`` (N, F), standardisation folded in, and what chose
    it: the penalty, the cross-validation and its estimate (``cv_score``). ``inputs``: the last columns are the
    tokens themselves (ridge: scaled by each of ``design.input_scales``, chosen with the penalty by leave-one-out).
    ``member_widths``: the columns each member gives, first to last (the tokens after them); with
    ``design.member_choices`` the ridge head is also fitted on the first m members alone, the members kept chosen by
    leave-one-out with the penalty (a dropped member's weights are zeros). ``fixed``: a ridge head's ``alpha``,
    ``input_scale`` and ``members_kept`` already chosen (``fit_head``'s info): fitted at them, with no search
    (``cv``: "fixed"). Above ``design.search_rows`` examples the ridge head's search reads that many of them
    (``_fit_searched_on_rows``; info's ``search`` says which). ``without_ppv``: the columns a head without the ppv
    pooling reads (fpt.feature_map.FeatureMap.columns_without, the tokens last): with ``design.ppv_choice`` the ridge
    head is fitted on them and on every column, the set kept chosen by leave-one-out with the penalty (these first,
    so a tie keeps the head without ppv; info's ``ppv_kept``). ``norm_columns``: cf_series_norm=choose's column sets
    (fpt.feature_map.FeatureMap.norm_columns, "global" first): the ridge head fitted on each, the one kept chosen by
    leave-one-out with the penalty (a tie keeps "global"; info's ``series_norm_kept``; the other's weights are zeros),
    before any ppv or members choice."""
    from sklearn.linear_model import Ridge

    x = x.astype(np.float64)
    mean = x.mean(0) if design.standardise else np.zeros(x.shape[1])
    std = x.std(0) if design.standardise else np.ones(x.shape[1])
    std = np.where(std > 1e-12 * max(1.0, float(np.abs(mean).max(initial=0.0))), std, 1.0)  # constants stay put
    z = (x - mean) / std
    if design.head == "logistic":
        if not classify:
            raise ConfigError("cf_head=logistic is a classifier; a regression's head is ridge (cf_head=ridge)")
        w, b, info = _logistic(z, y, classes, design, seed)
    elif fixed is not None:
        kept = (norm_columns[fixed["series_norm_kept"]] if norm_columns is not None and "series_norm_kept" in fixed
                else without_ppv if fixed.get("ppv_kept") is False
                else _member_columns(member_widths, z.shape[1], inputs, fixed.get("members_kept")))
        zk = z if kept is None else z[:, kept]
        scale = fixed.get("input_scale", 1.0) if 0 < inputs < zk.shape[1] else 1.0
        if scale != 1.0:
            zk[:, -inputs:] *= scale
        ridge = Ridge(alpha=fixed["alpha"], solver="cholesky").fit(zk, _ridge_targets(y, classify, classes))
        w, b = _widen(np.atleast_2d(ridge.coef_).copy(), scale, inputs, kept, z.shape[1]), np.atleast_1d(ridge.intercept_)
        info = {"head": "ridge", "alpha": float(fixed["alpha"]), "cv": "fixed",
                **{k: fixed[k] for k in ("ppv_kept", "series_norm_kept") if k in fixed}}
    else:
        targets = _ridge_targets(y, classify, classes)
        # the column sets tried (members kept, or without ppv), each (members kept, ppv kept, columns; None: all)
        choices: list[tuple[int | None, bool | None, np.ndarray | None]] = [(None, None, None)]
        if norm_columns is not None:  # the series normalisations: always chosen (the other's reads are wasted)
            choices = [(None, None, cols) for cols in norm_columns.values()]
        elif without_ppv is not None and design.ppv_choice and len(z) <= design.choose_up_to:
            choices = [(None, False, without_ppv), (None, True, None)]
        elif member_widths and design.member_choices and len(z) <= design.choose_up_to:
            choices += [(m, None, _member_columns(member_widths, z.shape[1], inputs, m))
                        for m in design.member_choices if 0 < m < len(member_widths)]
        if (norm_columns is not None or len(choices) == 1) and design.search_rows is not None \
                and len(z) > design.search_rows:
            w, b, info = _fit_searched_on_rows(z, y, targets, classify, classes, design, seed, inputs, norm_columns)
        else:
            tried = []
            for m, ppv, kept in choices:
                # the squared leave-one-out error chooses, as RidgeClassifierCV's default does (its near-ties
                # broken toward the larger penalty: design.penalty_rule, fpt.ridge.pick)
                scale, ridge = ridge_loo_scaled(z if kept is None else z[:, kept], targets, design.alphas,
                                                design.input_scales, inputs, design.penalty_rule, design.loo_guard)
                tried.append((m, ppv, kept, scale, ridge))
            best = max(range(len(tried)), key=lambda i: (tried[i][4].score, -i))  # the first of equals
            m, ppv, kept, scale, ridge = tried[best]
            w, b = _widen(ridge.coef.copy(), scale, inputs, kept, z.shape[1]), ridge.intercept
            info = _loo_record(ridge, scale, y, classify, classes, design, inputs)
            if norm_columns is not None:
                names = list(norm_columns)
                info.update(series_norm_kept=names[best],
                            series_norm_loo={n: t[4].score for n, t in zip(names, tried, strict=True)})
            elif ppv is not None:
                info.update(ppv_kept=ppv, ppv_loo={("with" if t[1] else "without"): t[4].score for t in tried})
            elif len(tried) > 1:
                info.update(members_kept=m or len(member_widths),
                            members_loo={str(t[0] or len(member_widths)): t[4].score for t in tried})
    w = w / std[None, :]
    return w, b - w @ mean, info


def _loo_record(ridge: Any, scale: float, y: np.ndarray, classify: bool, classes: int, design: ClosedForm,
                inputs: int) -> dict[str, Any]:
    """What chose a ridge head by leave-one-out, as ``fit_head``'s info records it."""
    return {"head": "ridge", "alpha": ridge.alpha, "cv": LOO, "cv_score": _score(classify, ridge.loo, y, classes),
            "alphas": list(design.alphas), **({"input_scale": scale} if inputs else {}),
            **({"penalty_rule": design.penalty_rule} if design.penalty_rule != LEAST else {})}


def _fit_searched_on_rows(z: np.ndarray, y: np.ndarray, targets: np.ndarray, classify: bool, classes: int,
                          design: ClosedForm, seed: int, inputs: int,
                          norm_columns: dict[str, np.ndarray] | None = None
                          ) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """``fit_head``'s ridge over standardised ``z`` (weights over ``z``'s columns) with its penalty and the tokens'
    scale searched by leave-one-out over ``design.search_rows`` of the examples (``subsample``: seeded, stratified),
    then fitted at them on every example, whose exact leave-one-out figure at that penalty is the estimate recorded
    (``cv_score``). ``norm_columns`` (cf_series_norm=choose): each column set searched on the same subsample, the
    one with the lower leave-one-out error there kept (a tie: the first, "global") and fitted on every example."""
    rows = subsample(y, classify, design.search_rows, seed)
    sets: dict[str | None, np.ndarray | None] = dict(norm_columns) if norm_columns is not None else {None: None}
    tried = {name: ridge_loo_scaled(z[rows] if cols is None else z[rows][:, cols], targets[rows], design.alphas,
                                    design.input_scales, inputs, design.penalty_rule, design.loo_guard)
             for name, cols in sets.items()}
    names = list(tried)
    name = max(names, key=lambda n: (tried[n][1].score, -names.index(n)))
    scale, searched = tried[name]
    kept = sets[name]
    zk = z if kept is None else z[:, kept]
    if 0 < inputs < zk.shape[1] and scale != 1.0:
        zk = zk.copy()
        zk[:, -inputs:] *= scale
    ridge = ridge_loo_at(zk, targets, searched.alpha)
    w, b = _widen(ridge.coef.copy(), scale, inputs, kept, z.shape[1]), ridge.intercept
    info = {**_loo_record(ridge, scale, y, classify, classes, design, inputs),
            "search": {"examples": len(rows), "of": len(z), "seed": seed,
                       "cv_score": _score(classify, searched.loo, y[rows], classes)}}
    if norm_columns is not None:
        info.update(series_norm_kept=name, series_norm_loo={n: t[1].score for n, t in tried.items()})
    return w, b, info


def _member_columns(widths: Sequence[int] | None, features: int, inputs: int, members: int | None) -> np.ndarray | None:
    """The columns of the first ``members`` members and the tokens (None: every column)."""
    if not widths or members is None or members >= len(widths):
        return None
    return np.concatenate([np.arange(sum(widths[:members])), np.arange(features - inputs, features)])


def _widen(w: np.ndarray, scale: float, inputs: int, kept: np.ndarray | None, features: int) -> np.ndarray:
    """Weights over the fitted columns (the tokens' scaled by ``scale``) as weights over every standardised column."""
    if scale != 1.0:  # folded: the scaled columns' weights act on the standardised columns
        w[:, w.shape[1] - inputs:] *= scale
    if kept is None:
        return w
    full = np.zeros((len(w), features))
    full[:, kept] = w
    return full


def _ridge_targets(y: np.ndarray, classify: bool, classes: int) -> np.ndarray:
    return _onehot(y, classes) if classify else y.astype(np.float64)


def _logistic(z: np.ndarray, y: np.ndarray, classes: int, design: ClosedForm,
              seed: int) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Per target, LogisticRegressionCV over ``design.cs`` with stratified k-fold; its logits as head rows."""
    from sklearn.linear_model import LogisticRegressionCV
    from sklearn.model_selection import StratifiedKFold

    w = np.zeros((y.shape[1] * classes, z.shape[1]))
    b = np.full(y.shape[1] * classes, MISSING_CLASS_BIAS)
    chosen, scores = [], []
    for j in range(y.shape[1]):
        labels = y[:, j].astype(np.int64)
        k = _fold_count(labels, True, design.folds)
        if np.unique(labels, return_counts=True)[1].max() < k:
            raise ConfigError(f"config field 'cf_head'='logistic' chooses its penalty by {k}-fold cross-validation, "
                              "but no class has two training examples; use cf_head=ridge (its penalty by "
                              "leave-one-out)")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # lbfgs' convergence notes on separable data: the fit is still used
            model = LogisticRegressionCV(Cs=list(design.cs), cv=StratifiedKFold(k, shuffle=True, random_state=seed),
                                         max_iter=2000, scoring="accuracy").fit(z, labels)
        rows = j * classes + model.classes_
        if len(model.classes_) == 2:  # one logit, for the second class: logits (0, z)
            w[rows[1]], b[rows[1]] = model.coef_[0], model.intercept_[0]
            b[rows[0]] = 0.0
        else:
            w[rows], b[rows] = model.coef_, model.intercept_
        folds = model.scores_  # {class: (folds, Cs)}; an array in scikit-learn's simplified attributes
        fold_means = np.mean(next(iter(folds.values())) if isinstance(folds, dict) else folds, axis=0)
        fold_means = fold_means.reshape(-1)  # (Cs,) mean fold accuracy
        chosen.append(float(model.C_[0]))
        scores.append(float(fold_means.max()))
    return w, b, {"head": "logistic", "C": chosen[0] if len(chosen) == 1 else chosen, "cv": f"{k}-fold",
                  "cv_score": float(np.mean(scores)), "cs": list(design.cs)}


def _fold_count(labels: np.ndarray | None, classify: bool, wanted: int) -> int:
    """``wanted`` folds, fewer where the rarest class has fewer examples (at least 2)."""
    if not classify or labels is None:
        return max(2, wanted)
    return max(2, min(wanted, int(np.unique(labels, return_counts=True)[1].min())))


def folds_of(y: np.ndarray, classify: bool, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train, validation) indices of k shuffled folds of the fitted examples, stratified by the first target."""
    from sklearn.model_selection import KFold, StratifiedKFold

    if classify:
        with warnings.catch_warnings():
            # k is at least 2 (_fold_count), so a class with one fitted example sits in one fold only: scikit-learn
            # warns of it on every split, where the folds are still valid and that class is simply never held out
            warnings.filterwarnings("ignore", "The least populated class", UserWarning)
            return list(StratifiedKFold(k, shuffle=True, random_state=seed).split(y, y[:, 0]))
    return list(KFold(k, shuffle=True, random_state=seed).split(y))


# From this many fitted examples on, a ridge head's fold figures reuse the penalty (and the tokens' scale) chosen by
# leave-one-out on all of them. The search costs an eigendecomposition of the F x F feature covariance (or the n x n
# Gram matrix) per fold (fpt.ridge; scikit-learn's RidgeCV took one per tokens' scale: 18 per fit of a 10,000-row
# table, minutes on a 2-core CPU), where a fixed penalty is one Cholesky solve per fold; and one number chosen on
# 2,000+ examples moves a fold's score by far less than the folds' spread. "From" and not "above": the controls'
# subsample (``CONTROLS_UP_TO`` rows) and the run's fold figures over the same rows take the fixed penalty alike
# (15 of the 17 eigendecompositions of a 10,000-row table's controls were these folds' searches).
SEARCH_PER_FOLD_BELOW = 2000
# From this many fitted examples on, a cf_series_norm=choose head's fold figures read the reading its full fit kept
# by leave-one-out (each fold still searching its penalty), instead of choosing afresh per fold: a choice between two
# column sets over 500+ examples moves a fold's score far less than the folds' spread, and choosing afresh doubled
# the folds' cost (the 1,000 x 1,000 series: 4.8 s of its fit's folds against 1.7 s, in each of the run's and its two
# controls' fits; speed/README.md, round 18's sitting).
NORM_PER_FOLD_BELOW = 500


def reuses_penalty(fitted: int) -> bool:
    """Whether a ridge head over ``fitted`` examples scores its folds at the full fit's penalty."""
    return fitted >= SEARCH_PER_FOLD_BELOW
# Above this many fitted examples the controls (fpt.baselines: the same fit on a frozen random body, and without the
# language model) are fitted on a seeded subsample of this many, stratified for classes, and the run's own fold
# figures they are compared with are taken over the same rows (``subsample_fold_scores``), so the comparison stays
# paired. The controls decide one line, "did the language model help", which 2,000 examples decide as well as
# 10,000; reading every row of a 10,000-row table through both controls' members took ~16 s each (idle), past the
# 60 s a plain ``fpt train --data`` with its controls has.
CONTROLS_UP_TO = 2000


def fold_scores(x: np.ndarray, y: np.ndarray, classify: bool, classes: int, design: ClosedForm,
                seed: int, inputs: int = 0, chosen: dict[str, Any] | None = None,
                member_widths: Sequence[int] | None = None, without_ppv: np.ndarray | None = None,
                norm_columns: dict[str, np.ndarray] | None = None) -> list[float]:
    """The head fitted on k-1 folds and scored on the k-th, for each of k folds (k: ``design.folds``, fewer where
    the rarest class is rarer): the figures two feature maps are compared on, fold by fold. Each fold searches the
    penalty afresh, except a ridge head over at least ``SEARCH_PER_FOLD_BELOW`` examples given the full fit's
    ``chosen`` penalty (``fit_head``'s info), which every fold then reuses (with more examples than features, every
    fold solved from one Gram matrix: ``_fixed_fold_scores``). ``without_ppv``, ``norm_columns``: as ``fit_head``'s,
    each fold choosing afresh (with the full fit's penalty: its normalisation too; from ``NORM_PER_FOLD_BELOW``
    examples on, ``chosen``'s normalisation, each fold searching its penalty)."""
    k = _fold_count(y[:, 0] if classify else None, classify, design.folds)
    if len(y) < 2 * k or (classify and np.unique(y[:, 0], return_counts=True)[1].max() < k):
        return []  # too few examples, or no class with one per fold (a fold of PigCVP's --choose: one per class)
    fixed = chosen if (chosen is not None and chosen.get("head") == "ridge"
                       and reuses_penalty(len(y))) else None
    folds = folds_of(y, classify, k, seed)
    if norm_columns is not None and chosen is not None and chosen.get("series_norm_kept") in norm_columns \
            and len(y) >= NORM_PER_FOLD_BELOW:
        norm_columns = {chosen["series_norm_kept"]: norm_columns[chosen["series_norm_kept"]]}
    every_column = fixed is not None and not {"members_kept", "ppv_kept", "series_norm_kept"} & set(fixed)
    if every_column and x.shape[1] < len(y) - len(y) // k:  # the primal fit, as Ridge's Cholesky solver's
        return _fixed_fold_scores(x, y, classify, classes, design, inputs, fixed, folds)
    scores = []
    for train, val in folds:
        w, b, _ = fit_head(x[train], y[train], classify, classes, design, seed, inputs, fixed=fixed,
                           member_widths=member_widths, without_ppv=without_ppv, norm_columns=norm_columns)
        scores.append(_score(classify, x[val].astype(np.float64) @ w.T + b, y[val], classes))
    return scores


def _fixed_fold_scores(x: np.ndarray, y: np.ndarray, classify: bool, classes: int, design: ClosedForm, inputs: int,
                       fixed: dict[str, Any], folds: list[tuple[np.ndarray, np.ndarray]]) -> list[float]:
    """``fold_scores`` at a fixed ridge penalty, with more examples than features: each fold's head is
    ``fit_head(fixed=...)``'s (standardised with its training part's mean and std, the tokens' columns scaled, the
    intercept unpenalised), solved from the fitted examples' Gram matrix less its held-out part's. The fold fits
    then cost one product of all the examples and one of each held-out part (about 2 N F^2), where fitting each
    fold afresh forms each training part's (k - 1 of them: 4 N F^2 at 5 folds)."""
    from scipy.linalg import solve as solve_pos

    x = x.astype(np.float64)
    f = x.shape[1]
    targets = _ridge_targets(y, classify, classes)
    centre = x.mean(0)
    xc = x - centre  # centred on every example: a fold's moments are then differences of small numbers
    gram, sums, cross, target_sums = xc.T @ xc, xc.sum(0), xc.T @ targets, targets.sum(0)
    scale = np.ones(f)
    if 0 < inputs < f:
        scale[-inputs:] = fixed.get("input_scale", 1.0)
    scores = []
    for train, val in folds:
        xv, tv, n = xc[val], targets[val], len(train)
        mean, t_mean = (sums - xv.sum(0)) / n, (target_sums - tv.sum(0)) / n  # the training part's (centred)
        g = gram - xv.T @ xv - n * np.outer(mean, mean)  # its centred sum of squares and products
        c = cross - xv.T @ tv - n * np.outer(mean, t_mean)
        std = np.sqrt(np.clip(np.diag(g), 0.0, None) / n) if design.standardise else np.ones(f)
        std = np.where(std > 1e-12 * max(1.0, float(np.abs(centre + mean).max(initial=0.0))), std, 1.0)  # as fit_head
        d = std / scale  # column j of the fitted matrix: (x_j - mean_j) / d_j
        a = g / np.outer(d, d)
        a[np.diag_indices(f)] += fixed["alpha"]
        beta = solve_pos(a, c / d[:, None], assume_a="pos", overwrite_a=True)  # (F, targets)
        scores.append(_score(classify, ((xv - mean) / d) @ beta + t_mean, y[val], classes))
    return scores


def subsample(y: np.ndarray, classify: bool, size: int, seed: int) -> np.ndarray:
    """Sorted indices of ``size`` of the examples ``y`` (N, m), drawn with ``seed``, stratified by the first target
    for classes (every class keeps its share)."""
    from sklearn.model_selection import train_test_split

    rows = np.arange(len(y))
    if size >= len(y):
        return rows
    kept, _ = train_test_split(rows, train_size=size, random_state=seed, stratify=y[:, 0] if classify else None)
    return np.sort(kept)


def _fitted(exp: Experiment) -> tuple[Batch, Batch | None]:
    """The batches a plain closed-form run fits (``solve``): train, and validation unless the run holds it out."""
    data = exp.data
    with_val = exp.config.folds is None and not exp.config.train_on_val
    return data.train.data, data.eval_sets[data.val] if with_val else None


def fitted_targets(exp: Experiment) -> np.ndarray:
    """The targets (N, m) of the examples ``solve`` fits, in its order (train, then validation)."""
    train, val = _fitted(exp)
    return np.concatenate([_targets(train.y)] + ([] if val is None else [_targets(val.y)]))


def subsampled_data(exp: Experiment, rows: np.ndarray) -> Any:
    """``exp``'s task data with only ``rows`` of the fitted examples (``fitted_targets``' order) in train and
    validation; test and any further held-out set whole. A closed-form fit of it fits exactly those rows, in order."""
    train, val = _fitted(exp)
    data = exp.data

    def take(batch: Batch, idx: np.ndarray) -> Batch:
        at = torch.from_numpy(idx)
        return Batch(batch.x[at], batch.y[at], None if batch.lengths is None else batch.lengths[at])

    eval_sets = dict(data.eval_sets)
    if val is not None:
        eval_sets[data.val] = take(val, rows[rows >= len(train)] - len(train))
    kept = take(train, rows[rows < len(train)])
    return dataclasses.replace(data, train=dataclasses.replace(data.train, data=kept), eval_sets=eval_sets)


def subsample_fold_scores(exp: Experiment, rows: np.ndarray) -> list[float]:
    """The fold figures ``solve`` would record for a fit of ``rows`` of ``exp``'s fitted examples alone (the folds,
    penalty search and seed of a control fitted on ``subsampled_data``), over the run's features, already read."""
    design, data, model = options(exp.config), exp.data, exp.model
    train, val = _fitted(exp)
    feats = [cached_features(exp, train, data.train.transform)] + ([] if val is None else [cached_features(exp, val)])
    x, y = np.concatenate(feats)[rows], fitted_targets(exp)[rows]
    classify = data.objective.name == "classification"
    widths, norms = model.read_widths(), model.norm_columns()
    chosen = None
    if reuses_penalty(len(rows)):  # as solve: the folds then reuse the full fit's penalty
        chosen = fit_head(x, y, classify, data.spec.num_classes, design, exp.config.split_seed, model.input_features,
                          member_widths=widths, norm_columns=norms)[2]
    return fold_scores(x, y, classify, data.spec.num_classes, design, exp.config.split_seed, model.input_features,
                       chosen=chosen, member_widths=widths, norm_columns=norms)


def solve(exp: Experiment, hold_out_val: bool | None = None, folds: int | None = None,
          progress: bool = False) -> dict[str, Any]:
    """Fit ``exp``'s head in closed form (the model is left holding it) and score every held-out set. ``folds``: k of
    the fold figures (``fold_scores``; None: the design's up to ``CONTROLS_UP_TO`` fitted examples and none above,
    0: none). ``progress``: a bar per set of the features read, on a terminal.

    Returns {"eval": {SET_METRIC: value, ...} as fpt.train.evaluate gives them (the validation figure: the
    cross-validation estimate when validation was fitted), "train": the fitted examples' own figures,
    "closed_form": what was fitted and how (features, penalty, cross-validation, fold scores, seconds)}."""
    if not isinstance(exp.data.train, TensorSource):
        raise ConfigError(f"fit=closed-form reads a finite training set once; task {exp.config.task!r} generates its "
                          "training examples afresh: use fit=gradient")
    started = time.perf_counter()
    design, data, model = options(exp.config), exp.data, exp.model
    classify = data.objective.name == "classification"
    classes = data.spec.num_classes
    train = data.train.data
    fit_thresholds(exp, train, exp.config.split_seed, data.train.transform)  # ppv pooling: before any feature is read
    # the bar names the body read (a control's random body or no-lm block reads the same sets again)
    body = Path(str(exp.config.body)).name  # a body given as a folder: its name
    bar = (lambda name: f"features {body}/{exp.config.init} {name}") if progress else (lambda name: None)
    feats = {"train": cached_features(exp, train, data.train.transform, bar("train"))}
    for name, batch in data.eval_sets.items():
        feats[name] = feats["train"] if batch is train else cached_features(exp, batch, progress=bar(name))
    features_seconds = time.perf_counter() - started
    # a fold run keeps its fold held out; so does a comparison by validation (``hold_out_val``)
    with_val = exp.config.folds is None and not exp.config.train_on_val if hold_out_val is None else not hold_out_val
    x = np.concatenate([feats["train"], feats[data.val]]) if with_val else feats["train"]
    y = np.concatenate([_targets(train.y), _targets(data.eval_sets[data.val].y)]) if with_val else _targets(train.y)
    started_head = time.perf_counter()
    widths, norms = model.read_widths(), model.norm_columns()
    without_ppv = model.columns_without("ppv") if model.ppv_quantiles else None
    w, b, info = fit_head(x, y, classify, classes, design, exp.config.split_seed, model.input_features,
                          member_widths=widths, without_ppv=without_ppv, norm_columns=norms)
    with torch.no_grad():
        model.head.weight.copy_(torch.from_numpy(w).float())
        model.head.bias.copy_(torch.from_numpy(b).float())
    head_seconds = time.perf_counter() - started_head
    started_folds = time.perf_counter()
    # Above CONTROLS_UP_TO the line on the language model compares fold figures over the controls' subsample
    # (fpt.baselines), and the run's own estimate is its head's cross-validation figure: k more heads over every
    # fitted example (10 of a 10,000-row table's 73 s, idle) would be recorded and read by nothing.
    skipped = folds is None and len(y) > CONTROLS_UP_TO
    if skipped:
        folds = 0
    if folds is not None and folds > 0:
        design = dataclasses.replace(design, folds=folds)
    folds = [] if folds == 0 else fold_scores(x, y, classify, classes, design, exp.config.split_seed,
                                              model.input_features, chosen=info, member_widths=widths,
                                              without_ppv=without_ppv, norm_columns=norms)
    folds_seconds = time.perf_counter() - started_folds
    out: dict[str, Any] = {}
    for name, batch in data.eval_sets.items():
        metrics = _metrics(exp, feats[name], batch.y)
        if with_val and name == data.val:  # fitted: its own figures would be training figures
            metrics = {exp.data.objective.metric: info["cv_score"], "loss": None}
        out.update({f"{name}_{k}": v for k, v in metrics.items()})
    fitted = _metrics(exp, x, torch.from_numpy(y))
    examples_read = sum(len(b) for b in {id(b): b for b in [train, *data.eval_sets.values()]}.values())
    record = {**info, "members": design.members, "blocks": list(model.blocks), "poolings": list(model.poolings),
              "standardise": design.standardise, "features": int(model.num_features), "fitted_examples": len(y),
              "fitted_sets": ["train", data.val] if with_val else ["train"],
              "val_figure": info["cv"] if with_val else data.val,
              "fold_scores": folds, "fold_metric": data.objective.metric,
              **({"fold_note": f"no fold figures above {CONTROLS_UP_TO} fitted examples: the estimate is "
                               f"{info['cv']}, the language model's line reads the controls' subsample"}
                 if skipped else {}),
              "fold_penalty": ("the full fit's" if info["head"] == "ridge" and reuses_penalty(len(y))
                               else "searched per fold"),
              "examples_read": examples_read,
              # the merged windows' hop and what every member read of every split (fpt.feature_map.resolve chose a
              # series' members within ClosedForm.read_budget of these): why one data set gets more members than another
              "hop": design.hop, "member_tokens": examples_read * int(sum(model.positions[e] for e, _ in model.reads)),
              "series_norm": design.series_norm,
              "seconds": {"features": round(features_seconds, 3), "head": round(head_seconds, 3),
                          "folds": round(folds_seconds, 3)}}
    return {"eval": out, "train": fitted, "closed_form": record}


def _metrics(exp: Experiment, x: np.ndarray, y: torch.Tensor) -> dict[str, float]:
    """The objective's metrics and loss of the fitted head over features ``x`` (as fpt.train.evaluate reports)."""
    objective = exp.data.objective
    with torch.no_grad():
        logits = exp.model(torch.from_numpy(x)[:, None].float(), None, start=FEATURES)  # (N, m, C): the head alone
    y = y.reshape(len(y), -1)
    loss = float(objective.loss(logits, y))
    return {**objective.summarise(objective.tally(logits, y)), "loss": loss if math.isfinite(loss) else None}


__all__ = ["CONTROLS_UP_TO", "LOO", "SEARCH_PER_FOLD_BELOW", "cached_features", "fit_head", "fitted_targets",
           "fold_scores", "folds_of", "read_features", "reuses_penalty", "solve", "subsample", "subsample_fold_scores",
           "subsampled_data"]

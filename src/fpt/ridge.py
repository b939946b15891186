"""Ridge regression with its penalty chosen by exact leave-one-out, every penalty from one eigendecomposition.

The mathematics is scikit-learn's ``RidgeCV`` (generalised cross-validation with an unpenalised intercept: the data
centred, the hat matrix H = 11'/n + Zc (Zc'Zc + aI)^-1 Zc', each example's leave-one-out residual
(y - yhat) / (1 - H_ii)), and the results are the same (tests/test_ridge.py compares them). What differs is the cost
of the hat matrix's diagonal: scikit-learn's dense path forms it with an n x F x F product per penalty, 8-14 s on a
10,000-row table of 1,940 features on a 2-core CPU, where over the eigenvectors it is one n x F pass per penalty:
the Gram matrix Zc Zc' (n x n) when examples are fewer than features, else the covariance Zc'Zc (F x F), is
decomposed once, and every penalty reads the same eigenvectors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

LEAST, ONE_SE, TIES = "least", "one-se", "ties"  # how a penalty is picked from its leave-one-out errors (``pick``)
TIE = 1e-3  # rule "ties": mean errors this close (relative) to the least count as equal to it
# ``guard``: a fit whose least 1 - H_ii (the divisor of its leave-one-out residuals) is below this is not picked, its
# leave-one-out figure being rounding (half the digits of float64); BasicMotions, the tokens x100 at penalty 1e-3:
# 1 - H_ii computed at -3.4e-08, its leave-one-out error 0.004 beside 0.94 at 1e-2
RELIABLE = float(np.sqrt(np.finfo(np.float64).eps))


@dataclass
class RidgeLOO:
    """The fit at the chosen penalty: ``coef`` (targets, F), ``intercept`` (targets,), ``loo`` (n, targets): each
    example's prediction by the model fitted without it, ``score``: the negated mean squared leave-one-out error
    at ``alpha``, the penalty the rule picked from ``alphas`` (``pick``)."""

    alpha: float
    coef: np.ndarray
    intercept: np.ndarray
    loo: np.ndarray
    score: float


def ridge_loo(z: np.ndarray, targets: np.ndarray, alphas: Sequence[float], rule: str = LEAST,
              guard: bool = False) -> RidgeLOO:
    """Ridge of ``targets`` (n, t) on ``z`` (n, F) at each of ``alphas``, the one ``rule`` picks by leave-one-out
    squared error (``pick``; ``guard``: fits whose leave-one-out figure is rounding left out, ``RELIABLE``)."""
    y = np.asarray(targets, dtype=np.float64).reshape(len(z), -1)
    loo_at, fit_at = _solver(z, y)
    tried = [(a, *loo_at(a)) for a in alphas]
    a, loo, _ = tried[pick([a for a, _, _ in tried], [_graded(y, loo, room, guard) for _, loo, room in tried], rule)]
    return RidgeLOO(float(a), *fit_at(a), loo, -float(np.mean(_errors(y, loo))))


def _solver(z: np.ndarray, y: np.ndarray) -> tuple[Callable[[float], tuple[np.ndarray, float]],
                                                     Callable[[float], tuple[np.ndarray, np.ndarray]]]:
    """One decomposition of ``z`` (n, F) for targets ``y`` (n, t); from it, at any penalty a, the leave-one-out
    outputs (n, t) with the least 1 - H_ii, and the fit (coef (t, F), intercept (t,))."""
    z = np.asarray(z, dtype=np.float64)
    n = len(z)
    z_mean, y_mean = z.mean(0), y.mean(0)
    zc, yc = z - z_mean, y - y_mean
    if n <= z.shape[1]:  # the Gram matrix: H - 11'/n = Q diag(s / (s + a)) Q'
        s, q = np.linalg.eigh(zc @ zc.T)
        s = np.clip(s, 0.0, None)
        qy, q2 = q.T @ yc, q * q  # (n, t), (n, n)

        def fitted_diag(a: float) -> tuple[np.ndarray, np.ndarray]:
            return q @ ((s / (s + a))[:, None] * qy), q2 @ (s / (s + a))

        def coef_at(a: float) -> np.ndarray:
            return (zc.T @ (q @ (qy / (s + a)[:, None]))).T
    else:  # the covariance: H - 11'/n = U diag(1 / (l + a)) U', U = Zc V
        lam, v = np.linalg.eigh(zc.T @ zc)
        lam = np.clip(lam, 0.0, None)
        u = zc @ v  # (n, F)
        uy, u2 = u.T @ yc, u * u  # (F, t), (n, F)

        def fitted_diag(a: float) -> tuple[np.ndarray, np.ndarray]:
            return u @ ((1.0 / (lam + a))[:, None] * uy), u2 @ (1.0 / (lam + a))

        def coef_at(a: float) -> np.ndarray:
            return (v @ (uy / (lam + a)[:, None])).T

    def loo_at(a: float) -> tuple[np.ndarray, float]:
        fitted, diag = fitted_diag(a)
        room = 1.0 - diag - 1.0 / n
        return y - (yc - fitted) / room[:, None], float(room.min())

    def fit_at(a: float) -> tuple[np.ndarray, np.ndarray]:
        coef = coef_at(a)
        return coef, y_mean - coef @ z_mean

    return loo_at, fit_at


def ridge_loo_at(z: np.ndarray, targets: np.ndarray, alpha: float) -> RidgeLOO:
    """``ridge_loo`` at one penalty, no decomposition: one Cholesky factor of the covariance (more examples than
    features) or of the Gram matrix (fewer), and the hat matrix's diagonal from it (one triangular solve). The same
    fit and leave-one-out outputs as ``ridge_loo(z, targets, [alpha])`` (tests/test_ridge.py), at a third of its cost
    on a 8,000 x 3,880 matrix, where the eigendecomposition a search over penalties shares is most of the time."""
    from scipy.linalg import cho_factor, cho_solve, solve_triangular

    z = np.asarray(z, dtype=np.float64)
    y = np.asarray(targets, dtype=np.float64).reshape(len(z), -1)
    n, f = z.shape
    z_mean, y_mean = z.mean(0), y.mean(0)
    zc, yc = z - z_mean, y - y_mean
    if n > f:  # H - 11'/n = Zc (Zc'Zc + aI)^-1 Zc' = W'W, W = L^-1 Zc'
        g = zc.T @ zc
        g[np.diag_indices(f)] += alpha
        factor = cho_factor(g, lower=True, overwrite_a=True)
        coef = cho_solve(factor, zc.T @ yc).T  # (t, F)
        w = solve_triangular(factor[0], zc.T, lower=True, check_finite=False)  # (F, n)
        fitted, diag = zc @ coef.T, np.einsum("ij,ij->j", w, w)
    else:  # H - 11'/n = K (K + aI)^-1 = I - a (K + aI)^-1, K = Zc Zc'
        k = zc @ zc.T
        k[np.diag_indices(n)] += alpha
        factor = cho_factor(k, lower=True, overwrite_a=True)
        dual = cho_solve(factor, yc)  # (n, t): (K + aI)^-1 yc
        inv = solve_triangular(factor[0], np.eye(n), lower=True, check_finite=False)  # L^-1
        coef = (zc.T @ dual).T
        fitted, diag = yc - alpha * dual, 1.0 - alpha * np.einsum("ij,ij->j", inv, inv)
    loo = y - (yc - fitted) / (1.0 - diag - 1.0 / n)[:, None]
    return RidgeLOO(float(alpha), coef, y_mean - coef @ z_mean, loo, -float(np.mean(_errors(y, loo))))


def _errors(y: np.ndarray, loo: np.ndarray) -> np.ndarray:
    """Each example's leave-one-out squared error, the mean over targets (n,)."""
    return np.mean((y - loo) ** 2, axis=1)


def _graded(y: np.ndarray, loo: np.ndarray, room: float, guard: bool) -> np.ndarray:
    """``_errors``, or infinite errors (never picked while another fit is not) for a fit ``guard`` leaves out."""
    return np.full(len(y), np.inf) if guard and not room >= RELIABLE else _errors(y, loo)


def pick(alphas: Sequence[float], errors: Sequence[np.ndarray], rule: str = LEAST,
         scales: Sequence[float] | None = None) -> int:
    """The index of the fit ``rule`` picks from fits at penalties ``alphas`` with per-example leave-one-out squared
    errors ``errors`` (each (n,)). ``least``: the least mean error, the first of equals (scikit-learn's RidgeCV).
    ``one-se``: the largest penalty whose mean error is within one standard error of the least's (the least's
    per-example errors' standard deviation / sqrt(n)), the lower mean error among equal penalties: the one-standard-
    error habit of cross-validation (Hastie, Tibshirani and Friedman, section 7.10). With fewer examples than
    features every penalty far below the Gram matrix's smallest nonzero eigenvalue gives the same interpolating
    fit, and the least error among them is a difference in the fifth digit (BasicMotions: 0.07582 at 1e-3 against
    0.07594 at 10, eigenvalues from 185); one standard error is what the leave-one-out estimate can tell apart."""
    means = [float(np.mean(e)) for e in errors]
    best = int(np.argmin(means))  # the first of equals
    if rule == LEAST:
        return best
    if rule not in (ONE_SE, TIES):
        raise ValueError(f"penalty rule {rule!r}: use {LEAST!r}, {TIES!r} or {ONE_SE!r}")
    e = errors[best]
    if rule == TIES:
        bound = means[best] * (1.0 + TIE)
    else:
        bound = means[best] + (float(np.std(e, ddof=1)) / np.sqrt(len(e)) if len(e) > 1 else 0.0)
    within = [i for i, m in enumerate(means) if m <= bound]
    # the most penalised: the largest penalty, then the smallest scale of the scaled columns (``scales``, one per
    # fit: a smaller scale penalises them more), then the lower mean error
    return max(within, key=lambda i: (alphas[i], -(scales[i] if scales is not None else 1.0), -means[i], -i))


# Above this many examples (and fewer than features), ``ridge_loo_scaled`` decomposes the other columns' Gram matrix
# once for every scale (``_scaled_gram``) instead of the whole scaled matrix's once per scale: 3 eigendecompositions
# of 2,000 x 2,000 become 1 for each control of a 10,000-row table (its head and each searched fold). The same fits in
# exact arithmetic; at and below it (every bundled UCR/UEA set) the per-scale path stays, so their figures are the
# same to the bit, the guard's rounding cases included.
SHARED_GRAM_ABOVE = 1000


def _scaled_gram(z: np.ndarray, y: np.ndarray, alphas: Sequence[float], scales: Sequence[float], last: int,
                 rule: str, guard: bool) -> tuple[float, RidgeLOO]:
    """``ridge_loo_scaled`` with fewer examples than features, the other columns' Gram matrix decomposed once.

    With B the other columns and W = scale T the scaled ones (both centred) and B B' = Q diag(s) Q', the ridge of
    B alone has hat matrix P = Q diag(s / (s + a)) Q'; with W beside it (the block inverse, as the covariance
    path's Schur complement) the hat matrix is P + R S^-1 R', R = (I - P) W = Q diag(a / (s + a)) Q'W and
    S = aI + W'(I - P)W (``last`` x ``last``), and W's coefficients are S^-1 R'y. No scale changes Q, so a scale
    costs ``last``-wide products, and a penalty n x n x ``last`` of them."""
    f = z.shape[1]
    n = len(z)
    z_mean, y_mean = z.mean(0), y.mean(0)
    zc, yc = z - z_mean, y - y_mean
    b, t = zc[:, :f - last], zc[:, f - last:]
    s, q = np.linalg.eigh(b @ b.T)
    s = np.clip(s, 0.0, None)
    qy, qt, q2 = q.T @ yc, q.T @ t, q * q  # (n, t), (n, last), (n, n)

    def products(a: float) -> tuple[np.ndarray, ...]:
        """What no scale changes at penalty ``a``: B's fit and hat diagonal, (I - P)T, T'(I - P)T, T'(I - P)y."""
        keep = a / (s + a)  # (I - P) in Q's basis
        kept_t = keep[:, None] * qt
        return (q @ ((s / (s + a))[:, None] * qy), q2 @ (s / (s + a)), q @ kept_t, qt.T @ kept_t,
                kept_t.T @ qy)

    def fit_at(scale: float, a: float, at: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray, float]:
        """W's coefficients (last, t), the leave-one-out outputs (n, t) and the least 1 - H_ii at (scale, a)."""
        fitted_b, diag_b, rest, g, ty = at
        schur = a * np.eye(last) + scale * scale * g
        c2 = np.linalg.solve(schur, scale * ty)
        r = rest * scale  # (n, last): (I - P) W
        fitted = fitted_b + r @ c2
        diag = diag_b + np.einsum("ij,ij->i", r @ np.linalg.inv(schur), r) + 1.0 / n
        return c2, y - (yc - fitted) / (1.0 - diag)[:, None], float((1.0 - diag).min())

    scale, a, loo, c2 = _search_scaled(y, alphas, scales, products, fit_at, rule, guard)
    c1 = b.T @ (q @ ((qy - scale * (qt @ c2)) / (s + a)[:, None]))  # B'(BB' + aI)^-1 (y - W c2)
    coef = np.concatenate([c1, c2]).T  # (t, F) over the scaled matrix's columns
    scaled_mean = np.concatenate([z_mean[:f - last], z_mean[f - last:] * scale])
    return scale, RidgeLOO(float(a), coef, y_mean - coef @ scaled_mean, loo, -float(np.mean(_errors(y, loo))))


def _search_scaled(y: np.ndarray, alphas: Sequence[float], scales: Sequence[float], products: Callable[[float], Any],
                   fit_at: Callable[[float, float, Any], tuple[np.ndarray, np.ndarray, float]], rule: str, guard: bool
                   ) -> tuple[float, float, np.ndarray, np.ndarray]:
    """The (scale, penalty) ``rule`` picks by leave-one-out, ``products(a)`` computed once per penalty and shared by
    every scale; returns the scale, the penalty, its leave-one-out outputs and the scaled columns' coefficients."""
    found = {}
    for a in alphas:
        at = products(a)
        found.update({(scale, a): fit_at(scale, a, at)[1:] for scale in scales})
    tried = [(scale, a, *found[(scale, a)]) for scale in scales for a in alphas]  # pick's order: scale, then penalty
    scale, a, loo, _ = tried[pick([t[1] for t in tried], [_graded(y, t[2], t[3], guard) for t in tried], rule,
                                  [t[0] for t in tried])]
    return scale, a, loo, fit_at(scale, a, products(a))[0]


def ridge_loo_scaled(z: np.ndarray, targets: np.ndarray, alphas: Sequence[float], scales: Sequence[float],
                     last: int, rule: str = LEAST, guard: bool = False) -> tuple[float, RidgeLOO]:
    """``ridge_loo`` with the ``last`` columns of ``z`` multiplied by each of ``scales`` too (a lighter penalty on
    them): the (scale, fit) ``rule`` picks from every (scale, penalty) by leave-one-out squared error (``pick``; the
    least: the first scale, then the first penalty, of equals). The coefficients are those of the scaled columns, as
    ``ridge_loo`` of the scaled matrix gives them.

    With more examples than features, the other columns' covariance is decomposed once for every scale and
    penalty: with B the other columns and W the scaled ones (both centred), U = B V over B'B's eigenvectors V and
    D = L + a, the hat matrix is U D^-1 U' + R S^-1 R' with R = W - U D^-1 U'W and S = W'W + aI - W'U D^-1 U'W,
    the Schur complement (``last`` x ``last``), so a scale costs n x F x ``last``, not an F x F decomposition,
    and R's product with U is one per penalty, shared by every scale."""
    z = np.asarray(z, dtype=np.float64)
    y = np.asarray(targets, dtype=np.float64).reshape(len(z), -1)
    n, f = z.shape
    if 0 < last < f and n <= f and n > SHARED_GRAM_ABOVE and last * len(alphas) <= n:
        return _scaled_gram(z, y, alphas, scales, last, rule, guard)
    if not 0 < last < f or n <= f:  # nothing scaled, or the Gram path: one decomposition per scale (n x n)
        tried = []
        for scale in scales if 0 < last < f else (1.0,):
            zs = z.copy()
            zs[:, f - last:] *= scale
            loo_at, fit_at = _solver(zs, y)
            tried += [(scale, a, *loo_at(a), fit_at) for a in alphas]
        scale, a, loo, _, fit_at = tried[pick([t[1] for t in tried], [_graded(y, t[2], t[3], guard) for t in tried],
                                              rule, [t[0] for t in tried])]
        return scale, RidgeLOO(float(a), *fit_at(a), loo, -float(np.mean(_errors(y, loo))))
    z_mean, y_mean = z.mean(0), y.mean(0)
    zc, yc = z - z_mean, y - y_mean
    b, t = zc[:, :f - last], zc[:, f - last:]
    lam, v = np.linalg.eigh(b.T @ b)
    lam = np.clip(lam, 0.0, None)
    u = b @ v  # (n, Fb)
    u2, uy, ut = u * u, u.T @ yc, u.T @ t  # ut: U'T (Fb, last)

    def products(a: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The n x Fb products at penalty ``a``, which no scale changes (R = scale (T - U D^-1 U'T)): most of the
        search's cost after the decomposition, so once per penalty, not once per (scale, penalty)."""
        inv = 1.0 / (lam + a)
        return t - u @ (inv[:, None] * ut), u @ (inv[:, None] * uy), u2 @ inv

    def fit_at(scale: float, a: float, at: tuple[np.ndarray, np.ndarray, np.ndarray]
               ) -> tuple[np.ndarray, np.ndarray, float]:
        """The scaled columns' coefficients (last, t), the leave-one-out outputs (n, t) and the least 1 - H_ii;
        ``at``: ``products(a)``."""
        w, g, inv = t * scale, ut * scale, 1.0 / (lam + a)  # g: U'W
        rest, fitted_b, diag_b = at
        r = rest * scale  # (n, last): W - U D^-1 U'W
        schur = w.T @ w + a * np.eye(last) - g.T @ (inv[:, None] * g)
        c2 = np.linalg.solve(schur, w.T @ yc - g.T @ (inv[:, None] * uy))  # R'yc on the right
        fitted = fitted_b + r @ c2
        diag = diag_b + np.einsum("ij,ij->i", r @ np.linalg.inv(schur), r) + 1.0 / n
        return c2, y - (yc - fitted) / (1.0 - diag)[:, None], float((1.0 - diag).min())

    scale, a, loo, c2 = _search_scaled(y, alphas, scales, products, fit_at, rule, guard)
    g, inv = ut * scale, 1.0 / (lam + a)
    c1 = inv[:, None] * (uy - g @ c2)
    coef = np.concatenate([v @ c1, c2]).T  # (t, F) over the scaled matrix's columns
    scaled_mean = np.concatenate([z_mean[:f - last], z_mean[f - last:] * scale])
    score = -float(np.mean(_errors(y, loo)))
    return scale, RidgeLOO(float(a), coef, y_mean - coef @ scaled_mean, loo, score)


__all__ = ["LEAST", "ONE_SE", "RELIABLE", "SHARED_GRAM_ABOVE", "TIE", "TIES", "RidgeLOO", "pick", "ridge_loo", "ridge_loo_at",
           "ridge_loo_scaled"]

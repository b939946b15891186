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

import numpy as np


@dataclass
class RidgeLOO:
    """The fit at the chosen penalty: ``coef`` (targets, F), ``intercept`` (targets,), ``loo`` (n, targets): each
    example's prediction by the model fitted without it, ``score``: the negated mean squared leave-one-out error
    (what chose ``alpha``: the first penalty of ``alphas`` with the highest)."""

    alpha: float
    coef: np.ndarray
    intercept: np.ndarray
    loo: np.ndarray
    score: float


def ridge_loo(z: np.ndarray, targets: np.ndarray, alphas: Sequence[float]) -> RidgeLOO:
    """Ridge of ``targets`` (n, t) on ``z`` (n, F) at each of ``alphas``, the best by leave-one-out squared error."""
    z = np.asarray(z, dtype=np.float64)
    y = np.asarray(targets, dtype=np.float64).reshape(len(z), -1)
    n = len(z)
    z_mean, y_mean = z.mean(0), y.mean(0)
    zc, yc = z - z_mean, y - y_mean
    if n <= z.shape[1]:  # the Gram matrix: H - 11'/n = Q diag(s / (s + a)) Q'
        s, q = np.linalg.eigh(zc @ zc.T)
        s = np.clip(s, 0.0, None)
        qy, q2 = q.T @ yc, q * q  # (n, t), (n, n)
        a, score, loo = _choose(alphas, y, yc, lambda a: (q @ ((s / (s + a))[:, None] * qy), q2 @ (s / (s + a))))
        coef = (zc.T @ (q @ (qy / (s + a)[:, None]))).T
    else:  # the covariance: H - 11'/n = U diag(1 / (l + a)) U', U = Zc V
        lam, v = np.linalg.eigh(zc.T @ zc)
        lam = np.clip(lam, 0.0, None)
        u = zc @ v  # (n, F)
        uy, u2 = u.T @ yc, u * u  # (F, t), (n, F)
        a, score, loo = _choose(alphas, y, yc, lambda a: (u @ ((1.0 / (lam + a))[:, None] * uy), u2 @ (1.0 / (lam + a))))
        coef = (v @ (uy / (lam + a)[:, None])).T
    return RidgeLOO(float(a), coef, y_mean - coef @ z_mean, loo, score)


def _choose(alphas: Sequence[float], y: np.ndarray, yc: np.ndarray,
            fit_at: Callable[[float], tuple[np.ndarray, np.ndarray]]) -> tuple[float, float, np.ndarray]:
    """The first penalty with the least leave-one-out squared error: (alpha, score, leave-one-out outputs).
    ``fit_at(a)``: the centred fitted values (n, t) and the hat matrix's diagonal less the intercept's 1/n."""
    best = None
    for a in alphas:
        fitted, diag = fit_at(a)
        loo = y - (yc - fitted) / (1.0 - diag - 1.0 / len(y))[:, None]
        score = -float(np.mean((y - loo) ** 2))
        if best is None or score > best[1]:
            best = (a, score, loo)
    return best


def ridge_loo_scaled(z: np.ndarray, targets: np.ndarray, alphas: Sequence[float], scales: Sequence[float],
                     last: int) -> tuple[float, RidgeLOO]:
    """``ridge_loo`` with the ``last`` columns of ``z`` multiplied by each of ``scales`` too (a lighter penalty on
    them): the best (scale, fit) by leave-one-out squared error (ties: the first scale, then the first penalty).
    The coefficients are those of the scaled columns, as ``ridge_loo`` of the scaled matrix gives them.

    With more examples than features, the other columns' covariance is decomposed once for every scale and
    penalty: with B the other columns and W the scaled ones (both centred), U = B V over B'B's eigenvectors V and
    D = L + a, the hat matrix is U D^-1 U' + R S^-1 R' with R = W - U D^-1 U'W and S = W'W + aI - W'U D^-1 U'W,
    the Schur complement (``last`` x ``last``), so a scale costs n x F x ``last``, not an F x F decomposition."""
    z = np.asarray(z, dtype=np.float64)
    y = np.asarray(targets, dtype=np.float64).reshape(len(z), -1)
    n, f = z.shape
    if not 0 < last < f or n <= f:  # nothing scaled, or the Gram path: one decomposition per scale (n x n)
        best = None
        for scale in scales if 0 < last < f else (1.0,):
            zs = z.copy()
            zs[:, f - last:] *= scale
            fit = ridge_loo(zs, y, alphas)
            if best is None or fit.score > best[1].score:
                best = (scale, fit)
        return best
    z_mean, y_mean = z.mean(0), y.mean(0)
    zc, yc = z - z_mean, y - y_mean
    b, t = zc[:, :f - last], zc[:, f - last:]
    lam, v = np.linalg.eigh(b.T @ b)
    lam = np.clip(lam, 0.0, None)
    u = b @ v  # (n, Fb)
    u2, uy, ut = u * u, u.T @ yc, u.T @ t  # ut: U'T (Fb, last)
    best = None
    for scale in scales:
        w = t * scale
        g = ut * scale  # U'W
        wy = w.T @ yc
        for a in alphas:
            inv = 1.0 / (lam + a)
            r = w - u @ (inv[:, None] * g)  # (n, last)
            schur = w.T @ w + a * np.eye(last) - g.T @ (inv[:, None] * g)
            ry = wy - g.T @ (inv[:, None] * uy)  # R'yc
            c2 = np.linalg.solve(schur, ry)  # the scaled columns' coefficients (last, t)
            fitted = u @ (inv[:, None] * uy) + r @ c2
            diag = u2 @ inv + np.einsum("ij,ij->i", r @ np.linalg.inv(schur), r) + 1.0 / n
            loo = y - (yc - fitted) / (1.0 - diag)[:, None]
            score = -float(np.mean((y - loo) ** 2))
            if best is None or score > best[2]:
                c1 = inv[:, None] * (uy - g @ c2)
                coef = np.concatenate([v @ c1, c2]).T  # (t, F) over the scaled matrix's columns
                scaled_mean = np.concatenate([z_mean[:f - last], z_mean[f - last:] * scale])
                best = (scale, a, score, loo, coef, y_mean - coef @ scaled_mean)
    scale, a, score, loo, coef, intercept = best
    return scale, RidgeLOO(float(a), coef, intercept, loo, score)


__all__ = ["RidgeLOO", "ridge_loo", "ridge_loo_scaled"]

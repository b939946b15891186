"""fpt.ridge: scikit-learn's RidgeCV (generalised cross-validation, unpenalised intercept), over one eigensystem."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import RidgeCV

from fpt.ridge import ridge_loo, ridge_loo_at

ALPHAS = tuple(10.0 ** k for k in range(-3, 7))


@pytest.mark.parametrize("shape", [(30, 200), (200, 30), (50, 50)])  # Gram path, covariance path, the boundary
@pytest.mark.parametrize("targets", [1, 3])
def test_the_same_penalty_weights_and_leave_one_out_outputs_as_scikit_learn(shape, targets):
    rng = np.random.default_rng(sum(shape) + targets)
    n, f = shape
    z = rng.normal(size=(n, f)) * rng.uniform(0.1, 10, size=f) + 3  # uneven scales, off-centre
    y = z[:, :targets] @ rng.normal(size=(targets, targets)) + rng.normal(size=(n, targets)) * 5
    ours = ridge_loo(z, y, ALPHAS)
    theirs = RidgeCV(alphas=ALPHAS, scoring="neg_mean_squared_error", store_cv_results=True).fit(z, y)
    at = ALPHAS.index(theirs.alpha_)
    assert ours.alpha == theirs.alpha_ and ours.score == pytest.approx(theirs.best_score_, rel=1e-9)
    np.testing.assert_allclose(ours.coef, np.atleast_2d(theirs.coef_), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(ours.intercept, np.atleast_1d(theirs.intercept_), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(ours.loo, theirs.cv_results_[..., at].reshape(n, -1), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("shape", [(40, 120), (120, 40)])  # the Gram matrix's factor, the covariance's
@pytest.mark.parametrize("alpha", [1e-2, 1.0, 1e3])
def test_one_penalty_by_a_cholesky_factor_is_the_searched_fit_at_it(shape, alpha):
    rng = np.random.default_rng(int(alpha * 100) + shape[0])
    n, f = shape
    z = rng.normal(size=(n, f)) * rng.uniform(0.5, 3, size=f) + 1
    y = z[:, :2] @ rng.normal(size=(2, 2)) + rng.normal(size=(n, 2))
    searched, at = ridge_loo(z, y, (alpha,)), ridge_loo_at(z, y, alpha)
    assert at.alpha == alpha and at.score == pytest.approx(searched.score, rel=1e-8)
    np.testing.assert_allclose(at.coef, searched.coef, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(at.intercept, searched.intercept, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(at.loo, searched.loo, rtol=1e-7, atol=1e-9)


def test_a_leave_one_out_output_is_the_fit_without_that_example():
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(7)
    z = rng.normal(size=(25, 6))
    y = z @ rng.normal(size=(6, 1)) + rng.normal(size=(25, 1))
    ours = ridge_loo(z, y, (0.5,))
    for i in (0, 11, 24):
        keep = np.arange(25) != i
        alone = Ridge(alpha=0.5).fit(z[keep], y[keep])
        assert ours.loo[i, 0] == pytest.approx(float(np.ravel(alone.predict(z[i:i + 1]))[0]), rel=1e-9)


# the Schur path (examples outnumber features), the Gram path, one decomposition per scale or shared by the scales
@pytest.mark.parametrize("shape,shared", [((300, 40), False), ((30, 60), False), ((60, 120), True)])
def test_scaled_columns_are_the_scaled_matrix_fitted(shape, shared, monkeypatch):
    import fpt.ridge
    from fpt.ridge import ridge_loo_scaled

    if shared:  # as above SHARED_GRAM_ABOVE examples (1,000), at a size a test fits
        monkeypatch.setattr(fpt.ridge, "SHARED_GRAM_ABOVE", 50)
        called = []
        real = fpt.ridge._scaled_gram
        monkeypatch.setattr(fpt.ridge, "_scaled_gram", lambda *a: called.append(1) or real(*a))
    rng = np.random.default_rng(11)
    n, f = shape
    z = rng.normal(size=(n, f)) * rng.uniform(0.1, 5, size=f) + 1
    y = np.where(rng.integers(0, 3, n)[:, None] == [[0, 1, 2]], 1.0, -1.0) + 0.2 * z[:, -2:-1]
    scales = (1.0, 10.0, 100.0)
    scale, fit = ridge_loo_scaled(z, y, ALPHAS, scales, last=4)
    fits = []
    for s in scales:
        zs = z.copy()
        zs[:, -4:] *= s
        fits.append((s, ridge_loo(zs, y, ALPHAS)))
    want_scale, want = max(fits, key=lambda sf: sf[1].score)  # max keeps the first of equals, as ours does
    assert scale == want_scale and fit.alpha == want.alpha and fit.score == pytest.approx(want.score, rel=1e-9)
    np.testing.assert_allclose(fit.coef, want.coef, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(fit.intercept, want.intercept, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(fit.loo, want.loo, rtol=1e-6, atol=1e-9)
    if shared:
        assert called == [1]


def test_pick_breaks_a_tie_toward_the_larger_penalty_only_when_asked():
    from fpt.ridge import LEAST, ONE_SE, TIES, pick

    alphas = (1e-3, 1e-2, 1e-1, 1.0, 10.0)
    rng = np.random.default_rng(3)
    base = rng.uniform(0.0, 0.2, size=40)  # per-example errors: mean ~0.1, standard error ~0.009
    errors = [base, base + 1e-6, base + 5e-5, base + 0.005, base + 0.05]
    assert pick(alphas, errors, LEAST) == 0  # the least, however small the margin (scikit-learn's RidgeCV)
    assert pick(alphas, errors, TIES) == 2  # within 0.1 % of the least: 5e-5 on ~0.1, not 0.005
    assert pick(alphas, errors, ONE_SE) == 3  # within one standard error: 0.005, not 0.05
    with pytest.raises(ValueError, match="penalty rule"):
        pick(alphas, errors, "smallest")
    # (scale, penalty) pairs: at one penalty the smaller scale of the scaled columns is the more penalised fit
    pairs_alpha, pairs_scale = (1e-3, 1e-3, 1e-2, 1e-2), (1.0, 100.0, 1.0, 100.0)
    tied = [base + 2e-6, base, base + 1e-6, base + 3e-6]
    assert pick(pairs_alpha, tied, LEAST, pairs_scale) == 1
    assert pick(pairs_alpha, tied, TIES, pairs_scale) == 2  # 1e-2 at scale 1, not x100


@pytest.mark.parametrize("rule", ["ties", "one-se"])
def test_with_fewer_examples_than_features_the_flat_end_of_the_curve_goes_to_the_larger_penalty(rule):
    """Penalties far below the Gram matrix's smallest nonzero eigenvalue (~250 here) give nearly the same
    interpolating fit: the least leave-one-out error among them is a difference in the fifth digit (BasicMotions in
    round 2), not a choice."""
    from fpt.ridge import TIE, ridge_loo_scaled

    rng = np.random.default_rng(5)
    z = rng.normal(size=(30, 400))
    y = z @ rng.normal(size=(400, 1))  # noise-free and dense: the interpolating end is the best, by a hair
    least = ridge_loo(z, y, ALPHAS)
    chosen = ridge_loo(z, y, ALPHAS, rule)
    assert least.alpha == 1e-2  # 306.4726 against 1e-3's 306.4730
    if rule == "ties":
        assert chosen.alpha == 1.0 and -chosen.score <= -least.score * (1 + TIE) < -ridge_loo(z, y, [10.0]).score
    else:
        assert chosen.alpha == 1e4 and chosen.score < least.score  # one standard error reaches much further
    scale, scaled = ridge_loo_scaled(z, y, ALPHAS, (1.0, 10.0), last=5, rule=rule)  # the Gram path, with scales
    direct = z.copy()
    direct[:, -5:] *= scale
    again = ridge_loo(direct, y, [scaled.alpha])
    assert scaled.alpha >= 1.0
    np.testing.assert_allclose(scaled.coef, again.coef, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(scaled.loo, again.loo, rtol=1e-6, atol=1e-9)


def test_the_guard_leaves_out_a_fit_whose_leave_one_out_figure_is_rounding():
    """Scaled columns x1e4 at a tiny penalty: 1 - H_ii is computed near or below 0 and its leave-one-out error is
    meaningless; the guard never picks such a fit while another is sound, and changes nothing where all are."""
    from fpt.ridge import RELIABLE, _solver, ridge_loo_scaled

    rng = np.random.default_rng(8)
    z = rng.normal(size=(30, 300))
    y = np.where(rng.integers(0, 3, 30)[:, None] == [[0, 1, 2]], 1.0, -1.0)
    scales = (1.0, 1e4)
    zs = z.copy()
    zs[:, -40:] *= 1e4
    assert _solver(zs, y)[0](1e-3)[1] < RELIABLE  # the case: no digits left in 1 - H_ii
    blind_scale, blind = ridge_loo_scaled(z, y, ALPHAS, scales, last=40)  # random labels "predicted" exactly:
    assert blind_scale == 1e4 and blind.alpha == 1e-3 and -blind.score < 1e-6  # the rounding fit wins unguarded
    for rule in ("least", "ties"):
        scale, fit = ridge_loo_scaled(z, y, ALPHAS, scales, last=40, rule=rule, guard=True)
        assert -fit.score > 0.5  # random labels: no better than the mean
        direct = z.copy()
        direct[:, -40:] *= scale
        assert _solver(direct, y)[0](fit.alpha)[1] >= RELIABLE
    sound = ridge_loo(z, y, ALPHAS, "ties")  # every fit sound: the guard is no change
    guarded = ridge_loo(z, y, ALPHAS, "ties", guard=True)
    assert guarded.alpha == sound.alpha and guarded.score == sound.score

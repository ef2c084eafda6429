"""ReLU deviation from Gaussian, mixture non-invariance, Gaussianity statistics and rate fits."""

import math

import numpy as np
import pytest

from riccati_verify.core.errors import InputError
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.numeric.simulate.mixture import GaussianMixture, em_two_gaussians_1d, kappa3_rate, ks_to_mixture_1d, mixture_run
from riccati_verify.numeric.simulate.rates import fit_power_law, gaussian_quantile_w2
from riccati_verify.numeric.simulate.relu import gaussianity, relu_deviation, shifted_relu
from riccati_verify.symbolic import mixture as sym
from riccati_verify.numeric.views import float_view

P = Params.from_arrays([[-0.5, 0.3], [0.2, -0.4]], [[0.2, 0], [0.1, -0.3]], [[0.5, 0], [0.2, 0.4]], [0.1, 0])
G = Gaussian.from_arrays([0.2, -0.2], [[1, 0.2], [0.2, 0.5]])


def test_inactive_relu_is_gaussian_to_sampling_accuracy_active_is_not():
    A = np.array(float_view(P)[0])
    off = relu_deviation(P, G, shifted_relu(A, 20.0), 1500, 0.4, 4, seed=1, records=2)
    on = relu_deviation(P, G, shifted_relu(A, 0.0), 1500, 0.4, 4, seed=1, records=2)
    assert off.inactive and not on.inactive
    # inactive: the block is exactly affine, Mardia's skewness test does not reject at 0.1 %
    assert off.stats[-1].mardia_b1_pvalue > 1e-3
    # and the κ3 change is within the sampling scale of κ3 itself (‖κ3‖ ≈ √(6·#dof/n))
    se = math.sqrt(6 * 4 / 1500)
    assert off.kappa3_change[-1] < 5 * se
    # active: the Gaussian null is rejected at the same 0.1 % level, and κ3 moved far more than in
    # the inactive run started from the very same tokens (common random numbers)
    assert on.stats[-1].mardia_b1_pvalue < 1e-3
    assert on.kappa3_change[-1] > 10 * off.kappa3_change[-1]


def test_shifted_relu_is_affine_where_inactive():
    A = np.array(float_view(P)[0])
    X = np.random.default_rng(0).standard_normal((100, 2))
    ff = shifted_relu(A, 50.0)
    np.testing.assert_allclose(ff(X), X @ A.T, atol=1e-12)
    assert not np.allclose(shifted_relu(A, 0.0)(X), X @ A.T)


def test_gaussianity_statistics_null_and_alternative():
    rng = np.random.default_rng(3)
    g = gaussianity(rng.standard_normal((4000, 2)))
    assert g.mardia_b1_pvalue > 1e-3 and abs(g.mardia_b2_z) < 4
    e = gaussianity(rng.exponential(size=(4000, 2)))
    assert e.mardia_b1_pvalue < 1e-10 and e.mardia_b2_z > 5
    # the whitening is affine invariant: an affine image has the same statistics
    X = rng.exponential(size=(500, 2))
    M = np.array([[2.0, 1.0], [0.0, 0.5]])
    a, b = gaussianity(X), gaussianity(X @ M.T + 3)
    assert a.mardia_b1 == pytest.approx(b.mardia_b1, rel=1e-9)
    assert a.mardia_b2 == pytest.approx(b.mardia_b2, rel=1e-9)


def test_sliced_w2_against_pot_in_one_dimension():
    ot = pytest.importorskip("ot")
    from scipy import stats
    x = np.random.default_rng(5).normal(0.3, 1.2, size=800)
    ours = gaussian_quantile_w2(x[:, None], np.array([0.0]), np.array([[1.0]]), n_dirs=1)
    # POT on a fine quantile discretisation Q of N(0,1) (uniform weights), exact 1-D OT
    M = 200_000
    q = stats.norm.ppf((np.arange(M) + 0.5) / M)
    pot = math.sqrt(ot.emd2_1d(x, q))
    # the discretisation error, from the quantile couplings: with u-cells k of width 1/M (M/800 of them
    # in each of the sample's cells, where F_x⁻¹ = c_k) and e_k = ∫_k (q_k − Φ⁻¹) = q_k/M − (φ(z_k) − φ(z_{k+1})),
    #   W2²(x, N) − W2²(x, Q) = Σ_k 2(c_k − q_k)e_k + ∫(Q⁻¹ − Φ⁻¹)²,
    #   ∫(Q⁻¹ − Φ⁻¹)² = W2²(N, Q) = 1 + mean(q²) − 2Σ_k q_k(φ(z_k) − φ(z_{k+1})),
    # and |W2 − W2′| = |W2² − W2′²|/(W2 + W2′); rounding: M ulps of the largest squared term.  Measured:
    # bound 2.06e-6, actual 2.04e-6 (a midpoint-quantile W2, which skips the cell integrals, is 7.7e-5 off)
    z = stats.norm.ppf(np.arange(M + 1) / M)
    cell = -np.diff(stats.norm.pdf(z))                 # ∫_k Φ⁻¹(u) du
    c = np.repeat(np.sort(x), M // len(x))
    disc2 = 1 + np.mean(q**2) - 2 * np.sum(q * cell)
    bound2 = 2 * np.sum(np.abs(c - q) * np.abs(q / M - cell)) + disc2
    rounding = M * np.finfo(float).eps * max(np.max(q**2), np.max(x**2))
    assert abs(ours - pot) <= bound2 / (ours + pot) + rounding, (ours, pot)
    # a wrong reference (mean shifted by 1) is far from the sample's own W2
    assert gaussian_quantile_w2(x[:, None], np.array([1.3]), np.array([[1.44]]), n_dirs=1) > 0.8


def test_rate_fit_recovers_known_slopes_and_excludes_wrong_ones():
    rng = np.random.default_rng(6)
    ns = np.array([100, 200, 400, 800, 1600])
    E = 2.0 * ns[:, None] ** -0.5 * np.exp(0.2 * rng.standard_normal((5, 20)))
    fit = fit_power_law(ns, E)
    assert fit.contains(-0.5) and not fit.contains(-0.25) and not fit.contains(-1.0)
    with pytest.raises(ValueError):
        fit_power_law([1, 2], [1.0, 0.5])


def test_mixture_symbolic_certificate_and_its_control():
    cert = sym.certify_noninvariance()
    assert cert.certified
    assert sym.single_gaussian_second_derivative() == 0
    assert sym.stein_check_on_polynomials()


def test_mixture_kappa3_rate_numeric_matches_certificate_and_single_gaussian_is_zero():
    p = Params.from_arrays([[-0.2]], [[1]], [[1]], [0])
    mix = GaussianMixture(np.array([0.5, 0.5]), np.array([[1.0], [-1.0]]), np.array([[[0.25]], [[0.25]]]))
    from scipy import integrate
    f = lambda u: -2 * np.tanh(u) / np.cosh(u) ** 2
    Ef = integrate.quad(lambda x: f(x) * np.exp(-(x - 1) ** 2 / 0.5) / math.sqrt(0.5 * math.pi), -15, 15,
                        epsabs=1e-13)[0]
    assert kappa3_rate(p, mix, 0) == pytest.approx(3 * 0.25**2 * Ef, rel=1e-8)
    # a single Gaussian is invariant: the same routine returns 0 (up to quadrature rounding)
    one = GaussianMixture(np.array([1.0]), np.array([[0.4]]), np.array([[[0.7]]]))
    assert abs(kappa3_rate(p, one, 0)) < 1e-12


def test_mixture_particles_skew_and_em_fit():
    from scipy import stats
    p = Params.from_arrays([[-0.2]], [[1]], [[1]], [0])
    mix = GaussianMixture(np.array([0.5, 0.5]), np.array([[1.0], [-1.0]]), np.array([[[0.25]], [[0.25]]]))
    r = mixture_run(p, mix, 1500, 0.5, 5, seed=3)
    for s in r.skewT:
        assert abs(s.skewness) > 5 * s.stderr
    # EM recovers a genuine two-component sample, and KS to its fit is within sampling
    x, _ = mix.sample(4000, np.random.default_rng(9))
    w, m, s = em_two_gaussians_1d(x[:, 0])
    # the MLE's means are asymptotically normal about the truth; their standard errors from the
    # outer product of the per-point scores at the fit (≈ 0.014 here: above the complete-data
    # 0.5/√2000 = 0.011, since the components overlap); z for a 1e-4 family-wise false-alarm rate over
    # the two means (Bonferroni, two-sided): 4.06; EM has converged (200 and 2000 iterations agree to the bit)
    x1 = x[:, 0]
    dens = w * np.exp(-(x1[:, None] - m) ** 2 / (2 * s)) / np.sqrt(2 * np.pi * s)
    r = dens / dens.sum(axis=1, keepdims=True)
    score = np.column_stack([r[:, 0] / w[0] - r[:, 1] / w[1], r * (x1[:, None] - m) / s,
                             r * ((x1[:, None] - m) ** 2 / (2 * s**2) - 1 / (2 * s))])
    se = np.sqrt(np.diag(np.linalg.inv(score.T @ score)))[1:3]
    tol = stats.norm.ppf(1 - 1e-4 / 4) * se[np.argsort(m)]
    assert np.all(np.abs(np.sort(m) - [-1.0, 1.0]) <= tol), (m, tol)
    assert not np.all(np.abs(np.sort(m) - [-0.9, 0.9]) <= tol)      # a 10% error in the means is seen
    assert ks_to_mixture_1d(x[:, 0], w, m, s) < 1.63 / math.sqrt(4000)


def test_mixture_validation():
    with pytest.raises(InputError):
        GaussianMixture(np.array([0.5, 0.6]), np.zeros((2, 1)), np.ones((2, 1, 1)))
    with pytest.raises(InputError):
        GaussianMixture(np.array([1.0]), np.zeros((1, 1)), -np.ones((1, 1, 1)))


def test_rate_fit_plot_written(tmp_path):
    from riccati_verify.numeric.simulate.rates import plot_rate_fit
    ns = np.array([10, 100, 1000])
    E = np.array([[1.0, 0.9], [0.31, 0.33], [0.1, 0.11]])
    out = tmp_path / "rate.png"
    plot_rate_fit(ns, E, fit_power_law(ns, E), out, title="test")
    assert out.stat().st_size > 1000

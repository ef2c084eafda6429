"""Common-noise simulator and the symbolic moment SDE."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.linalg import expm

from riccati_verify.core.errors import InputError
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.numeric.simulate.noise import moment_exponents, moment_sde_path, noise_increment, simulate_common_noise
from riccati_verify.symbolic import noise as sym
from riccati_verify.symbolic.moments import _is_zero_matrix
from riccati_verify.numeric.views import float_view

A = np.diag([0.3, -0.2])
P_OFF = Params.from_arrays(A.tolist(), [[0.4, 0.0], [0.1, -0.2]], [[0, 0], [0, 0]], [0.1, 0.0])
G0 = Gaussian.from_arrays([0.2, -0.1], [[1.0, 0.3], [0.3, 0.5]])


def test_symbolic_moment_sde_and_rejection_of_a_wrong_form():
    assert sym.check_moment_sde(1) and sym.check_moment_sde(2)
    assert sym.pathwise_solution_identity(2) and sym.check_exponents()
    d = sym.moment_sde(2)
    wrong = d.J * d.S + d.S * d.J.T            # forgets the Itô correction σ²Σ
    assert not _is_zero_matrix(d.drift - wrong)


def test_energy_decay_case_analysis():
    e = sym.energy_decay_senses(Fraction(1, 5), Fraction(1))
    assert e.pathwise_decays and not e.expected_energy_decays and not e.expected_norm_decays
    assert e.p_critical == Fraction(3, 5) and e.expected_energy_rate == Fraction(7, 5)
    e2 = sym.energy_decay_senses(Fraction(-1), Fraction(1))
    assert e2.expected_energy_decays and e2.p_critical == 3
    e3 = sym.energy_decay_senses(Fraction(1), Fraction(1))       # σ² < 2λ: nothing decays
    assert not e3.pathwise_decays and e3.p_critical is None
    assert sym.energy_decay_senses(Fraction(-1), Fraction(0)).all_p


@pytest.mark.parametrize("calculus,shift", [("ito", -0.5), ("stratonovich", 0.0)])
def test_closed_form_energy_on_the_same_path(calculus, shift):
    # V = 0: centred tokens solve dy = Ay dt + σy dW exactly, so
    # Σ^N(T) = e^{2σW_T + 2·shift·σ²T} e^{AT} Σ^N(0) e^{AᵀT}, shift = −1/2 (Itô), 0 (Stratonovich)
    T, sigma = 1.0, 0.8
    errs = np.zeros(2)
    for path in range(8):
        fine = np.random.default_rng([4, path]).standard_normal(400) * math.sqrt(T / 400)
        for k, n in enumerate((50, 400)):
            r = simulate_common_noise(P_OFF, G0, 20, T, n, sigma=sigma, seed=1, calculus=calculus,
                                      increments=fine.reshape(n, -1).sum(1))
            factor = math.exp(2 * sigma * r.W[-1] + 2 * shift * sigma**2 * T)
            exact = factor * expm(A * T) @ r.covs[0] @ expm(A.T * T)
            errs[k] += np.abs(r.covs[-1] - exact).max() / np.abs(exact).max() / 8
            # the moment SDE along the path is exact here up to RK4 error
            np.testing.assert_allclose(r.predicted_covs[-1], factor * expm(A * T) @ float_view(G0)[1] @ expm(A.T * T),
                                       rtol=1e-6)
    # Milstein's strong order is 1: an 8× finer step on the same paths must cut the mean error by
    # far more than the factor √8 ≈ 2.8 an order-1/2 scheme would give
    assert errs[0] / errs[1] > 2.8, errs


def _milstein_cov_bound(r, A, sigma: float) -> float:
    """A pathwise bound on ‖Σ^N(T) − Σ_pred(T)‖₂ for B = 0, from the run's own increments.

    With B = 0 the drift of a centred token is AY, so one Milstein step is exactly
    Y ← M_n Y, M_n = c_n I + hA, c_n = 1 + σΔW_n + ½σ²(ΔW_n² − h), and Σ^N(T) = C²·P Σ^N(0) Pᵀ with
    C = Π c_n, P = Π (I + h_n A), h_n = h/c_n (c_n > 0: all factors commute).  The moment SDE gives
    e^{2Z} E Σ^N(0) Eᵀ, Z = σW_T − σ²T/2, E = e^{AT}.  With a = ‖A‖₂ and τ = Σ h_n:
      ‖P‖ ≤ e^{aτ};  ‖P − E‖ ≤ e^{aτ} Σ (h_n a)²/2·e^{h_n a}   (telescoping I + h_nA against e^{h_nA})
                              + a|τ − T| e^{a·max(τ, T)}     (e^{Aτ} against e^{AT});
      ‖Σ^N − pred‖ ≤ ‖Σ^N(0)‖·(|C² − e^{2Z}|e^{2aτ} + e^{2Z}‖P − E‖(e^{aτ} + e^{aT})).
    C and τ are evaluated on the path (signed sums: the scheme's O(h^{1/2}) local terms cancel as
    they do in the run, so the bound stays O(h)).  The prediction's RK4 error: S̃′ = AS̃ + S̃Aᵀ is
    linear with ‖L‖ ≤ 2a, one step's amplification differs from e^{hL} by ≤ (2ha)⁵/120·e^{2ha},
    n steps by n times that ·e^{2aT}.  Rounding: 64·n ulps of the largest norm reached."""
    h, n = r.t[1] - r.t[0], len(r.t) - 1
    a = np.linalg.norm(A, 2)
    dW = np.diff(r.W)
    c = 1 + sigma * dW + 0.5 * sigma**2 * (dW**2 - h)
    assert c.min() > 0
    C2, Z2 = math.exp(2 * np.log(c).sum()), math.exp(2 * (sigma * r.W[-1] - sigma**2 * r.t[-1] / 2))
    hn = h / c
    tau, T = hn.sum(), r.t[-1]
    dP = (math.exp(a * tau) * np.sum((hn * a) ** 2 / 2 * np.exp(hn * a))
          + a * abs(tau - T) * math.exp(a * max(tau, T)))
    S0 = np.linalg.norm(r.covs[0], 2)
    sim = S0 * (abs(C2 - Z2) * math.exp(2 * a * tau) + Z2 * dP * (math.exp(a * tau) + math.exp(a * T)))
    rk4 = Z2 * S0 * n * (2 * h * a) ** 5 / 120 * math.exp(2 * h * a) * math.exp(2 * a * T)
    rounding = 64 * n * np.finfo(float).eps * max(C2, Z2) * S0 * math.exp(2 * a * max(tau, T))
    return sim + rk4 + rounding


def test_attention_on_with_B_zero_matches_moment_sde():
    # B = 0: the empirical covariance follows the moment SDE with J = A exactly; the mean's drift
    # is (A + V)m + b exactly; only the scheme's error remains
    p = Params.from_arrays([[-0.3, 0.1], [0, -0.2]], [[0, 0], [0, 0]], [[0.5, 0], [0.2, 0.4]], [0.1, 0])
    g = Gaussian.from_arrays([0.5, -0.2], [[1, 0.2], [0.2, 0.5]])
    T, n, sigma = 1.0, 400, 0.5
    r = simulate_common_noise(p, g, 30, T, n, sigma=sigma, seed=2)
    pm, pc = moment_sde_path(p, r.means[0], r.covs[0], r.t, r.W, sigma)
    h = T / n
    A_, _, V_, _ = (np.array(x) for x in float_view(p))
    M = np.linalg.norm(A_ + V_, 2)
    # Euler's global error for ṁ = (A+V)m + b: ≤ h·T·‖M‖²·max|m|·e^{‖M‖T}
    tol_m = h * T * M**2 * np.abs(r.means).max() * math.exp(M * T)
    np.testing.assert_allclose(r.means[-1], pm[-1], atol=tol_m)
    # measured (seeds 2..11): the error is 5-25% of the bound
    tol_S = _milstein_cov_bound(r, A_, sigma)
    assert np.linalg.norm(r.covs[-1] - pc[-1], 2) <= tol_S
    # Euler–Maruyama on the same tokens and path misses Σ by its O(h^{1/2}) strong error, outside the
    # Milstein bound (1.2-12 times it on seeds 2..11; 2.0 times on this one)
    e = simulate_common_noise(p, g, 30, T, n, sigma=sigma, seed=2, scheme="euler")
    assert np.linalg.norm(e.covs[-1] - pc[-1], 2) > tol_S


def test_moment_exponents_match_g_of_p():
    lam, sigma = 0.2, 1.0
    est, path = moment_exponents(lam, sigma, [0.5, 1.0, 2.0], 1.0, 50, 40_000, seed=3)
    h = 1.0 / 50
    for e in est + [path]:
        # Monte Carlo z-score plus the scheme's O(h) weak error, bounded by |g| h + σ²h
        assert abs(e.rate - e.predicted) <= 5 * e.stderr + (abs(e.predicted) + sigma**2) * h * 2, e
    # signs: pathwise decay, p = 1 and p = 2 growth (the seed's 'expected energy decays' fails)
    assert path.rate < 0 and est[1].rate > 0 and est[2].rate > 0


def test_bad_noise_input():
    with pytest.raises(InputError, match="scheme"):
        noise_increment(np.zeros(2), 0.1, 0.01, 1.0, "heun", "ito")
    with pytest.raises(InputError, match="calculus"):
        simulate_common_noise(P_OFF, G0, 10, 1.0, 10, sigma=1.0, seed=0, calculus="ito2")
    with pytest.raises(InputError, match="noise level"):
        simulate_common_noise(P_OFF, G0, 10, 1.0, 10, sigma=-1.0, seed=0)
    with pytest.raises(InputError, match="increments"):
        simulate_common_noise(P_OFF, G0, 10, 1.0, 10, sigma=1.0, seed=0, increments=np.zeros(3))


def test_noise_blowup_reported_with_time():
    p = Params.from_arrays([[3.0]], [[0]], [[0]], [0])
    r = simulate_common_noise(p, Gaussian.from_arrays([0], [[1]]), 20, 5.0, 500, sigma=0.1, seed=0,
                              blowup_norm=1e3)
    assert r.blowup and r.blowup_interval[0] < 5.0 and "between t =" in r.reason

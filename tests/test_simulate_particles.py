"""The particle system against the moment ODE; integrators; blow-up and bounds."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st
from scipy import stats

from riccati_verify.testing import strategies as rs
from riccati_verify.core.errors import InputError
from riccati_verify.numeric.flow import Segment, integrate_moments
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.numeric.simulate.particles import TransformerDrift, empirical_moments, integrate_particles, sample_gaussian, simulate
from riccati_verify.numeric.views import float_view

REPS, N, T, STEPS = 6, 300, 0.5, 5
ALPHA = 1e-4  # per-coordinate false-alarm probability of the replicate t-test


def _attention_bias(X, B):
    """Per token, |δa_i| to first order in 1/ESS: the softmax average â_i = Σ_j w_ij x_j / Σ_j w_ij is a
    self-normalised (ratio) estimator of the mean-field tilt a(x_i); by the delta method its bias is
    −Σ_j w_ij²(x_j − â_i)/(Σ_j w_ij)² (= −E[w̃²(y − a)]/N with w̃ = w/E w, of size spread/ESS_i), and
    the query's own token, included in the sum but not an independent draw, adds w_ii(x_i − â_i)/Σ_j w_ij."""
    L = X @ B.T @ X.T              # row i: ⟨B x_i, x_j⟩, the kernel of `attention`
    W = np.exp(L - L.max(axis=1, keepdims=True))
    s = W.sum(axis=1)
    a = W @ X / s[:, None]
    W2 = W**2
    ratio = np.linalg.norm(W2 @ X - W2.sum(axis=1)[:, None] * a, axis=1) / s**2
    own = np.diag(W) * np.linalg.norm(X - a, axis=1) / s
    return ratio + own


def _moment_lipschitz(p, f) -> float:
    """A Lipschitz constant of the moment ODE along the predicted path, in max(|δm|, ‖δΣ‖₂):
    ‖DΣ̇‖ ≤ 2‖J‖ + 2‖V‖‖B‖‖Σ‖ (J = A + VΣB), ‖Dṁ‖ ≤ ‖A + V + VΣB‖ + ‖V‖‖B‖|m|."""
    A, B, V = (np.atleast_2d(np.array(x, float)) for x in float_view(p)[:3])
    nV, nB = np.linalg.norm(V, 2), np.linalg.norm(B, 2)
    L = 0.0
    for m, S in zip(f.means, f.covs):
        nS = np.linalg.norm(S, 2)
        L = max(L, 2 * np.linalg.norm(A + V @ S @ B, 2) + 2 * nV * nB * nS,
                np.linalg.norm(A + V + V @ S @ B, 2) + nV * nB * np.linalg.norm(m))
    return L


def replicate_errors(p, g, predicted, *, reps=REPS, n=N):
    """Errors (mean and covariance entries) of `reps` independent runs against `predicted`, and the
    allowance for their known O(1/N) and O(h⁴) biases (per coordinate).

    The t-test below sees E[error] = bias; to first order in 1/N and h⁴ it is the sum of
    (a) the 1/N normalisation: E Σ^N(0) = (1 − 1/N)Σ0 exactly; its effect at T is the moment ODE from
        (m0, (1 − 1/N)Σ0) minus the prediction (first order: DΦ_T applied to −Σ0/N);
    (b) the ratio-estimator and own-token biases δa_i of every query (`_attention_bias`): a drift error
        Vδa_i moves ṁ by ≤ ‖V‖·mean|δa_i| and Σ̇ by ≤ 2‖V‖·mean|Y_i||δa_i|; Gronwall with the moment
        ODE's Lipschitz constant L turns a forcing ≤ F into ≤ F(e^{LT} − 1)/L at T; F is taken as the
        larger of its values on the tokens at 0 and at T (the flow is smooth in between);
    (c) RK4 at STEPS steps: Richardson, |moments(STEPS) − moments(2·STEPS)|·16/15 on the first run
        (the runs differ in their tokens only; on the 2-d case all six give 1.9-2.2e-9, ~1e-6 of (a)+(b)).
    Left out: second-order terms of the O(N^{-1/2}) fluctuations (also O(1/N), constant not known in
    closed form); the t-test's own spread, q·SE with q ≈ 11 at R = 6, is far larger than (a)-(c)."""
    _, B_, V_ = (np.atleast_2d(np.array(x, float)) for x in float_view(p)[:3])
    m0, S0 = float_view(g)
    shrunk = integrate_moments(p, Gaussian.from_arrays(np.asarray(m0, float).tolist(),
                                                       ((1 - 1 / n) * np.asarray(S0, float)).tolist()), T)
    normalisation = np.abs(np.concatenate([shrunk.mean - predicted.mean, (shrunk.cov - predicted.cov).ravel()]))
    L = _moment_lipschitz(p, predicted)
    grow = T if L == 0 else math.expm1(L * T) / L
    nV = np.linalg.norm(V_, 2)
    errs, ess, forcing = [], [], np.zeros(2)
    for k in range(reps):
        r = simulate(p, g, n, T, STEPS, seed=1000 + k)
        errs.append(np.concatenate([r.mean - predicted.mean, (r.cov - predicted.cov).ravel()]))
        ess.append(r.ess_median)
        if k == 0:
            fine = simulate(p, g, n, T, 2 * STEPS, seed=1000)
            rk4 = 16 / 15 * np.abs(np.concatenate([r.mean - fine.mean, (r.cov - fine.cov).ravel()])).max()
        for X in (sample_gaussian(g, n, np.random.default_rng(1000 + k)), r.X):
            da = _attention_bias(X, B_)
            Y = np.linalg.norm(X - X.mean(axis=0), axis=1)
            forcing = np.maximum(forcing, [nV * da.mean(), 2 * nV * (Y * da).mean()])
    d = len(m0)
    attention_part = np.concatenate([np.full(d, forcing[0]), np.full(d * d, forcing[1])]) * grow
    return np.array(errs), min(ess), normalisation + attention_part + rk4


def agrees(errs, allowance):
    """Replicate t-test: |mean error| ≤ t·SE + the allowance for the known biases (`replicate_errors`)."""
    R = len(errs)
    q = stats.t.ppf(1 - ALPHA / 2, R - 1)
    se = errs.std(axis=0, ddof=1) / math.sqrt(R)
    return np.all(np.abs(errs.mean(axis=0)) <= q * se + allowance), np.abs(errs.mean(axis=0)), q * se + allowance


@st.composite
def problems(draw):
    d = draw(st.integers(1, 2))
    return draw(rs.params(d, max_magnitude=Fraction(1, 2))), draw(rs.gaussians(d, rank=d, max_mean=1))


@settings(max_examples=8)
@given(problems())
def test_particle_moments_agree_with_moment_ode(problem):
    p, g = problem
    f = integrate_moments(p, g, T)
    assume(not f.blowup)
    errs, ess, allowance = replicate_errors(p, g, f)
    assume(ess > 100)  # the cross-check is only meaningful with many effective tokens
    ok, got, tol = agrees(errs, allowance)
    assert ok, (got, tol)


def test_particle_moments_agree_2d_and_reject_wrong_prediction():
    p = Params.from_arrays([[-0.3, 0.1], [0, -0.2]], [[0.2, 0], [0.1, -0.3]], [[0.5, 0], [0.2, 0.4]], [0.1, 0])
    g = Gaussian.from_arrays([0.5, -0.2], [[1, 0.2], [0.2, 0.5]])
    f = integrate_moments(p, g, T)
    errs, ess, allowance = replicate_errors(p, g, f)
    assert ess > 100
    ok, got, tol = agrees(errs, allowance)
    assert ok, (got, tol)
    # the same data against the prediction of a wrong model (V → −V) must be rejected
    wrong = integrate_moments(Params.from_arrays(*[np.array(x) for x in float_view(p)[:2]], -np.array(float_view(p)[2]),
                                                 np.array(float_view(p)[3])), g, T)
    shift = np.concatenate([f.mean - wrong.mean, (f.cov - wrong.cov).ravel()])
    ok_wrong, _, _ = agrees(errs + shift, allowance)
    assert not ok_wrong


def test_no_attention_kernel_makes_moments_exact_for_any_n():
    # B = 0: softmax is uniform, attention returns the empirical mean, the velocity is affine and the
    # empirical moments solve eq. 1.1 exactly, so only the RK4 error (h⁴) remains.
    p = Params.from_arrays([[-0.4, 0.3], [-0.1, 0.2]], [[0, 0], [0, 0]], [[0.5, 0.1], [0, -0.3]], [0.2, -0.1])
    X0 = sample_gaussian(Gaussian.from_arrays([0, 0], [[1, 0], [0, 1]]), 50, np.random.default_rng(0))
    m0, S0 = empirical_moments(X0)
    r = integrate_particles(TransformerDrift(p), X0, 1.0, 20)
    f = integrate_moments(p, Gaussian.from_arrays(m0.tolist(), ((S0 + S0.T) / 2).tolist()), 1.0)
    np.testing.assert_allclose(r.mean, f.mean, atol=1e-6)
    np.testing.assert_allclose(r.cov, f.cov, atol=1e-6)


def test_time_varying_schedule_matches_moment_flow():
    p1 = Params.from_arrays([[-0.4, 0.3], [-0.1, 0.2]], [[0, 0], [0, 0]], 0.5, [0.2, -0.1])
    p2 = Params.from_arrays([[0.1, 0], [0.3, -0.5]], [[0, 0], [0, 0]], -0.3, [0, 0.4])
    sched = [Segment(0.5, p1), Segment(0.5, p2)]
    X0 = sample_gaussian(Gaussian.from_arrays([0, 0], [[1, 0], [0, 1]]), 40, np.random.default_rng(1))
    m0, S0 = empirical_moments(X0)
    g = Gaussian.from_arrays(m0.tolist(), ((S0 + S0.T) / 2).tolist())
    f = integrate_moments(sched, g, 1.0)
    r = integrate_particles(TransformerDrift(sched), X0, 1.0, 40)   # switch time on the grid
    np.testing.assert_allclose(r.cov, f.cov, atol=1e-7)
    # a smooth callable schedule t ↦ Params(A0 + tA1, 0, V, b): RK4 evaluates it at the stage times
    smooth = lambda t: Params.from_arrays([[-0.4 + t, 0.3], [-0.1, 0.2 - t]], [[0, 0], [0, 0]], 0.5, [0.2, -0.1])
    fs = integrate_moments(smooth, g, 1.0)
    rs_ = integrate_particles(TransformerDrift(smooth), X0, 1.0, 40)
    np.testing.assert_allclose(rs_.cov, fs.cov, atol=1e-7)
    np.testing.assert_allclose(rs_.mean, fs.mean, atol=1e-7)


def _observed_orders(method):
    """log2 of successive error ratios at 8, 16 and 32 steps against a 512-step RK4 reference (its
    error, ~1e-14, is below 1e-4 of the smallest compared one, 3.5e-10 for RK4 at 32 steps)."""
    p = Params.from_arrays([[-0.3, 0.2], [0, -0.1]], [[0.4, 0.1], [0, -0.3]], [[0.5, 0], [0.2, 0.3]], [0.1, 0])
    X0 = sample_gaussian(Gaussian.from_arrays([0.3, 0], [[1, 0.2], [0.2, 0.6]]), 60, np.random.default_rng(2))
    drift = TransformerDrift(p)
    ref = integrate_particles(drift, X0, 1.0, 512).X
    e = [np.abs(integrate_particles(drift, X0, 1.0, k, method=method).X - ref).max() for k in (8, 16, 32)]
    return math.log2(e[0] / e[1]), math.log2(e[1] / e[2])


@pytest.mark.parametrize("method,order", [("rk4", 4), ("heun", 2), ("euler", 1)])
def test_integrator_orders(method, order):
    # the global error is e(h) = Ch^p(1 + κh + μh² + …), so the observed order at (h, h/2) is
    # o(h) = p + δ(h) with δ(h) = κh/(2 ln 2) + O(h²): the deviation halves with h.  Richardson on the
    # two observed orders: p̂ = 2·o(h/2) − o(h) = p + O(h²), and o(h) − o(h/2) = κh/(4 ln 2) + O(h²)
    # estimates the first-order term from the data.  In the asymptotic regime (the h² term below the h
    # term at h = 1/8) |p̂ − p| ≤ |o(h) − o(h/2)|.  Measured: |p̂ − p| = 3e-5, 1.5e-4, 8e-4 against
    # the bound 0.019, 0.015, 0.0098 (rk4, heun, euler); p ± 1 misses by ≈ 1.
    o1, o2 = _observed_orders(method)
    assert abs((2 * o2 - o1) - order) <= abs(o1 - o2), (o1, o2)


def test_blowup_detected_with_time():
    # ẋ = 5x (B = V = 0): token i leaves the ball of radius R at exactly ln(R/|x_i(0)|)/5
    p = Params.from_arrays([[5]], [[0]], [[0]], [0])
    g = Gaussian.from_arrays([0], [[1]])
    r = simulate(p, g, 200, 2.0, 400, seed=0, blowup_norm=1e3)
    x0 = sample_gaussian(g, 200, np.random.default_rng(0))
    t_cross = math.log(1e3 / np.abs(x0).max()) / 5
    assert r.blowup and r.blowup_interval is not None
    t0, t1 = r.blowup_interval
    assert t0 < t_cross <= t1 and t1 - t0 == pytest.approx(2.0 / 400)
    assert "between t =" in r.reason and r.time == t0
    assert np.all(np.isfinite(r.X))


def test_moment_blowup_shows_as_ess_collapse():
    # d = 1, a = 0, vβ = 1, σ0 = 1: the moment ODE blows up at T* = 1/2.  The N-token system cannot
    # (its velocity is bounded by (‖A‖ + ‖V‖)·max|x_j|); the cross-check fails through the ESS.
    p = Params.from_arrays([[0]], [[1]], [[1]], [0])
    g = Gaussian.from_arrays([0], [[1]])
    assert integrate_moments(p, g, 2.0).blowup
    r = simulate(p, g, 200, 2.0, 100, seed=0)
    assert not r.blowup
    assert r.ess_median < 30 and any("collapsed" in w for w in r.warnings)


def test_float32_overflow_reported():
    p = Params.from_arrays([[60.0]], [[0]], [[0]], [0])
    g = Gaussian.from_arrays([1], [[1]])
    r = simulate(p, g, 20, 3.0, 30, seed=0, dtype=np.float32, blowup_norm=np.inf)
    assert r.blowup and "overflow" in r.reason and "float32" in r.reason


def test_bounds_and_bad_input():
    p = Params.from_arrays([[0]], [[0]], [[0]], [0])
    g = Gaussian.from_arrays([0], [[1]])
    with pytest.raises(InputError, match="tokens"):
        simulate(p, g, 10**7, 1.0, 1, seed=0)
    with pytest.raises(InputError, match="steps"):
        simulate(p, g, 10, 1.0, 0, seed=0)
    with pytest.raises(InputError, match="integrator"):
        simulate(p, g, 10, 1.0, 2, seed=0, method="rk45")
    with pytest.raises(InputError, match="time"):
        simulate(p, g, 10, -1.0, 2, seed=0)


def test_seed_reproducible_and_ess_reported():
    p = Params.from_arrays([[0]], [[0.5]], [[0.3]], [0])
    g = Gaussian.from_arrays([0], [[1]])
    a, b = simulate(p, g, 100, 0.2, 2, seed=7), simulate(p, g, 100, 0.2, 2, seed=7)
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(a.X, simulate(p, g, 100, 0.2, 2, seed=8).X)
    assert 1 <= a.ess_min <= a.ess_median <= 100 and len(a.ess_trace) == 2


def test_propagated_standard_error_predicts_the_rms_error():
    # the delta-method SE of the transported initial sampling error against the RMS error of 12 seeds:
    # a ratio far from 1 (outside the chi-square spread of 12 replicates of a ≤ 2-dof norm) fails
    from riccati_verify.numeric.simulate.rates import propagated_standard_errors
    p = Params.from_arrays([[0.3, 0.1], [0, 0.2]], [[0.4, 0], [0.1, 0.5]], [[0.5, 0], [0.2, 0.4]], [0.1, 0])
    g = Gaussian.from_arrays([0.5, -0.2], [[1, 0.2], [0.2, 0.5]])
    f = integrate_moments(p, g, 1.0)
    se_m, se_S = propagated_standard_errors(p, g, 1.0, 300)
    E = np.array([[np.linalg.norm(r.mean - f.mean), np.linalg.norm(r.cov - f.cov)]
                  for r in (simulate(p, g, 300, 1.0, 5, seed=s) for s in range(12))])
    rms = np.sqrt((E**2).mean(axis=0))
    lo, hi = (math.sqrt(stats.chi2.ppf(q, 12) / 12) for q in (1e-4, 1 - 1e-4))
    # one degree of freedom is the worst case for the spread of an RMS over 12 replicates
    assert lo <= rms[0] / se_m <= hi and lo <= rms[1] / se_S <= hi, (rms, se_m, se_S)

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


def replicate_errors(p, g, predicted, *, reps=REPS, n=N):
    """Errors (mean and covariance entries) of `reps` independent runs against `predicted`."""
    errs, ess = [], []
    for k in range(reps):
        r = simulate(p, g, n, T, STEPS, seed=1000 + k)
        errs.append(np.concatenate([r.mean - predicted.mean, (r.cov - predicted.cov).ravel()]))
        ess.append(r.ess_median)
    return np.array(errs), min(ess)


def agrees(errs, cov_scale, n_eff):
    """Replicate t-test: |mean error| ≤ t·SE + an O(1/n_eff) allowance for the known biases
    (1/N normalisation of the covariance, ratio-estimator bias of the softmax average)."""
    R = len(errs)
    q = stats.t.ppf(1 - ALPHA / 2, R - 1)
    se = errs.std(axis=0, ddof=1) / math.sqrt(R)
    bias = 2 * cov_scale / n_eff
    return np.all(np.abs(errs.mean(axis=0)) <= q * se + bias), np.abs(errs.mean(axis=0)), q * se + bias


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
    errs, ess = replicate_errors(p, g, f)
    assume(ess > 100)  # the cross-check is only meaningful with many effective tokens
    ok, got, tol = agrees(errs, float(np.abs(f.cov).max()), min(N, ess))
    assert ok, (got, tol)


def test_particle_moments_agree_2d_and_reject_wrong_prediction():
    p = Params.from_arrays([[-0.3, 0.1], [0, -0.2]], [[0.2, 0], [0.1, -0.3]], [[0.5, 0], [0.2, 0.4]], [0.1, 0])
    g = Gaussian.from_arrays([0.5, -0.2], [[1, 0.2], [0.2, 0.5]])
    f = integrate_moments(p, g, T)
    errs, ess = replicate_errors(p, g, f)
    assert ess > 100
    ok, got, tol = agrees(errs, float(np.abs(f.cov).max()), min(N, ess))
    assert ok, (got, tol)
    # the same data against the prediction of a wrong model (V → −V) must be rejected
    wrong = integrate_moments(Params.from_arrays(*[np.array(x) for x in float_view(p)[:2]], -np.array(float_view(p)[2]),
                                                 np.array(float_view(p)[3])), g, T)
    shift = np.concatenate([f.mean - wrong.mean, (f.cov - wrong.cov).ravel()])
    ok_wrong, _, _ = agrees(errs + shift, float(np.abs(f.cov).max()), min(N, ess))
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


@pytest.mark.parametrize("method,order", [("rk4", 4), ("heun", 2), ("euler", 1)])
def test_integrator_orders(method, order):
    p = Params.from_arrays([[-0.3, 0.2], [0, -0.1]], [[0.4, 0.1], [0, -0.3]], [[0.5, 0], [0.2, 0.3]], [0.1, 0])
    X0 = sample_gaussian(Gaussian.from_arrays([0.3, 0], [[1, 0.2], [0.2, 0.6]]), 60, np.random.default_rng(2))
    drift = TransformerDrift(p)
    ref = integrate_particles(drift, X0, 1.0, 512).X   # RK4 reference: error ≪ the compared ones
    e1 = np.abs(integrate_particles(drift, X0, 1.0, 8, method=method).X - ref).max()
    e2 = np.abs(integrate_particles(drift, X0, 1.0, 16, method=method).X - ref).max()
    observed = math.log2(e1 / e2)
    # asymptotic ratio 2^order; h = 1/8 is in the asymptotic regime to within half an order
    assert abs(observed - order) < 0.5, observed


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

"""Multi-head simulator, head-limit rates, and the symbolic multi-head moment ODE."""

import math

import numpy as np
import pytest
import sympy as sp
from scipy import stats

from riccati_verify.core.errors import InputError
from riccati_verify.symbolic import multihead
from riccati_verify.symbolic.moments import DerivationMismatch, moment_symbols
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.numeric.simulate.heads import GaussianHeads, ListHeads, head_averages, head_limit_errors, integrate_multihead_moments, multihead_moment_rhs, velocity_error
from riccati_verify.numeric.simulate.particles import HeadSet, simulate
from riccati_verify.numeric.simulate.rates import fit_power_law
from riccati_verify.numeric.views import float_view


def test_numeric_rhs_matches_sympy_derivation():
    ode = multihead.multihead_moment_ode(2, 2)
    s = moment_symbols(2)
    rng = np.random.default_rng(0)
    A, b, m = rng.standard_normal((2, 2)), rng.standard_normal(2), rng.standard_normal(2)
    S = np.array([[1.0, 0.3], [0.3, 0.7]])
    Vs, Bs = rng.standard_normal((2, 2, 2)), rng.standard_normal((2, 2, 2))
    subs = {}
    for M, val in [(s.A, A), (s.S, S)] + list(zip(ode.Vs + ode.Bs, list(Vs) + list(Bs))):
        subs.update({M[i, j]: val[i, j] for i in range(2) for j in range(2)})
    subs.update({s.b[i]: b[i] for i in range(2)}); subs.update({s.m[i]: m[i] for i in range(2)})
    want_m = np.array(ode.mean_rhs.subs(subs), dtype=float).ravel()
    want_S = np.array(ode.cov_rhs.subs(subs), dtype=float)
    Vbar, M = head_averages(HeadSet(Vs, Bs), S)
    got_m, got_S = multihead_moment_rhs(A, b, Vbar, M, m, S)
    np.testing.assert_allclose(got_m, want_m, rtol=1e-12)
    np.testing.assert_allclose(got_S, want_S, rtol=1e-12)


def test_derivation_check_rejects_a_tampered_ode():
    ode = multihead.multihead_moment_ode(1, 2)
    bad = multihead.MultiHeadODE(ode.d, ode.H, ode.Vs, ode.Bs, ode.J, ode.mean_rhs,
                                 ode.cov_rhs + sp.Matrix([[ode.Vs[0][0, 0]]]))
    with pytest.raises(DerivationMismatch):
        multihead._check_against_closed_form(bad)
    assert multihead.single_head_reduction(1)


def test_gaussian_head_expectation_matches_monte_carlo():
    assert multihead.head_limit_closed_form(2)
    rng = np.random.default_rng(1)
    rho = GaussianHeads(rng.standard_normal((2, 2)), rng.standard_normal((2, 2)), 0.7, 0.6)
    S = np.array([[1.0, 0.4], [0.4, 0.5]])
    # Monte Carlo over 4096 heads, entrywise z-scores with the sample standard deviations
    H = rho.sample(4096, np.random.default_rng(2))
    per = np.einsum("hij,jl,hlm->him", H.V, S, H.B)
    z = np.abs(per.mean(0) - rho.mean_VSB(S)) / (per.std(0, ddof=1) / math.sqrt(4096))
    assert z.max() < 5
    # the r = 0 formula would be wrong here (r = 0.6): the same data rejects it
    z0 = np.abs(per.mean(0) - rho.V0 @ S @ rho.B0) / (per.std(0, ddof=1) / math.sqrt(4096))
    assert z0.max() > 5


def test_head_limit_error_decreases_like_inverse_sqrt_H():
    rho = GaussianHeads(np.array([[0.5, 0.1], [0, 0.3]]), np.array([[0.2, 0], [0.1, -0.3]]), 0.3, 0.0)
    m, S = np.array([0.5, -0.2]), np.array([[1, 0.2], [0.2, 0.5]])
    Hs = [4, 16, 64, 256]
    E = head_limit_errors(rho, m, S, Hs, [[5, k] for k in range(30)])
    assert np.all(np.diff(E.mean(axis=1)) < 0)
    fit = fit_power_law(Hs, E)
    assert fit.contains(-0.5) and not fit.contains(0.0) and not fit.contains(-1.0), fit


def test_multihead_particles_agree_with_multihead_moment_ode():
    p = Params.from_arrays([[-0.3, 0.1], [0, -0.2]], [[0, 0], [0, 0]], [[0, 0], [0, 0]], [0.1, 0])
    g = Gaussian.from_arrays([0.5, -0.2], [[1, 0.2], [0.2, 0.5]])
    rho = GaussianHeads(np.array([[0.4, 0], [0.1, 0.3]]), np.array([[0.2, 0], [0.1, -0.3]]), 0.3)
    heads = rho.sample(4, np.random.default_rng(3))
    A, B, V, b = float_view(p)
    T, R, N = 0.5, 6, 300
    mT, ST, blow, _ = integrate_multihead_moments(A, b, lambda S: head_averages(heads, S), *float_view(g), T)
    assert not blow
    errs = []
    for k in range(R):
        r = simulate(p, g, N, T, 5, seed=k, heads=heads)
        assert r.ess_median > 100
        errs.append(np.concatenate([r.mean - mT, (r.cov - ST).ravel()]))
    errs = np.array(errs)
    q = stats.t.ppf(1 - 1e-4 / 2, R - 1)
    tol = q * errs.std(0, ddof=1) / math.sqrt(R) + 2 * np.abs(ST).max() / N
    assert np.all(np.abs(errs.mean(0)) <= tol)
    # against the prediction of a wrong model (every V_h negated) the same data must be rejected
    neg = HeadSet(-heads.V, heads.B)
    mW, SW, _, _ = integrate_multihead_moments(A, b, lambda S: head_averages(neg, S), *float_view(g), T)
    shift = np.concatenate([mT - mW, (ST - SW).ravel()])
    assert not np.all(np.abs(errs.mean(0) + shift) <= tol)


def test_list_heads_and_bounds():
    V = np.array([[[1.0]], [[-1.0]]]); B = np.array([[[0.5]], [[0.5]]])
    rho = ListHeads(V, B)
    S = np.array([[2.0]])
    np.testing.assert_allclose(rho.mean_VSB(S), [[0.0]])
    h = rho.sample(1000, np.random.default_rng(0))
    assert set(np.unique(h.V)) == {-1.0, 1.0}
    assert velocity_error(HeadSet(V, B), rho, np.array([0.3]), S) == pytest.approx(0.0, abs=1e-15)
    with pytest.raises(InputError, match="heads"):
        rho.sample(10**6, np.random.default_rng(0))

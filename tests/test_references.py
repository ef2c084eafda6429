"""The independent float references of `riccati_verify.testing.strategies` (`reference_fate` and its
stiff variant), checked against closed forms and against each other: the oracles of the regime and
blow-up property tests are only as good as these."""

from __future__ import annotations

from fractions import Fraction as Q

import numpy as np
import pytest

from riccati_verify.core.model import Gaussian, Params
from riccati_verify.numeric.views import float_view
from riccati_verify.testing.strategies import (_moment_field, _symmetric_jacobian, general_instance,
                                               opposite_instance, reference_fate)


def _diagonal(a, v, beta, s0):
    d = len(a)
    D = lambda x: tuple(tuple(Q(x[i]) if i == j else Q(0) for j in range(d)) for i in range(d))   # noqa: E731
    return Params(D(a), D(beta), D(v), (Q(0),) * d), Gaussian((Q(0),) * d, D(s0))


def test_moment_field_jacobian_is_the_derivative():
    # f is quadratic in Σ, so the central difference (f(Σ+hH) − f(Σ−hH))/2h is DF[H] exactly up to
    # rounding, about 1e-16·|f|/h; the test runs at a non-symmetric point too (the solver's iterates)
    p, g = general_instance(3, 0, 1)
    A, B, V, _ = float_view(p)
    f, jac = _moment_field(A, B, V)
    rng = np.random.default_rng(0)
    h = 1e-3
    for X in (np.array(g.cov, dtype=float), rng.standard_normal((3, 3))):
        J = jac(0.0, X.ravel())
        for _ in range(4):
            H = rng.standard_normal(9)
            fd = (f(0.0, X.ravel() + h * H) - f(0.0, X.ravel() - h * H)) / (2 * h)
            scale = np.linalg.norm(f(0.0, X.ravel() + h * H)) + 1.0
            assert np.linalg.norm(J @ H - fd) <= 1e-10 * scale / h


def test_symmetric_jacobian_is_df_on_symmetric_matrices():
    # scalar case: f(σ) = 2aσ + 2vβσ², DF = 2a + 4vβσ; at the equilibrium σ* = −a/(vβ), DF = −2a
    p, g = _diagonal([Q(1, 2)], [Q(-1, 4)], [Q(1, 4)], [Q(8)])
    A, B, V, _ = float_view(p)
    _, jac = _moment_field(A, B, V)
    assert _symmetric_jacobian(jac, np.array([[8.0]])) == pytest.approx(np.array([[-1.0]]), abs=1e-15)
    # and a rotation-invariant check at d = 2: eigenvalues of DF on Sym for A = a·I, B = V = 0 are all 2a
    p, _ = _diagonal([Q(3, 4), Q(3, 4)], [0, 0], [0, 0], [1, 1])
    A, B, V, _ = float_view(p)
    _, jac = _moment_field(A, B, V)
    assert np.allclose(_symmetric_jacobian(jac, np.eye(2)), 1.5 * np.eye(3), atol=1e-15)


def _closed_form_diagonal(t, a, c, s0):
    """σ(t) of σ' = 2aσ + 2cσ² (c = vβ), σ(0) = s0, in mpmath (50 digits)."""
    import mpmath

    mpmath.mp.dps = 50
    t, a, c, s0 = (mpmath.mpf(x) for x in (t, a, c, s0))
    if a == 0:
        return s0 / (1 - 2 * c * s0 * t)
    e = mpmath.exp(-2 * a * t)
    return a * s0 / ((a + c * s0) * e - c * s0)


def test_stiff_reference_follows_the_closed_form_to_t_1e10():
    # two algebraic collapses σ = 1/(4 + t/8) beside a fast coordinate tending to 8 (or to 0): the
    # stiff reference's Σ(1e10) is within its own error estimate of the closed form, the limit within
    # its estimate (+ the 8e-10 still to go, which the estimate includes to first order) of the true one
    q = 0.25
    for a3, lim in ((0.5, 8.0), (-1.5, 0.0)):
        inst = _diagonal([0, 0, a3], [-q] * 3, [q] * 3, [q] * 3)
        fate = reference_fate(*inst, horizon=1e10, stiff=True)
        exact_t = np.diag([float(_closed_form_diagonal(1e10, a, -q * q, q)) for a in (0, 0, a3)])
        assert fate["fate"] == ("equilibrium" if lim else "collapse")
        assert np.linalg.norm(fate["limit"] - exact_t) <= fate["error"]
        assert abs(fate["limit"][2, 2] - lim) <= 1e-12


def test_explicit_and_stiff_references_agree():
    # two different integrators (DOP853 explicit, Radau implicit with the exact Jacobian) on a
    # converging opposite draw at t = 200: their limits agree within the sum of their error estimates
    p, g = opposite_instance(2, 0, 0)
    e, s = reference_fate(p, g), reference_fate(p, g, stiff=True)
    assert e["fate"] == s["fate"] and e["fate"] in ("equilibrium", "collapse")
    assert np.linalg.norm(e["limit"] - s["limit"]) <= e["error"] + s["error"]


@pytest.mark.parametrize("stiff", [False, True])
def test_both_references_see_a_closed_form_blowup(stiff):
    # σ' = 2σ² from σ0 = 1: σ = 1/(1 − 2t), T* = 1/2; an entry passes 1e8 at t = 1/2 − 1/(2·1e8)
    fate = reference_fate(*_diagonal([0], [1], [1], [1]), stiff=stiff)
    assert fate["fate"] == "blowup"
    assert 0.5 - 1e-8 <= fate["t"] <= 0.5

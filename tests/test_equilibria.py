"""Equilibria of the Bernoulli equation: exact algebra, closed forms, enclosures.

Each exact routine is cross-checked by an independent route (finite
differences, scipy, sympy, the moment-ODE flow) and each verifier is shown to
reject wrong input.
"""

from fractions import Fraction as Q

import flint
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from riccati_verify.core import exact
from riccati_verify.testing import strategies as rs
from riccati_verify.checker import check_equilibrium as ce
from riccati_verify.core.model import Params
from riccati_verify.certify.stability import enclose_equilibrium, find_equilibria, newton_equilibrium
from riccati_verify.certify import equilibria as eq
from riccati_verify.numeric.views import float_view


def _arrays(p):
    return [np.array(x, dtype=float) for x in float_view(p)[:3]]


@given(rs.params(st.integers(1, 3)), st.integers(0, 2 ** 16))
def test_linearisation_matches_finite_differences(p, seed):
    rng = np.random.default_rng(seed)
    A, B, V = _arrays(p)
    d = p.dim
    G = rng.standard_normal((d, d))
    S = G @ G.T
    H = rng.standard_normal((d, d))
    H = H + H.T
    h = 1e-6
    fd = (eq.bernoulli_np(A, B, V, S + h * H) - eq.bernoulli_np(A, B, V, S - h * H)) / (2 * h)
    L = eq.linearisation_np(A, B, V, S)
    scale = 1 + np.linalg.norm(A) + np.linalg.norm(V) * np.linalg.norm(B) * np.linalg.norm(S)
    # central difference of a quadratic map is exact up to rounding: error ~ eps·scale·‖H‖/h
    tol = 1e-8 * scale * np.linalg.norm(H)
    assert np.allclose(eq.to_sym(fd), L @ np.array(eq.to_sym(H)), atol=tol)


@given(st.data())
def test_exact_linearisation_and_remainder(data):
    """F(S + H) = F(S) + DF(S)[H] + VHBH + HBᵀHVᵀ exactly, with DF from the fmpq matrix, and the
    checker's own Jacobian equal to the producer's."""
    p = data.draw(rs.params(st.integers(1, 3)))
    d = p.dim
    S = data.draw(rs.psd_matrices(d))
    H = exact.sym_part(tuple(tuple(Q(i - 2 * j + 1, 3) for j in range(d)) for i in range(d)))
    L = eq.linearisation_fmpq(p, S)
    h = flint.fmpq_mat(eq.sym_dim(d), 1, [flint.fmpq(x.numerator, x.denominator) for x in eq.to_sym(H)])
    lin = [eq.fmpq_to_fraction(x) for x in (L * h).entries()]
    VH = exact.matmul(p.V, H)
    R = exact.matmul(exact.matmul(VH, p.B), H)
    rem = exact.add(R, exact.transpose(R))
    lhs = eq.bernoulli_exact(p, exact.add(S, H))
    rhs = exact.add(exact.add(eq.bernoulli_exact(p, S), exact.as_matrix(eq.from_sym(lin, d, Q(0)))), rem)
    assert lhs == rhs
    Jc = ce.jacobian(ce.q_matrix(p.A), ce.q_matrix(p.B), ce.q_matrix(p.V), ce.q_matrix(S))
    assert [[eq.fmpq_to_fraction(x) for x in r] for r in Jc] == [list(r) for r in eq.from_fmpq_mat(L)]


@given(st.data())
def test_lyapunov_exact_vs_scipy(data):
    A = data.draw(rs.hurwitz_matrices(st.integers(1, 4), anti=True))
    d = len(A)
    Qd = data.draw(rs.pd_matrices(d))
    P = eq.lyapunov_solve_exact(A, Qd)
    assert P is not None
    At = exact.transpose(A)
    assert exact.add(exact.matmul(At, P), exact.matmul(P, A)) == Qd
    Ps = eq.lyapunov_solve_scipy(np.array(A, float), np.array(Qd, float))
    assert np.allclose(np.array(P, float), Ps, rtol=1e-9, atol=1e-9 * np.abs(Ps).max())


def test_lyapunov_singular_operator_returns_none():
    # eigenvalues ±1: λ1 + λ2 = 0, so AᵀP + PA is singular on symmetric matrices
    assert eq.lyapunov_solve_exact(exact.as_matrix([[1, 0], [0, -1]]), exact.identity(2)) is None


@given(rs.params(st.integers(1, 4), signs="opposite", scalar_V=True, A_spectrum="anti_hurwitz"))
def test_riccati_closed_form_is_exact_pd_equilibrium(p):
    r = eq.riccati_equilibrium(p)
    assert r.positive_definite  # MATH.md §7: P* = ∫ e^{−Aᵀs}(−2vB_s)e^{−As} ds ≻ 0
    assert eq.bernoulli_exact(p, r.Sigma) == exact.zeros(p.dim)
    assert exact.is_pd(r.Sigma)


@given(st.integers(-3, 3), st.integers(-3, 3), st.integers(-3, 3))
def test_scalar_equilibria(a, v, beta):
    p = Params.from_arrays([[a]], [[beta]], v)
    roots = eq.scalar_equilibria(p)
    if a == 0 and v * beta == 0:
        assert roots is None
        return
    for r in roots:
        assert 2 * a * r + 2 * v * beta * r * r == 0
    assert len(roots) == (2 if a != 0 and v * beta != 0 else 1)


def test_symbolic_d2_agrees_with_closed_form_and_newton():
    p = Params.from_arrays([[1, 1], [0, 2]], [[-1, 0], [0, -2]], Q(1, 2))
    sols = eq.symbolic_equilibria(p)
    pd = [S for S in sols if eq.positive_definite_sympy(S)]
    assert len(pd) == 1
    closed = eq.riccati_equilibrium(p).Sigma
    assert sp.Matrix([[sp.Rational(x.numerator, x.denominator) for x in r] for r in closed]) == pd[0]
    found = [r for r in find_equilibria(p, n_random=6) if r.positive_definite]
    assert len(found) == 1 and found[0].cov == closed


def test_symbolic_d2_general_v_vs_newton():
    """A non-scalar, non-diagonal V: every real PD solution of the polynomial system (sympy)
    is found by find_equilibria, and vice versa (within the enclosure radius)."""
    p = Params.from_arrays([[1, 0], [1, 2]], [[-2, 1], [0, -1]], [[1, Q(1, 2)], [0, 1]])
    sols = eq.symbolic_equilibria(p)
    pd = [np.array(S.evalf(30), dtype=float) for S in sols if eq.positive_definite_sympy(S)]
    found = [np.array(r.cov, float) for r in find_equilibria(p, n_random=10) if r.positive_definite and r.verified]
    assert len(pd) == len(found) >= 1
    for S in pd:
        assert min(np.abs(S - T).max() for T in found) < 1e-9


def test_krawczyk_encloses_newton_solution_and_rejects_wrong_centres():
    p = Params.from_arrays([[1, 0], [1, 2]], [[-2, 1], [0, -1]], [[1, Q(1, 2)], [0, 1]])
    S = newton_equilibrium(p, np.array([[0.5, 0.0], [0.0, 2.0]]))
    assert S is not None
    enc = enclose_equilibrium(p, S)
    assert enc is not None and enc.radius > 0 and enc.positive_definite
    A, B, V = (ce.q_matrix(M) for M in (p.A, p.B, p.V))
    r = flint.fmpq(enc.radius.numerator, enc.radius.denominator)
    assert ce.verify_zero(A, B, V, ce.q_matrix(enc.center), r)[0]
    shifted = [[x + (flint.fmpq(1, 1000) if i == j == 0 else 0) for j, x in enumerate(row)]
               for i, row in enumerate(ce.q_matrix(enc.center))]
    assert not ce.verify_zero(A, B, V, shifted, r)[0]
    assert not ce.verify_zero(A, B, V, ce.q_matrix(enc.center), flint.fmpq(0))[0]  # not an exact zero
    assert not ce.verify_zero(A, B, V, ce.q_matrix(enc.center), flint.fmpq(1, 10 ** 40))[0]  # ball too small


def test_ball_pd_rejects_indefinite_ball():
    c = [[flint.fmpq(1), flint.fmpq(0)], [flint.fmpq(0), flint.fmpq(1, 100)]]
    assert ce.ball_is_pd(c, flint.fmpq(1, 1000))
    assert not ce.ball_is_pd(c, flint.fmpq(1, 50))   # the ball contains matrices with a negative eigenvalue


def test_closed_form_equilibrium_is_the_flow_limit():
    """Independent route: the moment ODE started at N(0, I) converges to P*⁻¹ (V = vI, opposite signs)."""
    from riccati_verify.numeric.flow import integrate_moments
    from riccati_verify.core.model import Gaussian

    p = Params.from_arrays([[1, 1], [0, 2]], [[2, 1], [1, 2]], -1)
    S = np.array(eq.riccati_equilibrium(p).Sigma, float)
    res = integrate_moments(p, Gaussian.from_arrays([0, 0], [[1, 0], [0, 1]]), 30.0)
    # slowest rate of P(t) → P* is 2·min Re λ(A) = 2: the error is ~e^{-60}, far below the tolerances
    assert not res.blowup and np.allclose(res.cov, S, atol=1e-9)


@pytest.mark.parametrize("name", ["bernoulli_scalar", "riccati_connection"])
def test_proof_modules_certified(name):
    import importlib

    from riccati_verify.core.result import Status

    mod = importlib.import_module(f"riccati_verify.proofs.{name}")
    r = mod.check()
    assert r.symbolic.status is Status.CERTIFIED, r.symbolic.evidence
    assert r.numeric.status is Status.CONFIRMED_NUMERICALLY, r.numeric.evidence


def test_bernoulli_symbolic_check_can_fail():
    """The symbolic check is not vacuous: a wrong blow-up time formula is caught."""
    import sympy as sp

    a, c, s0, t = sp.symbols("a c sigma0 t", real=True)
    sigma = 1 / ((1 / s0 + c / a) * sp.exp(-2 * a * t) - c / a)
    wrong_T = sp.log(1 + a / (c * s0)) / a
    assert sp.simplify((1 / sigma).subs(t, wrong_T)) != 0

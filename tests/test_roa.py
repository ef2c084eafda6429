"""certify.roa: the fast Lyapunov-equation stability proof and the region of attraction reject wrong input."""

from __future__ import annotations

from fractions import Fraction as Q

import flint
import numpy as np

from riccati_verify.checker import verify_certificate
from riccati_verify.core import exact
from riccati_verify.core.model import Params
from riccati_verify.certify.roa import lyapunov_equation_stability, prove_pd, region_of_attraction


def test_prove_pd_accepts_pd_and_rejects_indefinite():
    M = np.array([[2.0, 0.5], [0.5, 1.0]])
    assert prove_pd(flint.arb_mat(M.tolist()), M)
    N = np.array([[1.0, 2.0], [2.0, 1.0]])
    assert not prove_pd(flint.arb_mat(N.tolist()), N)
    # a float proposal that lies (claims PD) cannot make the ball test pass
    assert not prove_pd(flint.arb_mat(N.tolist()), np.eye(2))
    # the perturbation bound counts
    assert not prove_pd(flint.arb_mat(M.tolist()), M, flint.arb(10))


def test_stable_equilibrium_is_certified_with_a_checked_certificate():
    p = Params.from_arrays([[1, 1], [-1, 1]], [[1, 0], [0, 1]], [[Q(-1), Q(1, 50)], [0, -1]])
    from riccati_verify.certify.stability import enclose_equilibrium, newton_equilibrium

    enc = enclose_equilibrium(p, newton_equilibrium(p, np.eye(2)))
    ls = lyapunov_equation_stability(p, enc.center, enc.radius)
    assert ls.proved and ls.certificate is not None and verify_certificate(ls.certificate).valid
    roa = region_of_attraction(p, enc.center, enc.radius, stability=ls)
    assert roa.proved and roa.c > 0 and roa.radius > 0


def test_unstable_equilibrium_and_garbage_proposals_are_not_certified():
    p = Params.from_arrays([[1]], [[1]], 1)          # Σ = 0 unstable (DF(0) = 2)
    zero = exact.zeros(1)
    assert not lyapunov_equation_stability(p, zero).proved
    q = Params.from_arrays([[-1, 0], [0, -1]], [[1, 0], [0, 1]], [[1, 0], [0, 1]])   # Σ = 0 stable
    assert lyapunov_equation_stability(q, exact.zeros(2)).proved
    assert not lyapunov_equation_stability(q, exact.zeros(2), propose=lambda L: -np.eye(3)).proved
    assert not lyapunov_equation_stability(q, exact.zeros(2), propose=lambda L: np.eye(3) * 1e-9 + 5.0).proved


def test_linearisation_ball_contains_df_on_the_ball_with_a_small_eps():
    """Lm ± eps contains DF(Σ) (the checker's own column-by-column DF in arb) at points Σ of the ball,
    and eps is far below the one-level 24-bit grid's 2^-24 relative error (the two-level grid)."""
    from riccati_verify.certify.roa import _linearisation_ball
    from riccati_verify.checker.check_trajectory_convergence import _dF
    from riccati_verify.core import balls

    p = Params.from_arrays([[Q(1, 3), 1], [-1, Q(2, 7)]], [[1, Q(1, 5)], [0, 1]], [[Q(-1), Q(1, 50)], [0, -1]])
    center = ((Q(7, 3), Q(-1, 9)), (Q(-1, 9), Q(5, 11)))
    radius = Q(1, 10 ** 30)     # tiny: the grid's error, not the ball's width, dominates eps
    lin = _linearisation_ball(p, center, radius)
    top = max(float(abs(x).upper()) for x in lin.Lm.entries())
    assert 0 < float(lin.eps) < 2.0 ** -40 * top
    rng = np.random.default_rng(3)
    with flint.ctx.workprec(128):
        A, B, V = (balls.arb_matrix(M) for M in (p.A, p.B, p.V))
        for _ in range(3):
            e = [Q(int(k), 10 ** 33) for k in rng.integers(-999, 1000, 3)]
            S = ((center[0][0] + e[0], center[0][1] + e[1]), (center[1][0] + e[1], center[1][1] + e[2]))
            L = _dF(A, B, V, balls.arb_matrix(S), 2)
            for x, y in zip(L.entries(), lin.Lm.entries()):
                assert abs(x - y).upper() <= balls.arb_of(lin.eps), (x, y, lin.eps)

"""certify.roa: the fast Lyapunov-equation stability proof and the region of attraction reject wrong input."""

from __future__ import annotations

from fractions import Fraction as Q

import flint
import pytest
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


# ---------------------------------------------------------------------------
# the exact cubic bound


def _rand_params(d: int, seed: int) -> Params:
    rng = np.random.default_rng(seed)
    M = lambda: [[Q(int(k), int(q)) for k, q in zip(rng.integers(-6, 7, d), rng.integers(1, 5, d))] for _ in range(d)]
    return Params.from_arrays(M(), M(), M())


def _quadratic_exact(p: Params, H) -> list:
    """to_sym(VHBH + HBᵀHVᵀ), straight from the definition (MATH.md §5)."""
    VHBH = exact.matmul(exact.matmul(exact.matmul(p.V, H), p.B), H)
    Qm = exact.add(VHBH, exact.transpose(VHBH))
    return [Qm[i][j] for i, j in exact.sym_pairs(len(H))]


def _sym(h, d):
    from riccati_verify.certify.equilibria import from_sym

    return tuple(tuple(r) for r in from_sym(h, d, Q(0)))


def _qf(h, M) -> Q:
    return sum((h[i] * M[i][j] * h[j] for i in range(len(h)) for j in range(len(h))), Q(0))


@pytest.mark.parametrize("d,seed", [(2, 0), (3, 1)])
def test_quadratic_forms_and_the_cubic_identity_exactly(d, seed):
    """q(h)_a = hᵀQ_a h and hᵀM(h)h = 2hᵀXq(h), M(h) = Σ_j h_j G_j, G_j = 2 Σ_a X_aj Q_a, in exact
    rationals at random rational h and a random rational symmetric X."""
    from riccati_verify.certify.roa import quadratic_forms

    p = _rand_params(d, seed)
    T, D = quadratic_forms(p)
    n = d * (d + 1) // 2
    Qa = [[[Q(x, D) for x in r] for r in Ta] for Ta in T]
    assert all(Qa[a][j][k] == Qa[a][k][j] for a in range(n) for j in range(n) for k in range(n))
    rng = np.random.default_rng(seed + 10)
    Xr = [[Q(int(rng.integers(-9, 10)), int(rng.integers(1, 7))) for _ in range(n)] for _ in range(n)]
    X = [[Xr[i][j] + Xr[j][i] for j in range(n)] for i in range(n)]
    G = [[[2 * sum((X[a][j] * Qa[a][r][c] for a in range(n)), Q(0)) for c in range(n)] for r in range(n)]
         for j in range(n)]
    for _ in range(3):
        h = [Q(int(rng.integers(-20, 21)), int(rng.integers(1, 9))) for _ in range(n)]
        q = _quadratic_exact(p, _sym(h, d))
        assert [_qf(h, Qa[a]) for a in range(n)] == q
        M = [[sum((h[j] * G[j][r][c] for j in range(n)), Q(0)) for c in range(n)] for r in range(n)]
        Xh = [sum((X[a][b] * h[b] for b in range(n)), Q(0)) for a in range(n)]
        assert _qf(h, M) == 2 * sum((x * y for x, y in zip(Xh, q)), Q(0))
    # a wrong V changes the forms (the identity is not vacuous)
    p2 = Params.from_arrays(p.A, p.B, exact.add(p.V, exact.identity(d)))
    h = [Q(k + 1) for k in range(n)]
    assert [_qf(h, Qa[a]) for a in range(n)] != _quadratic_exact(p2, _sym(h, d))


def _stable_d2():
    p = Params.from_arrays([[1, 1], [-1, 1]], [[1, 0], [0, 1]], [[Q(-1), Q(1, 50)], [0, -1]])
    from riccati_verify.certify.stability import enclose_equilibrium, newton_equilibrium

    enc = enclose_equilibrium(p, newton_equilibrium(p, np.eye(2)))
    return p, enc


def test_the_ball_matrices_g_hat_contain_the_cubic_term():
    """Producer and checker Ĝ_k (each built its own way) contain 2hᵀXq(h) = hᵀ(Σ_k z_k Ĝ_k)h, h = Yz."""
    from riccati_verify.certify.roa import _cubic_data
    from riccati_verify.checker.check_trajectory_convergence import _g_hat
    from riccati_verify.core import balls

    p, enc = _stable_d2()
    ls = lyapunov_equation_stability(p, enc.center, enc.radius, with_certificate=False)
    with flint.ctx.workprec(128):
        cd = _cubic_data(p, ls)
        Gc = _g_hat(p, balls.arb_matrix(ls.X), balls.arb_matrix(cd.Y), 2)
    n = 3
    rng = np.random.default_rng(5)
    for _ in range(3):
        z = [Q(int(k), 7) for k in rng.integers(-30, 31, n)]
        h = list(exact.matvec(cd.Y, z))
        q = _quadratic_exact(p, _sym(h, 2))
        exact_val = 2 * sum((x * y for x, y in zip(exact.matvec(ls.X, h), q)), Q(0))
        ha = flint.arb_mat([[balls.arb_of(x)] for x in h])
        for G in (cd.G, Gc):
            M = sum((G[k] * balls.arb_of(z[k]) for k in range(1, n)), G[0] * balls.arb_of(z[0]))
            val = (ha.transpose() * M * ha)[0, 0]
            assert val.contains(balls.arb_of(exact_val)), (val, exact_val)
            assert val.rad() < 1e-9 * max(1.0, abs(float(exact_val)))   # tight: containment says something


def test_cubic_region_is_larger_and_float_samples_on_its_boundary_decrease():
    """The certified c of the cubic bound beats the norm bound on a d = 2 example, and at 2000 float
    samples h on {W = c} (random directions, scaled), Ẇ = −hᵀNh + 2hᵀXq(h) < 0 with the float
    N, q of Σ* (independent evidence: quadratic_remainder_np, linearisation_np)."""
    from riccati_verify.certify import equilibria as eqm
    from riccati_verify.numeric.views import float_view

    p, enc = _stable_d2()
    roa = region_of_attraction(p, enc.center, enc.radius)
    assert roa.proved and roa.bound in ("cauchy_schwarz", "lmi") and roa.cubic is not None
    assert roa.c > 2 * roa.c_norm and roa.to_dict()["bound"] == roa.bound
    A, B, V, _ = float_view(p)
    Sc = np.array(enc.center, dtype=float)
    L = eqm.linearisation_np(A, B, V, Sc)
    X = np.array(roa.stability.X, dtype=float)
    N = -(L.T @ X + X @ L)
    rng = np.random.default_rng(0)
    worst = -np.inf
    for _ in range(2000):
        u = rng.standard_normal(3)
        h = u * np.sqrt(float(roa.c) / (u @ X @ u))
        q = np.array(eqm.to_sym(eqm.quadratic_remainder_np(B, V, np.array(eqm.from_sym(list(h), 2, 0.0)))))
        wdot = -(h @ N @ h) + 2 * (X @ h) @ q
        worst = max(worst, wdot / (h @ h))
    assert worst < 0, worst
    # the same samples at a level far above c do find Ẇ > 0: the check above can fail
    bad = 0
    for _ in range(2000):
        u = rng.standard_normal(3)
        h = u * np.sqrt(1e4 * float(roa.c) / (u @ X @ u))
        q = np.array(eqm.to_sym(eqm.quadratic_remainder_np(B, V, np.array(eqm.from_sym(list(h), 2, 0.0)))))
        bad += -(h @ N @ h) + 2 * (X @ h) @ q > 0
    assert bad > 0


def test_cubic_holds_rejects_a_too_large_rho_and_a_bad_S():
    from riccati_verify.certify.roa import _cubic_data, _cubic_holds

    p, enc = _stable_d2()
    roa = region_of_attraction(p, enc.center, enc.radius)
    cub = roa.cubic
    with flint.ctx.workprec(64):
        cd = _cubic_data(p, roa.stability)
        assert _cubic_holds(cd, cub["S"], cub["rho"])
        assert not _cubic_holds(cd, cub["S"], cub["rho"] * 4)
        assert not _cubic_holds(cd, exact.scale(-1, cub["S"]), cub["rho"])
        assert not _cubic_holds(cd, exact.scale(Q(1, 10 ** 6), cub["S"]), cub["rho"])

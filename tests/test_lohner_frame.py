"""The local frame of the Lohner flow (`checker._lohner`, docstring point 6): y = P⁻¹(x − x̂).

Its recursion is checked against the plain x-coordinate recursion at sampled start points (a
second route to the same coefficients), a whole framed run against a 50-digit mpmath solution, and
one framed step against the d = 1 closed form, by each Jacobian-remainder route alone."""

from __future__ import annotations

from fractions import Fraction as F

import flint
import pytest

from riccati_verify.checker import _lohner as L
from riccati_verify.checker._lohner import enclose_lohner_params
from riccati_verify.checker._validated_flow import _Field, ball_state
from riccati_verify.core.balls import arb_of
from riccati_verify.numeric.flow import Segment, integrate_segments_mp

from tests.test_lohner import (_check_hoe_step, _contains_mp, _coupled_d2, _coupled_d2_problem, _encloses_tightly,
                               _hoe_setup, _one_route)

PREC = 200


def _dyadic_frame(n: int) -> flint.arb_mat:
    """A fixed invertible, far from orthogonal point matrix with dyadic entries."""
    return flint.arb_mat(n, n, [arb_of(F(1) if i == j else F((3 * i + 5 * j) % 7 - 3, 8))
                                for i in range(n) for j in range(n)])


def _frame(var, co, Fl, P, m, S):
    Pi = P.inv()
    ms, Ss = Fl.coefficients(m, S, 1)
    return L._Frame(L._Basis(P, Pi), var.df(m, S), co.to_vector(ms[1], Ss[1]))


@pytest.mark.parametrize("mean", [True, False])
def test_frame_coefficients_contain_the_plain_coefficients_of_sampled_starts(mean):
    """P·y_k(Y0) ∋ x_k(x0) (k ≥ 1) and G̃_k ∋ P⁻¹·(Taylor coefficient of Df(x(t)))·P for sampled
    x0 = x̂ + P y, y ∈ Y0, with the x_k from the plain recursion at the exact point x0; a frame whose
    P⁻¹f(x̂) is dropped misses them (the test can fail)."""
    A, B, V = _coupled_d2()
    b = (F(1, 3), F(-1, 5)) if mean else (F(0), F(0))
    m0 = (F(1), F(-1, 2)) if mean else (F(0), F(0))
    K, r = 7, F(1, 1000)
    with flint.ctx.workprec(PREC):
        Fl = _Field(A, B, V, b)
        co = L._Coords(2, mean)
        var = L._Variational(Fl, co)
        m, S = ball_state(m0, ((F(2), F(1, 3)), (F(1, 3), F(1))), PREC)
        n = co.n
        P = _dyadic_frame(n)
        fr = _frame(var, co, Fl, P, m, S)
        Y0 = flint.arb_mat(n, 1, [flint.arb(0, arb_of(r))] * n)
        ys, Gs = L._frame_coefficients(var, fr, Y0, K)
        xc = co.to_vector(m, S)
        samples = [[(-1) ** (i + s) * r * F(s + 1, 3) for i in range(n)] for s in range(3)] + [[F(0)] * n]
        for y in samples:
            x0 = xc + P * flint.arb_mat(n, 1, [arb_of(v) for v in y])
            xm, xS = Fl.coefficients(*co.to_state(x0), K)
            G = var.coefficients(xm, xS, 1)[1]           # Df(x0)
            for k in range(1, K + 1):
                Pyk = P * ys[k]
                xk = co.to_vector(xm[k], xS[k])
                assert all(Pyk[a, 0].contains(xk[a, 0]) for a in range(n)), (y, k)
            G0 = P * Gs[0] * P.inv()
            assert all(G0[a, c].overlaps(G[a, c]) for a in range(n) for c in range(n))
        assert max(float(abs(ys[k][a, 0].mid())) for k in range(2, K + 1) for a in range(n)) > 1e-3
        fr.f0 = fr.f0 * 0                                  # a wrong frame: P⁻¹f(x̂) dropped
        bad = L._frame_coefficients(var, fr, Y0, K)[0]
        xm, xS = Fl.coefficients(m, S, K)
        assert not all((P * bad[1])[a, 0].contains(co.to_vector(xm[1], xS[1])[a, 0]) for a in range(n))


@pytest.mark.parametrize("tau", [F(1), pytest.param(F(4), marks=pytest.mark.slow)])
def test_a_framed_run_encloses_the_mpmath_solution_and_uses_the_frame(tau, monkeypatch):
    """The coupled d = 2 flow with local_frame=True: contains the 50-digit solution, stays tight, and
    the framed box was actually taken (the test would not notice a frame that is never used)."""
    p, g = _coupled_d2_problem()
    enc = _framed_run(monkeypatch, p, g, tau)
    _encloses_tightly(enc, p, g, tau)


def _framed_run(monkeypatch, p, g, tau):
    """enclose_lohner_params with local_frame=True and the frame taken at every step (FRAME_GAIN made
    huge: soundness does not depend on it), asserting that the framed box was actually used."""
    calls = []
    real = L._box_framed

    def spy(*a):
        calls.append(1)
        return real(*a)
    monkeypatch.setattr(L, "_box_framed", spy)
    monkeypatch.setattr(L, "FRAME_GAIN", 1e30)
    enc = enclose_lohner_params(p, g.mean, g.cov, tau, high_order_box=True, local_frame=True)
    assert enc.ok, enc.reason
    assert calls
    return enc


@pytest.mark.parametrize("route", ["point 3'", "point 3"])
def test_a_framed_step_contains_the_closed_form_derivative(monkeypatch, route):
    """d = 1, Σ alone: one `_step_hoe` in the frame P = 3/2 (an arbitrary invertible P), each framed
    Jacobian remainder route alone: y ∋ σ(h), Jh ∋ ∂σ(h)/∂σ0, and the polynomial alone misses it."""
    monkeypatch.setattr(L, "JAC_TOL", 1.0)
    args, framed = _framed_args()
    if route == "point 3'":
        monkeypatch.setattr(L, "_majorant_remainders", lambda g, hb, p, *a: [flint.arb("inf")] * (p + 1))
    else:
        _one_route(monkeypatch, L, route)

    real = L._step_hoe
    monkeypatch.setattr(L, "_step_hoe", lambda *a: real(*framed))
    _check_hoe_step(L, args, 4)


def _framed_args():
    """`_hoe_setup`'s step (d = 1, h = 1/32) and the same step's arguments in the frame P = 3/2."""
    args = _hoe_setup(F(1, 32))
    var, co = args[1], args[2]
    ms, Ss, K, Kj = args[6], args[7], args[10], args[11]
    with flint.ctx.workprec(64):
        P = flint.arb_mat([[arb_of(F(3, 2))]])
        m, S = ms[0] * 1, Ss[0] * 1
        fr = L._Frame(L._Basis(P, P.inv()), var.df(m, S), co.to_vector(ms[1] * 1, Ss[1] * 1))
        ys_X = L._frame_coefficients(var, fr, flint.arb_mat(1, 1), L._box_order(K, Kj))[0]
    return args, args + (None, fr, co.to_vector(ms[0], Ss[0]), ys_X)


def test_a_framed_step_is_refused_without_its_a_priori_box(monkeypatch):
    """Point 6 with point 1' in the frame: when Y_y ⊂ int E_y fails on every candidate the step is
    refused (a float: a smaller h), however small its remainder would be."""
    monkeypatch.setattr(L, "JAC_TOL", 1.0)
    _, framed = _framed_args()
    with flint.ctx.workprec(PREC):
        assert not isinstance(L._step_hoe(*framed), float)       # the honest framed step is accepted
        monkeypatch.setattr(L, "_strictly_inside", lambda E, Y: False)
        assert isinstance(L._step_hoe(*framed), float)


def test_the_frame_basis_block_diagonalises_a_real_matrix():
    """`_frame_basis` (a heuristic: any invertible P is sound) of S·diag(−1, −2, [[−1/2, −3], [3, −1/2]])·S⁻¹:
    P⁻¹LP is block diagonal up to rounding, with the eigenvalues' real parts on its diagonal and one
    2×2 rotation block (the real eigenvectors keep their direction although a complex solver returns
    them times an arbitrary phase); every column has max-abs 1; a non-finite matrix gives None."""
    rows = [[-1, 0, 0, 0], [0, -2, 0, 0], [0, 0, F(-1, 2), -3], [0, 0, 3, F(-1, 2)]]
    with flint.ctx.workprec(PREC):
        S = flint.arb_mat([[1, 2, 0, 1], [0, 1, 3, 0], [1, 0, 1, 2], [2, 1, 0, 1]])
        Lm = S * flint.arb_mat([[arb_of(F(x)) for x in r] for r in rows]) * S.inv()
        P = L._frame_basis(Lm)
        assert P is not None
        T = P.inv() * Lm * P
        diag = sorted(round(float(T[i, i].mid()), 6) for i in range(4))
        assert diag == [-2.0, -1.0, -0.5, -0.5], diag
        off = [(i, j) for i in range(4) for j in range(4) if i != j and float(abs(T[i, j]).upper()) > 1e-6]
        assert len(off) == 2 and abs(off[0][0] - off[0][1]) == 1, off       # one adjacent rotation pair
        assert abs(abs(float(T[off[0]].mid()) * float(T[off[1]].mid())) - 9) < 1e-6
        for j in range(4):
            assert abs(max(float(abs(P[i, j].mid())) for i in range(4)) - 1) < 1e-8
        bad = flint.arb_mat(Lm)
        bad[0, 0] = flint.arb("nan")
        assert L._frame_basis(bad) is None


@pytest.mark.parametrize("delta", [F(1, 16), pytest.param(F(1, 1024), marks=pytest.mark.slow)])
def test_any_invertible_frame_keeps_the_enclosure(monkeypatch, delta):
    """Soundness does not depend on the basis being an eigenbasis (docstring point 6: any invertible
    point P): the coupled d = 2 flow with `_frame_basis` replaced by P = (all ones) + δI, whose
    condition number is about 5/δ (80 and 5·10³), still contains the 50-digit solution, with the
    frame taken at every step."""
    p, g = _coupled_d2_problem()
    n = 5

    def basis(Lm):
        return flint.arb_mat(n, n, [arb_of(F(1) + (delta if i == j else 0)) for i in range(n) for j in range(n)])
    monkeypatch.setattr(L, "_frame_basis", basis)
    tau = F(1, 2)
    enc = _framed_run(monkeypatch, p, g, tau)
    m, S = integrate_segments_mp([Segment(tau, p)], g, dps=50)
    _contains_mp(enc, m, S)

"""The producer's own enclosure route, the one-copy formulas and the result protocol (issue 12).

Every verification routine here has a wrong input it must reject.
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import flint
import numpy as np
import pytest

from riccati_verify.core import balls, exact
from riccati_verify.core.bernoulli import scalar_blowup_time, scalar_blows_up
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.core.result import Result, Status
from riccati_verify.certify import krawczyk
from riccati_verify.certify import stability as st
from riccati_verify.checker import verify_certificate

# d = 1, a = 1, vβ = −1/2: σ* = 2 (exact); GENERAL's equilibrium is only enclosed by a ball
SCALAR = Params.from_arrays([[1]], [[F(-1, 2)]], 1)
# a non-rational equilibrium: A = [[1, 1/3], [0, 1]], B = −I, V = [[1, 1/5], [0, 1]]
GENERAL = Params(exact.as_matrix([[1, F(1, 3)], [0, 1]]), exact.identity(2, -1),
                 exact.as_matrix([[1, F(1, 5)], [0, 1]]), (F(0), F(0)))


def _newton(params):
    sols = [S for S in st.newton_equilibria(params, seeds=[np.eye(params.dim)], n_random=0)
            if np.linalg.eigvalsh(S)[0] > 0]
    assert sols
    return sols[0]


def test_exact_zero_is_accepted_and_a_wrong_centre_is_rejected():
    assert krawczyk.has_zero_in_ball(SCALAR, ((F(2),),), F(0))
    assert not krawczyk.has_zero_in_ball(SCALAR, ((F(2) + F(1, 10 ** 9),),), F(0))
    assert not krawczyk.has_zero_in_ball(SCALAR, ((F(2),),), F(-1))


def test_krawczyk_ball_accepted_where_the_checker_accepts_and_rejected_when_shifted():
    enc = st.enclose_equilibrium(GENERAL, _newton(GENERAL))
    assert enc is not None and enc.radius > 0 and enc.positive_definite
    cert = st.equilibrium_certificate(GENERAL, enc)
    assert cert is not None and verify_certificate(cert).valid
    # a centre moved by 100 radii: the ball no longer contains the zero
    moved = tuple(tuple(x + 100 * enc.radius for x in r) for r in enc.center)
    assert not krawczyk.has_zero_in_ball(GENERAL, moved, enc.radius)
    # a wrong model: the same ball is not a zero of F for a different A
    wrong = Params(exact.add(GENERAL.A, exact.identity(2, F(1, 100))), GENERAL.B, GENERAL.V, GENERAL.b)
    assert not krawczyk.has_zero_in_ball(wrong, enc.center, enc.radius)
    # a non-symmetric centre is not a point of the symmetric ball
    asym = ((enc.center[0][0], enc.center[0][1] + F(1, 7)), enc.center[1])
    assert not krawczyk.has_zero_in_ball(GENERAL, asym, enc.radius)


def test_ball_positive_definite_rejects_an_indefinite_ball():
    assert krawczyk.ball_positive_definite(exact.identity(2), F(1, 10))
    assert not krawczyk.ball_positive_definite(exact.identity(2), F(2))
    assert not krawczyk.ball_positive_definite(exact.as_matrix([[1, 0], [0, -1]]), F(0))


def test_stability_imports_no_checker_module_but_the_public_door():
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(st))
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "riccati_verify.checker"
             for a in n.names}
    mods = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert names == {"verify_certificate"}
    assert not any(m and m.startswith("riccati_verify.checker.") for m in mods)


def test_checked_certificate_refuses_a_wrong_witness():
    good = st.checked_certificate("equilibrium", {"positive_definite": True}, SCALAR, None,
                                  {"center": ((F(2),),), "radius": F(0)}, "exact")
    assert good is not None
    assert st.checked_certificate("equilibrium", {"positive_definite": True}, SCALAR, None,
                                  {"center": ((F(3),),), "radius": F(0)}, "exact") is None


def test_lyapunov_solve_is_exact_and_none_when_singular():
    A = exact.as_matrix([[-1, 2], [0, -3]])
    Q = exact.as_matrix([[-1, F(1, 2)], [F(1, 2), -2]])
    P = exact.lyapunov_solve(A, Q)
    assert P is not None and exact.is_symmetric(P)
    assert exact.add(exact.matmul(exact.transpose(A), P), exact.matmul(P, A)) == Q
    wrong = exact.add(P, exact.identity(2, F(1, 10 ** 6)))
    assert exact.add(exact.matmul(exact.transpose(A), wrong), exact.matmul(wrong, A)) != Q
    assert exact.lyapunov_solve(exact.as_matrix([[0, 1], [-1, 0]]), exact.identity(2)) is None


def test_one_ldl_for_fractions_and_balls():
    S = exact.as_matrix([[4, 2, 0], [2, 3, 1], [0, 1, 5]])
    piv = exact.ldl_pivots(S)
    assert piv == [4, 2, F(9, 2)]     # ratios of leading minors 4, 8, 36
    ball = balls.ldl_pivots(balls.arb_matrix(S))
    assert all(b.contains(flint.fmpq(p.numerator, p.denominator)) for b, p in zip(ball, piv))
    # indefinite: stops at the first zero pivot / rejects positive definiteness
    assert exact.ldl_pivots(exact.as_matrix([[0, 1], [1, 0]])) == [0]
    assert not balls.proves_positive_definite(balls.arb_matrix(exact.as_matrix([[1, 2], [2, 1]])))


def test_one_scalar_blowup_time_in_every_arithmetic():
    a, c, s0 = F(1, 2), F(1), F(1)
    assert scalar_blows_up(a, c, s0) and not scalar_blows_up(F(-2), c, s0) and not scalar_blows_up(a, F(-1), s0)
    t = scalar_blowup_time(a, c, s0)
    assert math.isclose(t, math.log(1.5))               # ln(1 + (1/2)/1) / (2 · 1/2)
    assert scalar_blowup_time(F(0), F(2), F(1, 4)) == 1
    ball = scalar_blowup_time(balls.arb_of(a), balls.arb_of(c), balls.arb_of(s0))
    assert ball.contains(flint.arb(t)) or abs(float(ball.mid()) - t) < 1e-15
    assert not ball.contains(flint.arb(t) + flint.arb(1e-10))


def test_results_follow_the_protocol():
    from riccati_verify.certify.blowup import blowup_time
    from riccati_verify.certify.hypotheses import HypothesisCheck, all_hold

    s = Gaussian.from_arrays([0], [[1]])
    r = st.classify_regime(SCALAR, s)
    assert isinstance(r, Result) and r.status is Status.CERTIFIED and "regime" in r.to_dict()
    eqs = st.find_equilibria(SCALAR, n_random=0)
    assert isinstance(eqs, Result) and eqs.status is Status.CERTIFIED and all(isinstance(e, Result) for e in eqs)
    assert eqs.to_dict()["equilibria"] == [e.to_dict() for e in eqs]
    b = blowup_time(Params.from_arrays([[F(1, 2)]], [[1]], 1), s, digits=10)
    assert isinstance(b, Result) and b.status is Status.CERTIFIED and verify_certificate(b.certificate).valid
    h = [HypothesisCheck("x", True), HypothesisCheck("y", None)]
    assert all(isinstance(c, Result) for c in h)
    assert all_hold(h)[0] is Status.NOT_CERTIFIED and all_hold(h[:1])[0] is Status.CERTIFIED
    assert all_hold([HypothesisCheck("z", False)] + h)[0] is Status.REFUTED

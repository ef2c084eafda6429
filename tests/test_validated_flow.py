"""The validated Taylor enclosure of eq. 1.1 (certificates/_validated_flow.py).

Every enclosure is compared with an independent route: mpmath's Taylor
integrator at 50 digits (a point value without an error bound), or an exact
closed form (Bernoulli / Riccati solutions) evaluated exactly or in arb.
"""

from __future__ import annotations

from fractions import Fraction as F

import flint
import mpmath
import pytest
from hypothesis import given, strategies as st

from riccati_verify.core import exact
from riccati_verify.core.balls import arb_of
from riccati_verify.checker._validated_flow import ball_state, enclose_segment
from riccati_verify.numeric.flow import Segment, integrate_segments_mp
from riccati_verify.core.model import Gaussian, Params

PREC = 320
# mpmath's odefun at 50 digits has local errors ~1e-50 and no global bound; allowing
# 1e-40 between its point value and our ball leaves 10 digits for accumulation
# while any real enclosure bug (a missing term, a wrong coefficient) is far larger.
MPMATH_SLACK = F(1, 10 ** 40)


class _prec:
    """Run a block at a given flint precision."""

    def __init__(self, bits):
        self.bits = bits

    def __enter__(self):
        self.old, flint.ctx.prec = flint.ctx.prec, self.bits

    def __exit__(self, *exc):
        flint.ctx.prec = self.old


def _ball(x) -> flint.arb:
    return arb_of(F(x))


def _dist_to_ball(ball: flint.arb, x: flint.arb) -> flint.arb:
    """An upper bound on the distance from point x to the ball (0 if inside)."""
    lo, hi = ball.lower(), ball.upper()
    return max(flint.arb(0), (lo - x).upper(), (x - hi).upper())


rat = st.integers(-25, 25).map(lambda k: F(k, 100))


@st.composite
def segments(draw):
    """Well-conditioned attention-on segments: entries |x| ≤ 1/4, Σ0 = I + small symmetric part,
    duration ≤ 3/8 — below the norm-comparison lower bound on the blow-up time (MATH.md §8) for d ≤ 3."""
    d = draw(st.integers(1, 3))
    mat = lambda: tuple(tuple(draw(rat) for _ in range(d)) for _ in range(d))
    A, B, V = mat(), mat(), mat()
    if not any(x for r in V for x in r) or not any(x for r in B for x in r):
        V = exact.identity(d, F(1, 4))
        B = exact.identity(d, F(-1, 5))
    b = tuple(draw(rat) for _ in range(d))
    m0 = tuple(draw(rat) for _ in range(d))
    off = draw(rat) / 2
    cov = tuple(tuple(F(1) if i == j else off for j in range(d)) for i in range(d))
    tau = F(draw(st.integers(1, 3)), 8)
    return d, Params(A, B, V, b), Gaussian(m0, cov), tau


@given(segments())
def test_enclosure_contains_high_precision_solution_and_is_tight(seg):
    d, p, g, tau = seg
    enc = enclose_segment(*ball_state(g.mean, g.cov), p.A, p.B, p.V, p.b, tau)
    assert enc.ok, enc.reason
    assert enc.radius < 1e-25
    m, S = integrate_segments_mp([Segment(tau, p)], g, dps=50)
    with _prec(PREC):
        slack = arb_of(MPMATH_SLACK)
        for i in range(d):
            assert _dist_to_ball(enc.mean[i, 0], flint.arb(mpmath.nstr(m[i], 60))) <= slack
            for j in range(d):
                assert _dist_to_ball(enc.cov[i, j], flint.arb(mpmath.nstr(S[i][j], 60))) <= slack


@pytest.mark.parametrize("a,v,beta,s0,m0,tau", [
    (F(1, 2), F(1), F(-1), F(2), F(1), F(1, 2)),        # converging (vβ < 0, a > 0)
    (F(-1, 3), F(1, 2), F(1, 2), F(1), F(-2), F(3, 4)),  # same signs, but a < 0 and short horizon
    (F(0), F(2), F(-1, 4), F(3, 2), F(1, 3), F(1)),      # a = 0
])
def test_scalar_bernoulli_closed_form(a, v, beta, s0, m0, tau):
    """d = 1, b = 0: u = 1/σ solves u̇ = −2a u − 2vβ, so σ(t) = 1/(e^{−2at}(1/σ0 + vβ/a) − vβ/a)
    (a ≠ 0) or 1/(1/σ0 − 2vβt) (a = 0); d/dt log σ = 2a + 2vβσ turns ṁ = (a + v + vβσ)m into
    m(t) = m0 e^{vt} √(σ(t)/σ0).  Both evaluated in arb; the enclosure must contain them."""
    enc = enclose_segment(*ball_state((m0,), ((s0,),)), ((a,),), ((beta,),), ((v,),), (F(0),), tau)
    assert enc.ok, enc.reason
    with _prec(PREC):
        A, vb, S0, t = _ball(a), _ball(v * beta), _ball(s0), _ball(tau)
        u = (1 / S0 - 2 * vb * t) if a == 0 else ((-2 * A * t).exp() * (1 / S0 + vb / A) - vb / A)
        sigma = 1 / u
        mean = _ball(m0) * (_ball(v) * t).exp() * (sigma / S0).sqrt()
        assert enc.cov[0, 0].contains(sigma), (enc.cov[0, 0], sigma)
        assert enc.mean[0, 0].contains(mean), (enc.mean[0, 0], mean)
        assert enc.cov[0, 0].rad() < 1e-40


@pytest.mark.parametrize("cov0,B,tau", [
    (((F(2), F(1, 2)), (F(1, 2), F(1))), ((F(1, 3), F(0)), (F(0), F(-1, 2))), F(1, 2)),
    (((F(1), F(0), F(1, 4)), (F(0), F(2), F(0)), (F(1, 4), F(0), F(3))),
     ((F(-1), F(1, 5), F(0)), (F(1, 5), F(1, 10), F(1, 7)), (F(0), F(1, 7), F(-1, 3))), F(1, 3)),
    (((F(1),),), ((F(1),),), F(49, 100)),              # σ = 1/(1 − 2t): 50 at t = 0.49 (T* = 1/2)
])
def test_riccati_segment_exact_rational(cov0, B, tau):
    """V = I, A = 0, symmetric B: P = Σ⁻¹ obeys Ṗ = −2B (MATH.md §7), so Σ(τ) = (Σ0⁻¹ − 2τB)⁻¹ exactly."""
    d = len(cov0)
    P0 = tuple(exact.solve(cov0, col) for col in exact.identity(d))   # Σ0⁻¹ column by column (symmetric)
    Pt = exact.sub(P0, exact.scale(2 * tau, B))
    expected = tuple(exact.solve(Pt, col) for col in exact.identity(d))
    enc = enclose_segment(*ball_state((F(0),) * d, cov0), exact.zeros(d), B, exact.identity(d), (F(0),) * d, tau)
    assert enc.ok, enc.reason
    with _prec(PREC):
        for i in range(d):
            assert enc.mean[i, 0].contains(flint.arb(0))
            for j in range(d):
                assert enc.cov[i, j].contains(_ball(expected[j][i])), (i, j, enc.cov[i, j], expected[j][i])
    assert enc.radius < 1e-30


def test_blowup_inside_the_segment_is_reported_not_certified():
    """d = 1, a = 0, v = β = 1, σ0 = 1: σ = 1/(1 − 2t) blows up at T* = 1/2 inside a segment of length 1."""
    enc = enclose_segment(*ball_state((F(0),), ((F(1),),)), ((F(0),),), ((F(1),),), ((F(1),),), (F(0),), F(1))
    assert not enc.ok and enc.mean is None and enc.cov is None
    assert "blow-up" in enc.reason


def test_a_wrong_enclosure_would_be_caught():
    """The containment checks above are not vacuous: the same enclosure does not contain a
    value moved by 1e-30 (ten orders above its radius), e.g. a Σ from a wrong coefficient."""
    enc = enclose_segment(*ball_state((F(0),), ((F(1),),)), ((F(0),),), ((F(1),),), ((F(1),),), (F(0),), F(1, 4))
    with _prec(PREC):
        assert enc.cov[0, 0].contains(_ball(2))
        assert not enc.cov[0, 0].contains(_ball(F(2) + F(1, 10 ** 30)))


@pytest.mark.parametrize("order", [2, 3, 5])
def test_low_order_loose_tolerance_still_encloses(order):
    """With order 2–5 and a 2^-12 step tolerance the Taylor remainder x_K(E)·h^K is a large part of
    each step, so the a-priori box E and the remainder carry the soundness: the enclosure is wide
    (radius > 1e-12) but must still contain the exact σ(t) = 1/(1 − 2t) and m(t) = m0 e^t √σ(t)
    (d = 1, a = 0, v = β = 1, b = 0; the Bernoulli closed form above) at t = 3/8, where σ grows 4-fold."""
    tau = F(3, 8)
    enc = enclose_segment(*ball_state((F(1),), ((F(1),),)), ((F(0),),), ((F(1),),), ((F(1),),), (F(0),), tau,
                          order=order, tol_bits=12)
    assert enc.ok, enc.reason
    with _prec(PREC):
        sigma = 1 / (1 - 2 * _ball(tau))
        assert enc.cov[0, 0].contains(sigma), (enc.cov[0, 0], sigma)
        assert enc.mean[0, 0].contains(_ball(tau).exp() * sigma.sqrt())
    assert enc.radius > 1e-12


def test_no_a_priori_box_is_claimed_across_a_blowup():
    """The Picard test must refuse a step that contains the pole: σ' = 2σ² (d = 1, a = 0, v = β = 1),
    σ0 = 1 blows up at t = 1/2, so no bounded E can contain the trajectory on [0, 1].  A step of
    length 1/16 (σ grows from 1 to 8/7) must still get a box, and the box must contain σ on [0, 1/16]."""
    from riccati_verify.checker._validated_flow import _Field, _picard_box

    field = _Field(((F(0),),), ((F(1),),), ((F(1),),), (F(0),))
    with _prec(PREC):
        m, S = ball_state((F(0),), ((F(1),),))
        assert _picard_box(m, S, field, flint.arb(0).union(_ball(1)), F(1)) is None
        box = _picard_box(m, S, field, flint.arb(0).union(_ball(F(1, 16))), F(1, 16))
        assert box is not None
        for t in (F(0), F(1, 32), F(1, 16)):
            assert box[1][0, 0].contains(1 / (1 - 2 * _ball(t)))


def test_the_mean_recursion_is_skipped_only_for_an_exact_zero_mean_and_b():
    """m ≡ 0 only when m0 = 0 and b = 0 exactly: then the mean coefficients (and the segment's
    final mean) are exact zeros; with b ≠ 0 or a tiny m0 ≠ 0 they follow ṁ(0) = (A + V + VΣB) m0 + b."""
    from riccati_verify.checker._validated_flow import _Field

    A = ((F(-1), F(1, 2)), (F(0), F(-1, 3)))
    B = ((F(1, 4), F(-1, 8)), (F(1, 5), F(-1, 4)))
    V = ((F(1, 2), F(0)), (F(1, 8), F(1, 3)))
    S0 = ((F(2), F(1, 3)), (F(1, 3), F(1)))
    with _prec(PREC):
        for m0, b in (((F(0), F(0)), (F(1, 3), F(-1, 5))), ((F(1, 2 ** 100), F(0)), (F(0), F(0)))):
            Fl = _Field(A, B, V, b)
            m, S = ball_state(m0, S0)
            ms, _ = Fl.coefficients(m, S, 3)
            M = exact.add(exact.add(A, V), exact.matmul(exact.matmul(V, S0), B))
            rhs = tuple(x + y for x, y in zip(exact.matvec(M, m0), b))
            with _prec(2 * PREC):     # the rational as a ball far thinner than the coefficient's
                for i in range(2):
                    assert ms[1][i, 0].contains(_ball(rhs[i])) and rhs[i] != 0
            assert any(not ms[k][i, 0].is_zero() for k in (2, 3) for i in range(2))
        Fl = _Field(A, B, V, (F(0), F(0)))
        ms, _ = Fl.coefficients(*ball_state((F(0), F(0)), S0), 3)
        assert all(ms[k][i, 0].is_zero() for k in range(4) for i in range(2))
    enc = enclose_segment(*ball_state((F(0), F(0)), S0), A, B, V, (F(0), F(0)), F(1, 2))
    assert enc.ok and all(enc.mean[i, 0].is_zero() for i in range(2))
    assert all(enc.cov[i, j].rad() < 1e-30 for i in range(2) for j in range(2))

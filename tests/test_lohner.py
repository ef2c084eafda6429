"""Lohner's QR enclosure of eq. 1.1 (checker/_lohner.py) against independent routes.

Closed forms evaluated in arb: the d = 1 Bernoulli solution, and for B = V = 0
the linear flow Σ(t) = e^{At} Σ0 e^{Aᵀt}, m(t) = e^{At} m0 (b = 0), with the
matrix exponential in ball arithmetic (arb_mat.exp).  mpmath's Taylor
integrator at 50 digits for a coupled d = 2 case.
"""

from __future__ import annotations

from fractions import Fraction as F

import flint
import mpmath
import pytest

from riccati_verify.core.balls import arb_matrix, arb_of
from riccati_verify.checker._lohner import MAX_DURATION, enclose_lohner, enclose_lohner_params
from riccati_verify.checker._validated_flow import ball_state, enclose_segment
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.numeric.flow import Segment, integrate_segments_mp

PREC = 256


def _bernoulli(a, v, beta, s0, m0, tau):
    """d = 1, b = 0: σ(t) = 1/(e^{−2at}(1/σ0 + vβ/a) − vβ/a), m(t) = m0 e^{vt} √(σ(t)/σ0) (a ≠ 0)."""
    A, vb, S0, t = arb_of(a), arb_of(v * beta), arb_of(s0), arb_of(tau)
    sigma = 1 / ((-2 * A * t).exp() * (1 / S0 + vb / A) - vb / A)
    return arb_of(m0) * (arb_of(v) * t).exp() * (sigma / S0).sqrt(), sigma


@pytest.mark.parametrize("tau", [F(1, 2), F(3), F(10)])
def test_bernoulli_closed_form_is_enclosed_and_tight(tau):
    a, v, beta, s0, m0 = F(-1, 2), F(1), F(-1), F(2), F(1)
    enc = enclose_lohner(*ball_state((m0,), ((s0,),), PREC), ((a,),), ((beta,),), ((v,),), (F(0),), tau)
    assert enc.ok, enc.reason
    with flint.ctx.workprec(PREC):
        mean, sigma = _bernoulli(a, v, beta, s0, m0, tau)
        assert enc.cov[0, 0].contains(sigma), (enc.cov[0, 0], sigma)
        assert enc.mean[0, 0].contains(mean), (enc.mean[0, 0], mean)
    # not vacuous: relative radius far below any tolerance a certificate uses
    assert enc.radius < 1e-25 * max(1.0, float(abs(enc.mean[0, 0]).upper()))


def _linear_example():
    A = ((F(-1), F(3, 4), F(0)), (F(-3, 4), F(-1), F(1, 2)), (F(0), F(-1, 2), F(-1, 2)))
    S0 = ((F(2), F(1, 3), F(0)), (F(1, 3), F(1), F(1, 5)), (F(0), F(1, 5), F(3, 2)))
    return A, S0, (F(1), F(-1, 2), F(1, 3))


@pytest.mark.parametrize("tau", [F(1), pytest.param(F(5), marks=pytest.mark.slow),
                                 pytest.param(F(12), marks=pytest.mark.slow)])
def test_linear_flow_matches_the_matrix_exponential(tau):
    """B = V = 0, b = 0: the enclosure contains e^{Aτ}m0 and e^{Aτ}Σ0e^{Aᵀτ}, and is tight
    although the plain-ball radius would grow like e^{‖|A|‖τ}·e^{...} (A has a rotation part)."""
    A, S0, m0 = _linear_example()
    d = len(A)
    Z = tuple((F(0),) * d for _ in range(d))
    enc = enclose_lohner(*ball_state(m0, S0, PREC), A, Z, Z, (F(0),) * d, tau)
    assert enc.ok, enc.reason
    with flint.ctx.workprec(PREC):
        E = (arb_matrix(A) * arb_of(tau)).exp()
        S = E * arb_matrix(S0) * E.transpose()
        m = E * arb_matrix(tuple((x,) for x in m0))
        for i in range(d):
            assert m[i, 0].rad() < 1e-60 and enc.mean[i, 0].overlaps(m[i, 0]), (i, enc.mean[i, 0], m[i, 0])
            for j in range(d):
                assert S[i, j].rad() < 1e-60 and enc.cov[i, j].overlaps(S[i, j]), (i, j, enc.cov[i, j], S[i, j])
    assert enc.radius < 1e-28


@pytest.mark.slow
def _coupled_d2_problem():
    """A coupled d = 2 example (b ≠ 0, no structure) and its initial state."""
    p = Params(((F(-1), F(1, 2)), (F(-1, 2), F(-3, 4))), ((F(1, 4), F(-1, 8)), (F(0), F(-1, 4))),
               ((F(1, 2), F(0)), (F(1, 8), F(1, 3))), (F(1, 4), F(-1, 4)))
    g = Gaussian((F(1), F(-1)), ((F(1), F(1, 4)), (F(1, 4), F(2))))
    return p, g


def _contains_mp(enc, m, S):
    """The enclosure contains the 50-digit mpmath solution (m, S), up to 1e-40."""
    with flint.ctx.workprec(PREC):
        slack = arb_of(F(1, 10 ** 40))
        for i in range(2):
            assert enc.mean[i, 0].contains(flint.arb(mpmath.nstr(m[i], 60)) + flint.arb(0, slack))
            for j in range(2):
                assert enc.cov[i, j].overlaps(flint.arb(mpmath.nstr(S[i][j], 60)) + flint.arb(0, slack))


def _encloses_tightly(enc, p, g, tau):
    """enc (ok) contains the 50-digit solution at tau, a centre shifted by 1e-25 is not contained (the
    enclosure is tight, not merely large), and its radius is below 1e-28."""
    assert enc.ok, enc.reason
    m, S = integrate_segments_mp([Segment(tau, p)], g, dps=50)
    _contains_mp(enc, m, S)
    with flint.ctx.workprec(PREC):
        for i in range(2):
            for j in range(2):
                assert not enc.cov[i, j].contains(flint.arb(mpmath.nstr(S[i][j], 60)) + arb_of(F(1, 10 ** 25)))
    assert enc.radius < 1e-28


def test_coupled_d2_matches_mpmath():
    p, g = _coupled_d2_problem()
    for tau in (F(1), F(4)):
        enc = enclose_lohner_params(p, g.mean, g.cov, tau)
        assert enc.ok, enc.reason
        m, S = integrate_segments_mp([Segment(tau, p)], g, dps=50)
        _contains_mp(enc, m, S)
        assert enc.radius < 1e-28


@pytest.mark.slow
def test_tiny_initial_ball_contracts_and_a_shifted_centre_is_rejected():
    """From a ball of radius 1e-30 the contracting linear flow shrinks the radius (plain balls
    grow it); the claim 'Σ_00(τ) = true value + 1e-29' (a shifted centre) is not contained."""
    A, S0, m0 = _linear_example()
    d = len(A)
    Z = tuple((F(0),) * d for _ in range(d))
    tau = F(6)
    with flint.ctx.workprec(PREC):
        m, S = ball_state(m0, S0, PREC)
        for i in range(d):
            m[i, 0] = m[i, 0] + flint.arb(0, 1e-30)
            for j in range(d):
                S[i, j] = S[i, j] + flint.arb(0, 1e-30)
    enc = enclose_lohner(m, S, A, Z, Z, (F(0),) * d, tau)
    assert enc.ok, enc.reason
    assert enc.radius < 1e-30
    plain = enclose_segment(m, S, A, Z, Z, (F(0),) * d, tau, prec=PREC)
    assert not plain.ok or plain.radius > 10 * enc.radius
    with flint.ctx.workprec(PREC):
        E = (arb_matrix(A) * arb_of(tau)).exp()
        true = (E * arb_matrix(S0) * E.transpose())[0, 0]
        assert enc.cov[0, 0].overlaps(true)
        assert true.rad() < 1e-60 and not enc.cov[0, 0].overlaps(true + flint.arb(1e-29))


def test_blowup_inside_the_horizon_is_reported_not_certified():
    """σ' = 2σ² (d = 1, a = 0, v = β = 1), σ0 = 1: blow-up at T* = 1/2 inside [0, 1]."""
    enc = enclose_lohner(*ball_state((F(0),), ((F(1),),)), ((F(0),),), ((F(1),),), ((F(1),),), (F(0),), F(1))
    assert not enc.ok and enc.mean is None and enc.cov is None
    assert "blow-up" in enc.reason
    assert enc.t < F(1, 2)


def test_bad_horizons_are_refused_with_a_reason():
    args = (*ball_state((F(0),), ((F(1),),)), ((F(-1),),), ((F(0),),), ((F(0),),), (F(0),))
    too_long = enclose_lohner(*args, MAX_DURATION + 1)
    assert not too_long.ok and "exceeds the limit" in too_long.reason
    assert not enclose_lohner(*args, F(0)).ok
    budget = enclose_lohner(*args, F(50), max_steps=3)
    assert not budget.ok and "step budget" in budget.reason


@pytest.mark.slow
def test_contracting_d8_long_horizon():
    """Issue 13 item 1's goal: d = 8, T = 50, final radius below 1e-20 from a point."""
    from riccati_verify.testing.systems import rotating_drift

    d = 8
    A, B, V, b = rotating_drift(d, F(-1), seed=1)
    S0 = tuple(tuple(F(int(i == j)) for j in range(d)) for i in range(d))
    enc = enclose_lohner(*ball_state(tuple(F(1, i + 1) for i in range(d)), S0), A, B, V, b, F(50))
    assert enc.ok, enc.reason
    assert enc.radius < 1e-20


def test_one_step_jacobian_contains_the_closed_form_derivative(monkeypatch):
    """d = 1, one Lohner step at a low Jacobian order (4), so the remainder bound ρ (norm majorant,
    module docstring point 3) is what makes Jh contain Dφ_h: the Bernoulli closed form gives
    ∂σ(h)/∂σ0 = σ(h)² e^{−2ah}/σ0² and m(h) = m0 e^{vh} (σ(h)/σ0)^{1/2}."""
    from riccati_verify.checker import _lohner as L
    from riccati_verify.checker._validated_flow import _Field

    monkeypatch.setattr(L, "JAC_TOL", 1.0)          # accept the wide low-order Jacobian
    a, v, beta, s0, m0, h = F(-1, 2), F(1), F(-1), F(2), F(1), F(1, 32)
    A, B, V, b = ((a,),), ((beta,),), ((v,),), (F(0),)
    K, Kj = 36, 4
    with flint.ctx.workprec(PREC):
        Fl = _Field(A, B, V, b)
        with flint.ctx.workprec(64):
            low = _Field(A, B, V, b)
        co = L._Coords(1)
        var = L._Variational(low, co)
        T2 = var.second_row_sums()
        mX, SX = ball_state((m0,), ((s0,),), PREC)
        ms, Ss = Fl.coefficients(mX, SX, K)
        with flint.ctx.workprec(64):
            xs, Xs = low.coefficients(mX * 1, SX * 1, Kj - 1)
        Pj = var.coefficients(xs, Xs, Kj - 1)
        step = L._step(low, var, co, T2, mX, SX, ms, Ss, Pj, h, K, Kj, 2.0 ** -60)
        assert not isinstance(step, float), step
        y, Jh, _ = step
        t, S0, vb, A0 = arb_of(h), arb_of(s0), arb_of(v * beta), arb_of(a)
        sig = 1 / ((-2 * A0 * t).exp() * (1 / S0 + vb / A0) - vb / A0)
        dsig = sig ** 2 * (-2 * A0 * t).exp() / S0 ** 2
        g = (arb_of(v) * t).exp()
        dm_dm0 = g * (sig / S0).sqrt()
        dm_ds0 = arb_of(m0) * g * (dsig / S0 - sig / S0 ** 2) / (2 * (sig / S0).sqrt())
        assert y[1, 0].contains(sig) and y[0, 0].contains(arb_of(m0) * dm_dm0)
        for (i, j), exact_ in {(0, 0): dm_dm0, (0, 1): dm_ds0, (1, 0): flint.arb(0), (1, 1): dsig}.items():
            assert Jh[i, j].contains(exact_), (i, j, Jh[i, j], exact_)
        # not vacuous: the polynomial of that order alone misses the derivative by more than 1e-6,
        # and ρ is below 1e-2
        assert 1e-9 < Jh[1, 1].rad() < 1e-2


# the covariance-only, high-order-box mode (the trajectory_convergence checker's flow)
FAST = dict(covariance_only=True, high_order_box=True)


@pytest.mark.parametrize("tau", [F(1, 2), F(10)])
def test_fast_mode_encloses_the_bernoulli_covariance(tau):
    a, v, beta, s0, m0 = F(-1, 2), F(1), F(-1), F(2), F(1)
    enc = enclose_lohner(*ball_state((m0,), ((s0,),), PREC), ((a,),), ((beta,),), ((v,),), (F(3),), tau, **FAST)
    assert enc.ok, enc.reason
    assert enc.mean is None      # the mean (and b) is not propagated in this mode
    with flint.ctx.workprec(PREC):
        _, sigma = _bernoulli(a, v, beta, s0, m0, tau)
        assert enc.cov[0, 0].contains(sigma), (enc.cov[0, 0], sigma)
        assert not enc.cov[0, 0].contains(sigma + flint.arb(F(1, 10 ** 20).numerator) / 10 ** 20)
    assert enc.radius < 1e-25


def test_fast_mode_matches_the_matrix_exponential():
    A, S0, m0 = _linear_example()
    d = len(A)
    Z = tuple((F(0),) * d for _ in range(d))
    tau = F(2)
    enc = enclose_lohner(*ball_state(m0, S0, PREC), A, Z, Z, (F(0),) * d, tau, **FAST)
    assert enc.ok, enc.reason
    with flint.ctx.workprec(PREC):
        E = (arb_matrix(A) * arb_of(tau)).exp()
        S = E * arb_matrix(S0) * E.transpose()
        for i in range(d):
            for j in range(d):
                assert S[i, j].rad() < 1e-60 and enc.cov[i, j].overlaps(S[i, j]), (i, j, enc.cov[i, j], S[i, j])
                assert not enc.cov[i, j].overlaps(S[i, j] + flint.arb(1) / 10 ** 24)
    assert enc.radius < 1e-28


def test_fast_mode_reports_a_blowup_inside_the_horizon():
    enc = enclose_lohner(*ball_state((F(0),), ((F(1),),)), ((F(0),),), ((F(1),),), ((F(1),),), (F(0),), F(1),
                         **FAST)
    assert not enc.ok and enc.cov is None and enc.t < F(1, 2)


@pytest.mark.slow
def test_fast_mode_coupled_d2_matches_mpmath():
    p = Params(((F(-1), F(1, 2)), (F(-1, 2), F(-3, 4))), ((F(1, 4), F(-1, 8)), (F(0), F(-1, 4))),
               ((F(1, 2), F(0)), (F(1, 8), F(1, 3))), (F(0), F(0)))
    g = Gaussian((F(0), F(0)), ((F(3), F(1, 4)), (F(1, 4), F(2))))
    tau = F(6)
    enc = enclose_lohner_params(p, g.mean, g.cov, tau, **FAST)
    assert enc.ok, enc.reason
    _, S = integrate_segments_mp([Segment(tau, p)], g, dps=50)
    with flint.ctx.workprec(PREC):
        slack = arb_of(F(1, 10 ** 40))
        for i in range(2):
            for j in range(2):
                assert enc.cov[i, j].overlaps(flint.arb(mpmath.nstr(S[i][j], 60)) + flint.arb(0, slack))
    assert enc.radius < 1e-28


@pytest.mark.parametrize("route", ["point 3'", "point 3"])
def test_high_order_box_one_step_jacobian_contains_the_closed_form_derivative(monkeypatch, route):
    """d = 1, Σ alone, one `_step_hoe` at Jacobian order 4: the remainder ρ on the high-order box is
    what makes Jh contain ∂σ(h)/∂σ0 = σ(h)² e^{−2ah}/σ0², and y contains σ(h).  Each route alone:
    ω p*/(1 − ω) from the variational coefficient on the box (docstring point 3': point 3's
    majorant made infinite), and point 3's majorant on the box (point 3' made to fail if reached)."""
    from riccati_verify.checker import _lohner as L

    monkeypatch.setattr(L, "JAC_TOL", 1.0)
    _one_route(monkeypatch, L, route)
    _check_hoe_step(L, _hoe_setup(F(1, 32)), 4)


@pytest.mark.parametrize("route", ["point 3'", "point 3"])
def test_high_order_box_step_at_a_lower_jacobian_order_contains_the_closed_form_derivative(monkeypatch, route):
    """The same step with jac_order 10: the step settles on the lowest order whose ρ meets the
    margin (here JAC_MIN_ORDER = 4, below 10), and its ρ, by either route alone, still makes Jh
    contain the derivative that the order-4 polynomial misses."""
    from riccati_verify.checker import _lohner as L

    monkeypatch.setattr(L, "JAC_TOL", 1.0)
    _one_route(monkeypatch, L, route)
    _check_hoe_step(L, _hoe_setup(F(1, 32), Kj=10), L.JAC_MIN_ORDER)


def _one_route(monkeypatch, L, route):
    """Point 3' alone (point 3's majorant made infinite) or point 3 alone (point 3' fails if reached)."""
    if route == "point 3'":
        monkeypatch.setattr(L, "_jacobian_remainders", lambda *a: [flint.arb("inf")] * (a[-1] + 1))
    else:
        monkeypatch.setattr(L, "_abs_upper_max", lambda M: pytest.fail("point 3' was evaluated"))


def _check_hoe_step(L, args, order):
    """One `_step_hoe` (args of `_hoe_setup`): accepted at the Jacobian order `order`, y ∋ σ(h),
    Jh ∋ ∂σ(h)/∂σ0, and the polynomial of that order alone misses the derivative."""
    a, v, beta, s0 = F(-1, 2), F(1), F(-1), F(2)     # those of _hoe_setup
    h = args[9]
    with flint.ctx.workprec(PREC):
        step = L._step_hoe(*args)
        assert not isinstance(step, float), step
        y, Jh, _, used = step
        assert used == order
        Pj = args[8].upto(order - 1)
        t, S0, vb, A0 = arb_of(h), arb_of(s0), arb_of(v * beta), arb_of(a)
        sig = 1 / ((-2 * A0 * t).exp() * (1 / S0 + vb / A0) - vb / A0)
        dsig = sig ** 2 * (-2 * A0 * t).exp() / S0 ** 2
        assert y[0, 0].contains(sig) and Jh[0, 0].contains(dsig), (y[0, 0], sig, Jh[0, 0], dsig)
        # not vacuous: the polynomial of that order alone misses the derivative
        poly = L._horner(Pj[:order], t)[0, 0]
        assert not poly.contains(dsig) and Jh[0, 0].rad() < 1e-2


def test_width_limit_stops_a_too_wide_enclosure_with_a_reason():
    m, S = ball_state((F(0),), ((F(2),),), PREC)
    with flint.ctx.workprec(PREC):
        S[0, 0] = S[0, 0] + flint.arb(0, 1e-10)
    args = (m, S, ((F(-1, 2),),), ((F(-1),),), ((F(1),),), (F(0),), F(1))
    assert not enclose_lohner(*args, **FAST).ok        # the default 2^-(tol_bits // 2) = 2^-50 < 1e-10
    assert enclose_lohner(*args, width_limit=1e-6, **FAST).ok
    enc = enclose_lohner(*args, width_limit=1e-12, **FAST)
    assert not enc.ok and "too wide" in enc.reason


def _hoe_setup(h, K=24, Kj=4):
    """d = 1, Σ alone (a = −1/2, v = 1, β = −1: σ' = −σ − 2σ²) from σ0 = 2: the arguments of one
    `_step_hoe` of length h at Taylor order K and Jacobian order Kj."""
    from riccati_verify.checker import _lohner as L
    from riccati_verify.checker._validated_flow import _Field

    a, v, beta, s0 = F(-1, 2), F(1), F(-1), F(2)
    A, B, V, b = ((a,),), ((beta,),), ((v,),), (F(0),)
    Fl = _Field(A, B, V, b)
    with flint.ctx.workprec(64):
        low = _Field(A, B, V, b)
    co = L._Coords(1, mean=False)
    var = L._Variational(low, co)
    mX, SX = ball_state((F(0),), ((s0,),), PREC)
    ms, Ss = Fl.coefficients(mX, SX, K)
    with flint.ctx.workprec(64):
        xs, Xs = low.coefficients(mX * 1, SX * 1, K - 1)
    return (low, var, co, var.second_row_sums(), xs, Xs, ms, Ss, L._Jets(var, xs, Xs), h, K, Kj, 2.0 ** -30)


def test_high_order_step_is_refused_without_the_a_priori_box(monkeypatch):
    """Point 1': the remainder is only valid on a box E the solution provably stays in, so when the
    containment Y ⊂ int E fails on every candidate the step must be refused (a float: a smaller h),
    however small its remainder would be."""
    from riccati_verify.checker import _lohner as L

    monkeypatch.setattr(L, "JAC_TOL", 1.0)      # as in the Jacobian test above: one step, no tolerance
    with flint.ctx.workprec(PREC):
        args = _hoe_setup(F(1, 32))
        assert not isinstance(L._step_hoe(*args), float)       # the honest step is accepted
        monkeypatch.setattr(L, "_strictly_inside", lambda E, Y: False)
        assert isinstance(L._step_hoe(*args), float)


def test_the_a_priori_box_needs_the_interior():
    """Y touching E's boundary is not inside: the existence argument of point 1' needs Y ⊂ int E."""
    from riccati_verify.checker._lohner import _strictly_inside

    E = flint.arb_mat([[flint.arb(0, 1)]])
    assert _strictly_inside(E, flint.arb_mat([[flint.arb(1) / 2]]))
    assert not _strictly_inside(E, flint.arb_mat([[E[0, 0].upper()]]))     # on the boundary
    assert not _strictly_inside(E, E)


def test_a_ball_matrix_a_encloses_the_flow_for_each_a_in_it():
    """A given as a ball: the enclosure holds for every A in the ball (compared with 50-digit
    mpmath integrations at both ends and the middle of A ∈ [0, ε̄]·A0), and an A outside the ball
    is not enclosed (the check can fail)."""
    A0 = ((F(-1), F(1, 2)), (F(-1, 2), F(-3, 4)))
    B = ((F(1, 4), F(-1, 8)), (F(0), F(-1, 4)))
    V = ((F(1, 2), F(0)), (F(1, 8), F(1, 3)))
    g = Gaussian((F(0), F(0)), ((F(1), F(1, 4)), (F(1, 4), F(2))))
    eps, tau = F(1, 1000), F(1, 2)
    with flint.ctx.workprec(PREC):
        Ab = arb_matrix(A0) * (arb_of(eps / 2) + flint.arb(0, arb_of(eps / 2)))
        enc = enclose_lohner(None, arb_matrix(g.cov), Ab, B, V, None, tau, covariance_only=True, prec=PREC,
                             width_limit=0.5)   # the ball of A, not the flow, sets the width
    assert enc.ok, enc.reason

    def covariance(scale):
        A = tuple(tuple(scale * x for x in r) for r in A0)
        _, S = integrate_segments_mp([Segment(tau, Params(A, B, V, (F(0), F(0))))], g, dps=50)
        return S

    with flint.ctx.workprec(PREC):
        for scale in (F(0), eps / 2, eps):
            S = covariance(scale)
            assert all(enc.cov[i, j].contains(flint.arb(mpmath.nstr(S[i][j], 40))) for i in range(2) for j in range(2))
        S = covariance(F(1))          # A0 itself is far outside the ball
        assert not all(enc.cov[i, j].contains(flint.arb(mpmath.nstr(S[i][j], 40)))
                       for i in range(2) for j in range(2))


def _coupled_d2():
    A = ((F(-1), F(1, 2)), (F(-1, 2), F(-3, 4)))
    B = ((F(1, 4), F(-1, 8)), (F(0), F(-1, 4)))
    V = ((F(1, 2), F(0)), (F(1, 8), F(1, 3)))
    return A, B, V


@pytest.mark.parametrize("mean", [True, False])
def test_variational_coefficients_agree_with_the_derivative_of_the_state_recursion(mean):
    """Φ_k from Df(x) = Df(0) + Σ x_c Q_c (`_Variational.coefficients`) and from the derivative of
    the state recursion (`block_coefficients`, assembled) are two routes to ∂x_k/∂x_0: at a point
    state both are tight and must overlap; a wrong Q (one column dropped) makes them disagree."""
    from riccati_verify.checker import _lohner as L
    from riccati_verify.checker._validated_flow import _Field

    A, B, V = _coupled_d2()
    b = (F(1, 3), F(-1, 5)) if mean else (F(0), F(0))
    m0 = (F(1), F(-1, 2)) if mean else (F(0), F(0))
    with flint.ctx.workprec(PREC):
        Fl = _Field(A, B, V, b)
        co = L._Coords(2, mean)
        var = L._Variational(Fl, co)
        m, S = ball_state(m0, ((F(2), F(1, 3)), (F(1, 3), F(1))), PREC)
        K = 7
        xs, Xs = Fl.coefficients(m, S, K)
        new = var.coefficients(xs, Xs, K)
        Ds, Hs = var.block_coefficients(xs, Xs, K)
        old = [co.assemble(Ds[k] if mean else None, Hs[k]) for k in range(K + 1)]
        n = co.n
        for k in range(K + 1):
            for a in range(n):
                for c in range(n):
                    x, y = new[k][a, c], old[k][a, c]
                    assert x.overlaps(y) and x.rad() < 1e-12 * (1 + abs(x.mid())), (k, a, c, x, y)
        assert any(abs(new[k][a, c].mid()) > 1e-3 for k in range(2, K + 1) for a in range(n) for c in range(n))
        D0, Qt, I = var._affine()          # row c of Qt holds Q_c: drop Q_{n-1}
        bad = flint.arb_mat(Qt.nrows(), Qt.ncols(), [0 if i // Qt.ncols() == n - 1 else e
                                                     for i, e in enumerate(Qt.entries())])
        var._aff = (D0, bad, I)
        wrong = var.coefficients(xs, Xs, K)
        assert not all(wrong[k][a, c].overlaps(old[k][a, c])
                       for k in range(K + 1) for a in range(n) for c in range(n))


def test_low_precision_centre_keeps_the_enclosure_and_costs_only_width(monkeypatch):
    """The centre's coefficients at lowered precision (`_centre_bits`) change widths only: with
    the default rule the enclosure of the Bernoulli closed form is as tight as at full precision,
    and a rule forcing 16 bits gives a wider enclosure that still contains the closed form."""
    from riccati_verify.checker import _lohner as L

    a, v, beta, s0, m0, tau = F(-1, 2), F(1), F(-1), F(2), F(1), F(3)
    args = (*ball_state((m0,), ((s0,),), PREC), ((a,),), ((beta,),), ((v,),), (F(0),), tau)
    base = enclose_lohner(*args, width_limit=1e-3)
    monkeypatch.setattr(L, "CENTRE_MARGIN", 10 ** 6)       # every coefficient at `prec`
    full = enclose_lohner(*args, width_limit=1e-3)
    monkeypatch.setattr(L, "_centre_bits", lambda *a_: (lambda k, ms, Ss: 16))
    coarse = enclose_lohner(*args, width_limit=1e-3)
    assert base.ok and full.ok and coarse.ok
    with flint.ctx.workprec(PREC):
        mean, sigma = _bernoulli(a, v, beta, s0, m0, tau)
        for enc in (base, full, coarse):
            assert enc.cov[0, 0].contains(sigma) and enc.mean[0, 0].contains(mean)
    assert base.radius < 4 * full.radius < 1e-24
    assert coarse.radius > 1e6 * full.radius          # not vacuous: the precision reaches the centre


@pytest.mark.parametrize("order", [2, 3, 5])
def test_a_too_small_order_fails_or_encloses_never_misses(order):
    """A low (or tampered) Taylor order only costs steps, width or success: at the default
    tolerance the run fails with a reason (the step collapses), at a loose one it contains the
    Bernoulli closed form although each step's remainder is only 2^-16 — in both modes."""
    a, v, beta, s0, m0, tau = F(-1, 2), F(1), F(-1), F(2), F(1), F(1, 2)
    with flint.ctx.workprec(PREC):
        _, sigma = _bernoulli(a, v, beta, s0, m0, tau)
    for kw in ({}, FAST):
        args = (*ball_state((m0,), ((s0,),), PREC), ((a,),), ((beta,),), ((v,),), (F(0),), tau)
        strict = enclose_lohner(*args, order=order, jac_order=2, max_steps=1000, **kw)
        assert not strict.ok and strict.reason
        loose = enclose_lohner(*args, order=order, jac_order=2, tol_bits=16, max_steps=1000, **kw)
        assert loose.ok, loose.reason
        assert loose.cov[0, 0].contains(sigma), (order, kw, loose.cov[0, 0], sigma)
        assert loose.radius > 1e-12          # the low order shows in the width


def _spd(n: int, skew: int = 1) -> flint.arb_mat:
    """An exact symmetric positive definite n×n matrix, far from diagonal: MᵀM + I with M_ij = (i+2j) mod 5 − 2."""
    M = [[F((i + 2 * j * skew) % 5 - 2) for j in range(n)] for i in range(n)]
    return arb_matrix([[sum(M[k][i] * M[k][j] for k in range(n)) + int(i == j) for j in range(n)] for i in range(n)])


def test_metric_gram_schmidt_is_g_orthonormal_and_refuses_an_indefinite_metric():
    from riccati_verify.checker._lohner import _orthonormal
    n = 6
    with flint.ctx.workprec(64):
        M = arb_matrix([[F((3 * i + j * j) % 7 - 3, 1 + (i + j) % 3) + int(i == j) * 4 for j in range(n)]
                        for i in range(n)])
        G = _spd(n)
        Q = _orthonormal(M, list(range(n)), G)
        assert Q is not None
        R = Q.transpose() * G * Q
        # Gram-Schmidt twice in 53-bit floats on a matrix of condition < 10^3: errors ~1e-13, far below 1e-9
        for i in range(n):
            for j in range(n):
                assert abs(float(R[i, j].mid()) - (i == j)) < 1e-9, (i, j, R[i, j])
        # the Euclidean QR is not G-orthonormal here (the test is not vacuous)
        Qe = _orthonormal(M, list(range(n)))
        Re = Qe.transpose() * G * Qe
        assert max(abs(float(Re[i, j].mid()) - (i == j)) for i in range(n) for j in range(n)) > 0.1
        indefinite = arb_matrix([[(1 if i else -1) * int(i == j) for j in range(n)] for i in range(n)])
        assert _orthonormal(M, list(range(n)), indefinite) is None


@pytest.mark.parametrize("kind", ["spd", "indefinite"])
def test_a_metric_changes_no_enclosure_property(kind):
    """The coupled d = 2 flow with a metric QR (docstring point 5): still contains the 50-digit
    solution and stays tight; an indefinite metric falls back to the Euclidean QR (same guarantee)."""
    p, g = _coupled_d2_problem()
    n = 5
    with flint.ctx.workprec(64):
        G = _spd(n) if kind == "spd" else arb_matrix([[(1 if i % 2 else -1) * int(i == j) for j in range(n)]
                                                      for i in range(n)])
    tau = F(1)
    enc = enclose_lohner_params(p, g.mean, g.cov, tau, metric=G, high_order_box=True)
    _encloses_tightly(enc, p, g, tau)
    with pytest.raises(ValueError):
        enclose_lohner_params(p, g.mean, g.cov, tau, metric=_spd(3))     # not n×n


def test_a_run_continued_from_its_parallelepiped_encloses_and_is_not_wider_than_a_box_restart():
    """Two runs chained through `parallelepiped` (enclose_lohner's start) contain the 50-digit
    solution at the end, like a restart from the first run's box, and are at most as wide."""
    p, g = _coupled_d2_problem()
    first = enclose_lohner_params(p, g.mean, g.cov, F(1))
    assert first.ok and first.parallelepiped is not None, first.reason
    cont = enclose_lohner(first.mean, first.cov, p.A, p.B, p.V, p.b, F(1), start=first.parallelepiped)
    box = enclose_lohner(first.mean, first.cov, p.A, p.B, p.V, p.b, F(1))
    assert cont.ok and box.ok, (cont.reason, box.reason)
    m, S = integrate_segments_mp([Segment(F(2), p)], g, dps=50)
    for enc in (cont, box):
        _contains_mp(enc, m, S)
    assert cont.radius <= box.radius
    # a start of another dimension is a programming error, not a flow failure
    xc, C, r = first.parallelepiped
    with pytest.raises(ValueError):
        enclose_lohner(first.mean, first.cov, p.A, p.B, p.V, p.b, F(1), start=(xc, C, r), covariance_only=True)


def test_a_split_start_set_is_carried_and_scales():
    """Point 7: a run from x̂ + (r0 + r) with r0 = [−h, h]ⁿ answers for every smaller box x̂ + s·[−h, h]ⁿ
    at that box's width: the 50-digit solutions from the box's centre (s = 0) and from corners of the
    boxes of share s = 1/8 and 1 lie in x̂_N + C_N(s·r0_N + r_N); the centre's far inside the whole
    box's image."""
    p, g = _coupled_d2_problem()
    # −A: an expanding flow, so that an image of the start set that is not carried would be too small
    p = Params(tuple(tuple(-x for x in row) for row in p.A), p.B, p.V, p.b)
    h, s = F(1, 10 ** 6), F(1, 8)
    with flint.ctx.workprec(PREC):
        xc = flint.arb_mat(3, 1, [arb_of(x) for x in (g.cov[0][0], g.cov[0][1], g.cov[1][1])])
        C = flint.arb_mat(3, 3, [int(i == j) for i in range(3) for j in range(3)])
        r0 = flint.arb_mat(3, 1, [arb_of(h) * flint.arb(0, 1)] * 3)
    run = enclose_lohner(None, None, p.A, p.B, p.V, None, F(1, 4), start=(xc, C, r0, flint.arb_mat(3, 1)),
                         covariance_only=True, width_limit=2.0 ** -8)
    assert run.ok and len(run.parallelepiped) == 4, run.reason
    xN, CN, r0N, rN = run.parallelepiped
    assert all(e.mid() == 0 for e in r0N.entries())
    for share, corner in ((F(0), g.cov), (s, tuple(tuple(x + s * h for x in row) for row in g.cov)),
                          (F(1), tuple(tuple(x + h for x in row) for row in g.cov))):
        _, S = integrate_segments_mp([Segment(F(1, 4), p)], Gaussian(g.mean, corner), dps=50)
        with flint.ctx.workprec(PREC):
            x = xN + CN * (r0N * arb_of(share) + rN)
            slack = arb_of(F(1, 10 ** 40))
            for k, (i, j) in enumerate(((0, 0), (0, 1), (1, 1))):
                assert x[k, 0].contains(flint.arb(mpmath.nstr(S[i][j], 60)) + flint.arb(0, slack)), (share, i, j)
            if share == 0:
                # the centre's image is far narrower than the whole box's
                assert max(float(e.rad()) for e in x.entries()) < 1e-6 * run.radius
    with pytest.raises(ValueError):
        with flint.ctx.workprec(PREC):
            off = flint.arb_mat(3, 1, [arb_of(h)] * 3)
        enclose_lohner(None, None, p.A, p.B, p.V, None, F(1), start=(xc, C, off, flint.arb_mat(3, 1)),
                       covariance_only=True)

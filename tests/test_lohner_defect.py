"""Point 8 of checker/_lohner.py (the defect remainder: the centre's Taylor polynomial, its defect and a
logarithmic norm on a thin tube, instead of Taylor series on an a-priori box) against independent routes:
the d = 1 Bernoulli closed form and its derivative in σ0, the matrix exponential (B = V = 0), mpmath's
Taylor integrator at 50 digits on a coupled d = 2 case with a mean, and the high-order-box mode."""

from __future__ import annotations

from fractions import Fraction as F

import flint
import mpmath
import pytest

from riccati_verify.checker import _lohner as L
from riccati_verify.checker._lohner import enclose_lohner, enclose_lohner_params
from riccati_verify.checker._validated_flow import ball_state
from riccati_verify.core.balls import arb_matrix, arb_of
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.numeric.flow import Segment, integrate_segments_mp

PREC = 256
DEFECT = dict(covariance_only=True, defect_remainder=True)


def _sigma(a, v, beta, s0, t):
    """d = 1: σ(t) (test_lohner's Bernoulli closed form) and ∂σ(t)/∂σ0 = σ(t)² e^{−2at}/σ0² (a ≠ 0)."""
    from tests.test_lohner import _bernoulli

    _, sig = _bernoulli(a, v, beta, s0, F(0), t)
    return sig, sig ** 2 * (-2 * arb_of(a) * arb_of(t)).exp() / arb_of(s0) ** 2


@pytest.mark.parametrize("tau", [F(1, 2), F(10)])
def test_defect_mode_encloses_the_bernoulli_covariance_and_not_a_shifted_one(tau):
    a, v, beta, s0 = F(-1, 2), F(1), F(-1), F(2)
    enc = enclose_lohner(*ball_state((F(1),), ((s0,),), PREC), ((a,),), ((beta,),), ((v,),), (F(3),), tau, **DEFECT)
    assert enc.ok, enc.reason
    with flint.ctx.workprec(PREC):
        sigma, _ = _sigma(a, v, beta, s0, tau)
        assert enc.cov[0, 0].contains(sigma), (enc.cov[0, 0], sigma)
        assert not enc.cov[0, 0].contains(sigma + flint.arb(1) / 10 ** 20)
    assert enc.radius < 1e-25


@pytest.mark.parametrize("with_mean", [False, True])
def test_defect_mode_matches_the_matrix_exponential(with_mean):
    """B = V = 0, b = 0 (A with a rotation part): Σ(τ) = e^{Aτ}Σ0e^{Aᵀτ} and m(τ) = e^{Aτ}m0; with the mean the
    state has both blocks, so the defect's norms and the tube run over (m, Σ)."""
    A = ((F(-1), F(3, 4), F(0)), (F(-3, 4), F(-1), F(1, 2)), (F(0), F(-1, 2), F(-1, 2)))
    S0 = ((F(2), F(1, 3), F(0)), (F(1, 3), F(1), F(1, 5)), (F(0), F(1, 5), F(3, 2)))
    m0 = (F(1), F(-1, 2), F(1, 3))
    Z = tuple((F(0),) * 3 for _ in range(3))
    tau = F(2)
    enc = enclose_lohner(*ball_state(m0, S0, PREC), A, Z, Z, (F(0),) * 3, tau, covariance_only=not with_mean,
                         defect_remainder=True)
    assert enc.ok, enc.reason
    with flint.ctx.workprec(PREC):
        E = (arb_matrix(A) * arb_of(tau)).exp()
        S = E * arb_matrix(S0) * E.transpose()
        m = E * arb_matrix(tuple((x,) for x in m0))
        for i in range(3):
            for j in range(3):
                assert enc.cov[i, j].overlaps(S[i, j]), (i, j, enc.cov[i, j], S[i, j])
                assert not enc.cov[i, j].overlaps(S[i, j] + flint.arb(1) / 10 ** 24)
            if with_mean:
                assert enc.mean[i, 0].overlaps(m[i, 0]) and not enc.mean[i, 0].overlaps(m[i, 0] + flint.arb(1) / 10 ** 24)
    assert enc.radius < 1e-28


def test_defect_mode_reports_a_blowup_inside_the_horizon():
    enc = enclose_lohner(*ball_state((F(0),), ((F(1),),)), ((F(0),),), ((F(1),),), ((F(1),),), (F(0),), F(1), **DEFECT)
    assert not enc.ok and enc.cov is None and enc.t < F(1, 2)


def test_defect_mode_coupled_d2_with_a_mean_matches_mpmath_and_the_high_order_box():
    p = Params(((F(-1), F(1, 2)), (F(-1, 2), F(-3, 4))), ((F(1, 4), F(-1, 8)), (F(0), F(-1, 4))),
               ((F(1, 2), F(0)), (F(1, 8), F(1, 3))), (F(1, 3), F(-1, 5)))
    g = Gaussian((F(1, 2), F(-1)), ((F(3), F(1, 4)), (F(1, 4), F(2))))
    tau = F(2)
    enc = enclose_lohner_params(p, g.mean, g.cov, tau, defect_remainder=True)
    hoe = enclose_lohner_params(p, g.mean, g.cov, tau, high_order_box=True)
    assert enc.ok and hoe.ok, (enc.reason, hoe.reason)
    m, S = integrate_segments_mp([Segment(tau, p)], g, dps=50)
    with flint.ctx.workprec(PREC):
        slack = flint.arb(0, arb_of(F(1, 10 ** 40)))
        for i in range(2):
            assert enc.mean[i, 0].overlaps(flint.arb(mpmath.nstr(m[i], 60)) + slack)
            assert enc.mean[i, 0].overlaps(hoe.mean[i, 0])
            for j in range(2):
                assert enc.cov[i, j].overlaps(flint.arb(mpmath.nstr(S[i][j], 60)) + slack)
                assert enc.cov[i, j].overlaps(hoe.cov[i, j])
    assert enc.radius < 1e-28


def _defect_setup(h, K=24, Kj=4):
    """d = 1, Σ alone (a = −1/2, v = 1, β = −1: σ' = −σ − 2σ²) from the point σ0 = 2: the arguments of one
    `_step_defect` of length h at Taylor order K and Jacobian order Kj, tolerance 2^-30 (the field and the
    centre's coefficients to K + 1 from test_lohner's `_hoe_setup`)."""
    from tests.test_lohner import _hoe_setup

    _, var, co, T2, _, _, ms, Ss, _, _, _, _, tol = _hoe_setup(h, K + 1, Kj)
    bounds = L._DefectBounds(co, L._max_row_sum(T2), ms, Ss, K)
    return (var, co, bounds, flint.arb(0), L._Jets(var, ms, Ss), h, K, Kj, tol)


def test_one_defect_step_encloses_the_closed_form_value_and_derivative(monkeypatch):
    """y ∋ σ(h) and Jh ∋ ∂σ(h)/∂σ0, and neither by accident: the Taylor polynomial alone misses σ(h) (ε is
    needed) and the Jacobian polynomial alone misses the derivative (ρ is needed)."""
    monkeypatch.setattr(L, "JAC_TOL", 1.0)
    h = F(1, 32)
    with flint.ctx.workprec(PREC):
        args = _defect_setup(h, K=16)
        step = L._step_defect(*args)
        assert not isinstance(step, float), step
        y, Jh, _, p = step
        sig, dsig = _sigma(F(-1, 2), F(1), F(-1), F(2), h)
        assert y[0, 0].contains(sig) and Jh[0, 0].contains(dsig), (y[0, 0], sig, Jh[0, 0], dsig)
        _, _, bounds, _, jets = args[:5]
        t = arb_of(h)
        poly = L._horner(bounds.x[:17], t)[0, 0]
        assert not poly.contains(sig) and y[0, 0].rad() < 1e-6
        jpoly = L._horner(jets.upto(p), t)[0, 0]
        assert not jpoly.contains(dsig) and Jh[0, 0].rad() < 1e-2


def test_a_defect_step_is_refused_when_the_tube_does_not_close(monkeypatch):
    """The remainder is only valid inside a tube the solutions provably stay in (ε + w' < W): with a
    logarithmic norm so large that no candidate tube closes, the step is refused (a float: a smaller h),
    however small the defect."""
    monkeypatch.setattr(L, "JAC_TOL", 1.0)
    with flint.ctx.workprec(PREC):
        args = _defect_setup(F(1, 32))
        assert not isinstance(L._step_defect(*args), float)
        monkeypatch.setattr(L, "_log_norm_upper", lambda M: flint.arb(10 ** 6))
        assert isinstance(L._step_defect(*_defect_setup(F(1, 32))), float)


def test_the_logarithmic_norm_bound_reads_signed_diagonals_and_absolute_off_diagonals():
    M = flint.arb_mat([[-5, 1], [-2, 1]])
    assert L._log_norm_upper(M) == 3                     # max(−5 + 1, 1 + 2)
    assert L._log_norm_upper(flint.arb_mat([[-5, 1], [2, -4]])) == 0       # both rows negative: 0
    B = flint.arb_mat([[flint.arb(0, 1), 0], [0, -3]])
    assert L._log_norm_upper(B) >= 1                     # the upper end of a ball on the diagonal


def test_a_motionless_point_and_extreme_orders_are_enclosed_not_crashed():
    """Σ0 = 0 stays 0 (every coefficient and the defect vanish: the tube still needs a positive
    half-width), and a Jacobian order above JAC_MIN_ORDER's reach or above the state's order is capped,
    not read past the centre's coefficients."""
    A = ((F(-1), F(1, 2)), (F(0), F(-1, 3)))
    B = ((F(1, 4), F(0)), (F(1, 8), F(-1, 2)))
    Z = ((F(0), F(0)), (F(0), F(0)))
    enc = enclose_lohner(*ball_state((F(0), F(0)), Z, PREC), A, B, A, (F(0),) * 2, F(1), **DEFECT)
    assert enc.ok, enc.reason
    assert all(enc.cov[i, j].is_zero() or enc.cov[i, j].contains(0) and enc.cov[i, j].rad() < 1e-60
               for i in range(2) for j in range(2))
    S0 = ((F(2), F(1, 3)), (F(1, 3), F(1)))
    for order, jac in ((6, 30), (12, 2), (3, 3)):
        enc = enclose_lohner(*ball_state((F(0), F(0)), S0, PREC), A, B, A, (F(0),) * 2, F(1, 2), order=order,
                             jac_order=jac, tol_bits=40, **DEFECT)
        ref = enclose_lohner(*ball_state((F(0), F(0)), S0, PREC), A, B, A, (F(0),) * 2, F(1, 2), tol_bits=40,
                             high_order_box=True, covariance_only=True)
        assert enc.ok and ref.ok, (order, jac, enc.reason, ref.reason)
        assert all(enc.cov[i, j].overlaps(ref.cov[i, j]) for i in range(2) for j in range(2))

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
                                               opposite_instance, reference_blowup, reference_fate)


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


# -- finite-time blow-up against growth in infinite time (reference_blowup) -----------------------

def test_closed_form_blowup_is_a_blowup_with_ratio_one_tenth():
    # d = 1, σ' = 2σ², σ0 = 1: σ = 1/(1 − 2t) passes 10^k at t_k = (1 − 10^−k)/2, so the decade times
    # shrink exactly tenfold: ratio 0.1
    inst = _diagonal([0], [1], [1], [1])
    r = reference_blowup(*inst)
    assert r["blowup"] is True
    # the times carry the integration's error, about rtol·T* = 1e-10 · 1/2
    assert r["times"] == pytest.approx([(1 - 10.0 ** -k) / 2 for k in (8, 9, 10)], abs=1e-10)
    assert abs(r["ratio"] - 0.1) <= max(r["ratio_error"], 1e-6)
    assert r["t_star"][0] <= 0.5 <= r["t_star"][1] and r["t_star"][1] - r["t_star"][0] < 1e-9
    assert reference_fate(*inst)["fate"] == "blowup"


def test_a_turning_blowup_gets_no_t_star_interval():
    # general_instance(4, 0, 15) blows up with a direction turning in a complex pair's plane: the decade
    # ratios swing with the phase (0.05 to 0.26), so the geometric tail after one ratio is no bound.  With a
    # single ratio the interval had ended at 0.0269213168826, 5e-11 below T* ∈ [0.02692131693483376972034843952512,
    # 0.02692131693483376972034843952514] (blowup_time at 30 digits, a turning certificate; the slow
    # tests/test_turning_review.py holds its 20-digit bracket against an mpmath Taylor reference)
    from riccati_verify.testing.strategies import general_instance

    r = reference_blowup(*general_instance(4, 0, 15))
    assert r["blowup"] is True and r["t_star"] is None


def test_scalar_v_blowup_keeps_its_closed_form_time():
    # A = 0, B = V = I: Σ = Σ0(I − 2tΣ0)⁻¹, T* = 1/(2·λmax(Σ0)) = 1/4 for Σ0 = diag(1, 2); the entry
    # 2/(1 − 4t) passes 1e8 at t = 1/4 − 1/(2·1e8)
    inst = _diagonal([0, 0], [1, 1], [1, 1], [1, 2])
    fate = reference_fate(*inst)
    assert fate["fate"] == "blowup" and 0.25 - 1e-8 <= fate["t"] <= 0.25
    assert reference_blowup(*inst)["blowup"] is True


def test_exponential_growth_is_not_a_blowup():
    # B = 0: Σ(t) = e^{At}Σ0e^{Aᵀt} exists for all t.  A non-normal and unstable: the entries pass
    # 1e8 (so a large-entry test calls it a blow-up), but each decade takes about ln(10)/2 (the top
    # eigenvalue of A is 1): ratio ≈ 1.  The decade times are checked against the closed form (expm
    # and a root finder), to the integration's error, ~rtol·t = 1e-10·10
    from scipy.linalg import expm
    from scipy.optimize import brentq

    A = ((Q(1), Q(3)), (Q(0), Q(1, 2)))
    Z = ((Q(0), Q(0)), (Q(0), Q(0)))
    I = ((Q(1), Q(0)), (Q(0), Q(1)))
    inst = (Params(A, Z, I, (Q(0), Q(0))), Gaussian((Q(0), Q(0)), I))
    Af = np.array(A, dtype=float)
    norm = lambda t: np.linalg.norm(expm(Af * t) @ expm(Af.T * t))                 # noqa: E731
    exact_t = [brentq(lambda t: np.log(norm(t)) - np.log(x), 0, 50, xtol=1e-14) for x in (1e8, 1e9, 1e10)]
    r = reference_blowup(*inst)
    assert r["blowup"] is False
    assert r["times"] == pytest.approx(exact_t, abs=1e-8)
    assert abs(r["ratio"] - 1) <= 0.01
    fate = reference_fate(*inst)
    assert fate["fate"] == "growth" and fate["t"] > 0


def test_growth_and_blowup_decided_by_the_rest_of_the_flow_not_the_entry():
    # the same linear part, with or without a quadratic term that takes over: d = 1, σ' = 2σ + 2cσ²
    # with c = vβ = 1/64 blows up at T* = ln(1 + 1/(cσ0))/2 = ln(65)/2 (MATH.md §6); with c = 0 it
    # grows like e^{2t} for ever
    grow = _diagonal([1], [0], [0], [1])
    blow = _diagonal([1], [Q(1, 8)], [Q(1, 8)], [1])
    assert reference_blowup(*grow)["blowup"] is False
    assert reference_blowup(*blow)["blowup"] is True


@pytest.mark.slow
def test_the_subexponential_escape_of_general_instance_4_0_8_is_growth():
    # MATH.md §15 "When else it does not apply": w ~ c/s along the flow at infinity, i.e. ‖Σ‖ ~ e^{t/c}:
    # the decades 1e8 → 1e9 → 1e10 take 1.63e-6 and 1.56e-6 (ratio 0.96; rate ~1.5e6), ~3 s of CPU
    r = reference_blowup(*general_instance(4, 0, 8))
    assert r["blowup"] is False and 0.75 < r["ratio"] < 1.3

"""Blow-up enclosures: closed forms inside every rigorous enclosure, scipy cross-checks, bad input."""

from __future__ import annotations

import math
from fractions import Fraction as F

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from riccati_verify.core import exact
from riccati_verify.certify.blowup import BlowupResult, MAX_DIGITS, blowup_time, closed_form_blowup_time
from riccati_verify.certify.blowup import radon as radon_mod
from riccati_verify.certify.blowup.general import norm_lower_bound, taylor_blowup_estimate
from riccati_verify.certify.blowup.radon import psd_factor, radon_hamiltonian
from riccati_verify.core.errors import InputError
from riccati_verify.numeric.flow import integrate_moments
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.testing.strategies import psd_matrices, rational_matrices, rationals
from riccati_verify.numeric.views import float_view


def gaussian(cov):
    return Gaussian(tuple(F(0) for _ in cov), exact.as_matrix(cov))


def params(A, B, V):
    d = len(A)
    Vm = exact.identity(d, V) if not isinstance(V, (tuple, list)) else exact.as_matrix(V)
    return Params(exact.as_matrix(A), exact.as_matrix(B), Vm, (F(0),) * d)


def assert_encloses(res: BlowupResult, value, digits: int):
    """value ∈ (lower, upper] and the width meets the digits promise."""
    lo, hi = F(res.lower), F(res.upper)
    assert res.blowup is True and res.rigorous and res.digits == digits
    with mpmath.workdps(digits + 20):
        x = mpmath.mpf(value)
        assert mpmath.mpf(lo.numerator) / lo.denominator < x <= mpmath.mpf(hi.numerator) / hi.denominator
    assert hi - lo <= F(1, 10 ** (digits - 1))
    assert hi - lo <= F(1, 10 ** digits) * max(F(1), lo) or hi - lo <= F(1, 10 ** digits) * lo


# --- closed forms inside the rigorous Radon enclosure --------------------------

def test_newton_goes_on_when_n_is_singular_at_its_working_precision():
    """σ' = 2σ² from σ0 = 3 blows up at T* = 1/6 (σ = 3/(1 − 6t)).  At 50 digits the Newton candidate
    made N(t) singular at its working precision 1.9e-45 from 1/6 and was returned as it was, so no
    50-digit bracket could be proved (found by the dev hypothesis profile)."""
    res = blowup_time(params([[0]], [[1]], 1), gaussian([[3]]), digits=50)
    lo, hi = F(res.lower), F(res.upper)
    assert res.blowup is True and res.rigorous and res.digits == 50
    assert lo < F(1, 6) <= hi and hi - lo <= F(1, 10 ** 50) * lo


@given(a=rationals(-2, 2), v=rationals(-2, 2), beta=rationals(-2, 2), s0=rationals(F(1, 8), 3),
       digits=st.sampled_from([20, 50]))
def test_scalar_closed_form_inside_enclosure(a, v, beta, s0, digits):
    assume(v != 0)
    P, S = params([[a]], [[beta]], v), gaussian([[s0]])
    cf = closed_form_blowup_time(P, S, digits + 10)
    res = blowup_time(P, S, digits=digits)
    if cf.value is None:
        assert res.blowup is not True           # never a bracket where the closed form has none
        if v * beta <= 0 or a + v * beta * s0 < 0:
            assert res.blowup is False and res.rigorous
    else:
        assert_encloses(res, cf.value, digits)
        # T* = ln(1 + a/c)/(2a) written out independently of closed_form.py
        c = v * beta * s0
        with mpmath.workdps(digits + 10):
            q = lambda x: mpmath.mpf(x.numerator) / x.denominator
            ref = (mpmath.log(1 + q(a) / q(c)) / (2 * q(a))) if a else 1 / (2 * q(c))
        assert_encloses(res, ref, digits)


@given(d=st.integers(2, 3), data=st.data(), v=st.sampled_from([F(1, 2), F(-1, 3), F(2)]))
def test_A_zero_closed_form_inside_enclosure(d, data, v):
    B = data.draw(rational_matrices(d, max_magnitude=2, max_denominator=4))
    S0 = data.draw(psd_matrices(d, rank=st.integers(1, d)))
    P, S = params(exact.zeros(d), B, v), gaussian(S0)
    cf = closed_form_blowup_time(P, S, 60)
    res = blowup_time(P, S, digits=40)
    if cf.value is None:
        assert res.blowup is False and res.rigorous
    else:
        assert_encloses(res, cf.value, 40)


@given(d=st.integers(2, 4), data=st.data())
def test_diagonal_closed_form_inside_radon_enclosure(d, data):
    """V = vI and everything diagonal: the Radon route (chosen for V = vI) must contain the decoupled formula."""
    a = [data.draw(rationals(-1, 1)) for _ in range(d)]
    beta = [data.draw(rationals(-2, 2)) for _ in range(d)]
    s = [data.draw(rationals(F(1, 4), 2)) for _ in range(d)]
    P = params(np.diag(a).tolist(), np.diag(beta).tolist(), F(1))
    S = gaussian(np.diag(s).tolist())
    cf = closed_form_blowup_time(P, S, 60)
    assert cf.kind == "diagonal"
    res = blowup_time(P, S, digits=30)
    # the Radon route decides, or leaves it undetermined and the diagonal closed form takes over
    assert res.method.startswith(("Radon", "Lyapunov bound", "diagonal"))
    if cf.value is None:
        assert res.blowup is not True
    else:
        assert_encloses(res, cf.value, 30)


def test_radon_proofs_stay_within_their_guard_bits():
    """V = vI, A = diag(−7/8, 0), B = diag(1, 0), Σ0 = diag(1/2, 2/5): σ11' = −(7/4)σ11 + 2σ11² from 1/2
    decays and σ22 stays 2/5, so there is no blow-up; no Lyapunov bound exists (A is singular) and
    λ_min(N) stays positive in floats up to t ≈ 10^7, where a proof of N ≻ 0 needs 2.5·10^7 guard bits
    (it had run out of memory).  The Radon route now proves the part within MAX_GUARD_BITS, refuses a
    horizon beyond it, and `blowup_time` hands the decoupled problem to the closed form."""
    from riccati_verify.certify.blowup import MAX_GUARD_BITS, _checked, _radon_route
    from riccati_verify.certify.blowup import enclosure
    from riccati_verify.certify.blowup.radon import RadonSystem

    P = params([[F(-7, 8), 0], [0, 0]], [[1, 0], [0, 0]], 1)
    S = gaussian([[F(1, 2), 0], [0, F(2, 5)]])
    res = _radon_route(P, S, 30, None, None)
    assert res.blowup is None and not res.rigorous and "no blow-up on [0," in res.note
    T = F(res.certificate_spec["claim"]["horizon"])
    assert 100 < T and enclosure.guard_bits(RadonSystem(P, S), float(T)) <= MAX_GUARD_BITS
    # T* ≥ T is a lower bound only once the checker accepts the no_blowup certificate (review s17:
    # a refused proof had kept it)
    assert res.lower_bound is None or F(res.lower_bound) < T
    checked = _checked(_radon_route(P, S, 30, None, None), P, S)
    assert checked.certificate is not None and 0 <= T - F(checked.lower_bound) < T / 10 ** 18   # T, floored
    far = _radon_route(P, S, 30, F(10 ** 7), None)
    assert far.blowup is None and "guard bits" in far.note and far.certificate_spec is None
    res = blowup_time(P, S, digits=30)
    assert res.blowup is False and res.rigorous and res.method.startswith("diagonal")
    assert res.certificate is not None


def test_a_refused_no_blowup_proof_leaves_only_the_norm_bound(monkeypatch):
    """The Radon route's T* ≥ T rests on its no_blowup certificate: when the checker refuses it, the
    result keeps the norm-comparison bound only, never T."""
    import riccati_verify.checker as checker
    from riccati_verify.certify.blowup import _checked, _radon_route
    from riccati_verify.checker.verify import CheckResult

    P = params([[F(-7, 8), 0], [0, 0]], [[1, 0], [0, 0]], 1)
    S = gaussian([[F(1, 2), 0], [0, F(2, 5)]])
    res = _radon_route(P, S, 30, None, None)
    T = F(res.certificate_spec["claim"]["horizon"])
    monkeypatch.setattr(checker, "verify_certificate", lambda doc: CheckResult(False, "refused for the test"))
    out = _checked(res, P, S)
    assert out.certificate is None and out.certificate_spec is None
    assert out.lower_bound is None or F(out.lower_bound) < T


def test_diagonal_general_V_route_matches_formula():
    P = params([[1, 0], [0, -1]], [[1, 0], [0, 2]], [[2, 0], [0, 3]])
    res = blowup_time(P, gaussian([[1, 0], [0, 1]]), digits=40)
    with mpmath.workdps(60):
        ref = min(mpmath.log(1 + mpmath.mpf(1) / 2) / 2, mpmath.log(1 - mpmath.mpf(1) / 6) / -2)
    assert res.method.startswith("diagonal") and res.rigorous
    assert_encloses(res, ref, 40)


@pytest.mark.parametrize("digits", [1, 5, 200])
def test_digits_promise_at_extremes(digits):
    P, S = params([[F(1, 3)]], [[1]], F(1, 2)), gaussian([[2]])
    res = blowup_time(P, S, digits=digits)
    with mpmath.workdps(digits + 20):
        ref = mpmath.log(1 + mpmath.mpf(1) / 3 / 1) * mpmath.mpf(3) / 2
    assert_encloses(res, ref, digits)


# --- independent numerical cross-checks ------------------------------------------

def scipy_blowup_estimate(P, S):
    """scipy event time plus the local remaining time 1/(2 λ_max(v B_s Σ(t_e))).

    Near T*, Σ ≈ u uᵀ c/(T* - t) and A's contribution to the remaining time is
    O(‖A‖ (T* - t)²), so the estimate is as accurate as the integrator (rtol 1e-12).
    """
    fr = integrate_moments(P, S, 100.0, rtol=1e-13, atol=1e-15, blowup_norm=1e10)
    assert fr.blowup
    A, B, V, _ = float_view(P)
    Bs = (B + B.T) / 2
    lam = max(np.linalg.eigvals(V @ Bs @ fr.cov).real)
    return fr.time + 1 / (2 * lam)


@given(d=st.integers(2, 3), data=st.data())
def test_general_A_same_sign_agrees_with_scipy(d, data):
    A = data.draw(rational_matrices(d, max_magnitude=1, max_denominator=4))
    Bs = data.draw(psd_matrices(d, rank=d, min_eigenvalue=F(1, 2), max_eigenvalue=2))
    S0 = data.draw(psd_matrices(d, rank=d, min_eigenvalue=F(1, 2), max_eigenvalue=2))
    P, S = params(A, Bs, F(1)), gaussian(S0)
    res = blowup_time(P, S, digits=30)
    assert res.blowup is True and res.rigorous      # Re λ(A) unrestricted, but ‖A‖ small vs vB_sΣ0
    est = scipy_blowup_estimate(P, S)
    assert abs(est - float(F(res.lower))) <= 1e-8 * (1 + est)


def test_mixed_sign_cover_agrees_with_scipy():
    P = params([[F(1, 2), 1], [0, -1]], [[1, 0], [0, -2]], F(1, 2))
    S = gaussian([[1, 0], [0, 1]])
    res = blowup_time(P, S, digits=30)
    assert res.blowup and res.rigorous and "cover" in res.method
    assert abs(scipy_blowup_estimate(P, S) - float(F(res.upper))) <= 1e-8


@pytest.mark.parametrize("A,B,v,S0", [
    ([[F(1, 2), 1], [0, -1]], [[-1, 0], [0, -2]], F(1, 2), [[1, 0], [0, 1]]),     # opposite sign, A not Hurwitz
    ([[-2, 1], [0, -3]], [[1, 0], [0, 1]], F(1), [[F(1, 10), 0], [0, F(1, 10)]]),  # same sign, Lyapunov bound
])
def test_no_blowup_where_the_moment_ode_stays_bounded(A, B, v, S0):
    P, S = params(A, B, v), gaussian(S0)
    res = blowup_time(P, S, digits=20)
    assert res.blowup is False and res.rigorous and res.horizon is None
    fr = integrate_moments(P, S, 20.0)
    assert not fr.blowup
    assert np.all(np.isfinite(fr.covs)) and np.abs(fr.covs).max() < 1e3


def test_lyapunov_bound_is_sharp_in_the_scalar_case():
    """σ̇ = 2aσ + 2vβσ², a < 0: no blow-up iff a + vβσ0 < 0.  Just above the threshold it blows up."""
    below = blowup_time(params([[-1]], [[1]], 1), gaussian([[F(99, 100)]]), digits=10)
    above = blowup_time(params([[-1]], [[1]], 1), gaussian([[F(101, 100)]]), digits=10)
    assert below.blowup is False and below.rigorous
    assert above.blowup is True and above.rigorous
    with mpmath.workdps(30):
        assert_encloses(above, mpmath.log(1 - 1 / mpmath.mpf("1.01")) / -2, 10)


def test_rank_deficient_initial_covariance():
    # A skew: e^{Aᵀs}e^{As} = I, so N(t) = 1 - 2·t·(Cᵀ C) = 1 - 4t with Σ0 = [1 1; 1 1]: T* = 1/4
    res = blowup_time(params([[0, 1], [-1, 0]], [[1, 0], [0, 1]], 1), gaussian([[1, 1], [1, 1]]), digits=40)
    assert_encloses(res, mpmath.mpf(1) / 4, 40)


def test_zero_covariance_never_blows_up():
    res = blowup_time(params([[1, 0], [0, 1]], [[1, 0], [0, 1]], 1), gaussian([[0, 0], [0, 0]]), digits=10)
    assert res.blowup is False and res.rigorous


def test_horizon_before_and_after_blowup():
    P, S = params([[F(1, 2), 1], [0, -1]], [[1, 0], [0, 2]], F(1, 2)), gaussian([[1, 0], [0, 1]])
    full = blowup_time(P, S, digits=20)
    T = F(full.lower)
    before = blowup_time(P, S, digits=20, horizon=T * F(9, 10))
    assert before.blowup is False and before.rigorous and before.horizon == str(T * F(9, 10))
    after = blowup_time(P, S, digits=20, horizon=T * 2)
    assert after.blowup is True and after.lower == full.lower


# --- the Radon Hamiltonian itself (mutation target) ---------------------------------

def test_radon_hamiltonian_generates_the_riccati_flow():
    """Σ = Y X⁻¹ from exp(Ht) must match a direct high-accuracy integration of Σ̇."""
    A, B, v = [[F(1, 3), F(1, 2)], [F(-1, 4), F(1, 5)]], [[1, F(1, 3)], [F(-1, 2), 2]], F(2, 3)
    S0 = [[1, F(1, 4)], [F(1, 4), F(1, 2)]]
    P = params(A, B, v)
    H = np.array(radon_hamiltonian(P.A, v, P.B), dtype=float)
    from scipy.linalg import expm

    t = 0.2
    E = expm(H * t)
    XY = E @ np.vstack([np.eye(2), np.array(S0, dtype=float)])
    Sigma = XY[2:] @ np.linalg.inv(XY[:2])
    fr = integrate_moments(P, gaussian(S0), t, rtol=1e-13, atol=1e-15)
    assert np.allclose(Sigma, fr.cov, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("mutant", ["flip_coupling", "double_coupling", "half_coupling", "transpose_A", "negate_A22"])
def test_mutated_hamiltonian_is_caught(monkeypatch, mutant):
    """The cross-checks have teeth: a mutated H gives a bracket missing T* (or none).

    (Using B instead of B_s in H is an *equivalent* mutant: N is symmetrised, and
    Cᵀ W C has the same symmetric part for B and B_s, so it is not listed.)"""
    original = radon_hamiltonian

    def mutated(A, v, B):
        d = len(A)
        H = [list(r) for r in original(A, v, B)]
        if mutant == "flip_coupling":
            for i in range(d):
                for j in range(d):
                    H[i][d + j] = -H[i][d + j]
        elif mutant == "double_coupling":
            for i in range(d):
                for j in range(d):
                    H[i][d + j] = 2 * H[i][d + j]
        elif mutant == "transpose_A":
            for i in range(d):
                for j in range(d):
                    H[i][j] = -A[i][j]
        elif mutant == "half_coupling":  # -v B_s: the factor 2 of VΣBΣ + ΣBᵀΣVᵀ dropped
            for i in range(d):
                for j in range(d):
                    H[i][d + j] = H[i][d + j] / 2
        else:  # Ẏ = -A Y
            for i in range(d):
                for j in range(d):
                    H[d + i][d + j] = -A[i][j]
        return tuple(tuple(r) for r in H)

    monkeypatch.setattr(radon_mod, "radon_hamiltonian", mutated)
    P = params([[F(1, 2), 1], [F(-1, 3), F(1, 4)]], [[1, 1], [0, 2]], F(1, 2))
    S = gaussian([[1, F(1, 3)], [F(1, 3), 1]])
    fr_est = scipy_blowup_estimate(P, S)
    res = blowup_time(P, S, digits=20)
    ok = res.blowup is True and abs(float(F(res.lower)) - fr_est) <= 1e-8 * (1 + fr_est)
    assert not ok


# --- general V -----------------------------------------------------------------------

@given(data=st.data())
def test_norm_lower_bound_is_below_the_enclosure(data):
    d = data.draw(st.integers(1, 3))
    A = data.draw(rational_matrices(d, max_magnitude=1))
    B = data.draw(rational_matrices(d, max_magnitude=2))
    S0 = data.draw(psd_matrices(d, rank=st.integers(1, d)))
    P, S = params(A, B, F(1)), gaussian(S0)
    lb = norm_lower_bound(P, S)
    res = blowup_time(P, S, digits=15)
    if res.blowup:
        assert lb is not None and lb <= F(res.upper)   # lb ≤ T* ≤ upper (lb = T* when A = 0, d = 1)


def test_taylor_estimate_against_rigorous_enclosure():
    """The non-rigorous general-V estimator, run on a V = vI problem, agrees within its error estimate."""
    P = params([[F(1, 2), 1], [F(-1, 3), F(1, 4)]], [[1, 1], [0, 2]], F(1, 2))
    S = gaussian([[1, F(1, 3)], [F(1, 3), 1]])
    res = blowup_time(P, S, digits=30)
    est = taylor_blowup_estimate(P, S, digits=20)
    assert est.blowup is True
    assert abs(est.value - F(res.lower)) <= 10 * est.error + F(1, 10 ** 20)
    assert est.error < F(1, 10 ** 15)


def test_general_V_route_is_labelled_non_rigorous_and_agrees_with_scipy():
    P = params([[F(1, 10), F(1, 5)], [0, F(-1, 10)]], [[1, F(1, 3)], [0, 1]], [[1, F(1, 2)], [F(-1, 4), 1]])
    S = gaussian([[1, F(1, 5)], [F(1, 5), 1]])
    res = blowup_time(P, S, digits=15)
    assert res.blowup is True and res.rigorous is False and res.certificate is None
    assert res.lower is None and res.upper is None and res.digits == 0      # no bracket: an estimate
    d = res.to_dict()
    assert {"estimate", "error_estimate"} <= set(d) and not {"lower", "upper", "digits"} & set(d)
    fr = integrate_moments(P, S, 10.0, rtol=1e-13, atol=1e-15, blowup_norm=1e12)
    # the event fires when max|Σ| = 1e12, i.e. T* - t_e ≈ C/1e12 with C = O(1) here
    assert 0 < float(F(res.estimate)) - fr.time < 1e-9
    assert F(res.lower_bound) <= F(res.estimate)


# --- bad input --------------------------------------------------------------------

def test_bad_inputs_raise_input_error():
    P, S = params([[1]], [[1]], 1), gaussian([[1]])
    with pytest.raises(InputError, match="digits"):
        blowup_time(P, S, digits=MAX_DIGITS + 1)
    with pytest.raises(InputError, match="digits"):
        blowup_time(P, S, digits=0)
    with pytest.raises(InputError, match="horizon"):
        blowup_time(P, S, horizon=-1)
    with pytest.raises(InputError, match="d = "):
        blowup_time(P, gaussian([[1, 0], [0, 1]]))
    Pg = params([[0, 0], [0, 0]], [[1, 0], [0, 1]], [[1, 1], [0, 1]])
    res = blowup_time(Pg, gaussian([[1, 0], [0, 1]]), digits=100)   # general V beyond 60: the best estimate
    assert not res.rigorous and res.lower is None and "100 digits asked" in res.note


def test_psd_factor_is_exact_and_full_rank():
    S = ((F(2), F(1), F(0)), (F(1), F(1), F(0)), (F(0), F(0), F(0)))
    C, D = psd_factor(S)
    assert len(D) == 2 and all(x > 0 for x in D) and exact.rank(C) == 2
    CD = tuple(tuple(C[i][k] * D[k] for k in range(2)) for i in range(3))
    assert exact.matmul(CD, exact.transpose(C)) == S
    with pytest.raises(ValueError):
        psd_factor(((F(1), F(2)), (F(2), F(1))))


def test_unprovable_bracket_is_undetermined_never_wrong(monkeypatch):
    """When ball arithmetic cannot close the enclosure the answer is 'undetermined', not a bracket."""
    from riccati_verify.certify.blowup import enclosure

    monkeypatch.setattr(enclosure, "prove_bracket", lambda *a, **k: False)
    P, S = params([[F(1, 2), 1], [0, -1]], [[1, 0], [0, 2]], F(1, 2)), gaussian([[1, 0], [0, 1]])
    res = blowup_time(P, S, digits=20)
    assert res.blowup is None and res.rigorous is False and res.certificate is None
    assert res.lower is None and res.upper is None
    # T* = 0.60215327529776326297621...: V = I/2, so P = Σ⁻¹ solves the linear P' = −(PA + AᵀP) − 2vB_s and
    # T* is the first zero of det P(t), computed independently with mpmath's expm of the vectorised
    # system at 40 digits (review s18; the pinned digits are a truncation, below T*)
    assert res.lower_bound is not None and F(res.lower_bound) <= F("0.6021532752977632629762")


def test_mixed_sign_cover_failure_is_undetermined(monkeypatch):
    from riccati_verify.certify.blowup import enclosure

    monkeypatch.setattr(enclosure, "cover_positive", lambda *a, **k: None)
    P, S = params([[F(1, 2), 1], [0, -1]], [[1, 0], [0, -2]], F(1, 2)), gaussian([[1, 0], [0, 1]])
    res = blowup_time(P, S, digits=20)
    assert res.blowup is None and not res.rigorous and res.certificate is None


def test_bracket_never_straddles_the_horizon():
    """With a horizon inside the first bracket, the bracket is narrowed until it decides the horizon."""
    P, S = params([[F(1, 3)]], [[1]], F(1, 2)), gaussian([[2]])
    coarse = blowup_time(P, S, digits=3)
    lo, hi = F(coarse.lower), F(coarse.upper)
    with mpmath.workdps(40):
        T = mpmath.log(mpmath.mpf(4) / 3) * mpmath.mpf(3) / 2
    for h in ((lo + hi) / 2, lo + (hi - lo) / 7, hi - (hi - lo) / 7):
        res = blowup_time(P, S, digits=3, horizon=h)
        if mpmath.mpf(h.numerator) / h.denominator < T:
            assert res.blowup is False and res.rigorous and res.horizon == str(h)
        else:
            assert res.blowup is True and F(res.upper) <= h


def test_particles_grow_towards_T_star_but_cannot_blow_up():
    """Cross-check with the particle simulator (MATH.md §1): σ̇ = 2σ² from σ0 = 1 blows up at T* = 1/2.

    N tokens cannot blow up in finite time (the attention average lies in the convex hull of the
    tokens, so |ẋ| grows at most linearly in max|x|); near T* the softmax weights concentrate
    (ESS → 1) and the empirical covariance lags the moment solution 1/(1 - 2t).  What must hold:
    agreement early on, monotone growth, and weight collapse near T*.
    """
    from riccati_verify.numeric.simulate.particles import simulate

    P, S = params([[0]], [[1]], F(1)), gaussian([[1]])
    res = blowup_time(P, S, digits=20)
    T = float(F(res.lower))
    assert abs(T - 0.5) < 1e-19
    run = simulate(P, S, 1000, 0.9 * T, 90, seed=5, record_every=10)
    var = run.covs[:, 0, 0]
    exact_var = 1 / (1 - 2 * run.t)
    assert not run.blowup and np.all(np.isfinite(var))
    assert np.all(np.diff(var) > 0) and var[-1] > 3 * var[0]
    early = run.t <= 0.1
    # sampling error of the initial variance is ≈ √(2/N) ≈ 4.5%; allow twice that early on
    assert np.all(np.abs(var[early] / exact_var[early] - 1) < 0.09)
    assert run.ess_min < 0.01 * 1000                 # the weights collapse near T*
    assert var[-1] < exact_var[-1]                   # ...and the particles lag the blow-up


def test_float_location_survives_a_lapack_failure(monkeypatch):
    """A hypothesis draw (diagonal, d = 3) made LAPACK's eigvalsh raise 'Eigenvalues did not converge'
    inside `lambda_min_float`, and the LinAlgError escaped `blowup_time`.  No convergence is no float
    location: NaN, as for an overflow, and the route goes on to its other proofs."""
    from riccati_verify.certify.blowup.radon import RadonSystem

    def fail(_):
        raise np.linalg.LinAlgError("Eigenvalues did not converge")

    sys_ = RadonSystem(params([[F(-1), 0], [0, F(1, 2)]], [[1, 0], [0, 1]], 1), gaussian([[1, 0], [0, 1]]))
    assert not math.isnan(sys_.lambda_min_float(0.1))
    monkeypatch.setattr(np.linalg, "eigvalsh", fail)
    assert math.isnan(sys_.lambda_min_float(0.1))

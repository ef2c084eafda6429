"""Review of the continuum tail (checker/_continuum_tail.py) against routes that share nothing with it.

1. The chart field derived from scratch: x = (p, E, w) = (Σ_{2:,1}/Σ_11, Σ_{2:,2:}/Σ_11 − ppᵀ, 1/Σ_11)
   differentiated along the moment ODE itself (sympy, exact), with d/ds = w·d/dt, then Σ = φ(x)/w
   substituted.  This does not use the compactified field G of `check_blowup_general` nor the chart
   rows of `_continuum_tail`, so it checks both: the lemma (the field vanishes on y = 0 for V = vI,
   and not for a non-scalar V) and the checker's ∂_yG_y, ∂_yG_p at points with y ≠ 0 (where the
   existing test, which compares with −g·I at y = 0 only, says nothing), and the enclosure of them
   over a box.
2. T* from P = Σ⁻¹: Ṗ = −PA − AᵀP − v(B + Bᵀ) is linear, so P(t) is an mpmath matrix exponential of
   an augmented system and T* is the first t where P(t) stops being positive definite (its
   smallest eigenvalue on a grid, then the root of det P(t) there: mpmath findroot, 50 digits); the
   general route's continuum certificate must bracket it.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction as Q
from pathlib import Path

import mpmath
import pytest
import sympy as sp
from flint import arb, arb_mat, ctx

from riccati_verify.checker import verify_certificate
from riccati_verify.checker._continuum_tail import ContinuumTail, first_axis
from riccati_verify.checker.check_blowup_general import _Compactified
from riccati_verify.core import balls, exact
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.certify.blowup.compactified import certify_general_blowup
from riccati_verify.certify.certificate import make_certificate

D3_A = [[Q(-3, 4), Q(1, 2), Q(1, 3)], [Q(0), Q(-1, 2), Q(2, 5)], [Q(1, 7), Q(-1), Q(1, 4)]]
D3_B = [[Q(2), Q(1, 4), Q(-1, 3)], [Q(1, 2), Q(2), Q(1, 5)], [Q(0), Q(1, 4), Q(3, 2)]]   # not symmetric


def _sp(M):
    return sp.Matrix([[sp.Rational(x.numerator, x.denominator) for x in r] for r in M])


def _chart_field(A, B, V):
    """(p symbols, y symbols, the chart field as polynomials): by the chain rule on the moment ODE."""
    d = len(A)
    sig = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"s{min(i, j)}{max(i, j)}"))
    A_, B_, V_ = _sp(A), _sp(B), _sp(V)
    F = A_ * sig + sig * A_.T + V_ * sig * B_ * sig + sig * B_.T * sig * V_.T
    pairs = [(i, j) for i in range(1, d) for j in range(i, d)]
    pf = [sig[i, 0] / sig[0, 0] for i in range(1, d)]
    xf = pf + [sig[i, j] / sig[0, 0] - pf[i - 1] * pf[j - 1] for (i, j) in pairs] + [1 / sig[0, 0]]
    upper = [(i, j) for i in range(d) for j in range(i, d)]
    p = list(sp.symbols(f"p1:{d}"))
    y = [sp.Symbol(f"E{i}{j}") for (i, j) in pairs] + [sp.Symbol("w")]
    S = sp.zeros(d, d)
    S[0, 0] = 1
    for i in range(1, d):
        S[i, 0] = S[0, i] = p[i - 1]
    for k, (i, j) in enumerate(pairs):
        S[i, j] = S[j, i] = p[i - 1] * p[j - 1] + y[k]
    w = y[-1]
    sub = {sig[i, j]: S[i, j] / w for (i, j) in upper}
    field = []
    for e in xf:
        dedt = sum(sp.diff(e, sig[i, j]) * F[i, j] for (i, j) in upper)
        field.append(sp.cancel(sp.together((w * dedt).subs(sub))))
    return p, y, field


@pytest.fixture(scope="module")
def d3_scalar():
    V = exact.identity(3, Q(-3, 7))
    return V, _chart_field(D3_A, D3_B, V)


def test_lemma_from_scratch(d3_scalar):
    """V = vI: the chart field vanishes identically on y = 0 (the continuum of equilibria)."""
    _, (p, y, field) = d3_scalar
    for f in field:
        assert sp.expand(f.subs({s: 0 for s in y})) == 0


def test_lemma_fails_for_non_scalar_v():
    """The same derivation with V = vI + 1/5 e1e2ᵀ: the field does not vanish on y = 0, so the
    test above can fail, and the checker's exact V = vI test is needed."""
    V = [list(r) for r in exact.identity(3, Q(-3, 7))]
    V[0][1] = Q(1, 5)
    p, y, field = _chart_field(D3_A, D3_B, V)
    assert any(sp.expand(f.subs({s: 0 for s in y})) != 0 for f in field)


def _tail(d, P=None):
    m = d * (d - 1) // 2 + 1
    return {"kind": "continuum", "p_centre": ["0"] * (d - 1), "r_p": ["1"] * (d - 1),
            "P": P or [["1" if i == j else "0" for j in range(m)] for i in range(m)], "rho2": "1", "beta": "1"}


def test_checker_jacobian_blocks_off_the_stratum(d3_scalar):
    """At a point with y ≠ 0 the checker's (∂_yG_y, ∂_yG_p) equal the y-derivatives of the chart
    field derived from scratch (to 2^-180 at 200 bits)."""
    V, (p, y, field) = d3_scalar
    pv = [Q(2, 3), Q(-5, 4)]
    yv = [Q(1, 10), Q(-1, 7), Q(3, 11), Q(1, 13)]
    at = dict(zip(p, [sp.Rational(x.numerator, x.denominator) for x in pv]))
    at.update(zip(y, [sp.Rational(x.numerator, x.denominator) for x in yv]))
    J = sp.Matrix([[sp.diff(f, s) for s in y] for f in field]).subs(at)
    tol = arb(2) ** -180
    with ctx.workprec(200):
        ct = ContinuumTail(_Compactified(D3_A, D3_B, V, first_axis(3)), _tail(3), V, {})
        _, M, N = ct.y_jacobians([balls.arb_of(x) for x in pv], [balls.arb_of(x) for x in yv])
        for c in range(ct.m):
            for r in range(2):
                want = Q(int(sp.numer(J[r, c])), int(sp.denom(J[r, c])))
                assert abs(N[r, c] - balls.arb_of(want)) < tol, (r, c)
            for r in range(ct.m):
                want = Q(int(sp.numer(J[2 + r, c])), int(sp.denom(J[2 + r, c])))
                assert abs(M[r, c] - balls.arb_of(want)) < tol, (r, c)


def test_checker_jacobian_encloses_the_box(d3_scalar):
    """Over a box (p ± 1/8, y ± 1/9) the checker's ball blocks contain the exact Jacobian at the
    box's corners and centre (the superset property the mean-value form needs)."""
    V, (p, y, field) = d3_scalar
    pc, rp, ry = [Q(1, 3), Q(-1, 2)], Q(1, 8), Q(1, 9)
    Jsym = sp.Matrix([[sp.diff(f, s) for s in y] for f in field])
    with ctx.workprec(128):
        ct = ContinuumTail(_Compactified(D3_A, D3_B, V, first_axis(3)), _tail(3), V, {})
        pb = [balls.arb_of(c) + arb(0, 1) * balls.arb_of(rp) for c in pc]
        yb = [arb(0, 1) * balls.arb_of(ry) for _ in range(ct.m)]
        _, M, N = ct.y_jacobians(pb, yb)
        for sgn in [(0, 0, 0, 0, 0, 0), (1, 1, 1, 1, 1, 1), (-1, 1, -1, 1, -1, 1), (1, -1, -1, 1, 1, -1)]:
            at = {p[k]: sp.Rational(pc[k]) + sgn[k] * sp.Rational(rp) for k in range(2)}
            at.update({y[k]: sgn[2 + k] * sp.Rational(ry) for k in range(ct.m)})
            J = Jsym.subs(at)
            for c in range(ct.m):
                for r in range(2 + ct.m):
                    want = balls.arb_of(Q(int(sp.numer(J[r, c])), int(sp.denom(J[r, c]))))
                    got = N[r, c] if r < 2 else M[r - 2, c]
                    assert got.contains(want), (sgn, r, c)


# --- T* by the linear equation of P = Σ⁻¹ (mpmath) -------------------------------------------

def _mpf(x: Q):
    return mpmath.mpf(x.numerator) / x.denominator


def _inverse_riccati_generator(A, B, v):
    """K with d/dt [vec P; 1] = K [vec P; 1] for Ṗ = −PA − AᵀP − v(B + Bᵀ) (at the caller's precision)."""
    d = len(A)
    n = d * d
    K = mpmath.zeros(n + 1, n + 1)
    for i in range(d):
        for j in range(d):
            r = i * d + j
            for k in range(d):
                K[r, k * d + j] -= _mpf(A[k][i])      # (−AᵀP)_ij = −Σ_k A_ki P_kj
                K[r, i * d + k] -= _mpf(A[k][j])      # (−PA)_ij = −Σ_k P_ik A_kj
            K[r, n] = -_mpf(v * (B[i][j] + B[j][i]))
    return K


def tstar_inverse_riccati(A, B, v, cov, dps=50):
    """The first t where P = Σ⁻¹ stops being positive definite, Ṗ = −PA − AᵀP − v(B + Bᵀ): vec(P) solves a linear ODE
    with a constant inhomogeneity, so [vec P; 1] = exp(tK)[vec P0; 1]."""
    with mpmath.workdps(dps + 20):
        d = len(A)
        K = _inverse_riccati_generator(A, B, v)
        P0 = mpmath.inverse(mpmath.matrix([[_mpf(x) for x in r] for r in cov]))
        x0 = mpmath.matrix([P0[i, j] for i in range(d) for j in range(d)] + [1])

        def P_of(x):
            return mpmath.matrix([[x[i * d + j] for j in range(d)] for i in range(d)])

        def det_at(t):
            return mpmath.det(P_of(mpmath.expm(K * t) * x0))

        # the first t where the smallest eigenvalue of P turns negative, on a fine grid (det P alone
        # misses two eigenvalues crossing within one grid step), then the root of det P there
        h = mpmath.mpf(1) / 4096
        Eh = mpmath.expm(K * h)
        t, x = mpmath.mpf(0), x0
        while True:
            x = Eh * x
            if min(mpmath.eigsy(P_of(x))[0]) <= 0:
                break
            t += h
            assert t < 50, "no blow-up seen"
        return mpmath.findroot(det_at, (t, t + h), solver="anderson")


def mpf_fraction(x) -> Q:
    """The binary value of an mpf, exactly (mpmath.mpf(x) would round it to the ambient precision)."""
    man, exp = x.man_exp
    return Q(int(man)) * Q(2) ** int(exp)


def _inst(d):
    """V = vI instances with v B_s ≻ 0 (a blow-up from any Σ0 ≻ 0); not the producer's tests' ones."""
    A = [[Q(((5 * i + 3 * j + d) % 9) - 4, 6) for j in range(d)] for i in range(d)]
    B = [[Q(3, 2) if i == j else Q((i - 2 * j) % 3 - 1, 5) for j in range(d)] for i in range(d)]
    cov = [[Q(1) if i == j else Q(1, 4) if abs(i - j) == 1 else Q(0) for j in range(d)] for i in range(d)]
    return A, B, Q(-2, 3) if d == 3 else Q(1, 3), cov


_CERTS: dict = {}


def _certified(d: int):
    """(A, B, v, cov, the continuum certificate at 12 digits), once per d."""
    if d not in _CERTS:
        A, B, v, cov = _inst(d)
        if v < 0:
            B = [[-x for x in r] for r in B]
        params = Params.from_arrays(A, B, exact.identity(d, v))
        state = Gaussian((Q(0),) * d, cov)
        out = certify_general_blowup(params, state, 12)
        assert out["ok"], out["reason"]
        assert out["witness"]["tail"]["kind"] == "continuum"
        doc = make_certificate("blowup_general", out["claim"], params, state, out["witness"], out["method"])
        _CERTS[d] = (A, B, v, cov, doc)
    return _CERTS[d]


@pytest.mark.parametrize("d", [2, 3])
def test_continuum_bracket_contains_the_zero_of_det_P(d):
    A, B, v, cov, doc = _certified(d)
    assert verify_certificate(doc).valid
    t = mpf_fraction(tstar_inverse_riccati(A, B, v, cov))
    lo, hi = Q(doc["claim"]["lower"]), Q(doc["claim"]["upper"])
    # the mpmath root is good to ~50 digits, the bracket has 12: compared in exact rationals, with a
    # margin far above the root's error and far below the bracket's width
    assert lo + Q(1, 10 ** 40) < t <= hi - Q(1, 10 ** 40)
    # and a claim moved just past the root must not verify
    bad = copy.deepcopy(doc)
    bad["claim"]["lower"], bad["claim"]["upper"] = str(hi), str(2 * hi - lo)
    assert not verify_certificate(bad).valid


@pytest.mark.parametrize("box", ["picard", "high_order"])
@pytest.mark.parametrize("d", [2, 3])
def test_claims_that_just_miss_the_reference_root_are_refused(d, box):
    """With either a-priori box of the flow (witness flow.box), the certificate's own witness must
    not prove a bracket that the reference root lies 10^-40 outside of (the bracket is ~10^-12 wide,
    the root good to ~10^-60): the proved T* interval has to contain the true T*."""
    A, B, v, cov, doc = _certified(d)
    t = mpf_fraction(tstar_inverse_riccati(A, B, v, cov))
    base = copy.deepcopy(doc)
    base["witness"]["flow"]["box"] = box
    assert verify_certificate(base).valid
    above, below = copy.deepcopy(base), copy.deepcopy(base)
    above["claim"]["lower"] = str(t + Q(1, 10 ** 40))
    below["claim"]["upper"] = str(t - Q(1, 10 ** 40))
    for bad in (above, below):
        r = verify_certificate(bad)
        assert not r.valid and "is not inside (lower, upper]" in r.reason, r.reason


def rate_inverse_riccati(A, B, v, cov, t):
    """lim ‖Σ‖_F (T* − t) from P = Σ⁻¹: near T*, Σ ≈ nnᵀ/μ with μ the smallest eigenvalue of P and n
    its unit eigenvector, and μ′(T*) = nᵀṖn = −2nᵀPAn − 2v nᵀB_s n = −2v nᵀB_s n (Pn = 0), so the
    limit is 1/(2v nᵀB_s n)."""
    with mpmath.workdps(70):
        d = len(A)
        f = _mpf
        K = _inverse_riccati_generator(A, B, v)
        P0 = mpmath.inverse(mpmath.matrix([[f(x) for x in r] for r in cov]))
        x = mpmath.expm(K * t) * mpmath.matrix([P0[i, j] for i in range(d) for j in range(d)] + [1])
        E, U = mpmath.eigsy(mpmath.matrix([[x[i * d + j] for j in range(d)] for i in range(d)]))
        k = min(range(d), key=lambda i: E[i])
        q = sum(U[i, k] * f(B[i][j] + B[j][i]) / 2 * U[j, k] for i in range(d) for j in range(d))
        return 1 / (2 * f(v) * q)


@pytest.mark.parametrize("d", [2, 3])
def test_rate_bracket_contains_the_rate_from_P(d):
    A, B, v, cov, doc = _certified(d)
    rate = mpf_fraction(rate_inverse_riccati(A, B, v, cov, tstar_inverse_riccati(A, B, v, cov)))
    # the reference is good to ~30 digits (μ′ at a 50-digit T*), the rate bracket has ~7
    assert Q(doc["claim"]["rate_lower"]) + Q(1, 10 ** 25) < rate < Q(doc["claim"]["rate_upper"]) - Q(1, 10 ** 25)


# --- mixed and re-framed witnesses -------------------------------------------------------------

ELLIPSOID = json.loads((Path(__file__).parent / "data" / "certificates" / "blowup_general.json").read_text())


def test_an_ellipsoid_certificate_with_a_tail_is_refused():
    assert verify_certificate(ELLIPSOID).valid          # so that the refusal below is the tail's
    bad = copy.deepcopy(ELLIPSOID)
    bad["witness"]["tail"] = copy.deepcopy(_certified(2)[4]["witness"]["tail"])
    r = verify_certificate(bad)
    assert not r.valid and "must not have the keys" in r.reason, r.reason


@pytest.mark.parametrize("key", ["centre", "P", "rho2", "beta"])
def test_a_continuum_certificate_with_an_ellipsoid_key_is_refused(key):
    bad = copy.deepcopy(_certified(2)[4])
    bad["witness"][key] = ELLIPSOID["witness"][key]
    r = verify_certificate(bad)
    assert not r.valid and "must not have the keys" in r.reason, r.reason


@pytest.mark.parametrize("edit", ["drop", "swap"])
def test_a_tail_read_in_another_frame_is_refused_even_with_that_frames_rate(edit):
    """The tail's p̂ and P live in the witness's frame.  Without the frame (or with its columns
    swapped) the checker proves a different rate over the misread p-box (0.5 for d = 2 here, not
    the certificate's), so claim that rate: the entry test must still refuse, the flow's Σ(t1) not
    being near p̂ in those coordinates."""
    doc = _certified(2)[4]
    bad = copy.deepcopy(doc)
    if edit == "drop":
        del bad["witness"]["frame"]
    else:
        bad["witness"]["frame"] = [list(reversed(r)) for r in bad["witness"]["frame"]]
    bad["claim"]["rate_lower"], bad["claim"]["rate_upper"] = "1/100", "100"
    r = verify_certificate(bad)
    assert not r.valid and "enter the neighbourhood" in r.reason, r.reason


# --- the sets the checks run over: Z, not its centre; the whole stage-1 enclosure, not its midpoint

@pytest.mark.parametrize("key, factor", [("r_p", Q(10 ** 4)), ("rho2", Q(10 ** 8))],
                         ids=["wide-p-box", "wide-y-box"])
def test_a_much_wider_tail_box_is_rejected(key, factor):
    """A box Z 10^4 times wider in p (or in y) makes every entry test easier, so only the tests on
    Z itself can refuse it: the contraction (or g > 0, or the bracket through λ(Z)) must fail.  A
    checker that evaluated the Jacobian and g at p̂ (or at y = 0) only would accept this witness."""
    bad = copy.deepcopy(_certified(2)[4])
    t = bad["witness"]["tail"]
    t[key] = [str(Q(x) * factor) for x in t[key]] if isinstance(t[key], list) else str(Q(t[key]) * factor)
    r = verify_certificate(bad)
    assert not r.valid, r.reason


def _simple_tail(r_p="1/100"):
    """A = 0, B = I, V = I (g(p, 0) = 2(1 + |p|²), the transverse Jacobian −g·I at y = 0), d = 2,
    with a tail around p̂ = 0 whose checks 1, 3, 4 hold (rate 1/2 at p = 0)."""
    A, B, V = [[Q(0)] * 2 for _ in range(2)], exact.identity(2, Q(1)), exact.identity(2, Q(1))
    tail = {"kind": "continuum", "p_centre": ["0"], "r_p": [r_p], "P": [["1", "0"], ["0", "1"]],
            "rho2": "1/100", "beta": "1/2"}
    ct = ContinuumTail(_Compactified(A, B, V, first_axis(2)), tail, V, {})
    assert ct.neighbourhood(None, Q(1, 4), Q(1)) is None
    return ct


@pytest.mark.parametrize("entry, radius, passes", [
    ((1, 0, 0), 0, True),                       # Σ̃(t1) = 2^40 e1e1ᵀ: p1 = 0, y1 = (0, 2^-40)
    ((1, 0, 0), Q(1, 2 ** 60), True),           # a tiny enclosure around it
    ((1, 0, 0), Q(1, 10), False),               # p1 and E1 only known to ±1/10: outside r_p = 1/100
    ((1, Q(1, 1000), 0), Q(1, 10), False),
], ids=["point", "tiny-ball", "wide-ball", "wide-ball-off-centre"])
def test_entry_reads_the_whole_stage1_enclosure(entry, radius, passes):
    """`entry` on a ball Σ̃(t1)/2^E (E = 40) with a midpoint exactly on p̂ = 0, E = 0: it must pass
    only when every matrix in the ball enters Z (a check on the midpoint would pass all four)."""
    s11, s12, s22 = entry
    ct = _simple_tail()
    with ctx.workprec(128):
        rad = balls.arb_of(Q(radius)) * arb(0, 1)
        S1 = arb_mat([[balls.arb_of(Q(s11)) + rad, balls.arb_of(Q(s12)) + rad],
                      [balls.arb_of(Q(s12)) + rad, balls.arb_of(Q(s22)) + rad]])
        w1, why = ct.entry(S1, 40)
    assert (w1 is not None) == passes, why


def test_a_frame_with_huge_entries_is_refused_before_the_exact_work():
    """A d = 8 frame of 2000-digit rationals (each under the 4000-character bound) costs the exact
    T⁻¹ and framed controls minutes of CPU: the checker must refuse it first, by the entries' size."""
    import random

    rng = random.Random(1)
    d = 8
    doc = copy.deepcopy(_certified(2)[4])         # the continuum route frames first
    A = [[str(Q(rng.randint(-5, 5), 4)) for _ in range(d)] for _ in range(d)]
    doc["params"] = {"A": A, "B": [[str(Q(int(i == j))) for j in range(d)] for i in range(d)],
                     "V": [[str(Q(int(i == j), 2)) for j in range(d)] for i in range(d)],
                     "b": ["0"] * d, "mean": ["0"] * d,
                     "cov": [[str(Q(int(i == j))) for j in range(d)] for i in range(d)]}
    doc["witness"]["frame"] = [[f"{rng.randint(10 ** 1990, 10 ** 1991)}/{rng.randint(10 ** 1990, 10 ** 1991)}"
                                for _ in range(d)] for _ in range(d)]
    # core.frame.moment_frame refuses the entries' size before its exact T⁻¹: the reason shows where
    r = verify_certificate(doc)
    assert not r.valid
    assert "frame entries" in r.reason, r.reason

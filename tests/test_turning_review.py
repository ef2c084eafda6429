"""Adversarial review of the turning tail of `blowup_general` (`checker/_turning_tail.py`, MATH.md §15,
"A turning direction at infinity").

The fast tests read the shipped certificate tests/data/certificates/blowup_general.turning.json
(d = 2, A = I/2, B = diag(1, 4), V = I/2 + 2J, Σ0 = e1e1ᵀ; written by tests/data/make_certificates.py)
and tamper with it, or call the tail's `entry` and `bracket` on hand-made balls.  Every tampered
witness here is one the checker must refuse, and each test names the check that must refuse it
(a rejection for another reason would hide a mutant: tests/mutation/run_mutants.py, block "turning").

Closed form: A = cI gives Σ(t) = e^{2ct}Y(θ(t)) with Y the A = 0 solution and θ′ = e^{2ct} (substitute:
Σ̇ = 2cΣ + e^{4ct}Q(Y) = 2cΣ + Q(Σ)), so Y's blow-up time T0 is reached at (e^{2cT*} − 1)/(2c) = T0:
T* = log(1 + 2cT0)/(2c), with T0 the quadrature of tests/test_blowup_turning.py (`_closed_form`).
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction as Q
from pathlib import Path

import mpmath
import pytest
from flint import arb, arb_mat, ctx

from riccati_verify.checker import verify_certificate
from riccati_verify.checker._reduced_riccati import WitnessError
from riccati_verify.checker._turning_tail import TurningTail
from riccati_verify.core import balls
from tests.test_blowup_turning import A_, B_, BETA, _closed_form

CERT = Path(__file__).resolve().parent / "data" / "certificates" / "blowup_general.turning.json"
C = Q(1, 2)


@pytest.fixture(scope="module")
def doc():
    d = json.loads(CERT.read_text())
    # the closed form below is for exactly this instance
    assert d["params"]["A"] == [[str(C), "0"], ["0", str(C)]]
    assert d["params"]["B"] == [["1", "0"], ["0", str(BETA)]]
    assert d["params"]["V"] == [[str(A_), str(-B_)], [str(B_), str(A_)]]
    assert d["params"]["cov"] == [["1", "0"], ["0", "0"]]
    return d


@pytest.fixture(scope="module")
def t_star() -> mpmath.mpf:
    with mpmath.workdps(40):
        return mpmath.log(1 + 2 * C * _closed_form()) / (2 * C)


def _mp(x: Q) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def _with(doc, claim=None, **tail_or_witness):
    """A copy of the certificate with claim and witness entries replaced (keys of the tail as
    tail_<key>, of the witness as they are)."""
    d = copy.deepcopy(doc)
    if claim is not None:
        d["claim"] = dict(claim, kind="blowup_general")
    for k, v in tail_or_witness.items():
        if k.startswith("tail_"):
            d["witness"]["tail"][k[5:]] = v
        else:
            d["witness"][k] = v
    return d


def _contains(doc, T) -> bool:
    lo, hi = Q(doc["claim"]["lower"]), Q(doc["claim"]["upper"])
    with mpmath.workdps(40):
        return _mp(lo) < T <= _mp(hi)


# --- the stage-1 bookkeeping: Σ divided by 2^E, ε1 = 2^-E/S1_11 -----------------------------------

def test_a_rescaled_stage1_gives_the_same_bracket(doc, t_star):
    """Σ0/2^3 with V·2^3 is the same problem (`_stage1`): still accepted, and the closed form is in the
    claim; an ε1 that forgot the 2^-E would move the bracket 8-fold away from t1."""
    assert _contains(doc, t_star)
    segs = [dict(s, rescale_log2=3) for s in doc["witness"]["segments"]]
    res = verify_certificate(_with(doc, segments=segs))
    assert res.valid, res.reason


# --- the tail's frame T·D: D = diag(scale) ---------------------------------------------------------

def test_the_same_box_in_a_rescaled_tail_frame_is_accepted(doc):
    """scale (1, 3/4) with H_ij divided by scale_i·scale_j is the same box X: the return map runs in
    the frame T·D and the entry divides Σ̂(t1) by scale_i·scale_j; the return map in the frame D⁻¹
    instead no longer lands in the box.  (This certificate's return lands within 4% of its box's
    S12 bound, so the same box at scale (1, 1/2) is already refused: the Lohner image, taken in the
    stretched coordinates, is a few per cent wider.)"""
    sc = (Q(1), Q(3, 4))
    H = [[str(Q(x) / (sc[i] * sc[j])) for j, x in enumerate(r)] for i, r in enumerate(doc["witness"]["tail"]["H"])]
    res = verify_certificate(_with(doc, tail_H=H, tail_scale=["1", "3/4"]))
    assert res.valid, res.reason


# --- false claims just beside the true T* (inside the proved bracket's width) ----------------------

@pytest.mark.parametrize("side", [1, -1])
def test_a_false_claim_beside_the_closed_form_is_rejected(doc, t_star, side):
    """(T* + δ, 2T*] and (0, T* − δ] are false; δ = 10^-15 is far inside the certified width (10^-8),
    so only a proved bracket that keeps T* on the right side of each end refuses both, and each
    needs its own end of the claim compared (the other end of the claim holds)."""
    with mpmath.workdps(40):
        T = Q(mpmath.nstr(t_star, 35))
    dlt = Q(1, 10 ** 15)
    lo, hi = (T + dlt, 2 * T) if side > 0 else (Q(0), T - dlt)
    res = verify_certificate(_with(doc, claim={"lower": str(lo), "upper": str(hi)}))
    assert not res.valid and "proved T*" in res.reason, res.reason


# --- the return map -------------------------------------------------------------------------------

def test_a_scale_bound_where_A_matters_is_rejected_by_the_return_map(doc):
    """eps_bar = 1/4: the ball A ∈ [0, 1/4]·I/2 moves the phase reached in time τ by about cε̄τ² ≈ 0.03
    (θ(τ) = (e^{2aτ} − 1)/(2a) for A = aI), far outside the box (H12 ≈ 1e-5); a return map run without
    the ball A (A = 0, or A = Ã at the scale 1) would prove it."""
    res = verify_certificate(_with(doc, tail_eps_bar="1/4"))
    assert not res.valid and "return map" in res.reason, res.reason


def test_a_return_that_holds_at_the_scale_eps_bar_only_is_rejected(doc):
    """With A = cI the phase reached in time τ′ at the scale ε is θ_ε(τ′) = (e^{2εcτ′} − 1)/(2εc).
    Take ε̄ = 1/64 and τ′ with θ_ε̄(τ′) = τ: at ε = ε̄ the return is exactly the certified one (a
    return map run at the point A = ε̄Ã alone would prove it), but at the smaller scales that every
    later turn uses, τ′ ends about ε̄cτ² ≈ 2·10⁻³ short of the phase, far outside the box."""
    eps, tau = Q(1, 64), Q(doc["witness"]["tail"]["tau"])
    with mpmath.workdps(40):
        k = 2 * _mp(eps) * _mp(C)
        tau2 = Q(mpmath.nstr(mpmath.log(1 + k * _mp(tau)) / k, 30))
    res = verify_certificate(_with(doc, tail_eps_bar=str(eps), tail_tau=str(tau2)))
    assert not res.valid and "return map" in res.reason, res.reason


def test_a_much_wider_box_is_rejected_by_the_return_map(doc):
    """H·10^4: the image of the box is wider than the box; a flow of the centre e1e1ᵀ alone would
    land inside it."""
    H = [[str(Q(x) * 10 ** 4) for x in r] for r in doc["witness"]["tail"]["H"]]
    res = verify_certificate(_with(doc, tail_H=H))
    assert not res.valid and "return map" in res.reason, res.reason


@pytest.mark.parametrize("factor, check", [(Q(1, 2), "Z11 > 1"), (Q(99, 100), "land in its box")])
def test_a_changed_return_time_is_rejected_by_the_right_check(doc, factor, check):
    """τ/2 ends a quarter turn away, where Z11 ≈ 0.8 has shrunk: the growth test (i) refuses it;
    0.99τ still grows Σ̃11 but ends off the box's phase: the image box test (ii) refuses it."""
    tau = str(Q(doc["witness"]["tail"]["tau"]) * factor)
    res = verify_certificate(_with(doc, tail_tau=tau))
    assert not res.valid and check in res.reason, res.reason


def test_a_return_into_its_box_without_growth_is_rejected_by_the_growth_check_alone():
    """The growth test (i) is not implied by the box test (ii): a witness passes (ii) with κ ≤ 1.

    Frame controls A = 0, B = [[0, 1], [1, 0]], V = [[1, 0], [−1, −1]].  For Σ = [[a, x], [x, y]]
    the field is Σ̇11 = 4ax, Σ̇12 = −2ax, Σ̇22 = −2ay − 2x² − 4xy: B11 = 0 makes e1e1ᵀ an
    equilibrium, and the normalised coordinates contract, (x/a)˙ = −2x − 4x²/a and (y/a)˙ ≈ −2y
    near it, so the image of X (H = 1/100, τ = 1) lands in X after dividing by κ = Z11.  But
    Σ̇11 = 4Σ11Σ12 shrinks Σ11 from every S in X with S12 < 0 (κ ≈ 0.983 from S12 = −1/100): no
    ε_{n+1} < ε_n, no geometric series, no blow-up.  Only κ > 1 refuses this tail; with κ > 0
    (mutant `turning-no-growth-check`) `returns` proves it."""
    from types import SimpleNamespace

    from riccati_verify.checker._lohner import enclose_lohner

    def m(rows):
        return [[Q(x) for x in r] for r in rows]

    fp = SimpleNamespace(A=m([[0, 0], [0, 0]]), B=m([[0, 1], [1, 0]]), V=m([[1, 0], [-1, -1]]))
    flow = {"order": 20, "jac_order": 10, "tol_bits": 60, "max_steps": 200}
    t = {"kind": "turning", "eps_bar": "1", "H": [["0", "1/100"], ["1/100", "1/100"]], "tau": "1",
         "scale": ["1", "1"], "flow": flow, "precision_bits": 128}
    tail = TurningTail(t, {"tail": t}, 2)
    why = tail.returns(fp)
    assert why is not None and "Z11 > 1" in why, why
    with ctx.workprec(128):
        # the box test (ii) on the very image the checker computed holds: (ii) alone would accept
        S = arb_mat(2, 2)
        for i in range(2):
            for j in range(2):
                S[i, j] = arb(1) if i == j == 0 else arb(0) + arb(0, 1) * balls.arb_of(Q(1, 100))
        Z = enclose_lohner(None, S, balls.arb_matrix(fp.A), fp.B, fp.V, None, Q(1), **flow, prec=128,
                           covariance_only=True, high_order_box=True, width_limit=8.0).cov
        assert tail.kappa > 0 and tail.in_box(Z, tail.kappa) == ""
        # and κ < 1 is a fact, not a wide ball: the flow of one point of X
        S[0, 1] = S[1, 0] = balls.arb_of(Q(-1, 100))
        S[1, 1] = arb(0)
        Zp = enclose_lohner(None, S, fp.A, fp.B, fp.V, None, Q(1), **flow, prec=128, covariance_only=True,
                            high_order_box=True).cov
        assert Zp[0, 0] < 1


def test_a_pinned_second_diagonal_is_rejected(doc):
    """H22 = 0 pins S22 = 0, which the return does not keep (nor the entry): the diagonal entries
    (i, i), i ≥ 2, are part of the box test."""
    H = copy.deepcopy(doc["witness"]["tail"]["H"])
    H[1][1] = "0"
    res = verify_certificate(_with(doc, tail_H=H))
    assert not res.valid and "S22" in res.reason, res.reason


def test_rate_keys_and_replaced_keys_are_refused(doc):
    res = verify_certificate(_with(doc, claim=dict(doc["claim"], rate_lower="1", rate_upper="2")))
    assert not res.valid and "rate" in res.reason
    res = verify_certificate(_with(doc, centre=[["1", "0"], ["0", "0"]]))
    assert not res.valid and "must not have" in res.reason


# --- the tail's entry and bracket on hand-made balls (no flow) -------------------------------------

def _tail(H12="1/10", H22="1/10", eps_bar="1/64", scale=("1", "1"), tau="1/3") -> TurningTail:
    t = {"kind": "turning", "eps_bar": eps_bar, "H": [["0", H12], [H12, H22]], "tau": tau,
         "scale": list(scale), "flow": {"order": 20, "jac_order": 10, "tol_bits": 60, "max_steps": 100},
         "precision_bits": 128}
    return TurningTail(t, {"tail": t}, 2)


def _S1(s11, s12, s22, rad=0.0) -> arb_mat:
    S = arb_mat(2, 2)
    for (i, j), x in {(0, 0): s11, (0, 1): s12, (1, 0): s12, (1, 1): s22}.items():
        S[i, j] = arb(x, rad)
    return S


def test_entry_eps1_is_two_to_minus_E_over_S11():
    with ctx.workprec(128):
        eps1, why = _tail().entry(_S1(3, "0.01", "0.001", 1e-20), 5)
        assert why == ""
        assert eps1.lower() <= balls.arb_of(Q(1, 96)) <= eps1.upper()
        assert eps1.rad() < 1e-18


def test_entry_refuses_eps1_above_eps_bar():
    with ctx.workprec(128):
        eps1, why = _tail(eps_bar="1/100").entry(_S1(3, "0.01", "0.001"), 5)     # ε1 = 1/96 > 1/100
        assert eps1 is None and "eps_bar" in why
        eps1, _ = _tail(eps_bar="1/95").entry(_S1(3, "0.01", "0.001"), 5)
        assert eps1 is not None


def test_entry_tests_every_entry_but_S11_in_the_tail_frame():
    with ctx.workprec(128):
        # E = 10: ε1 = 2^-10/S11 ≤ eps_bar = 1/64
        assert _tail().entry(_S1(2, "0.1", "0.1"), 10)[0] is not None       # S12/S11 = S22/S11 = 1/20
        assert "S22" in _tail().entry(_S1(2, "0.1", "0.3"), 10)[1]          # S22/S11 = 0.15 > 0.1
        assert "S12" in _tail().entry(_S1(2, "0.3", "0.1"), 10)[1]
        assert "Σ̃11(t1) > 0" in _tail().entry(_S1(0, "0", "0", 1e-3), 10)[1]
        # D = diag(1, 4): Σ̃12 = Σ̂12/4 and Σ̃22 = Σ̂22/16
        assert _tail(scale=("1", "4")).entry(_S1(1, "0.36", "1.5"), 10)[0] is not None
        assert "S12" in _tail(scale=("1", "4")).entry(_S1(1, "0.44", "1.5"), 10)[1]
        assert "S22" in _tail(scale=("1", "4")).entry(_S1(1, "0.36", "1.7"), 10)[1]


def _frac(x: arb) -> Q:
    assert x.rad() == 0
    return balls.fraction_of_mid(x)


def test_bracket_encloses_the_geometric_sums_from_the_ball_ends():
    """At 30 bits (inexact τ = 1/3) the returned ends must lie outside [ε1lo τκhi/(κhi − 1),
    ε1hi τκlo/(κlo − 1)] computed exactly from the balls' ends: rounding inward, or κlo and κhi
    swapped, puts an end inside."""
    t = _tail()
    with ctx.workprec(30):
        t.kappa = arb("4.8104", "1e-4")
        eps1 = arb("1e-9", "1e-15")
        below, above = t.bracket(eps1)
    klo, khi = _frac(t.kappa.lower()), _frac(t.kappa.upper())
    elo, ehi = _frac(eps1.lower()), _frac(eps1.upper())
    tau = Q(1, 3)
    lo_exact, hi_exact = elo * tau * khi / (khi - 1), ehi * tau * klo / (klo - 1)
    assert _frac(below) <= lo_exact and hi_exact <= _frac(above)
    # and not uselessly wide: 30-bit rounding only
    assert lo_exact - _frac(below) < lo_exact / 2 ** 24 and _frac(above) - hi_exact < hi_exact / 2 ** 24


@pytest.mark.parametrize("bad", [
    {"eps_bar": "0"}, {"tau": "0"}, {"tau": "101"}, {"scale": ["1"]}, {"scale": ["1", "0"]},
    {"scale": ["1", "1/" + "9" * 30]}, {"H": [["0", "1"], ["2", "1"]]}, {"H": [["0", "-1"], ["-1", "1"]]},
    {"precision_bits": 10 ** 6}, {"flow": {"order": 10 ** 6, "jac_order": 10, "tol_bits": 60, "max_steps": 1}},
    {"flow": {"order": 20, "jac_order": 10, "tol_bits": 60, "max_steps": 10 ** 9}},
    {"kind": "continuum"}, {"extra": "1"},
])
def test_malformed_tails_raise_witness_errors(bad):
    t = {"kind": "turning", "eps_bar": "1/64", "H": [["0", "1"], ["1", "1"]], "tau": "1",
         "scale": ["1", "1"], "flow": {"order": 20, "jac_order": 10, "tol_bits": 60, "max_steps": 100},
         "precision_bits": 128}
    t.update(bad)
    with pytest.raises(WitnessError):
        TurningTail(t, {"tail": t}, 2)


def test_the_published_schema_describes_the_turning_tail(doc):
    """A turning certificate validates against certificate.schema.json, without rate keys only; an
    ellipsoid/continuum blowup_general claim still needs them."""
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (the [test] extra) validates against the schema")
    from riccati_verify.certify.certificate import certificate_schema

    v = jsonschema.Draft202012Validator(certificate_schema())
    assert list(v.iter_errors(doc)) == []
    assert list(v.iter_errors(_with(doc, claim=dict(doc["claim"], rate_lower="1", rate_upper="2"))))
    bad = _with(doc, tail_extra="1")
    assert list(v.iter_errors(bad))
    other = json.loads((CERT.parent / "blowup_general.json").read_text())
    assert list(v.iter_errors(other)) == []
    other["claim"].pop("rate_lower")
    assert list(v.iter_errors(other))


# --- an independent reference for the random draws: Taylor integration of Σ in mpmath ------------

def _taylor_blowup(params: dict, dps: int, order: int, decades: tuple[int, int]) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(t2, t2 − t1): the times at which max|Σ_ij| first passes 10^decades[0] (t1) and 10^decades[1]
    (t2), by adaptive Taylor steps of Σ̇ = AΣ + ΣAᵀ + VΣBΣ + ΣBᵀΣVᵀ (coefficients by Cauchy products;
    step h ≤ ρ/4 with ρ the radius guessed from the last coefficients, halved until the last term is
    below 10^(5−dps)·|Σ|).  Near T*, T* − t ~ 1/|Σ|, so T* − t2 ≈ (t2 − t1)·10^(decades[0] − decades[1])."""
    mpmath.mp.dps = dps

    def q(s):
        n, _, d = s.partition("/")
        return mpmath.mpf(int(n)) / int(d) if d else mpmath.mpf(s)

    A, B, V, S = ([[q(x) for x in r] for r in params[k]] for k in ("A", "B", "V", "cov"))
    d = len(S)

    def mm(X, Y):
        return [[mpmath.fsum(X[i][k] * Y[k][j] for k in range(d)) for j in range(d)] for i in range(d)]

    def norm(X):
        return max(abs(x) for r in X for x in r)

    t, t1, tol = mpmath.mpf(0), None, mpmath.mpf(10) ** (5 - dps)
    for _ in range(20000):
        n0 = norm(S)
        if t1 is None and n0 >= mpmath.mpf(10) ** decades[0]:
            t1 = t
        if n0 >= mpmath.mpf(10) ** decades[1]:
            return t, t - t1
        Ss, BSs = [S], [mm(B, S)]
        for k in range(order):
            acc = [[mpmath.mpf(0)] * d for _ in range(d)]
            for i in range(k + 1):
                P = mm(Ss[i], BSs[k - i])
                acc = [[a + b for a, b in zip(r, s)] for r, s in zip(acc, P)]
            F = [[a + b for a, b in zip(r, s)] for r, s in zip(mm(A, Ss[k]), mm(V, acc))]
            Ss.append([[(F[i][j] + F[j][i]) / (k + 1) for j in range(d)] for i in range(d)])
            BSs.append(mm(B, Ss[-1]))
        rho = min((n0 / norm(Ss[k])) ** (mpmath.mpf(1) / k) for k in (order - 2, order - 1, order) if norm(Ss[k]) > 0)
        h = rho / 4
        while norm(Ss[order]) * h ** order > tol * n0:
            h /= 2
        S = [[mpmath.fsum(Ss[k][i][j] * h ** k for k in range(order + 1)) for j in range(d)] for i in range(d)]
        S = [[(S[i][j] + S[j][i]) / 2 for j in range(d)] for i in range(d)]
        t += h
    raise AssertionError("the reference did not reach its norm")


def taylor_t_star(params: dict) -> tuple:
    """(T, err): the reference's T* at 30 digits, run to |Σ| = 10^30 (T* − t2 ≈ 10^-10·(t2 − t1) ≲
    10^-30), and its error allowance (the remainder, and rounding over ~2000 steps), as mpmath numbers at
    40 digits; params as `problem_to_dict` writes them.  About a minute at d = 4."""
    with mpmath.workdps(40):
        T, rem = _taylor_blowup(params, 30, 24, (20, 30))
        return T, rem * mpmath.mpf(10) ** -9 + mpmath.mpf(10) ** -27


@pytest.mark.slow
def test_the_taylor_reference_reproduces_the_closed_form(t_star, doc):
    """The reference, on the shipped instance (d = 2, to |Σ| = 10^12 at 20 digits: ~10 CPU s), against
    its closed form."""
    with mpmath.workdps(30):
        T, rem = _taylor_blowup(doc["params"], 20, 16, (6, 12))
        assert abs(T - t_star) < rem * 10 ** -6 * 10 + mpmath.mpf(10) ** -16
        assert _contains(doc, T)


@pytest.mark.slow
@pytest.mark.parametrize("index", [(3, 0, 4), (4, 0, 7), (4, 0, 15)])
def test_turning_draws_agree_with_an_independent_taylor_reference(index):
    """The random draws whose direction keeps turning (the slow acceptance test's misses before the
    turning tail): blowup_time at 20 digits (a turning certificate, narrower than 1e-15) against the
    Taylor reference above at 30 digits, run to |Σ| = 10^30 (T* − t2 ≈ 10^-10·(t2 − t1) ≲ 10^-30).
    Measured (CPU s): producing 25 / 32 / 34, the reference 49 / 53 / 88; the reference's T* lay
    2.3e-22, 3.4e-23, 5.4e-23 above the lower ends (brackets 4.6e-22, 6.8e-23, 1.1e-22 wide).  The DOP853
    reference (`reference_blowup`) sees the blow-up but gives no T* interval here: its decade ratios swing
    with the turn (its single-ratio tail had put (4, 0, 15)'s T* 5e-11 below the truth, and a test that
    held the bracket against it, test_blowup_turning.py's, failed on that draw)."""
    from riccati_verify.certify.blowup import blowup_time
    from riccati_verify.core.io import problem_to_dict
    from riccati_verify.testing.strategies import general_instance, reference_blowup

    p, s = general_instance(*index)
    res = blowup_time(p, s, digits=20)
    assert res.rigorous and res.blowup and res.certificate["witness"]["tail"]["kind"] == "turning", res.note
    assert Q(res.upper) - Q(res.lower) < Q(1, 10 ** 15)
    ref = reference_blowup(p, s)
    assert ref["blowup"] is True and ref["t_star"] is None
    T, err = taylor_t_star(problem_to_dict(p, s))
    with mpmath.workdps(40):
        assert _mp(Q(res.lower)) < T - err and T + err <= _mp(Q(res.upper)), (index, res.lower, res.upper, T)

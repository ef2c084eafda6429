"""Certified blow-up times for general V (issue 14; MATH.md §15): the `blowup_general` route.

Independent references: the closed form of a rotated diagonal system (T* is invariant under
Σ ↦ RΣRᵀ with R orthogonal), the 60-digit Taylor / Domb-Sykes estimate within its own error
estimate, and scipy's DOP853 on the compactified flow.  Tampered certificates are rejected.
"""

from __future__ import annotations

import copy
import json
import math
from fractions import Fraction as Q
from pathlib import Path

import mpmath
import numpy as np
import pytest

from riccati_verify.checker import verify_certificate
from riccati_verify.core import exact
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.certify.blowup import blowup_time
from riccati_verify.certify.blowup.compactified import (SEEN_FAR, SEEN_SHRINKING, SEEN_UNSETTLED,
                                                        certify_general_blowup,
                                                        locate_infinity, search_infinity)
from riccati_verify.certify.blowup.general import taylor_blowup_estimate
from riccati_verify.certify.certificate import make_certificate
from riccati_verify.numeric.views import float_view
from riccati_verify.testing.strategies import general_instance, reference_blowup

DATA = Path(__file__).parent / "data" / "certificates" / "blowup_general.json"

# a d = 2 general instance that blows up (general_instance(2, 0, 2)); its verification takes ~1 s
P2 = Params.from_arrays([[-1, -2], [0, -2]], [[Q(-3, 2), -1], [0, Q(1, 3)]], [[-1, 0], [Q(-5, 4), Q(4, 3)]])
S2 = Gaussian((Q(0), Q(0)), ((Q(169, 36), Q(22, 9)), (Q(22, 9), Q(61, 36))))


@pytest.fixture(scope="module")
def cert12():
    out = certify_general_blowup(P2, S2, 10)
    assert out["ok"], out["reason"]
    return make_certificate("blowup_general", out["claim"], P2, S2, out["witness"], out["method"])


def _rotated_diagonal():
    """A diagonal decoupled system rotated by the rational rotation R = [[3/5, -4/5], [4/5, 3/5]],
    and its closed-form T* = min_i ln(1 + a_i/c_i)/(2 a_i), c_i = v_i β_i σ_i (MATH.md §6), in mpmath."""
    R = ((Q(3, 5), Q(-4, 5)), (Q(4, 5), Q(3, 5)))
    rot = lambda D: exact.matmul(exact.matmul(R, D), exact.transpose(R))   # noqa: E731
    a, beta, v, s0 = (Q(1, 2), Q(-1)), (Q(1), Q(2)), (Q(2), Q(1, 2)), (Q(1), Q(3, 2))
    diag = lambda x: ((x[0], Q(0)), (Q(0), x[1]))                            # noqa: E731
    p = Params(rot(diag(a)), rot(diag(beta)), rot(diag(v)), (Q(0), Q(0)))
    state = Gaussian((Q(0), Q(0)), rot(diag(s0)))
    mpmath.mp.dps = 50
    times = []
    for i in range(2):
        ci = v[i] * beta[i] * s0[i]
        c = mpmath.mpf(ci.numerator) / ci.denominator
        ai = mpmath.mpf(a[i].numerator) / a[i].denominator
        if c > 0 and ai + c > 0:
            times.append(mpmath.log1p(ai / c) / (2 * ai))
    return p, state, min(times)


def test_rotated_diagonal_bracket_contains_the_closed_form():
    p, state, T = _rotated_diagonal()
    assert p.V_scalar is None
    res = blowup_time(p, state, digits=16)
    assert res.rigorous and res.blowup and res.certificate["claim"]["kind"] == "blowup_general"
    assert mpmath.mpf(res.lower) < T <= mpmath.mpf(res.upper)
    assert res.digits >= 14
    assert verify_certificate(res.certificate).valid


def test_bracket_contains_the_taylor_estimate_and_the_float_flow():
    res = blowup_time(P2, S2, digits=20)
    assert res.status.value == "certified" and res.certificate["claim"]["kind"] == "blowup_general"
    lo, hi = Q(res.lower), Q(res.upper)
    assert hi - lo <= Q(1, 10 ** 15)
    est = taylor_blowup_estimate(P2, S2, 30)
    # the estimate's stated error is not a bound; the interval (estimate ± error) must meet the bracket
    assert est.value - est.error <= hi and est.value + est.error >= lo
    # the independent reference (its own compactified field and DOP853; its interval from the decade
    # times and the rtol 1e-10 / 1e-8 difference) meets the bracket
    ref = reference_blowup(P2, S2)
    assert ref["blowup"] is True and ref["t_star"][0] <= float(hi) and float(lo) <= ref["t_star"][1]
    prof = res.to_dict()["profile"]
    assert Q(prof["rate_lower"]) < Q(prof["rate_upper"])
    # a sanity check of the planner, not an independent route: the rate ‖Σ‖_F (T* − t) → C of the
    # producer's own float search (which plans the bracket) agrees with the proved interval
    A, B, V, _ = float_view(P2)
    loc = locate_infinity(A, B, V, np.array(S2.cov, dtype=float))
    assert abs(float(prof["rate_lower"]) - float(np.linalg.norm(loc["S"]) / loc["lam"])) < 1e-6


def test_certificate_file_verifies():
    doc = json.loads(DATA.read_text())
    assert doc["claim"]["kind"] == "blowup_general"
    assert verify_certificate(doc).valid


def _tampered(doc, edit):
    bad = copy.deepcopy(doc)
    edit(bad)
    return verify_certificate(bad)


def _shift_bracket(doc):
    lo, hi = Q(doc["claim"]["lower"]), Q(doc["claim"]["upper"])
    w = hi - lo
    doc["claim"]["lower"], doc["claim"]["upper"] = str(lo + 2 * w), str(hi + 2 * w)


def _narrow_bracket(doc):
    lo, hi = Q(doc["claim"]["lower"]), Q(doc["claim"]["upper"])
    doc["claim"]["lower"] = str(lo + (hi - lo) * Q(99, 100))


def _narrow_bracket_from_above(doc):
    # the proved interval lies around the claim's middle: an upper end at the middle is not proved
    lo, hi = Q(doc["claim"]["lower"]), Q(doc["claim"]["upper"])
    doc["claim"]["upper"] = str((lo + hi) / 2)


def _move_centre(doc):
    c = doc["witness"]["centre"]
    c[0][0] = str(Q(c[0][0]) + Q(1, 1000))


def _shrink_rho(doc):
    doc["witness"]["rho2"] = str(Q(doc["witness"]["rho2"]) / 10 ** 6)


def _big_beta(doc):
    doc["witness"]["beta"] = str(Q(doc["witness"]["beta"]) * 10 ** 4)


def _break_P(doc):
    doc["witness"]["P"][0][0] = str(-abs(Q(doc["witness"]["P"][0][0])))


def _change_params(doc):
    doc["params"]["V"][0][0] = str(Q(doc["params"]["V"][0][0]) + Q(1, 100))


def _change_cov(doc):
    doc["params"]["cov"][1][1] = str(Q(doc["params"]["cov"][1][1]) * Q(11, 10))


def _move_segment(doc):
    s = doc["witness"]["segments"][-1]
    s["duration"] = str(Q(s["duration"]) * Q(999, 1000))


def _change_frame(doc):
    # the first column is the blow-up direction (the centre is ≈ e1e1ᵀ in the frame): moving it
    # moves the equilibrium at infinity away from the centre.  (Any invertible frame gives a true
    # statement, T* is frame-invariant; a change in the other columns may leave the proof valid.)
    T = doc["witness"]["frame"]     # the producer's certificate is in a frame (KeyError otherwise)
    T[1][0] = str(Q(T[1][0]) + Q(1, 8))


def _drop_frame(doc):
    del doc["witness"]["frame"]     # C, centre, P and the segments are in the frame's coordinates


def _shift_rate(doc):
    lo, hi = Q(doc["claim"]["rate_lower"]), Q(doc["claim"]["rate_upper"])
    doc["claim"]["rate_lower"], doc["claim"]["rate_upper"] = str(hi + (hi - lo)), str(hi + 2 * (hi - lo))


@pytest.mark.parametrize("edit", [_shift_bracket, _narrow_bracket, _narrow_bracket_from_above, _move_centre, _shrink_rho, _big_beta,
                                  _break_P, _change_params, _change_cov, _move_segment, _shift_rate,
                                  _change_frame, _drop_frame],
                         ids=lambda f: f.__name__.lstrip("_"))
def test_tampered_certificate_is_rejected(cert12, edit):
    r = _tampered(cert12, edit)
    assert not r.valid, r.reason


@pytest.mark.parametrize("edit,needle", [
    (lambda d: d["witness"].__setitem__("precision_bits", 10 ** 6), "precision_bits"),
    (lambda d: d["witness"].__setitem__("segments", [d["witness"]["segments"][0]] * 65), "segments"),
    (lambda d: d["witness"]["flow"].__setitem__("order", 500), "flow.order"),
    (lambda d: d["witness"]["flow"].__setitem__("box", "none"), "flow.box"),
    (lambda d: d["witness"]["flow"].__setitem__("boxes", "picard"), "flow must have"),
    (lambda d: d["witness"].__setitem__("C", [["1", "2"], ["0", "1"]]), "symmetric"),
    (lambda d: d["witness"].__setitem__("frame", [["1", "2"], ["1/2", "1"]]), "invertible"),
    (lambda d: d["witness"].__setitem__("frame", [["1", "0"]]), "frame"),
])
def test_work_bounds_and_malformed_witnesses(cert12, edit, needle):
    r = _tampered(cert12, edit)
    assert not r.valid and needle in r.reason


def _split(doc, **late):
    """The certificate with its first segment cut in two halves (no rescaling between them: the same
    flow, restarted from the first half's enclosure), the second half given the keys `late`."""
    d = copy.deepcopy(doc)
    s = d["witness"]["segments"][0]
    half = Q(s["duration"]) / 2
    d["witness"]["segments"][:1] = [{"duration": str(half), "rescale_log2": s["rescale_log2"]},
                                    {"duration": str(half), "rescale_log2": 0, **late}]
    return d


def test_a_segment_may_carry_its_own_tolerance_and_order(cert12):
    """Per-segment tol_bits and order change the work only: a later segment at fewer bits still proves
    the bracket; one at far too few bits fails (its enclosure is too wide for the tail), never
    passes wrongly; out-of-bounds or unknown per-segment keys are refused."""
    tol = cert12["witness"]["flow"]["tol_bits"]
    assert verify_certificate(_split(cert12)).valid
    r = verify_certificate(_split(cert12, tol_bits=tol - 10, order=max(20, (tol - 10) // 3)))
    assert r.valid, r.reason
    r = verify_certificate(_split(cert12, tol_bits=20, order=8))
    assert not r.valid, r.reason
    for late, needle in (({"tol_bits": 10}, "segments[1].tol_bits"), ({"order": 500}, "segments[1].order"),
                         ({"tolerance": 60}, "segments[1] must have")):
        r = verify_certificate(_split(cert12, **late))
        assert not r.valid and needle in r.reason, r.reason


def test_the_segment_tolerance_rule():
    # a relative error δ made at t moves T* by δ·(T* − t): the floor 3.33·digits + 12 falls by
    # log2((T* − t)/T*); the share of the entry's allowed radius needs its log2 plus the 12-bit margin
    from riccati_verify.certify.blowup.sizing import segment_tolerance

    assert segment_tolerance(30, 2.0 ** 50, 1.0) == int(math.ceil(3.33 * 30 + 12))
    assert segment_tolerance(30, 2.0 ** 50, 2.0 ** -60) == 62      # the share's need, 50 + 12
    assert segment_tolerance(30, 1.0, 2.0 ** -300) == 20             # the checker's floor
    assert segment_tolerance(30, 2.0 ** 200, 2.0 ** -60) == 212


def test_every_a_priori_mode_proves_the_bracket_and_an_unknown_one_is_refused(cert12):
    """The producer's flow.box is "defect" (`_lohner` point 8); "high_order" (points 1', 3, 3'), "picard"
    (and no key: the certificates written before the key existed: the first-order Picard box) prove the
    same bracket; a mode the checker does not know is refused, not read as one of them."""
    assert cert12["witness"]["flow"]["box"] == "defect"
    for box in ("high_order", "picard", None):
        doc = copy.deepcopy(cert12)
        if box is None:
            del doc["witness"]["flow"]["box"]
        else:
            doc["witness"]["flow"]["box"] = box
        r = verify_certificate(doc)
        assert r.valid, (box, r.reason)
    doc = copy.deepcopy(cert12)
    doc["witness"]["flow"]["box"] = "defects"
    r = verify_certificate(doc)
    assert not r.valid and "box" in r.reason, r.reason


def test_framed_and_unframed_certificates_agree():
    """The frame changes the coordinates of the proof, not T* or the rate: the certificate planned
    in the original coordinates (an independent flow, ellipsoid and rate enclosure) must overlap."""
    from riccati_verify.certify.blowup.compactified import _plan_and_verify

    A, B, V, _ = (np.array(x, dtype=float) for x in float_view(P2))
    loc = locate_infinity(A, B, V, np.array(S2.cov, dtype=float))
    plain = _plan_and_verify(P2, S2, 12, P2, S2, loc, None, None)
    framed = certify_general_blowup(P2, S2, 12)
    assert plain["ok"] and framed["ok"] and "frame" in framed["witness"] and "frame" not in plain["witness"]
    for lo, hi in (("lower", "upper"), ("rate_lower", "rate_upper")):
        a, b = plain["claim"], framed["claim"]
        assert max(Q(a[lo]), Q(b[lo])) < min(Q(a[hi]), Q(b[hi])), (lo, a, b)
    assert np.allclose(plain["direction"], framed["direction"], atol=1e-6)


def test_scalar_v_is_certified_by_the_continuum_tail():
    # V = vI: every rank-one direction with uᵀB_s u > 0 is an equilibrium at infinity (a continuum),
    # so the ellipsoid does not apply and the continuum tail takes over (tests/test_blowup_continuum.py).
    # A = 0, B = V = I: Σ = Σ0(I − 2tΣ0)⁻¹, so T* = 1/(2·2) and ‖Σ‖_F(T* − t) → 1/2 exactly; the
    # direction does not drift at all here (the producer's predicted drift is 0).
    p = Params.from_arrays([[0, 0], [0, 0]], [[1, 0], [0, 1]], [[1, 0], [0, 1]])
    out = certify_general_blowup(p, Gaussian((Q(0), Q(0)), ((Q(1), Q(0)), (Q(0), Q(2)))), 12)
    assert out["ok"] and out["witness"]["tail"]["kind"] == "continuum", out["reason"]
    c = out["claim"]
    assert Q(c["lower"]) < Q(1, 4) <= Q(c["upper"]) and Q(c["rate_lower"]) <= Q(1, 2) <= Q(c["rate_upper"])


def test_certified_convergence_proves_no_blowup_forever():
    """Issue 14 item 2 on [0, ∞): a general-V draw that the independent float integration sees
    converge to an equilibrium is certified blow-up free by a trajectory_convergence certificate,
    which the checker re-verifies and refuses for another Σ0; `blowup_time` alone only says it
    saw no blow-up."""
    from riccati_verify.certify.global_existence import decide_blowup
    from riccati_verify.testing.strategies import reference_fate

    p, g = general_instance(2, 0, 10)
    assert reference_fate(p, g)["fate"] == "equilibrium"
    base = blowup_time(p, g, digits=10)
    assert base.blowup is None and base.no_blowup_seen
    res = decide_blowup(p, g, digits=10)
    assert res.blowup is False and res.rigorous and res.horizon is None
    assert res.status.value == "certified" and res.to_dict()["certifiable"]
    doc = res.certificate
    assert doc["claim"]["kind"] == "trajectory_convergence" and verify_certificate(doc).valid
    moved = copy.deepcopy(doc)
    moved["params"]["cov"][0][0] = str(Q(moved["params"]["cov"][0][0]) * 3)
    assert not verify_certificate(moved).valid


def test_blowup_instance_gets_no_convergence_claim():
    # the regime route on a draw that blows up (T* ≈ 0.0623) must not yield "no blow-up"
    from riccati_verify.certify.global_existence import converges_no_blowup, decide_blowup

    assert converges_no_blowup(P2, S2) is None
    res = decide_blowup(P2, S2, digits=10)
    assert res.blowup is True and res.rigorous


def test_collapse_is_not_mistaken_for_infinity():
    # Σ → 0 makes w = 1/‖Σ‖ grow: the float search for a direction at infinity must give up, not
    # integrate an ever stiffer w·L term (this draw collapses; DOP853 took minutes before the fix)
    p, g = general_instance(2, 0, 3)
    A, B, V, _ = float_view(p)
    assert search_infinity(A, B, V, np.array(g.cov, dtype=float)) == (None, SEEN_SHRINKING)
    assert locate_infinity(A, B, V, np.array(g.cov, dtype=float)) is None


def test_slow_blowup_is_followed_past_the_first_horizon():
    # general_instance(2, 0, 15) blows up slowly at infinity (g ≈ 1/3): w reaches 1e-30 only near
    # s ≈ 200, past the first s_max = 120.  The independent DOP853 event (an entry passes 1e8) lies
    # before T* by about 1/(g·1e8) ≈ 3e-8, so the two agree to 1e-6.
    from riccati_verify.testing.strategies import reference_fate

    p, g = general_instance(2, 0, 15)
    A, B, V, _ = float_view(p)
    loc, seen = search_infinity(A, B, V, np.array(g.cov, dtype=float))
    ref = reference_fate(p, g)
    assert seen == "" and ref["fate"] == "blowup"
    assert 0 <= loc["T"] - ref["t"] <= 1e-6


def test_subexponential_escape_is_not_called_a_blowup():
    # general_instance(4, 0, 8): DOP853 sees an entry pass 1e8 near t = 0.0254, but in the
    # compactified time w decays like 1/s (g → 0 at infinity), so t = ∫ w ds grows without bound
    # (reference_blowup: each decade of ‖Σ‖ past 1e8 takes ~1.6e-6, ratio 0.96, growth at rate
    # ~1.5e6, not a blow-up; reference_fate says "growth"); the search must say so instead of
    # guessing a T*
    p, g = general_instance(4, 0, 8)
    A, B, V, _ = float_view(p)
    assert search_infinity(A, B, V, np.array(g.cov, dtype=float)) == (None, SEEN_FAR)


def test_turning_direction_at_infinity_is_seen_as_unsettled():
    # general_instance(3, 0, 4) blows up (DOP853: T* ≈ 0.1132) along a rank-one direction that keeps
    # turning (V has eigenvalues -1.08 ± 2.46i and -0.09, the real one with uᵀBu > 0, so λ·uᵀBu < 0:
    # no rank-one equilibrium at infinity attracts); the search must say so (the turning tail that
    # then certifies it is tested in tests/test_blowup_turning.py)
    # With early_unsettled the search stops 20 decades into the blow-up (w < EARLY_W, far from every
    # equilibrium at infinity at two chunk ends) instead of following the turns to w = 1e-280, and
    # leaves a direction in the same complex plane of V
    from riccati_verify.certify.blowup.compactified import EARLY_W, turning_frame

    p, g = general_instance(3, 0, 4)
    A, B, V, _ = float_view(p)
    S0 = np.array(g.cov, dtype=float)
    full, early = {}, {}
    assert search_infinity(A, B, V, S0, last=full) == (None, SEEN_UNSETTLED)
    assert search_infinity(A, B, V, S0, last=early, early_unsettled=True) == (None, SEEN_UNSETTLED)
    assert early["early"] and "early" not in full
    assert full["w"] < 1e-279 and 1e-279 < early["w"] < EARLY_W
    top = lambda S: np.linalg.eigh(S)[1][:, -1]       # noqa: E731
    assert np.allclose(turning_frame(V, top(early["S"])), turning_frame(V, top(full["S"])))


def test_early_unsettled_changes_nothing_on_a_settling_direction():
    p, g = general_instance(4, 0, 6)
    A, B, V, _ = float_view(p)
    S0 = np.array(g.cov, dtype=float)
    a, b = search_infinity(A, B, V, S0), search_infinity(A, B, V, S0, early_unsettled=True)
    assert a[1] == b[1] == "" and a[0]["T"] == b[0]["T"]


def test_a_failed_turning_route_after_the_shortcut_searches_again_in_full(monkeypatch):
    # a direction cut short by the shortcut might settle later: when the turning route declines, the
    # full search runs and its outcome decides (here a settled direction: the ellipsoid route's plan
    # is then reached), so the shortcut never loses a certificate
    from riccati_verify.certify.blowup import compactified, turning

    calls = []

    def search(A, B, V, S0, s_max=120.0, last=None, early_unsettled=False):
        calls.append(early_unsettled)
        if early_unsettled:
            last.update(S=np.diag([1.0, 0.0, 0.0]), w=1e-41, t=0.1, early=True)
            return None, compactified.SEEN_UNSETTLED
        return None, compactified.SEEN_BOUNDED
    monkeypatch.setattr(compactified, "search_infinity", search)
    monkeypatch.setattr(turning, "certify_turning", lambda *a, **kw: {"ok": False, "reason": "declined (test)"})
    p, g = general_instance(3, 0, 4)
    out = compactified.certify_general_blowup(p, g, 15)
    assert calls == [True, False]
    assert not out["ok"] and "declined (test)" in out["reason"]
    assert out["reason"].startswith(compactified._SEARCH_REASONS[compactified.SEEN_BOUNDED])


def _agrees_with_references(p, s, res):
    """The certified bracket against the independent reference (`reference_blowup`: its own
    compactified field and DOP853; T* in an interval from its decade times, widened by the difference
    of its rtol 1e-10 and 1e-8 runs) and against issue 14's second cross-check, the producer's Taylor /
    Domb-Sykes estimate within its own stated error (not independent: the same moment recursion).
    A direction that keeps turning gives no geometric tail, so `reference_blowup` gives no interval
    there (its ratios swing with the phase); the independent reference is then the mpmath Taylor
    integration of tests/test_turning_review.py to |Σ| = 10^30 at 30 digits (about a minute)."""
    lo, hi = Q(res.lower), Q(res.upper)
    ref = reference_blowup(p, s)
    # an ellipsoid tail's witness has no "tail": such a draw without an interval fails below, not with a KeyError
    if ref["blowup"] is True and ref["t_star"] is None and res.certificate["witness"].get("tail", {}).get("kind") == "turning":
        import mpmath

        from riccati_verify.core.io import problem_to_dict
        from tests.test_turning_review import _mp, taylor_t_star

        T, err = taylor_t_star(problem_to_dict(p, s))
        with mpmath.workdps(40):
            ok = _mp(lo) < T + err and T - err <= _mp(hi)
    else:
        ok = ref["t_star"] is not None and ref["t_star"][0] <= float(hi) and float(lo) <= ref["t_star"][1]
    est = taylor_blowup_estimate(p, s, 30)
    if est.value is not None and est.error is not None:
        ok = ok and est.value - est.error <= hi and est.value + est.error >= lo
    return ok


@pytest.mark.slow
def test_acceptance_on_random_general_blowups():
    """Issue 14's acceptance on the issue's distribution: of the draws (d = 2..4, 8 per d, seed 0)
    that DOP853 sees blow up, at least 90% are certified with width < 1e-15, and every bracket agrees
    with the independent reference and with the Taylor estimate."""
    from riccati_verify.testing.strategies import reference_fate

    blowups = certified = 0
    for d in (2, 3, 4):
        for i in range(8):
            p, s = general_instance(d, 0, i)
            if reference_fate(p, s)["fate"] != "blowup":
                continue
            blowups += 1
            res = blowup_time(p, s, digits=20)
            if res.rigorous and res.blowup:
                assert Q(res.upper) - Q(res.lower) < Q(1, 10 ** 15)
                assert _agrees_with_references(p, s, res), (d, i, res.lower, res.upper)
                certified += 1
    assert blowups >= 10 and certified >= 0.9 * blowups, (certified, blowups)



def test_the_checker_reports_its_progress_per_segment_and_per_step(cert12, progress_events):
    """Stage 1 runs for tens of seconds at 30 digits: each segment is a unit of progress and each
    accepted step a note with the steps so far (shown only through an installed renderer)."""
    seen = progress_events
    cert = _split(cert12)
    r = verify_certificate(cert)
    assert r.valid, r.reason
    segs = cert["witness"]["segments"]
    opened = [e for e in seen if e[0] == "open" and e[2] == "flow to blow-up"]
    assert opened == [("open", len(segs), "flow to blow-up")]
    units = [e[2] for e in seen if e[0] == "update" and e[1] == 1]
    assert [u.split(":")[0] for u in units] == [f"segment {k + 1}" for k in range(len(segs))]
    notes = [e[2] for e in seen if e[0] == "update" and e[1] == 0]
    assert notes and all(n.startswith("seg ") and n.endswith(" steps") for n in notes)
    steps = [int(n.split()[2]) for n in notes]
    assert steps and steps == sorted(steps) and steps[-1] == int(units[-1].split(": ")[1].split()[0])

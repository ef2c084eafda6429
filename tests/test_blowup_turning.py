"""The turning tail of `blowup_general` (MATH.md §15, "A turning direction at infinity"; checker
`checker/_turning_tail.py`, producer `certify/blowup/turning.py`).

Fast tests on a d = 2 instance with a closed-form T*: A = 0, B = diag(1, β), V = aI + bJ
(J the rotation by π/2), Σ0 = e1e1ᵀ.  Rank one stays rank one, Σ = xxᵀ with ẋ = (xᵀBx)Vx; in the
time σ with dσ/dt = xᵀBx, x(σ) = e^{aσ}R(bσ)e1, so dt/dσ = e^{−2aσ}/(cos²bσ + β sin²bσ) and

    T* = ∫_0^∞ e^{−2aσ} dσ / (cos²bσ + β sin²bσ) = I0 / (1 − e^{−2aπ/b}),   I0 = the same integral over
    one period [0, π/b]

(the integrand's second factor has period π/b), evaluated by mpmath quadrature, independently of the
code.  β ≠ 1 makes the direction turn at a non-uniform speed, as on the random draws.
"""

from __future__ import annotations

import copy
from fractions import Fraction as Q

import mpmath
import numpy as np
import pytest

from riccati_verify.checker import verify_certificate
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.certify.blowup import blowup_time
from riccati_verify.certify.blowup.turning import certify_turning
from riccati_verify.certify.certificate import make_certificate
from riccati_verify.testing.strategies import general_instance

A_, B_, BETA = Q(1, 2), Q(2), Q(4)
P = Params.from_arrays([[0, 0], [0, 0]], [[1, 0], [0, BETA]], [[A_, -B_], [B_, A_]])
S = Gaussian.from_arrays([0, 0], [[1, 0], [0, 0]])


def _closed_form() -> mpmath.mpf:
    with mpmath.workdps(40):
        a, b, be = (mpmath.mpf(x.numerator) / x.denominator for x in (A_, B_, BETA))
        f = lambda s: mpmath.exp(-2 * a * s) / (mpmath.cos(b * s) ** 2 + be * mpmath.sin(b * s) ** 2)  # noqa: E731
        period = mpmath.pi / b
        I0 = mpmath.quad(f, [period * k / 4 for k in range(5)])
        return I0 / (1 - mpmath.exp(-2 * a * period))


@pytest.fixture(scope="module")
def doc():
    out = certify_turning(P, S, 6, np.eye(2))
    assert out["ok"], out["reason"]
    return out["certificate"]


def _redo(doc, claim=None, witness=None, params=None):
    """The certificate with a changed claim, witness or parameters (the envelope rebuilt)."""
    c = copy.deepcopy(doc["claim"]) if claim is None else claim
    c = {k: v for k, v in c.items() if k != "kind"}
    w = copy.deepcopy(doc["witness"]) if witness is None else witness
    return make_certificate("blowup_general", c, params or P, S, w, "tampered")


def test_turning_certificate_contains_the_closed_form(doc):
    res = verify_certificate(doc)
    assert res.valid, res.reason
    T = _closed_form()
    lo, hi = Q(doc["claim"]["lower"]), Q(doc["claim"]["upper"])
    assert mpmath.mpf(lo.numerator) / lo.denominator < T <= mpmath.mpf(hi.numerator) / hi.denominator
    assert "rate_lower" not in doc["claim"] and doc["witness"]["tail"]["kind"] == "turning"


def test_shifted_bracket_is_rejected(doc):
    lo, hi = Q(doc["claim"]["lower"]), Q(doc["claim"]["upper"])
    w = hi - lo
    for shift in (2 * w, -2 * w):
        claim = {"lower": str(lo + shift), "upper": str(hi + shift)}
        assert not verify_certificate(_redo(doc, claim=claim)).valid


def test_narrower_bracket_than_proved_is_rejected(doc):
    lo, hi = Q(doc["claim"]["lower"]), Q(doc["claim"]["upper"])
    mid = (lo + hi) / 2
    claim = {"lower": str(mid - (hi - lo) / 10 ** 6), "upper": str(mid + (hi - lo) / 10 ** 6)}
    assert not verify_certificate(_redo(doc, claim=claim)).valid


def test_a_rate_claim_is_rejected(doc):
    claim = dict(doc["claim"], rate_lower="1", rate_upper="2")
    res = verify_certificate(_redo(doc, claim=claim))
    assert not res.valid and "rate" in res.reason


def test_box_too_small_for_the_return_is_rejected(doc):
    # the phase half-width shrunk 100-fold: the image of the box (and the entry) no longer fits
    w = copy.deepcopy(doc["witness"])
    H = w["tail"]["H"]
    H[0][1] = H[1][0] = str(Q(H[0][1]) / 100)
    res = verify_certificate(_redo(doc, witness=w))
    assert not res.valid and ("box" in res.reason)


def test_box_too_large_is_rejected(doc):
    # a box 10^4 times wider: the Lohner image's second-order spread no longer maps into it
    w = copy.deepcopy(doc["witness"])
    w["tail"]["H"] = [[str(Q(x) * 10 ** 4) for x in r] for r in w["tail"]["H"]]
    assert not verify_certificate(_redo(doc, witness=w)).valid


def test_shrunk_return_time_is_rejected(doc):
    # half the turn: the image lands a quarter turn away from the box's phase
    w = copy.deepcopy(doc["witness"])
    w["tail"]["tau"] = str(Q(w["tail"]["tau"]) / 2)
    res = verify_certificate(_redo(doc, witness=w))
    assert not res.valid and "return map" in res.reason


def test_scale_bound_below_the_entry_is_rejected(doc):
    w = copy.deepcopy(doc["witness"])
    w["tail"]["eps_bar"] = str(Q(w["tail"]["eps_bar"]) / 2 ** 40)
    res = verify_certificate(_redo(doc, witness=w))
    assert not res.valid and "eps_bar" in res.reason


def test_changed_parameters_are_rejected(doc):
    p2 = Params.from_arrays([[0, 0], [0, 0]], [[1, 0], [0, BETA]], [[A_ + Q(1, 100), -B_], [B_, A_ + Q(1, 100)]])
    assert not verify_certificate(_redo(doc, params=p2)).valid


def test_malformed_turning_tails_are_rejected(doc):
    bad = copy.deepcopy(doc["witness"])
    bad["tail"]["H"][0][0] = "1/1000"                   # S11 must be pinned to 1
    assert not verify_certificate(_redo(doc, witness=bad)).valid
    bad = copy.deepcopy(doc["witness"])
    del bad["tail"]["tau"]
    assert not verify_certificate(_redo(doc, witness=bad)).valid
    bad = copy.deepcopy(doc["witness"])
    bad["C"] = [["1", "0"], ["0", "0"]]                 # the tail replaces the ellipsoid's keys
    assert not verify_certificate(_redo(doc, witness=bad)).valid
    bad = copy.deepcopy(doc["witness"])
    bad["tail"]["tau"] = "1000"                         # over MAX_TAU: bounded work
    assert not verify_certificate(_redo(doc, witness=bad)).valid


def test_a_changed_scale_of_the_tail_frame_is_rejected(doc):
    # the scale is another exact frame for the box: a mild one (1, 1/4) may still give a valid proof of
    # the same bracket, but (1, 2^-20) stretches the plane's second axis 2^20-fold, and the box's
    # half-turn is no longer enclosed
    w = copy.deepcopy(doc["witness"])
    w["tail"]["scale"] = ["1", str(Q(1, 2 ** 20))]
    res = verify_certificate(_redo(doc, witness=w))
    assert not res.valid and "return map" in res.reason
    w["tail"]["scale"] = ["2", "1"]                     # the first must be 1: it fixes ε = 1/Σ̃11
    res = verify_certificate(_redo(doc, witness=w))
    assert not res.valid and "scale" in res.reason


@pytest.mark.slow
@pytest.mark.parametrize("index", [(3, 0, 4), (4, 0, 7), (4, 0, 15)])
def test_turning_draws_at_20_digits(index):
    """The random draws whose direction keeps turning (the slow acceptance test's misses before the
    turning tail) are certified to 20 digits and agree with both independent references."""
    from tests.test_blowup_general import _agrees_with_references

    p, s = general_instance(*index)
    res = blowup_time(p, s, digits=20)
    assert res.rigorous and res.blowup, res.note
    assert Q(res.upper) - Q(res.lower) < Q(1, 10 ** 15)
    assert _agrees_with_references(p, s, res), (index, res.lower, res.upper)

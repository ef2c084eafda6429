"""`stationary_state` (session 18): a stationary initial covariance, Σ0 = 0 among them, is certified
only through the independent checker, and a certificate whose Σ0, claim or parameters were changed
is rejected."""

from __future__ import annotations

import copy
from fractions import Fraction as Q

import pytest

from riccati_verify.certify.stability import classify_regime
from riccati_verify.checker import verify_certificate
from riccati_verify.core.model import Gaussian, Params

# diagonal, so each coordinate's fixed points are plain: σ' = 2aσ + 2cσ², c = V_ii B_ii; coordinate 1
# has a = 1, c = −1 (σ* = 1), coordinate 2 a = −1, c = 2 (σ* = 1/2), and 0 is stationary for both
P = Params.from_arrays([[1, 0], [0, -1]], [[1, 0], [0, 2]], [[-1, 0], [0, 1]])
CASES = {"zero": ([[0, 0], [0, 0]], "collapse", True, False),
         "singular": ([[1, 0], [0, 0]], "equilibrium", False, False),
         "positive_definite": ([[1, 0], [0, Q(1, 2)]], "equilibrium", False, True)}


def _result(name):
    cov, *_ = CASES[name]
    return classify_regime(P, Gaussian.from_arrays([0, 0], cov))


@pytest.mark.parametrize("name", sorted(CASES))
def test_stationary_states_are_certified_through_the_checker(name):
    _, regime, zero, pd = CASES[name]
    r = _result(name)
    assert r.regime == regime and r.certified
    assert r.certificate["claim"] == {"kind": "stationary_state", "positive_definite": pd, "zero": zero}
    assert verify_certificate(r.certificate).valid
    if name == "singular":
        assert r.equilibrium["positive_definite"] is False


def _tampered(doc, edit):
    doc = copy.deepcopy(doc)
    edit(doc)
    return verify_certificate(doc)


@pytest.mark.parametrize("edit", [
    lambda c: c["params"]["cov"].__setitem__(0, ["2", "0"]),           # σ11 = 2 is not stationary
    lambda c: c["params"]["A"].__setitem__(0, ["2", "0"]),             # σ* of coordinate 1 moves to 2
    lambda c: c["claim"].update(positive_definite=True),               # Σ0 is singular
    lambda c: c["claim"].update(zero=True),                            # Σ0 is not 0
    lambda c: c["claim"].update(positive_definite="no"),
    lambda c: c["claim"].pop("zero"),
    lambda c: c["witness"].update(center=[["1", "0"], ["0", "0"]]),    # no witness is read: none is allowed
], ids=["moved_sigma0", "changed_A", "pd_claimed", "zero_claimed", "not_a_bool", "missing_zero", "witness_key"])
def test_tampered_stationary_certificates_are_rejected(edit):
    doc = _result("singular").certificate
    assert verify_certificate(doc).valid
    assert not _tampered(doc, edit).valid


def test_zero_and_positive_definite_together_are_rejected():
    doc = _result("zero").certificate
    assert not _tampered(doc, lambda c: c["claim"].update(positive_definite=True)).valid
    # and 0 with zero false: the claim must match the certificate's Σ0
    assert not _tampered(doc, lambda c: c["claim"].update(zero=False)).valid


def test_a_blowup_bracket_without_an_accepted_certificate_is_not_rigorous(monkeypatch):
    """Review s18: the Riccati route's blow-up bracket was reported rigorous on the blow-up module's
    word even when its certificate was missing or refused by the checker."""
    from types import SimpleNamespace

    import riccati_verify.certify.blowup as blowup
    from riccati_verify.certify.stability import _blowup_evidence

    p = Params.from_arrays([[0, 0], [0, 0]], [[1, 0], [0, 2]], Q(1, 2))      # A = 0, vB_s ≻ 0: blows up
    s = Gaussian.from_arrays([0, 0], [[1, 0], [0, Q(1, 2)]])
    fake = SimpleNamespace(blowup=True, rigorous=True, certificate=None, lower="0.1", upper="0.2", method="stub")
    monkeypatch.setattr(blowup, "blowup_time", lambda *a, **k: fake)
    bl, cert = _blowup_evidence(p, s)
    assert cert is None and bl["rigorous"] is False and "no certificate the checker accepted" in bl["method"]


def test_the_scalar_closed_form_bracket_is_rigorous_only_through_the_checker(monkeypatch):
    """Review s18 (final read): with no accepted certificate from the blow-up module, the d = 1 / scalar
    fallback reported its arb closed form as rigorous beside a regime certificate that binds no time.
    It is now checked as a `diagonal_regime` blow-up, or reported not rigorous."""
    from types import SimpleNamespace

    import riccati_verify.certify.blowup as blowup
    import riccati_verify.certify.stability as stability

    p, s = Params.from_arrays([[1]], [[1]], 1), Gaussian.from_arrays([0], [[1]])      # T* = ln(2)/2
    fake = SimpleNamespace(blowup=True, rigorous=True, certificate=None, lower="0.1", upper="0.2", method="stub")
    monkeypatch.setattr(blowup, "blowup_time", lambda *a, **k: fake)
    bl, cert = stability._blowup_evidence(p, s)
    assert bl["rigorous"] is True and cert["claim"]["kind"] == "diagonal_regime"
    import mpmath

    with mpmath.workdps(50):
        assert verify_certificate(cert).valid and mpmath.mpf(bl["lower"]) < mpmath.log(2) / 2 < mpmath.mpf(bl["upper"])
    # a checker that refuses the bracket leaves it not rigorous
    monkeypatch.setattr(stability, "checked_certificate", lambda *a, **k: None)
    bl, cert = stability._blowup_evidence(p, s)
    assert cert is None and bl["rigorous"] is False and "did not accept" in bl["method"]

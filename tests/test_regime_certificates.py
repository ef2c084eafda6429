"""Every certified regime of the Riccati and diagonal routes rests on a certificate the checker accepted
(session 18): the Riccati blow-up branches and the A = 0 collapse (`riccati_regime`, regime "blowup" and
the A = 0 routes), the shifted-inertia growth, and the diagonal route (`diagonal_regime`).  For each
route: a certificate the checker accepts, tampered ones it rejects, and the producer's verdict
becoming "not certified" when no certificate is accepted.

Expected values are worked out by hand here (P* = −vB_s for A = I, T* = ln 2 / 2, limits −a/c), never
read from the code under test.
"""

from __future__ import annotations

import copy
import json
import math
import time
from fractions import Fraction as Q

import pytest
from hypothesis import given, settings, strategies as st

from riccati_verify.certify import stability
from riccati_verify.certify.certificate import make_certificate
from riccati_verify.certify.stability import classify_regime
from riccati_verify.checker import verify_certificate
from riccati_verify.core.model import Gaussian, Params


def G(cov):
    return Gaussian.from_arrays([0] * len(cov), cov)


def diag(*xs):
    return [[xs[i] if i == j else 0 for j in range(len(xs))] for i in range(len(xs))]


def cert(kind, claim, params, state, witness):
    """A document through its JSON text, as the checker would read it from a file."""
    return json.loads(json.dumps(make_certificate(kind, claim, params, state, witness, "test")))


def valid(doc) -> bool:
    return verify_certificate(doc).valid


def edited(doc, fn):
    bad = copy.deepcopy(doc)
    fn(bad)
    return bad


def rr(regime, scope, params, state, witness):
    return cert("riccati_regime", {"regime": regime, "scope": scope}, params, state, witness)


# ---------------------------------------------------------------------------
# riccati_regime: the blow-up routes

A0_INDEF = Params.from_arrays(diag(0, 0), diag(1, -1), 1)            # A = 0, v B_s indefinite
A0_NEG = Params.from_arrays(diag(0, 0), [[-2, 1], [1, -2]], 1)        # A = 0, v B_s ≺ 0
ANTI = Params.from_arrays(diag(1, 1), [[2, 1], [1, 1]], 1)            # A = I: P* = −vB_s ≺ 0
HURWITZ = Params.from_arrays(diag(-1, -1), diag(1, 1), 1)             # A = −I: P* = I, Y = I/2


def test_a_zero_blowup_certificate():
    doc = rr("blowup", "all_pd_states", A0_INDEF, None, {})
    assert valid(doc), verify_certificate(doc).reason
    assert not valid(edited(doc, lambda d: d["claim"].update(regime="collapse")))
    assert not valid(edited(doc, lambda d: d["params"].update(B=[["-1", "0"], ["0", "-1"]])))   # v B_s ≺ 0
    assert not valid(edited(doc, lambda d: d["params"].update(V=[["0", "0"], ["0", "0"]])))     # F ≡ 0
    assert not valid(edited(doc, lambda d: d["params"].update(A=[["1", "0"], ["0", "1"]])))     # A ≠ 0, no Y
    res = verify_certificate(edited(doc, lambda d: d["witness"].update(Y=[["1", "0"], ["0", "1"]])))
    assert not res.valid


def test_a_zero_collapse_certificate():
    doc = rr("collapse", "all_pd_states", A0_NEG, None, {})
    assert valid(doc), verify_certificate(doc).reason
    assert not valid(edited(doc, lambda d: d["claim"].update(regime="blowup")))
    assert not valid(edited(doc, lambda d: d["claim"].update(regime="equilibrium")))
    # −vB_s ⪰ 0 but singular: Σ tends to a singular non-zero limit, not to 0
    assert not valid(edited(doc, lambda d: d["params"].update(B=[["-1", "0"], ["0", "0"]])))


def test_anti_hurwitz_blowup_certificate():
    Y, P = diag(Q(1, 2), Q(1, 2)), [[-2, -1], [-1, -1]]      # 2Y = I; 2P* = −2vB_s
    doc = rr("blowup", "all_pd_states", ANTI, None, {"Y": Y, "P_star": P})
    assert valid(doc), verify_certificate(doc).reason
    assert valid(rr("blowup", "initial_state", ANTI, G(diag(1, 1)), {"Y": Y, "P_star": P}))
    assert not valid(edited(doc, lambda d: d["witness"]["P_star"][0].__setitem__(0, "-3")))
    assert not valid(edited(doc, lambda d: d["witness"]["Y"][0].__setitem__(0, "1")))
    assert not valid(edited(doc, lambda d: d["claim"].update(regime="equilibrium")))
    assert not valid(edited(doc, lambda d: d["params"].update(A=[["2", "0"], ["0", "2"]])))
    # v = −1: the witness P* = +B_s ≻ 0 solves the equation exactly, but has no negative eigenvalue
    flip = Params.from_arrays(diag(1, 1), [[2, 1], [1, 1]], -1)
    assert not valid(rr("blowup", "all_pd_states", flip, None, {"Y": Y, "P_star": [[2, 1], [1, 1]]}))


def test_hurwitz_blowup_certificate_depends_on_the_state():
    Y, P = diag(Q(1, 2), Q(1, 2)), diag(1, 1)
    doc = rr("blowup", "initial_state", HURWITZ, G(diag(2, 2)), {"Y": Y, "P_star": P})   # P0 − P* = −I/2
    assert valid(doc), verify_certificate(doc).reason
    res = verify_certificate(edited(doc, lambda d: d["claim"].update(scope="all_pd_states")))
    assert not res.valid and "initial_state" in res.reason, res.reason
    # Σ0 = I/2: P0 − P* = I ≻ 0, and σ' = −2σ + 2σ² from 1/2 collapses
    assert not valid(edited(doc, lambda d: d["params"].update(cov=[["1/2", "0"], ["0", "1/2"]])))
    assert not valid(edited(doc, lambda d: d["witness"]["P_star"][1].__setitem__(1, "2")))
    assert not valid(edited(doc, lambda d: d["claim"].update(regime="collapse")))


@pytest.mark.parametrize("params, state, scope", [
    (A0_INDEF, G(diag(1, 1)), "all_pd_states"),
    (ANTI, G(diag(1, 1)), "all_pd_states"),
    (HURWITZ, G(diag(2, 2)), "initial_state"),
])
def test_producer_blowup_without_bracket_certificate(monkeypatch, params, state, scope):
    """With no bracket certificate from the blow-up module, the regime is certified by a riccati_regime
    certificate; when that is refused too, the blow-up is not certified (it was, with no certificate)."""
    no_bracket = lambda p, s: ({"lower": None, "upper": None, "rigorous": False, "method": "test"}, None)
    monkeypatch.setattr(stability, "_blowup_evidence", no_bracket)
    r = classify_regime(params, state)
    assert r.regime == "blowup" and r.certified
    assert r.certificate["claim"] == {"kind": "riccati_regime", "regime": "blowup", "scope": scope}
    assert valid(r.certificate)
    monkeypatch.setattr(stability, "checked_certificate", lambda *a, **k: None)
    r = classify_regime(params, state)
    assert r.regime == "blowup" and not r.certified and r.certificate is None and "not certified" in r.note


def test_producer_a_zero_collapse_has_a_certificate(monkeypatch):
    r = classify_regime(A0_NEG, G(diag(1, 1)))
    assert r.regime == "collapse" and r.certified and r.certificate["claim"]["regime"] == "collapse"
    assert valid(r.certificate)
    monkeypatch.setattr(stability, "checked_certificate", lambda *a, **k: None)
    r = classify_regime(A0_NEG, G(diag(1, 1)))
    assert r.regime == "collapse" and not r.certified


# ---------------------------------------------------------------------------
# riccati_regime: the shifted-inertia growth

GROWTH = Params.from_arrays(diag(1, -1), diag(0, 0), [[1, 2], [0, 1]])   # B = 0: Σ = e^{At}Σ0e^{Atᵀ}


def test_shifted_growth_certificate():
    # A = diag(1, −1) makes the Lyapunov operator singular (1 + (−1) = 0): a shift ε is needed
    eps = Q(1, 2)
    Y = diag(1, Q(-1, 3))            # (A − εI)ᵀY + Y(A − εI) = diag(2·(1/2)·1, 2·(−3/2)·(−1/3)) = I
    doc = rr("growth", "all_pd_states", GROWTH, None, {"Y": Y, "shift": eps})
    assert valid(doc), verify_certificate(doc).reason
    assert not valid(edited(doc, lambda d: d["witness"].update(shift="2")))
    assert not valid(edited(doc, lambda d: d["witness"].pop("shift")))
    assert not valid(edited(doc, lambda d: d["claim"].update(regime="blowup")))
    # Y ⪯ 0 would say no eigenvalue of A − εI has Re > 0
    stable = Params.from_arrays(diag(-1, -1), diag(0, 0), 1)
    assert not valid(rr("growth", "all_pd_states", stable, None, {"Y": diag(Q(-1, 3), Q(-1, 3)), "shift": eps}))


def test_producer_shifted_growth_is_certified_only_with_a_certificate(monkeypatch):
    r = classify_regime(GROWTH, G(diag(1, 1)))
    assert r.regime == "growth" and r.certified and valid(r.certificate)
    monkeypatch.setattr(stability, "checked_certificate", lambda *a, **k: None)
    r = classify_regime(GROWTH, G(diag(1, 1)))
    assert r.regime == "growth" and not r.certified and r.certificate is None and "not certified" in r.note


def test_lyapunov_product_work_is_bounded():
    """A d = 64 witness with distinct 4000-bit denominators and a dense A: the fmpq product AᵀY + YA
    ran for minutes (measured: over 300 s); the integer form is refused before any product."""
    d = 64
    A = [[Q(1 if i == j else 0) + Q(1, 7) for j in range(d)] for i in range(d)]
    p = Params.from_arrays(A, diag(*[1] * d), -1)
    Y = [[Q(1, 2 ** 4000 + 2 * (i + j) + 1) for j in range(d)] for i in range(d)]
    doc = rr("equilibrium", "all_pd_states", p, None, {"Y": Y, "P_star": diag(*[1] * d)})
    t = time.perf_counter()
    res = verify_certificate(doc)
    assert not res.valid and "budget" in res.reason, res.reason
    assert time.perf_counter() - t < 10


# ---------------------------------------------------------------------------
# diagonal_regime

T_STAR = math.log(2) / 2        # coordinate 1: a = c = s = 1, T = ln(1 + 1)/2; coordinate 2: T = 1/(2·(1/2)) = 1
DIAG_BLOWUP = (Params.from_arrays(diag(1, 0), diag(1, 1), diag(1, Q(1, 2))), G(diag(1, 1)))


def dr(claim, params, state, witness=None):
    return cert("diagonal_regime", claim, params, state, witness or {})


def bracket(lo, hi):
    return {"regime": "blowup", "lower": lo, "upper": hi}


def near(x, rel):
    return Q(x) * (1 + Q(rel))


def test_diagonal_blowup_bracket():
    p, s = DIAG_BLOWUP
    w = {"precision_bits": 128}
    assert valid(dr(bracket(near(T_STAR, -1e-9), near(T_STAR, 1e-9)), p, s, w))
    assert valid(dr(bracket(Q(1, 10), Q(2)), p, s, w))                       # wide, still true
    assert not valid(dr(bracket(near(T_STAR, 1e-9), Q(1, 2)), p, s, w))     # lower above T*
    assert not valid(dr(bracket(Q(1, 4), near(T_STAR, -1e-9)), p, s, w))    # upper below T*
    assert not valid(dr(bracket(Q(9, 10), Q(11, 10)), p, s, w))             # the other coordinate's time
    assert not valid(dr(bracket(Q(1, 10), Q(2)), p, s))                     # no precision_bits


def test_diagonal_blowup_exact_time():
    """a = 0 everywhere: T_i = 1/(2c_is_i) is rational, and a closed bracket at T* holds exactly."""
    p, s = Params.from_arrays(diag(0, 0), diag(1, 1), diag(1, 3)), G(diag(1, 1))    # T* = 1/6
    w = {"precision_bits": 64}
    assert valid(dr(bracket(Q(1, 6), Q(1, 6)), p, s, w))
    assert not valid(dr(bracket(Q(1, 6) + Q(1, 10 ** 40), Q(1, 5)), p, s, w))
    assert not valid(dr(bracket(Q(1, 7), Q(1, 6) - Q(1, 10 ** 40)), p, s, w))


def test_diagonal_producer_blowup_certificate_and_tampering():
    p, s = DIAG_BLOWUP
    r = classify_regime(p, s)
    assert r.regime == "blowup" and r.certified and r.certificate["claim"]["kind"] == "diagonal_regime"
    doc = json.loads(json.dumps(r.certificate))
    assert valid(doc)
    assert Q(doc["claim"]["lower"]) <= Q(T_STAR) * (1 + Q(1, 10 ** 12)) and \
        Q(doc["claim"]["upper"]) >= Q(T_STAR) * (1 - Q(1, 10 ** 12))
    shift = lambda d, by: d["claim"].update(lower=str(Q(d["claim"]["lower"]) + by),
                                            upper=str(Q(d["claim"]["upper"]) + by))
    assert not valid(edited(doc, lambda d: shift(d, Q(1, 10 ** 6))))
    assert not valid(edited(doc, lambda d: shift(d, -Q(1, 10 ** 6))))
    assert not valid(edited(doc, lambda d: d["claim"].update(regime="growth")))
    assert not valid(edited(doc, lambda d: d["params"]["A"][0].__setitem__(0, "2")))     # T* moves
    assert not valid(edited(doc, lambda d: d["params"].update(V=[["-1", "0"], ["0", "1/2"]])))
    for M in ("A", "B", "V", "cov"):
        bad = edited(doc, lambda d: (d["params"][M][0].__setitem__(1, "1/10"),
                                     d["params"][M][1].__setitem__(0, "1/10")))
        res = verify_certificate(bad)
        assert not res.valid, M
    res = verify_certificate(edited(doc, lambda d: d["params"]["B"][0].__setitem__(1, "1/10")))
    assert not res.valid and "not diagonal" in res.reason


def test_diagonal_collapse_and_growth():
    p = Params.from_arrays(diag(-1, -2), diag(-1, -1), diag(1, 2))     # c < 0, a < 0: both → 0
    s = G(diag(1, 3))
    doc = dr({"regime": "collapse"}, p, s)
    assert valid(doc)
    for regime in ("growth", "blowup", "equilibrium"):
        assert not valid(edited(doc, lambda d: d["claim"].update(regime=regime)))
    # a > 0 in the first coordinate: it tends to −a/c = 1, no longer a collapse
    assert not valid(edited(doc, lambda d: d["params"]["A"][0].__setitem__(0, "1")))
    assert not valid(dr({"regime": "collapse"}, p, s, {"precision_bits": 64}))   # a key no route reads
    g = Params.from_arrays(diag(1, -1), diag(0, -1), diag(1, 2))       # c_1 = 0 < a_1: σ_1 = e^{2t}
    doc = dr({"regime": "growth"}, g, s)
    assert valid(doc)
    assert not valid(edited(doc, lambda d: d["claim"].update(regime="collapse")))
    # c_2 = +2, a_2 + c_2 s_2 = −1 + 6 > 0: the second coordinate blows up, so no longer growth
    assert not valid(edited(doc, lambda d: d["params"]["B"][1].__setitem__(1, "1")))


def test_diagonal_equilibrium_limit():
    p = Params.from_arrays(diag(1, 2), diag(-1, -1), diag(1, 4))       # limits −a/c = 1 and 1/2
    s = G(diag(3, Q(1, 5)))
    doc = dr({"regime": "equilibrium", "limit": diag(1, Q(1, 2))}, p, s)
    assert valid(doc), verify_certificate(doc).reason
    assert not valid(edited(doc, lambda d: d["claim"]["limit"][1].__setitem__(1, "51/100")))
    assert not valid(edited(doc, lambda d: d["claim"]["limit"][0].__setitem__(1, "1/100")))
    assert not valid(edited(doc, lambda d: d["claim"].pop("limit")))
    assert not valid(edited(doc, lambda d: d["claim"].update(regime="collapse")))
    assert not valid(edited(doc, lambda d: d["params"]["V"][1].__setitem__(1, "2")))     # limit 1 then
    # a singular limit: the second coordinate collapses (a < 0, c < 0)
    q = Params.from_arrays(diag(1, -2), diag(-1, -1), diag(1, 4))
    assert valid(dr({"regime": "equilibrium", "limit": diag(1, 0)}, q, s))
    assert not valid(dr({"regime": "equilibrium", "limit": diag(1, Q(1, 2))}, q, s))
    # stationary coordinates: c > 0 with a + cs = 0, and c = a = 0
    z = Params.from_arrays(diag(-3, 0), diag(1, 0), diag(1, 1))
    assert valid(dr({"regime": "equilibrium", "limit": diag(3, 2)}, z, G(diag(3, 2))))


def test_diagonal_producer_not_certified_without_certificate(monkeypatch):
    cases = [DIAG_BLOWUP,
             (Params.from_arrays(diag(-1, -2), diag(-1, -1), diag(1, 2)), G(diag(1, 3))),
             (Params.from_arrays(diag(1, -1), diag(0, -1), diag(1, 2)), G(diag(1, 3))),
             (Params.from_arrays(diag(1, 2), diag(-1, -1), diag(1, 4)), G(diag(3, Q(1, 5))))]
    regimes = []
    for p, s in cases:
        r = classify_regime(p, s)
        assert r.certified and r.certificate["claim"]["kind"] == "diagonal_regime" and valid(r.certificate)
        regimes.append(r.regime)
    assert regimes == ["blowup", "collapse", "growth", "equilibrium"]
    monkeypatch.setattr(stability, "checked_certificate", lambda *a, **k: None)
    for (p, s), regime in zip(cases, regimes):
        r = classify_regime(p, s)
        assert r.regime == regime and not r.certified and r.certificate is None and "not certified" in r.note


entries = st.sampled_from([Q(-2), Q(-1), Q(-1, 2), Q(0), Q(1, 3), Q(1), Q(2)])


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 3).flatmap(lambda d: st.tuples(*[st.lists(entries, min_size=d, max_size=d)] * 3,
                                                     st.lists(st.sampled_from([Q(0), Q(1, 2), Q(1), Q(3)]),
                                                              min_size=d, max_size=d))))
def test_diagonal_producer_and_checker_agree(data):
    """Random diagonal systems (V not scalar, so the diagonal route decides): every verdict is certified
    by a certificate the checker accepts, and a different regime is refused."""
    a, beta, v, s = data
    v = [v[0] + 1 if len(set(v)) == 1 else x for x in v]               # V = vI would take the Riccati route
    p, g = Params.from_arrays(diag(*a), diag(*beta), diag(*v)), G(diag(*s))
    r = classify_regime(p, g)
    if r.method.startswith("diagonal"):
        assert r.certified and valid(r.certificate), (r.regime, r.note)
        other = "collapse" if r.regime != "collapse" else "growth"
        assert not valid(edited(r.certificate, lambda d: d["claim"].update(regime=other)))


def test_check_command_regimes_unchanged(capsys):
    """`riccati-verify check` on the built-in examples: every example as expected and certified."""
    from riccati_verify.app.cli import main

    main(["check", "--json", "--quiet"])
    out = json.loads(capsys.readouterr().out)
    assert out["all_as_expected"] is True
    assert all(e["certified"] for e in out["examples"]), [e["example"] for e in out["examples"] if not e["certified"]]


def test_riccati_witness_keys_a_route_does_not_read_are_refused():
    """Final read of session 18: a `shift` on a non-growth claim (or a P* on growth) was accepted and
    ignored; a certificate must not carry a witness that looks used."""
    import json
    from pathlib import Path

    doc = json.loads((Path(__file__).parent / "data" / "certificates" / "riccati_regime.json").read_text())
    assert verify_certificate(doc).valid and doc["claim"]["regime"] != "growth"
    bad = copy.deepcopy(doc)
    bad["witness"]["shift"] = "1/2"
    res = verify_certificate(bad)
    assert not res.valid and "shift" in res.reason

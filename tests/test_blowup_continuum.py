"""V = vI fed as a general matrix (issue 14, item 5): the general route `blowup_general` with a
continuum tail (MATH.md §15, "A continuum at infinity"; checker/_continuum_tail.py) must agree
with the Radon route to the digits of the coarser of the two.

Independent references: Radon's linearisation (`blowup_time` dispatches V = vI there: its own
proof, by an arb matrix exponential and a different checker), and the 30-digit Taylor /
Domb-Sykes estimate within its own error estimate.  The lemma behind the tail (the chart field's
transverse Jacobian at (p, 0) is −g(p)·I, its p-rows 2vE(B_s u)_{2:} + w((Au)_{2:} − (Au)_1 p)) is
checked against the checker's generic Jacobian.  Every tampered witness and perturbed problem is
rejected, one test each.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from fractions import Fraction as Q
from pathlib import Path

import pytest
from flint import arb, ctx

from riccati_verify.checker import verify_certificate
from riccati_verify.checker._continuum_tail import ContinuumTail, first_axis
from riccati_verify.checker.check_blowup_general import _Compactified
from riccati_verify.core import balls, exact
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.certify.blowup import blowup_time
from riccati_verify.certify.blowup.compactified import certify_general_blowup
from riccati_verify.certify.blowup.general import taylor_blowup_estimate
from riccati_verify.certify.certificate import make_certificate


def vi_instance(d: int, v=Q(1, 2)):
    """V = vI with v B_s ≻ 0 (a blow-up from Σ0 = I), the Radon instance of bench_blowup_general."""
    A = [[Q((3 * i + 5 * j) % 7 - 3, 4) for j in range(d)] for i in range(d)]
    B = [[Q(2) if i == j else Q(1, 4) for j in range(d)] for i in range(d)]
    return Params.from_arrays(A, B, exact.identity(d, v)), Gaussian((Q(0),) * d, exact.identity(d))


def _general(d: int, digits: int):
    p, s = vi_instance(d)
    assert p.V_scalar is not None
    out = certify_general_blowup(p, s, digits)
    assert out["ok"], out["reason"]
    assert out["witness"]["tail"]["kind"] == "continuum"
    return p, s, out


@pytest.fixture(scope="module")
def cert():
    p, s, out = _general(2, 12)
    return make_certificate("blowup_general", out["claim"], p, s, out["witness"], out["method"])


def _radon(p, s, digits):
    r = blowup_time(p, s, digits=digits)
    assert r.rigorous and r.blowup and r.certificate["claim"]["kind"] == "blowup", r.method
    assert "Radon" in r.method
    return Q(r.lower), Q(r.upper)


@pytest.mark.parametrize("d,digits", [(2, 12), (3, 12), (2, 30)])
def test_general_route_agrees_with_radon(d, digits):
    """Both brackets are proofs of T* ∈ (lower, upper], so they must intersect; the general one
    must carry the digits it reports, and Radon's finer bracket (digits + 5) must sit inside the
    coarser general one unless it straddles an end, which a 10^5 times narrower bracket does with
    probability ~1e-5 — both are checked, the intersection being the proof-level statement."""
    p, s, out = _general(d, digits)
    lo, hi = Q(out["claim"]["lower"]), Q(out["claim"]["upper"])
    assert out["digits"] >= digits - 1
    assert hi - lo <= Q(1, 10 ** out["digits"]) * min(Q(1), lo)
    rlo, rhi = _radon(p, s, digits + 5)
    assert rlo < hi and lo < rhi
    assert lo <= rlo and rhi <= hi


@pytest.mark.slow
@pytest.mark.parametrize("d", [2, 3])
def test_general_route_agrees_with_radon_at_60_digits(d):
    """As above at 60 digits (~10-30 s CPU each): the claim's centre needs ĝ exactly, and the flow
    and the tail their bits."""
    p, s, out = _general(d, 60)
    lo, hi = Q(out["claim"]["lower"]), Q(out["claim"]["upper"])
    assert out["digits"] >= 59
    rlo, rhi = _radon(p, s, 60)
    assert rlo < hi and lo < rhi


def test_the_taylor_estimate_lies_inside(cert):
    """The 30-digit Taylor / Domb-Sykes estimate (numerical evidence with its own error estimate,
    a route that shares nothing with either proof) lies in the bracket and is sharper than it."""
    p, s = vi_instance(2)
    est = taylor_blowup_estimate(p, s, 30)
    assert est.blowup and est.value is not None and est.error is not None
    lo, hi = Q(cert["claim"]["lower"]), Q(cert["claim"]["upper"])
    assert est.error < (hi - lo) / 100
    assert lo < est.value - est.error and est.value + est.error <= hi


def test_the_certificate_is_valid(cert):
    res = verify_certificate(cert)
    assert res.valid, res.reason
    assert "continuum" in res.reason


# --- the lemma, against the checker's generic Jacobian ----------------------------------------

@pytest.mark.parametrize("d", [2, 3])
def test_transverse_jacobian_on_the_stratum_is_minus_g(d):
    """At y = 0 the chart's y-Jacobian is −g(p)·I with g = 2v uᵀB_s u, and its p-rows are
    2vE(B_s u)_{2:} + w((Au)_{2:} − (Au)_1 p) (MATH.md §15) — derived by hand, compared with the
    checker's Jacobian built from the generic compactified field (to 2^-180 at 200 bits)."""
    p, _ = vi_instance(d, Q(-3, 7))
    v = Q(-3, 7)
    pv = [Q(2, 3), Q(-5, 4)][: d - 1]
    u = [Q(1)] + pv
    Bs = exact.sym_part(p.B)
    Bu = [sum(Bs[i][j] * u[j] for j in range(d)) for i in range(d)]
    Au = [sum(p.A[i][j] * u[j] for j in range(d)) for i in range(d)]
    g = 2 * v * sum(u[i] * Bu[i] for i in range(d))
    tail = {"kind": "continuum", "p_centre": ["0"] * (d - 1), "r_p": ["1"] * (d - 1),
            "P": [["1" if i == j else "0" for j in range(d * (d - 1) // 2 + 1)] for i in range(d * (d - 1) // 2 + 1)],
            "rho2": "1", "beta": "1"}
    tol = arb(2) ** -180
    with ctx.workprec(200):
        ct = ContinuumTail(_Compactified(p.A, p.B, p.V, first_axis(d)), tail, p.V, {})
        m = ct.m
        _, M, N = ct.y_jacobians([balls.arb_of(x) for x in pv], [arb(0)] * m)
        for r in range(m):
            for c in range(m):
                want = balls.arb_of(-g if r == c else Q(0))
                assert abs(M[r, c] - want) < tol, (r, c, M[r, c], want)
        for j in range(1, d):
            for c, (k, l) in enumerate(ct.epairs):
                # ∂/∂E_kl of 2v(E Bu)_j, E_kl = E_lk moved together
                want = 2 * v * ((Bu[l] if j == k else 0) + (Bu[k] if j == l and k != l else 0))
                assert abs(N[j - 1, c] - balls.arb_of(want)) < tol
            assert abs(N[j - 1, m - 1] - balls.arb_of(Au[j] - Au[0] * pv[j - 1])) < tol


# --- tampering: each must be rejected --------------------------------------------------------

def _rejected(doc, why: str | None = None):
    res = verify_certificate(doc)
    assert not res.valid
    if why is not None:
        assert why in res.reason, res.reason
    return res


def test_shifted_bracket_is_rejected(cert):
    bad = copy.deepcopy(cert)
    lo, hi = Q(bad["claim"]["lower"]), Q(bad["claim"]["upper"])
    shift = hi - lo
    bad["claim"]["lower"], bad["claim"]["upper"] = str(lo + shift), str(hi + shift)
    _rejected(bad, "is not inside (lower, upper]")


@pytest.mark.parametrize("key, factor, why", [
    # r_p / 4 < the drift bound (the producer sets r_p = 2·drift)
    ("r_p", Q(1, 4), "drift"),
    # ρ² below the entry point's y1ᵀPy1 (the producer sets ρ² = 2·y1ᵀPy1): a larger ρ1 than ρ
    ("rho2", Q(1, 4), "y1ᵀPy1 < ρ²"),
    # β must stay below g (the transverse Jacobian is −gI): (10/3)·(3/5)ĝ = 2ĝ fails the contraction
    ("beta", Q(10, 3), "−(PM + MᵀP) − 2βP ≻ 0"),
    # a smaller β passes the contraction test but makes the drift bound (∝ 1/β) leave the box
    ("beta", Q(1, 100), "drift"),
], ids=["shrunk-r_p", "smaller-rho2", "beta-above-g", "tiny-beta"])
def test_scaled_tail_entry_is_rejected(cert, key, factor, why):
    bad = copy.deepcopy(cert)
    t = bad["witness"]["tail"]
    t[key] = [str(Q(x) * factor) for x in t[key]] if isinstance(t[key], list) else str(Q(t[key]) * factor)
    _rejected(bad, why)


def test_shifted_direction_centre_is_rejected(cert):
    bad = copy.deepcopy(cert)
    t = bad["witness"]["tail"]
    t["p_centre"] = [str(Q(c) + 2 * Q(r)) for c, r in zip(t["p_centre"], t["r_p"])]
    _rejected(bad, "drift")


def test_non_scalar_v_is_rejected(cert):
    """V = vI + a 10^-30 off-diagonal entry: the lemma G(p, 0) = 0 fails, so the tail must refuse it."""
    bad = copy.deepcopy(cert)
    V = [list(r) for r in bad["params"]["V"]]
    V[0][1] = "1/1" + "0" * 30
    bad["params"]["V"] = V
    _rejected(bad, "V = vI exactly")


def test_changed_parameters_are_rejected(cert):
    """A_11 + 10^-11 moves T* by ~10^-12, a few bracket widths, but leaves t1 well before it
    (T* − t1 ≈ w1/g ≈ 10^-8): the tail itself must see the shift."""
    bad = copy.deepcopy(cert)
    A = [list(r) for r in bad["params"]["A"]]
    A[0][0] = str(Q(A[0][0]) + Q(1, 10 ** 11))
    bad["params"]["A"] = A
    _rejected(bad, "is not inside (lower, upper]")


def test_changed_initial_covariance_is_rejected(cert):
    """Σ0_22 · (1 + 10^-11): as above, T* moves by several bracket widths, t1 stays before it."""
    bad = copy.deepcopy(cert)
    cov = [list(r) for r in bad["params"]["cov"]]
    cov[1][1] = str(Q(cov[1][1]) * (1 + Q(1, 10 ** 11)))
    bad["params"]["cov"] = cov
    _rejected(bad, "is not inside (lower, upper]")


def test_raised_rate_claim_is_rejected(cert):
    bad = copy.deepcopy(cert)
    r_hi = Q(bad["claim"]["rate_upper"])
    bad["claim"]["rate_lower"], bad["claim"]["rate_upper"] = str(r_hi), str(2 * r_hi)
    _rejected(bad, "rate")


@pytest.mark.parametrize("mutate, why", [
    (lambda w: w.update(C=[["1", "0"], ["0", "0"]]), "must not have the keys"),
    (lambda w: w["tail"].pop("beta"), "tail must have exactly the keys"),
    (lambda w: w["tail"].update(kind="ellipsoid"), "kind 'continuum'"),
    (lambda w: w["tail"].update(p_centre=["0", "0", "0"]), "list of 1 rationals"),
    (lambda w: w["tail"].update(r_p=["-1/1000"]), "positive"),
    (lambda w: w["tail"].update(P=[["1", "1/2"], ["0", "1"]]), "symmetric"),
    (lambda w: w["tail"].update(rho2=1.5), "exact rational"),
    (lambda w: w["tail"].update(P=[["-1", "0"], ["0", "1"]]), "P ≻ 0"),
], ids=["with-C", "missing-beta", "wrong-kind", "p-length", "negative-r", "asymmetric-P", "float", "indefinite-P"])
def test_malformed_tail_is_rejected_without_raising(cert, mutate, why):
    bad = copy.deepcopy(cert)
    mutate(bad["witness"])
    _rejected(bad, why)


def test_verify_command_accepts_it_without_numerics(cert, tmp_path):
    """The continuum tail runs in the trusted checker: `riccati-verify verify` accepts the document
    in a fresh interpreter that loads none of the numerical libraries (CONTRIBUTING, layers)."""
    path = tmp_path / "continuum.json"
    path.write_text(json.dumps(cert))
    code = ("import json, sys\nfrom riccati_verify.app.cli import main\nrc = main(['verify', sys.argv[1]])\n"
            "print(json.dumps([rc, sorted(m for m in ('numpy', 'scipy', 'sympy', 'cvxpy', 'mpmath') "
            "if m in sys.modules)]))")
    r = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1])))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1]) == [0, []]

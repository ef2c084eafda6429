"""Family claims over interval boxes: parsing, Rohn's test, and every family certificate kind
accepted when true and rejected when tampered (widened box, moved vertex, perturbed Y)."""

from __future__ import annotations

import copy
import itertools
import json
import math
from fractions import Fraction as Q

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from riccati_verify.app.cli import main
from riccati_verify.certify.family import certify_family
from riccati_verify.checker import verify_certificate
from riccati_verify.core import box as bx
from riccati_verify.core.errors import InputError
from riccati_verify.core.io import box_from_dict, box_to_dict


def iv(lo, hi):
    return {"lo": str(lo), "hi": str(hi)}


SCALAR = {"A": [[iv("1/2", 1)]], "B": [[iv("1/2", 1)]], "V": 1, "mean": [0], "cov": [[1]]}
ROT = lambda a, v: {"A": [[a, 1], [-1, 0]], "B": [[1, "1/4"], ["1/4", "1/2"]], "V": v,
                    "mean": [0, 0], "cov": [[1, 0], [0, 1]]}


def _claim(doc, kind):
    res = certify_family(box_from_dict(doc))
    got = [c for c in res.claims if c.kind == kind and c.valid]
    assert got, [(c.kind, c.reason) for c in res.claims]
    return got[0].certificate


def _with_witness(cert, **fields):
    out = copy.deepcopy(cert)
    out["witness"].update(fields)
    return out


def _with_params(cert, **entries):
    out = copy.deepcopy(cert)
    out["params"].update(entries)
    return out


# ----------------------------------------------------------------------------- parsing

def test_box_round_trips_and_members_lie_inside():
    doc = {"A": [[iv("-1/2", "1/2"), 1], [0, 2]], "B": [[1, 0], [0, 1]], "V": iv(1, 2),
           "mean": [0, iv(0, 1)], "cov": [[2, iv("-1/2", "1/2")], [iv("-1/2", "1/2"), 1]]}
    box = box_from_dict(doc)
    assert box_from_dict(box_to_dict(box)) == box
    assert [k for k, _ in box.free()] == ["A[0][0]", "V", "mean[1]", "cov[0][1]"]
    params, state = box.member({"A[0][0]": Q(1, 2), "cov[0][1]": Q(-1, 2)})
    assert params.A[0][0] == Q(1, 2) and state.cov[0][1] == state.cov[1][0] == Q(-1, 2)
    assert params.V == ((Q(3, 2), 0), (0, Q(3, 2)))
    pieces = box.split({"A[0][0]": 2, "V": 3})
    assert len(pieces) == 6 and {p.interval("V") for p in pieces} == {(Q(1), Q(4, 3)), (Q(4, 3), Q(5, 3)),
                                                                       (Q(5, 3), Q(2))}
    with pytest.raises(InputError, match="outside its interval"):
        box.member({"V": Q(3)})


@pytest.mark.parametrize("doc, fragment", [
    ({**SCALAR, "A": [[iv(1, 0)]]}, "lo > hi"),
    ({**SCALAR, "A": iv(0, 1)}, "single entries only"),
    ({**SCALAR, "cov": iv(0, 1)}, "single entries only"),
    ({**SCALAR, "A": [[{"lo": 0, "hi": 1, "mid": 0}]]}, "exactly the keys"),
    ({**SCALAR, "A": [[{"lo": "1e999", "hi": 1}]]}, "exponent"),
    ({**SCALAR, "A": [[{"lo": "nan", "hi": 1}]]}, "malformed"),
    ({"A": [[iv(0, 1)] * 4] * 4, "B": [[1] * 4] * 4, "V": 1}, "interval entries"),
    ({**ROT(0, 1), "cov": [[1, iv(0, 2)], [iv(0, 2), 1]]}, "positive semidefinite for every member"),
    ({**ROT(0, 1), "cov": [[1, iv(0, "1/2")], [0, 1]]}, "not symmetric"),
])
def test_bad_boxes_are_refused(doc, fragment):
    with pytest.raises(InputError, match=fragment):
        box_from_dict(doc)


def test_point_loaders_refuse_intervals_with_a_clear_message():
    from riccati_verify.core.io import problem_from_dict

    with pytest.raises(InputError, match="family"):
        problem_from_dict(SCALAR)


@pytest.mark.parametrize("doc", [{**SCALAR, "A": [[iv(1, 0)]]}, {**SCALAR, "A": iv(0, 1)},
                                 {"A": [[iv(0, 1)] * 4] * 4, "B": [[1] * 4] * 4, "V": 1}])
def test_cli_bad_box_is_exit_2_one_line(tmp_path, capsys, doc):
    p = tmp_path / "box.json"
    p.write_text(json.dumps(doc))
    assert main(["family", str(p)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "family" in err


# ----------------------------------------------------------------------------- Rohn

def test_rohn_matches_the_vertex_minimum_of_the_smallest_eigenvalue():
    """λ_min is concave, so its minimum over the box is at one of the 2^(d(d+1)/2) vertices:
    an independent brute force (numpy) for the exact 2^(d-1)-matrix test."""
    rng = np.random.default_rng(15)
    decided = 0
    for _ in range(60):
        d = int(rng.integers(1, 4))
        C = rng.standard_normal((d, d))
        C = C @ C.T + rng.uniform(-0.5, 1.0) * np.eye(d)
        R = np.abs(rng.standard_normal((d, d))) * rng.uniform(0, 0.4)
        R = (R + R.T) / 2
        S = tuple(tuple((Q(C[i, j] - R[i, j]).limit_denominator(1000), Q(C[i, j] + R[i, j]).limit_denominator(1000))
                        for j in range(d)) for i in range(d))
        S = tuple(tuple(S[min(i, j)][max(i, j)] for j in range(d)) for i in range(d))
        pairs = [(i, j) for i in range(d) for j in range(i, d)]
        lam = math.inf
        for pick in itertools.product((0, 1), repeat=len(pairs)):
            M = np.zeros((d, d))
            for (i, j), k in zip(pairs, pick):
                M[i, j] = M[j, i] = float(S[i][j][k])
            lam = min(lam, np.linalg.eigvalsh(M)[0])
        if abs(lam) < 1e-9:
            continue
        decided += 1
        assert bx.interval_psd(S) == (lam > 0)
        assert bx.interval_psd(S, strict=True) == (lam > 0)
    assert decided > 40


# ----------------------------------------------------------------------------- family_sign

def test_sign_claim_holds_and_a_widened_box_is_rejected():
    cert = _claim(ROT(iv("1/2", 1), iv(-1, "-1/2")), "family_sign")
    assert cert["claim"]["V"] == "negative_definite" and verify_certificate(cert).valid
    assert not verify_certificate(_with_params(cert, V=iv(-1, "1/10"))).valid
    assert not verify_certificate(_with_params(cert, B=[[1, iv(0, 1)], [iv(0, 1), "1/2"]])).valid
    flipped = copy.deepcopy(cert)
    flipped["claim"]["B"] = "negative_definite"
    assert not verify_certificate(flipped).valid
    assert not verify_certificate(_with_witness(cert, route="trust-me")).valid
    # a box that stays inside the sign regime keeps the certificate valid (the checker is not just brittle)
    assert verify_certificate(_with_params(cert, V=iv(-2, "-1/100"))).valid


# ----------------------------------------------------------------------------- family_scalar

def _scalar_T(a, k):
    return 1 / (2 * k) if a == 0 else math.log1p(a / k) / (2 * a)


def test_scalar_blowup_bracket_contains_integrated_blowup_times():
    cert = _claim(SCALAR, "family_scalar")
    lo, hi = float(Q(cert["claim"]["lower"])), float(Q(cert["claim"]["upper"]))
    rng = np.random.default_rng(3)
    for a, c in rng.uniform(0.5, 1.0, (3, 2)):
        # independent route: integrate σ' = 2aσ + 2cσ² until σ = 1e8 (T* - t_hit ~ 1/(2c·1e8))
        hit = lambda t, s: s[0] - 1e8
        hit.terminal = True
        sol = solve_ivp(lambda t, s: [2 * a * s[0] + 2 * c * s[0] ** 2], (0, 10), [1.0], events=hit,
                        rtol=1e-11, atol=1e-12)
        t_hit = sol.t_events[0][0]
        assert lo <= t_hit <= hi + 1e-7


def test_scalar_claims_are_rejected_when_the_box_leaves_the_regime():
    cert = _claim(SCALAR, "family_scalar")
    assert not verify_certificate(_with_params(cert, A=[[iv(-2, 1)]])).valid   # a + vβσ0 < 0 inside now
    assert not verify_certificate(_with_params(cert, B=[[iv("1/4", 1)]])).valid  # slower members: T* > upper
    narrow = copy.deepcopy(cert)
    T_fast = _scalar_T(1.0, 1.0)
    narrow["claim"]["lower"] = str(Q(T_fast).limit_denominator(10 ** 6) + Q(1, 10 ** 4))
    assert not verify_certificate(narrow).valid
    coll = _claim({**SCALAR, "A": [[iv(-2, -1)]], "B": [[iv(0, "1/2")]]}, "family_scalar")
    assert coll["claim"]["regime"] == "collapse"
    assert not verify_certificate(_with_params(coll, A=[[iv(-2, "-1/4")]])).valid  # a + vβσ0 > 0 at a corner
    eq = _claim({**SCALAR, "B": [[iv(-1, "-1/2")]]}, "family_scalar")
    assert eq["claim"]["regime"] == "equilibrium"
    assert not verify_certificate(_with_params(eq, A=[[iv(0, 1)]])).valid        # a = 0 is a collapse


# ----------------------------------------------------------------------------- family_riccati

@pytest.mark.parametrize("a, v, regime", [
    (iv("1/2", 1), iv(-1, "-1/2"), "equilibrium"),
    (iv(-1, "-1/2"), iv(-1, "-1/2"), "collapse"),
    (iv("1/2", 1), iv("1/2", 1), "blowup"),
])
def test_riccati_claims_hold_and_moved_vertices_or_perturbed_Y_are_rejected(a, v, regime):
    cert = _claim(ROT(a, v), "family_riccati")
    assert cert["claim"]["regime"] == regime
    assert verify_certificate(cert).valid
    # moved vertex: one corner of the A-box across Re λ = 0 (the regime changes there)
    moved = iv("-1/10", a["hi"]) if regime != "collapse" else iv(a["lo"], "1/10")
    assert not verify_certificate(_with_params(cert, A=[[moved, 1], [-1, 0]])).valid
    # widened box: v across 0
    assert not verify_certificate(_with_params(cert, V=iv(-1, 1))).valid
    # perturbed common Lyapunov matrix: no longer positive definite
    bad = copy.deepcopy(cert)
    bad["witness"]["Y"][0][0] = str(-Q(bad["witness"]["Y"][0][0]))
    assert not verify_certificate(bad).valid
    wrong = copy.deepcopy(cert)
    wrong["claim"]["regime"] = "collapse" if regime != "collapse" else "equilibrium"
    assert not verify_certificate(wrong).valid


@pytest.mark.slow
def test_the_vertex_lmi_finds_a_common_Y_where_the_centre_equation_fails():
    """A in [[a, 1], [-1, 0]], a in [-1, -1/8]: the Lyapunov equation at a = -9/16 gives a Y
    that fails at a = -1/8 (float check), and the LMI on the two vertices (cvxpy, Clarabel)
    gives one the checker accepts."""
    from scipy.linalg import solve_continuous_lyapunov

    Y = solve_continuous_lyapunov(np.array([[-9 / 16, -1.0], [1.0, 0.0]]), -np.eye(2))
    A = np.array([[-1 / 8, 1.0], [-1.0, 0.0]])
    assert np.linalg.eigvalsh(A.T @ Y + Y @ A)[-1] > 0
    res = certify_family(box_from_dict(ROT(iv(-1, "-1/8"), iv(-1, "-1/2"))))
    tried = [c for c in res.claims if c.kind == "family_riccati"]
    assert len(tried) == 2 and not tried[0].valid and tried[1].valid and res.regime == "collapse"


def test_a_lyapunov_matrix_of_one_vertex_only_is_rejected():
    """For A = [[a, 1], [-1, 0]], a in [1/100, 1]: Y from the Lyapunov equation at a = 1 alone
    fails at the vertex a = 1/100; the checker must test every vertex."""
    from scipy.linalg import solve_continuous_lyapunov

    cert = _claim(ROT(iv("1/100", 1), iv(-1, "-1/2")), "family_riccati")
    Y = solve_continuous_lyapunov(np.array([[1.0, -1.0], [1.0, 0.0]]), np.eye(2))
    A_lo = np.array([[0.01, 1.0], [-1.0, 0.0]])
    Y = (Y + Y.T) / 2
    assert np.linalg.eigvalsh(A_lo.T @ Y + Y @ A_lo)[0] < 0      # fails at the far vertex (float check)
    bad = copy.deepcopy(cert)
    bad["witness"]["Y"] = [[str(Q(x).limit_denominator(10 ** 6)) for x in r] for r in Y]
    assert not verify_certificate(bad).valid


# ----------------------------------------------------------------------------- family_blowup

def _riccati_blowup_time(a, v):
    A = np.array([[a, 1.0], [-1.0, 0.0]])
    Bs = np.array([[1.0, 0.25], [0.25, 0.5]])

    def rhs(t, y):
        S = y.reshape(2, 2)
        return (A @ S + S @ A.T + 2 * v * S @ Bs @ S).ravel()

    hit = lambda t, y: np.abs(y).max() - 1e9
    hit.terminal = True
    sol = solve_ivp(rhs, (0, 50), np.eye(2).ravel(), events=hit, method="DOP853", rtol=1e-11, atol=1e-12)
    return sol.t_events[0][0]


def test_blowup_bracket_contains_integrated_times_and_a_widened_box_is_rejected():
    cert = _claim(ROT("-1/8", iv("1/2", "9/16")), "family_blowup")
    lo, hi = float(Q(cert["claim"]["lower"])), float(Q(cert["claim"]["upper"]))
    for v in (0.5, 0.53, 0.5625):
        assert lo <= _riccati_blowup_time(-0.125, v) <= hi + 1e-6
    # widened: slower members (smaller v) blow up after `upper`; moved: faster ones before `lower`
    assert _riccati_blowup_time(-0.125, 0.25) > hi and _riccati_blowup_time(-0.125, 1.0) < lo
    assert not verify_certificate(_with_params(cert, V=iv("1/4", "9/16"))).valid
    assert not verify_certificate(_with_params(cert, V=iv("1/2", 1))).valid
    # v B_s >= 0 fails for part of the box: N is not monotone there
    assert not verify_certificate(_with_params(cert, V=iv("-1/2", "9/16"))).valid
    assert not verify_certificate(_with_witness(cert, splits={"A[0][0]": 2})).valid
    assert not verify_certificate(_with_witness(cert, factor_D=["2", "1"])).valid


def test_initial_state_collapse_holds_and_is_rejected_where_members_blow_up():
    doc = ROT(iv(-1, "-3/4"), iv("1/8", "1/4"))
    cert = _claim(doc, "family_riccati")
    assert cert["claim"] == {"kind": "family_riccati", "regime": "collapse", "scope": "initial_state"}
    # independent route: the member at the box's slowest-collapsing corner, integrated, decays
    A = np.array([[-0.75, 1.0], [-1.0, 0.0]])
    Bs = np.array([[1.0, 0.25], [0.25, 0.5]])
    rhs = lambda t, y: (A @ y.reshape(2, 2) + y.reshape(2, 2) @ A.T
                        + 0.5 * y.reshape(2, 2) @ Bs @ y.reshape(2, 2)).ravel()
    sol = solve_ivp(rhs, (0, 60), np.eye(2).ravel(), rtol=1e-10, atol=1e-14)
    assert np.abs(sol.y[:, -1]).max() < 1e-6
    # members with v up to 3/4 blow up from Σ0 = I (T* below 3: integrated)
    assert _riccati_blowup_time_A(A, 0.75) < 5
    assert not verify_certificate(_with_params(cert, V=iv("1/8", "3/4"))).valid
    # a larger Σ0 (P0 = I/4) is not below P*⁻¹ for every member
    assert not verify_certificate(_with_params(cert, cov=[[4, 0], [0, 4]])).valid
    assert not verify_certificate(_with_witness(cert, splits={"V": 65})).valid


def test_initial_state_blowup_without_a_bracket_and_tampering():
    """A Hurwitz, P0 − P* with a negative direction on the box: blow-up from Σ0 = I with no bound
    on T* (the strip where T* is too large for a Radon bracket)."""
    doc = ROT(iv("-1/2", "-1/4"), iv("3/8", "1/2"))
    res = certify_family(box_from_dict(doc), bracket=False)
    cert = next(c.certificate for c in res.claims if c.valid and c.kind == "family_riccati")
    assert cert["claim"] == {"kind": "family_riccati", "regime": "blowup", "scope": "initial_state"}
    for a in (-0.5, -0.25):
        for v in (0.375, 0.5):
            assert _riccati_blowup_time_A(np.array([[a, 1.0], [-1.0, 0.0]]), v) < 50
    # widened into the collapse side: v = 1/8 with a = -1/2 collapses (test_initial_state_collapse's box)
    assert _riccati_blowup_time_A(np.array([[-0.5, 1.0], [-1.0, 0.0]]), 0.125) == math.inf
    assert not verify_certificate(_with_params(cert, V=iv("1/8", "1/2"))).valid
    # a smaller Σ0 (P0 = 4I) makes P0 - P* positive definite: no blow-up from there
    assert not verify_certificate(_with_params(cert, cov=[["1/4", 0], [0, "1/4"]])).valid
    # the minors route (no direction) decides the same box
    plain = copy.deepcopy(cert)
    del plain["witness"]["direction"]
    assert verify_certificate(plain).valid
    assert not verify_certificate(_with_params(plain, V=iv("1/8", "1/2"))).valid
    wrong = copy.deepcopy(cert)
    wrong["claim"]["regime"] = "collapse"
    assert not verify_certificate(wrong).valid


def _riccati_blowup_time_A(A, v):
    Bs = np.array([[1.0, 0.25], [0.25, 0.5]])
    rhs = lambda t, y: (A @ y.reshape(2, 2) + y.reshape(2, 2) @ A.T
                        + 2 * v * y.reshape(2, 2) @ Bs @ y.reshape(2, 2)).ravel()
    hit = lambda t, y: np.abs(y).max() - 1e9
    hit.terminal = True
    sol = solve_ivp(rhs, (0, 50), np.eye(2).ravel(), events=hit, method="DOP853", rtol=1e-11, atol=1e-12)
    return sol.t_events[0][0] if len(sol.t_events[0]) else math.inf


# ----------------------------------------------------------------------------- family_stability

GENERAL = {"A": [[iv("99/100", "101/100"), 1], [-1, 1]], "B": [[1, 0], [0, 1]],
           "V": [[-1, iv(0, "1/100")], [0, -1]], "mean": [0, 0], "cov": [[1, 0], [0, 1]]}


def _equilibrium_of(doc_A00, doc_V01):
    from riccati_verify.certify.stability import newton_equilibrium
    from riccati_verify.core.model import Params

    p = Params.from_arrays([[doc_A00, 1], [-1, 1]], [[1, 0], [0, 1]], [[-1, doc_V01], [0, -1]])
    return newton_equilibrium(p, np.eye(2))


def test_robust_stability_for_general_V_and_tampering():
    cert = _claim(GENERAL, "family_stability")
    c = np.array([[float(Q(x)) for x in r] for r in cert["witness"]["center"]])
    r = float(Q(cert["witness"]["radius"]))
    # independent route: Newton at sampled members lands in the ball, and DF there is Hurwitz
    from riccati_verify.certify import equilibria as eq

    for a, w in [(0.99, 0.0), (1.01, 0.01), (1.0, 0.005)]:
        S = _equilibrium_of(a, w)
        assert np.abs(S - c).max() <= r
        L = eq.linearisation_np(np.array([[a, 1], [-1, 1.0]]), np.eye(2), np.array([[-1, w], [0, -1.0]]), S)
        assert np.linalg.eigvals(L).real.max() < 0
    # moved vertex / widened box: members whose equilibrium lies outside the ball
    assert np.abs(_equilibrium_of(0.5, 0.0) - c).max() > r
    assert not verify_certificate(_with_params(cert, A=[[iv("1/2", "101/100"), 1], [-1, 1]])).valid
    assert np.abs(_equilibrium_of(1.0, 0.5) - c).max() > r
    assert not verify_certificate(_with_params(cert, V=[[-1, iv(0, "1/2")], [0, -1]])).valid
    # perturbed common Lyapunov matrix: indefinite, or a margin mu it does not have
    bad = copy.deepcopy(cert)
    bad["witness"]["X"][0][0] = str(-Q(bad["witness"]["X"][0][0]))
    assert not verify_certificate(bad).valid
    assert not verify_certificate(_with_witness(cert, mu="1000")).valid
    assert not verify_certificate(_with_witness(cert, radius="0")).valid


# ----------------------------------------------------------------------------- diagonal boxes (family_scalar)

def _diag(a0, a1, b0, b1, v0=1, v1=1, off=0):
    return {"A": [[a0, off], [0, a1]], "B": [[b0, 0], [0, b1]], "V": [[v0, 0], [0, v1]],
            "mean": [0, 0], "cov": [[1, 0], [0, 1]]}


def _diag_flow(a, c, T, cap=1e9):
    """Independent route: the full 2x2 moment ODE Σ' = AΣ + ΣAᵀ + VΣBΣ + ΣBᵀΣVᵀ (diagonal A, V B),
    integrated from Σ0 = I; (time the bound `cap` was hit or None, Σ at the end)."""
    A, VB = np.diag(a), np.diag(c)

    def rhs(t, y):
        S = y.reshape(2, 2)
        return (A @ S + S @ A.T + VB @ S @ S + S @ S @ VB.T).ravel()

    hit = lambda t, y: np.abs(y).max() - cap
    hit.terminal = True
    sol = solve_ivp(rhs, (0, T), np.eye(2).ravel(), events=hit, method="DOP853", rtol=1e-11, atol=1e-13)
    return (sol.t_events[0][0] if len(sol.t_events[0]) else None), sol.y[:, -1].reshape(2, 2)


def test_diagonal_blowup_bracket_contains_integrated_times_and_tampering_is_rejected():
    # coordinate 0 blows up on the whole box; coordinate 1 (a = -1, vβ in [-4, 4]) only for some members,
    # and those earlier than coordinate 0 can
    doc = _diag(iv("1/2", 1), -1, 1, iv(-1, 1), v1=4)
    cert = _claim(doc, "family_scalar")
    assert cert["claim"]["regime"] == "blowup"
    lo, hi = float(Q(cert["claim"]["lower"])), float(Q(cert["claim"]["upper"]))
    for a0, c1 in [(0.5, -4.0), (1.0, 4.0), (0.75, 2.0), (0.5, 4.0), (1.0, -4.0)]:
        t_hit, _ = _diag_flow([a0, -1.0], [1.0, c1], 5)
        # the bound 1e9 is reached before T*, by at most ∫_cap^∞ ds/(2s(a + ks)) <= 1/(2 k cap) = 5e-10 (k >= 1)
        assert t_hit is not None and lo - 1e-9 <= t_hit <= hi + 1e-9, (a0, c1, t_hit)
    # the fastest member blows up in coordinate 1 (a = -1, vβ = 4: T* = ln(4/3)/2), the bracket's lower end,
    # below coordinate 0's fastest (ln 2 / 2): a lower end above it is rejected
    assert abs(lo - math.log(4 / 3) / 2) < 1e-6
    high = copy.deepcopy(cert)
    high["claim"]["lower"] = "1/5"
    assert not verify_certificate(high).valid
    assert not verify_certificate(_with_params(cert, A=[[iv("1/2", 1), "1/100"], [0, -1]])).valid   # not diagonal
    assert not verify_certificate(_with_params(cert, A=[[iv(-2, 1), 0], [0, -1]])).valid  # coordinate 0 may collapse
    assert not verify_certificate(_with_params(cert, V=[[1, 0], [0, 8]])).valid        # faster members: T* < lower
    narrow = copy.deepcopy(cert)
    narrow["claim"]["upper"] = str(Q(cert["claim"]["upper"]) - Q(1, 100))
    assert not verify_certificate(narrow).valid


@pytest.mark.parametrize("doc, regime", [
    (_diag(iv("1/2", 1), 1, -1, iv(-2, -1)), "equilibrium"),
    (_diag(iv(-1, "-1/2"), -1, iv(0, "1/4"), -1), "collapse"),
    (_diag(iv("1/2", 1), -1, 0, iv(-1, "1/2")), "growth"),
    (_diag(iv("1/2", 1), -1, -1, -1), "equilibrium"),      # one coordinate settles, one collapses
])
def test_diagonal_regimes_agree_with_the_integrated_flow_and_wrong_claims_are_rejected(doc, regime):
    cert = _claim(doc, "family_scalar")
    assert cert["claim"] == {"kind": "family_scalar", "regime": regime}
    box = box_from_dict(doc)
    for corner in itertools.product((0, 1), repeat=len(box.free())):
        params, _ = box.member({k: ivl[c] for (k, ivl), c in zip(box.free(), corner)})
        a = [float(params.A[i][i]) for i in range(2)]
        c = [float(params.V[i][i] * params.B[i][i]) for i in range(2)]
        t_hit, S = _diag_flow(a, c, 30, cap=1e6)
        if regime == "growth":
            assert t_hit is not None and t_hit > 5       # unbounded, but no early blow-up
        else:
            assert t_hit is None
            target = [-a[i] / c[i] if a[i] > 0 and c[i] < 0 else 0 for i in range(2)]
            assert np.allclose(np.diag(S), target, atol=1e-4) and abs(S[0, 1]) < 1e-9
    for other in ("equilibrium", "collapse", "growth"):
        if other != regime:
            wrong = copy.deepcopy(cert)
            wrong["claim"]["regime"] = other
            assert not verify_certificate(wrong).valid
    # widened: coordinate 0's a across 0 leaves every regime
    assert not verify_certificate(_with_params(cert, A=[[iv(-1, 1), 0], [0, doc["A"][1][1]]])).valid


# ----------------------------------------------------------------------------- growth (family_riccati)

SADDLE = {"A": [[iv("1/2", 1), 1], [0, -1]], "B": [[1, 0], [0, 1]], "V": 0, "mean": [0, 0], "cov": [[1, 0], [0, 1]]}


def test_growth_of_a_linear_flow_and_tampering():
    cert = _claim(SADDLE, "family_riccati")
    assert cert["claim"]["regime"] == "growth" and verify_certificate(cert).valid
    # independent route: Σ(t) = e^{At} e^{Aᵀt} at the box's vertices grows like e^{2at}
    from scipy.linalg import expm

    for a in (0.5, 1.0):
        E = expm(np.array([[a, 1.0], [0.0, -1.0]]) * 10)
        assert np.linalg.norm(E @ E.T, 2) > math.exp(2 * a * 10) * 0.5
    # moved vertex: a = -1/2 makes A Hurwitz (Σ → 0), so no growing direction exists there
    assert not verify_certificate(_with_params(cert, A=[[iv("-1/2", 1), 1], [0, -1]])).valid
    # widened: v > 0 brings back the quadratic term
    assert not verify_certificate(_with_params(cert, V=iv(0, "1/10"))).valid
    bad = copy.deepcopy(cert)
    bad["witness"]["Y"] = [[str(-Q(x)) for x in r] for r in bad["witness"]["Y"]]
    assert not verify_certificate(bad).valid
    assert not verify_certificate(_with_witness(cert, shift="2")).valid      # beyond every eigenvalue
    assert not verify_certificate(_with_witness(cert, shift="-1")).valid
    # imaginary-axis eigenvalues (A = diag(a, 0)) need a shift; B_s = 0 kills the quadratic term for any v
    rot = {"A": [[iv("1/2", 1), 0], [0, 0]], "B": [[0, 1], [-1, 0]], "V": iv(1, 2), "mean": [0, 0],
           "cov": [[1, 0], [0, 1]]}
    g = _claim(rot, "family_riccati")
    assert Q(g["witness"]["shift"]) > 0
    assert not verify_certificate(_with_witness(g, shift="0")).valid
    # A Hurwitz on the whole box (a < 0: Σ → 0): Y = -X for a Lyapunov matrix X ≻ 0 passes the vertex
    # test, and only "Y not negative semidefinite" rejects it
    hurwitz = _with_params(cert, A=[[iv(-1, "-1/2"), 1], [0, -1]])
    from scipy.linalg import solve_continuous_lyapunov

    X = solve_continuous_lyapunov(np.array([[-0.75, 0.0], [1.0, -1.0]]), -np.eye(2))
    hurwitz["witness"]["Y"] = [[str(-Q(float((X[i, j] + X[j, i]) / 2)).limit_denominator(10 ** 6)) for j in range(2)]
                               for i in range(2)]
    hurwitz["witness"]["shift"] = "0"
    res = verify_certificate(hurwitz)
    assert not res.valid and "negative semidefinite" in res.reason
    # that box is a collapse of the linear flow (Σ = e^{At}e^{Aᵀt} → 0), certified with V = 0 as a matrix too
    coll = _claim({**SADDLE, "A": [[iv(-1, "-1/2"), 1], [0, -1]], "V": [[0, 0], [0, 0]]}, "family_riccati")
    assert coll["claim"]["regime"] == "collapse"
    E = expm(np.array([[-0.5, 1.0], [0.0, -1.0]]) * 30)
    assert np.linalg.norm(E @ E.T, 2) < 1e-10
    assert not verify_certificate(_with_params(coll, A=[[iv(-1, "1/4"), 1], [0, -1]])).valid
    assert not verify_certificate(_with_params(coll, V=[[0, "1/2"], [0, 0]], B=[[-1, 0], [0, 1]])).valid


def test_subdivided_robust_stability_covers_the_box_and_tampering_is_rejected():
    """V[0][1] in [0, 1/2] is too wide for one equilibrium ball (the whole-box Krawczyk fails);
    a 4 x 4 subdivision with one ball and one X per sub-box covers it."""
    doc = {**GENERAL, "V": [[-1, iv(0, "1/2")], [0, -1]]}
    res = certify_family(box_from_dict(doc), regimes=False)
    whole = [c for c in res.claims if c.kind == "family_stability" and "splits" not in c.certificate["witness"]]
    assert whole and not any(c.valid for c in whole)
    cert = _claim(doc, "family_stability")
    w = cert["witness"]
    assert set(w) == {"splits", "cells"} and len(w["cells"]) == math.prod(w["splits"].values())
    # independent route: Newton at sampled members lands in the ball of the sub-box holding the member,
    # and DF there is Hurwitz
    from riccati_verify.certify import equilibria as eq

    subs = box_from_dict(doc).split(w["splits"])
    rng = np.random.default_rng(151)
    for a, v01 in zip(rng.uniform(0.99, 1.01, 6), rng.uniform(0, 0.5, 6)):
        n = next(k for k, s in enumerate(subs) if s.interval("A[0][0]")[0] <= a <= s.interval("A[0][0]")[1]
                 and s.interval("V[0][1]")[0] <= v01 <= s.interval("V[0][1]")[1])
        c = np.array([[float(Q(x)) for x in r] for r in w["cells"][n]["center"]])
        S = _equilibrium_of(a, v01)
        assert np.abs(S - c).max() <= float(Q(w["cells"][n]["radius"]))
        L = eq.linearisation_np(np.array([[a, 1], [-1, 1.0]]), np.eye(2), np.array([[-1, v01], [0, -1.0]]), S)
        assert np.linalg.eigvals(L).real.max() < 0
    # tampering: cells in the wrong order (a ball for other members), a missing cell, one indefinite X,
    # a widened box (same splits: wider sub-boxes)
    assert not verify_certificate(_with_witness(cert, cells=w["cells"][::-1])).valid
    assert not verify_certificate(_with_witness(cert, cells=w["cells"][:-1])).valid
    bad = copy.deepcopy(cert)
    bad["witness"]["cells"][5]["X"][0][0] = str(-Q(bad["witness"]["cells"][5]["X"][0][0]))
    assert not verify_certificate(bad).valid
    assert not verify_certificate(_with_params(cert, V=[[-1, iv(0, 2)], [0, -1]])).valid
    mixed = _with_witness(cert, center=w["cells"][0]["center"])
    assert not verify_certificate(mixed).valid
    # bounded work: 64 x 64 cells are refused before any of them is checked
    many = _with_witness(cert, splits={"A[0][0]": 64, "V[0][1]": 64}, cells=[w["cells"][0]] * 4096)
    res = verify_certificate(many)
    assert not res.valid and "4096 sub-boxes, more than the 256" in res.reason


# ----------------------------------------------------------------------------- P* routes (family_riccati)

def _pstar_doc(B, v, cov=1):
    return {"A": [[iv("1/2", 1), 1], [-1, "1/2"]], "B": B, "V": v, "mean": [0, 0], "cov": [[cov, 0], [0, cov]]}


def _flow(a, v, Bs, S0, T=60.0):
    """Independent route: Σ' = AΣ + ΣAᵀ + 2vΣB_sΣ, A = [[a, 1], [-1, 1/2]] (DOP853); ('blowup', t) when
    ‖Σ‖ reaches 1e8, else ('bounded', Σ(T))."""
    A = np.array([[a, 1.0], [-1.0, 0.5]])
    rhs = lambda t, y: (A @ y.reshape(2, 2) + y.reshape(2, 2) @ A.T
                        + 2 * v * y.reshape(2, 2) @ Bs @ y.reshape(2, 2)).ravel()
    hit = lambda t, y: np.abs(y).max() - 1e8
    hit.terminal = True
    sol = solve_ivp(rhs, (0, T), np.asarray(S0, float).ravel(), events=hit, method="DOP853", rtol=1e-10, atol=1e-13)
    return ("blowup", sol.t_events[0][0]) if len(sol.t_events[0]) else ("bounded", sol.y[:, -1].reshape(2, 2))


def _p_star(a, v, Bs):
    from scipy.linalg import solve_continuous_lyapunov

    A = np.array([[a, 1.0], [-1.0, 0.5]])
    return solve_continuous_lyapunov(A.T, -2 * v * Bs)


def test_p_star_routes_blowup_and_equilibrium_with_semidefinite_or_indefinite_vBs():
    """-A Hurwitz on the box: B_s indefinite with P* indefinite blows up from every Σ0; B_s ⪯ 0
    singular with P* ≻ 0 converges to P*⁻¹; B_s indefinite with P* ≻ 0 and P0 − P* ≻ 0 converges
    from the given Σ0.  Checked against integrated members at the box's corners."""
    corners = [(a, v) for a in (0.5, 1.0) for v in (0.5, 1.0)]
    blow = _claim(_pstar_doc([[1, 0], [0, -1]], iv("1/2", 1)), "family_riccati")
    assert blow["claim"] == {"kind": "family_riccati", "regime": "blowup"} and "splits" in blow["witness"]
    for a, v in corners:
        for S0 in (np.eye(2), np.diag([0.1, 3.0])):
            assert _flow(a, v, np.diag([1.0, -1.0]), S0)[0] == "blowup"
    eq = _claim(_pstar_doc([[-1, 0], [0, 0]], iv("1/2", 1)), "family_riccati")
    assert eq["claim"] == {"kind": "family_riccati", "regime": "equilibrium"}
    for a, v in corners:
        kind, S = _flow(a, v, np.diag([-1.0, 0.0]), np.diag([5.0, 0.2]))
        assert kind == "bounded" and np.allclose(S, np.linalg.inv(_p_star(a, v, np.diag([-1.0, 0.0]))), atol=1e-6)
    init = _claim(_pstar_doc([[-1, 0], [0, "1/10"]], iv("1/4", "1/2")), "family_riccati")
    assert init["claim"] == {"kind": "family_riccati", "regime": "equilibrium", "scope": "initial_state"}
    Bs = np.diag([-1.0, 0.1])
    for a, v in [(0.5, 0.25), (0.5, 0.5), (1.0, 0.25), (1.0, 0.5)]:
        kind, S = _flow(a, v, Bs, np.eye(2))
        assert kind == "bounded" and np.allclose(S, np.linalg.inv(_p_star(a, v, Bs)), atol=1e-6)
    # tampering: members whose P* is positive definite (v B_s = -v I there: equilibrium, not blow-up)
    assert not verify_certificate(_with_params(blow, B=[[iv(-1, 1), 0], [0, -1]])).valid
    # members with A Hurwitz (a = -1): -A not Hurwitz, P(t) no longer tends to P*
    assert not verify_certificate(_with_params(eq, A=[[iv(-1, 1), 1], [-1, "1/2"]])).valid
    # v B_s with a positive part: from a large Σ0 (P0 -> 0) P(t) ≈ -2v B_s t is indefinite at once (blow-up)
    kind, _ = _flow(0.5, 0.5, np.diag([-1.0, 0.1]), np.diag([1e4, 1e4]))
    assert kind == "blowup"
    assert not verify_certificate(_with_params(eq, B=[[-1, 0], [0, "1/10"]])).valid
    # widened B[1][1]: the member B_s = diag(-1, 1/2), (a, v) = (1/2, 1/2) has P* indefinite and blows up
    assert _flow(0.5, 0.5, np.diag([-1.0, 0.5]), np.eye(2))[0] == "blowup"
    assert not verify_certificate(_with_params(init, B=[[-1, 0], [0, iv("1/10", "1/2")]])).valid
    coarse = _with_witness(blow, splits={"A[0][0]": 1, "V": 1})
    del coarse["witness"]["direction"]          # the minors of one wide enclosure: too coarse
    assert not verify_certificate(coarse).valid
    # the witness direction: P*'s positive eigenvector (x^T P* x > 0) is refused
    x = np.array([float(Q(e)) for e in blow["witness"]["direction"]])
    assert x @ _p_star(0.75, 0.75, np.diag([1.0, -1.0])) @ x < 0       # float check at the centre
    y = np.linalg.eigh(_p_star(0.75, 0.75, np.diag([1.0, -1.0])))[1][:, 1]
    assert not verify_certificate(_with_witness(blow, direction=[str(Q(float(e)).limit_denominator(1000))
                                                                 for e in y])).valid
    assert not verify_certificate(_with_witness(eq, direction=["1", "0"])).valid     # blow-up only
    assert not verify_certificate(_with_witness(blow, shift="0")).valid            # growth's key
    wrong = copy.deepcopy(blow)
    wrong["claim"]["regime"] = "collapse"
    assert not verify_certificate(wrong).valid
    # the point sweep's exact reference agrees at the corners (the plots' closed-form boundary)
    from riccati_verify.app.sweep import riccati_reference_regime

    for doc, regime in ((_pstar_doc([[1, 0], [0, -1]], 1), "blowup"), (_pstar_doc([[-1, 0], [0, 0]], 1), "equilibrium"),
                        (_pstar_doc([[-1, 0], [0, "1/10"]], "1/2"), "equilibrium")):
        for a in ("1/2", "1"):
            params, state = box_from_dict(doc).member({"A[0][0]": Q(a)})
            assert riccati_reference_regime(params, state)[0] == regime


@pytest.mark.parametrize("case", ["p_star_blowup", "initial_state_blowup", "initial_state_equilibrium"])
def test_the_p_star_routes_refuse_a_matrix_v(case):
    """Review of session 16: the P* routes read v as V[0][0] of any matrix V, and certified three false
    claims; with V = vI required (as on the vertex route) each is refused.  Member truths: A = I,
    B = diag(0, 1), V = diag(1, 0) gives Σ(t) = e^{2t}Σ0 from a diagonal Σ0 (no blow-up); A = −I with
    the same B, V collapses to 0; A = B = I, V = diag(−1, 1), Σ0 = I/2 blows up in Σ22."""
    import json
    from pathlib import Path

    doc = json.loads((Path(__file__).parent / "data" / "certificates" / "family_riccati.json").read_text())
    I2, Y = [["1", "0"], ["0", "1"]], [["1", "0"], ["0", "1"]]
    if case == "p_star_blowup":
        doc["claim"] = {"kind": "family_riccati", "regime": "blowup"}
        doc["params"] = {"A": I2, "B": [["0", "0"], ["0", "1"]], "V": [["1", "0"], ["0", "0"]], "b": ["0", "0"]}
        doc["witness"] = {"Y": Y, "precision_bits": 128, "direction": ["0", "1"]}
    elif case == "initial_state_blowup":
        doc["claim"] = {"kind": "family_riccati", "regime": "blowup", "scope": "initial_state"}
        doc["params"] = {"A": [["-1", "0"], ["0", "-1"]], "B": [["0", "0"], ["0", "1"]], "V": [["1", "0"], ["0", "0"]],
                         "b": ["0", "0"], "mean": ["0", "0"], "cov": [["1", "0"], ["0", "2"]]}
        doc["witness"] = {"Y": Y, "precision_bits": 128}
    else:
        doc["claim"] = {"kind": "family_riccati", "regime": "equilibrium", "scope": "initial_state"}
        doc["params"] = {"A": I2, "B": I2, "V": [["-1", "0"], ["0", "1"]], "b": ["0", "0"], "mean": ["0", "0"],
                         "cov": [["1/2", "0"], ["0", "1/2"]]}
        doc["witness"] = {"Y": Y, "precision_bits": 128}
    res = verify_certificate(doc)
    assert not res.valid and "V = vI" in res.reason


def test_a_witness_y_with_huge_entries_is_refused_before_the_vertex_tests():
    """Review of session 16: Y is tested exactly at every vertex of the A-box, and 2000-digit entries
    cost about 13 s a vertex; entries are bounded at MAX_Y_BITS."""
    from pathlib import Path

    from riccati_verify.checker._family import MAX_Y_BITS

    doc = json.loads((Path(__file__).parent / "data" / "certificates" / "family_riccati.json").read_text())
    assert verify_certificate(doc).valid
    big = 3 ** 200                                   # 318 bits, over the bound
    assert big.bit_length() > MAX_Y_BITS
    doc["witness"]["Y"][0][0] = f"{big}/{big - 1}"
    res = verify_certificate(doc)
    assert not res.valid and f"at most {MAX_Y_BITS} bits" in res.reason


@pytest.mark.parametrize("kind, key", [("family_sign", "V"), ("family_riccati", "regime"), ("family_scalar", "regime")])
def test_a_list_as_a_claim_value_gets_a_clean_refusal(kind, key):
    """A list or object where the claim names a regime or a sign is refused with the claim's own
    message, not as a malformed witness with an unhashable-type TypeError (session 16 review)."""
    from pathlib import Path

    doc = json.loads((Path(__file__).parent / "data" / "certificates" / f"{kind}.json").read_text())
    for bad in ([], {}, ["blowup"]):
        doc["claim"][key] = bad
        res = verify_certificate(doc)
        assert not res.valid and "TypeError" not in res.reason and " one of " in res.reason

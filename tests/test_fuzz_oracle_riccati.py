"""The fuzz oracle's judge of a `riccati_regime` blow-up claim for ONE initial state (V = vI).

It used to decide only by a float integration, and left "undecided" wherever growth and blow-up look
alike (|Σ| past 1e10).  Now (tests/fuzz/oracle.py `_blowup_from_state`) the exact theorems of MATH.md §7
decide the "no blow-up" side, and the closed form N(t) = Σ0 + Σ0 G(t) Σ0 (G(t) = ∫_0^t e^{Aᵀs}(−2vB_s)e^{As}ds,
congruent to P(t) = Σ(t)⁻¹) decides the blow-up side: one t with λ_min(N(t)) < 0 beyond its stated error.
The expected verdicts below come from the hand reasoning in each comment, not from the oracle.
"""

from __future__ import annotations

import copy
import json
import math
from fractions import Fraction as Q

import numpy as np
import pytest

from fuzz import oracle
from fuzz.oracle import FALSE, TRUE, UNDECIDED, judge
from riccati_verify.certify.certificate import make_certificate
from riccati_verify.checker import verify_certificate
from riccati_verify.core.model import Gaussian, Params


def _doc(A, B, v, cov, witness, regime="blowup", scope="initial_state"):
    p = Params.from_arrays(A, B, v)
    st = Gaussian.from_arrays([0] * len(cov), cov)
    return json.loads(json.dumps(make_certificate("riccati_regime", {"regime": regime, "scope": scope}, p, st,
                                                  witness, "test")))


I2 = [[1, 0], [0, 1]]
# A = −I (Hurwitz, Y = I/2 solves AᵀY + YA = −I), B = I, v = 1: P* = I (AᵀP* + P*A = −2I = −2vB_s).
# Σ0 = [[2, 1/2], [1/2, 1/2]]: P0 = Σ0⁻¹ = [[2/3, −2/3], [−2/3, 8/3]], P0 − P* = [[−1/3, −2/3], [−2/3, 5/3]]
# has det −1 < 0, so a negative direction: Σ blows up (MATH.md §7, third route).  Σ0 is not diagonal, so
# the oracle's decoupled shortcut does not apply.
HURWITZ_BLOWUP = _doc([[-1, 0], [0, -1]], I2, 1, [[2, Q(1, 2)], [Q(1, 2), Q(1, 2)]],
                      {"Y": [[Q(1, 2), 0], [0, Q(1, 2)]], "P_star": I2})
# Σ0 = [[1/2, 1/4], [1/4, 1/2]]: P0 = [[8/3, −4/3], [−4/3, 8/3]], P0 − P* has eigenvalues 1/3 and 3: P(t) ⪰ P* ≻ 0
# for all t, no blow-up.
NO_BLOWUP_COV = [["1/2", "1/4"], ["1/4", "1/2"]]


def _with(doc, **params):
    d = copy.deepcopy(doc)
    d["params"].update(params)
    return d


def test_a_valid_coupled_blowup_certificate_is_judged_true_by_the_closed_form():
    assert verify_certificate(HURWITZ_BLOWUP).valid
    assert judge(HURWITZ_BLOWUP).truth == TRUE
    mo = oracle.model(HURWITZ_BLOWUP["params"])
    _, S0 = oracle.state(HURWITZ_BLOWUP["params"], mo.d)
    lost, why = oracle._n_loses_definiteness(mo, S0)
    assert lost, why


def test_the_tampered_state_without_blowup_is_refused_and_judged_false():
    bad = _with(HURWITZ_BLOWUP, cov=NO_BLOWUP_COV)
    res = verify_certificate(bad)
    assert not res.valid and "no negative eigenvalue" in res.reason, res.reason
    assert judge(bad).truth == FALSE
    # the N-scan itself finds no indefinite N on its grid (P(t) ⪰ P* ≻ 0 throughout)
    mo = oracle.model(bad["params"])
    _, S0 = oracle.state(bad["params"], mo.d)
    assert not oracle._n_loses_definiteness(mo, S0)[0]


def test_other_tampers_are_judged_by_the_mathematics():
    # v = −1: −vB_s = I ⪰ 0, so P(t) ⪰ e^{−Aᵀt}P0e^{−At} ≻ 0: no blow-up
    assert judge(_with(HURWITZ_BLOWUP, V=[["-1", "0"], ["0", "-1"]])).truth == FALSE
    # A = +I: 2P* = −2B_s, P* = −I ≺ 0 and −A Hurwitz: P(t) → −I, blow-up from every Σ0 (the claim stays true)
    assert judge(_with(HURWITZ_BLOWUP, A=[["1", "0"], ["0", "1"]])).truth == TRUE


def test_growth_that_looks_like_blowup_in_floats_is_judged_false():
    """A = [[1, 1], [0, −1]], B = diag(0, −1), v = 1: −vB_s = diag(0, 1) ⪰ 0, so P(t) ⪰ e^{−Aᵀt}P0e^{−At} ≻ 0 and
    no blow-up; but e₁ (eigenvalue 1) feels no quadratic term, Σ₁₁ grows like e^{2t} and the float integration
    passes 1e10 near t ≈ 12 (the old oracle's 'undecided')."""
    doc = _with(HURWITZ_BLOWUP, A=[["1", "1"], ["0", "-1"]], B=[["0", "0"], ["0", "-1"]], cov=[["1", "0"], ["0", "1"]])
    mo = oracle.model(doc["params"])
    _, S0 = oracle.state(doc["params"], mo.d)
    assert oracle.fate(mo, S0, t_max=2000.0)[0] == "blowup"       # floats alone cannot tell
    assert judge(doc).truth == FALSE


def test_mixed_spectrum_blowup_is_found_by_the_closed_form_alone():
    """A = [[1, 1], [0, −1]] (eigenvalues ±1: neither theorem applies, the Lyapunov operator is singular),
    B = I, v = 1, Σ0 = I.  e₁ is an eigenvector of A with e^{As}e₁ = eˢe₁, so N(t)₁₁ = 1 − 2∫_0^t e^{2s}ds
    = 2 − e^{2t} < 0 for t > ln 2 / 2 ≈ 0.347: blow-up, found at the grid time 2^{5/2}/16 ≈ 0.354 at the latest."""
    doc = _with(HURWITZ_BLOWUP, A=[["1", "1"], ["0", "-1"]], cov=[["1", "0"], ["0", "1"]])
    mo = oracle.model(doc["params"])
    _, S0 = oracle.state(doc["params"], mo.d)
    lost, why = oracle._n_loses_definiteness(mo, S0)
    assert lost, why
    t = float(why.split("N(")[1].split(")")[0])
    assert 0 < t < 0.36, why
    assert judge(doc).truth == TRUE


def test_the_closed_form_N_matches_an_independent_float_integration():
    """N(t) = Σ0 e^{Aᵀt} Σ(t)⁻¹ e^{At} Σ0 (congruence of P(t) = Σ(t)⁻¹), with Σ(t) from scipy's integration of
    Σ' = AΣ + ΣAᵀ + 2vΣB_sΣ: the closed form is the right one, not merely self-consistent."""
    from scipy.integrate import solve_ivp
    from scipy.linalg import expm

    A = np.array([[-1.0, 0.5], [0.25, -0.5]])
    B = np.array([[1.0, 0.5], [-0.25, 0.5]])
    v, S0 = 0.5, np.array([[1.0, 0.2], [0.2, 0.5]])
    Bs = (B + B.T) / 2
    t = 0.7
    sol = solve_ivp(lambda _, y: (A @ y.reshape(2, 2) + y.reshape(2, 2) @ A.T
                                  + 2 * v * y.reshape(2, 2) @ Bs @ y.reshape(2, 2)).ravel(),
                    (0, t), S0.ravel(), rtol=1e-12, atol=1e-14)
    St = sol.y[:, -1].reshape(2, 2)
    want = S0 @ expm(A.T * t) @ np.linalg.inv(St) @ expm(A * t) @ S0
    frac = lambda M: [[Q(x).limit_denominator(10 ** 6) for x in r] for r in M]     # exact as printed
    mo = oracle.Model(frac(A), frac(B), [[Q(v), 0], [0, Q(v)]], [Q(0)] * 2, Q(v), 2)
    got = oracle._N_at(mo, frac(S0), oracle.mpmath.mpf(t), 30)
    assert np.allclose(np.array(got.tolist(), dtype=float), want, rtol=1e-8, atol=1e-10)


def test_exact_lyapunov_solution_satisfies_its_equation():
    A = [[Q(-1), Q(2, 3)], [Q(1, 5), Q(-2)]]
    Qm = [[Q(-2), Q(1, 7)], [Q(1, 7), Q(3)]]
    P = oracle._lyap_exact(A, Qm)
    At = oracle.transpose(A)
    L = [[sum(At[i][k] * P[k][j] + P[i][k] * A[k][j] for k in range(2)) for j in range(2)] for i in range(2)]
    assert L == Qm and P == oracle.transpose(P)
    # A = diag(1, −1): the operator is singular (λ1 + λ2 = 0); an off-diagonal Q is then not in its range
    assert oracle._lyap_exact([[Q(1), Q(0)], [Q(0), Q(-1)]], [[Q(0), Q(1)], [Q(1), Q(0)]]) is None


@pytest.mark.parametrize("cov, truth", [
    ([["2", "0"], ["0", "1/2"]], TRUE),      # P0 − P* = diag(−1/2, 1): coordinate 1 blows up (c = 2 > −a = 1)
    ([["1", "0"], ["0", "1/2"]], FALSE),     # c = 1 = −a: σ = 1 is the coordinate's equilibrium, no blow-up
])
def test_the_decoupled_case_is_decided_exactly(cov, truth):
    assert judge(_with(HURWITZ_BLOWUP, cov=cov)).truth == truth


def test_far_magnitudes_are_never_judged_false():
    """The mixed-spectrum case above with B22 = −10¹²⁰: N(t)₁₁ = 2 − e^{2t} still (e₁ does not see B22), so the
    claim is true; past the float-safe range the scan is skipped and no theorem applies: undecided, never
    a guess of FALSE."""
    doc = _with(HURWITZ_BLOWUP, A=[["1", "1"], ["0", "-1"]], B=[["1", "0"], ["0", f"-{10 ** 120}"]],
                cov=[["1", "0"], ["0", "1"]])
    assert judge(doc).truth in (TRUE, UNDECIDED)

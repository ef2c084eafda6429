"""Regime classification, certificates and the independent checker.

- d = 1: the classification agrees with the MATH.md §6 closed form (written
  out again here) on random rationals;
- predicted regimes are confirmed by integrating the moment ODE;
- every certificate the tool writes passes the checker, and perturbed
  witnesses, changed claims and changed parameters are rejected;
- cvxpy infeasible / inaccurate outcomes never become certificates.
"""

import copy
import json
import math
from fractions import Fraction as Q

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

from riccati_verify.core import exact
from riccati_verify.testing import strategies as rs
from riccati_verify.checker import verify_certificate
from riccati_verify.app.examples import EXAMPLES, by_name
from riccati_verify.numeric.flow import integrate_moments
from riccati_verify.certify.hypotheses import anti_hurwitz, definiteness, opposite_signs, same_signs, spectral_abscissa_sign, sym_definiteness
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.certify.stability import EquilibriumEnclosure, classify_regime, local_stability_certificate, lyapunov_lmi


def integrate_cov(params, state, T):
    """The moment ODE with b = 0 and zero mean: Σ̇ does not involve m, and the flow's blow-up
    detector also watches the mean (which may diverge when M = A + V + VΣ*B is not Hurwitz)."""
    d = params.dim
    return integrate_moments(Params(params.A, params.B, params.V, (Q(0),) * d),
                             Gaussian((Q(0),) * d, state.cov), T)

small = st.fractions(min_value=-3, max_value=3, max_denominator=4)
positive = st.fractions(min_value=Q(1, 4), max_value=3, max_denominator=4)


def scalar_regime(a, vb, s0):
    """MATH.md §6, independently: σ̇ = 2aσ + 2vβσ², σ(0) = s0 > 0."""
    if vb > 0:
        if a + vb * s0 > 0:
            return "blowup"
        return "collapse" if a + vb * s0 < 0 else "equilibrium"   # = 0: σ0 = −a/(vβ) is stationary
    if vb < 0:
        return "equilibrium" if a > 0 else "collapse"
    return "growth" if a > 0 else ("collapse" if a < 0 else "equilibrium")  # vβ = 0: σ = s0 e^{2at}


def scalar_blowup_time(a, vb, s0):
    return 1 / (2 * vb * s0) if a == 0 else math.log1p(a / (vb * s0)) / (2 * a)


# ---------------------------------------------------------------------------
# hypotheses


def test_hypothesis_predicates_decide_exactly():
    I2 = exact.identity(2)
    assert sym_definiteness(I2, "V").holds and sym_definiteness(exact.scale(-1, I2), "V").holds
    indefinite = exact.as_matrix([[1, 0], [0, -1]])
    assert sym_definiteness(indefinite).holds is False
    assert definiteness(exact.as_matrix([[1, 1], [1, 1]])) == "positive semidefinite"
    # symmetric part decides: [[1, 4], [-4, 1]] has M_s = I
    assert definiteness(exact.as_matrix([[1, 4], [-4, 1]])) == "positive definite"
    p = Params.from_arrays([[1, 0], [0, 1]], [[-1, 0], [0, -2]], 1)
    assert opposite_signs(p).holds and not same_signs(p).holds
    assert spectral_abscissa_sign(exact.as_matrix([[-1, 5], [0, -2]])).holds is True
    assert spectral_abscissa_sign(exact.as_matrix([[-1, 5], [0, 2]])).holds is False
    rot = exact.as_matrix([[0, 1], [-1, 0]])  # eigenvalues ±i: α = 0, not Hurwitz
    r = spectral_abscissa_sign(rot)
    assert r.holds is False and r.witness["sign"] == 0
    near = exact.as_matrix([[1, 0], [0, -1]])  # singular Lyapunov operator, α = 1 found by shifts
    assert spectral_abscissa_sign(near).witness["sign"] == 1
    assert anti_hurwitz(exact.as_matrix([[1, 3], [0, 2]])).holds
    assert not anti_hurwitz(exact.as_matrix([[1, 3], [0, -2]])).holds


@given(rs.hurwitz_matrices(st.integers(1, 4)))
def test_spectral_abscissa_sign_on_hurwitz_and_anti(A):
    assert spectral_abscissa_sign(A).holds is True
    assert spectral_abscissa_sign(exact.scale(-1, A)).holds is False
    assert anti_hurwitz(exact.scale(-1, A)).holds is True


# ---------------------------------------------------------------------------
# d = 1 against the closed form


@given(small, small, small, positive)
def test_scalar_classification_matches_closed_form(a, v, beta, s0):
    p = Params.from_arrays([[a]], [[beta]], v)
    r = classify_regime(p, Gaussian((Q(0),), ((s0,),)))
    assert r.regime == scalar_regime(a, v * beta, s0)
    assert r.certified
    if r.regime == "blowup":
        T = scalar_blowup_time(a, v * beta, s0)
        lo, hi = float(r.blowup["lower"]), float(r.blowup["upper"])
        assert r.blowup["rigorous"]
        assert lo <= T * (1 + 1e-12) and T <= hi * (1 + 1e-12)


# ---------------------------------------------------------------------------
# predictions confirmed by the moment ODE


@pytest.mark.parametrize("ex", [e for e in EXAMPLES if e.expected in ("equilibrium", "blowup", "collapse")],
                         ids=lambda e: e.name)
def test_examples_confirmed_by_integration(ex):
    r = classify_regime(ex.params, ex.state)
    assert r.regime == ex.expected
    if r.regime == "equilibrium":
        S = np.array(r.equilibrium["cov"], float)
        res = integrate_cov(ex.params, ex.state, 40.0)
        assert not res.blowup
        assert np.allclose(res.cov, S, atol=1e-7 * (1 + np.abs(S).max()))
    elif r.regime == "blowup":
        hi = float(r.blowup["upper"])
        res = integrate_cov(ex.params, ex.state, 2 * hi)
        assert res.blowup and res.time <= hi * (1 + 1e-6)
    else:
        res = integrate_cov(ex.params, ex.state, 40.0)
        assert not res.blowup and np.abs(res.cov).max() < 1e-8


@given(rs.params(st.integers(2, 3), signs="opposite", scalar_V=True, A_spectrum="anti_hurwitz"),
       st.integers(1, 4))
def test_opposite_signs_anti_hurwitz_converges(p, k):
    """MATH.md §7: global convergence, certified; confirmed by integrating from Σ0 = k·I."""
    st0 = Gaussian((Q(0),) * p.dim, exact.identity(p.dim, k))
    r = classify_regime(p, st0)
    assert r.regime == "equilibrium" and r.certified
    assert verify_certificate(r.certificate).valid
    S = np.array(r.equilibrium["cov"], float)
    res = integrate_cov(p, st0, 120.0)   # decay rate ≥ 2·(1/4) (strategy bound on Re λ(A))
    assert not res.blowup and np.allclose(res.cov, S, rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------------------
# certificates: valid ones pass, tampered ones fail


def _certs():
    out = []
    for ex in EXAMPLES:
        r = classify_regime(ex.params, ex.state)
        if r.certificate is not None:
            out.append((ex.name, r.certificate))
    # `equilibrium` certificates: an exact closed form and a Krawczyk ball (general V, d = 2)
    from riccati_verify.certify.stability import enclose_equilibrium, equilibrium_certificate, newton_equilibrium

    p = Params.from_arrays([[1, 0], [1, 2]], [[-2, 1], [0, -1]], [[1, Q(1, 2)], [0, 1]])
    enc = enclose_equilibrium(p, newton_equilibrium(p, np.array([[0.5, 0.0], [0.0, 2.0]])))
    out.append(("krawczyk_2d", equilibrium_certificate(p, enc)))
    ex = by_name("riccati_equilibrium_2d")
    enc = enclose_equilibrium(ex.params, classify_regime(ex.params, ex.state).equilibrium["cov"])
    out.append(("exact_2d", equilibrium_certificate(ex.params, enc)))
    return out


ALL_CERTS = _certs()
# Tamper tests cover this module's certificate kinds; blow-up certificates (issue 4's kinds, passed
# through by classify_regime) are tampered with in tests/test_blowup*.py.
MY_KINDS = {"equilibrium", "lyapunov_stability", "riccati_regime", "cone_collapse"}
CERTS = [(n, c) for n, c in ALL_CERTS if c["claim"]["kind"] in MY_KINDS]


def test_every_written_certificate_passes_and_kinds_are_covered():
    kinds = {c["claim"]["kind"] for _, c in ALL_CERTS}
    assert {"riccati_regime", "lyapunov_stability", "cone_collapse", "equilibrium"} <= kinds
    for name, c in ALL_CERTS:
        res = verify_certificate(json.loads(json.dumps(c)))
        assert res.valid, (name, res.reason)


def _witness_paths(w, prefix=()):
    """Paths to every exact-number leaf of a witness."""
    if isinstance(w, dict):
        for k, v in w.items():
            yield from _witness_paths(v, prefix + (k,))
    elif isinstance(w, list):
        for i, v in enumerate(w):
            yield from _witness_paths(v, prefix + (i,))
    else:
        yield prefix


def _get(doc, path):
    for k in path:
        doc = doc[k]
    return doc


def _set(doc, path, value):
    for k in path[:-1]:
        doc = doc[k]
    doc[path[-1]] = value


def _breaking_perturbation(cert, path, delta):
    """Perturb one witness entry so that the certified statement's evidence is destroyed.

    Exactly determined data (an exact equilibrium centre, P_star) is shifted by delta; inequality
    witnesses are pushed across their bound (μ, ξ multiplied by a large factor, a Lyapunov
    matrix entry made hugely negative, a radius shrunk to nothing or blown up).
    """
    w = cert["witness"]
    x = Q(_get(w, path))
    key = path[0]
    if key in ("mu", "xi", "lam"):
        return x * 10 ** 6
    if key in ("eta", "norm_V", "norm_B", "norm_PV"):
        return x / 10 ** 6
    if key == "radius":
        return Q(10) ** 6 if delta > 0 else (Q(0) if x != 0 else Q(1))
    if key in ("X", "Xm", "Y", "P"):
        i, j = path[1], path[2]
        return x - 10 ** 6 if i == j else x + (10 ** 6 if delta > 0 else -10 ** 6)
    return x + delta


@given(st.data())
def test_perturbed_witness_is_rejected(data):
    name, cert = data.draw(st.sampled_from(CERTS))
    paths = list(_witness_paths(cert["witness"]))
    path = data.draw(st.sampled_from(paths))
    # the ROA bounds only matter when the region claim is made
    assume(not (cert["claim"]["kind"] == "lyapunov_stability" and path[0] in ("eta", "norm_V", "norm_B")
                and not cert["claim"]["initial_state_in_region"]))
    # a symmetric matrix entry is perturbed at both (i, j) and (j, i): the checker demands symmetry
    delta = data.draw(st.fractions(min_value=Q(1, 100), max_value=1, max_denominator=100)) * data.draw(
        st.sampled_from([1, -1]))
    bad = copy.deepcopy(cert)
    new = _breaking_perturbation(cert, path, delta)
    _set(bad["witness"], path, exact.frac_to_str(new))
    if len(path) == 3 and path[1] != path[2]:
        _set(bad["witness"], (path[0], path[2], path[1]), exact.frac_to_str(new))
    res = verify_certificate(bad)
    assert not res.valid, (name, path, res.reason)


CLAIM_CHANGES = {
    "riccati_regime": [("regime", "collapse"), ("regime", "equilibrium"), ("regime", "growth"),
                       ("regime", "blowup")],
    "lyapunov_stability": [("equilibrium", "zero"), ("equilibrium", "bogus"), ("mean_stable", "yes")],
    "cone_collapse": [("kind", "riccati_regime"), ("kind", "equilibrium"), ("kind", "lyapunov_stability")],
    "equilibrium": [("positive_definite", "yes"), ("kind", "cone_collapse")],
}


@given(st.data())
def test_changed_claim_is_rejected(data):
    name, cert = data.draw(st.sampled_from(CERTS))
    kind = cert["claim"]["kind"]
    key, value = data.draw(st.sampled_from(CLAIM_CHANGES[kind]))
    assume(cert["claim"].get(key) != value)
    bad = copy.deepcopy(cert)
    bad["claim"][key] = value
    assert not verify_certificate(bad).valid


@given(st.data())
def test_changed_parameters_are_rejected(data):
    name, cert = data.draw(st.sampled_from(CERTS))
    which = data.draw(st.sampled_from(["A", "B", "V"]))
    M = cert["params"][which]
    d = len(M)
    i, j = data.draw(st.integers(0, d - 1)), data.draw(st.integers(0, d - 1))
    delta = data.draw(st.fractions(min_value=Q(1, 10), max_value=1, max_denominator=10))
    bad = copy.deepcopy(cert)
    bad["params"][which][i][j] = exact.frac_to_str(Q(M[i][j]) + delta)
    res = verify_certificate(bad)
    # Every certificate is pinned to its parameters by exact equations (F(Σ*) = 0 or a
    # 1e-12 Krawczyk ball, AᵀY + YA = ±I, AᵀP* + P*A = −2vB_s).  The one change that keeps a
    # statement true *and* checkable is V in a linear flow with B = 0: F does not depend on V.
    if res.valid:
        assert which == "V" and all(Q(x) == 0 for r in cert["params"]["B"] for x in r), (name, res.reason)


def test_float_in_witness_is_malformed():
    name, cert = next((n, c) for n, c in CERTS if c["claim"]["kind"] == "lyapunov_stability")
    bad = copy.deepcopy(cert)
    bad["witness"]["mu"] = float(Q(bad["witness"]["mu"]))
    res = verify_certificate(bad)
    assert not res.valid and "malformed" in res.reason


# ---------------------------------------------------------------------------
# cvxpy outcomes that must not certify


def test_lmi_infeasible_for_unstable_linearisation():
    L = np.array([[1.0, 0.0], [0.0, -1.0]])
    assert lyapunov_lmi(L) is None


def test_unstable_equilibrium_gets_no_stability_certificate():
    # d = 1, a = 1, vβ = 1: σ* = −1 is stable, Σ = 0 is unstable (DF(0) = 2a > 0)
    p = Params.from_arrays([[1]], [[1]], 1)
    zero = EquilibriumEnclosure(((Q(0),),), Q(0), False)
    assert local_stability_certificate(p, zero, None) is None


def test_inaccurate_solver_output_is_not_certified():
    """A solver returning a wrong 'solution' (here: X = I for a non-normal L, or garbage) must
    lead to 'not certified', never to a certificate."""
    ex = by_name("general_equilibrium_3d")
    garbage = lambda L: -np.eye(L.shape[0])
    r = classify_regime(ex.params, ex.state, lmi=garbage)
    assert r.regime == "equilibrium" and not r.certified and r.certificate is None
    rng = np.random.default_rng(7)

    def noisy(L):
        X = lyapunov_lmi(L)
        return None if X is None else X + 50 * rng.standard_normal(X.shape)

    r2 = classify_regime(ex.params, ex.state, lmi=noisy)
    assert not r2.certified or verify_certificate(r2.certificate).valid
    r3 = classify_regime(ex.params, ex.state, lmi=lambda L: None)
    assert not r3.certified and r3.certificate is None


def test_seed_claim_disagreements_are_reported():
    r = classify_regime(by_name("riccati_collapse_4d").params, by_name("riccati_collapse_4d").state)
    assert r.seed_prediction == "blowup" and r.agrees_with_seed is False and "seed claim" in r.note
    r = classify_regime(by_name("diagonal_collapse_4d").params, by_name("diagonal_collapse_4d").state)
    assert r.seed_prediction == "equilibrium" and r.agrees_with_seed is False


def test_proof_module_stability():
    """proofs/stability.py: the corrected theorem is certified, the literal seed claim refuted."""
    import riccati_verify.proofs.stability as mod
    from riccati_verify.core.result import Status

    r = mod.check()
    assert r.symbolic.status is Status.CERTIFIED and r.numeric.status is Status.CONFIRMED_NUMERICALLY
    ce = r.symbolic.evidence["counterexamples_to_literal_seed_claim"]
    assert all(c["regime"] == "collapse" and c["certified"] for c in ce.values())
    assert all(c["seed_prediction"] in ("equilibrium", "blowup") for c in ce.values())


def test_mean_targeting_reaches_target_when_M_hurwitz():
    from riccati_verify.certify.stability import mean_targeting

    ex = by_name("riccati_equilibrium_2d")   # V = −I, B_s ≻ 0, Re λ(A) > 0
    r = classify_regime(ex.params, ex.state)
    target = (Q(1), Q(-1, 2))
    mt = mean_targeting(ex.params, r.equilibrium["cov"], target)
    assert exact.matvec(mt.M, target) == tuple(-x for x in mt.b)      # m* = −M⁻¹b = target
    assert mt.hurwitz.holds is True
    p = Params(ex.params.A, ex.params.B, ex.params.V, mt.b)
    res = integrate_moments(p, ex.state, 60.0)
    assert not res.blowup and np.allclose(res.mean, [1.0, -0.5], atol=1e-8)


def test_mean_target_repelling_for_positive_v_scalar():
    """Seed imprecision 3: d = 1, v > 0, β < 0, a > 0: M = v > 0 at σ* (not Hurwitz)."""
    from riccati_verify.certify.stability import mean_targeting

    p = Params.from_arrays([[2]], [[-1]], Q(1, 3))
    sigma = ((Q(6),),)   # −a/(vβ) = 2/(1/3) = 6
    mt = mean_targeting(p, sigma, [1])
    assert mt.M == ((Q(1, 3),),) and mt.hurwitz.holds is False


def test_certificates_match_published_schema():
    """Every certificate written here validates against the published JSON schema
    (certify/schemas/certificate.schema.json, by jsonschema)."""
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (the [test] extra) validates the certificates")
    from riccati_verify.certify.certificate import certificate_schema

    validator = jsonschema.Draft202012Validator(certificate_schema())
    for name, cert in CERTS:
        assert [e.message[:200] for e in validator.iter_errors(cert)] == [], name


def test_region_claim_rejected_when_initial_state_moves_out():
    cert = next(c for n, c in CERTS if n == "general_equilibrium_3d")
    assert cert["claim"]["initial_state_in_region"] is True
    assert verify_certificate(cert).valid
    bad = copy.deepcopy(cert)
    bad["params"]["cov"] = [["2", "0", "0"], ["0", "2", "0"], ["0", "0", "2"]]
    res = verify_certificate(bad)
    assert not res.valid and "region of attraction" in res.reason
    # without the region claim the same witness still proves local stability (a true, weaker statement)
    weaker = copy.deepcopy(bad)
    weaker["claim"]["initial_state_in_region"] = False
    assert verify_certificate(weaker).valid


def test_lmi_stopped_early_is_not_a_solution():
    """Clarabel stopped after one iteration reports a non-optimal status: no Lyapunov matrix."""
    L = np.array([[-1.0, 5.0], [0.0, -2.0]])
    assert lyapunov_lmi(L) is not None
    assert lyapunov_lmi(L, solver_options={"max_iter": 1}) is None

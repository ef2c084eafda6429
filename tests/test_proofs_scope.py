"""proofs/ claims no more than its exact routes check (review s17 §6): each reworded CLAIM states its
scope, and the exact routes that now exercise an implementation or a closed form reject a wrong one."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from riccati_verify.core.result import Status


# ----------------------------------------------------------------------------- adjoint

def test_adjoint_exact_route_exercises_the_implementation():
    from proofs import adjoint as proof

    v = proof.implementation_check()
    assert v.status is Status.CERTIFIED, v.evidence
    assert sum(k.startswith("segment") for k in v.evidence) == 6


def _double(real):
    def wrapped(*args, **kw):
        r = real(*args, **kw)
        return type(r)(r.loss, [tuple(2 * g for g in gs) for gs in r.grads])
    return wrapped


def test_a_factor_two_in_adjoint_gradient_is_not_certified(monkeypatch):
    """The review's case: the Hamiltonian identities alone stay certified under a factor-2 bug in
    the backward solve, so they cannot be the whole exact route; the instance check refutes it."""
    from proofs import adjoint as proof
    from riccati_verify.numeric import adjoint as AD

    monkeypatch.setattr(AD, "_backward", _double(AD._backward))
    assert proof.symbolic_check(dims=(1,)).status is Status.CERTIFIED      # blind to the bug
    impl = proof.implementation_check()
    assert impl.status is Status.REFUTED and "DIFFERENT" in impl.evidence["segment 1 dL/dA"]
    # a segment-order bug (gradients of segment 1 reported for segment 2) is caught too
    monkeypatch.undo()
    real = AD._backward

    def swapped(*args, **kw):
        r = real(*args, **kw)
        return type(r)(r.loss, r.grads[::-1])
    monkeypatch.setattr(AD, "_backward", swapped)
    assert proof.implementation_check().status is Status.REFUTED


def test_adjoint_claim_states_its_scope():
    from proofs import adjoint as proof

    assert "not machine-checked" in proof.CLAIM and "adjoint_gradient" in proof.CLAIM


# ----------------------------------------------------------------------------- training_deep

def test_training_deep_excess_is_computed_not_quoted(monkeypatch):
    from proofs import training_deep as proof

    ex = proof.nonconvexity_excess_exact()
    # by hand: σ(1) = 1/(1 − 2(w − 1)) = 1/(3 − 2w), L = (1/(3 − 2w) − 2)²: 25/9, 9/4, 1 at w = 0, 1/2, 1
    assert ex["losses"] == {"0": "25/9", "1/2": "9/4", "1": "1"} and ex["excess_is_13/36"]
    assert ex["closed_form_loss_agrees"]
    monkeypatch.setattr(proof, "closed_form_loss", lambda t: (1 / (1 - 2 * (Fraction(t) - 1)) - 1) ** 2)
    assert not proof.nonconvexity_excess_exact()["closed_form_loss_agrees"]


def test_training_deep_ntk_coefficients_are_checked_in_balls(monkeypatch):
    from proofs import training_deep as proof
    from riccati_verify.certify import training

    assert proof.ntk_d1_coefficients_agree()["overlap"]
    real = training.ntk_d1

    def off(*args, **kw):        # one Gram entry wrong in its 10th digit: below the float check's 1e-8
        r = real(*args, **kw)
        r["K"][0][1] = r["K"][0][1] * (1 + 1e-10)
        return r
    monkeypatch.setattr(training, "ntk_d1", off)
    assert not proof.ntk_d1_coefficients_agree()["overlap"]


# ----------------------------------------------------------------------------- riccati_connection

def test_riccati_free_algebra_identities_hold_and_can_fail():
    import sympy as sp

    from proofs import riccati_connection as proof

    ids = proof.free_algebra_identities()
    assert len(ids) == 3 and all(ids.values()), ids
    M = proof._nc()
    A, B, S, P = M["A"], M["B"], M["S"], M["P"]
    assert proof._t(A * S * B, M) == M["Bt"] * S * M["At"]            # (AΣB)ᵀ = BᵀΣAᵀ
    v = sp.Symbol("v")
    Bs = (B + M["Bt"]) / 2
    riccati = A * S + S * M["At"] + 2 * v * S * Bs * S
    # the P-equation with 1·v B_s instead of 2v B_s must not reduce to 0
    assert proof._reduce(-P * riccati * P + M["At"] * P + P * A + v * Bs, {S * P: 1, P * S: 1}) != 0


def test_riccati_numeric_tolerances_come_from_condition_numbers():
    from proofs import riccati_connection as proof

    v = proof.numeric_check()
    assert v.status is Status.CONFIRMED_NUMERICALLY
    for c in v.evidence["cases"]:
        assert c["rel_err_radon"] < c["tol_radon"] and c["cond_X_T"] >= 1
        assert c["tol_radon"] >= 10 * c["integrator_error_estimate"]
        if "tol_P_form" in c:
            assert c["rel_err_P_form"] < c["tol_P_form"] and c["cond_P_T"] >= 1 and c["cond_S0"] >= 1


# ----------------------------------------------------------------------------- head_limit

def test_head_limit_all_H_lemma_and_a_wrong_head_average():
    from proofs import head_limit as proof

    assert all(proof.all_H_lemma().values())
    # v_∞ with E[VΣB] = V0ΣB0 (the r = 0 value): E ξ ≠ 0, the cross moment is (E ξ)² ≠ 0, and C/H fails
    bad = proof.all_H_lemma(lambda V0, B0, S, s, r: V0 * S * B0)
    assert not bad["E xi = 0"] and not bad["two-head cross moment = 0"]
    assert not bad["(H C + H(H-1) cross)/H^2 = C/H, symbolic H"]
    assert "d = 1" in proof.CLAIM and "every H" in proof.CLAIM


# ----------------------------------------------------------------------------- common_noise

def test_common_noise_case_analysis_is_general_and_can_fail(monkeypatch):
    from proofs import common_noise as proof
    from riccati_verify.symbolic import noise as sym

    assert all(proof.general_senses().values())
    assert "J = λI" in proof.CLAIM and "not machine-checked" in proof.CLAIM
    # the Stratonovich exponent (no −σ²/2): g(p) = pλ + p²σ²/2 has no sign change at p_c
    monkeypatch.setattr(sym, "moment_exponent", lambda: sym.p_sym * sym.lam + sym.p_sym ** 2 * sym.sigma ** 2 / 2)
    bad = proof.general_senses()
    assert not bad["g(p) = (σ² p/2)(p − p_c), p_c = 1 − 2λ/σ²"]


# ----------------------------------------------------------------------------- rank_invariance

def test_rank_invariance_checks_liouville_and_states_its_dimensions():
    from proofs import rank_invariance as proof

    assert proof.jacobi_identity(2) and proof.jacobi_identity(3)
    assert not proof.jacobi_identity(2, trace=lambda M: 2 * M.trace())
    assert not proof.jacobi_identity(3, trace=lambda M: M[0, 0] + M[1, 1])
    assert "d = 1, 2, 3" in proof.CLAIM and "not machine-checked" in proof.CLAIM


# ----------------------------------------------------------------------------- claims reworded to their scope

@pytest.mark.parametrize("name, words", [
    ("blowup", ("seeded examples", "not machine-checked")),
    ("gaussian_invariance", ("d = 1, 2, 3", "not machine-checked")),
    ("training_wellposed", ("constants", "hand argument", "not machine-checked")),
    ("rank_invariance", ("d = 1, 2, 3", "not machine-checked")),
    ("common_noise", ("J = λI", "not machine-checked")),
    ("adjoint", ("adjoint_gradient", "not machine-checked")),
    ("head_limit", ("d = 1", "every H")),
    ("riccati_connection", ("every d", "free matrix algebra")),
    ("reachability", ("seeded exact pairs", "not machine-checked")),
    ("training_deep", ("exactly 13/36",)),
])
def test_claims_name_their_scope(name, words):
    from riccati_verify import proofs

    mod = proofs.load(name)
    assert all(w in mod.CLAIM for w in words), mod.CLAIM


def test_gaussian_invariance_exact_route_states_scope(monkeypatch):
    from proofs import gaussian_invariance as proof
    from riccati_verify.symbolic import moments

    # the derivations themselves are tested in tests/test_symbolic_moments.py; here only the scope
    monkeypatch.setattr(moments, "tilting_identity_1d_integral", lambda: True)
    v = proof.symbolic_check(dims=(1,))
    assert v.status is Status.CERTIFIED and "uniqueness" in v.evidence["scope"]


def test_reachability_claim_matches_its_cases():
    """The CLAIM quotes the number of pairs, the times and the tolerance: they must be those checked."""
    from proofs import reachability as proof
    from riccati_verify.certify import reach as R

    cases = proof.cases()
    same = [c for c in cases if c[0] == "same"]
    assert f"on {len(cases)} seeded exact pairs" in proof.CLAIM
    assert f"the {len(same)} same-rank pairs" in proof.CLAIM
    assert f"the {len(cases) - len(same)} different-rank pairs" in proof.CLAIM
    assert sorted({c[3] for c in cases}) == [Fraction(1, 2), 1, Fraction(3, 2), 2]
    assert R.certificate_tolerance() == Fraction(1, 10 ** 30) and "1e-30" in proof.CLAIM
    assert "not machine-checked" in proof.CLAIM and "any time T > 0 iff" not in proof.CLAIM


# ----------------------------------------------------------------------------- derived tolerances (review §7)

@pytest.mark.slow
def test_mixture_quadrature_tolerance_is_derived_and_tight(monkeypatch):
    """The Gauss–Hermite/QUADPACK comparison's tolerance comes from their own error estimates (~1e-13):
    a 1e-10 relative error, which the old fixed 1e-8 accepted, is now rejected."""
    from proofs import mixture_noninvariance as proof

    v = proof.numeric_check()
    assert v.evidence["quadrature_agrees"] and v.evidence["quadrature_tolerance"] < 1e-10 * abs(v.evidence["formula_rate"])
    real = proof.kappa3_rate
    monkeypatch.setattr(proof, "kappa3_rate", lambda *a, **k: real(*a, **k) * (1 + 1e-10))
    assert not proof.numeric_check().evidence["quadrature_agrees"]


def test_bernoulli_numeric_tolerances_are_derived():
    from proofs import bernoulli_scalar as proof

    v = proof.numeric_check()
    assert v.status is Status.CONFIRMED_NUMERICALLY
    for c in v.evidence["cases"]:
        if "tolerance" in c:       # no-blow-up cases: the derived bound, and it is informative
            assert abs(c["sigma(5)"] - c["closed_form"]) <= c["tolerance"] < 1e-5 * abs(c["closed_form"])

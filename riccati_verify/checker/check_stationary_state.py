"""Checker for `stationary_state` certificates: the certificate's own initial covariance is an
equilibrium, so the covariance never moves.

Claim {"kind": "stationary_state", "positive_definite": bool, "zero": bool}: F(Σ0) = 0 for the
Σ0 of the certificate's state, with F(Σ) = AΣ + ΣAᵀ + VΣBΣ + ΣBᵀΣVᵀ; "positive_definite" true
claims Σ0 ≻ 0 as well, "zero" true claims Σ0 = 0 (at most one of the two).  Witness: empty.

Proof.  F is a polynomial, hence locally Lipschitz, so the moment ODE Σ̇ = F(Σ) has a unique
solution from Σ0; the constant Σ(t) = Σ0 solves it when F(Σ0) = 0.  So Σ(t) = Σ0 for every
t ≥ 0: the regime "equilibrium" with the limit Σ0 (positive definite or, when singular, the
project's singular limit), and, for Σ0 = 0, "collapse" (Σ ≡ 0).  F(Σ0) is evaluated exactly in
rationals (`check_equilibrium.verify_zero` at radius 0) and the definiteness decided exactly;
each of F's three products is one denominator-cleared integer product under
`check_equilibrium.MAX_PRODUCT_WORK`, refused before it runs when the entries are too large.
"""

from __future__ import annotations

import flint

from riccati_verify.checker.check_equilibrium import is_pd_exact, q_matrix, verify_zero
from riccati_verify.checker.verify import CheckResult

__all__ = ["check"]

CLAIM_KEYS = frozenset({"positive_definite", "zero"})
"""The claim's keys besides `kind`; `verify_certificate` refuses any other."""
WITNESS_KEYS = frozenset()
"""The witness is empty: the claim is decided from the certificate's own problem."""


def check(claim: dict, problem, witness: dict) -> CheckResult:
    """Re-check one `stationary_state` claim (the entry point `verify_certificate` calls)."""
    params, state = problem.require_params(), problem.require_state()
    pd, zero = claim.get("positive_definite"), claim.get("zero")
    if not isinstance(pd, bool) or not isinstance(zero, bool):
        return CheckResult(False, "claim 'positive_definite' and 'zero' must be true or false")
    if pd and zero:
        return CheckResult(False, "Sigma0 cannot be both 0 and positive definite")
    S0 = q_matrix(state.cov)
    if zero != all(x == 0 for r in S0 for x in r):
        return CheckResult(False, "the claim 'zero' does not match the certificate's Sigma0")
    ok, why = verify_zero(q_matrix(params.A), q_matrix(params.B), q_matrix(params.V), S0, flint.fmpq(0))
    if not ok:
        return CheckResult(False, f"Sigma0 is not an equilibrium: {why.replace('center', 'Sigma0')}")
    if pd and not is_pd_exact(S0):
        return CheckResult(False, "Sigma0 is not positive definite (exact)")
    what = "0 (collapse: Sigma = 0 for all t)" if zero else (
        "positive definite" if pd else "an equilibrium (its rank is not claimed)")
    return CheckResult(True, f"F(Sigma0) = 0 exactly, so Sigma(t) = Sigma0 for all t >= 0; Sigma0 is {what}")

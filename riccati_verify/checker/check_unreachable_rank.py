"""Checker for `unreachable_rank`: no controls steer N(m0, Σ0) to N(m1, Σ1),
for any horizon, because the ranks of the covariances differ.

The invariance argument (MATH.md §3): for any controls, Σ(t) = Φ(t) Σ0 Φ(t)ᵀ
with Φ̇ = J(t)Φ, Φ(0) = I, so Φ(t) is invertible and rank Σ(t) = rank Σ0.
The checker recomputes both ranks exactly over ℚ from the certificate's own
numbers and accepts only when they match the claim and differ.
"""

from __future__ import annotations

from riccati_verify.core import exact
from riccati_verify.checker.verify import CheckResult, claim_target

__all__ = ["ARGUMENT", "check"]

CLAIM_KEYS = frozenset({"target_mean", "target_cov", "rank_initial", "rank_target", "statement"})
"""The claim's keys besides `kind`; `verify_certificate` refuses any other."""
WITNESS_KEYS = frozenset({"invariant", "argument"})
"""The witness's keys (all routes); `verify_certificate` refuses any other."""


def statement(claim: dict, witness: dict) -> str:
    """The one sentence an `unreachable_rank` claim means (`claim.statement`, if present, must be it)."""
    return "no controls (A, B, V, b)(t) and no T > 0 steer the initial Gaussian to the target"

ARGUMENT = ("Sigma(t) = Phi(t) Sigma0 Phi(t)^T with Phi' = J(t) Phi, Phi(0) = I, J = A + V Sigma B; "
            "Phi(t) is invertible (det Phi(t) = exp(int tr J) > 0), so rank Sigma(t) = rank Sigma0 "
            "for every control and every t")


def check(claim: dict, problem, witness: dict) -> CheckResult:
    """Re-check one `unreachable_rank` claim from its witness (the entry point `verify_certificate` calls)."""
    state0 = problem.require_state()
    target = claim_target(claim, state0)
    if witness.get("invariant") != "rank" or witness.get("argument") != ARGUMENT:
        return CheckResult(False, "witness must name the rank invariant and state the invariance argument")
    c0, c1 = claim["rank_initial"], claim["rank_target"]
    # JSON true and 1.0 compare equal to 1 in Python: a rank must be a JSON integer
    if any(not isinstance(c, int) or isinstance(c, bool) for c in (c0, c1)):
        return CheckResult(False, "rank_initial and rank_target must be integers")
    r0, r1 = exact.rank(state0.cov), exact.rank(target.cov)
    if (c0, c1) != (r0, r1):
        return CheckResult(False, f"claimed ranks ({c0}, {c1}) differ from the exact ranks ({r0}, {r1})")
    if r0 == r1:
        return CheckResult(False, f"both covariances have rank {r0}: no rank obstruction")
    return CheckResult(True, f"exact ranks {r0} != {r1}; rank is invariant under the moment flow")

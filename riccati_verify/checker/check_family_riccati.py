"""Checker for `family_riccati` certificates: a regime for every member of a box with V = vI
and for every positive definite initial covariance (MATH.md §7), by one common quadratic
Lyapunov function for the whole box.

For Σ ≻ 0, P = Σ⁻¹ solves Ṗ = −(AᵀP + PA) − 2vB_s, so with P* the solution of
AᵀP* + P*A = −2vB_s (when the spectra allow),  P(t) = P* + e^{−Aᵀt}(P0 − P*)e^{−At}.

  "equilibrium": −A Hurwitz and −vB_s ≻ 0.  Then P* = ∫_0^∞ e^{−Aᵀs}(−2vB_s)e^{−As} ds ≻ 0
      and P(t) → P*, so Σ(t) → Σ* = P*⁻¹ ≻ 0 for every Σ0 ≻ 0.
  "collapse":    A Hurwitz and −vB_s ⪰ 0.  P(t) ⪰ e^{−Aᵀt}P0e^{−At} → ∞ in every direction,
      so Σ(t) → 0.
  "blowup":      −A Hurwitz and vB_s ≻ 0.  P* = −∫_0^∞ e^{−Aᵀs} 2vB_s e^{−As} ds ≺ 0 and
      P(t) → P*, so from P(0) = P0 ≻ 0 the matrix P(t) turns singular at a finite time:
      Σ blows up, for every Σ0 ≻ 0 (no bound on T* is claimed).

"A Hurwitz for every member" is shown by the witness Y (a common Lyapunov matrix, exact
rationals): Y ≻ 0 and AᵀY + YA ≺ 0 (≻ 0 for −A) at every vertex of the A-box, which by
affinity and convexity covers the box (`_family.common_lyapunov`).  The sign statements on
vB_s are Rohn's exact vertex test.  Claim {"kind": "family_riccati", "regime": R};
witness {"Y": d×d}.
"""

from __future__ import annotations

from riccati_verify.checker._family import common_lyapunov, vbs_definite
from riccati_verify.checker._reduced_riccati import witness_checked
from riccati_verify.checker.verify import CheckResult

__all__ = ["check"]

FAMILY = True
"""The params are an interval box (`core.io.box_from_dict`), not one model."""
CLAIM_KEYS = frozenset({"regime"})
"""The claim's keys besides `kind`; `verify_certificate` refuses any other."""
WITNESS_KEYS = frozenset({"Y"})
"""The common Lyapunov matrix."""

# regime: (A Hurwitz (+1) or -A Hurwitz (-1), sign s and strictness with s·vB_s ⪰/≻ 0, conclusion)
_RULES = {
    "equilibrium": (-1, -1, True, "Sigma(t) -> P*^-1 > 0 for every member and every Sigma0 > 0"),
    "collapse": (1, -1, False, "Sigma(t) -> 0 for every member and every Sigma0 > 0"),
    "blowup": (-1, 1, True, "Sigma blows up in finite time for every member and every Sigma0 > 0"),
}


def check(claim: dict, box, witness: dict) -> CheckResult:
    """Re-check one `family_riccati` claim over every member of the box."""
    return witness_checked(_check, claim, box, witness)


def _check(claim: dict, box, witness: dict) -> CheckResult:
    rule = _RULES.get(claim.get("regime"))
    if rule is None:
        return CheckResult(False, f"claim regime must be one of {sorted(_RULES)}")
    stable, s, strict, conclusion = rule
    if not vbs_definite(box, s, strict):
        what = ("-" if s < 0 else "") + "v B_s " + ("> 0" if strict else ">= 0")
        return CheckResult(False, f"{what} fails for some member of the box (exact Rohn test)")
    why = common_lyapunov(box, witness.get("Y"), stable)
    if why is not None:
        return CheckResult(False, why)
    return CheckResult(True, f"{conclusion} (common Lyapunov matrix Y on the vertices of the A-box; "
                             "Rohn's test on v B_s)")

"""Checker for `family_scalar` certificates: the regime of σ̇ = 2aσ + 2vβσ², σ(0) = σ0, for
every member of a d = 1 box (MATH.md §6), from the closed form.

With k = vβσ0 (its range over the box is the exact product range, a, v, β, σ0 independent),
s = σ/σ0 solves ṡ = 2as + 2ks², and the closed form gives, for σ0 > 0:

  "blowup":      k > 0 and a + k > 0, and then T* = ∫_1^∞ ds / (2s(a + ks)).  The integrand
                 is positive and decreasing in a and in k, so over the box
                 T* ∈ [T*(a_hi, k_hi), T*(a_lo, k_lo)]; the claim [lower, upper] must contain
                 both ends, computed in arb (`core.bernoulli.scalar_blowup_time`).
  "collapse":    a ≤ 0 and a + k < 0 (σ → 0: exponentially, or algebraically when a = 0).
  "equilibrium": a > 0 and vβ < 0 (σ → σ* = −a/(vβ) > 0).
  "growth":      vβ = 0 identically and a > 0 (σ = σ0 e^{2at}, no blow-up).

Every condition is required of the whole box by exact interval bounds; claim
{"kind": "family_scalar", "regime": R} (+ "lower", "upper" for blowup), witness
{"precision_bits"} (blowup only).
"""

from __future__ import annotations

from flint import ctx

from riccati_verify.core import balls, bernoulli
from riccati_verify.core.box import product_range
from riccati_verify.checker._reduced_riccati import WitnessError, precision, rational, witness_checked
from riccati_verify.checker.verify import CheckResult

__all__ = ["check", "scalar_ranges"]

FAMILY = True
"""The params are an interval box (`core.io.box_from_dict`), not one model."""
CLAIM_KEYS = frozenset({"regime", "lower", "upper"})
"""The claim's keys besides `kind`; `verify_certificate` refuses any other."""
WITNESS_KEYS = frozenset({"precision_bits"})
"""The arb precision of the blow-up time bounds."""

MAX_FAMILY_PRECISION = 4096


def scalar_ranges(box):
    """(a, vβ, k = vβσ0) intervals of a d = 1 box with σ0 > 0 throughout, else WitnessError."""
    if box.dim != 1 or box.cov is None:
        raise WitnessError("a family_scalar claim needs d = 1 and an initial variance")
    s0 = box.cov[0][0]
    if not s0[0] > 0:
        raise WitnessError("the initial variance must be positive for every member")
    a, c = box.A[0][0], product_range(box.V[0][0], box.B[0][0])
    return a, c, product_range(c, s0)


def check(claim: dict, box, witness: dict) -> CheckResult:
    """Re-check one `family_scalar` claim over every member of the box."""
    return witness_checked(_check, claim, box, witness)


def _check(claim: dict, box, witness: dict) -> CheckResult:
    a, c, k = scalar_ranges(box)
    regime = claim.get("regime")
    if regime != "blowup" and ({"lower", "upper"} & set(claim) or witness):
        return CheckResult(False, "only a blowup claim has lower, upper and precision_bits")
    if regime == "collapse":
        ok = a[1] <= 0 and a[1] + k[1] < 0
        return CheckResult(ok, "a <= 0 and a + v beta sigma0 < 0 for every member: sigma -> 0" if ok
                           else "a <= 0 and a + v beta sigma0 < 0 fail somewhere in the box")
    if regime == "equilibrium":
        ok = a[0] > 0 and c[1] < 0
        return CheckResult(ok, "a > 0 and v beta < 0 for every member: sigma -> -a/(v beta)" if ok
                           else "a > 0 and v beta < 0 fail somewhere in the box")
    if regime == "growth":
        ok = c == (0, 0) and a[0] > 0
        return CheckResult(ok, "v beta = 0 and a > 0 for every member: sigma = sigma0 e^{2at}" if ok
                           else "v beta = 0 and a > 0 fail somewhere in the box")
    if regime != "blowup":
        return CheckResult(False, "claim regime must be one of blowup, collapse, equilibrium, growth")
    if not (k[0] > 0 and a[0] + k[0] > 0):
        return CheckResult(False, "v beta > 0 and a + v beta sigma0 > 0 fail somewhere in the box")
    lo, hi = rational(claim.get("lower"), "claim.lower"), rational(claim.get("upper"), "claim.upper")
    prec = precision(witness)
    if prec > MAX_FAMILY_PRECISION:
        raise WitnessError(f"precision_bits above {MAX_FAMILY_PRECISION}")
    with ctx.workprec(prec):
        fastest = bernoulli.scalar_blowup_time(balls.arb_of(a[1]), balls.arb_of(k[1]))
        slowest = bernoulli.scalar_blowup_time(balls.arb_of(a[0]), balls.arb_of(k[0]))
        if not (balls.arb_of(lo) <= fastest and slowest <= balls.arb_of(hi)):
            return CheckResult(False, f"T* ranges over [{fastest.str(10)}, {slowest.str(10)}] on the box, "
                                      "not inside [lower, upper]")
    return CheckResult(True, f"every member blows up, T* in [{claim['lower']}, {claim['upper']}] "
                             f"(closed form at the extreme corners, monotone in a and v beta sigma0; arb {prec} bits)")

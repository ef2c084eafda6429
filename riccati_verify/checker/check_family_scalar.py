"""Checker for `family_scalar` certificates: the regime of every member of a d = 1 box, or of
a diagonal box (A, B, V and Σ0 diagonal for every member), from the scalar closed form
(MATH.md §6).

One coordinate: σ̇ = 2aσ + 2cσ², σ(0) = σ0 > 0, c = V_ii B_ii (vβ).  With k = cσ0 (its range
over the box is the exact product range, a, c, σ0 independent), s = σ/σ0 solves
ṡ = 2as + 2ks², and the closed form gives:

  "blowup":      k > 0 and a + k > 0, and then T* = ∫_1^∞ ds / (2s(a + ks)).  The integrand
                 is positive and decreasing in a and in k, so over the box
                 T* ∈ [T*(a_hi, k_hi), T*(a_lo, k_lo)].
  "collapse":    a ≤ 0 and a + k < 0 (σ → 0: exponentially, or algebraically when a = 0).
  "equilibrium": a > 0 and c < 0 (σ → σ* = −a/c > 0).
  "growth":      c = 0 identically and a > 0 (σ = σ0 e^{2at}, no blow-up).

Diagonal boxes (d ≥ 2): every off-diagonal entry of A, B, V and Σ0 is exactly 0.  Then a
diagonal Σ stays diagonal (the off-diagonal part of F(Σ) vanishes on diagonal Σ, and the
solution is unique), so the d coordinates are independent scalar equations of the form
above, and each coordinate must have one of the four regimes on the whole box (treating
shared parameters, such as v of V = vI, as independent per coordinate only widens the
ranges).  The regime of Σ: "blowup" if some coordinate blows up on the whole box (the other
coordinates need no regime), with T* = min_i T*_i; a member's T*_i ≥ T*(a_hi, k_hi) for
every coordinate that blows up for some member (k_hi > 0, a_hi + k_hi > 0; the others never
blow up), and T*_i ≤ T*(a_lo, k_lo) for those that blow up on the whole box, so
T* ∈ [min over the first of T*(a_hi, k_hi), min over the second of T*(a_lo, k_lo)].  Else
every coordinate must have one regime on the box, and Σ's is "collapse" if every coordinate
collapses; else "growth" if some coordinate grows; else "equilibrium" (Σ converges to the
diagonal limit, singular where some coordinates collapse: the project's taxonomy, as
`certify.stability.classify_diagonal`).

Every condition is required of the whole box by exact interval bounds, and the claimed regime
must be the one these rules give; claim {"kind": "family_scalar", "regime": R} (+ "lower",
"upper" for blowup, which must contain [min lo, min hi], computed in arb by
`core.bernoulli.scalar_blowup_time`), witness {"precision_bits"} (blowup only).
"""

from __future__ import annotations

from flint import ctx

from riccati_verify.core import balls, bernoulli
from riccati_verify.core.box import MAX_BOX_DIM, product_range
from riccati_verify.checker._reduced_riccati import WitnessError, precision, rational, witness_checked
from riccati_verify.checker.verify import CheckResult

__all__ = ["check", "coordinate_regime", "diagonal_ranges", "scalar_ranges"]

FAMILY = True
"""The params are an interval box (`core.io.box_from_dict`), not one model."""
CLAIM_KEYS = frozenset({"regime", "lower", "upper"})
"""The claim's keys besides `kind`; `verify_certificate` refuses any other."""
WITNESS_KEYS = frozenset({"precision_bits"})
"""The arb precision of the blow-up time bounds."""

MAX_FAMILY_PRECISION = 4096


def _off_diagonal_zero(M) -> bool:
    return all(M[i][j] == (0, 0) for i in range(len(M)) for j in range(len(M)) if i != j)


def diagonal_ranges(box) -> list[tuple]:
    """(a, c = V_ii B_ii, k = cσ0) intervals of every coordinate of a d = 1 or diagonal box with
    σ0 > 0 throughout, else WitnessError."""
    d = box.dim
    if box.cov is None:
        raise WitnessError("a family_scalar claim needs an initial covariance")
    if d > MAX_BOX_DIM:
        raise WitnessError(f"d above {MAX_BOX_DIM}")
    if d > 1 and not all(_off_diagonal_zero(M) for M in (box.A, box.B, box.V, box.cov)):
        raise WitnessError("a family_scalar claim at d >= 2 needs A, B, V and the covariance diagonal "
                           "(every off-diagonal entry exactly 0)")
    out = []
    for i in range(d):
        s0 = box.cov[i][i]
        if not s0[0] > 0:
            raise WitnessError("the initial variance must be positive for every member")
        c = product_range(box.V[i][i], box.B[i][i])
        out.append((box.A[i][i], c, product_range(c, s0)))
    return out


def scalar_ranges(box):
    """(a, vβ, k = vβσ0) intervals of a d = 1 box with σ0 > 0 throughout, else WitnessError."""
    if box.dim != 1:
        raise WitnessError("a scalar box has d = 1")
    return diagonal_ranges(box)[0]


def coordinate_regime(a, c, k) -> str | None:
    """The regime one coordinate has on the whole box by the exact interval rules, or None."""
    if k[0] > 0 and a[0] + k[0] > 0:
        return "blowup"
    if a[1] <= 0 and a[1] + k[1] < 0:
        return "collapse"
    if a[0] > 0 and c[1] < 0:
        return "equilibrium"
    if c == (0, 0) and a[0] > 0:
        return "growth"
    return None


def combined_regime(per: list[str]) -> str:
    """The regime of Σ from its coordinates' regimes (the rules in the module docstring)."""
    if "blowup" in per:
        return "blowup"
    if all(r == "collapse" for r in per):
        return "collapse"
    return "growth" if "growth" in per else "equilibrium"


def check(claim: dict, box, witness: dict) -> CheckResult:
    """Re-check one `family_scalar` claim over every member of the box."""
    return witness_checked(_check, claim, box, witness)


_WHY = {"collapse": "a <= 0 and a + v beta sigma0 < 0", "equilibrium": "a > 0 and v beta < 0",
        "growth": "v beta = 0 and a > 0", "blowup": "v beta > 0 and a + v beta sigma0 > 0"}


def _check(claim: dict, box, witness: dict) -> CheckResult:
    ranges = diagonal_ranges(box)
    regime = claim.get("regime")
    if not isinstance(regime, str) or regime not in _WHY:
        return CheckResult(False, "claim regime must be one of blowup, collapse, equilibrium, growth")
    if regime != "blowup" and ({"lower", "upper"} & set(claim) or witness):
        return CheckResult(False, "only a blowup claim has lower, upper and precision_bits")
    d1 = len(ranges) == 1
    per = [coordinate_regime(*r) for r in ranges]
    if d1 and per[0] != regime:
        return CheckResult(False, f"{_WHY[regime]} fail somewhere in the box")
    if "blowup" not in per and None in per:
        return CheckResult(False, f"coordinate {per.index(None)} has no single scalar regime on the box "
                                  "(and none blows up on the whole box)")
    got = combined_regime(per)
    if got != regime:
        return CheckResult(False, f"the coordinates' regimes {per} give {got}, not {regime}")
    if regime != "blowup":
        text = ({"collapse": "sigma -> 0", "equilibrium": "sigma -> -a/(v beta)",
                 "growth": "sigma = sigma0 e^{2at}"}[regime] if d1 else f"coordinates {per}: Sigma -> {regime}")
        if regime == "equilibrium" and "collapse" in per:
            text += " (a singular limit: the collapsing coordinates tend to 0)"
        return CheckResult(True, f"{_WHY[regime] if d1 else 'one scalar regime in every coordinate'} for every "
                                 f"member: {text}")
    lo, hi = rational(claim.get("lower"), "claim.lower"), rational(claim.get("upper"), "claim.upper")
    prec = precision(witness)
    if prec > MAX_FAMILY_PRECISION:
        raise WitnessError(f"precision_bits above {MAX_FAMILY_PRECISION}")
    with ctx.workprec(prec):
        T = lambda a, k: bernoulli.scalar_blowup_time(balls.arb_of(a), balls.arb_of(k))
        fastest = [T(a[1], k[1]) for a, _, k in ranges if k[1] > 0 and a[1] + k[1] > 0]
        slowest = [T(a[0], k[0]) for (a, _, k), r in zip(ranges, per) if r == "blowup"]
        fast, slow = fastest[0], slowest[0]
        for x in fastest[1:]:
            fast = fast.min(x)
        for x in slowest[1:]:
            slow = slow.min(x)
        if not (balls.arb_of(lo) <= fast and slow <= balls.arb_of(hi)):
            return CheckResult(False, f"T* ranges within [{fast.str(10)}, {slow.str(10)}] on the box, "
                                      "not inside [lower, upper]")
    return CheckResult(True, f"every member blows up, T* in [{claim['lower']}, {claim['upper']}] "
                             f"(closed form at the extreme corners, monotone in a and v beta sigma0"
                             f"{'' if d1 else ', earliest coordinate'}; arb {prec} bits)")

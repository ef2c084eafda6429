"""Checker for `diagonal_regime` certificates: the long-time regime of a decoupled system
(MATH.md §6, last item of §7).

Claim {"kind": "diagonal_regime", "regime": R} with R one of blowup, collapse, growth,
equilibrium; "lower" and "upper" (rationals) exactly when R = "blowup", "limit" (a d×d
rational matrix) exactly when R = "equilibrium".  Witness {"precision_bits": p} for a
blow-up (the arb precision of the blow-up times), else empty.

Proof.  A, B, V and Σ0 are checked to be diagonal, exactly.  Then the diagonal solution
of the d scalar Bernoulli equations σ_i' = 2a_iσ_i + 2c_iσ_i², a_i = A_ii, c_i = V_ii B_ii,
σ_i(0) = s_i = (Σ0)_ii ≥ 0, solves the moment ODE (for diagonal Σ,
AΣ + ΣAᵀ + VΣBΣ + ΣBᵀΣVᵀ = diag(2a_iσ_i + 2c_iσ_i²)), so by uniqueness it is Σ(t).
Each coordinate's fate, decided here in exact rationals (σ' = 2σ(a + cσ)):

    s = 0                  σ ≡ 0                                  limit 0
    c > 0, a + cs > 0      blows up at T = ln(1 + a/(cs))/(2a)    (1/(2cs) if a = 0)
    c > 0, a + cs = 0      σ ≡ s (stationary)                     limit s
    c > 0, a + cs < 0      σ' ≤ 2(a + cs)σ: exponential decay     limit 0
    c < 0, a > 0           logistic                               limit −a/c
    c < 0, a ≤ 0           σ decreasing, its limit solves a + cσ = 0 only at σ ≤ 0   limit 0
    c = 0                  σ = s e^{2at}: → ∞ with no blow-up (a > 0), ≡ s (a = 0), → 0 (a < 0)

The system blows up iff some coordinate does, at T* = min_i T_i: the claim holds when
lower ≤ T_i for every blowing-up i and T_j ≤ upper for some j, each comparison decided
exactly (a_i = 0: T_i = 1/(2c_is_i) is rational) or in arb at precision_bits (T_i from
`core.bernoulli.scalar_blowup_time`).  Otherwise "growth" when some coordinate grows
(‖Σ(t)‖ → ∞, no finite-time blow-up), "collapse" when every limit is 0, and
"equilibrium" when every coordinate converges and not all to 0: the claimed limit must be
the exact diag(limits) (possibly singular).  The work is d scalar decisions and at most d
logarithms in arb, d ≤ `core.model.MAX_DIM`, at most `_reduced_riccati.MAX_PRECISION_BITS`.
"""

from __future__ import annotations

from fractions import Fraction

from flint import ctx

from riccati_verify.core import balls
from riccati_verify.core.bernoulli import scalar_blowup_time, scalar_blows_up
from riccati_verify.checker._reduced_riccati import WitnessError, precision, rational, witness_checked
from riccati_verify.checker.check_equilibrium import parse_matrix
from riccati_verify.checker.verify import CheckResult

__all__ = ["check", "coordinate_fate"]

CLAIM_KEYS = frozenset({"regime", "lower", "upper", "limit"})
"""The claim's keys besides `kind`; `verify_certificate` refuses any other."""
WITNESS_KEYS = frozenset({"precision_bits"})
"""The witness's keys (a blow-up claim only); `verify_certificate` refuses any other."""
REGIME_KEYS = {"blowup": {"lower", "upper"}, "collapse": set(), "growth": set(), "equilibrium": {"limit"}}
"""The claim keys each regime reads (besides kind and regime): exactly these, no others."""


def coordinate_fate(a: Fraction, c: Fraction, s: Fraction) -> tuple[str, Fraction | None]:
    """(fate, limit) of σ' = 2aσ + 2cσ² from s ≥ 0: ("blowup", None), ("growth", None) or
    ("converges", its exact limit), decided in exact rationals (table of the module docstring)."""
    if scalar_blows_up(a, c, s):
        return "blowup", None
    if s == 0:
        return "converges", Fraction(0)
    if c > 0:
        return "converges", s if a + c * s == 0 else Fraction(0)
    if c < 0:
        return "converges", -a / c if a > 0 else Fraction(0)
    if a > 0:
        return "growth", None
    return "converges", s if a == 0 else Fraction(0)


def check(claim: dict, problem, witness: dict) -> CheckResult:
    """Re-check one `diagonal_regime` claim (the entry point `verify_certificate` calls)."""
    return witness_checked(_check, claim, problem, witness)


def _check(claim: dict, problem, witness: dict) -> CheckResult:
    params, state = problem.require_params(), problem.require_state()
    d = params.dim
    regime = claim.get("regime")
    if regime not in REGIME_KEYS:
        return CheckResult(False, f"claim.regime must be one of {sorted(REGIME_KEYS)}")
    extra = set(claim) - {"kind", "regime"}
    if extra != REGIME_KEYS[regime]:
        return CheckResult(False, f"a {regime} claim has exactly the keys {sorted(REGIME_KEYS[regime])} besides "
                                  f"kind and regime; got {sorted(extra)}")
    if (regime == "blowup") != ("precision_bits" in witness):
        return CheckResult(False, "precision_bits is the witness of a blowup claim, and of no other")
    mats = {"A": params.A, "B": params.B, "V": params.V, "cov": state.cov}
    for name, M in mats.items():
        if any(M[i][j] != 0 for i in range(d) for j in range(d) if i != j):
            return CheckResult(False, f"{name} is not diagonal: the coordinates do not decouple")
    coords = [(params.A[i][i], params.V[i][i] * params.B[i][i], state.cov[i][i]) for i in range(d)]
    if any(s < 0 for _, _, s in coords):
        return CheckResult(False, "a diagonal entry of the covariance is negative")
    fates = [coordinate_fate(*x) for x in coords]
    kinds = [f for f, _ in fates]
    actual = ("blowup" if "blowup" in kinds else "growth" if "growth" in kinds else
              "collapse" if all(lim == 0 for _, lim in fates) else "equilibrium")
    if regime != actual:
        return CheckResult(False, f"the coordinates' fates {kinds} make the regime {actual}, not {regime}")
    if regime == "blowup":
        return _bracket(claim, witness, [x for x, f in zip(coords, kinds) if f == "blowup"])
    if regime == "equilibrium":
        L = parse_matrix(claim["limit"], d, "claim.limit", symmetric=False)
        want = [[fates[i][1] if i == j else 0 for j in range(d)] for i in range(d)]
        if [[Fraction(int(x.p), int(x.q)) for x in r] for r in L] != want:
            return CheckResult(False, "claim.limit is not the exact limit diag(lim_i) of the coordinates")
        return CheckResult(True, "every coordinate converges (exact scalar fates): Sigma(t) -> claim.limit")
    if regime == "growth":
        return CheckResult(True, "no coordinate blows up and one grows like e^{2at}: ||Sigma(t)|| -> infinity, "
                                 "no finite-time blow-up")
    return CheckResult(True, "every coordinate tends to 0 (exact scalar fates): Sigma(t) -> 0")


def _bracket(claim: dict, witness: dict, blowing: list) -> CheckResult:
    """lower ≤ min_i T_i ≤ upper: lower ≤ every T_i, and some T_j ≤ upper."""
    lo, hi = rational(claim["lower"], "claim.lower"), rational(claim["upper"], "claim.upper")
    if not 0 <= lo <= hi:
        raise WitnessError(f"claim bracket must satisfy 0 <= lower <= upper, got [{lo}, {hi}]")
    prec = precision(witness)
    above = False
    with ctx.workprec(prec):
        for a, c, s in blowing:
            if a == 0:      # T = 1/(2cs), rational: compared exactly
                T = scalar_blowup_time(a, c, s)
                ge_lo, le_hi = lo <= T, T <= hi
            else:
                T = scalar_blowup_time(balls.arb_of(a), balls.arb_of(c), balls.arb_of(s))
                ge_lo, le_hi = balls.arb_of(lo) <= T, T <= balls.arb_of(hi)
            if not ge_lo:
                return CheckResult(False, f"a coordinate's blow-up time is not proved >= lower at {prec} bits")
            above = above or le_hi
    if not above:
        return CheckResult(False, f"no coordinate's blow-up time is proved <= upper at {prec} bits")
    return CheckResult(True, f"T* = min_i T_i lies in [{claim['lower']}, {claim['upper']}] (closed forms, "
                             f"exact or arb at {prec} bits)")

"""Checker for `blowup` certificates: the blow-up time T* lies in (lower, upper].

Routes (witness["route"]):

- "radon-monotone" (V = vI): v B_s ⪰ 0 exactly, so N(t) is Loewner-decreasing;
  N(lower) ≻ 0 and N(upper) not ⪰ 0 are proved in balls.  Then N ≻ 0 on
  [0, lower] and N loses definiteness in (lower, upper]: T* ∈ (lower, upper].
- "radon-cover" (V = vI, any sign): as above, and a cover of [0, lower] by boxes
  proves N ≻ 0 there (see `_reduced_riccati.check_cover`).
- "diagonal-closed-form": A, B, V, Σ0 diagonal; T* = min over blowing-up
  coordinates of ln(1 + a/c)/(2a) (1/(2c) if a = 0), c = vβσ0, recomputed in
  arb; its ball must lie inside (lower, upper).

Numbers in the verdict are exact rationals or balls; nothing is trusted from
the witness except as data to re-check.
"""

from __future__ import annotations

from flint import ctx

from riccati_verify.core import balls, exact
from riccati_verify.core.bernoulli import scalar_blowup_time, scalar_blows_up
from riccati_verify.checker.verify import CheckResult
from riccati_verify.checker._reduced_riccati import (ReducedRiccati, WitnessError, witness_checked, check_cover,
                                                     check_point_work, checked_factor, precision, rational, scalar_v)

__all__ = ["check"]

CLAIM_KEYS = frozenset({"lower", "upper"})
"""The claim's keys besides `kind`; `verify_certificate` refuses any other."""
WITNESS_KEYS = frozenset({"route", "precision_bits", "factor_C", "factor_D", "boxes"})
"""The witness's keys (all routes); `verify_certificate` refuses any other."""


def check(claim: dict, problem, witness: dict) -> CheckResult:
    """Re-check one `blowup` claim from its witness (the entry point `verify_certificate` calls)."""
    return witness_checked(_check, claim, problem, witness)


def _bracket(claim: dict):
    lo, hi = rational(claim.get("lower"), "claim.lower"), rational(claim.get("upper"), "claim.upper")
    if not 0 <= lo < hi:
        raise WitnessError(f"claim bracket must satisfy 0 <= lower < upper, got [{lo}, {hi}]")
    return lo, hi


def _check(claim: dict, problem, witness: dict) -> CheckResult:
    params, state = problem.params, problem.state
    if params is None or state is None:
        return CheckResult(False, "a blow-up certificate needs parameters and a Gaussian state")
    lo, hi = _bracket(claim)
    route = witness.get("route")
    if route in ("radon-monotone", "radon-cover"):
        v = scalar_v(params)
        C, D = checked_factor(state, witness)
        prec = precision(witness)
        if route == "radon-monotone" and not exact.is_psd(exact.scale(v, exact.sym_part(params.B))):
            return CheckResult(False, "route radon-monotone needs v B_s ⪰ 0, which fails")
        sys = ReducedRiccati(params.A, params.B, v, C, D)
        check_point_work(sys, prec, [lo, hi])
        with ctx.workprec(prec):
            if not balls.proves_positive_definite(sys.at(balls.arb_of(lo))):
                return CheckResult(False, f"N(lower) ≻ 0 not proved at {prec} bits: T* ≤ lower is possible")
            if not balls.proves_not_positive_semidefinite(sys.at(balls.arb_of(hi))):
                return CheckResult(False, f"N(upper) indefinite not proved at {prec} bits: T* > upper is possible")
        if route == "radon-cover":
            check_cover(sys, witness.get("boxes"), lo, prec)
            how = f"{len(witness['boxes'])} boxes prove N ≻ 0 on [0, lower]"
        else:
            how = "v B_s ⪰ 0 makes N decreasing, so N ≻ 0 on [0, lower]"
        return CheckResult(True, f"T* ∈ ({claim['lower']}, {claim['upper']}]: N(lower) ≻ 0, N(upper) indefinite "
                                 f"(arb, {prec} bits); {how}")
    if route == "diagonal-closed-form":
        prec = precision(witness)
        mats = (params.A, params.B, params.V, state.cov)
        d = params.dim
        if any(M[i][j] != 0 for M in mats for i in range(d) for j in range(d) if i != j):
            return CheckResult(False, "route diagonal-closed-form needs A, B, V and cov diagonal")
        with ctx.workprec(prec):
            T = None
            for i in range(d):
                a, c = params.A[i][i], params.V[i][i] * params.B[i][i] * state.cov[i][i]
                if scalar_blows_up(a, c):
                    ab, cb = balls.arb_of(a), balls.arb_of(c)
                    Ti = scalar_blowup_time(ab, cb)
                    T = Ti if T is None else T.min(Ti)
            if T is None:
                return CheckResult(False, "no coordinate blows up (c_i > 0 and a_i + c_i > 0 fail everywhere)")
            if not (balls.arb_of(lo) < T and T < balls.arb_of(hi)):
                return CheckResult(False, f"the closed-form ball {T.str(20)} is not inside (lower, upper)")
        return CheckResult(True, f"closed form T* = {T.str(25)} lies in ({claim['lower']}, {claim['upper']})")
    return CheckResult(False, f"unknown blow-up route {route!r}")

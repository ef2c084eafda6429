"""Checker for `no_blowup` certificates: Σ(t) exists (no finite-time blow-up) on [0, horizon]
(claim["horizon"] a rational string; there it is bounded, being continuous), or for all t ≥ 0
(horizon null), where it may still grow without bound (A = 1, B = 0: Σ(t) = e^{2t}Σ0).

Routes (witness["route"]); V = vI unless stated, N as in `_reduced_riccati`:

- "zero-covariance": Σ0 = 0, an equilibrium (any V).
- "opposite-sign": v B_s ⪯ 0 exactly, so Ṅ ⪰ 0 and N(t) ⪰ D⁻¹ ≻ 0 for all t.
- "a-zero": A = 0, so N(t) = D⁻¹ - 2t·vCᵀB_sC, and v CᵀB_sC ⪯ 0 exactly.
- "lyapunov": a rational symmetric W∞ with AᵀW∞ + W∞A = -B_s, vW∞ ⪰ 0 and
  D⁻¹ - 2vCᵀW∞C ≻ 0 (all exact); then N(t) ⪰ D⁻¹ - 2vCᵀW∞C ≻ 0 for all t,
  because 2vW(t) = 2vW∞ - e^{Aᵀt}(2vW∞)e^{At} ⪯ 2vW∞.
- "radon-monotone" (finite horizon T): v B_s ⪰ 0 exactly and N(T) ≻ 0 in balls.
- "radon-cover" (finite horizon T): a box cover proving N ≻ 0 on [0, T].
- "diagonal-closed-form" (A, B, V, Σ0 diagonal): no coordinate blows up, or
  (finite horizon) every coordinate's closed-form time exceeds T, in arb.
- "lohner" (any V, finite horizon T): the checker's own validated Lohner flow
  (`_lohner.enclose_lohner`, with m ≡ 0, b = 0: Σ̇ does not involve the mean)
  encloses Σ on [0, T]; a validated enclosure is a proof that the solution
  exists, bounded, on the whole horizon.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb_mat, ctx

from riccati_verify.core import balls, exact
from riccati_verify.core.bernoulli import scalar_blowup_time, scalar_blows_up
from riccati_verify.checker.verify import CheckResult
from riccati_verify.checker._lohner import MAX_DURATION, enclose_lohner
# the lohner route's largest d is blowup_general's (its steps cost about n³, n = d(d+1)/2: a hostile
# witness at d = 12 within the other bounds would have run about 22 hours; review, session 16)
from riccati_verify.checker.check_blowup_general import MAX_DIM as LOHNER_MAX_DIM, MAX_PREC, lohner_options
from riccati_verify.checker._reduced_riccati import (ReducedRiccati, witness_checked, check_cover, check_point_work,
                                                     checked_factor, precision, rational, rational_matrix, scalar_v)

__all__ = ["check"]

CLAIM_KEYS = frozenset({"horizon"})
"""The claim's keys besides `kind`; `verify_certificate` refuses any other."""
_FACTOR = frozenset({"factor_C", "factor_D"})
ROUTE_KEYS = {
    "zero-covariance": frozenset({"route"}),
    "opposite-sign": frozenset({"route"}) | _FACTOR,       # the factor is optional there, checked when given
    "a-zero": frozenset({"route"}) | _FACTOR,
    "lyapunov": frozenset({"route", "W"}) | _FACTOR,
    "radon-monotone": frozenset({"route", "precision_bits"}) | _FACTOR,
    "radon-cover": frozenset({"route", "precision_bits", "boxes"}) | _FACTOR,
    "diagonal-closed-form": frozenset({"route", "precision_bits"}),
    "lohner": frozenset({"route", "precision_bits", "flow"}),
}
"""The keys each route reads: a key a route does not read is refused, so a certificate holds no data
its check never looked at (review s17: the opposite-sign route had accepted garbage in factor_C)."""
WITNESS_KEYS = frozenset().union(*ROUTE_KEYS.values())
"""The witness's keys (all routes); `verify_certificate` refuses any other."""


def check(claim: dict, problem, witness: dict) -> CheckResult:
    """Re-check one `no_blowup` claim from its witness (the entry point `verify_certificate` calls)."""
    return witness_checked(_check, claim, problem, witness)


def _check(claim: dict, problem, witness: dict) -> CheckResult:
    params, state = problem.params, problem.state
    if params is None or state is None:
        return CheckResult(False, "a no-blow-up certificate needs parameters and a Gaussian state")
    if "horizon" not in claim:
        return CheckResult(False, "claim lacks 'horizon' (null for all time)")
    T = None if claim["horizon"] is None else rational(claim["horizon"], "claim.horizon")
    if T is not None and not T > 0:
        return CheckResult(False, "claim.horizon must be positive")
    span = "for all t ≥ 0" if T is None else f"on [0, {claim['horizon']}]"
    route = witness.get("route")
    d = state.dim
    if isinstance(route, str) and route in ROUTE_KEYS and not set(witness) <= ROUTE_KEYS[route]:
        return CheckResult(False, f"route {route} does not read the witness keys {sorted(set(witness) - ROUTE_KEYS[route])}")
    if route == "zero-covariance":
        if any(x != 0 for r in state.cov for x in r):
            return CheckResult(False, "route zero-covariance needs cov = 0")
        return CheckResult(True, f"Σ0 = 0 is an equilibrium: no blow-up {span}")
    if route == "diagonal-closed-form":
        mats = (params.A, params.B, params.V, state.cov)
        if any(M[i][j] != 0 for M in mats for i in range(d) for j in range(d) if i != j):
            return CheckResult(False, "route diagonal-closed-form needs A, B, V and cov diagonal")
        coords = [(params.A[i][i], params.V[i][i] * params.B[i][i] * state.cov[i][i]) for i in range(d)]
        blowing = [(a, c) for a, c in coords if scalar_blows_up(a, c)]
        if not blowing:
            return CheckResult(True, f"no coordinate has c_i > 0 and a_i + c_i > 0: no blow-up {span}")
        if T is None:
            return CheckResult(False, "a coordinate blows up in finite time")
        with ctx.workprec(max(precision(witness) if "precision_bits" in witness else 128, 128)):
            for a, c in blowing:
                ab, cb = balls.arb_of(a), balls.arb_of(c)
                Ti = scalar_blowup_time(ab, cb)
                if not Ti > balls.arb_of(T):
                    return CheckResult(False, f"a coordinate's blow-up time {Ti.str(15)} is not proved > horizon")
        return CheckResult(True, f"every coordinate's closed-form blow-up time exceeds the horizon: no blow-up {span}")

    if route == "lohner":
        return _lohner_route(params, state, T, witness, span)
    v = scalar_v(params)
    vBs = exact.scale(v, exact.sym_part(params.B))
    if route == "opposite-sign":
        if not exact.is_psd(exact.scale(-1, vBs)):
            return CheckResult(False, "route opposite-sign needs v B_s ⪯ 0, which fails")
        if _FACTOR & set(witness):
            checked_factor(state, witness)       # not needed by the argument, but not left unchecked
        return CheckResult(True, f"v B_s ⪯ 0 (exact): N(t) ⪰ D⁻¹ ≻ 0, so no blow-up {span}")
    C, D = checked_factor(state, witness)
    r = len(D)
    if route == "a-zero":
        if any(x != 0 for row in params.A for x in row):
            return CheckResult(False, "route a-zero needs A = 0")
        K = exact.matmul(exact.matmul(exact.transpose(C), vBs), C)
        if not exact.is_psd(exact.scale(-1, K)):
            return CheckResult(False, "route a-zero needs v CᵀB_sC ⪯ 0, which fails")
        return CheckResult(True, f"A = 0 and v CᵀB_sC ⪯ 0 (exact): N(t) = D⁻¹ - 2t·vCᵀB_sC ⪰ D⁻¹, no blow-up {span}")
    if route == "lyapunov":
        W = rational_matrix(witness.get("W"), "W", d, d)
        if not exact.is_symmetric(W):
            return CheckResult(False, "W is not symmetric")
        A = params.A
        lyap = exact.add(exact.matmul(exact.transpose(A), W), exact.matmul(W, A))
        if lyap != exact.scale(-1, exact.sym_part(params.B)):
            return CheckResult(False, "AᵀW + WA ≠ -B_s")
        if not exact.is_psd(exact.scale(v, W)):
            return CheckResult(False, "v W is not positive semidefinite")
        K = exact.matmul(exact.matmul(exact.transpose(C), exact.scale(2 * v, W)), C)
        Ninf = tuple(tuple((1 / D[i] if i == j else 0) - K[i][j] for j in range(r)) for i in range(r))
        if not exact.is_pd(Ninf):
            return CheckResult(False, "D⁻¹ - 2vCᵀWC is not positive definite")
        return CheckResult(True, f"Lyapunov bound N(t) ⪰ D⁻¹ - 2vCᵀW∞C ≻ 0 (exact): no blow-up {span}")
    if route in ("radon-monotone", "radon-cover"):
        if T is None:
            return CheckResult(False, f"route {route} proves a finite horizon only")
        prec = precision(witness)
        sys = ReducedRiccati(params.A, params.B, v, C, D)
        if route == "radon-monotone":
            if not exact.is_psd(vBs):
                return CheckResult(False, "route radon-monotone needs v B_s ⪰ 0, which fails")
            check_point_work(sys, prec, [T])
            with ctx.workprec(prec):
                if not balls.proves_positive_definite(sys.at(balls.arb_of(T))):
                    return CheckResult(False, f"N(horizon) ≻ 0 not proved at {prec} bits")
            return CheckResult(True, f"v B_s ⪰ 0 and N(T) ≻ 0 (arb, {prec} bits): no blow-up {span}")
        check_cover(sys, witness.get("boxes"), T, prec)
        return CheckResult(True, f"{len(witness['boxes'])} boxes prove N ≻ 0: no blow-up {span}")
    return CheckResult(False, f"unknown no-blow-up route {route!r}")


def _lohner_route(params, state, T, witness: dict, span: str) -> CheckResult:
    if T is None:
        return CheckResult(False, "route lohner proves a finite horizon only")
    if T > MAX_DURATION:
        return CheckResult(False, f"route lohner: the horizon exceeds the flow's limit {MAX_DURATION}")
    if state.dim > LOHNER_MAX_DIM:
        return CheckResult(False, f"route lohner is checked up to d = {LOHNER_MAX_DIM} (got d = {state.dim})")
    prec = precision(witness)
    if prec > MAX_PREC:
        return CheckResult(False, f"route lohner: precision_bits must be at most {MAX_PREC}")
    order, jac_order, tol_bits, max_steps = lohner_options(witness, prec)
    d = state.dim
    with ctx.workprec(prec):
        S0 = balls.arb_matrix(state.cov)
    r = enclose_lohner(arb_mat(d, 1), S0, params.A, params.B, params.V, tuple(Fraction(0) for _ in range(d)), T,
                       order=order, jac_order=jac_order, prec=prec, tol_bits=tol_bits, max_steps=max_steps)
    if not r.ok:
        return CheckResult(False, f"route lohner: the validated flow failed ({r.reason})")
    return CheckResult(True, f"validated Lohner flow ({r.steps} steps, {prec} bits) encloses Σ: no blow-up {span}")

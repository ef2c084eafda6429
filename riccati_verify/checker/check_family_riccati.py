"""Checker for `family_riccati` certificates: a regime for every member of a box with V = vI
and for every positive definite initial covariance (MATH.md §7), by one common quadratic
Lyapunov function for the whole box.

For Σ ≻ 0, P = Σ⁻¹ solves Ṗ = −(AᵀP + PA) − 2vB_s, so with P* the solution of
AᵀP* + P*A = −2vB_s (when the spectra allow),  P(t) = P* + e^{−Aᵀt}(P0 − P*)e^{−At}.

  "equilibrium": −A Hurwitz and −vB_s ≻ 0.  Then P* = ∫_0^∞ e^{−Aᵀs}(−2vB_s)e^{−As} ds ≻ 0
      and P(t) → P*, so Σ(t) → Σ* = P*⁻¹ ≻ 0 for every Σ0 ≻ 0.
  "collapse":    A Hurwitz and −vB_s ⪰ 0.  P(t) ⪰ e^{−Aᵀt}P0e^{−At} → ∞ in every direction,
      so Σ(t) → 0.  A vanishing quadratic term (as for "growth" below, V need not be vI) is
      the case vB_s = 0: Σ(t) = e^{At}Σ0e^{Aᵀt} → 0.
  "blowup":      −A Hurwitz and vB_s ≻ 0.  P* = −∫_0^∞ e^{−Aᵀs} 2vB_s e^{−As} ds ≺ 0 and
      P(t) → P*, so from P(0) = P0 ≻ 0 the matrix P(t) turns singular at a finite time:
      Σ blows up, for every Σ0 ≻ 0 (no bound on T* is claimed).

Scope "initial_state" (claim "scope"; default "all_pd_states" for the three above), for the
one exact Σ0 ≻ 0 of the box (P0 = Σ0⁻¹):

  "equilibrium": −A Hurwitz, and P* ≻ 0 and P0 − P* ≻ 0 on every sub-box: P(t) − P* =
      e^{−Aᵀt}(P0 − P*)e^{−At} ⪰ 0 tends to 0, so P(t) ⪰ P* ≻ 0 and Σ(t) → P*⁻¹.
  "blowup":      A Hurwitz and P0 − P* has a negative direction x on every sub-box (the LDL
      minors of its enclosure, or xᵀ(P0 − P*)x < 0 for the witness "direction"): with
      y(t) = e^{At}x, y(t)ᵀP(t)y(t) = y(t)ᵀP*y(t) + xᵀ(P0 − P*)x, whose first term tends to 0,
      so P(t) turns indefinite at a finite time (no bound on T* is claimed).
  "collapse":    A Hurwitz, vB_s ⪰ 0 and P0 − P* ≻ 0.  P* = ∫_0^∞ e^{Aᵀs} 2vB_s e^{As} ds ⪰ 0 and
      P(t) − P* = e^{−Aᵀt}(P0 − P*)e^{−At} ≻ 0 grows without bound (−A has every eigenvalue in
      the open right half-plane), so P(t) ≻ 0 for all t and Σ(t) → 0.  P* of every member of
      a sub-box is enclosed by solving the Kronecker form of AᵀP + PA = −2vB_s with ball
      matrices that contain the sub-box (arb's solve encloses the solution of every matrix in
      the balls); the witness "splits" cut the box uniformly, as for `family_blowup`.

The same three statements through an enclosure of P* (witness "splits" and "precision_bits":
P* of every member of each sub-box of a uniform subdivision enclosed in balls, as for scope
initial_state below), where v B_s is only semidefinite or indefinite:

  "blowup":      −A Hurwitz and P* has a negative direction on every sub-box (the LDL minors of
      its enclosure, or xᵀP*x < 0 for the witness "direction" x): P(t) → P*, so P(t) loses
      definiteness at a finite time from every P0 ≻ 0 (Σ blows up).
  "equilibrium": −A Hurwitz, −vB_s ⪰ 0 and P* ≻ 0 on every sub-box (second form: P(t) ≻ 0
      for all t, and P(t) → P*), so Σ(t) → P*⁻¹.

  "growth":      the quadratic term vanishes for every member (B ≡ 0, V ≡ 0, or V = vI with
      v ≡ 0 or B_s ≡ 0; V need not be vI here), so Σ(t) = e^{At}Σ0e^{Aᵀt} exists for all t,
      and ‖e^{At}‖ grows exponentially (`_family.growing_direction`: a symmetric Y, not
      negative semidefinite, with (A − εI)ᵀY + Y(A − εI) ≻ 0 on the vertices of the A-box,
      witness "shift" = ε ≥ 0).  Then ‖Σ(t)‖ ≥ λ_min(Σ0)‖e^{At}‖² → ∞ for every Σ0 ≻ 0, with
      no finite-time blow-up.

"A Hurwitz for every member" is shown by the witness Y (a common Lyapunov matrix, exact
rationals): Y ≻ 0 and AᵀY + YA ≺ 0 (≻ 0 for −A) at every vertex of the A-box, which by
affinity and convexity covers the box (`_family.common_lyapunov`).  The sign statements on
vB_s are Rohn's exact vertex test.  Claim {"kind": "family_riccati", "regime": R[, "scope": S]};
witness {"Y": d×d[, "splits", "precision_bits"]} (the last two for the P* routes;
"shift" for growth).
"""

from __future__ import annotations

from flint import arb_mat, ctx

from riccati_verify.core import balls, exact
from riccati_verify.checker._family import (ball, common_lyapunov, growing_direction, quadratic_vanishes,
                                            scalar_v_interval, split_pieces, vbs_definite)
from riccati_verify.checker._reduced_riccati import WitnessError, precision, rational, witness_checked
from riccati_verify.checker.verify import CheckResult

__all__ = ["check"]

FAMILY = True
"""The params are an interval box (`core.io.box_from_dict`), not one model."""
CLAIM_KEYS = frozenset({"regime", "scope"})
"""The claim's keys besides `kind`; `verify_certificate` refuses any other."""
WITNESS_KEYS = frozenset({"Y", "splits", "precision_bits", "shift", "direction"})
"""The common Lyapunov matrix; the subdivision and precision of the P* enclosure (initial_state);
the shift of a growth claim; a direction x with xᵀP*x < 0 (the P* route's blow-up, optional)."""

MAX_FAMILY_PRECISION = 1024

# regime: (A Hurwitz (+1) or -A Hurwitz (-1), sign s and strictness with s·vB_s ⪰/≻ 0, conclusion)
_RULES = {
    "equilibrium": (-1, -1, True, "Sigma(t) -> P*^-1 > 0 for every member and every Sigma0 > 0"),
    "collapse": (1, -1, False, "Sigma(t) -> 0 for every member and every Sigma0 > 0"),
    "blowup": (-1, 1, True, "Sigma blows up in finite time for every member and every Sigma0 > 0"),
}


def check(claim: dict, box, witness: dict) -> CheckResult:
    """Re-check one `family_riccati` claim over every member of the box."""
    return witness_checked(_check, claim, box, witness)


def p_star_enclosure(box, d: int) -> arb_mat:
    """Balls containing P* (AᵀP* + P*A = −2vB_s) of every member of the box, at the ambient precision:
    the d²×d² Kronecker system (row-major vec) with interval entries, solved by arb."""
    from riccati_verify.core import box as bx

    Bs = bx.interval_sym_part(box.B)
    v = ball(scalar_v_interval(box))      # P = Σ⁻¹ solves the Lyapunov form only for V = vI
    K, rhs = arb_mat(d * d, d * d), arb_mat(d * d, 1)
    for i in range(d):
        for j in range(d):
            row = i * d + j
            for k in range(d):
                K[row, k * d + j] += ball(box.A[k][i])     # (AᵀP)_ij = Σ_k A_ki P_kj
                K[row, i * d + k] += ball(box.A[k][j])     # (PA)_ij = Σ_k P_ik A_kj
            rhs[row, 0] = -2 * v * ball(Bs[i][j])
    x = K.solve(rhs, algorithm="precond")   # preconditioned by mid(K)^-1: plain LU wraps badly on wide balls
    P = arb_mat(d, d)
    for i in range(d):
        for j in range(d):
            P[i, j] = x[i * d + j, 0]
    return balls.symmetrized(P)


def _p_star_checked(box, witness: dict, tests) -> str | None:
    """None when, on every sub-box of the witness' splits, the ball enclosure P of P* passes
    each test(P) -> reason-or-None; else the first failure."""
    prec = precision(witness)
    if prec > MAX_FAMILY_PRECISION:
        raise WitnessError(f"precision_bits above {MAX_FAMILY_PRECISION}")
    pieces = split_pieces(box, witness.get("splits", {}))
    with ctx.workprec(prec):
        for n, sub in enumerate(pieces):
            try:
                Ps = p_star_enclosure(sub, box.dim)
            except ZeroDivisionError:
                return f"sub-box {n}: the Lyapunov system for P* is not proved regular"
            for test in tests:
                why = test(Ps)
                if why is not None:
                    return f"sub-box {n}: {why} not proved for every member"
    return None


def _pd(M) -> bool:
    return balls.proves_positive_definite(balls.congruence_preconditioned(balls.symmetrized(M))[0])


def _initial_state(claim: dict, box, witness: dict) -> CheckResult:
    if box.cov is None or box.free(("cov",)):
        return CheckResult(False, "scope initial_state needs one exact initial covariance (no interval in cov)")
    S0 = box.member()[1].cov
    if not exact.is_pd(S0):
        return CheckResult(False, "the initial covariance is not positive definite")
    regime = claim.get("regime")
    collapse = regime == "collapse"
    if regime != "blowup" and "direction" in witness:
        return CheckResult(False, "direction belongs to the blowup claims only")
    if collapse and not vbs_definite(box, 1, strict=False):
        return CheckResult(False, "v B_s >= 0 fails for some member of the box (exact Rohn test)")
    why = common_lyapunov(box, witness.get("Y"), -1 if regime == "equilibrium" else 1)
    if why is not None:
        return CheckResult(False, why)
    with ctx.workprec(precision(witness)):
        P0 = balls.arb_matrix(S0).inv()
    if regime == "blowup":
        tests = [_negative_test(box, witness, lambda P: P0 - P, "P0 - P*")]
    else:
        tests = [lambda P: None if _pd(P0 - P) else "P0 - P* > 0"]
    if regime == "equilibrium":
        tests.append(lambda P: None if _pd(P) else "P* > 0")
    why = _p_star_checked(box, witness, tests)
    if why is not None:
        return CheckResult(False, why)
    n = len(split_pieces(box, witness.get("splits", {})))
    if regime == "blowup":
        return CheckResult(True, f"Sigma blows up in finite time from the given Sigma0 for every member (A Hurwitz by "
                                 f"a common Lyapunov matrix; P0 - P* has a negative direction on {n} sub-boxes)")
    if collapse:
        return CheckResult(True, f"Sigma(t) -> 0 from the given Sigma0 for every member (A Hurwitz by a common "
                                 f"Lyapunov matrix; P0 - P* > 0 on {n} sub-boxes)")
    return CheckResult(True, f"Sigma(t) -> P*^-1 from the given Sigma0 for every member (-A Hurwitz by a common "
                             f"Lyapunov matrix; P* > 0 and P0 - P* > 0 on {n} sub-boxes)")


def _negative_test(box, witness: dict, of, name: str):
    """A test of the enclosure P: None when M = of(P) has a negative direction for every member,
    by xᵀMx < 0 in balls for the witness "direction" x, else by the LDL minors of M."""
    if "direction" in witness:
        raw = witness["direction"]
        if not isinstance(raw, list) or len(raw) != box.dim:
            raise WitnessError(f"direction must be a list of {box.dim} rationals")
        x = arb_mat([[balls.arb_of(rational(e, f"direction[{i}]"))] for i, e in enumerate(raw)])
        return lambda P: None if (x.transpose() * balls.symmetrized(of(P)) * x)[0, 0] < 0 else \
            f"x^T ({name}) x < 0 for the witness direction x"
    return lambda P: None if balls.proves_not_positive_semidefinite(balls.symmetrized(of(P))) else \
        f"a negative direction of {name}"


def _p_star_route(regime: str, box, witness: dict) -> CheckResult:
    """Blow-up or equilibrium for every Σ0 ≻ 0 from the sign of P*, enclosed over sub-boxes."""
    if regime not in ("blowup", "equilibrium"):
        return CheckResult(False, "the P* route (splits, precision_bits) proves blowup or equilibrium only")
    if regime != "blowup" and "direction" in witness:
        return CheckResult(False, "direction belongs to the P* route's blowup only")
    if regime == "equilibrium" and not vbs_definite(box, -1, strict=False):
        return CheckResult(False, "-v B_s >= 0 fails for some member of the box (exact Rohn test)")
    why = common_lyapunov(box, witness.get("Y"), -1)
    if why is not None:
        return CheckResult(False, why)
    if regime == "blowup":
        test = _negative_test(box, witness, lambda P: P, "P*")
    else:
        test = lambda P: None if _pd(P) else "P* > 0"
    why = _p_star_checked(box, witness, [test])
    if why is not None:
        return CheckResult(False, why)
    n = len(split_pieces(box, witness.get("splits", {})))
    if regime == "blowup":
        return CheckResult(True, "Sigma blows up in finite time for every member and every Sigma0 > 0 (-A Hurwitz "
                                 f"by a common Lyapunov matrix, P(t) -> P*, which has a negative direction on {n} "
                                 "sub-boxes)")
    return CheckResult(True, "Sigma(t) -> P*^-1 > 0 for every member and every Sigma0 > 0 (-A Hurwitz by a common "
                             f"Lyapunov matrix; -v B_s >= 0 and P* > 0 on {n} sub-boxes)")


_ROUTE_KEYS = {"initial_state": {"Y", "splits", "precision_bits", "direction"}, "growth": {"Y", "shift"},
               "p_star": {"Y", "splits", "precision_bits", "direction"}, "vertex": {"Y"}}


def _check(claim: dict, box, witness: dict) -> CheckResult:
    scope = claim.get("scope", "all_pd_states")
    if scope not in ("all_pd_states", "initial_state"):
        return CheckResult(False, "claim scope must be all_pd_states or initial_state")
    route = ("initial_state" if scope == "initial_state" else "growth" if claim.get("regime") == "growth"
             else "p_star" if {"splits", "precision_bits"} & set(witness) else "vertex")
    extra = set(witness) - _ROUTE_KEYS[route]
    if extra:
        return CheckResult(False, f"witness keys {sorted(extra)} do not belong to this claim's route ({route})")
    if scope == "initial_state":
        if claim.get("regime") not in ("collapse", "equilibrium", "blowup"):
            return CheckResult(False, "scope initial_state is checked for the collapse, equilibrium and blowup "
                                      "regimes only")
        return _initial_state(claim, box, witness)
    if claim.get("regime") == "growth":
        if not quadratic_vanishes(box):
            return CheckResult(False, "a growth claim needs the quadratic term to vanish for every member "
                                      "(B = 0, V = 0, or V = vI with v B_s = 0)")
        why = growing_direction(box, witness.get("Y"), witness.get("shift", "0"))
        if why is not None:
            return CheckResult(False, why)
        return CheckResult(True, "the covariance flow is linear and ||e^{At}|| grows exponentially for every "
                                 "member: ||Sigma(t)|| -> infinity for every Sigma0 > 0, no finite-time blow-up")
    if route == "p_star":
        return _p_star_route(claim.get("regime"), box, witness)
    rule = _RULES.get(claim.get("regime")) if isinstance(claim.get("regime"), str) else None
    if rule is None:
        return CheckResult(False, f"claim regime must be one of {sorted(_RULES)}")
    stable, s, strict, conclusion = rule
    # a vanishing quadratic term (v B_s = 0, any V when B or V is 0) is -v B_s >= 0: collapse's condition
    linear = claim.get("regime") == "collapse" and quadratic_vanishes(box)
    if not linear and not vbs_definite(box, s, strict):
        what = ("-" if s < 0 else "") + "v B_s " + ("> 0" if strict else ">= 0")
        return CheckResult(False, f"{what} fails for some member of the box (exact Rohn test)")
    why = common_lyapunov(box, witness.get("Y"), stable)
    if why is not None:
        return CheckResult(False, why)
    return CheckResult(True, f"{conclusion} (common Lyapunov matrix Y on the vertices of the A-box; "
                             "Rohn's test on v B_s)")

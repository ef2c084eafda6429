"""Checker for `training_nonconvexity`: the deep training loss is not convex in the head measure ρ
(seed 001 §8, deep regime; MATH.md §16).

The claim.  Heads share B; ρ0 = δ_(V0, B) (V0 = the certificate's V) and ρ1 = δ_(V1, B).  The
loss is the Frobenius distance of the moment flow at depth T to a target Gaussian,

    L(ρ) = |m(T) − m1|² + ‖Σ(T) − Σ1‖_F²,    the flow driven by v_ρ = Ax + b + E_ρ[V Attn_B],

and the claim is L((ρ0 + ρ1)/2) − (L(ρ0) + L(ρ1))/2 ≥ q > 0: a violated midpoint inequality, so
L is not convex in ρ (although it is convex in the flow's output).

Why three single-head flows suffice: for the mixture ½δ_(V0,B) + ½δ_(V1,B) the velocity is
Ax + b + ½V0 Attn_B + ½V1 Attn_B = Ax + b + ((V0 + V1)/2) Attn_B for every token law, the
single-head field with V = (V0 + V1)/2 (stated in the witness's `argument`).

The checker re-derives the three losses itself: exact rational data, the validated Taylor flow
in balls (`_validated_flow.enclose_segment`), the loss evaluated in ball arithmetic; the witness's
intervals must contain its enclosures and the lower end of the excess ball must exceed q.
Bounded work: d ≤ 4, 0 < T ≤ 10, precision ≤ 1024 bits, Taylor order ≤ 40.
"""

from __future__ import annotations

from fractions import Fraction

import flint

from riccati_verify.checker import _validated_flow as VF
from riccati_verify.checker.verify import CheckResult, claim_target, fmt_q
from riccati_verify.core.balls import arb_of
from riccati_verify.core.errors import InputError
from riccati_verify.core.io import parse_entry, parse_matrix

__all__ = ["ARGUMENT", "CLAIM_KEYS", "MAX_DIM", "MAX_ORDER", "MAX_PREC", "MAX_TIME", "WITNESS_KEYS", "check"]

CLAIM_KEYS = frozenset({"V1", "time", "target_mean", "target_cov", "loss", "excess_at_least"})
"""The claim's keys besides `kind`."""
WITNESS_KEYS = frozenset({"losses", "argument", "prec", "order"})
"""The witness's keys."""
ARGUMENT = ("the velocity of (delta_(V0,B) + delta_(V1,B))/2 is Ax + b + ((V0 + V1)/2) Attn_B[mu](x) for every token "
            "law mu, so the midpoint measure drives the single-head flow with V = (V0 + V1)/2")
MAX_DIM, MAX_TIME, MAX_PREC, MAX_ORDER = 4, Fraction(10), 1024, 40
NAMES = ("rho0", "rho1", "midpoint")


def _interval(x, where: str) -> tuple[Fraction, Fraction]:
    if not isinstance(x, list) or len(x) != 2:
        raise InputError(f"{where} must be [lo, hi]")
    lo, hi = parse_entry(x[0], where), parse_entry(x[1], where)
    if lo > hi:
        raise InputError(f"{where}: lo > hi")
    return lo, hi


def _loss(enc, target) -> flint.arb:
    d = len(target.mean)
    total = flint.arb(0)
    for i in range(d):
        e = enc.mean[i, 0] - arb_of(target.mean[i])
        total += e * e
        for j in range(d):
            e = enc.cov[i, j] - arb_of(target.cov[i][j])
            total += e * e
    return total


def check(claim: dict, problem, witness: dict) -> CheckResult:
    """Re-check one `training_nonconvexity` claim (the entry point `verify_certificate` calls)."""
    params, state0 = problem.require_params(), problem.require_state()
    d = params.dim
    if d > MAX_DIM:
        return CheckResult(False, f"d = {d} exceeds the checker's bound {MAX_DIM}")
    if claim["loss"] != "frobenius":
        return CheckResult(False, "only the Frobenius loss |m − m1|² + ‖Σ − Σ1‖_F² is checked")
    if witness["argument"] != ARGUMENT:
        return CheckResult(False, "witness must state the midpoint argument")
    V1, _ = parse_matrix(claim["V1"], "V1")
    if len(V1) != d or any(len(r) != d for r in V1):
        return CheckResult(False, f"V1 must be {d}×{d}")
    T, q = parse_entry(claim["time"], "time"), parse_entry(claim["excess_at_least"], "excess_at_least")
    if not 0 < T <= MAX_TIME:
        return CheckResult(False, f"time must be in (0, {MAX_TIME}]")
    if q <= 0:
        return CheckResult(False, "excess_at_least must be positive (a midpoint violation)")
    target = claim_target(claim, state0)
    prec, order = witness["prec"], witness["order"]
    if not (isinstance(prec, int) and 64 <= prec <= MAX_PREC and isinstance(order, int) and 4 <= order <= MAX_ORDER):
        return CheckResult(False, f"prec must be an integer in 64..{MAX_PREC} and order in 4..{MAX_ORDER}")
    losses = witness["losses"]
    if not isinstance(losses, dict) or set(losses) != set(NAMES):
        return CheckResult(False, f"witness.losses must give {', '.join(NAMES)}")
    V0 = params.V
    Vmid = tuple(tuple((a + b) / 2 for a, b in zip(r0, r1)) for r0, r1 in zip(V0, V1))
    old = flint.ctx.prec
    flint.ctx.prec = prec
    try:
        balls = {}
        for name, V in zip(NAMES, (V0, V1, Vmid)):
            m, S = VF.ball_state(state0.mean, state0.cov, prec)
            enc = VF.enclose_segment(m, S, params.A, params.B, V, params.b, T, order=order, prec=prec)
            if not enc.ok:
                return CheckResult(False, f"no validated enclosure of the flow of {name}: {enc.reason}")
            L = _loss(enc, target)
            lo, hi = _interval(losses[name], f"losses.{name}")
            if not (L >= arb_of(lo) and L <= arb_of(hi)):
                return CheckResult(False, f"the enclosure of L({name}) = {L.str(6)} is not inside the witness "
                                          f"interval [{fmt_q(lo)}, {fmt_q(hi)}]")
            balls[name] = L
        excess = balls["midpoint"] - (balls["rho0"] + balls["rho1"]) / 2
        if not excess > arb_of(q):
            return CheckResult(False, f"L(midpoint) − mean of the ends = {excess.str(6)} is not proved > {fmt_q(q)}")
    finally:
        flint.ctx.prec = old
    return CheckResult(True, f"L(midpoint) − (L(rho0) + L(rho1))/2 = {excess.str(6)} > {fmt_q(q)} > 0 (validated flow, "
                             "ball arithmetic): the loss is not convex in the head measure")

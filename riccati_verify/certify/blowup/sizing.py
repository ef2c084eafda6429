"""How much work the general blow-up producers plan (never a proof: the checker re-runs all of it).

One copy of the sizing rules that the ellipsoid route (`compactified.py`) and the continuum route
(`continuum.py`) share: the high-precision march, the checker's Lohner flow (tolerance, precision,
order, step budget) and the digits a predicted bracket can carry.  Why each rule is what it is:
MATH.md §15, "How many bits the flow needs".
"""

from __future__ import annotations

import math
from fractions import Fraction

__all__ = ["RESCALE_LOG2", "MAX_MARCH_STEPS", "ORDER", "JAC_ORDER", "MAX_FLOW_STEPS", "MAX_LOG2_NORM", "FLOW_TOL_MARGIN",
           "march_precision", "march_order", "turning_march_order", "flow_tolerance", "segment_tolerance", "with_segment_tolerances",
           "flow_precision", "flow_order", "flow_max_steps", "digits_for"]

RESCALE_LOG2 = 30        # the state is divided by 2^30 when it passes 2^30 (the flow's guard is 2^40)
MAX_MARCH_STEPS = 2000
ORDER = 60               # the highest Taylor order of the checker's Lohner flow (its MAX_ORDER)
JAC_ORDER = 10
MAX_FLOW_STEPS = 40_000
MAX_LOG2_NORM = 200      # the march stops by ‖Σ‖ ≈ 2^200 (the flow's cost grows with it): fewer digits beyond

FLOW_TOL_MARGIN = 12
"""Bits that `flow_tolerance` adds to the predicted need: on general_instance(2, 0, 9), (3, 0, 0),
(3, 0, 11), (3, 0, 12) at 15 and 30 digits the bits the flow needed were 2-8 below the prediction
on three and 2-3 above it on (3, 0, 11)."""


FLOW_BOX = "defect"
"""The checker flow's a-priori mode (witness flow.box).  "defect" (`_lohner` point 8) bounds the step's
remainder from the centre's Taylor polynomial, its defect and a logarithmic norm on a thin tube, so no
Taylor series on a box as wide as the step's motion limits h: on general_instance(4, 0, 15)'s first segment
at 30 digits 545 -> 200 steps (6.3 -> 2.0 s, one core).  "high_order" (points 1', 3 and 3') was the
default before: it allowed longer steps than the Picard box ("picard", h near 1/‖Df‖) where the
Jacobian remainder set the step (general_instance(4, 0, 13): 1,166 -> 752 steps)."""


def march_precision(digits: int) -> int:
    """Working bits of the midpoint Taylor march: the digits asked plus 12 guard digits."""
    return int(3.33 * (digits + 12)) + 64


def march_order(digits: int) -> int:
    """Taylor order of the march.  A lower order (1.5·(digits + 4)) left the true trajectory on
    general_instance(4, 0, 5) at 15 digits: the checker's flow then passed its guard in a segment."""
    return min(int(1.2 * digits) + 30, 120)


def turning_march_order(digits: int) -> int:
    """Taylor order of the turning route's march (`turning._march`), which shrinks its steps to fit the
    series' tail (`general._converged_step`'s `fit`) instead of halving them from a quarter of the radius.
    The cost per unit time is about K²/h; the accuracy is not the tail test's alone: the phase at t1
    amplifies every step's error (T*/(T* − t1) ≈ 10^16 to 10^28), and the test reads two terms of a
    series whose coefficients oscillate (the complex singularities of a turn).  Measured, 30 digits
    (D = 40 at the start, 20 at the floor), t1's error over the bisection's allowance on
    tests/test_blowup_turning.py's closed form at 20 | 30 digits, and march seconds on
    general_instance(4, 0, 15), (3, 0, 4), (4, 0, 7): `march_order` (1.2·D + 30) halving 0.75 | 1.00,
    2.9-3.6 / 2.3 / 1.7 s; 0.9·D + 15 fitted 3.3 | 1.1e4 (t1 off the phase: the entry test failed);
    0.9·D + 25 fitted (margin 1000) 0.07 | 0.03, 2.2 / 1.8 / 1.2 s, the same brackets."""
    return min(int(0.9 * digits) + 25, 120)


def flow_tolerance(digits: int, log2_need: float, log2_remaining: float = 0.0) -> int:
    """tol_bits for the checker's Lohner flow (each step's remainder ≤ 2^-tol·max(1, ‖Σ‖)).

    log2_need: log2 of the final radius per unit 2^-tol predicted by `_ErrorGrowth`, relative to
    the largest radius with which the entry test can pass (the box's half-width times ‖Σ(t1)‖).
    That is what limits the flow: a relative error δ at time t moves T* by δ·(T* − t), so Σ's
    relative radius at t1 is ≈ δT/(T* − t1) with δT the error in T*, and the neighbourhood has
    about the size (bracket width)/(T* − t1) — the need grows with the digits, not with ‖Σ(t1)‖.
    (Sizing tol by ‖Σ(t1)‖, 2·log2 ‖Σ(t1)‖ + 40, had cost 3-4x the steps at 30 digits.)  The floor
    keeps δT ≲ N·2^-tol·T* (N ≲ 2^11 steps) below the bracket's 10^-digits·T*; for a flow that starts
    at t_k (a later segment) it falls by log2_remaining = log2((T* − t_k)/T*)."""
    return int(math.ceil(max(3.33 * digits + 12 + log2_remaining, log2_need + FLOW_TOL_MARGIN)))


def segment_tolerance(digits: int, need: float, remaining: float) -> int:
    """tol_bits for a later segment of the checker's flow (witness segments[k].tol_bits): `need` is
    its share of the predicted final radius per unit 2^-tol, over the largest radius the entry test
    allows, times the number of segments (so that the shares add up to at most the allowed radius);
    `remaining` = (T* − t_k)/T* at its start.  A relative error δ made at t moves T* by δ·(T* − t), so
    the floor of `flow_tolerance` falls by log2 of `remaining`; the share falls with the same growth
    of relative errors towards t1 that `_ErrorGrowth` predicts.  At least 20 bits (the checker's
    lower bound)."""
    return max(20, flow_tolerance(digits, math.log2(max(need, 1e-300)), math.log2(max(remaining, 1e-300))))


def with_segment_tolerances(segments: list[dict], tol_bits: int, digits: int, t_star: Fraction, need,
                            extra_bits: int = 0) -> list[dict]:
    """Copies of the checker's segments, each after the first with its own tol_bits and order
    (witness segments[k]) where `segment_tolerance` + extra_bits asks fewer bits than the flow's
    tol_bits; need(k, t_k) is segment k's `need` (it starts at t_k).  The first segment keeps the
    flow's tolerance, which covers the whole sum."""
    out, start = [], Fraction(0)
    for k, seg in enumerate(segments):
        seg = dict(seg)
        if k:
            own = segment_tolerance(digits, need(k, start), float((t_star - start) / t_star)) + extra_bits
            tol = min(tol_bits, own)
            if tol < tol_bits:
                seg["tol_bits"], seg["order"] = tol, flow_order(tol)
        out.append(seg)
        start += seg["duration"]
    return out


def flow_precision(tol_bits: int, log2_norm: float) -> int:
    """precision_bits: the flow's centre carries tol_bits plus guard bits, and the tail's test
    G(ẑ)ᵀPG(ẑ) < β²ρ² needs rounding errors far below βρ, where ρ ≥ the entry's w1 ≈ 2^-log2_norm."""
    return max(tol_bits, int(math.ceil(log2_norm)) + 24) + 40


def flow_order(tol_bits: int) -> int:
    """The flow's Taylor order, tol/2.4 (at most ORDER).  Steps fall like 2^(tol/K) and each costs
    about a + b·K² (the Jacobian's work does not grow with K).  What limits a step is the remainder
    on the a-priori box, whose ball recursion wraps (its coefficients grow faster per order than the
    centre's): the accepted h was a median 0.36 of the centre series' own guess on
    general_instance(4, 0, 15) at order 48 (about 2.2 times per order, inferred), so a higher order
    pays more than the K² model says.
    Measured (session 16, blowup_time wall s on two cores, each run a fresh child, the two rules
    alternating per draw): tol/2.4 against tol/3 on the 14 draws of `benchmarks/bench_stage1_cores.py`
    at 30 and 15 digits, 101.1 s against 110.3 s in all (0.92), identical brackets on all 28,
    e.g. (4, 0, 15) at 30 digits 12.43 against 13.24 s; the checker alone on (4, 0, 15)'s
    certificate, one core: orders 48 / 58 / 60 / 72 / 85 took 15.3-15.7 / 14.5 / 14.0 / 14.0 /
    17.3 s.  (With the Picard box the step was capped by h ≲ 1/‖Df‖ beyond K = 40; the high-order box
    has no such cap.)"""
    return max(20, min(ORDER, int(round(tol_bits / 2.4))))


def flow_max_steps(march_steps: int, log2_norm: float) -> int:
    """The step budget written into the witness: the flow takes a few times the march's steps,
    and more the further out (‖Σ(t1)‖ ≈ 2^log2_norm) the entry lies."""
    return min(MAX_FLOW_STEPS, 60 * march_steps + 4000 + int(100 * log2_norm))


def digits_for(width: float, t: float, digits: int) -> int:
    """The most digits (≤ digits) whose decimal bracket (half-width 10^-k·min(1, t)/5) holds a
    predicted bracket of this width with a factor 4 to spare."""
    k = digits
    while k > 1 and width > 10.0 ** -k * min(1.0, t) / 5 / 4:
        k -= 1
    return k

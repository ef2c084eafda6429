"""Taylor steps towards a blow-up: the time chart against the self-similar chart (non-validated, evidence only).

    python benchmarks/bench_chart_steps.py [--draws 4:15,4:6] [--order 36] [--bits 100] [--decades 2:9]

For each general_instance(d, 0, i) that blows up, T* comes from `blowup_time(..., digits=20)` (the
bracket's midpoint).  Two midpoint Taylor marches in arb (no enclosure), with the checker's centre
step rule (`_validated_flow._step_log2_guesses`: |x_K| h^K ≈ 2^-bits · max(1, |x|) from the last two
coefficients, times `SAFETY`), then count the steps that take (T* − t)/T* from 10^-a to 10^-b:

- the time chart: Σ̇ = AΣ + ΣAᵀ + VΣBΣ + ΣBᵀΣVᵀ, by the blow-up planners' midpoint recursion
  (`certify.blowup.general.taylor_coefficients`);
- the self-similar chart (docs/MATH.md §15, "Self-similar variables"): u = T* − t, Y = uΣ, ds = dt/u,
  Y′ = −Y + u(AY + YAᵀ) + VYBY + YBᵀYVᵀ, u′ = −u, a quadratic field on (Y, u).

One JSON line per draw: the steps in each chart, their ratio, and the steps per e-fold of T* − t.
The checker's own flow takes about twice the time chart's steps (its remainder is taken on the
a-priori box, not at the centre), so the ratio is what matters here.  Why: a validated flow in the
self-similar chart would be a new checker method; this measures what it could save first.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from fractions import Fraction

from flint import arb, arb_mat, ctx

from riccati_verify.certify.blowup import blowup_time
from riccati_verify.certify.blowup.general import taylor_coefficients, taylor_sum
from riccati_verify.checker._validated_flow import SAFETY, _log2_max_abs, _step_log2_guesses
from riccati_verify.core import balls
from riccati_verify.testing.strategies import general_instance

PREC = 160            # bits of the midpoint marches (planning-grade, as the blow-up planners')
MAX_STEPS = 200_000


def _step(cs: list, K: int, bits: int, zeros: list) -> Fraction:
    """The checker's centre step: `_validated_flow._step_log2_guesses` (2^-bits · max(1, |x|)), times
    SAFETY, as a short dyadic."""
    scale = max(1.0, 2.0 ** (_log2_max_abs(cs[0]) or 0.0))
    lg = min(_step_log2_guesses(zeros, cs, K, 2.0 ** -bits * scale))
    return Fraction(SAFETY * 2.0 ** lg).limit_denominator(2 ** 60)


def time_chart(ABV: tuple, S0, tstar: Fraction, K: int, bits: int, marks: list[float], zeros: list):
    """Steps of the time chart (the planners' midpoint recursion `general.taylor_coefficients`)
    until (T* − t)/T* passes each mark; and (T* − t, Σ) at the first mark (None if never reached)."""
    A, B, V = ABV
    S, t, steps, out, first = balls.arb_matrix(S0), Fraction(0), 0, {}, None
    while len(out) < len(marks) and steps < MAX_STEPS:
        co = taylor_coefficients(A, B, V, S, K)
        h = _step(co, K, bits, zeros)
        S, t, steps = taylor_sum(co[:K], balls.arb_of(h)), t + h, steps + 1
        for m in marks:
            if m not in out and (tstar - t) / tstar < m:
                out[m] = steps
                if first is None:
                    first = (tstar - t, S)
    return out, first


def self_similar_chart(ABV: tuple, Y0: arb_mat, u0: Fraction, tstar: Fraction, K: int, bits: int,
                       marks: list[float], zeros: list) -> dict:
    """Steps of the self-similar chart from (Y0, u0) until u/T* passes each mark: midpoint Taylor
    coefficients of Y′ = −Y + u(AY + YAᵀ) + VYBY + YBᵀYVᵀ, u′ = −u (u_k = (−1)^k u/k!)."""
    A, B, V = ABV
    Y, u, steps, out = Y0, balls.arb_of(u0), 0, {}
    while len(out) < len(marks) and steps < MAX_STEPS:
        Ys, us, YB = [Y], [u], [Y * B]
        for k in range(K):
            uY = us[0] * Ys[k]
            Q = YB[0] * Ys[k]
            for j in range(1, k + 1):
                uY += us[j] * Ys[k - j]
                Q += YB[j] * Ys[k - j]
            P = Ys[k] * arb(-0.5) + A * uY + V * Q
            Ys.append(((P + P.transpose()) / (k + 1)).mid())
            YB.append(Ys[-1] * B)
            us.append((-us[k] / (k + 1)).mid())
        h = _step(Ys, K, bits, zeros)
        Y, steps = taylor_sum(Ys[:K], balls.arb_of(h)), steps + 1
        u = (u * (-balls.arb_of(h)).exp()).mid()
        for m in marks:
            if m not in out and float(u) / float(tstar) < m:
                out[m] = steps
    return out


def measure(d: int, i: int, K: int, bits: int, a: int, b: int) -> dict:
    p, s = general_instance(d, 0, i)
    t0 = time.perf_counter()
    r = blowup_time(p, s, digits=20)
    if r.lower is None or r.upper is None:
        return {"draw": [d, 0, i], "error": "no rigorous T* bracket at 20 digits"}
    tstar = (Fraction(r.lower) + Fraction(r.upper)) / 2
    marks = [10.0 ** -e for e in range(a, b + 1)]
    unreached = {"draw": [d, 0, i], "error": f"a chart did not reach 10^-{b} of T* within {MAX_STEPS} steps"}
    zeros = [arb_mat(d, 1)] * (K + 1)      # the mean coefficients `_step_log2_guesses` reads (none here)
    with ctx.workprec(PREC):
        ABV = tuple(balls.arb_matrix(M) for M in (p.A, p.B, p.V))
        tc, first = time_chart(ABV, s.cov, tstar, K, bits, marks, zeros)
        if marks[-1] not in tc:
            return unreached
        u0, S1 = first
        sc = self_similar_chart(ABV, (S1 * balls.arb_of(u0)).mid(), u0, tstar, K, bits, marks[1:], zeros)
    if marks[-1] not in sc:
        return unreached
    efolds = (b - a) * math.log(10)
    n_t, n_s = tc[marks[-1]] - tc[marks[0]], sc[marks[-1]]
    return {"draw": [d, 0, i], "T*": float(tstar), "order": K, "bits": bits, "decades": [a, b],
            "time_chart_steps": n_t, "self_similar_steps": n_s, "ratio": round(n_t / n_s, 2),
            "per_efold": {"time": round(n_t / efolds, 1), "self_similar": round(n_s / efolds, 1)},
            "seconds": round(time.perf_counter() - t0, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--draws", default="4:15,4:6", help="d:i pairs of general_instance(d, 0, i)")
    ap.add_argument("--order", type=int, default=36)
    ap.add_argument("--bits", type=int, default=100)
    ap.add_argument("--decades", default="2:9", help="a:b, count the steps from 10^-a to 10^-b of T*")
    args = ap.parse_args()
    try:
        a, b = (int(x) for x in args.decades.split(":"))
        draws = [tuple(int(x) for x in pair.split(":")) for pair in args.draws.split(",")]
        if not (0 <= a < b <= 15 and all(len(p) == 2 for p in draws) and 4 <= args.order <= 60
                and 10 <= args.bits <= PREC - 8):
            raise ValueError
    except ValueError:
        ap.error(f"--decades a:b with 0 <= a < b <= 15, --draws d:i pairs, --order 4..60, --bits 10..{PREC - 8}")
    for d, i in draws:
        print(json.dumps(measure(d, i, args.order, args.bits, a, b)), flush=True)


if __name__ == "__main__":
    main()

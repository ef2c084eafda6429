"""Taylor steps towards a blow-up: the time chart against the self-similar chart (floats, evidence only).

    python benchmarks/bench_chart_steps.py [--draws 4:15,4:6] [--order 36] [--bits 100] [--decades 2:9]

For each general_instance(d, 0, i) that blows up, T* comes from `blowup_time(..., digits=20)` (the
bracket's midpoint).  Two non-validated Taylor integrations, with the same step rule as the checker's
centre (`_lohner`: |x_K| h^K ≈ 2^-bits · max(1, |x|) from the last two coefficients, times
`_validated_flow.SAFETY`), then count the steps that take (T* − t)/T* from 10^-a to 10^-b:

- the time chart: Σ̇ = AΣ + ΣAᵀ + VΣBΣ + ΣBᵀΣVᵀ, by the blow-up planners' midpoint recursion
  (`certify.blowup.general.taylor_coefficients`, arb: Σ's entries pass the float range);
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

import numpy as np

from flint import ctx

from riccati_verify.certify.blowup import blowup_time
from riccati_verify.certify.blowup.general import taylor_coefficients, taylor_sum
from riccati_verify.checker._validated_flow import SAFETY
from riccati_verify.core import balls
from riccati_verify.numeric.views import float_view
from riccati_verify.testing.strategies import general_instance


def _cauchy(Xs: list, B: np.ndarray, k: int) -> np.ndarray:
    """Σ_{j ≤ k} X_j B X_{k−j}."""
    S = np.array(Xs[:k + 1])
    return np.einsum("jab,bc,jcd->ad", S, B, S[::-1])


def _log2_max_abs(M) -> float:
    """log2 of the largest |entry| of a float array or an arb_mat (whose entries may overflow floats)."""
    if isinstance(M, np.ndarray):
        return math.log2(float(np.max(np.abs(M))))
    return max(float(abs(e).mid().log()) for e in M.entries() if not e.is_zero()) / math.log(2)


def _step(cs: list, K: int, bits: int, log2_scale: float) -> float:
    """log2 of the checker's centre step (`_validated_flow._step_log2_guesses`, times SAFETY)."""
    return math.log2(SAFETY) + min((-bits + log2_scale) / K - _log2_max_abs(cs[k]) / k for k in (K - 1, K))


def time_chart(params, S0, tstar: float, K: int, bits: int, marks: list[float]):
    """Steps of the time chart (the planners' midpoint recursion `general.taylor_coefficients`, in arb,
    whose exponents do not overflow) until (T* − t)/T* passes each mark; and (u, Σ) at the first."""
    A, B, V = (balls.arb_matrix(M) for M in (params.A, params.B, params.V))
    S, t, steps, out, first = balls.arb_matrix(S0), Fraction(0), 0, {}, None
    with ctx.workprec(160):
        while len(out) < len(marks) and steps < 200_000:
            co = taylor_coefficients(A, B, V, S, K)
            h = Fraction(2.0 ** _step(co, K, bits, max(0.0, _log2_max_abs(S))))
            S, t, steps = taylor_sum(co[:K], balls.arb_of(h)), t + h, steps + 1
            for m in marks:
                if m not in out and (tstar - t) / tstar < m:
                    out[m] = steps
                    if first is None:
                        first = (float(tstar - t), np.array([[float(e.mid()) for e in row] for row in S.tolist()]))
    return out, first


def self_similar_chart(A, B, V, Y0, u0: float, tstar: float, K: int, bits: int, marks: list[float]) -> dict:
    """Steps of the self-similar chart from (Y0, u0) until u/T* passes each mark (floats: Y stays O(1))."""
    Y, u, steps, out = Y0.copy(), u0, 0, {}
    while len(out) < len(marks) and steps < 200_000:
        Ys, us = [Y], [u]
        for k in range(K):
            L = A @ sum(us[j] * Ys[k - j] for j in range(k + 1))
            P = -0.5 * Ys[k] + L + V @ _cauchy(Ys, B, k)
            Ys.append((P + P.T) / (k + 1))
            us.append(-us[k] / (k + 1))
        h = 2.0 ** _step(Ys, K, bits, max(0.0, _log2_max_abs(Y)))
        acc = np.zeros_like(Y)
        for c in reversed(Ys[:K]):
            acc = acc * h + c
        Y, u, steps = acc, u * math.exp(-h), steps + 1
        for m in marks:
            if m not in out and u / tstar < m:
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
    tc, (u0, S1) = time_chart(p, s.cov, tstar, K, bits, marks)
    A, B, V, _ = float_view(p)
    sc = self_similar_chart(A, B, V, u0 * S1, u0, float(tstar), K, bits, marks[1:])
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
    a, b = (int(x) for x in args.decades.split(":"))
    for pair in args.draws.split(","):
        d, i = (int(x) for x in pair.split(":"))
        print(json.dumps(measure(d, i, args.order, args.bits, a, b)), flush=True)


if __name__ == "__main__":
    main()

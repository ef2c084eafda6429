"""Taylor steps towards a blow-up: the time chart against the self-similar chart (floats, evidence only).

    python benchmarks/bench_chart_steps.py [--draws 4:15,4:6] [--order 36] [--bits 100] [--decades 2:9]

For each general_instance(d, 0, i) that blows up, T* comes from `blowup_time(..., digits=20)` (the
bracket's midpoint).  Two non-validated Taylor integrations, with the same step rule as the checker's
centre (`_lohner`: |x_K| h^K ≈ 2^-bits · max(1, |x|) from the last two coefficients, times
`_validated_flow.SAFETY`), then count the steps that take (T* − t)/T* from 10^-a to 10^-b:

- the time chart: Σ̇ = AΣ + ΣAᵀ + VΣBΣ + ΣBᵀΣVᵀ, renormalised by homogeneity (Z = Σ/N, τ = N t with
  A/N: the same steps) so that floats do not overflow;
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

from riccati_verify.certify.blowup import blowup_time
from riccati_verify.checker._validated_flow import SAFETY
from riccati_verify.numeric.views import float_view
from riccati_verify.testing.strategies import general_instance


def _cauchy(Xs: list, B: np.ndarray, k: int) -> np.ndarray:
    """Σ_{j ≤ k} X_j B X_{k−j}."""
    S = np.array(Xs[:k + 1])
    return np.einsum("jab,bc,jcd->ad", S, B, S[::-1])


def _step(cs: list, K: int, bits: int, scale: float) -> float:
    """The checker's centre step rule (`_validated_flow._step_log2_guesses`, times SAFETY)."""
    lg = []
    for k in (K - 1, K):
        a = float(np.max(np.abs(cs[k])))
        if a > 0:
            lg.append((-bits + math.log2(scale)) / K - math.log2(a) / k)
    return SAFETY * 2.0 ** min(lg)


def _horner(cs: list, h: float) -> np.ndarray:
    acc = np.zeros_like(cs[0])
    for c in reversed(cs[:-1]):       # the last coefficient only sizes the step
        acc = acc * h + c
    return acc


def time_chart(A, B, V, S0, tstar: float, K: int, bits: int, marks: list[float]) -> dict:
    """Steps of the time chart until (T* − t)/T* passes each mark (decreasing)."""
    Z, N, t, steps, out = S0.copy(), 1.0, 0.0, 0, {}
    while len(out) < len(marks) and steps < 200_000:
        Zs = [Z]
        for k in range(K):
            P = (A / N) @ Zs[k] + V @ _cauchy(Zs, B, k)
            Zs.append((P + P.T) / (k + 1))
        h = _step(Zs, K, bits, max(1.0, float(np.max(np.abs(Z)))))
        Z, t, steps = _horner(Zs, h), t + h / N, steps + 1
        if np.max(np.abs(Z)) > 1e3:
            Z, N = Z / 1e3, N * 1e3
        for m in marks:
            if m not in out and (tstar - t) / tstar < m:
                out[m] = (steps, t)
    return out


def self_similar_chart(A, B, V, Y0, u0: float, tstar: float, K: int, bits: int, marks: list[float]) -> dict:
    """Steps of the self-similar chart from (Y0, u0) until u/T* passes each mark."""
    Y, u, steps, out = Y0.copy(), u0, 0, {}
    while len(out) < len(marks) and steps < 200_000:
        Ys, us = [Y], [u]
        for k in range(K):
            L = A @ sum(us[j] * Ys[k - j] for j in range(k + 1))
            P = -0.5 * Ys[k] + L + V @ _cauchy(Ys, B, k)
            Ys.append((P + P.T) / (k + 1))
            us.append(-us[k] / (k + 1))
        h = _step(Ys, K, bits, max(1.0, float(np.max(np.abs(Y)))))
        Y, u, steps = _horner(Ys, h), u * math.exp(-h), steps + 1
        for m in marks:
            if m not in out and u / tstar < m:
                out[m] = (steps, u)
    return out


def measure(d: int, i: int, K: int, bits: int, a: int, b: int) -> dict:
    p, s = general_instance(d, 0, i)
    t0 = time.perf_counter()
    r = blowup_time(p, s, digits=20)
    if r.lower is None or r.upper is None:
        return {"draw": [d, 0, i], "error": "no rigorous T* bracket at 20 digits"}
    tstar = float((Fraction(r.lower) + Fraction(r.upper)) / 2)
    A, B, V, _ = float_view(p)
    S0 = np.array(s.cov, dtype=float)
    marks = [10.0 ** -e for e in range(a, b + 1)]
    tc = time_chart(A, B, V, S0, tstar, K, bits, marks)
    # the self-similar chart starts from the time chart's state where (T* − t)/T* = 10^-a
    Z, N, t = S0.copy(), 1.0, 0.0
    t_start = tstar * (1 - marks[0])
    while t < t_start * (1 - 1e-15):
        Zs = [Z]
        for k in range(K):
            P = (A / N) @ Zs[k] + V @ _cauchy(Zs, B, k)
            Zs.append((P + P.T) / (k + 1))
        h = min(_step(Zs, K, bits, max(1.0, float(np.max(np.abs(Z))))), (t_start - t) * N)
        Z, t = _horner(Zs, h), t + h / N
        if np.max(np.abs(Z)) > 1e3:
            Z, N = Z / 1e3, N * 1e3
    u0 = tstar - t
    sc = self_similar_chart(A, B, V, u0 * N * Z, u0, tstar, K, bits, marks)
    efolds = (b - a) * math.log(10)
    n_t = tc[marks[-1]][0] - tc[marks[0]][0]
    n_s = sc[marks[-1]][0]
    return {"draw": [d, 0, i], "T*": tstar, "order": K, "bits": bits, "decades": [a, b],
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

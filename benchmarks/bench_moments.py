"""Benchmark: symbolic derivation time (d = 1..4) and the numeric moment RHS cost (d = 2..64).

Baseline for the RHS: eq. 1.1 written the obvious way,
    A@S + S@A.T + V@S@B@S + S@B.T@S@V.T   and   (A+V)@m + V@S@B@m + b,
against `riccati_verify.numeric.flow.moment_rhs` (3 products + one transpose-add).
Machine limit: one BLAS GEMM of d×d matrices timed in the same run; the RHS
needs 3 such products, so "3 GEMM" is the floor.

Run:  python benchmarks/bench_moments.py [--quick]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from riccati_verify.numeric.flow import moment_rhs
from riccati_verify.symbolic import moments


def naive_rhs(A, B, V, b, m, S):
    return (A + V) @ m + V @ S @ B @ m + b, A @ S + S @ A.T + V @ S @ B @ S + S @ B.T @ S @ V.T


def per_call(fn, *args, min_time=0.2):
    n, t = 1, 0.0
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn(*args)
        t = time.perf_counter() - t0
        if t > min_time:
            return t / n
        n *= 4


def main(quick: bool = False) -> None:
    print("symbolic derivation of the explicit-entry moment ODE (tilting + affine velocity + push-forward + eq. 1.1 check)")
    print(f"{'d':>3} {'seconds':>10}")
    for d in (1, 2, 3) if quick else (1, 2, 3, 4):
        moments.moment_symbols.cache_clear(); moments.moment_ode.cache_clear()
        t0 = time.perf_counter()
        moments.moment_ode(d)
        print(f"{d:>3} {time.perf_counter() - t0:>10.3f}")

    print("\nnumeric RHS cost per call")
    print(f"{'d':>3} {'ours_us':>10} {'naive_us':>10} {'naive/ours':>11} {'gemm_us':>9} {'ours/(3 gemm)':>14}")
    rng = np.random.default_rng(0)
    for d in (2, 4, 8, 16, 32, 64):
        A, B, V = (rng.standard_normal((d, d)) for _ in range(3))
        F = rng.standard_normal((d, d)); S = F @ F.T
        b, m = rng.standard_normal(d), rng.standard_normal(d)
        ours = per_call(moment_rhs, A, B, V, b, m, S)
        naive = per_call(naive_rhs, A, B, V, b, m, S)
        gemm = per_call(np.matmul, A, B)
        print(f"{d:>3} {ours * 1e6:>10.2f} {naive * 1e6:>10.2f} {naive / ours:>11.2f} {gemm * 1e6:>9.2f} {ours / (3 * gemm):>14.2f}")


if __name__ == "__main__":
    main("--quick" in sys.argv)

"""Time to certify local stability of an equilibrium, end to end, for d = 4, 8, 12, 16, 32.

Certified route (the default, `certify.roa.lyapunov_equation_stability`, no SDP): Newton for Σ*,
Krawczyk enclosure in arb, the Lyapunov equation LᵀX + XL = −I for L = DF(Σ*) (n = d(d+1)/2) in
floats (scipy), X rounded to rationals, then X − ξI, ηI − X and −(LᵀX + XL) − μI ≻ 0 proved by
preconditioned Frobenius tests in arb over the whole Σ*-ball.  With --checker also the
`lyapunov_stability` certificate route (`local_stability_certificate`: the independent checker's
exact LDLᵀ, only for n ≤ 78).  Baseline in the same run: scipy's *unverified* route, Newton for
Σ* then solve_continuous_lyapunov(Lᵀ, −I) and eigenvalue checks of X and L.  Machine reference:
a float64 dense solve of the n×n system and one n×n GEMM.

Columns: newton, krawczyk and proof (the Lyapunov-equation ball tests) seconds, total = their
sum, scipy_s, ratio = total / scipy_s; with --checker, cert_s (certificate built and accepted by
the checker) and chk_only (the checker alone).

Problems (seeded): B = GGᵀ/d + I, V = −B + εE, A = B² + K (K skew); for ε = 0 the
equilibrium is Σ* = I exactly (see riccati_verify/app/examples.py), ε = 1/50 makes it
irrational, so the Krawczyk route is exercised.

Usage: python benchmarks/bench_certify.py [--dims 4 8 12 16 32] [--seed 0] [--checker]
"""

from __future__ import annotations

import argparse
import sys
import time
from fractions import Fraction

import numpy as np
from scipy.linalg import solve_continuous_lyapunov

from riccati_verify.core.io import problem_from_dict
from riccati_verify.core.model import Params
from riccati_verify.checker import check_lyapunov_stability
from riccati_verify.certify.roa import lyapunov_equation_stability
from riccati_verify.certify.stability import enclose_equilibrium, local_stability_certificate, newton_equilibrium
from riccati_verify.certify.equilibria import linearisation_np
from riccati_verify.numeric.views import float_view


CLOCK = time.perf_counter
"""Wall clock; --cpu makes it the process's CPU time (for a machine shared with other jobs)."""


def problem(d: int, rng) -> Params:
    G = rng.integers(-2, 3, (d, d))
    B = [[Fraction(int(x), d) for x in row] for row in G @ G.T]
    B = [[B[i][j] + (1 if i == j else 0) for j in range(d)] for i in range(d)]
    E = rng.integers(-1, 2, (d, d))
    V = [[-B[i][j] + Fraction(int(E[i, j]), 50) for j in range(d)] for i in range(d)]
    K = np.triu(rng.integers(-1, 2, (d, d)), 1)
    K = K - K.T
    B2 = [[sum(B[i][k] * B[k][j] for k in range(d)) for j in range(d)] for i in range(d)]
    A = [[B2[i][j] + int(K[i, j]) for j in range(d)] for i in range(d)]
    return Params.from_arrays(A, B, V)


def certified_route(p: Params, checker: bool = False) -> tuple[bool, dict]:
    t = {}
    t0 = CLOCK()
    S = newton_equilibrium(p, np.eye(p.dim))
    t["newton"] = CLOCK() - t0
    if S is None:
        return False, t
    t0 = CLOCK()
    enc = enclose_equilibrium(p, S)
    t["krawczyk"] = CLOCK() - t0
    if enc is None:
        return False, t
    t0 = CLOCK()
    ls = lyapunov_equation_stability(p, enc.center, enc.radius, with_certificate=False)
    t["proof"] = CLOCK() - t0
    ok = ls.proved
    if checker and p.dim * (p.dim + 1) // 2 <= 78:
        t0 = CLOCK()
        cert = local_stability_certificate(p, enc, None)   # includes the checker run
        t["cert"] = CLOCK() - t0
        if cert is not None:
            t0 = CLOCK()
            check_lyapunov_stability.check(cert["claim"], problem_from_dict(cert["params"]), cert["witness"])
            t["check_only"] = CLOCK() - t0
    return ok, t


def scipy_route(p: Params) -> tuple[bool, float]:
    t0 = CLOCK()
    S = newton_equilibrium(p, np.eye(p.dim))
    A, B, V, _ = float_view(p)
    L = linearisation_np(A, B, V, S)
    X = solve_continuous_lyapunov(L.T, -np.eye(L.shape[0]))
    M = A + V + V @ S @ B
    Xm = solve_continuous_lyapunov(M.T, -np.eye(p.dim))
    ok = bool(np.linalg.eigvalsh((X + X.T) / 2)[0] > 0 and np.max(np.linalg.eigvals(L).real) < 0)
    np.linalg.eigvalsh((Xm + Xm.T) / 2)
    return ok, CLOCK() - t0


def machine(n: int, reps: int = 20) -> tuple[float, float]:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, n))
    y = rng.standard_normal(n)
    t0 = CLOCK()
    for _ in range(reps):
        np.linalg.solve(X, y)
    solve_t = (CLOCK() - t0) / reps
    t0 = CLOCK()
    for _ in range(reps):
        X @ X
    return solve_t, (CLOCK() - t0) / reps


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dims", type=int, nargs="+", default=[4, 8, 12, 16, 32])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--checker", action="store_true", help="also the lyapunov_stability certificate route")
    ap.add_argument("--cpu", action="store_true", help="CPU time of this process instead of wall time")
    args = ap.parse_args(argv)
    global CLOCK
    if args.cpu:
        CLOCK = time.process_time
    rng = np.random.default_rng(args.seed)
    print(f"seed {args.seed}; times: {'CPU (process_time)' if args.cpu else 'wall'} seconds")
    print(f"{'d':>3} {'n':>4} {'certified':>9} {'newton':>8} {'krawczyk':>9} {'proof':>8} {'total_s':>9} "
          f"{'scipy_s':>9} {'ratio':>8} {'cert_s':>8} {'chk_only':>8} {'solve_n_s':>10} {'gemm_n_s':>10}")
    for d in args.dims:
        sys.stderr.write(f"d = {d} ...\n")
        p = problem(d, rng)
        if d == args.dims[0]:      # warm-up imports (scipy, cvxpy) outside the timing
            certified_route(problem(2, np.random.default_rng(99)), args.checker)
        ok, t = certified_route(p, args.checker)
        total = sum(t.get(k, 0.0) for k in ("newton", "krawczyk", "proof"))
        sok, st = scipy_route(p)
        n = d * (d + 1) // 2
        sol, gemm = machine(n)
        cert = f"{t['cert']:>8.3f}" if "cert" in t else f"{'-':>8}"
        chk = f"{t['check_only']:>8.3f}" if "check_only" in t else f"{'-':>8}"
        print(f"{d:>3} {n:>4} {str(ok):>9} {t.get('newton', 0):>8.3f} {t.get('krawczyk', 0):>9.3f} "
              f"{t.get('proof', 0):>8.3f} {total:>9.3f} {st:>9.4f} {total / st:>8.0f} {cert} {chk} "
              f"{sol:>10.2e} {gemm:>10.2e}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Correct digits per second for the blow-up time T*, V = vI class, same run.

For d ∈ {1, 2, 4, 8} and digits ∈ {50, 200}, on seeded random problems
(v B_s ≻ 0, Σ0 ≻ 0, small random A), it prints

  ours     riccati_verify.certify.blowup.blowup_time: certified bracket (Radon + arb);
           digits = the certified correct digits, time = wall time
  scipy    flow.integrate_moments (solve_ivp DOP853, rtol 1e-13, event at ‖Σ‖ = 1e12):
           accuracy = -log10 |t_event - T*| / T*, measured against our certified T*
  odefun   plain mpmath odefun on eq. 1.1 at dps = digits + 10, tol 10^-digits: T* by
           secant extrapolation of 1/tr Σ(t) → 0, stepping towards the pole, until the
           estimate stops improving or the time cap is hit (run in a child process that
           is stopped at the cap; '>' marks a capped run, its digits are those of the last
           estimate before the cap); accuracy measured as above
  limit    one arb matrix exponential of the 2d×2d Hamiltonian at the same precision
           (the floor of any exponential-based method); ours/limit = exp-equivalents used

and the ratios of correct digits per second ours/scipy and ours/odefun.
Goal: 50 certified digits for d ≤ 8 in under 2 s.

Usage: python benchmarks/bench_blowup.py [--quick] [--seed S] [--odefun-cap SECONDS]
(--quick: d ∈ {1, 2}; the odefun baseline is capped per case, default 20 s, and
reported as a lower bound on its time when it hits the cap.)
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from fractions import Fraction

import mpmath
import numpy as np
from flint import ctx

from riccati_verify.core import balls, exact
from riccati_verify.certify.blowup import blowup_time, radon_hamiltonian
from riccati_verify.numeric.flow import integrate_moments
from riccati_verify.core.model import Gaussian, Params


def problem(d: int, rng) -> tuple[Params, Gaussian]:
    q = lambda lo, hi: Fraction(int(rng.integers(lo * 4, hi * 4 + 1)), 4)
    A = tuple(tuple(q(-1, 1) / 2 for _ in range(d)) for _ in range(d))
    M = [[q(-1, 1) for _ in range(d)] for _ in range(d)]
    B = exact.add(exact.matmul(M, exact.transpose(M)), exact.identity(d, Fraction(1, 2)))
    L = [[q(-1, 1) for _ in range(d)] for _ in range(d)]
    S0 = exact.add(exact.matmul(L, exact.transpose(L)), exact.identity(d, Fraction(1, 4)))
    return (Params(A, B, exact.identity(d, Fraction(1, 2)), (Fraction(0),) * d),
            Gaussian((Fraction(0),) * d, S0))


def accuracy(estimate, T: Fraction) -> float:
    """Correct digits of an estimate against the certified T* (relative)."""
    with mpmath.workdps(400):
        e = abs(mpmath.mpf(estimate) - mpmath.mpf(T.numerator) / T.denominator) / (mpmath.mpf(T.numerator) / T.denominator)
        return float(-mpmath.log10(e)) if e > 0 else 400.0


def scipy_event(P, S) -> tuple[float, float]:
    t0 = time.perf_counter()
    fr = integrate_moments(P, S, 1e3, rtol=1e-13, atol=1e-15, blowup_norm=1e12)
    return fr.time, time.perf_counter() - t0


def _odefun_secant(P, S, digits: int, t_guess: float, report) -> None:
    """Plain mpmath odefun: secant on g(t) = 1/tr Σ(t) (→ 0 linearly at a simple pole).

    Calls report(estimate_string) after every secant step."""
    d = P.dim
    with mpmath.workdps(digits + 10):
        fq = lambda x: mpmath.mpf(x.numerator) / x.denominator
        A, B = (mpmath.matrix([[fq(x) for x in r] for r in M]) for M in (P.A, P.B))
        v = fq(P.V[0][0])

        def F(t, y):
            Sg = mpmath.matrix(d, d)
            for i in range(d):
                for j in range(d):
                    Sg[i, j] = y[i * d + j]
            J = A + v * Sg * B
            JS = J * Sg
            dS = JS + JS.T
            return [dS[i, j] for i in range(d) for j in range(d)]

        sol = mpmath.odefun(F, 0, [fq(x) for r in S.cov for x in r], tol=mpmath.mpf(10) ** (-digits))

        def g(t):
            y = sol(t)
            return 1 / sum(y[i * d + i] for i in range(d))

        t1, t2 = mpmath.mpf(t_guess) * (1 - mpmath.mpf(10) ** -3), mpmath.mpf(t_guess) * (1 - mpmath.mpf(10) ** -4)
        g1, g2 = g(t1), g(t2)
        best = t2
        for _ in range(200):
            est = t2 - g2 * (t2 - t1) / (g2 - g1)
            report(mpmath.nstr(est, digits + 5))
            if abs(est - best) <= abs(est) * mpmath.mpf(10) ** (-digits):
                return
            best = est
            t_next = t2 + (est - t2) * (1 - mpmath.mpf(10) ** -2)   # stay below the pole
            t1, g1, t2, g2 = t2, g2, t_next, g(t_next)


def _odefun_child(P, S, digits, t_guess, queue):
    t0 = time.perf_counter()
    _odefun_secant(P, S, digits, t_guess, lambda e: queue.put((e, time.perf_counter() - t0)))
    queue.put(None)


def odefun_secant(P, S, digits: int, t_guess: float, cap: float) -> tuple[str | None, float, bool]:
    """Run the odefun baseline in a child process for at most `cap` seconds.

    Returns (last estimate, time at which it was produced, capped?)."""
    import multiprocessing as mp
    import queue as q

    ctx_mp = mp.get_context("fork")
    queue = ctx_mp.Queue()
    proc = ctx_mp.Process(target=_odefun_child, args=(P, S, digits, t_guess, queue))
    t0 = time.perf_counter()
    proc.start()
    best, t_best, capped = None, 0.0, True
    while True:
        left = cap - (time.perf_counter() - t0)
        if left <= 0:
            break
        try:
            item = queue.get(timeout=left)
        except q.Empty:
            break
        if item is None:
            capped = False
            break
        best, t_best = item
    proc.terminate()
    proc.join()
    return best, (t_best if not capped else cap), capped


def arb_exp_time(P, digits: int, t: float) -> float:
    H = radon_hamiltonian(P.A, P.V[0][0], P.B)
    with ctx.workprec(int(3.33 * digits) + 64):
        Hb = balls.arb_matrix(H)
        tb = balls.arb_of(Fraction(t))
        t0 = time.perf_counter()
        (Hb * tb).exp()
        return time.perf_counter() - t0


def _ratio(a: float, b: float) -> str:
    return "inf" if b <= 0 else f"{a / b:.1f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--odefun-cap", type=float, default=20.0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    dims = (1, 2) if args.quick else (1, 2, 4, 8)
    print(f"# bench_blowup seed={args.seed} odefun cap={args.odefun_cap}s")
    hdr = (f"{'d':>2} {'digits':>6} | {'ours s':>7} {'ours dig':>8} {'dig/s':>8} | {'scipy s':>7} {'scipy dig':>9} "
           f"{'dig/s':>7} | {'odefun s':>8} {'odef dig':>8} {'dig/s':>7} | {'exp s':>7} {'ours/lim':>8} | "
           f"{'vs scipy':>8} {'vs odefun':>9}")
    print(hdr)
    print("-" * len(hdr))
    goal_ok = True
    blowup_time(*problem(1, np.random.default_rng(0)), digits=10)   # warm-up: imports, first scipy expm
    for d in dims:
        P, S = problem(d, rng)
        for digits in (50, 200):
            t_ours = math.inf
            for _ in range(3):   # best of 3 (the first call of a process also pays imports)
                t0 = time.perf_counter()
                res = blowup_time(P, S, digits=digits)
                t_ours = min(t_ours, time.perf_counter() - t0)
            assert res.blowup and res.rigorous, res
            T = (Fraction(res.lower) + Fraction(res.upper)) / 2
            dig_ours = res.digits
            t_ev, t_sc = scipy_event(P, S)
            dig_sc = accuracy(t_ev, T)
            sys.stderr.write(f"d={d} digits={digits}: odefun baseline (cap {args.odefun_cap}s)...\n")
            est, t_od, capped_od = odefun_secant(P, S, digits, t_ev, args.odefun_cap)
            dig_od = min(accuracy(est, T), digits) if est is not None else 0.0
            capped = ">" if capped_od else " "
            t_lim = arb_exp_time(P, digits, float(T))
            rate = lambda dig, t: max(dig, 0) / t
            r_ours, r_sc, r_od = rate(dig_ours, t_ours), rate(dig_sc, t_sc), rate(dig_od, t_od)
            print(f"{d:>2} {digits:>6} | {t_ours:7.3f} {dig_ours:8d} {r_ours:8.1f} | {t_sc:7.3f} {dig_sc:9.1f} "
                  f"{r_sc:7.1f} | {capped}{t_od:7.2f} {dig_od:8.1f} {r_od:7.2f} | {t_lim:7.4f} {t_ours / t_lim:8.1f} | "
                  f"{_ratio(r_ours, r_sc):>8} {_ratio(r_ours, r_od):>9}", flush=True)
            if digits == 50 and t_ours >= 2.0:
                goal_ok = False
    print(f"goal (50 certified digits, d <= 8, < 2 s): {'met' if goal_ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""V = vI fed as a general matrix (issue 14, item 5): the general route (`blowup_general` with a
continuum tail, `certify_general_blowup`) against the Radon route (`blowup_time`, which dispatches
V = vI to Radon's linearisation) on the same seeded instances.

Instances (seeded, `vi_instance(d, seed, i)`): A with entries k/4, |k| <= 6; B = σ(G Gᵀ + I/4) and
V = σvI with v ∈ {1/2, 1, 3/2} and a random sign σ (so v B_s ≻ 0 and Σ blows up); Σ0 = H Hᵀ + I/4,
G and H with entries k/4.
Reported per instance: the digits each route proves, its CPU seconds (time.process_time, this
process only) and digits per CPU second, the general bracket's width, and whether the two proved
brackets intersect (they must: both contain T*) and the Radon bracket lies inside the general one.
The load average is printed: the machine may be shared.

Usage: python benchmarks/bench_blowup_continuum.py [--dims 2,3,4] [--n 3] [--seed 0] [--digits 30]
"""

from __future__ import annotations

import argparse
import os
import time
from fractions import Fraction as Q

import numpy as np

from riccati_verify.core import exact
from riccati_verify.core.model import Gaussian, Params


def vi_instance(d: int, seed: int, i: int) -> tuple[Params, Gaussian]:
    rng = np.random.default_rng([seed, d, i, 5])
    q = lambda: Q(int(rng.integers(-6, 7)), 4)        # noqa: E731
    A = [[q() for _ in range(d)] for _ in range(d)]
    G = [[q() for _ in range(d)] for _ in range(d)]
    H = [[q() for _ in range(d)] for _ in range(d)]
    sign = Q(int(rng.choice([-1, 1])))
    B = exact.scale(sign, exact.add(exact.matmul(G, exact.transpose(G)), exact.identity(d, Q(1, 4))))
    cov = exact.add(exact.matmul(H, exact.transpose(H)), exact.identity(d, Q(1, 4)))
    v = sign * Q(int(rng.integers(1, 4)), 2)
    return Params.from_arrays(A, B, exact.identity(d, v)), Gaussian((Q(0),) * d, cov)


def main() -> None:
    from riccati_verify.certify.blowup import blowup_time
    from riccati_verify.certify.blowup.compactified import certify_general_blowup

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dims", default="2,3,4")
    ap.add_argument("--n", type=int, default=3, help="instances per d")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--digits", type=int, default=30)
    args = ap.parse_args()
    print(f"seed {args.seed}, digits {args.digits}, load average {os.getloadavg()[0]:.2f} at start")
    print(" d  i  general: digits  CPU s  digits/s  width     | radon: digits  CPU s  digits/s | agree  inside")
    for d in (int(x) for x in args.dims.split(",")):
        for i in range(args.n):
            p, s = vi_instance(d, args.seed, i)
            t0 = time.process_time()
            g = certify_general_blowup(p, s, args.digits)
            tg = time.process_time() - t0
            t0 = time.process_time()
            r = blowup_time(p, s, digits=args.digits)
            tr = time.process_time() - t0
            if not (r.rigorous and r.blowup):
                # a general bracket here would contradict Radon's proof (or the general route's)
                print(f"{d:2d} {i:2d}  radon: {'no blow-up, proved' if r.rigorous else 'undecided'} "
                      f"({r.note[:60]}); general: "
                      f"{'CONTRADICTION, certified ' + str(g['claim']) if g['ok'] else 'declined: ' + g['reason'][:60]}")
                continue
            rlo, rhi = Q(r.lower), Q(r.upper)
            if not g["ok"]:
                print(f"{d:2d} {i:2d}  general not certified ({tg:.1f} s): {g['reason'][:600]}  | radon "
                      f"{r.digits} digits {tr:.2f} s")
                continue
            lo, hi = Q(g["claim"]["lower"]), Q(g["claim"]["upper"])
            agree = lo < rhi and rlo < hi
            inside = lo <= rlo and rhi <= hi
            print(f"{d:2d} {i:2d}  {g['digits']:15d}  {tg:5.2f}  {g['digits'] / tg:8.1f}  {float(hi - lo):.1e}   "
                  f"| {r.digits:13d}  {tr:5.2f}  {r.digits / tr:8.1f} | {str(agree):5s}  {inside}", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()

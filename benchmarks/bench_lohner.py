"""Radius growth of Lohner's QR enclosure (checker/_lohner.py) against plain balls (_validated_flow).

Same seeded examples for both methods: A = g·I + a rational skew part (rotation), small random
B, V (entries k/20) and b; m0 = (1, 1/2, ...), Σ0 = I, each entry widened by a ball of radius
1e-30.  g = −1 (contracting) or g = +1/20 (mildly expanding).  Columns, measured in one run:
* growth/T  — (log10 final radius − log10 initial radius) / time reached (per unit time);
* reached   — the time reached (the plain-ball method is chained over unit segments and stops
              where it fails: widths explode);
* wall s    — wall time of that method on that example.

Usage: python benchmarks/bench_lohner.py [--dims 2,4,8] [--T 50]
"""

from __future__ import annotations

import argparse
import math
import time
from fractions import Fraction as F

import flint

from riccati_verify.checker._lohner import enclose_lohner
from riccati_verify.checker._validated_flow import ball_state, enclose_segment
from riccati_verify.testing.systems import rotating_drift

R0 = 1e-30
PREC = 256


def example(d, g, seed=1):
    """The benchmark's system: riccati_verify.testing.systems.rotating_drift."""
    return rotating_drift(d, g, seed)


def initial(d):
    m, S = ball_state(tuple(F(1, i + 1) for i in range(d)),
                      tuple(tuple(F(int(i == j)) for j in range(d)) for i in range(d)), PREC)
    old, flint.ctx.prec = flint.ctx.prec, PREC
    try:
        for i in range(d):
            m[i, 0] += flint.arb(0, R0)
            for j in range(i, d):
                S[i, j] += flint.arb(0, R0)
                S[j, i] = S[i, j]
        return m, S
    finally:
        flint.ctx.prec = old


def plain(d, ex, T):
    m, S = initial(d)
    t, radius = 0, R0
    for _ in range(int(T)):
        enc = enclose_segment(m, S, *ex, F(1), prec=PREC)
        if not enc.ok:
            break
        m, S, t, radius = enc.mean, enc.cov, t + 1, enc.radius
    return t, radius


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dims", default="2,4,8")
    ap.add_argument("--T", type=int, default=50)
    args = ap.parse_args(argv)
    print(f"# initial radius {R0:g}, horizon T = {args.T}, {PREC}-bit balls")
    print(f"{'d':>3} {'g':>6} {'method':>7} {'reached':>8} {'radius':>9} {'growth/T':>9} {'wall s':>8}")
    for d in (int(x) for x in args.dims.split(",")):
        for g in (F(-1), F(1, 20)):
            ex = example(d, g)
            t0 = time.perf_counter()
            tp, rp = plain(d, ex, args.T)
            wp = time.perf_counter() - t0
            t0 = time.perf_counter()
            enc = enclose_lohner(*initial(d), *ex, F(args.T), prec=PREC)
            wl = time.perf_counter() - t0
            tl = float(enc.t) if enc.ok else (enc.history[-1][0] if enc.history else 0.0)
            rl = enc.radius if enc.ok else (enc.history[-1][1] if enc.history else R0)
            for name, t, r, w in (("plain", tp, rp, wp), ("lohner", tl, rl, wl)):
                rate = (math.log10(r) - math.log10(R0)) / t if t and r > 0 else float("nan")
                print(f"{d:>3} {float(g):>6.2f} {name:>7} {t:>8.2f} {r:>9.2e} {rate:>9.3f} {w:>8.1f}", flush=True)
            if not enc.ok:
                print(f"    lohner: {enc.reason}")


if __name__ == "__main__":
    main()

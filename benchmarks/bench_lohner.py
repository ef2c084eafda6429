"""Radius growth of Lohner's QR enclosure (checker/_lohner.py) against plain balls (_validated_flow).

Same seeded examples for both methods: A = g·I + a rational skew part (rotation), small random
B, V (entries k/20) and b; m0 = (1, 1/2, ...), Σ0 = I, each entry widened by a ball of radius
1e-30.  g = −1 (contracting) or g = +1/20 (mildly expanding).  Columns, measured in one run:
* growth/T  — (log10 final radius − log10 initial radius) / time reached (per unit time);
* reached   — the time reached (the plain-ball method is chained over unit segments and stops
              where it fails: widths explode);
* wall s    — wall time of that method on that example.

Usage: python benchmarks/bench_lohner.py [--dims 2,4,8] [--T 50]

--pipeline: CPU time of the two users of the flow instead, one case per line, for the tree on
PYTHONPATH (the same command on an older checkout compares versions):
* regime  — `classify_regime(*opposite_instance(d, seed, index))`: regime, certified, CPU s and the
            final radius of the last successful `enclose_lohner` run (the checker's);
* blowup  — `certify_general_blowup(*general_instance(d, seed, index), digits)`: ok, CPU s and the
            bracket width upper − lower.
  python benchmarks/bench_lohner.py --pipeline [--cases regime:3:0:2,blowup:3:0:0:30]
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


PIPELINE = ("regime:3:0:2,regime:4:0:9,regime:8:0:0,"
            "blowup:2:0:2:30,blowup:3:0:0:30,blowup:3:0:11:30,blowup:4:0:0:15")


def pipeline(cases: str) -> None:
    import riccati_verify
    from riccati_verify.checker import _lohner as L
    from riccati_verify.testing.strategies import general_instance, opposite_instance

    last = {}
    inner = L.enclose_lohner

    def recording(*a, **k):       # the final radius of the last successful flow (reports only)
        r = inner(*a, **k)
        if r.ok:
            last["radius"] = r.radius
        return r

    import importlib
    for mod in ("riccati_verify.checker.check_trajectory_convergence", "riccati_verify.checker.check_blowup_general"):
        try:
            m = importlib.import_module(mod)
        except ImportError:
            continue
        if hasattr(m, "enclose_lohner"):
            m.enclose_lohner = recording
    print(f"# tree {riccati_verify.__file__}")
    print(f"{'case':>22} {'cpu s':>8}  result")
    for case in cases.split(","):
        kind, *nums = case.split(":")
        last.clear()
        t0 = time.process_time()
        if kind == "regime":
            from riccati_verify.certify.stability import classify_regime
            r = classify_regime(*opposite_instance(*map(int, nums)))
            out = f"{r.regime} certified={r.certified} radius={last.get('radius', float('nan')):.3g}"
        else:
            from riccati_verify.certify.blowup.compactified import certify_general_blowup
            d, seed, index, digits = map(int, nums)
            r = certify_general_blowup(*general_instance(d, seed, index), digits=digits)
            claim = r.get("claim") or {}
            width = (F(claim["upper"]) - F(claim["lower"])) if "upper" in claim else None
            out = f"ok={r.get('ok')} width={float(width):.3g}" if width is not None else \
                f"ok={r.get('ok')} {str(r.get('reason'))[:80]}"
        print(f"{case:>22} {time.process_time() - t0:>8.2f}  {out}", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dims", default="2,4,8")
    ap.add_argument("--T", type=int, default=50)
    ap.add_argument("--pipeline", action="store_true")
    ap.add_argument("--cases", default=PIPELINE)
    args = ap.parse_args(argv)
    if args.pipeline:
        pipeline(args.cases)
        return
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

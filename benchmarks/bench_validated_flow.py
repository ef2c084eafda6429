"""Checker cost for attention-only reachability certificates (validated Taylor route).

For d = 2, 4, 8 (seeded random full-rank initial/target Gaussians, T = 1) the
attention-only controls of `reach --attention-only` are certified and the
certificate is checked by `verify_certificate`, whose attention segments go
through `certificates/_validated_flow.enclose_segment` (Moore's interval
Taylor method, order 30, 320-bit balls).

Columns, all measured in the same run:
* check s      — `verify_certificate` on the certificate (the whole rigorous check);
* mp32 s       — the producer's non-rigorous re-integration of the same controls,
                 `reach.terminal_error_mp` (mpmath Taylor at 32 digits): baseline 1;
* product-loop — the validated recursions' count of d×d arb_mat products
                 (`SegmentEnclosure.products`, from a separate propagation of the
                 same segments) × the time of one d×d arb_mat product at 320 bits:
                 the cost of the recursion's matrix products alone, a floor for
                 this algorithm (not for the problem); check / product-loop is the
                 overhead on top (Picard tests, ball bookkeeping, Python);
* radius       — largest entry radius of the final enclosure, next to the
                 certificate's tolerance.

Usage: python benchmarks/bench_validated_flow.py [--seed N] [--dims 2,4,8]
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

import flint
import numpy as np

from bench_reach import full_rank  # same random instances as the reach benchmark
from riccati_verify.certify import reach as R
from riccati_verify.checker import check_reachability as CR
from riccati_verify.checker._validated_flow import ball_state, enclose_segment
from riccati_verify.checker import verify_certificate


def propagate(segments, state0, tol):
    """The checker's propagation, keeping the enclosures' step/product counts and final radius."""
    bits = CR.taylor_tol_bits(tol)
    old = flint.ctx.prec
    flint.ctx.prec = CR.PREC_BITS
    try:
        m, S = ball_state(state0.mean, state0.cov, CR.PREC_BITS)
        steps = products = 0
        radius = 0.0
        for seg in segments:
            p = seg.params
            if not any(x for X in (p.B, p.V) for r in X for x in r):
                m, S = CR._affine_step(m, S, p.A, p.b, Fraction(seg.duration))
                continue
            enc = enclose_segment(m, S, p.A, p.B, p.V, p.b, Fraction(seg.duration), prec=CR.PREC_BITS,
                                  tol_bits=bits)
            if not enc.ok:
                raise RuntimeError(enc.reason)
            m, S = enc.mean, enc.cov
            steps, products, radius = steps + enc.steps, products + enc.products, enc.radius
        return steps, products, radius
    finally:
        flint.ctx.prec = old


def product_time(d, rng, reps=7, inner=50):
    old = flint.ctx.prec
    flint.ctx.prec = CR.PREC_BITS
    try:
        X = flint.arb_mat([[flint.arb(float(x)) for x in row] for row in rng.standard_normal((d, d))])
        best = float("inf")
        for _ in range(reps):   # min of repeats: the machine is shared, the minimum is the honest cost
            t = time.perf_counter()
            for _ in range(inner):
                X * X
            best = min(best, (time.perf_counter() - t) / inner)
        return best
    finally:
        flint.ctx.prec = old


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--dims", default="2,4,8")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(f"# attention-only reachability certificates: checker cost (seed {args.seed}, T = 1, "
          f"{CR.PREC_BITS}-bit balls)")
    print(f"{'d':>3} {'steps':>6} {'products':>9} {'check s':>9} {'mp32 s':>9} {'check/mp32':>11} "
          f"{'prod-loop s':>12} {'check/loop':>11} {'radius':>9} {'tolerance':>9} {'valid':>6}")
    for d in (int(x) for x in args.dims.split(",")):
        s0, s1 = full_rank(rng, d), full_rank(rng, d)
        res = R.reach(s0, s1, Fraction(1), attention_only=True, verify=False)
        t = time.perf_counter()
        R.terminal_error_mp(res.segments, s0, s1)          # timed: the mpmath measurement the checker replaces
        t_mp = time.perf_counter() - t
        tol = R.certificate_tolerance()
        cert = R.reachability_certificate(res, s0, s1, Fraction(1), tol)
        t = time.perf_counter()
        chk = verify_certificate(cert)
        t_check = time.perf_counter() - t
        steps, products, radius = propagate(res.segments, s0, tol)
        t_loop = products * product_time(d, rng)
        print(f"{d:>3} {steps:>6} {products:>9} {t_check:>9.3f} {t_mp:>9.3f} {t_check / t_mp:>11.3f} "
              f"{t_loop:>12.3f} {t_check / t_loop:>11.2f} {radius:>9.1e} {float(tol):>9.0e} {str(chk.valid):>6}",
              flush=True)
        if not chk.valid:
            print(f"    not valid: {chk.reason}")


if __name__ == "__main__":
    main()

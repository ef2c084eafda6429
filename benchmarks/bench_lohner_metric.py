"""Lohner radius and work with and without the Lyapunov metric QR and the local frame (issue 13, d = 8).

From the float state at t0 (a point, or a box of radius BOX) of opposite_instance(8, 0, 0), in the
producer's Schur frame, the checker's Lohner flow (covariance only, high-order box, width limit 2^-12)
over [t0, t0 + dur]: steps, CPU seconds (process time) and the radius along the way.  metric 1: the QR
in the inner product of the certified region's X pulled back to the frame (flow "metric": "lyapunov").
--local-frame: the Taylor recursion on the a-priori box in a local eigenframe (flow "local_frame";
`checker._lohner` point 6).

Usage: python benchmarks/bench_lohner_metric.py t0 dur tol_bits order jac_order prec metric [--box R]
e.g.   python benchmarks/bench_lohner_metric.py 8 3/2 120 36 10 256 1     (about 20 s CPU)
       python benchmarks/bench_lohner_metric.py 10 1 80 28 16 192 1 --local-frame   (about 4 s CPU)
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction as Q

import flint
import numpy as np

from riccati_verify.certify import roa as R
from riccati_verify.certify.stability import _numeric_regime, enclose_equilibrium, newton_equilibria
from riccati_verify.checker import _lohner as LO
from riccati_verify.checker._validated_flow import ball_state
from riccati_verify.checker.check_trajectory_convergence import _flow_metric
from riccati_verify.core import balls
from riccati_verify.core.frame import moment_frame
from riccati_verify.testing.strategies import opposite_instance


def main():
    ap = argparse.ArgumentParser()
    for name, typ in (("t0", float), ("dur", Q), ("tol", int), ("order", int), ("jac", int), ("prec", int),
                      ("metric", int)):
        ap.add_argument(name, type=typ)
    ap.add_argument("--box", type=float, default=0.0)
    ap.add_argument("--local-frame", action="store_true")
    a = ap.parse_args()
    p, s = opposite_instance(8, 0, 0)
    _, _, S_end = _numeric_regime(p, s, 0)
    enc = enclose_equilibrium(p, newton_equilibria(p, seeds=[S_end], n_random=0, seed=0)[0])
    roa = R.region_of_attraction(p, enc.center, enc.radius)
    T = R.propose_frame(p, enc.center, "schur")
    if a.t0 > 0:
        S = R._float_path(p, np.array(s.cov, float), a.t0 + 1).sol(a.t0).reshape(8, 8)
        cov = tuple(tuple(Q(float(x)).limit_denominator(2 ** 40) for x in r) for r in (S + S.T) / 2)
    else:
        cov = s.cov
    _, Af, Bf, Vf, cov0 = moment_frame(T, p.A, p.B, p.V, cov)
    m, Sb = ball_state((Q(0),) * 8, cov0, a.prec)
    with flint.ctx.workprec(a.prec):
        for i in range(8):
            for j in range(8):
                Sb[i, j] = Sb[i, j] + flint.arb(0, a.box)
        G = _flow_metric(balls.arb_matrix(roa.stability.X), balls.arb_matrix(T), 8) if a.metric else None
    c = time.process_time()
    res = LO.enclose_lohner(m, Sb, Af, Bf, Vf, (Q(0),) * 8, a.dur, order=a.order, jac_order=a.jac, prec=a.prec,
                            tol_bits=a.tol, covariance_only=True, high_order_box=True, max_steps=4000,
                            width_limit=2.0 ** -12, metric=G, local_frame=a.local_frame)
    print("ok", res.ok, res.reason, "steps", res.steps, "cpu", round(time.process_time() - c, 2))
    h = res.history
    for k in list(range(0, len(h), max(1, len(h) // 8))) + [len(h) - 1]:
        print(f"t = {a.t0 + h[k][0]:.4f}  radius {h[k][1]:.3e}")


if __name__ == "__main__":
    main()

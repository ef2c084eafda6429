"""Certified region of attraction (certify/roa.py) against the empirical basin measured by sampling.

Instances: `testing.strategies.general_instance(d, seed, i)` (the distribution of issue 13); for
each draw, damped Newton from random PD starts (`newton_equilibria`, seeded) proposes equilibria;
each one that the Krawczyk test encloses and whose linearisation the Lyapunov-equation route proves
Hurwitz gets its certified region {W < c}, c = μ²/(4κ²η), and the certified Frobenius radius
r_cert = √(c/η) ({‖Σ − Σ*‖_F < r_cert} ⊂ {W < c}).  The empirical basin (`roa.empirical_basin`,
float DOP853 integrations, numerical evidence only): along `--directions` seeded unit directions E
(Frobenius; PSD starts only), the largest s with Σ* + sE converging back to Σ*, by bisection.
Columns: d, instance, ‖Σ*‖_F, r_cert, empirical min / median over the directions, the ratio
empirical min / r_cert (how conservative the certified region is; ≥ 1 unless the basin is cut by the
PSD cone), and the certification time.

Usage: python benchmarks/bench_roa.py [--dims 2,3,4] [--n 20] [--seed 0] [--directions 8] [--max 4]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from riccati_verify.certify.roa import empirical_basin, region_of_attraction
from riccati_verify.certify.stability import enclose_equilibrium, newton_equilibria
from riccati_verify.testing.strategies import general_instance


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dims", default="2,3,4")
    ap.add_argument("--n", type=int, default=20, help="draws per d")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--directions", type=int, default=8)
    ap.add_argument("--max", type=int, default=4, help="equilibria reported per d")
    a = ap.parse_args()
    print(f"general_instance(d, seed={a.seed}, i), i < {a.n}; {a.directions} directions per equilibrium "
          f"(basin seed {a.seed})")
    print(f"{'d':>2} {'i':>4} {'|S*|_F':>9} {'r_cert':>10} {'emp_min':>10} {'emp_med':>10} {'min/cert':>9} "
          f"{'cert_s':>7}")
    for d in (int(x) for x in a.dims.split(",")):
        shown = 0
        for i in range(a.n):
            if shown >= a.max:
                break
            p, _ = general_instance(d, a.seed, i)
            for S in newton_equilibria(p, n_random=4, seed=a.seed):
                if not np.all(np.linalg.eigvalsh((S + S.T) / 2) > -1e-9):
                    continue   # not a covariance
                t0 = time.perf_counter()
                enc = enclose_equilibrium(p, S)
                if enc is None:
                    continue
                roa = region_of_attraction(p, enc.center, enc.radius)
                dt = time.perf_counter() - t0
                if not roa.proved or roa.c is None:
                    continue
                emp = empirical_basin(p, enc.center, directions=a.directions, seed=a.seed)
                ratio = emp["min"] / roa.radius if roa.radius else float("inf")
                print(f"{d:>2} {i:>4} {float(np.linalg.norm(S)):>9.3g} {roa.radius:>10.3g} {emp['min']:>10.3g} "
                      f"{emp['median']:>10.3g} {ratio:>9.3g} {dt:>7.2f}", flush=True)
                shown += 1
                break


if __name__ == "__main__":
    main()

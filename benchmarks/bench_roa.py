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
PSD cone), and the certification time.  Two float diagnostics of where the gap comes from:
  sdp     the best μ/η over all X (cvxpy + CLARABEL: max t s.t. 0 ≺ X ⪯ I, −(LᵀX + XL) ⪰ tI)
          divided by the Lyapunov solution's μ/η = 1/λ_max(X): the gain an LMI choice of X could
          bring to r_cert = μ/(2κη) (1.00 means none);
  r_quad  the largest Frobenius ball inside the biggest sublevel set {W < c} of this X on which
          Ẇ < 0 at 4000 sampled directions (Ẇ is −t²hᵀNh + t³·2hᵀXq(h) along a ray): what an exact
          bound of the cubic term (an S-procedure) could certify with this X, at best.

Usage: python benchmarks/bench_roa.py [--dims 2,3] [--n 20] [--seed 0] [--directions 8] [--max 4]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from riccati_verify.certify import equilibria as eq
from riccati_verify.certify.roa import empirical_basin, region_of_attraction
from riccati_verify.certify.stability import enclose_equilibrium, newton_equilibria
from riccati_verify.numeric.views import float_view
from riccati_verify.testing.strategies import general_instance


def sdp_gain(L: np.ndarray, X: np.ndarray) -> float:
    """max μ/η over X (float SDP, CLARABEL) divided by the Lyapunov solution's μ/η."""
    import cvxpy as cp

    n = L.shape[0]
    Xv, t = cp.Variable((n, n), symmetric=True), cp.Variable()
    cons = [Xv >> 1e-9 * np.eye(n), Xv << np.eye(n), -(L.T @ Xv + Xv @ L) >> t * np.eye(n)]
    cp.Problem(cp.Maximize(t), cons).solve(solver=cp.CLARABEL)
    N = -(L.T @ X + X @ L)
    base = np.linalg.eigvalsh((N + N.T) / 2)[0] / np.linalg.eigvalsh(X)[-1]
    return float(t.value) / float(base)


def r_quad(p, S: np.ndarray, X: np.ndarray, L: np.ndarray, samples: int = 4000, seed: int = 0) -> float:
    """Frobenius radius of the largest {W < c} with Ẇ < 0 at the sampled rays (float diagnostic)."""
    A, B, V, _ = float_view(p)
    d = S.shape[0]
    rng = np.random.default_rng(seed)
    N = -(L.T @ X + X @ L)
    best = np.inf
    for _ in range(samples):
        u = rng.standard_normal(L.shape[0])
        u /= np.sqrt(u @ X @ u)                   # W(u) = 1
        H = np.array(eq.from_sym(list(u), d, 0.0))
        q = np.array(eq.to_sym(eq.quadratic_remainder_np(B, V, H)))
        cubic = 2 * (X @ u) @ q
        if cubic > 0:
            best = min(best, (u @ N @ u) / cubic)  # Ẇ(tu) < 0 for t < this: W < t²
    c = best ** 2
    return float(np.sqrt(c / np.linalg.eigvalsh(X)[-1]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dims", default="2,3")
    ap.add_argument("--n", type=int, default=20, help="draws per d")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--directions", type=int, default=8)
    ap.add_argument("--max", type=int, default=4, help="equilibria reported per d")
    a = ap.parse_args()
    print(f"general_instance(d, seed={a.seed}, i), i < {a.n}; {a.directions} directions per equilibrium "
          f"(basin seed {a.seed})")
    print(f"{'d':>2} {'i':>4} {'|S*|_F':>9} {'r_cert':>10} {'r_quad':>10} {'emp_min':>10} {'emp_med':>10} "
          f"{'min/cert':>9} {'sdp':>5} {'cert_s':>7} {'basin_s':>7}")
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
                t1 = time.perf_counter()
                emp = empirical_basin(p, enc.center, directions=a.directions, seed=a.seed)
                db = time.perf_counter() - t1
                ratio = emp["min"] / roa.radius if roa.radius else float("inf")
                A, B, V, _ = float_view(p)
                Sc = np.array(enc.center, dtype=float)
                L = eq.linearisation_np(A, B, V, Sc)
                X = np.array(roa.stability.X, dtype=float)
                print(f"{d:>2} {i:>4} {float(np.linalg.norm(S)):>9.3g} {roa.radius:>10.3g} "
                      f"{r_quad(p, Sc, X, L, seed=a.seed):>10.3g} {emp['min']:>10.3g} "
                      f"{emp['median']:>10.3g} {ratio:>9.3g} {sdp_gain(L, X):>5.2f} {dt:>7.2f} {db:>7.1f}", flush=True)
                shown += 1
                break


if __name__ == "__main__":
    main()

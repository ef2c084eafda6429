"""Certified region of attraction (certify/roa.py) against the empirical basin measured by sampling.

Instances: `testing.strategies.general_instance(d, seed, i)` (the distribution of issue 13); for
each draw, damped Newton from random PD starts (`newton_equilibria`, seeded) proposes equilibria;
each one that the Krawczyk test encloses and whose linearisation the Lyapunov-equation route proves
Hurwitz gets its certified region {W < c} by each of the three bounds of `roa.region_of_attraction`,
with the certified Frobenius radius r = √(c/η) ({‖Σ − Σ*‖_F < r} ⊂ {W < c}):
  r_norm  c = μ²/(4κ²η), the norm bound of the cubic term (cubic=False);
  r_cs    the exact cubic bound with S = σI (Cauchy–Schwarz, no SDP; cubic=True, lmi=False);
  r_lmi   the exact cubic bound with S from the S-procedure LMI (cvxpy + CLARABEL, bisection on ρ,
          re-checked in arb; lmi=True, n ≤ 10), or "-" above n = 10;
and the seconds of each (t_norm includes the Lyapunov-equation proof shared by all three).  The empirical basin (`roa.empirical_basin`,
float DOP853 integrations, numerical evidence only): along `--directions` seeded unit directions E
(Frobenius; PSD starts only), the largest s with Σ* + sE converging back to Σ*, by bisection.
Columns: d, instance, ‖Σ*‖_F, r_norm, r_cs, r_lmi, empirical min / median over the directions, the
ratio empirical min / max(r) (how conservative the best certified region is; ≥ 1 unless the basin is
cut by the PSD cone), the times.  Two float diagnostics of where the gap comes from:
  sdp     the best μ/η over all X (cvxpy + CLARABEL: max t s.t. 0 ≺ X ⪯ I, −(LᵀX + XL) ⪰ tI)
          divided by the Lyapunov solution's μ/η = 1/λ_max(X): the gain an LMI choice of X could
          bring to r_norm = μ/(2κη) (1.00 means none);
  r_quad  the largest Frobenius ball inside the biggest sublevel set {W < c} of this X on which
          Ẇ < 0 at 4000 sampled directions (Ẇ is −t²hᵀNh + t³·2hᵀXq(h) along a ray): what an exact
          bound of the cubic term could certify with this X, at best (r_cs, r_lmi ≤ r_quad up to
          the sampling).

Families (--family): issue = `general_instance`, opposite = `opposite_instance` (as in bench_regime.py).

Usage: python benchmarks/bench_roa.py [--dims 2,3] [--n 20] [--seed 0] [--directions 8] [--max 4] [--family issue]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from riccati_verify.certify import equilibria as eq
from riccati_verify.certify.roa import LMI_MAX_N, empirical_basin, region_of_attraction
from riccati_verify.certify.stability import enclose_equilibrium, newton_equilibria
from riccati_verify.numeric.views import float_view
from riccati_verify.testing.strategies import general_instance, opposite_instance

FAMILIES = {"issue": general_instance, "opposite": opposite_instance}


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
    ap.add_argument("--family", default="issue", choices=sorted(FAMILIES))
    a = ap.parse_args()
    family = FAMILIES[a.family]
    print(f"{family.__name__}(d, seed={a.seed}, i), i < {a.n}; {a.directions} directions per equilibrium "
          f"(basin seed {a.seed})")
    print(f"{'d':>2} {'i':>4} {'|S*|_F':>9} {'r_norm':>9} {'r_cs':>9} {'r_lmi':>9} {'r_quad':>9} {'emp_min':>9} "
          f"{'emp_med':>9} {'min/best':>8} {'sdp':>5} {'t_norm':>6} {'t_cs':>6} {'t_lmi':>6} {'basin_s':>7}")
    for d in (int(x) for x in a.dims.split(",")):
        shown = 0
        for i in range(a.n):
            if shown >= a.max:
                break
            p, _ = family(d, a.seed, i)
            for S in newton_equilibria(p, n_random=4, seed=a.seed):
                if not np.all(np.linalg.eigvalsh((S + S.T) / 2) > -1e-9):
                    continue   # not a covariance
                enc = enclose_equilibrium(p, S)
                if enc is None:
                    continue
                t0 = time.perf_counter()
                roa = region_of_attraction(p, enc.center, enc.radius, cubic=False)
                dt = time.perf_counter() - t0
                if not roa.proved or roa.c is None:
                    continue
                ls = roa.stability
                t1 = time.perf_counter()
                cs = region_of_attraction(p, enc.center, enc.radius, stability=ls, cubic=True, lmi=False)
                dcs = time.perf_counter() - t1
                n = len(ls.X)
                lmi, dl = None, None
                if n <= LMI_MAX_N:
                    t1 = time.perf_counter()
                    lmi = region_of_attraction(p, enc.center, enc.radius, stability=ls, cubic=True, lmi=True)
                    dl = time.perf_counter() - t1
                best = max(r.radius for r in (roa, cs, lmi) if r is not None)
                t1 = time.perf_counter()
                emp = empirical_basin(p, enc.center, directions=a.directions, seed=a.seed)
                db = time.perf_counter() - t1
                ratio = emp["min"] / best if best else float("inf")
                A, B, V, _ = float_view(p)
                Sc = np.array(enc.center, dtype=float)
                L = eq.linearisation_np(A, B, V, Sc)
                X = np.array(ls.X, dtype=float)
                r_lmi = f"{lmi.radius:>9.3g}" if lmi is not None else f"{'-':>9}"
                t_lmi = f"{dl:>6.2f}" if dl is not None else f"{'-':>6}"
                print(f"{d:>2} {i:>4} {float(np.linalg.norm(S)):>9.3g} {roa.radius:>9.3g} {cs.radius:>9.3g} {r_lmi} "
                      f"{r_quad(p, Sc, X, L, seed=a.seed):>9.3g} {emp['min']:>9.3g} "
                      f"{emp['median']:>9.3g} {ratio:>8.3g} {sdp_gain(L, X):>5.2f} {dt:>6.2f} {dcs:>6.2f} {t_lmi} "
                      f"{db:>7.1f}", flush=True)
                shown += 1
                break


if __name__ == "__main__":
    main()

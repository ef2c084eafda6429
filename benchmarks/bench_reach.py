"""Reachability and adjoint benchmarks.

Table 1: time to construct controls (congruence route, mpmath at
CONSTRUCT_DPS digits) and to verify them (mpmath Taylor integration at
VERIFY_DPS digits; ball-arithmetic certificate check), for d = 2, 4, 8, 16.
Machine reference: the time of one float64 d×d GEMM-equivalent workload is
meaningless next to mpmath, so the reference is an mpmath d×d matrix product
at the same precision (the construction's unit of work), measured in the same
run; the "ratio" column is construct time / that product time.

Table 2: cost of one full gradient of a terminal loss w.r.t. piecewise-constant
controls (K = 2 segments, 2(3d² + d) parameters): adjoint (one forward + one
backward solve, scipy DOP853) vs central finite differences (2 forward solves
per coordinate).  For d ≥ 8 the finite-difference time is measured on a seeded
random sample of `FD_SAMPLE` coordinates and extrapolated linearly (each
coordinate costs the same two forward solves), as printed.  Baseline: one
forward solve of eq. 1.1 (the unit both methods are made of), timed in the
same run: FD needs 2n of them, the adjoint ~1 plus one backward solve of a
system about (5d² + 3d)/(d² + d) times larger.

Table 3: minimal-energy controls (min_energy.minimal_energy, K = 4 segments,
B = V = 0): SQP iterations, solve time (float SQP + 60-digit polish + rational
rounding), the energy ratio min-energy / constructive (< 1 is the gain), the
mpmath-measured terminal error and the KKT residual.  Baselines in the same run:
the construction of the starting controls (ratio solve / construct) and one
closed-form Jacobian evaluation (the SQP's unit of work; ratio solve /
(iterations × Jacobian) is the overhead beyond the Jacobians).  Table 3b: the
optional full class (A, B, V, b; costate Jacobian, 45-digit Taylor polish) at
d = 2, its energy against the congruence-class optimum of the same run, and
the certificate check time (validated Taylor enclosure).

Table 4: minimal time under a norm bound M = 1 (min_time.min_time_bracket) on
seeded random instances: the bracket's time (eigenvalue brackets proved by exact
inertia counts, ball-arithmetic bounds, rotation + stretch construction), the
bracket ratio T_upper/T_lower for both control classes (1 would mean
"determined"), and the checker time of an `unreachable_in_time` certificate at
T = T_lower/2.  Baseline in the same run: the unbounded congruence construction
(reach.reach, verify=False) of the same pair (ratio bracket / construct).
Table 4b: the two T_upper routes on the same pairs — the explicit bounded
construction and the optimised minimax route (K = 4 equal segments, SL1QP from
the minimal-energy controls, 60-digit polish, exact sup-norm rescaling; its
time includes the 32-digit terminal-error re-integration): T_upper/T_lower of
each, their ratio (< 1: the optimiser's gain), and the optimisation time
against the construction time measured in the same run.

Usage: python benchmarks/bench_reach.py [--quick] [--seed N]
"""

from __future__ import annotations

import argparse
import sys
import time
from fractions import Fraction

import mpmath
import numpy as np

from riccati_verify.numeric import adjoint as AD
from riccati_verify.certify import min_energy as ME, min_time as MT, reach as R
from riccati_verify.checker import verify_certificate
from riccati_verify.numeric.flow import Segment, integrate_moments
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.numeric.views import float_view

__all__ = ["main"]

FD_SAMPLE = 24


def clock(fn):
    """(fn(), seconds) of one call."""
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def best_seconds(fn, repeats):
    """The fastest of `repeats` calls: the machine is shared, the minimum is the honest cost."""
    return min(clock(fn)[1] for _ in range(repeats))


def full_rank(rng, d):
    """A seeded well-conditioned full-rank Gaussian (+ I), exact from float products of 3-decimal entries."""
    X = np.round(rng.standard_normal((d, d)) / np.sqrt(d), 3)
    S = X @ X.T + np.eye(d)  # float products of exact binary numbers: symmetric, PD; taken exactly
    S = (S + S.T) / 2
    return Gaussian.from_arrays(np.round(rng.standard_normal(d), 3), S)


def open_table(seed, title: str, columns) -> np.random.Generator:
    """Print a table's title and its header of right-aligned (name, width) columns; the seeded generator."""
    print(title)
    print(" ".join(f"{name:>{width}}" for name, width in columns))
    return np.random.default_rng(seed)


def table_reach(dims, seed):
    """Table 1: construction, mpmath re-integration and ball-arithmetic check, against one mpmath matmul."""
    rng = open_table(seed, f"# construct + verify (seed {seed})",
                     [("d", 3), ("route", 12), ("construct s", 12), ("mp-verify s", 12), ("arb-check s", 12), ("terminal err", 13), ("mp matmul s", 12), ("construct/matmul", 17)])
    for d in dims:
        s0, s1 = full_rank(rng, d), full_rank(rng, d)
        res, tc = clock(lambda: R.reach(s0, s1, Fraction(1), verify=False))
        err, tv = clock(lambda: float(R.terminal_error_mp(res.segments, s0, s1)))
        ok, ta = clock(lambda: verify_certificate(R.reachability_certificate(
            res, s0, s1, Fraction(1), R.certificate_tolerance())).valid)
        with mpmath.workdps(R.CONSTRUCT_DPS):
            M = mpmath.randmatrix(d)
            tm = best_seconds(lambda: M * M, 5)
        route = "1 log" if len(res.segments) == 1 else "polar"
        print(f"{d:>3} {route:>12} {tc:12.3f} {tv:12.3f} {ta:12.3f} {err:13.2e} {tm:12.5f} {tc / tm:17.0f}"
              + ("" if ok else "  (certificate check FAILED)"), flush=True)


def random_segments(rng, d, K=2):
    """K seeded general (A, B, V, b) segments, small enough that the flow does not blow up."""
    segs = []
    for _ in range(K):
        A, B, V = (np.round(0.3 * rng.standard_normal((d, d)) / np.sqrt(d), 4) for _ in range(3))
        segs.append(Segment(Fraction(1, 4), Params.from_arrays(A, B, V, np.round(rng.standard_normal(d), 3))))
    return segs


def fd_gradient_coords(segs, s0, loss, coords, h=1e-6):
    """Central finite differences of the loss in the chosen θ coordinates: the adjoint gradient's yardstick."""
    d = s0.dim
    T = float(sum(Fraction(s.duration) for s in segs))
    theta = [list(map(np.array, float_view(s.params))) for s in segs]
    n_seg = 3 * d * d + d
    out = []
    for c in coords:
        k, j = divmod(c, n_seg)
        vals = []
        for sgn in (1, -1):
            th = [[x.copy() for x in t] for t in theta]
            blk = np.concatenate([x.ravel() for x in th[k]])
            blk[j] += sgn * h
            A, B, V, b = blk[:d * d].reshape(d, d), blk[d * d:2 * d * d].reshape(d, d), \
                blk[2 * d * d:3 * d * d].reshape(d, d), blk[3 * d * d:]
            ss = list(segs)
            ss[k] = Segment(segs[k].duration, Params.from_arrays(A, B, V, b))
            fr = integrate_moments(ss, s0, T, n_samples=2)
            vals.append(loss.value_and_grad(fr.mean, fr.cov)[0])
        out.append((vals[0] - vals[1]) / (2 * h))
    return np.array(out)


def table_adjoint(dims, seed):
    """Table 2: the costate gradient against finite differences, and its cost."""
    rng = open_table(seed, f"\n# gradient cost: adjoint vs finite differences (K = 2 segments, seed {seed})",
                     [("d", 3), ("params", 7), ("adjoint s", 10), ("FD s (full)", 12), ("FD coords", 10), ("FD/adjoint", 11), ("max rel diff", 13), ("forward s", 10), ("adjoint/forward", 16)])
    for d in dims:
        segs = random_segments(rng, d)
        s0, s1 = full_rank(rng, d), full_rank(rng, d)
        loss = AD.TerminalLoss("frobenius", s1)
        g, ta = clock(lambda: AD.adjoint_gradient(segs, s0, loss).flat())
        n = g.size
        coords = np.arange(n) if d < 8 else np.sort(rng.choice(n, size=FD_SAMPLE, replace=False))
        fd, tf = clock(lambda: fd_gradient_coords(segs, s0, loss, coords))
        tf *= n / len(coords)
        rel = float(np.max(np.abs(fd - g[coords])) / max(1e-300, np.max(np.abs(g))))
        _, tfw = clock(lambda: integrate_moments(segs, s0, 0.5, n_samples=2))
        print(f"{d:>3} {n:>7} {ta:10.3f} {tf:12.2f} {len(coords):>10} {tf / ta:11.1f} {rel:13.2e} {tfw:10.3f} {ta / tfw:16.1f}"
              + ("" if len(coords) == n else "  (FD extrapolated)"), flush=True)


def table_min_energy(dims, seed, K=4):
    """Table 3: the minimal-energy SQP (congruence class) against the construction."""
    rng = open_table(seed, f"\n# minimal-energy controls (K = {K} segments, seed {seed})",
                     [("d", 3), ("params", 7), ("iters", 6), ("solve s", 8), ("construct s", 12), ("solve/construct", 16), ("jacobian s", 11), ("solve/(it*jac)", 15), ("E ratio", 8), ("terminal err", 13), ("KKT resid", 10)])
    for d in dims:
        s0, s1 = full_rank(rng, d), full_rank(rng, d)
        start, tc = clock(lambda: R.reach(s0, s1, Fraction(1), verify=False).segments)
        k = ME.grid_segments(start, K)
        e, ts = clock(lambda: ME.minimal_energy(s0, s1, start, n_segments=k, verify_dps=None))
        err = float(R.terminal_error_mp(e.segments, s0, s1))
        taus, theta = ME.resample(e.segments, k)
        tj = best_seconds(lambda: ME.constraints_and_jacobian(theta, taus, s0, s1), 3)
        print(f"{d:>3} {theta.size:>7} {e.iterations:>6} {ts:8.2f} {tc:12.3f} {ts / tc:16.1f} {tj:11.4f} "
              f"{ts / (e.iterations * tj):15.2f} {e.energy / e.constructive_energy:8.3f} {err:13.2e} "
              f"{e.kkt_residual:10.1e}" + ("" if e.converged else "  (SQP not converged)"), flush=True)


def table_min_energy_full(dims, seed, K=2):
    """Table 3b: the full-class minimal energy and its certificate (validated Taylor route)."""
    rng = open_table(seed, f"\n# minimal-energy controls, full class (K = {K} segments, seed {seed})",
                     [("d", 3), ("params", 7), ("iters", 6), ("solve s", 8), ("congr. s", 9), ("full/congr. s", 14), ("E full/congr.", 14), ("terminal err", 13), ("KKT resid", 10), ("cert check s", 13)])
    for d in dims:
        s0, s1 = full_rank(rng, d), full_rank(rng, d)
        start = R.reach(s0, s1, Fraction(1), verify=False).segments
        k = ME.grid_segments(start, K)
        cong, tc = clock(lambda: ME.minimal_energy(s0, s1, start, n_segments=k, verify_dps=None))
        full, ts = clock(lambda: ME.minimal_energy(s0, s1, start, n_segments=k, control_class="full"))
        rr = ME.as_reach_result(full, s0, s1)
        cert = R.reachability_certificate(rr, s0, s1, Fraction(1), R.certificate_tolerance())
        ok, tv = clock(lambda: verify_certificate(cert).valid)
        print(f"{d:>3} {k * (3 * d * d + d):>7} {full.iterations:>6} {ts:8.2f} {tc:9.2f} {ts / tc:14.1f} "
              f"{full.energy / cong.energy:14.3f} {full.terminal_error:13.2e} {full.kkt_residual:10.1e} {tv:13.2f}"
              + ("" if ok else "  (certificate check FAILED)") + ("" if full.converged else "  (SQP not converged)"),
              flush=True)


def table_min_time(dims, seed, M=Fraction(1), K=MT.MINIMAX_SEGMENTS):
    """Table 4: the minimal-time bracket, its ratio T_upper/T_lower and the cost of each route."""
    rng = open_table(seed, f"\n# minimal time under |.|_2 <= {M}: certified bracket (seed {seed}; optimised route K = {K})",
                     [("d", 3), ("bracket s", 10), ("construct s", 12), ("bracket/constr", 15), ("T_lower", 10), ("T_upper", 10), ("ratio cong", 11), ("ratio full", 11), ("lower by", 13), ("cert check s", 13)])
    rows = []
    for d in dims:
        s0, s1 = full_rank(rng, d), full_rank(rng, d)
        br, tb = clock(lambda: MT.min_time_bracket(s0, s1, M, minimax_segments=K))
        full = MT.time_lower_bound(s0, s1, M, "full")
        _, tc = clock(lambda: R.reach(s0, s1, Fraction(1), verify=False))
        _, tbc = clock(lambda: MT.bounded_construction(s0, s1, M))
        rows.append((d, br, tbc))
        cert = MT.unreachable_in_time_certificate(s0, s1, br.lower.time / 2, br)
        ok, tk = clock(lambda: verify_certificate(cert).valid)
        lo, up = float(br.lower.time), float(br.upper.time)
        print(f"{d:>3} {tb:10.3f} {tc:12.3f} {tb / tc:15.2f} {lo:10.4f} {up:10.4f} {up / lo:11.3f} "
              f"{up / float(full.time):11.3f} {br.lower.criterion:>13} {tk:13.3f}"
              + ("" if ok else "  (certificate check FAILED)"), flush=True)
    print(f"\n# T_upper routes (congruence class): explicit construction vs optimised (minimax, K = {K})")
    print(f"{'d':>3} {'constr/T_lower':>15} {'optim/T_lower':>14} {'optim/constr':>13} {'route':>13} "
          f"{'construct s':>12} {'optimise s':>11} {'optim/constr s':>15} {'SL1QP it':>9} {'term err':>9}")
    for d, br, tbc in rows:
        lo, mm = float(br.lower.time), br.minimax
        up_c = float(br.construction.time)
        up_o = float(mm.upper.time) if mm.upper else float("nan")
        print(f"{d:>3} {up_c / lo:15.3f} {up_o / lo:14.3f} {up_o / up_c:13.3f} {br.upper_route:>13} {tbc:12.3f} "
              f"{mm.seconds:11.2f} {mm.seconds / tbc:15.0f} {mm.iterations:>9} "
              f"{mm.terminal_error if mm.terminal_error is not None else float('nan'):9.1e}"
              + (f"  ({mm.failure})" if mm.failure else "") + ("" if mm.converged else "  (iteration cap)"),
              flush=True)


def main(argv=None):
    """Print every table (--quick: the small dimensions only)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="d = 2, 4 only")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    print(f"seed {a.seed}; python {sys.version.split()[0]}; mpmath backend {mpmath.libmp.BACKEND}")
    table_reach((2, 4) if a.quick else (2, 4, 8, 16), a.seed)
    table_adjoint((4,) if a.quick else (4, 8, 16), a.seed)
    table_min_energy((2, 4) if a.quick else (2, 4, 8), a.seed)
    table_min_energy_full((2,), a.seed)
    table_min_time((2, 4) if a.quick else (2, 4, 8), a.seed)


if __name__ == "__main__":
    main()

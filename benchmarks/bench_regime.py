"""Decisive rate and time per instance of `classify_regime` on general parameters (issue 13).

Instances: `riccati_verify.testing.strategies.general_instance(d, seed, i)`, i = 0..N-1 (rational
A, B, V with entries k/2, k/3, k/4, |k| <= 6, b = 0, m0 = 0, Sigma0 = G G^T + I/4, exactly PD).
Each instance's fate comes from an independent float integration (`reference_fate`: scipy DOP853,
rtol 1e-12, horizon 200, 10 s of wall time).  For the instances whose integration converges (to an
equilibrium, PD or singular, or to 0), `classify_regime` runs in a child process with a wall-time
limit; an instance past the limit counts as NOT certified and is listed as a timeout.

Columns per d: converging instances, certified (and the fraction), wrong (a certified regime that
contradicts the integration: must be 0), timeouts, and the median / max wall and CPU (process) time
of the classified ones (timeouts counted at the limit).  The CPU time is the cost on an idle core;
the wall time also counts other load on the machine.

Families (--family):
  issue     `general_instance` itself (the distribution of issue 13).  At d = 4 it almost never
            converges (seed 0: none of i < 400), so its d = 4 row measures nothing.
  opposite  the same draw with V, B replaced by V' = skew(V) − (VVᵀ/d + I/4) and
            B' = skew(B) + (BBᵀ/d + I/4) (skew(M) = (M − Mᵀ)/2): symmetric parts definite with
            opposite signs, the seed theorem's equilibrium class, still general (neither scalar nor
            diagonal); most draws converge, so this family measures the rate at d = 4 and 8.

Usage: python benchmarks/bench_regime.py [--dims 2,3,4] [--n 30] [--seed 0] [--limit 60] [--family issue]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from _limits import run_with_limit
from riccati_verify.testing.strategies import general_instance, opposite_instance, reference_fate


FAMILIES = {"issue": general_instance, "opposite": opposite_instance}


def _child(family, d, seed, i, q):
    from riccati_verify.certify.stability import classify_regime

    p, s = FAMILIES[family](d, seed, i)
    t0, c0 = time.perf_counter(), time.process_time()
    r = classify_regime(p, s)
    cov = r.equilibrium["cov"] if r.equilibrium else None
    rad = r.equilibrium.get("radius") if r.equilibrium else None
    q.put((r.regime, bool(r.certified), time.perf_counter() - t0,
           None if cov is None else np.array(cov, dtype=float), None if rad is None else float(rad),
           time.process_time() - c0))


def classify_with_limit(family, d, seed, i, limit):
    """(regime, certified, wall seconds, Sigma* centre, radius, CPU seconds) or None on timeout."""
    return run_with_limit(_child, (family, d, seed, i), limit, missing=("error", False, limit, None, None, limit))


def agrees(fate, got) -> bool:
    regime, certified, _, cov, rad, _ = got
    if not certified:
        return True
    if regime == "collapse":
        return fate["fate"] == "collapse"
    if regime == "equilibrium":
        if fate["fate"] != "equilibrium" or cov is None:
            return False
        return float(np.max(np.abs(fate["limit"] - cov))) <= (rad or 0.0) + 10 * fate["error"] + 1e-9
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dims", default="2,3,4")
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=float, default=60.0)
    ap.add_argument("--family", choices=sorted(FAMILIES), default="issue")
    a = ap.parse_args()
    print(f"classify_regime on the {a.family} family (seed={a.seed}, i < {a.n}); wall limit {a.limit:g} s")
    print(f"{'d':>2} {'conv':>5} {'certified':>10} {'rate':>6} {'wrong':>6} {'timeouts':>9} {'median s':>9} "
          f"{'max s':>7} {'median cpu':>11} {'max cpu':>8}   fates of the others")
    for d in (int(x) for x in a.dims.split(",")):
        conv, cert, wrong, touts, times, cpus, other, missed = 0, 0, 0, [], [], [], {}, []
        for i in range(a.n):
            p, s = FAMILIES[a.family](d, a.seed, i)
            fate = reference_fate(p, s)
            if fate["fate"] not in ("equilibrium", "collapse"):
                other[fate["fate"]] = other.get(fate["fate"], 0) + 1
                continue
            conv += 1
            got = classify_with_limit(a.family, d, a.seed, i, a.limit)
            if got is None:
                touts.append(i)
                times.append(a.limit)
                cpus.append(a.limit)
                continue
            times.append(got[2])
            cpus.append(got[5])
            cert += got[1]
            if not got[1]:
                missed.append(i)
            wrong += not agrees(fate, got)
        rate = f"{cert / conv:.0%}" if conv else "-"
        med, mx = (f"{statistics.median(times):.2f}", f"{max(times):.2f}") if times else ("-", "-")
        cmed, cmx = (f"{statistics.median(cpus):.2f}", f"{max(cpus):.2f}") if cpus else ("-", "-")
        print(f"{d:>2} {conv:>5} {cert:>10} {rate:>6} {wrong:>6} {len(touts):>9} {med:>9} {mx:>7} {cmed:>11} "
              f"{cmx:>8}   {other}" + (f"  timeouts: {touts}" if touts else "")
              + (f"  not certified: {missed}" if missed else ""), flush=True)


if __name__ == "__main__":
    main()

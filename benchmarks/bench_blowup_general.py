"""Certified blow-up times for general V (issue 14): rate, width and digits per second.

Instances: `general_instance(d, seed, i)` (rational A, B, V with entries k/2, k/3, k/4, |k| <= 6,
Sigma0 = G G^T + I/4 exactly PD: the distribution of issue 13/14).  An instance counts as a
blow-up when the independent float integration (`reference_fate`, scipy DOP853 at rtol 1e-12)
sees an entry pass 1e8 and `reference_blowup` reads a finite-time blow-up from the time per decade
of ‖Σ‖ (fast growth in infinite time, such as general_instance(4, 0, 8), is "growth", not counted).  For each such instance `blowup_time(digits=D)` runs in a child
process with a wall-time limit; reported per d:

- blow-ups, certified (rate), contradictions (a bracket that misses the DOP853 event time by more
  than its 1e-9 relative accuracy, or an independent 60-digit Taylor estimate outside the bracket
  by more than its own error estimate: must be 0), widths below 1e-15, timeouts;
- median wall time and certified digits per second, and in the same run the non-rigorous
  Taylor / Domb-Sykes estimate at the same digits (`taylor_blowup_estimate`) and the Radon route
  on a V = vI instance of the same d (`blowup_time`): digits per second for each.

`--sign-rule N` instead tests the seed's rule "V_s and B_s definite with the same sign => blow-up"
on N random same-sign general families per d (V = G1 G1ᵀ + I/4 + K1, B = G2 G2ᵀ + I/4 + K2 with K
skew, entries k/2..k/4; random A and Σ0; seeded): how often blow-up is certified, how often the
independent integration sees a blow-up, and how often it sees something else (the rule fails).

Usage: python benchmarks/bench_blowup_general.py [--dims 2,3,4] [--n 8] [--seed 0] [--digits 30]
       [--limit 120] [--sign-rule N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from fractions import Fraction as Q

import numpy as np

from _limits import run_with_limit
from riccati_verify.testing.strategies import general_instance, reference_fate


def _child(job, q):
    kind, args = job
    from riccati_verify.certify.blowup import blowup_time
    from riccati_verify.certify.blowup.general import taylor_blowup_estimate

    t0 = time.perf_counter()
    if kind in ("general", "samesign"):
        d, seed, i, digits = args
        p, s = general_instance(d, seed, i) if kind == "general" else same_sign_instance(d, seed, i)
        r = blowup_time(p, s, digits=digits)
        # the route's own time: the cross-check below is not part of it
        out = {"rigorous": bool(r.rigorous and r.blowup), "lower": r.lower, "upper": r.upper,
               "digits": r.digits, "note": r.note[:200], "seconds": time.perf_counter() - t0}
        if out["rigorous"]:
            t1 = time.perf_counter()
            est = taylor_blowup_estimate(p, s, min(digits, 60))
            out["taylor"] = (est.value, est.error, time.perf_counter() - t1)
    elif kind == "taylor":
        d, seed, i, digits = args
        p, s = general_instance(d, seed, i)
        est = taylor_blowup_estimate(p, s, digits)
        out = {"value": est.value, "error": est.error}
    else:   # radon: V = vI with v B_s ⪰ 0 of the same d
        d, digits = args
        from riccati_verify.core.model import Gaussian, Params
        from riccati_verify.core import exact

        A = [[Q((3 * i + 5 * j) % 7 - 3, 4) for j in range(d)] for i in range(d)]
        B = [[Q(2) if i == j else Q(1, 4) for j in range(d)] for i in range(d)]
        p = Params.from_arrays(A, B, exact.identity(d, Q(1, 2)))
        r = blowup_time(p, Gaussian((Q(0),) * d, exact.identity(d)), digits=digits)
        out = {"rigorous": bool(r.rigorous and r.blowup), "digits": r.digits}
    out.setdefault("seconds", time.perf_counter() - t0)
    q.put(out)


def same_sign_instance(d, seed, i):
    """A general instance whose V_s and B_s are positive definite (exactly, by construction)."""
    from riccati_verify.core import exact
    from riccati_verify.core.model import Gaussian, Params

    rng = np.random.default_rng([seed, d, i, 14])
    q = lambda: Q(int(rng.integers(-6, 7)), int(rng.choice([2, 3, 4])))       # noqa: E731
    mat = lambda: [[q() for _ in range(d)] for _ in range(d)]                 # noqa: E731

    def pd_plus_skew():
        G, K = mat(), mat()
        S = exact.add(exact.matmul(G, exact.transpose(G)), exact.identity(d, Q(1, 4)))
        return exact.add(S, exact.sub(K, exact.transpose(K)))

    G = mat()
    cov = exact.add(exact.matmul(G, exact.transpose(G)), exact.identity(d, Q(1, 4)))
    return Params.from_arrays(mat(), pd_plus_skew(), pd_plus_skew()), Gaussian((Q(0),) * d, cov)


def sign_rule(dims, n, seed, digits, limit):
    print(f"seed rule 'V_s, B_s definite with the same sign => blow-up', {n} families per d, seed {seed}")
    print(" d  families  certified blow-up  DOP853 blow-up  DOP853 other (rule fails)  timeouts")
    for d in dims:
        cert = seen = other = timeouts = 0
        for i in range(n):
            p, s = same_sign_instance(d, seed, i)
            ref = reference_fate(p, s)
            seen += ref["fate"] == "blowup"
            other += ref["fate"] in ("equilibrium", "collapse", "other")
            r = _run(("samesign", (d, seed, i, digits)), limit)
            if r is None:
                timeouts += 1
            elif r["rigorous"]:
                cert += 1
        print(f"{d:2d}  {n:8d}  {cert:9d} ({cert / n:4.0%})  {seen:14d}  {other:25d}  {timeouts:8d}", flush=True)


def _run(job, limit):
    return run_with_limit(_child, (job,), limit)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dims", default="2,3,4")
    ap.add_argument("--n", type=int, default=8, help="instances drawn per d")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--digits", type=int, default=30)
    ap.add_argument("--limit", type=float, default=120.0, help="wall-time limit per instance (s)")
    ap.add_argument("--sign-rule", type=int, default=0, help="test the seed's sign rule on this many families per d")
    args = ap.parse_args()
    if args.sign_rule:
        sign_rule([int(x) for x in args.dims.split(",")], args.sign_rule, args.seed, args.digits, args.limit)
        return
    print(f"seed {args.seed}, digits {args.digits}, limit {args.limit:g} s per instance")
    print(" d  blowups certified  wrong  width<1e-15 timeouts  median s  digits/s   taylor digits/s  radon digits/s")
    for d in (int(x) for x in args.dims.split(",")):
        rows, times, dps, tdps = [], [], [], []
        blowups = cert = wrong = narrow = timeouts = 0
        for i in range(args.n):
            p, s = general_instance(d, args.seed, i)
            ref = reference_fate(p, s)
            if ref["fate"] != "blowup":
                continue
            blowups += 1
            r = _run(("general", (d, args.seed, i, args.digits)), args.limit)
            if r is None:
                timeouts += 1
                times.append(args.limit)
                rows.append((i, "timeout", f"over {args.limit:g} s wall"))
                continue
            times.append(r["seconds"])
            if not r["rigorous"]:
                rows.append((i, "not certified", r["note"]))
                continue
            cert += 1
            lo, hi = Q(r["lower"]), Q(r["upper"])
            # DOP853 sees an entry pass 1e8 at t_ref < T*, and T* - t_ref ~ 1e-8/λ: a loose check
            bad = not (float(lo) * (1 - 1e-6) - 1e-6 < ref["t"] <= float(hi) * (1 + 1e-9))
            v, e, ts = r["taylor"]
            if v is not None and e is not None and not (v - e <= hi and v + e >= lo):
                bad = True
            wrong += bad
            narrow += (hi - lo) < Q(1, 10 ** 15)
            dps.append(r["digits"] / r["seconds"])
            if v is not None and e is not None and e > 0 and ts > 0:
                tdig = max(0.0, -float(np.log10(float(e) / float(v))))
                tdps.append(tdig / ts)
            rows.append((i, f"[{r['lower'][:24]}, {r['upper'][:24]}]", f"{r['digits']} digits {r['seconds']:.1f} s"))
        rad = _run(("radon", (d, args.digits)), args.limit)
        rad_dps = rad["digits"] / rad["seconds"] if rad and rad["rigorous"] else float("nan")
        med = statistics.median(times) if times else float("nan")
        print(f"{d:2d}  {blowups:7d} {cert:4d} ({cert / max(blowups, 1):4.0%})  {wrong:5d}  {narrow:11d} "
              f"{timeouts:8d}  {med:8.1f}  {statistics.median(dps) if dps else float('nan'):8.2f}   "
              f"{statistics.median(tdps) if tdps else float('nan'):15.2f}  {rad_dps:14.2f}", flush=True)
        for row in rows:
            print("      ", *row)


if __name__ == "__main__":
    main()

"""Wall time of the general blow-up route on one core and on two (issue 14: 30 digits within 10 s at d <= 4).

With two CPUs the `blowup_general` checker checks the second half of its stage-1 chain in a second
process (`checker/_stage1.py`); `RICCATI_VERIFY_THREADS=1` keeps it on one core.  For each draw
`general_instance(d, 0, i)`: `blowup_time(digits=30)` and then the checker alone (`verify_certificate`
on the certificate just made), each in a fresh child interpreter, one core and two cores alternating
in the same run, wall seconds.  The machine's limit for the checker is half its one-core time (two
cores); the brackets must be identical.  With --repeat N each configuration runs N times (one core and
two alternating) and the line gives the medians, with the range of the two-core totals: run to run, the
same child varies by about ±15% on the 2-core machine.

Usage: python benchmarks/bench_stage1_cores.py [--draws 4:15,4:6,...] [--digits 30] [--limit 600] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

DRAWS = "4:15,4:6,4:5,4:7,3:4,4:1,4:9,4:10,4:12,4:13,3:0,3:11,3:12,2:9"


def _child(d: int, i: int, digits: int) -> dict:
    from riccati_verify import blowup_time
    from riccati_verify.checker import verify_certificate
    from riccati_verify.testing.strategies import general_instance

    p, s = general_instance(d, 0, i)
    t0 = time.perf_counter()
    r = blowup_time(p, s, digits=digits)
    total = time.perf_counter() - t0
    out = {"total": total, "rigorous": bool(r.rigorous), "lower": str(r.lower), "upper": str(r.upper)}
    if r.certificate is not None:
        t0 = time.perf_counter()
        ok = verify_certificate(r.certificate).valid
        out.update(checker=time.perf_counter() - t0, valid=ok)
    return out


def _run(d: int, i: int, digits: int, cores: int, limit: float) -> dict:
    env = dict(os.environ, RICCATI_VERIFY_THREADS=str(cores))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(d), str(i), str(digits)]
    try:
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout {limit:g} s"}
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode or not lines:
        return {"error": (out.stderr or out.stdout)[-300:]}
    return json.loads(lines[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", nargs=3, type=int, help=argparse.SUPPRESS)
    ap.add_argument("--draws", default=DRAWS, help="d:i,... of general_instance(d, 0, i)")
    ap.add_argument("--digits", type=int, default=30, choices=range(5, 101), metavar="5..100")
    ap.add_argument("--limit", type=float, default=600.0, help="wall seconds per child")
    ap.add_argument("--repeat", type=int, default=1, choices=range(1, 21), metavar="1..20",
                    help="runs per configuration (medians reported)")
    a = ap.parse_args()
    if a.child:
        print(json.dumps(_child(*a.child)), flush=True)
        return
    try:
        jobs = [tuple(int(v) for v in x.split(":")) for x in a.draws.split(",")]
    except ValueError:
        ap.error("--draws must look like 4:15,3:4")
    if any(len(j) != 2 or not 2 <= j[0] <= 8 or j[1] < 0 for j in jobs):
        ap.error("--draws: d in 2..8 and i >= 0")
    print(f"blowup_time(*general_instance(d, 0, i), digits={a.digits}): wall s, one core | two cores "
          f"(goal at d <= 4: 10 s); checker alone one | two (limit: half of one)")
    for d, i in jobs:
        runs = {1: [], 2: []}
        for _ in range(a.repeat):
            for c in (1, 2):
                runs[c].append(_run(d, i, a.digits, c, a.limit))
        bad = [r for rs in runs.values() for r in rs if "error" in r]
        if bad:
            print(f"({d}, 0, {i}): {bad[0]}", flush=True)
            continue
        one, two = (_median(runs[c]) for c in (1, 2))
        same = (one["lower"], one["upper"]) == (two["lower"], two["upper"])
        line = f"({d}, 0, {i}): total {one['total']:6.2f} | {two['total']:6.2f}  ({one['total'] / two['total']:.2f}x)"
        if "checker" in one and "checker" in two:
            line += (f"   checker {one['checker']:6.2f} | {two['checker']:6.2f}  ({one['checker'] / two['checker']:.2f}x, "
                     f"limit {one['checker'] / 2:.2f})  valid {one['valid']} {two['valid']}")
        if a.repeat > 1:
            tt = [r["total"] for r in runs[2]]
            line += f"   (medians of {a.repeat}; two-core totals {min(tt):.2f}..{max(tt):.2f})"
        print(line + f"   rigorous {one['rigorous']} {two['rigorous']}, brackets identical: {same}", flush=True)


def _median(rs: list[dict]) -> dict:
    """The first run's brackets and verdicts (every run must give the same: `same` is checked on them),
    with the median of each time; a run whose brackets differ from the first marks them not identical."""
    out = dict(rs[0])
    for key in ("total", "checker"):
        if all(key in r for r in rs):
            out[key] = statistics.median(r[key] for r in rs)
    if any((r["lower"], r["upper"], r.get("valid")) != (out["lower"], out["upper"], out.get("valid")) for r in rs):
        out["lower"] = "differs between runs"
    return out


if __name__ == "__main__":
    main()

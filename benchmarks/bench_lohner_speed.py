"""CPU time of the Lohner-flow-bound routes, old code against new, alternating in one run.

Issue 14: `blowup_time(*general_instance(d, 0, i), digits=30)` (goal: <= 10 s at d <= 4).
Issue 13: `classify_regime(*opposite_instance(8, 0, 0))` (goal: `check` decides within 60 s), with --d8.

Each measurement is one child process (a fresh interpreter: no warm caches) that imports the
package from the given root (PYTHONPATH), and reports CPU seconds (`time.process_time`, the child's
own) and the result: the bracket for a blow-up, the regime and certification for a regime.  The
roots alternate old, new, old, new, ... so that a change of machine load hits both alike.

Measured (2026-12-05, old = d2ae1e3, new = 27e360d, load about 3 on the 2-core machine, so both CPU
times sit ~20% above idle ones): blowup_time at 30 digits, old -> new CPU s, d = 4 draws 6, 1, 5, 9,
10, 12, 13: 13.79 -> 11.02, 6.52 -> 5.95, 11.68 -> 9.23, 7.02 -> 6.06, 6.88 -> 6.21, 8.06 -> 7.51,
9.23 -> 7.39; d = 3 draws 0, 11, 12: 4.24 -> 3.53, 3.37 -> 3.02, 4.37 -> 3.66; every bracket identical.
classify_regime(opposite_instance(8, 0, 0)) (new = 673d750, the same checker): 266.96 -> 227.53 s
(load 7.6 / 3.9), equilibrium certified by both.

Usage: python benchmarks/bench_lohner_speed.py --old /path/to/old/root [--new ROOT]
       [--draws 4:6,4:1,...] [--repeat 1] [--d8] [--no-blowup]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DRAWS = "4:6,4:1,4:5,4:9,4:10,4:12,4:13,3:0,3:11,3:12"


def _child(kind: str, d: int, i: int) -> dict:
    if kind == "blowup":
        from riccati_verify import blowup_time
        from riccati_verify.testing.strategies import general_instance

        p, s = general_instance(d, 0, i)
        t0 = time.process_time()
        r = blowup_time(p, s, digits=30)
        cpu = time.process_time() - t0
        return {"cpu": cpu, "rigorous": bool(r.rigorous), "lower": str(r.lower), "upper": str(r.upper)}
    from riccati_verify.certify.stability import classify_regime
    from riccati_verify.testing.strategies import opposite_instance

    p, s = opposite_instance(d, 0, i)
    t0 = time.process_time()
    r = classify_regime(p, s)
    cpu = time.process_time() - t0
    return {"cpu": cpu, "regime": r.regime, "certified": bool(r.certified)}


def _run(root: str, kind: str, d: int, i: int, limit: float) -> dict:
    env = dict(os.environ, PYTHONPATH=root)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", kind, str(d), str(i)]
    try:
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return {"cpu": None, "error": f"timeout {limit:g} s"}
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode or not lines:
        return {"cpu": None, "error": (out.stderr or out.stdout)[-300:]}
    return json.loads(lines[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", nargs=3)
    ap.add_argument("--old", help="root of the old code (a checkout whose riccati_verify/ is imported)")
    ap.add_argument("--new", default=str(ROOT))
    ap.add_argument("--draws", default=DRAWS, help="d:i,... of general_instance(d, 0, i)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--d8", action="store_true", help="also classify_regime(*opposite_instance(8, 0, 0))")
    ap.add_argument("--no-blowup", action="store_true")
    ap.add_argument("--limit", type=float, default=900.0, help="wall seconds per child")
    a = ap.parse_args()
    if a.child:
        kind, d, i = a.child
        print(json.dumps(_child(kind, int(d), int(i))), flush=True)
        return
    if not a.old:
        ap.error("--old is required")
    jobs = [] if a.no_blowup else [("blowup", *map(int, x.split(":"))) for x in a.draws.split(",")]
    if a.d8:
        jobs.append(("regime", 8, 0))
    print(f"old = {a.old}\nnew = {a.new}\nCPU seconds of the child (time.process_time), load at start")
    for kind, d, i in jobs:
        for _ in range(a.repeat):
            res = {}
            for tag, root in (("old", a.old), ("new", a.new)):
                load = os.getloadavg()[0]
                res[tag] = _run(root, kind, d, i, a.limit)
                cpu = res[tag]["cpu"]
                print(f"{kind} d={d} i={i} {tag}: cpu {'-' if cpu is None else f'{cpu:.2f}'} s (load {load:.1f}) "
                      f"{ {k: v for k, v in res[tag].items() if k != 'cpu'} }", flush=True)
            same = {k: v for k, v in res["old"].items() if k != "cpu"} == {k: v for k, v in res["new"].items() if k != "cpu"}
            print(f"  result identical: {same}", flush=True)


if __name__ == "__main__":
    main()

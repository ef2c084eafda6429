"""CPU seconds of `roa.trajectory_certificate` with each proposed frame (witness "frame") on
opposite_instance(d, 0, i), the region of attraction computed once by `classify_regime`'s route.

    python benchmarks/bench_trajectory_frame.py 4 9 none,schur,eig,chol,veig

One JSON line per frame kind ("none": unframed): certified, whether the accepted certificate is
framed (a failed framed attempt falls back to the unframed flows), CPU s, entry time, cond(T).
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from riccati_verify.certify import roa as R
from riccati_verify.certify.stability import classify_regime
from riccati_verify.testing.strategies import opposite_instance


def main() -> None:
    d, i = int(sys.argv[1]), int(sys.argv[2])
    kinds = (sys.argv[3] if len(sys.argv) > 3 else "none,schur").split(",")
    p, s = opposite_instance(d, 0, i)
    cap = {}
    real = R.trajectory_certificate

    def spy(params, state, center, radius=0, **kw):     # the arguments classify_regime passes
        cap.update(params=params, state=state, center=center, radius=radius, kw=kw)
        return R.TrajectoryConvergence("equilibrium", None, reason="spy")
    R.trajectory_certificate = spy
    try:
        classify_regime(p, s)
    finally:
        R.trajectory_certificate = real
    if not cap:
        print(json.dumps({"d": d, "i": i, "error": "classify_regime did not reach the trajectory route"}))
        return
    roa = R.region_of_attraction(cap["params"], cap["center"], cap["radius"])
    for k in kinds:
        kind = None if k == "none" else k
        T = R.propose_frame(p, cap["center"], kind) if kind else None
        c0 = time.process_time()
        tr = real(cap["params"], cap["state"], cap["center"], cap["radius"], region=roa, frame=kind, **cap["kw"])
        ok = tr.certificate is not None
        print(json.dumps({"d": d, "i": i, "frame": k,
                          "cond": None if T is None else round(float(np.linalg.cond(np.array(T, float))), 2),
                          "certified": ok, "framed_cert": ok and "frame" in tr.certificate["witness"],
                          "cpu_s": round(time.process_time() - c0, 1), "T": None if tr.T is None else float(tr.T),
                          "reason": tr.reason[:400]}), flush=True)


if __name__ == "__main__":
    main()

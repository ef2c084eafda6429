"""CPU seconds of `roa.trajectory_certificate` with each proposed frame (witness "frame") on
opposite_instance(d, 0, i), the region of attraction computed once by `classify_regime`'s route.

    python benchmarks/bench_trajectory_frame.py 4 9 none,schur,eig,chol,veig

One JSON line per frame kind ("none": unframed): certified, whether the accepted certificate is
framed (a failed framed attempt falls back to the unframed flows), CPU s, entry time, cond(T).

    python benchmarks/bench_trajectory_frame.py 8 0 --wrapping [--windows 0,8] [--dur 1]

The wrapping diagnosis instead (one JSON line per window, numbers only, no certificate): what makes the
checker's Lohner enclosure outgrow its width limit.  In the Schur frame: the non-normality of the
linearisation L = DF(Σ*) (‖L‖_∞ row sums, Euclidean logarithmic norm λ_max((L + Lᵀ)/2), spectral
abscissa and largest imaginary part); then, per window [t0, t0 + dur], the checker's flow
(`FRAME_FLOWS[0]`, `enclose_lohner` as `check_trajectory_convergence` runs it) from the float Σ(t0)
rounded to a point, its radius at mid-window and at the end, the growth rate ln(r_end/r_mid)/(dur/2)
per unit time, and the same for the float linearised flow Φ(t, t0) (Φ̇ = DF(Σ(t))Φ, Φ(t0) = I):
max ‖Φ(t, t0)‖₂ over the window and its rate.  A Lohner rate far above the float one is wrapping of
the QR parallelepiped, not a true expansion; the float ‖Φ‖ is what an enclosure free of wrapping
would follow (numerical evidence).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from fractions import Fraction

import numpy as np

from riccati_verify.certify import roa as R
from riccati_verify.certify.equilibria import linearisation_np
from riccati_verify.certify.stability import classify_regime
from riccati_verify.checker import check_trajectory_convergence as CT
from riccati_verify.checker._lohner import enclose_lohner
from riccati_verify.checker._validated_flow import ball_state
from riccati_verify.core.frame import moment_frame
from riccati_verify.testing.strategies import opposite_instance


def _captured(p, s) -> dict:
    """The arguments classify_regime passes to trajectory_certificate (that route spied, not run)."""
    cap = {}
    real = R.trajectory_certificate

    def spy(params, state, center, radius=0, **kw):
        cap.update(params=params, state=state, center=center, radius=radius, kw=kw)
        return R.TrajectoryConvergence("equilibrium", None, reason="spy")
    R.trajectory_certificate = spy
    try:
        classify_regime(p, s)
    finally:
        R.trajectory_certificate = real
    return cap


def _frames(p, s, cap, kinds) -> None:
    roa = R.region_of_attraction(cap["params"], cap["center"], cap["radius"])
    for k in kinds:
        kind = None if k == "none" else k
        T = R.propose_frame(p, cap["center"], kind) if kind else None
        c0 = time.process_time()
        tr = R.trajectory_certificate(cap["params"], cap["state"], cap["center"], cap["radius"], region=roa,
                                      frame=kind, **cap["kw"])
        ok = tr.certificate is not None
        print(json.dumps({"d": p.dim, "frame": k,
                          "cond": None if T is None else round(float(np.linalg.cond(np.array(T, float))), 2),
                          "certified": ok, "framed_cert": ok and "frame" in tr.certificate["witness"],
                          "cpu_s": round(time.process_time() - c0, 1), "T": None if tr.T is None else float(tr.T),
                          "reason": tr.reason[:400]}), flush=True)


def _wrapping(p, s, cap, windows, dur: Fraction) -> None:
    from scipy.integrate import solve_ivp

    d = p.dim
    Tq = R.propose_frame(p, cap["center"], "schur")
    Tinv, At, Bt, Vt, Sc = moment_frame(Tq, p.A, p.B, p.V, cap["center"])
    Af, Bf, Vf, Ti = (np.array(M, dtype=float) for M in (At, Bt, Vt, Tinv))
    L = linearisation_np(Af, Bf, Vf, np.array(Sc, dtype=float))
    ev = np.linalg.eigvals(L)
    print(json.dumps({"d": d, "n": L.shape[0], "frame": "schur", "L_inf_norm": round(float(np.abs(L).sum(1).max()), 2),
                      "L_log_norm": round(float(np.linalg.eigvalsh((L + L.T) / 2)[-1]), 3),
                      "L_abscissa": round(float(ev.real.max()), 3), "L_max_imag": round(float(abs(ev.imag).max()), 3)}),
          flush=True)
    path = R._float_path(p, np.array(s.cov, dtype=float), float(max(windows)) + float(dur) + 1)
    n = L.shape[0]

    def rhs(t, y):       # the float linearised flow Φ(t, t0) in the frame's coordinates
        S = Ti @ path.sol(t).reshape(d, d) @ Ti.T
        return (linearisation_np(Af, Bf, Vf, S) @ y.reshape(n, n)).ravel()
    flow = dict(R.FRAME_FLOWS[0])
    for t0 in windows:
        S0 = path.sol(t0).reshape(d, d)
        S0 = (S0 + S0.T) / 2
        cov = tuple(tuple(R._dyadic(float(x), 50) for x in r) for r in S0)
        _, _, _, _, cov = moment_frame(Tq, p.A, p.B, p.V, cov)
        zeros = (Fraction(0),) * d
        rads = []
        c0 = time.process_time()
        for part in (dur / 2, dur):      # two runs from the same point: the radius at mid-window and at the end
            m, S = ball_state(zeros, cov, flow["prec"])
            e = enclose_lohner(m, S, At, Bt, Vt, zeros, part, order=flow["order"], jac_order=flow["jac_order"],
                               prec=flow["prec"], tol_bits=flow["tol_bits"], max_steps=CT.MAX_STEPS,
                               covariance_only=True, high_order_box=True, width_limit=CT.WIDTH_LIMIT)
            rads.append((e.radius if e.ok else math.nan, e.steps, e.reason))
        cpu = time.process_time() - c0
        sol = solve_ivp(rhs, (t0, t0 + float(dur)), np.eye(n).ravel(), method="DOP853", rtol=1e-9, atol=1e-14,
                        dense_output=True)
        norms = [np.linalg.norm(sol.sol(t).reshape(n, n), 2) for t in np.linspace(t0, t0 + float(dur), 41)]
        half = float(dur) / 2
        print(json.dumps({"t0": t0, "dur": float(dur), "flow": flow, "steps": rads[1][1], "cpu_s": round(cpu, 1),
                          "lohner_radius_mid": rads[0][0], "lohner_radius_end": rads[1][0],
                          "lohner_rate": round(math.log(rads[1][0] / rads[0][0]) / half, 2),
                          "float_max_norm_phi": round(max(norms), 2),
                          "float_rate": round(math.log(norms[-1] / norms[20]) / half, 2),
                          "failed": rads[1][2] or None}), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("d", type=int)
    ap.add_argument("i", type=int)
    ap.add_argument("kinds", nargs="?", default="none,schur")
    ap.add_argument("--wrapping", action="store_true")
    ap.add_argument("--windows", default="0,8")
    ap.add_argument("--dur", default="1")
    a = ap.parse_args()
    p, s = opposite_instance(a.d, 0, a.i)
    cap = _captured(p, s)
    if not cap:
        print(json.dumps({"d": a.d, "i": a.i, "error": "classify_regime did not reach the trajectory route"}))
        return
    if a.wrapping:
        _wrapping(p, s, cap, [float(x) for x in a.windows.split(",")], Fraction(a.dur))
    else:
        _frames(p, s, cap, a.kinds.split(","))


if __name__ == "__main__":
    main()

"""The general blow-up route when the blow-up direction keeps turning in the invariant plane of a
complex pair of V: a `blowup_general` certificate with a turning tail (MATH.md §15, "A turning
direction at infinity"; the proof is the docstring of `checker/_turning_tail.py`).

`compactified.certify_general_blowup` hands a problem here when the float search for infinity sees
w → 0 while the direction never settles.  Planning (floats and midpoint arb, never a proof):

1. *Plane and frame.*  The complex pair of V whose real invariant plane holds the float direction
   u at the end of the search; T = [Re x, Im x, V's other real directions] (unit columns, short
   dyadic entries), so that V acts on the plane as a rotation-scaling in T's first two coordinates.
2. *Cells.*  N arcs of the phase θ ∈ (−π/2, π/2] of the rank-one state uuᵀ, u = (cos θ, sin θ, 0…),
   boundaries and centres given by rational rotation parameters t ≈ tan(θ/2).  Per cell, τ_k is the
   float time (A = 0, ⟨C, Z0⟩ = 1) for the phase of the rank-one solution from the cell's centre to
   advance by π (one turn of uuᵀ), so the image lands near the same phase, where its box is tight;
   κ_k the growth ⟨C, Z(τ_k)⟩, and the predicted bracket constants L, U of the checker.
3. *March.*  Taylor steps of the moment ODE in the frame (`general.taylor_step`, `MarchSegments`)
   until the predicted width ε1·(U − L) of the bracket is below the target.
4. *Tube.*  r_det ∝ the squared half-width of the cells, r_off and r_oo from the state at t1 with
   room to spare; ε̄ = 2ε1.  `verify_certificate` decides; on a tube failure the planner retries
   with twice the cells.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from flint import ctx

from riccati_verify.checker import verify_certificate
from riccati_verify.core import balls
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.certify.blowup.enclosure import decimal_bracket, decimal_str
from riccati_verify.certify.blowup.general import MarchSegments, taylor_step
from riccati_verify.certify.blowup.sizing import (JAC_ORDER, MAX_LOG2_NORM, MAX_MARCH_STEPS, RESCALE_LOG2, digits_for,
                                                  flow_max_steps, flow_order, flow_precision, march_order,
                                                  march_precision)
from riccati_verify.certify.certificate import make_certificate

__all__ = ["certify_turning", "turning_plane", "plan_cells"]

CELLS = (24, 48, 96)
"""The cell counts tried in turn (a tube failure of the return maps is retried with more cells)."""
TAIL_PREC = 128
TAIL_TOL_BITS = 60
TAIL_ORDER = 20
TAIL_STEPS = 30_000
DET_FACTOR = 4
"""r_det = DET_FACTOR·Δ², Δ the largest half-width of a cell in the phase: the image of a cell's box
carries a det2 of about (its phase spread)², and the box's S22 reaches about 2r_det + Δ²."""
DENOM = 2 ** 12


def _short(x: float) -> Fraction:
    return Fraction(round(x * DENOM), DENOM)


def turning_plane(V: np.ndarray, u: np.ndarray) -> list[list[Fraction]] | None:
    """The frame T: first two columns Re x, Im x of the eigenvector x of V's complex pair whose plane
    holds u best (unit columns), then V's other real directions; entries with denominators 2^12.
    None when V has no complex pair or the frame is ill-conditioned."""
    from riccati_verify.certify.blowup.compactified import _real_directions, _conjugates

    w, X = np.linalg.eig(V)
    best = None
    for j in range(len(w)):
        if w[j].imag > 1e-12:
            Qp, _ = np.linalg.qr(np.array([X[:, j].real, X[:, j].imag]).T)
            a = float(np.linalg.norm(Qp.T @ u))
            if best is None or a > best[0]:
                best = (a, j)
    if best is None:
        return None
    j = best[1]
    # scale x so that Re x and Im x are orthogonal and of equal length when possible: then V acts on
    # the plane as [[α, ω], [−ω, α]] in T's first two coordinates up to the rounding
    x = X[:, j]
    ang = 0.5 * math.atan2(-2 * float(x.real @ x.imag), float(x.real @ x.real - x.imag @ x.imag))
    x = x * complex(math.cos(ang), math.sin(ang))
    n = float(np.linalg.norm(x.real))
    cols = [x.real / n, x.imag / n]
    skip = _conjugates(w, j) | {j}
    rest = [k for k in range(len(w)) if k not in skip]
    cols += _real_directions(w[rest], X[:, rest]) if rest else []
    if len(cols) != len(V):
        return None
    T = np.array(cols).T
    if not np.all(np.isfinite(T)) or np.linalg.cond(T) > 1e4:
        return None
    return [[_short(float(v)) for v in r] for r in T]


def _param(theta: float) -> Fraction:
    """A short rational t ≈ tan(θ/2): the exact rotation by ≈ θ (`_turning_tail.rotation`)."""
    return Fraction(math.tan(theta / 2)).limit_denominator(2 ** 16)


def _return(Bt: np.ndarray, Vt: np.ndarray, theta: float) -> tuple[float, float, float]:
    """(τ, κ, direction sign) of the rank-one solution x′ = (xᵀBx)Vx (A = 0) from the unit plane vector
    at phase θ until its phase has moved by π (floats)."""
    from scipy.integrate import solve_ivp

    d = len(Bt)
    x0 = np.zeros(d)
    x0[0], x0[1] = math.cos(theta), math.sin(theta)

    def f(_, y):
        x = y[:d]
        dx = float(x @ Bt @ x) * (Vt @ x)
        return np.concatenate([dx, [(x[0] * dx[1] - x[1] * dx[0]) / (x[0] ** 2 + x[1] ** 2)]])

    ev = lambda _, y: abs(y[d]) - math.pi       # noqa: E731
    ev.terminal = True
    y0 = np.concatenate([x0, [0.0]])
    scale = 1.0 / max(1e-3, abs(float(x0 @ Bt @ x0)) * float(np.linalg.norm(Vt, 2)))
    r = solve_ivp(f, (0, 1e3 * scale), y0, method="DOP853", rtol=1e-12, atol=1e-14, events=[ev])
    if not len(r.t_events[0]):
        return math.nan, math.nan, 0.0
    y = r.y_events[0][0]
    return float(r.t_events[0][0]), float(y[0] ** 2 + y[1] ** 2), math.copysign(1.0, y[d])


def plan_cells(Bt: np.ndarray, Vt: np.ndarray, N: int):
    """(boundaries, cells [(t, τ)], L, U, Δ) for N equal arcs of the phase, or None when a return
    fails in floats (the prediction of the checker's bracket constants: L ≤ T*−t1 over ε1 ≤ U)."""
    bnd = [_param(-math.pi / 2 + math.pi * (k + 0.5) / N) for k in range(N)]
    thetas = [2 * math.atan(float(b)) for b in bnd]
    cells, vals = [], []
    for k in range(N):
        lo, hi = thetas[k], thetas[(k + 1) % N] + (math.pi if k == N - 1 else 0.0)
        t = _param((lo + hi) / 2)
        tau, kappa, _ = _return(Bt, Vt, 2 * math.atan(float(t)))
        if not (math.isfinite(tau) and kappa > 1):
            return None
        tq = Fraction(tau).limit_denominator(2 ** 20)
        cells.append((t, tq))
        vals.append(float(tq) * kappa / (kappa - 1))
    delta = max((thetas[(k + 1) % N] - thetas[k]) % math.pi for k in range(N)) / 2
    return bnd, cells, min(vals), max(vals), delta


def _to_np(S) -> np.ndarray:
    return np.array([[float(S[i, j].mid()) for j in range(S.ncols())] for i in range(S.nrows())])


def _march(pt: Params, st: Gaussian, digits: int, spread: float, progress):
    """March in the frame until ε1·spread is below the target; (segments, t1, Σ̂(t1), E, steps) or
    (None, why)."""
    K = march_order(digits)
    target = 10.0 ** -digits / 5 / 4 / 4
    with ctx.workprec(march_precision(digits)):
        Aq, Bq = balls.arb_matrix(pt.A), balls.arb_matrix(pt.B)
        S = balls.arb_matrix(st.cov)
        t, march = Fraction(0), MarchSegments(pt.V, RESCALE_LOG2)
        for step in range(MAX_MARCH_STEPS):
            S, hq = taylor_step(Aq, Bq, march.V, S, K, digits + 8)
            if not hq > 0:
                return None, "the Taylor march step underflowed"
            t += hq
            if progress is not None and step % 50 == 0:
                progress(f"march step {step}, t = {float(t):.15g}")
            c1 = S[0, 0] + S[1, 1]
            if c1 > 0:
                eps1 = float((balls.arb_of(Fraction(1, 2 ** march.E)) / c1).mid())
                if eps1 * spread <= target * min(1.0, float(t)) or -math.log2(eps1) > MAX_LOG2_NORM:
                    break
            Sr = march.rescaled(S, t)
            if Sr is not None:
                S = Sr
        else:
            return None, f"the march did not approach T* within {MAX_MARCH_STEPS} steps"
        segments = march.close(t)
        c1 = S[0, 0] + S[1, 1]
        eps1 = balls.arb_of(Fraction(1, 2 ** march.E)) / c1
        return (segments, t, _to_np(S) / float(c1.mid()), eps1, step + 1), ""


def _tube(Sn: np.ndarray, delta: float) -> tuple[Fraction, Fraction, Fraction]:
    """(r_det, r_off, r_oo): r_det from the cells' width; r_off, r_oo with room over the entry state
    (their ratios contract along the turn when the plane dominates) and a floor for the frame's
    rounding (the plane is invariant only up to 2^-12 in T's coordinates)."""
    d = len(Sn)
    r_det = Fraction(DET_FACTOR * delta * delta).limit_denominator(2 ** 30)
    off = max([math.hypot(Sn[0, i], Sn[1, i]) for i in range(2, d)] + [0.0])
    oo = max([abs(Sn[i, j]) for i in range(2, d) for j in range(2, d)] + [0.0])
    r_off = Fraction(max(16 * off, 2.0 ** -8)).limit_denominator(2 ** 30)
    r_oo = Fraction(max(16 * oo, 2.0 ** -14)).limit_denominator(2 ** 30)
    return r_det, r_off, r_oo


def certify_turning(params: Params, state: Gaussian, digits: int, u: np.ndarray, progress=None) -> dict:
    """Plan and verify a turning-tail `blowup_general` certificate (u: the float blow-up direction at the
    end of the search); the dict of `compactified.certify_general_blowup` (no rate keys: a turning
    blow-up has no limit rate)."""
    from riccati_verify.certify.blowup.compactified import framed

    V = np.array(params.V, dtype=float)
    T = turning_plane(V, u)
    if T is None:
        return {"ok": False, "reason": "no complex pair of V holds the turning direction (or its frame is "
                                       "ill-conditioned)", "no_blowup_seen": False}
    pt, st = framed(params, state, T)
    Bt, Vt = np.array(pt.B, dtype=float), np.array(pt.V, dtype=float)
    why = "no cell count tried"
    for N in CELLS:
        planned = plan_cells(Bt, Vt, N)
        if planned is None:
            return {"ok": False, "reason": "a float return map of the turning direction failed",
                    "no_blowup_seen": False}
        bnd, cells, L, U, delta = planned
        marched, why = _march(pt, st, digits, 2 * (U - L) + 1e-3 * U, progress)
        if marched is None:
            return {"ok": False, "reason": why, "no_blowup_seen": False}
        segments, t1, Sn, eps1, steps = marched
        r_det, r_off, r_oo = _tube(Sn, delta)
        e1 = float(eps1.mid())
        eps_bar = Fraction(2.0 ** math.ceil(math.log2(e1) + 1))
        tol_bits = int(math.ceil(3.33 * digits + 24))
        witness = {"precision_bits": flow_precision(tol_bits, -math.log2(e1)),
                   "flow": {"order": flow_order(tol_bits), "jac_order": JAC_ORDER, "tol_bits": tol_bits,
                            "max_steps": flow_max_steps(steps, -math.log2(e1)), "box": "high_order"},
                   "segments": segments, "frame": [list(r) for r in T],
                   "tail": {"kind": "turning", "eps_bar": eps_bar, "r_det": r_det, "r_off": r_off, "r_oo": r_oo,
                            "boundaries": bnd, "cells": [{"t": t, "tau": tau} for t, tau in cells],
                            "flow": {"order": TAIL_ORDER, "jac_order": JAC_ORDER, "tol_bits": TAIL_TOL_BITS,
                                     "max_steps": TAIL_STEPS},
                            "precision_bits": TAIL_PREC}}
        t_mid = t1 + balls.fraction_of_mid(eps1 * balls.arb_of(Fraction((L + U) / 2)))
        k = digits_for(e1 * (U - L) * 1.5 + e1 * U * 1e-3, float(t_mid), digits)
        lo, hi = decimal_bracket(t_mid, k)
        claim = {"lower": decimal_str(lo), "upper": decimal_str(hi)}
        method = (f"Lohner flow to near infinity ({len(segments)} rescaled segments), then {N} return maps of "
                  "a direction turning in the invariant plane of a complex pair of V, valid at every later scale")
        if progress is not None:
            progress(f"verifying the turning blow-up certificate ({N} cells)")
        doc = make_certificate("blowup_general", claim, params, state, witness, method)
        res = verify_certificate(doc)
        if res.valid:
            Tf = np.array([[float(x) for x in r] for r in T])
            return {"ok": True, "reason": res.reason, "claim": claim, "witness": witness, "digits": k,
                    "method": method, "certificate": doc, "turning": True,
                    "plane": [[round(float(x), 12) for x in Tf[:, c]] for c in (0, 1)]}
        why = res.reason
        if "tube" not in why:
            break
    return {"ok": False, "reason": f"the planned turning certificate was not verified: {why}",
            "no_blowup_seen": False}

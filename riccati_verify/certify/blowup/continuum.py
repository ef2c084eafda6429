"""The general blow-up route for V = vI fed as a general matrix: a `blowup_general` certificate
with a continuum tail (MATH.md §15, "A continuum at infinity"; the proof is the docstring of
`checker/_continuum_tail.py`).

For V = vI every rank-one uuᵀ is an equilibrium at infinity of the compactified flow, so the
ellipsoid planner of `compactified.py` declines (a neutral Jacobian); it hands such a problem to
`certify_continuum`, which plans in the same frame T (first column the float blow-up direction,
C = e1e1ᵀ) and keeps the document only when `verify_certificate` accepts it.  Planning (floats and
midpoint arb, never a proof):

1. *March.*  Taylor steps of the moment ODE (`general.taylor_step`) in the frame towards T*, the
   state divided by 2^30 whenever it passes 2^30 (the checker repeats this exactly), until the
   predicted bracket width w1·(λ_hi − λ_lo)/λ² is below the target.
2. *Chart at t1.*  p1 = S_{2:,1}, E1 = S_{2:,2:} − p1p1ᵀ, w1 from Σ̃(t1); p̂ = p1.  In this chart the
   transverse Jacobian at (p, 0) is −g(p)·I (MATH.md), so P = I/(2ĝ) solves its Lyapunov equation
   PM0 + M0ᵀP = −I, and any β below ĝ contracts with a margin: β = 3ĝ/5.
3. *Sizes.*  ρ² = 2·y1ᵀPy1; the drift along the continuum ≲ |y1|·Σ_i|N_ji|/β with N the p-rows
   of the Jacobian at (p̂, 0) — p′ = 2vE(B_s u)_{2:} + w((Au)_{2:} − (Au)_1 p), u = (1, p) —
   and r_p = 2·drift plus the flow's predicted radius.
4. *Claim.*  A decimal bracket around t1 + w1/ĝ, ĝ = g(p̂, 0) = 2v ûᵀB_s û, and the rate |Tû|²/ĝ.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from flint import ctx

from riccati_verify.checker import verify_certificate
from riccati_verify.core import balls, exact
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.certify.blowup.enclosure import decimal_bracket, decimal_str
from riccati_verify.certify.blowup.general import MarchSegments, taylor_step
from riccati_verify.certify.blowup.sizing import (JAC_ORDER, MAX_LOG2_NORM, MAX_MARCH_STEPS, RESCALE_LOG2, digits_for,
                                                  flow_max_steps,
                                                  flow_order, flow_precision, march_order, march_precision)
from riccati_verify.certify.certificate import make_certificate

__all__ = ["certify_continuum"]

RETRIES = 2
RETRY_BITS = 24
BETA_FRACTION = Fraction(3, 5)
"""β = (3/5)ĝ: the transverse Jacobian on Z is −g·I up to its spread over Z, so the contraction
test keeps a margin of 2ĝ/5 for that spread, while the drift (∝ 1/β) stays small."""


def _chart(S, c1, d):
    """(p1, E1) of S/c1 in the Schur chart, as floats (planning only)."""
    Sn = np.array([[float((S[i, j] / c1).mid()) for j in range(d)] for i in range(d)])
    p = Sn[1:, 0]
    return p, Sn[1:, 1:] - np.outer(p, p)


def _predict(A, Bs, v, p, E, w1):
    """Float predictions (not bounds) of the tail: (ĝ, |y1|, drift, width of T*'s bracket)."""
    u = np.concatenate([[1.0], p])
    g = 2 * v * float(u @ Bs @ u)
    q = (Bs @ u)[1:]
    Au = A @ u
    nrmN = 2 * abs(v) * float(np.sum(np.abs(q))) + np.abs(Au[1:] - Au[0] * p)
    iu = np.triu_indices(len(p))
    y = np.concatenate([E[iu], [w1]])
    ny = float(np.linalg.norm(y))
    beta = float(BETA_FRACTION) * g
    drift = ny * nrmN / beta
    # λ_hi − λ_lo over Z: g = 2v uᵀB_s u + 2w(Au)_1 on the chart (independent of E); ball
    # evaluation roughly doubles the first-order spread
    spread = 2 * (4 * abs(v) * float(np.abs(q) @ (2 * drift)) + 4 * abs(Au[0]) * math.sqrt(2) * ny)
    return g, ny, drift, w1 * spread / g ** 2


def _plan(pt: Params, st: Gaussian, digits: int, progress):
    """(witness without frame, t_mid, width, rate at p̂ in the frame's coordinates, k) or (None, why)."""
    d, v = pt.dim, float(pt.V_scalar)
    prec = march_precision(digits)
    A = np.array(pt.A, dtype=float)
    Bs = np.array(exact.sym_part(pt.B), dtype=float)
    K = march_order(digits)
    target = 10.0 ** -digits / 5 / 4
    with ctx.workprec(prec):
        Aq, Bq = balls.arb_matrix(pt.A), balls.arb_matrix(pt.B)
        S = balls.arb_matrix(st.cov)
        t, march, pred = Fraction(0), MarchSegments(pt.V, RESCALE_LOG2), None
        for step in range(MAX_MARCH_STEPS):
            S, hq = taylor_step(Aq, Bq, march.V, S, K, digits + 8)
            if not hq > 0:
                return None, "the Taylor march step underflowed"
            t += hq
            if progress is not None and step % 50 == 0:
                progress(f"march step {step}, t = {float(t):.15g}")
            c1 = S[0, 0]
            if c1 > 0:
                w1 = float((balls.arb_of(Fraction(1, 2 ** march.E)) / c1).mid())
                if w1 < 1e-3:
                    p1, E1 = _chart(S, c1, d)
                    pred = _predict(A, Bs, v, p1, E1, w1)
                    if pred[0] > 0 and pred[3] <= target * min(1.0, float(t)):
                        break
                    if -math.log2(w1) > MAX_LOG2_NORM:
                        break
            Sr = march.rescaled(S, t)
            if Sr is not None:
                S = Sr
        else:
            return None, f"the march did not approach T* within {MAX_MARCH_STEPS} steps"
        if pred is None or not pred[0] > 0:
            return None, "the march did not reach a rank-one direction with a positive rate g = 2v uᵀB_s u"
        segments = march.close(t)
        _, ny, drift, width = pred
        c1 = S[0, 0]
        w1b = balls.arb_of(Fraction(1, 2 ** march.E)) / c1
        p_hat = [balls.fraction_of_mid(S[i, 0] / c1) for i in range(1, d)]
        uq = [Fraction(1)] + p_hat
        Bsq = exact.sym_part(pt.B)
        # exact: a float ĝ would put t_mid off by w1·2^-53/ĝ, more than the bracket beyond ~30 digits
        g_exact = 2 * pt.V_scalar * sum(uq[i] * Bsq[i][j] * uq[j] for i in range(d) for j in range(d))
        g_hat = float(g_exact)
        u = np.array([float(x) for x in uq])
        t_mid = t + balls.fraction_of_mid(w1b / balls.arb_of(g_exact))
    m = d * (d - 1) // 2 + 1
    Pq = Fraction(1 / (2 * g_hat)).limit_denominator(2 ** 20)
    tol_bits = int(math.ceil(3.33 * digits + 24))
    # r_p = 2·drift leaves room for the spread of N over Z and for p1's radius from the flow (unknown
    # here: an entry failure is retried with more bits); the floor serves where the float drift is 0
    # (a direction that does not move, e.g. A = 0 and B diagonal).  Floats are exact dyadic rationals.
    r_p = [Fraction(max(float(2 * x), 2.0 ** -(tol_bits // 2))) for x in drift]
    witness = {"precision_bits": flow_precision(tol_bits, -math.log2(w1)),
               "flow": {"order": flow_order(tol_bits), "jac_order": JAC_ORDER, "tol_bits": tol_bits,
                        "max_steps": flow_max_steps(step + 1, -math.log2(w1))},
               "segments": segments,
               "tail": {"kind": "continuum", "p_centre": p_hat, "r_p": r_p,
                        "P": [[Pq if i == j else Fraction(0) for j in range(m)] for i in range(m)],
                        "rho2": Fraction(2 * ny * ny) * Pq,
                        "beta": (BETA_FRACTION * Fraction(g_hat)).limit_denominator(2 ** 20)}}
    k = digits_for(width, float(t_mid), digits)
    return (witness, t_mid, width, u, g_hat, max(drift), k), ""


def certify_continuum(params: Params, state: Gaussian, digits: int, pt: Params, st: Gaussian, T,
                      progress=None) -> dict:
    """Plan a `blowup_general` certificate with a continuum tail for V = vI (pt, st: the problem in
    the frame T, or the problem itself when T is None) and verify it; the dict of
    `compactified.certify_general_blowup`."""
    if params.V_scalar is None or params.dim < 2:
        return {"ok": False, "reason": "a continuum tail needs V = vI and d >= 2", "no_blowup_seen": False}
    planned, why = _plan(pt, st, digits, progress)
    if planned is None:
        return {"ok": False, "reason": why, "no_blowup_seen": False}
    witness, t_mid, width, u, g_hat, drift, k = planned
    if T is not None:
        witness["frame"] = [list(r) for r in T]
    Tf = np.eye(params.dim) if T is None else np.array([[float(x) for x in r] for r in T])
    Tu = Tf @ u
    rate = float(Tu @ Tu) / g_hat
    # the rate's box: p ∈ p̂ ± r_p moves |Tu|² and g to first order; a generous relative spread
    rate_rel = 8 * drift * (1 + float(np.linalg.norm(Tf, 2)) ** 2) + 1e-14
    rk = digits_for(rate_rel * rate, rate, 12)
    lo, hi = decimal_bracket(t_mid, k)
    rlo, rhi = decimal_bracket(Fraction(rate), rk)
    claim = {"lower": decimal_str(lo), "upper": decimal_str(hi),
             "rate_lower": decimal_str(rlo), "rate_upper": decimal_str(rhi)}
    method = ("Lohner flow to near infinity, then the continuum of rank-one equilibria at infinity of V = vI "
              "(transverse contraction, bounded drift along the continuum)")
    if progress is not None:
        progress("verifying the blow-up certificate (validated flow in balls)")
    for attempt in range(RETRIES + 1):
        doc = make_certificate("blowup_general", claim, params, state, witness, method)
        res = verify_certificate(doc)
        if res.valid or "enter the neighbourhood" not in res.reason or attempt == RETRIES:
            break
        # only the flow's radius at t1 decides the entry test: more bits fix exactly that
        witness["flow"]["tol_bits"] += RETRY_BITS
        witness["flow"]["order"] = max(20, min(40, witness["flow"]["tol_bits"] // 3))
        witness["precision_bits"] += RETRY_BITS
    if not res.valid:
        return {"ok": False, "reason": f"the planned continuum certificate was not verified: {res.reason}",
                "no_blowup_seen": False}
    d = params.dim
    centre = np.outer(Tu, Tu)
    nrm = math.sqrt(float(np.sum(centre ** 2)))
    return {"ok": True, "reason": res.reason, "claim": claim, "witness": witness, "digits": k,
            "method": method, "rate_digits": rk, "certificate": doc,
            "direction": [[round(float(centre[i, j]) / nrm, 12) for j in range(d)] for i in range(d)]}

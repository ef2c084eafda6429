"""The general blow-up route when the blow-up direction keeps turning in the invariant plane of a
complex pair of V: a `blowup_general` certificate with a turning tail (MATH.md §15, "A turning
direction at infinity"; the proof is the docstring of `checker/_turning_tail.py`).

`compactified.certify_general_blowup` hands a problem here when the float search for infinity sees
w → 0 while the direction never settles.  Planning (floats and midpoint arb, never a proof):

1. *Plane* (`compactified.turning_frame`, passed in).  The complex pair of V whose real invariant
   plane holds the float direction u at the end of the search; a float frame [Re x, Im x, V's
   other real directions].
2. *Phase.*  For a rank-one state at phase θ in the plane (A = 0, Σ̃11 = 1), τ(θ) is the time for
   its phase to advance by π (one turn of uuᵀ) and A(θ) = ∂(end phase)/∂θ at that fixed τ.  A fixed-
   time return is well conditioned only where |A| < 1 (elsewhere it ranges to ~30 on
   general_instance(3, 0, 4): the phase moves fast at the end of the turn, and the turn's time
   depends on where it starts); the planner takes a zero of A (bisection on a sign change), else
   the smallest |A| seen.
3. *Frame.*  T = the float frame turned by θ in the plane, entries rounded to 2^-64 (the plane's
   invariance then holds to ~1e-19 in T's coordinates, so the off-plane entries settle far below
   the box).
4. *Box.*  The float linearisation M of the normalised return map gives the shape h,
   (θ − |M|)h = 1 (`box_weights`); a diagonal power-of-two scale of the off-plane columns
   (`_balancing_scale`, witness tail.scale) makes it about equally wide in every coordinate, which
   the Lohner flow needs; H = b·h with b from a ladder.  `verify_certificate` checks the return map
   before the flow, so a box that does not map into itself fails cheaply and the next b is tried.
5. *March.*  Taylor steps of the moment ODE in T (`general.taylor_step`, `MarchSegments`, with
   MARCH_GUARD extra digits) until the predicted bracket is narrow enough, then on to a passage of
   the phase through 0 with the off-plane entries inside the box, where a bisection on the step size
   (the same Taylor polynomial) puts t1 within 1e-12 of the phase 0.
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
from riccati_verify.certify.blowup.general import (MarchSegments, _taylor_coefficients, framed, taylor_step,
                                                   taylor_sum)
from riccati_verify.certify.blowup.sizing import (JAC_ORDER, MAX_LOG2_NORM, MAX_MARCH_STEPS, RESCALE_LOG2, digits_for,
                                                  flow_max_steps, flow_order, flow_precision, march_order,
                                                  march_precision)
from riccati_verify.certify.certificate import make_certificate

__all__ = ["certify_turning", "box_weights", "phase_amplification"]

FRAME_DENOM = 2 ** 64
PHASES = 64
MAX_HALF_TURN_GROWTH = 1e6
"""A planner budget, not part of any proof: the growth of a half-turn does not depend on the phase
(on the draws tried), and the phase amplification grew with it (|A| ≥ 1.6e6 wherever the growth was
5.2e7, on the CLI tests' general example; the certified draws have 16, 56 and 1.6e5), so beyond
this the 64-phase scan (about 13 s of float half-turns) is skipped and the route declines."""
B_LADDER = (1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10)
"""The box's phase half-widths tried in turn: the box's shape (`box_weights`) makes the first-order
image fit, and a smaller box shrinks the second-order spread of the Lohner image (~b²)."""
BALANCE_ROUNDS = 4
RETRY_BITS = 40
MARCH_GUARD = 20
"""Extra digits of the planning march: at 15 digits the march's phase at t1 was 2.8e-6 off the
validated flow's on general_instance(4, 0, 7), wider than the box."""
TAIL_PREC = 256
"""Bits of the tail's flow: at 128 bits the Lohner image of the box was ~3x wider on
general_instance(3, 0, 4) than at 256 (0.4 s either way)."""
TAIL_TOL_BITS = 60
TAIL_ORDER = 20
TAIL_STEPS = 20_000
KAPPA_SPREAD = 1e-3
"""The planner's guess of the relative spread of the checker's growth interval [κlo, κhi] (measured
3e-5 to 1e-4 on general_instance(3, 0, 4), 1.3e-5 on (4, 0, 7), 4e-5 on (4, 0, 15)), which sizes how far
the march goes."""


def _short(x: float) -> Fraction:
    return Fraction(round(x * FRAME_DENOM), FRAME_DENOM)


def _homogeneous(Bt: np.ndarray, Vt: np.ndarray, Z0: np.ndarray, tau: float) -> np.ndarray:
    """Z(τ) for Ż = VZBZ + (VZBZ)ᵀ (A = 0), floats."""
    from scipy.integrate import solve_ivp

    d = len(Bt)

    def f(_, z):
        Z = z.reshape(d, d)
        Q = Vt @ Z @ Bt @ Z
        return (Q + Q.T).ravel()

    return solve_ivp(f, (0, tau), Z0.ravel(), method="DOP853", rtol=1e-12, atol=1e-15).y[:, -1].reshape(d, d)


def _phase(Z: np.ndarray) -> float:
    return 0.5 * math.atan2(2 * Z[0, 1], Z[0, 0] - Z[1, 1])


def _unit(theta: float, d: int) -> np.ndarray:
    u = np.zeros(d)
    u[0], u[1] = math.cos(theta), math.sin(theta)
    return np.outer(u, u)


def half_turn(Bt: np.ndarray, Vt: np.ndarray, theta: float) -> tuple[float, float]:
    """(τ, κ): the time for the rank-one solution x′ = (xᵀBx)Vx from the unit plane vector at phase θ
    to turn its phase by π, and its growth |x|² there (floats; nan when it does not turn)."""
    from scipy.integrate import solve_ivp

    d = len(Bt)

    def f(_, y):
        x = y[:d]
        dx = float(x @ Bt @ x) * (Vt @ x)
        return np.concatenate([dx, [(x[0] * dx[1] - x[1] * dx[0]) / (x[0] ** 2 + x[1] ** 2)]])

    ev = lambda _, y: abs(y[d]) - math.pi       # noqa: E731
    ev.terminal = True
    x0 = np.zeros(d + 1)
    x0[0], x0[1] = math.cos(theta), math.sin(theta)
    r = solve_ivp(f, (0, 1e3), x0, method="DOP853", rtol=1e-12, atol=1e-14, events=[ev])
    if not len(r.t_events[0]):
        return math.nan, math.nan
    y = r.y_events[0][0]
    return float(r.t_events[0][0]), float(y[0] ** 2 + y[1] ** 2)


def phase_amplification(Bt: np.ndarray, Vt: np.ndarray, theta: float, h: float = 1e-6) -> float:
    """A(θ): the derivative of the end phase of the half-turn from θ, at that turn's fixed time τ(θ)."""
    tau, _ = half_turn(Bt, Vt, theta)
    if not math.isfinite(tau):
        return math.nan
    d = len(Bt)
    p0 = _phase(_homogeneous(Bt, Vt, _unit(theta, d), tau))
    p1 = _phase(_homogeneous(Bt, Vt, _unit(theta + h, d), tau))
    return ((p1 - p0 + math.pi / 2) % math.pi - math.pi / 2) / h


def _best_phase(Bt: np.ndarray, Vt: np.ndarray) -> tuple[float, float]:
    """(θ, A(θ)): a zero of A by bisection on the first sign change over PHASES phases, else the
    phase with the smallest |A|."""
    ths = [-math.pi / 2 + math.pi * k / PHASES for k in range(PHASES)]
    amps = [phase_amplification(Bt, Vt, t) for t in ths]
    for k in range(PHASES):
        a0, a1 = amps[k], amps[(k + 1) % PHASES]
        if math.isfinite(a0) and math.isfinite(a1) and a0 * a1 < 0:
            lo, hi = ths[k], ths[k] + math.pi / PHASES
            for _ in range(30):
                mid = (lo + hi) / 2
                am = phase_amplification(Bt, Vt, mid)
                if am * a0 > 0:
                    lo = mid
                else:
                    hi = mid
            return (lo + hi) / 2, phase_amplification(Bt, Vt, (lo + hi) / 2)
    k = min((k for k in range(PHASES) if math.isfinite(amps[k])), key=lambda k: abs(amps[k]), default=None)
    return (math.nan, math.nan) if k is None else (ths[k], amps[k])


def _to_np(S) -> np.ndarray:
    return np.array([[float(S[i, j].mid()) for j in range(S.ncols())] for i in range(S.nrows())])


def _aligned(S) -> bool:
    return float(S[0, 0].mid()) > abs(float(S[1, 1].mid()))


def _march(pt: Params, st: Gaussian, digits: int, R: float, spread: float, tol_phase: float, inside, progress):
    """March in the frame until ε1·R·spread is below the target, then on to where the phase (S12 with
    S11 > |S22|) passes 0 with `inside`(S/S11, floats) true (the off-plane entries contract by a factor
    per turn), bisecting the last step to |S12/S11| ≤ tol_phase; (segments, t1, Σ̂(t1), ε1, steps) or
    (None, why)."""
    # the march must put t1 within the box's phase half-width of the phase 0; the fixed-time phase
    # sensitivity of a turn (up to 5e4 per half-turn on general_instance(4, 0, 7)) needs guard digits
    K = march_order(digits + MARCH_GUARD)
    target = 10.0 ** -digits / 5 / 4 / 4
    with ctx.workprec(march_precision(digits + MARCH_GUARD)):
        Aq, Bq = balls.arb_matrix(pt.A), balls.arb_matrix(pt.B)
        S = balls.arb_matrix(st.cov)
        t, march, near = Fraction(0), MarchSegments(pt.V, RESCALE_LOG2), False
        for step in range(MAX_MARCH_STEPS):
            if near and _aligned(S) and abs(float((S[0, 1] / S[0, 0]).mid())) <= tol_phase and \
                    inside(_to_np(S) / float(S[0, 0].mid())):
                break
            Sn, hq = taylor_step(Aq, Bq, march.V, S, K, digits + 8 + MARCH_GUARD)
            if not hq > 0:
                return None, "the Taylor march step underflowed"
            if near and _aligned(S) and _aligned(Sn) and float(S[0, 1].mid()) * float(Sn[0, 1].mid()) < 0:
                # the phase passes 0 within this step: bisect its size on the same Taylor polynomial
                co = _taylor_coefficients(Aq, Bq, march.V, S, K)
                lo, hi, s0 = Fraction(0), hq, float(S[0, 1].mid())
                for _ in range(200):
                    mid = (lo + hi) / 2
                    Sm = taylor_sum(co, balls.arb_of(mid))
                    if abs(float((Sm[0, 1] / Sm[0, 0]).mid())) <= tol_phase:
                        break
                    if float(Sm[0, 1].mid()) * s0 > 0:
                        lo = mid
                    else:
                        hi = mid
                Sn, hq = Sm, mid
            S, t = Sn, t + hq
            if progress is not None and step % 50 == 0:
                progress(f"march step {step}, t = {float(t):.15g}")
            if S[0, 0] > 0:
                eps1 = float((balls.arb_of(Fraction(1, 2 ** march.E)) / S[0, 0]).mid())
                near = near or eps1 * R * spread <= target * min(1.0, float(t)) or -math.log2(eps1) > MAX_LOG2_NORM
            Sr = march.rescaled(S, t)
            if Sr is not None:
                S = Sr
        else:
            return None, f"the march did not reach the phase of the tail within {MAX_MARCH_STEPS} steps"
        segments = march.close(t)
        eps1 = balls.arb_of(Fraction(1, 2 ** march.E)) / S[0, 0]
        return (segments, t, _to_np(S) / float(S[0, 0].mid()), eps1, step + 1), ""


def box_weights(Bt: np.ndarray, Vt: np.ndarray, tau: float, delta: float = 1e-6) -> np.ndarray | None:
    """Half-width weights h (a symmetric d×d array, h11 = 0) with |M|h < h entrywise, M the float
    linearisation of the normalised return map Z0 ↦ Z(τ)/Z11(τ) at e1e1ᵀ on the entries (i, j) ≠ (1, 1):
    h = (I − |M|)⁻¹·1 when |M| has spectral radius below 1, else None (no box of that shape maps
    into itself to first order).  On general_instance(3, 0, 4) M is nearly triangular with diagonal
    (0, 0.16, −0.28, −0.10, 0.06) but S12 picks up 69× an off-plane S13 (the turn's timing), so the
    phase half-width must be some 300 times the off-plane ones."""
    from riccati_verify.core.exact import sym_pairs

    d = len(Bt)
    pairs = [ij for ij in sym_pairs(d) if ij != (0, 0)]
    Z0 = _unit(0.0, d)
    for _ in range(4):
        M = np.zeros((len(pairs), len(pairs)))
        for c, (i, j) in enumerate(pairs):
            E = np.zeros((d, d))
            E[i, j] = E[j, i] = delta
            # central differences: the map's second order is large where S12 responds strongly (S22 ≈ S12²)
            Zp, Zm = _homogeneous(Bt, Vt, Z0 + E, tau), _homogeneous(Bt, Vt, Z0 - E, tau)
            dn = (Zp / Zp[0, 0] - Zm / Zm[0, 0]) / (2 * delta)
            M[:, c] = [dn[a, b] for a, b in pairs]
        # stay in the linear regime: a response of 7e4·δ in S12 (general_instance(4, 0, 7)) makes
        # S12² swamp the S22 row unless δ is small
        if not np.max(np.abs(M)) * delta > 1e-4:
            break
        delta /= 100
    Ma = np.abs(M)
    rho = max(abs(np.linalg.eigvals(Ma))) if np.all(np.isfinite(Ma)) else math.inf
    if not rho < 0.9:
        return None
    # (θ − |M|)h = 1 with θ between ρ(|M|) and 1: |M|h = θh − 1 < θh, a relative slack 1 − θ in
    # every entry for the Lohner image's extra width (the slack of (1 − |M|)h = 1 was ~1/300 on S12)
    theta = (1 + 2 * rho) / 3
    h = np.linalg.solve(theta * np.eye(len(pairs)) - Ma, np.ones(len(pairs)))
    if not np.all(h > 0):
        return None
    H = np.zeros((d, d))
    for k, (i, j) in enumerate(pairs):
        H[i, j] = H[j, i] = h[k]
    return H / H[0, 1]


def _balancing_scale(h: np.ndarray) -> list[Fraction]:
    """scale = (1, 1, 2^l_3, …): powers of two with log h_ij − l_i − l_j as even as possible (least
    squares), so that the box H/(scale_i·scale_j) of the tail's frame T·diag(scale) is about as wide in
    every coordinate (the Lohner flow's Jacobian tolerance is relative to its largest entry)."""
    d = len(h)
    if d < 3:
        return [Fraction(1)] * d
    rows, rhs = [], []
    for i in range(d):
        for j in range(i, d):
            if (i, j) != (0, 0) and h[i, j] > 0:
                r = np.zeros(d)
                r[i] += 1
                r[j] += 1
                rows.append(np.concatenate([r[2:], [1.0]]))
                rhs.append(math.log(h[i, j]))
    sol = np.linalg.lstsq(np.array(rows), np.array(rhs), rcond=None)[0]
    # the plane's two columns keep their lengths: scaling one of them would turn the phase's circle
    # into an ellipse, and the half-turn's box with it (the state passes through |S22| ≫ 1)
    return [Fraction(1)] * 2 + [Fraction(2) ** int(round(x / math.log(2))) for x in sol[:-1]]


def _box(h: np.ndarray, b: float) -> list[list[Fraction]]:
    """H = b·h (h12 = 1: b is the phase half-width), short rationals (zero stays zero)."""
    return [[Fraction(b * float(x)).limit_denominator(2 ** 62) if x else Fraction(0) for x in r] for r in h]


def _try(params, state, digits, T, marched, h, b, tau, scale, Rf, progress, extra_bits=0):
    """One certificate from the march and the box b·h, verified: (the result dict, "") or (None, the
    checker's reason)."""
    segments, t1, Sn, eps1, steps = marched
    e1 = float(eps1.mid())
    # the entry test needs Σ's relative radius at t1 below the box's smallest half-width in T's
    # coordinates (H_ij·scale_i·scale_j); a relative error δ made at t grows like (T* − t)/(T* − t1),
    # about 10^digits, so the flow carries the digits, those bits, and a margin
    hmin = min(float(H) * float(scale[i] * scale[j]) for i, r in enumerate(_box(h, b)) for j, H in enumerate(r) if H)
    tol_bits = int(math.ceil(3.33 * digits + 30 - math.log2(hmin))) + extra_bits
    witness = {"precision_bits": flow_precision(tol_bits, -math.log2(e1)),
               "flow": {"order": flow_order(tol_bits), "jac_order": JAC_ORDER, "tol_bits": tol_bits,
                        "max_steps": flow_max_steps(steps, -math.log2(e1)), "box": "high_order"},
               "segments": segments, "frame": [list(r) for r in T],
               "tail": {"kind": "turning", "eps_bar": Fraction(2) ** math.ceil(math.log2(e1) + 1),
                        "H": _box(h, b), "tau": tau, "scale": scale,
                        "flow": {"order": TAIL_ORDER, "jac_order": JAC_ORDER, "tol_bits": TAIL_TOL_BITS,
                                 "max_steps": TAIL_STEPS},
                        "precision_bits": TAIL_PREC}}
    t_mid = t1 + balls.fraction_of_mid(eps1 * balls.arb_of(Fraction(Rf)))
    width = 2 * e1 * Rf * KAPPA_SPREAD
    k = digits_for(width, float(t_mid), digits)
    lo, hi = decimal_bracket(t_mid, k)
    claim = {"lower": decimal_str(lo), "upper": decimal_str(hi)}
    method = (f"Lohner flow to near infinity ({len(segments)} rescaled segments), then a return map of a "
              "direction turning in the invariant plane of a complex pair of V, valid at every later scale")
    if progress is not None:
        progress(f"verifying the turning blow-up certificate (box half-width {b:g})")
    doc = make_certificate("blowup_general", claim, params, state, witness, method)
    res = verify_certificate(doc)
    if res.valid:
        Tq = np.array([[float(x) for x in r] for r in T])
        return {"ok": True, "reason": res.reason, "claim": claim, "witness": witness, "digits": k,
                "method": method, "certificate": doc, "turning": True,
                "plane": [[round(float(x), 12) for x in Tq[:, c]] for c in (0, 1)]}, ""
    return None, res.reason


def certify_turning(params: Params, state: Gaussian, digits: int, Tf: np.ndarray, progress=None) -> dict:
    """Plan and verify a turning-tail `blowup_general` certificate (Tf: the float frame of the turning
    plane, `compactified.turning_frame`); the dict of `compactified.certify_general_blowup`, with
    "turning": True and no rate (a turning blow-up has no limit rate)."""
    d = params.dim
    pf, _ = framed(params, state, [[_short(float(x)) for x in r] for r in Tf])
    Bf, Vf = np.array(pf.B, dtype=float), np.array(pf.V, dtype=float)
    _, kappa0 = half_turn(Bf, Vf, 0.0)
    if not kappa0 <= MAX_HALF_TURN_GROWTH:
        return {"ok": False, "reason": (f"one half-turn multiplies |x|² by {kappa0:.3g} (over {MAX_HALF_TURN_GROWTH:.0e}): "
                                        f"the planner does not try a box for so fast a spiral"), "no_blowup_seen": False}
    theta, amp = _best_phase(Bf, Vf)
    if not math.isfinite(theta):
        return {"ok": False, "reason": "the float half-turn of the direction failed", "no_blowup_seen": False}
    if not abs(amp) < 0.9:
        return {"ok": False, "reason": (f"no phase where a half-turn's fixed-time return map contracts the phase "
                                        f"(smallest |∂phase| = {abs(amp):.3g} over {PHASES} phases): a box "
                                        f"cannot map into itself"), "no_blowup_seen": False}
    R = np.eye(d)
    R[0, 0] = R[1, 1] = math.cos(theta)
    R[1, 0], R[0, 1] = math.sin(theta), -math.sin(theta)
    T = [[_short(float(x)) for x in r] for r in Tf @ R]
    pt, st = framed(params, state, T)
    Bt, Vt = np.array(pt.B, dtype=float), np.array(pt.V, dtype=float)
    tau_f, kappa = half_turn(Bt, Vt, 0.0)
    tau = Fraction(tau_f).limit_denominator(2 ** 30)
    Rf = tau_f * kappa / (kappa - 1)
    h = box_weights(Bt, Vt, tau_f)
    scale = [Fraction(1)] * d
    for _ in range(BALANCE_ROUNDS):
        if h is None:
            break
        # the box's shape moves with the scale (the couplings into S12 shrink with it): iterate
        scale = [x * y for x, y in zip(scale, _balancing_scale(h))]
        D = [[scale[i] if i == j else Fraction(0) for j in range(d)] for i in range(d)]
        ps, _ = framed(pt, st, D)
        h = box_weights(np.array(ps.B, dtype=float), np.array(ps.V, dtype=float), tau_f)
    if h is None:
        return {"ok": False, "reason": "the float linearisation of the return map does not contract: no box of "
                                       "the turning tail maps into itself", "no_blowup_seen": False}
    lam = np.array([float(x) for x in scale])

    def inside_for(b):
        Hf = np.array([[float(x) for x in r] for r in _box(h, b)])
        return lambda Sn: bool(np.all(np.abs(Sn) / np.outer(lam, lam) <= Hf / 4 + (Hf == 0)))

    marched, b_marched, why = None, None, "no box tried"
    for b in B_LADDER:
        for _ in range(2):
            if marched is None:
                marched, why = _march(pt, st, digits, Rf, KAPPA_SPREAD, min(B_LADDER) / 100, inside_for(b),
                                      progress)
                if marched is None:
                    return {"ok": False, "reason": why, "no_blowup_seen": False}
                b_marched = b
            out, why = _try(params, state, digits, T, marched, h, b, tau, scale, Rf, progress)
            if out is None and "enter the box" in why and b == b_marched:
                # the flow's radius at t1 (predicted by a rule, not measured) was too wide: more bits
                out, why = _try(params, state, digits, T, marched, h, b, tau, scale, Rf, progress, RETRY_BITS)
            if out is not None:
                return out
            if "enter the box" in why and b != b_marched:
                # the box that maps into itself is smaller than the one the march aimed at: march on to it
                marched = None
                continue
            break
        if "return map" not in why:
            break
    return {"ok": False, "reason": f"the planned turning certificate was not verified: {why}",
            "no_blowup_seen": False}

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
   depends on where it starts); the planner takes a zero of A (Brent in the first sign change over
   PHASES phases), else the smallest |A| seen.  All phases and their neighbours θ + h are integrated
   in one solve, in the phase advance rather than t (`_turns`, `_amplifications`).
3. *Frame.*  T = the float frame turned by θ in the plane, entries rounded to 2^-64 (the plane's
   invariance then holds to ~1e-19 in T's coordinates, so the off-plane entries settle far below
   the box).
4. *Box.*  The float linearisation M of the normalised return map (`return_jacobian`, the
   variational equation) gives the shape h, (θ − |M|)h = 1 (`box_weights`); a diagonal power-of-two
   scale of the off-plane columns (`_balancing_scale`, witness tail.scale) makes it about equally
   wide in every coordinate, which the Lohner flow needs; H = b·h with b from a ladder.
   `verify_certificate` checks the return map before the flow, so a box that does not map into
   itself fails cheaply and the next b is tried.
5. *March.*  Taylor steps of the moment ODE in T (`general.taylor_step` fitted to the series' tail at
   `sizing.turning_march_order`, `MarchSegments`, with
   MARCH_GUARD extra digits at the start and fewer as T* nears, `march_digits`) until the predicted
   bracket is narrow enough, then on to a passage of
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
from riccati_verify.certify.blowup.general import (MarchSegments, framed, taylor_step,
                                                   taylor_sum)
from riccati_verify.certify.blowup.sizing import (FLOW_BOX, JAC_ORDER, MAX_LOG2_NORM, MAX_MARCH_STEPS, RESCALE_LOG2, digits_for,
                                                  flow_max_steps, flow_order, flow_precision, flow_tolerance,
                                                  march_precision, turning_march_order, with_segment_tolerances)
from riccati_verify.certify.certificate import make_certificate

__all__ = ["certify_turning", "box_weights", "return_jacobian", "phase_amplification", "half_turn"]

FRAME_DENOM = 2 ** 64
PHASES = 64
MAX_HALF_TURN_GROWTH = 1e6
"""A planner budget, not part of any proof: the growth of a half-turn does not depend on the phase
(on the draws tried), and the phase amplification grew with it (|A| ≥ 1.6e6 wherever the growth was
5.2e7, on the CLI tests' general example; the certified draws have 16, 56 and 1.6e5), so beyond
this the 64-phase scan is skipped and the route declines (the scan took about 13 s of float
half-turns there before it was batched into one solve; the decline is kept as a budget)."""
B_LADDER = (1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10)
"""The box's phase half-widths tried in turn: the box's shape (`box_weights`) makes the first-order
image fit, and a smaller box shrinks the second-order spread of the Lohner image (~b²)."""
BALANCE_ROUNDS = 4
RETRY_BITS = 40
MARCH_GUARD = 10
"""Extra digits of the planning march, which must place t1 within the box's phase half-width: at 15
digits with no guard the march's phase at t1 was 2.8e-6 off the validated flow's on
general_instance(4, 0, 7), wider than the box (the march's relative error grows like T*/(T* − t1) up
to t1, 10^24.5 there).  With 10 the march's S12/S11 at t1 agreed with the checker's to 2e-13 or
better on the three turning draws at 15, 20 and 30 digits; 20 took 6.1, 3.7, 8.0 s CPU against 4.5,
2.7, 6.0 s for (3, 0, 4), (4, 0, 7), (4, 0, 15) at 30 digits.  A step at t carries log10(T*/(T* − t))
fewer (`march_digits`)."""
MARCH_FLOOR = 20
"""The fewest digits a march step carries (`march_digits`): the phase at t1 must still come out within
the box (b ≥ 1e-10) and the bisection's 1e-12 of the phase 0 after a few hundred steps' errors, some of
them amplified by the turn's phase sensitivity (up to 5e4).  A margin, not a measured need: at 30
digits the floor held the last 92 of 434 steps on general_instance(4, 0, 15) and 165 of 606 on (3, 0,
4) with `sizing.march_order` (session 19), and a floor of 15 or 12 saved no measurable time there."""
REMAINING_PER_STEP = 100
"""A bound on (T* − t)/h for the march's step h (a quarter of the coefficients' radius, halved when the
series converges slowly): the radius is the distance to the nearest complex singularity, which a
turning blow-up puts at 0.24 to 0.96 of T* − t (h/(T* − t) was 0.058 to 0.24 on general_instance(4,
0, 15), with `sizing.march_order`)."""
TAIL_PREC = 256
"""Bits of the tail's flow: at 128 bits the Lohner image of the box was ~3x wider on
general_instance(3, 0, 4) than at 256 (0.4 s either way)."""
TAIL_TOL_BITS = 60
TAIL_ORDER = 20
TAIL_STEPS = 20_000
KAPPA_SPREAD = 1e-3
"""The planner's guess of the relative spread s = (κhi − κlo)/κ of the checker's growth interval
(measured 3e-5 to 1e-4 on general_instance(3, 0, 4), 1.3e-5 on (4, 0, 7), 4e-5 on (4, 0, 15): a
safety factor of 10 or more).  The bracket [ε1τκhi/(κhi − 1), ε1τκlo/(κlo − 1)] of T* − t1 is
ε1·Rf·s/(κ − 1) wide, Rf = τκ/(κ − 1) (`_bracket_spread`), which sizes how far the march goes."""


def _short(x: float) -> Fraction:
    return Fraction(round(x * FRAME_DENOM), FRAME_DENOM)


def _turns(Bt: np.ndarray, Vt: np.ndarray, thetas, span: float):
    """The rank-one solutions x′ = (xᵀBx)Vx from the unit plane vectors at the phases θ_k, integrated
    together (one DOP853 solve, dense output) with the phase advance ψ ∈ [0, span] as the common
    independent variable: φ_k = θ_k + σψ, σ the turning sense, and t_k(ψ) as a last component.
    In ψ the field is bounded and smooth (x grows by √κ per half-turn, the phase speed drops out),
    while in t the phase races at the end of each turn; and every phase reaches ψ = π at once, so no
    event per phase is needed.  (solution, σ), or (None, 0) when the phase does not turn monotonically
    in the plane (then a state with xᵀBx = 0 or a real eigen-direction of V stops it)."""
    from scipy.integrate import solve_ivp

    d, n = len(Bt), len(thetas)
    phi = np.linspace(0, math.pi, 4097)
    u0, u1 = np.cos(phi), np.sin(phi)
    c = ((Bt[0, 0] * u0 + (Bt[0, 1] + Bt[1, 0]) * u1) * u0 + Bt[1, 1] * u1 * u1) * \
        (u0 * (Vt[1, 0] * u0 + Vt[1, 1] * u1) - u1 * (Vt[0, 0] * u0 + Vt[0, 1] * u1))
    if not (np.all(c > 0) or np.all(c < 0)):
        return None, 0
    sigma = 1.0 if c[0] > 0 else -1.0

    def f(_, y):
        Y = y.reshape(n, d + 1)
        X = Y[:, :d]
        VX = X @ Vt.T
        xbx = np.einsum("ij,jk,ik->i", X, Bt, X)
        p2 = X[:, 0] ** 2 + X[:, 1] ** 2
        cr = X[:, 0] * VX[:, 1] - X[:, 1] * VX[:, 0]
        out = np.empty_like(Y)
        out[:, :d] = (sigma * p2 / cr)[:, None] * VX
        out[:, d] = sigma * p2 / (xbx * cr)
        return out.ravel()

    y0 = np.zeros((n, d + 1))
    y0[:, 0], y0[:, 1] = np.cos(thetas), np.sin(thetas)
    # the error norm is an RMS over all the stacked components: a tighter rtol than one solve's 1e-12
    # keeps each trajectory's local error below what a solve of its own allowed
    sol = solve_ivp(f, (0, span), y0.ravel(), method="DOP853", rtol=1e-12 / math.sqrt(n), atol=1e-15,
                    dense_output=True)
    return (sol.sol if sol.success else None), sigma


SPAN_EXTRA = 0.5
"""How far past the half-turn (in phase) the neighbouring solutions of `_amplifications` are followed:
their phase at the fixed time τ(θ) differs from θ + h + σπ by about (A − 1)h, so |A| up to ~5e5 is
seen (beyond, the old mod-π difference had wrapped anyway)."""
AMP_STEP = 1e-6
PHASE_XTOL = 1e-9
"""How closely `_best_phase` locates the zero of A.  The forward difference's own noise, the solve's
error ~1e-12 over AMP_STEP, is 1e-8 to 3e-5 on the turning draws, where A's slope is 49, 5.6e4 and 100
per radian (general_instance(3, 0, 4), (4, 0, 7), (4, 0, 15)): below ~1e-9 Brent bisects noise (at
1e-13 it took 20-22 solves, of which ~10 there).  At 1e-9, |A| ≲ 1e-4 at the phase taken, far inside
the |A| < 0.9 the box needs."""


def _amplifications(Bt: np.ndarray, Vt: np.ndarray, thetas,
                   h: float = AMP_STEP) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A, τ, κ) at each phase θ_k: the half-turn's time τ and growth κ = |x|² (`half_turn`), and A(θ)
    = (end phase from θ + h at the time τ(θ) − end phase from θ)/h, a forward difference of the end phase
    of the fixed-time return (the planner's choice of θ has always been a zero of this difference; the
    certified turning draws proved sensitive to the planner).  The solutions from θ_k and θ_k + h are
    integrated together in one solve (`_turns`), so their integration errors are correlated and
    cancel in the difference; the end phase from θ + h is θ + h + σψ* where its own t(ψ*) = τ(θ)
    (a root on the dense output).  nan where the phase does not turn or ψ* is out of reach."""
    from scipy.optimize import brentq

    thetas = np.atleast_1d(np.asarray(thetas, dtype=float))
    n, d = len(thetas), len(Bt)
    nan = np.full(n, math.nan)
    sol, sigma = _turns(Bt, Vt, np.concatenate([thetas, thetas + h]), math.pi + SPAN_EXTRA)
    if sol is None:
        return nan, nan, nan
    end = sol(math.pi).reshape(2 * n, d + 1)
    tau, kappa = end[:n, d], end[:n, 0] ** 2 + end[:n, 1] ** 2
    amps = nan.copy()
    lo, hi = math.pi - SPAN_EXTRA, math.pi + SPAN_EXTRA
    t_lo, t_hi = sol(lo).reshape(2 * n, d + 1)[n:, d], sol(hi).reshape(2 * n, d + 1)[n:, d]
    for k in range(n):
        if not (math.isfinite(tau[k]) and t_lo[k] < tau[k] < t_hi[k]):
            continue
        idx = (n + k) * (d + 1) + d
        psi = brentq(lambda x: sol(x)[idx] - tau[k], lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps)
        amps[k] = ((h + sigma * (psi - math.pi) + math.pi / 2) % math.pi - math.pi / 2) / h
    return amps, tau, kappa


def half_turn(Bt: np.ndarray, Vt: np.ndarray, theta: float) -> tuple[float, float]:
    """(τ, κ): the time for the rank-one solution x′ = (xᵀBx)Vx from the unit plane vector at phase θ
    to turn its phase by π, and its growth |x|² there (floats; nan when it does not turn)."""
    sol, _ = _turns(Bt, Vt, [theta], math.pi)
    if sol is None:
        return math.nan, math.nan
    y = sol(math.pi)
    return float(y[-1]), float(y[0] ** 2 + y[1] ** 2)


def phase_amplification(Bt: np.ndarray, Vt: np.ndarray, theta: float, h: float = AMP_STEP) -> float:
    """A(θ): the derivative of the end phase of the half-turn from θ, at that turn's fixed time τ(θ)
    (the forward difference of `_amplifications`)."""
    return float(_amplifications(Bt, Vt, [theta], h)[0][0])


def _best_phase(Bt: np.ndarray, Vt: np.ndarray) -> tuple[float, float]:
    """(θ, A(θ)): a zero of A (Brent) in the first sign change over PHASES phases (one batched solve),
    else the phase with the smallest |A|."""
    from scipy.optimize import brentq

    ths = [-math.pi / 2 + math.pi * k / PHASES for k in range(PHASES)]
    amps = _amplifications(Bt, Vt, ths)[0]
    for k in range(PHASES):
        a0, a1 = amps[k], amps[(k + 1) % PHASES]
        if math.isfinite(a0) and math.isfinite(a1) and a0 * a1 < 0:
            lo, hi = ths[k], ths[k] + math.pi / PHASES
            f = lambda t: phase_amplification(Bt, Vt, t)      # noqa: E731
            if not f(lo) * f(hi) < 0:
                continue
            theta = brentq(f, lo, hi, xtol=PHASE_XTOL)
            return theta, f(theta)
    k = min((k for k in range(PHASES) if math.isfinite(amps[k])), key=lambda k: abs(amps[k]), default=None)
    return (math.nan, math.nan) if k is None else (ths[k], float(amps[k]))


def _to_np(S) -> np.ndarray:
    return np.array([[float(S[i, j].mid()) for j in range(S.ncols())] for i in range(S.nrows())])


def _aligned(S) -> bool:
    return float(S[0, 0].mid()) > abs(float(S[1, 1].mid()))


def march_digits(full: int, t: float, h: float) -> int:
    """The digits of the march step from t after a step h (before the first step h = 0: `full`).  A
    relative error δ made at t moves T* by about δ(T* − t) (MATH.md §15, "How many bits the flow
    needs") and so the phase at t1 by about δ(T* − t)/(T* − t1) times the phase's speed: a step at t
    needs log10(T*/(T* − t)) fewer digits than one at 0, which `full` (the digits asked and
    MARCH_GUARD) serves.  T*/(T* − t) ≥ 1 + t/(REMAINING_PER_STEP·h); at least MARCH_FLOOR digits (a
    heuristic of the planner: the checker re-verifies everything)."""
    if not h > 0:
        return full
    gain = math.log10(1 + t / (REMAINING_PER_STEP * h))
    return max(min(full, MARCH_FLOOR), full - int(gain))


def _march(pt: Params, st: Gaussian, digits: int, R: float, spread: float, tol_phase: float, inside, progress,
           eps_cap: float = math.inf):
    """March in the frame until ε1·R·spread (the predicted bracket's width) is below the target and
    ε1 ≤ eps_cap (`_eps_cap`: the tail's ball A must not push the return map out of its box), then
    on to where the phase (S12 with S11 > |S22|) passes 0 with `inside`(S/S11, floats) true (the
    off-plane entries contract by a factor per turn), bisecting the last step to |S12/S11| ≤ tol_phase;
    (segments, t1, Σ̂(t1), ε1, steps) or (None, why)."""
    # the march must put t1 within the box's phase half-width of the phase 0; the fixed-time phase
    # sensitivity of a turn (up to 5e4 per half-turn on general_instance(4, 0, 7)) needs guard digits,
    # the early steps most (`march_digits`)
    target = 10.0 ** -digits / 5 / 4 / 4
    with ctx.workprec(march_precision(digits + MARCH_GUARD)):
        Aq, Bq = balls.arb_matrix(pt.A), balls.arb_matrix(pt.B)
        S = balls.arb_matrix(st.cov)
        t, march, near, h_full = Fraction(0), MarchSegments(pt.V, RESCALE_LOG2), False, Fraction(0)
        for step in range(MAX_MARCH_STEPS):
            if near and _aligned(S) and abs(float((S[0, 1] / S[0, 0]).mid())) <= tol_phase and \
                    inside(_to_np(S) / float(S[0, 0].mid())):
                break
            # the taper reads the step the series allowed, not a step the bisection below cut short
            D = march_digits(digits + MARCH_GUARD, float(t), float(h_full))
            K = turning_march_order(D)
            with ctx.workprec(march_precision(D)):
                Sn, hq, co = taylor_step(Aq, Bq, march.V, S, K, D + 8, coefficients=True, fit=True)
            h_full = hq
            if not hq > 0:
                return None, "the Taylor march step underflowed"
            if near and _aligned(S) and _aligned(Sn) and float(S[0, 1].mid()) * float(Sn[0, 1].mid()) < 0:
                # the phase passes 0 within this step: bisect its size on the same Taylor polynomial
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
                near = near or (eps1 * R * spread <= target * min(1.0, float(t)) and eps1 <= eps_cap) \
                    or -math.log2(eps1) > MAX_LOG2_NORM
            Sr = march.rescaled(S, t)
            if Sr is not None:
                S = Sr
        else:
            return None, f"the march did not reach the phase of the tail within {MAX_MARCH_STEPS} steps"
        segments = march.close(t)
        eps1 = balls.arb_of(Fraction(1, 2 ** march.E)) / S[0, 0]
        return (segments, t, _to_np(S) / float(S[0, 0].mid()), eps1, step + 1), ""


EPS_BOX_FACTOR = 64
"""`_eps_cap`'s safety factor: the tail's flow runs with A in the ball [0, ε̄]·Ã (ε̄ ≤ 4ε1), which moves the
normalised image by about 2ε̄‖Ã‖τ times the map's sensitivity, and the box's slack over its linearised image
is about its phase half-width b (`_weights`).  Without a cap, a request for few digits stopped the march
shallow: at 7 digits on d = 2, A = I/2, B = diag(1, 4), V = I/2 + 2J (tests/data/make_certificates.py), ε̄ was
about 2e-5 and the return map left every box of the ladder (not certified, 17.8 s), while 10 digits
(ε̄ = 3.7e-9) were certified in 3 s."""


def _eps_cap(At: np.ndarray, tau: float, b: float) -> float:
    """The largest ε1 the march may stop at for the phase half-width b: 4ε1 (≥ ε̄) times 2‖Ã‖_∞τ stays
    EPS_BOX_FACTOR times below b (a planner's heuristic; the checker proves the box)."""
    a = float(np.max(np.sum(np.abs(At), axis=1))) if At.size else 0.0
    return math.inf if not a > 0 else b / (EPS_BOX_FACTOR * 8 * a * tau)


def return_jacobian(Bt: np.ndarray, Vt: np.ndarray, tau: float) -> tuple[list[tuple[int, int]], np.ndarray]:
    """(pairs, M): the float linearisation M of the normalised return map Z0 ↦ Z(τ)/Z11(τ) of
    Ż = VZBZ + (VZBZ)ᵀ (A = 0) at Z0 = e1e1ᵀ, on the entries `pairs` = (i, j) ≠ (1, 1), i ≤ j.  The
    variational equation δŻ = VδZBZ + VZBδZ + (…)ᵀ is integrated with Z, every direction in the same
    solve: exact to the integration's tolerance, where central differences of separate solves had
    to keep δ in the map's linear regime (δ = 1e-10 on general_instance(4, 0, 7), whose S12 responds
    7e4-fold) and so lost digits to the solves' own errors."""
    from scipy.integrate import solve_ivp

    from riccati_verify.core.exact import sym_pairs

    d = len(Bt)
    pairs = [ij for ij in sym_pairs(d) if ij != (0, 0)]
    m = len(pairs)
    y0 = np.zeros((m + 1, d, d))
    y0[0, 0, 0] = 1.0
    for c, (i, j) in enumerate(pairs):
        y0[c + 1, i, j] = y0[c + 1, j, i] = 1.0

    def f(_, y):
        Y = y.reshape(m + 1, d, d)
        Z, dZ = Y[0], Y[1:]
        Q = Vt @ Z @ Bt @ Z
        W = Vt @ dZ @ (Bt @ Z) + (Vt @ Z @ Bt) @ dZ
        out = np.empty_like(Y)
        out[0] = Q + Q.T
        out[1:] = W + W.transpose(0, 2, 1)
        return out.ravel()

    # the error norm is an RMS over the m + 1 stacked matrices: rtol / √(m + 1) keeps each one's local
    # error within what a solve of its own at rtol 1e-12 allowed
    r = solve_ivp(f, (0, tau), y0.ravel(), method="DOP853", rtol=1e-12 / math.sqrt(m + 1), atol=1e-15)
    Y = r.y[:, -1].reshape(m + 1, d, d)
    Z, dZ = Y[0], Y[1:]
    dN = dZ / Z[0, 0] - Z[None] * (dZ[:, 0, 0] / Z[0, 0] ** 2)[:, None, None]
    M = np.array([[dN[c, a, b] for c in range(m)] for a, b in pairs])
    return pairs, M


def _weights(pairs: list[tuple[int, int]], M: np.ndarray, d: int, scale=None) -> np.ndarray | None:
    """`box_weights` from the linearisation M of `return_jacobian` (frame T), in the frame T·diag(scale):
    there S̃_ij = S_ij/(scale_i·scale_j), so M̃ = D′⁻¹MD′ with D′ = diag(scale_i·scale_j) over the pairs
    (scale_1 = 1 leaves Z11 alone), exactly the linearisation a solve in that frame would give."""
    if scale is not None:
        w = np.array([float(scale[i]) * float(scale[j]) for i, j in pairs])
        M = M * w[None, :] / w[:, None]
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


def box_weights(Bt: np.ndarray, Vt: np.ndarray, tau: float) -> np.ndarray | None:
    """Half-width weights h (a symmetric d×d array, h11 = 0, h12 = 1) with |M|h < h entrywise, M the
    float linearisation of the normalised return map Z0 ↦ Z(τ)/Z11(τ) at e1e1ᵀ on the entries
    (i, j) ≠ (1, 1) (`return_jacobian`): (θ − |M|)h = 1 when |M| has spectral radius below 0.9, else
    None (no box of that shape maps into itself to first order).  On general_instance(3, 0, 4) M is
    nearly triangular with diagonal (0, 0.16, −0.28, −0.10, 0.06) but S12 picks up 69× an off-plane
    S13 (the turn's timing), so the phase half-width must be some 300 times the off-plane ones."""
    pairs, M = return_jacobian(Bt, Vt, tau)
    return _weights(pairs, M, len(Bt))


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


def _bracket_spread(kappa: float) -> float:
    """The predicted bracket's width per unit ε1·Rf: KAPPA_SPREAD/(κ − 1), the derivative of κ/(κ − 1)
    times the spread κ·KAPPA_SPREAD (leaving out the 1/(κ − 1) had marched on to ε1 = 6e-32 on
    general_instance(4, 0, 7) at 30 digits, where κ = 1.6e5 lets ε1 be 1e5 times larger)."""
    return KAPPA_SPREAD / (kappa - 1)


def _try(params, state, digits, T, marched, h, b, tau, scale, Rf, spread, progress, extra_bits=0):
    """One certificate from the march and the box b·h, verified: (the result dict, "") or (None, the
    checker's reason)."""
    segments, t1, Sn, eps1, steps = marched
    e1 = float(eps1.mid())
    # the entry test needs Σ's relative radius at t1 below the box's smallest half-width in T's
    # coordinates (H_ij·scale_i·scale_j); a relative error δ made at t grows like (T* − t)/(T* − t1)
    # ≤ T*/(ε1·Rf), so the flow carries those bits, the box's and `sizing.flow_tolerance`'s 12-bit
    # margin (at least the digits asked and 12 bits, so that the error in T* stays below the claim's
    # width).  With 12, at 30 digits, the checker's enclosure at t1 still had 13.9 (general_instance(3,
    # 0, 4)), 16.7 ((4, 0, 15)) and 28.8 ((4, 0, 7)) bits of room in the box's tightest entry: the growth
    # T*/(ε1·Rf) bounds how a relative error made at t = 0 grows, and most of the error is made later
    # (the rule was 3.33·digits + 30 bits before: at 30 digits 4 to 19 bits more growth, 18 more margin)
    hmin = min(float(H) * float(scale[i] * scale[j]) for i, r in enumerate(_box(h, b)) for j, H in enumerate(r) if H)
    t_mid = t1 + balls.fraction_of_mid(eps1 * balls.arb_of(Fraction(Rf)))
    growth_bits = math.log2(float(t_mid) / (e1 * Rf))
    tol_bits = flow_tolerance(digits, growth_bits - math.log2(hmin)) + extra_bits
    # a later segment, from t_k, needs the growth (T* − t_k)/(T* − t1) only, and its error moves T* by
    # δ·(T* − t_k): its own, lower tolerance (`sizing.segment_tolerance`; MATH.md §15)
    segments = with_segment_tolerances(segments, tol_bits, digits, t_mid,
                                       lambda k, t_k: float(t_mid - t_k) / (e1 * Rf) * len(segments) / hmin,
                                       extra_bits)
    witness = {"precision_bits": flow_precision(tol_bits, -math.log2(e1)),
               "flow": {"order": flow_order(tol_bits), "jac_order": JAC_ORDER, "tol_bits": tol_bits,
                        "max_steps": flow_max_steps(steps, -math.log2(e1)), "box": FLOW_BOX},
               "segments": segments, "frame": [list(r) for r in T],
               "tail": {"kind": "turning", "eps_bar": Fraction(2) ** math.ceil(math.log2(e1) + 1),
                        "H": _box(h, b), "tau": tau, "scale": scale,
                        "flow": {"order": TAIL_ORDER, "jac_order": JAC_ORDER, "tol_bits": TAIL_TOL_BITS,
                                 "max_steps": TAIL_STEPS},
                        "precision_bits": TAIL_PREC}}
    width = 2 * e1 * Rf * spread
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
    Rf, spread = tau_f * kappa / (kappa - 1), _bracket_spread(kappa)
    # the box's shape moves with the scale (the couplings into S12 shrink with it): iterate, on the one
    # linearisation, transformed to each frame T·diag(scale)
    pairs, M = return_jacobian(Bt, Vt, tau_f)
    h = _weights(pairs, M, d)
    scale = [Fraction(1)] * d
    for _ in range(BALANCE_ROUNDS):
        if h is None:
            break
        scale = [x * y for x, y in zip(scale, _balancing_scale(h))]
        h = _weights(pairs, M, d, scale)
    if h is None:
        return {"ok": False, "reason": "the float linearisation of the return map does not contract: no box of "
                                       "the turning tail maps into itself", "no_blowup_seen": False}
    lam = np.array([float(x) for x in scale])

    def inside_for(b):
        Hf = np.array([[float(x) for x in r] for r in _box(h, b)])
        return lambda Sn: bool(np.all(np.abs(Sn) / np.outer(lam, lam) <= Hf / 4 + (Hf == 0)))

    marched, b_marched, why = None, None, "no box tried"
    At = np.array(pt.A, dtype=float)
    for b in B_LADDER:
        if marched is not None and float(marched[3].mid()) > _eps_cap(At, tau_f, b):
            # a smaller box tolerates less of the tail's ball A: the last march stopped too shallow for it
            marched = None
        for _ in range(2):
            if marched is None:
                marched, why = _march(pt, st, digits, Rf, spread, min(B_LADDER) / 100, inside_for(b),
                                      progress, _eps_cap(At, tau_f, b))
                if marched is None:
                    return {"ok": False, "reason": why, "no_blowup_seen": False}
                b_marched = b
            out, why = _try(params, state, digits, T, marched, h, b, tau, scale, Rf, spread, progress)
            if out is None and "enter the box" in why and b == b_marched:
                # the flow's radius at t1 (predicted by a rule, not measured) was too wide: more bits
                out, why = _try(params, state, digits, T, marched, h, b, tau, scale, Rf, spread, progress, RETRY_BITS)
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

"""Certified blow-up times for general V: a flow to near infinity and a Lyapunov neighbourhood of
the equilibrium at infinity (MATH.md §15; Matsue & Takayasu, Numer. Math. 2020, arXiv 1707.05936).

The producer plans a `blowup_general` certificate (checker: `checker/check_blowup_general.py`,
whose docstring is the proof) and keeps it only when `verify_certificate` accepts it:

1. *Locate infinity (floats).*  Integrate the Poincaré-compactified flow (S = Σ/‖Σ‖_F,
   w = 1/‖Σ‖_F, ds = dt/w) with DOP853 until w is negligible; the end point gives the blow-up
   direction S* (an equilibrium at infinity: Q(S*) = λS*), λ = ⟨S*, Q(S*)⟩ > 0 and T* to ~13
   digits.  No blow-up seen: the route declines (None).
2. *The equilibrium at infinity, to many digits.*  Fix C = S* (rounded) and solve
   Q(S) − ⟨C, Q(S)⟩S = 0 by Newton's method with the float Jacobian and arb residuals.
3. *Lyapunov matrix.*  P solves M0ᵀP + PM0 = −I for the float Jacobian M0 of the
   compactified field at (Ŝ, 0) (scipy); β = 1/(4 λ_max(P)).  A non-Hurwitz M0 (a neutral or
   repelling equilibrium at infinity) declines the route, except for an exactly scalar V, whose
   continuum of rank-one directions `continuum.py` certifies instead.
4. *March (high-precision midpoints, not a proof).*  Taylor steps of the moment ODE towards T*
   until the predicted bracket width w1·(λ_hi − λ_lo)/λ² is small enough; the state is divided
   by 2^30 whenever it passes 2^30 (the checker repeats this exactly), which fixes the segments.
5. *Certificate.*  ρ² covers the predicted entry point with a safety factor; the claim is a
   decimal bracket around the predicted T*; `verify_certificate` re-runs everything in balls.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from flint import arb, arb_mat, ctx

from riccati_verify.checker import verify_certificate
from riccati_verify.core import balls, exact
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.certify.blowup.enclosure import decimal_bracket, decimal_str
from riccati_verify.certify.blowup.general import MarchSegments, framed, taylor_step
from riccati_verify.certify.blowup.sizing import (FLOW_BOX, JAC_ORDER, MAX_LOG2_NORM, MAX_MARCH_STEPS, RESCALE_LOG2, digits_for,
                                                  flow_max_steps,
                                                  flow_order, flow_precision, flow_tolerance, march_order,
                                                  march_precision, with_segment_tolerances)
from riccati_verify.certify.certificate import make_certificate
from riccati_verify.numeric.eigen import conjugates, real_directions
from riccati_verify.numeric.views import float_view

__all__ = ["CompactifiedPlan", "locate_infinity", "certify_general_blowup"]

MAX_DIM = 8


def _sym2(X):
    return X + X.T


def locate_infinity(A, B, V, S0, s_max: float = 120.0) -> dict | None:
    """Float evidence (never a proof): integrate the Poincaré-compactified flow with DOP853.

    Returns {"T": estimated T*, "S": unit-Frobenius blow-up direction, "lam": λ} when w = 1/‖Σ‖_F
    falls below 1e-30 with the direction settled, else None (`search_infinity` says why)."""
    return search_infinity(A, B, V, S0, s_max)[0]


SLOW_S_MAX = 3000.0
"""`search_infinity` goes on past s_max, up to this s, while w keeps falling by e per chunk of s = 10
(a slow blow-up, g ≈ 0.1-0.3 at infinity, needs s ≈ 200-700 to reach w = 1e-30) or while Σ is far
out (a direction lingering near a saddle at infinity)."""

SEARCH_RTOL = 1e-13
"""DOP853's rtol in `search_infinity`.  It only plans, but it must keep w = 1/‖Σ‖ positive down to
1e-30 and below: at 1e-10 the search took 0.60 s instead of 1.15 on general_instance(4, 0, 15), with the
same certified brackets on the 14 draws of `benchmarks/bench_stage1_cores.py` at 15 digits (and two
at 30) but one: on (3, 0, 12) w came out negative (-2e-41) and the route declined at once; 1e-12 and
1e-11 still found its equilibrium at infinity.  Two decades of margin are not worth 0.3-0.5 s."""

SEEN_SHRINKING = "shrinking"
"""`search_infinity`'s outcome when Σ shrinks (w grows): no blow-up is in sight."""
SEEN_FAR = "far"
"""Its outcome when Σ is still far out at s = SLOW_S_MAX but w has not reached 1e-30: w decays
slower than exponentially (g → 0 at infinity, e.g. w ~ 1/s on general_instance(4, 0, 8)), so
t = ∫ w ds may grow without bound — growth in infinite time, or a blow-up too slow to see."""
SEEN_UNSETTLED = "unsettled"
"""Its outcome when w → 0 (a blow-up) but the direction S(s) never settles at an equilibrium at
infinity (it keeps moving, e.g. a rank-one direction turning with a complex pair of V: MATH.md §15)."""


EARLY_W = 1e-20
EARLY_RESIDUAL = 1e-3
EARLY_CHUNKS = 2
"""`search_infinity(early_unsettled=True)`: w below EARLY_W (20 decades into the blow-up) with
‖Q(S) − λS‖ > EARLY_RESIDUAL·|λ| (no equilibrium at infinity near) at EARLY_CHUNKS consecutive chunk
ends reads as a turning direction (a planner shortcut, no proof element).  At 1e-40 the search
took 1.47 / 1.44 / 0.41 s on general_instance(4, 0, 15) / (3, 0, 4) / (4, 0, 7), at 1e-20 0.68 /
0.82 / 0.31 s, with identical certified brackets on the 14 draws of
`benchmarks/bench_stage1_cores.py` at 15 and 30 digits (session 17).  A direction that settles
after all is not lost: the caller searches again without the shortcut when the turning route
declines."""


SEEN_BOUNDED = "bounded"
"""Its outcome when w neither tends to 0 nor grows large within s_max (e.g. an equilibrium)."""
SEEN_FAILED = "failed"
"""Its outcome when the float integration broke down."""


def search_infinity(A, B, V, S0, s_max: float = 120.0, last: dict | None = None,
                    early_unsettled: bool = False) -> tuple[dict | None, str]:
    """`locate_infinity` with the reason: (found, "") or (None, outcome), the outcome one of
    SEEN_SHRINKING, SEEN_UNSETTLED, SEEN_FAR, SEEN_BOUNDED or SEEN_FAILED.  `last`, when given, receives
    the float end point ("S" unit Frobenius, "w", "t"): for SEEN_UNSETTLED the turning direction and,
    with w below 1e-280, T* to float accuracy.  early_unsettled: answer SEEN_UNSETTLED as soon as w is
    below `EARLY_W` with the direction far from every equilibrium at infinity at `EARLY_CHUNKS`
    consecutive chunk ends (a turning direction; `last["early"]` is then True), instead of following
    the turns down to w = 1e-280 (3.7 s of DOP853 on general_instance(4, 0, 7)); a caller whose
    turning route fails searches again without it, so a direction that settles late is not lost."""
    from scipy.integrate import solve_ivp

    d = S0.shape[0]

    def f(_, y):
        S = y[:d * d].reshape(d, d)
        w = y[d * d]
        Q, L = _sym2(V @ S @ B @ S), _sym2(A @ S)
        q, l = float(np.sum(S * Q)), float(np.sum(S * L))
        return np.concatenate([(Q - q * S + w * (L - l * S)).ravel(), [-w * (q + w * l), w]])

    n0 = float(np.linalg.norm(S0))
    if not n0 > 0:
        return None, SEEN_FAILED
    tiny = lambda s, y: y[d * d] - 1e-280        # noqa: E731 - near the end of the float range
    tiny.terminal = True
    # Σ shrinking (w growing) is not a blow-up in progress, and w ≫ 1 makes the linear term w·L
    # stiff for an explicit method (a collapse took DOP853 minutes before w reached 1e8)
    w_away = 1e4 * max(1.0, 1 / n0)
    away = lambda s, y: y[d * d] - w_away         # noqa: E731
    away.terminal = True
    y, s0 = np.concatenate([(S0 / n0).ravel(), [1 / n0, 0.0]]), 0.0
    # the direction may linger near a saddle at infinity before it settles: go on in chunks of s
    # until w is negligible and the direction is an equilibrium at infinity
    steady = False      # w fell by more than e over the last chunk: a slow blow-up still under way
    far = 0             # consecutive chunk ends with w < EARLY_W and the direction far from equilibrium
    while s0 < s_max or (steady and s0 < SLOW_S_MAX):
        w_before = float(y[d * d])
        with np.errstate(all="ignore"):
            atol = np.full(d * d + 2, 1e-16)
            atol[d * d] = 1e-16 * float(y[d * d]) + 1e-300       # w is only known relatively
            r = solve_ivp(f, (s0, s0 + 10.0), y, method="DOP853", rtol=SEARCH_RTOL, atol=atol,
                          first_step=1e-4, events=[tiny, away])
        y, s0 = r.y[:, -1], float(r.t[-1])
        if len(r.t_events[1]):
            return None, SEEN_SHRINKING
        if not np.all(np.isfinite(y)) or r.status < 0:
            return None, SEEN_FAILED
        S, w, t = y[:d * d].reshape(d, d), y[d * d], y[d * d + 1]
        if last is not None:
            last.update(S=S / np.linalg.norm(S), w=float(w), t=float(t))
        Q = _sym2(V @ S @ B @ S)
        lam = float(np.sum(S * Q))
        if w < 1e-30 and lam > 0 and np.linalg.norm(Q - lam * S) < 1e-8 * lam:
            return {"T": float(t + w / lam), "S": S / np.linalg.norm(S), "lam": lam}, ""
        if len(r.t_events[0]):
            return None, SEEN_UNSETTLED
        far = far + 1 if w < EARLY_W and np.linalg.norm(Q - lam * S) > EARLY_RESIDUAL * abs(lam) else 0
        if early_unsettled and far >= EARLY_CHUNKS:
            if last is not None:
                last["early"] = True
            return None, SEEN_UNSETTLED
        # go on while w still falls steadily, or while Σ is far out (‖Σ‖ > 10³‖Σ0‖): the direction
        # may linger near a saddle at infinity, w even growing slowly there, before it moves on
        # (general_instance(4, 0, 8): w ≈ 1e-5 for s ∈ [10, 120], then down to 1e-8 by s = 150)
        steady = w < w_before / math.e or w < 1e-3 / n0
    if y[d * d] < 1e-30:
        return None, SEEN_UNSETTLED
    return None, SEEN_FAR if y[d * d] < 1e-3 / n0 else SEEN_BOUNDED


_SEARCH_REASONS = {
    SEEN_SHRINKING: "the compactified float flow moves away from infinity (Σ shrinks): no blow-up in sight",
    SEEN_UNSETTLED: ("the float flow blows up, but its direction Σ/‖Σ‖ never settles at an equilibrium at "
                     "infinity (it keeps turning, as a rank-one direction does under a complex pair of V's "
                     "eigenvalues): no attracting equilibrium to build the neighbourhood on"),
    SEEN_FAR: ("Σ grows, but w = 1/‖Σ‖ falls slower than exponentially in the compactified time (the "
               "rate g tends to 0 at infinity): growth without a finite-time blow-up, or one too slow to see"),
    SEEN_BOUNDED: "no blow-up was seen in the compactified float flow (Σ stays bounded)",
    SEEN_FAILED: "the compactified float integration broke down",
}


class _Field:
    """The directional compactification (w = 1/⟨C, Σ⟩, S = wΣ) in floats and at high precision."""

    def __init__(self, params: Params, C: list[list[Fraction]]):
        self.A, self.B, self.V, _ = (np.array(x, dtype=float) for x in float_view(params))
        self.Aq, self.Bq, self.Vq, self.Cq = (balls.arb_matrix(M) for M in (params.A, params.B, params.V, C))
        self.C = np.array([[float(x) for x in r] for r in C])
        self.d = len(C)
        self.pairs = exact.sym_pairs(self.d)
        self.n = len(self.pairs) + 1

    def vec(self, X) -> np.ndarray:
        return np.array([X[i, j] for i, j in self.pairs])

    def inner(self, X: arb_mat) -> arb:
        """⟨C, X⟩ at the working precision."""
        return sum((self.Cq[i, j] * X[i, j] for i in range(self.d) for j in range(self.d)), arb(0))

    def quadratic(self, S: arb_mat) -> arb_mat:
        """Q(S) = VSBS + (VSBS)ᵀ at the working precision."""
        QS = self.Vq * S * self.Bq * S
        return QS + QS.transpose()

    def residual(self, S: arb_mat) -> arb_mat:
        """Q(S) − ⟨C, Q(S)⟩S at the working precision (the S part of the field at w = 0)."""
        QS = self.quadratic(S)
        return QS - S * self.inner(QS)

    def jacobian0(self, S: np.ndarray, w: float = 0.0) -> np.ndarray:
        """The Jacobian of the compactified field at (S, w), in the coordinates (S_ij, i ≤ j; w)."""
        A, B, V, C = self.A, self.B, self.V, self.C
        Q, L = _sym2(V @ S @ B @ S), _sym2(A @ S)
        cq, cl = float(np.sum(C * Q)), float(np.sum(C * L))
        J = np.zeros((self.n, self.n))
        for c, (i, j) in enumerate(self.pairs):
            E = np.zeros((self.d, self.d))
            E[i, j] = E[j, i] = 1.0
            dQ, dL = _sym2(V @ E @ B @ S + V @ S @ B @ E), _sym2(A @ E)
            cdq, cdl = float(np.sum(C * dQ)), float(np.sum(C * dL))
            J[:-1, c] = self.vec(dQ - cdq * S - cq * E + w * (dL - cdl * S - cl * E))
            J[-1, c] = -w * cdq - w * w * cdl
        J[:-1, -1] = self.vec(L - cl * S)
        J[-1, -1] = -cq - 2 * w * cl
        return J

    def contraction_radius(self, S: np.ndarray, r: np.ndarray, P: np.ndarray) -> float:
        """A float prediction (not a bound) of ‖rad(−(PM + MᵀP))‖₂ over the box ẑ ± r as the checker
        evaluates it in balls (it underestimates that by a factor ~3.5 on d = 4 draws: the caller keeps a
        margin): the Jacobian's entrywise spread to first order, Σ_k |∂J/∂z_k| r_k,
        through the absolute product |P|·spread (what ball matrix products give)."""
        J0 = self.jacobian0(S)
        spread = np.zeros_like(J0)
        for k, (i, j) in enumerate(self.pairs):
            Sk = S.copy()
            Sk[i, j] += r[k]
            if i != j:
                Sk[j, i] += r[k]
            spread += np.abs(self.jacobian0(Sk) - J0)
        spread += np.abs(self.jacobian0(S, float(r[-1])) - J0)
        R = np.abs(P) @ spread
        return float(np.linalg.norm(R + R.T, 2))

    def rate_gradient(self, S: np.ndarray) -> np.ndarray:
        """∇g at (S, 0), g = ⟨C, Q(S)⟩ + w⟨C, L(S)⟩ (the exponential rate of w)."""
        A, B, V, C = self.A, self.B, self.V, self.C
        out = np.zeros(self.n)
        for c, (i, j) in enumerate(self.pairs):
            E = np.zeros((self.d, self.d))
            E[i, j] = E[j, i] = 1.0
            out[c] = np.sum(C * _sym2(V @ E @ B @ S + V @ S @ B @ E))
        out[-1] = np.sum(C * _sym2(A @ S))
        return out


def _to_np(M: arb_mat) -> np.ndarray:
    return np.array([[float(M[i, j].mid()) for j in range(M.ncols())] for i in range(M.nrows())])


def _newton(F: _Field, S0: np.ndarray, prec: int) -> arb_mat | None:
    """Ŝ with Q(Ŝ) = ⟨C, Q(Ŝ)⟩Ŝ to about 2^-(prec-30): the float Jacobian at the current iterate
    (quadratic convergence down to float accuracy, then a factor ~1e-16 per step) and arb residuals."""
    S = balls.arb_matrix([[Fraction(float(x)) for x in r] for r in S0])
    for _ in range(prec // 40 + 12):
        r = F.vec(_to_np(F.residual(S)))
        if not np.all(np.isfinite(r)):
            return None
        if np.max(np.abs(r)) < 2.0 ** -(prec - 30):
            return S
        try:
            step = np.linalg.solve(F.jacobian0(_to_np(S))[:-1, :-1], r)
        except np.linalg.LinAlgError:
            return None
        for k, (i, j) in enumerate(F.pairs):
            S[i, j] = (S[i, j] - balls.arb_of(Fraction(float(step[k])))).mid()
            S[j, i] = S[i, j]
    return None


def _expm(M: np.ndarray) -> np.ndarray:
    """exp(M) by scaling and squaring with an order-8 Taylor polynomial: ample for a prediction,
    and ~10x cheaper than scipy's Padé on these small matrices."""
    s = max(0, int(math.ceil(math.log2(max(float(np.max(np.sum(np.abs(M), axis=1))), 1e-300)))) + 1)
    X = M / 2.0 ** s
    E = T = np.eye(len(M))
    for k in range(1, 9):
        T = T @ X / k
        E = E + T
    for _ in range(s):
        E = E @ E
    return E


class _ErrorGrowth:
    """A float prediction (never a bound) of how the checker's flow radius grows: the linearised
    flow along the march, Φ_j ≈ exp(h_j (J(S_j) + J(S_{j+1}))/2) with J the moment field's Jacobian,
    carries a remainder of 2^-tol·max(1, ‖Σ_j‖) made at step j to t1."""

    def __init__(self, F: "_Field"):
        self.A, self.B, self.V, self.pairs = F.A, F.B, F.V, F.pairs
        self.ops = []        # ("step", Φ_j, max(1, ‖Σ_j‖)) or ("scale", factor), in time order

    def _jac(self, S: np.ndarray, kappa: float) -> np.ndarray:
        V = kappa * self.V
        cols = []
        for i, j in self.pairs:
            E = np.zeros_like(S)
            E[i, j] = E[j, i] = 1.0
            dF = _sym2(self.A @ E) + _sym2(V @ E @ self.B @ S + V @ S @ self.B @ E)
            cols.append([dF[a, b] for a, b in self.pairs])
        return np.array(cols).T

    def step(self, S0: np.ndarray, S1: np.ndarray, h: float, kappa: float) -> None:
        J = (self._jac(S0, kappa) + self._jac(S1, kappa)) / 2
        # the flow's step is capped near 1/‖Df‖_∞ (absolute values): about h‖J‖_∞ steps per march step
        m = max(1.0, h * float(np.max(np.sum(np.abs(J), axis=1))))
        self.ops.append(("step", _expm(h * J), m * max(1.0, float(np.max(np.abs(S0))))))

    def rescale(self, factor: float) -> None:
        self.ops.append(("scale", factor))

    def radius_per_tol_by_segment(self) -> list[float]:
        """Σ_j ‖Φ(t1 ← t_j)‖_∞ max(1, ‖Σ_j‖), the predicted final radius in units of 2^-tol, split by the
        checker's segments (each rescaling starts one): segment k's share from its own steps."""
        G = np.eye(len(self.pairs))
        shares = [0.0]
        for op in reversed(self.ops):
            if op[0] == "scale":
                G = G * op[1]
                shares.append(0.0)
            else:
                shares[-1] += float(np.max(np.sum(np.abs(G), axis=1))) * op[2]
                G = G @ op[1]
        return shares[::-1]


_NOT_ATTRACTING = ("the equilibrium at infinity is not attracting in floats (max Re λ = {:.3g}): a neutral "
                   "direction (for V = vI a continuum of rank-one directions) needs a centre-manifold argument")


class CompactifiedPlan:
    """Everything the producer decided: the witness and its predicted bracket (floats, not proved)."""

    def __init__(self, witness: dict, t_mid: Fraction, width: float, rate: float, rate_rel: float,
                 segments: int, steps: int):
        self.witness, self.t_mid, self.width, self.rate, self.rate_rel = witness, t_mid, width, rate, rate_rel
        self.segments, self.steps = segments, steps


def plan(params: Params, state: Gaussian, digits: int, loc: dict, progress=None, frame=None
         ) -> tuple[CompactifiedPlan | None, str]:
    """Plan a `blowup_general` witness for `digits` digits from the float search's `loc`
    (`search_infinity`); (None, why) when the route declines.  With a `frame` T, params and
    state are already in its coordinates (`framed`); the witness records T and the rate is
    that of Σ = TΣ̃Tᵀ."""
    d = params.dim
    prec = march_precision(digits)
    C = [[Fraction(float(x)).limit_denominator(2 ** 40) for x in r] for r in loc["S"]]
    C = [[(C[i][j] + C[j][i]) / 2 for j in range(d)] for i in range(d)]
    with ctx.workprec(prec):
        F = _Field(params, C)      # its arb matrices at the working precision (k/3 is not a dyadic)
        Sg = loc["S"] / float(np.sum(F.C * loc["S"]))
        ev = np.linalg.eigvals(F.jacobian0(Sg))
        if not np.max(ev.real) < -1e-6 * max(1.0, float(np.max(np.abs(ev)))):
            return None, _NOT_ATTRACTING.format(np.max(ev.real))
        Sh = _newton(F, Sg, prec)
        if Sh is None:
            return None, "Newton's method for the equilibrium at infinity did not converge"
        S_hat = _to_np(Sh)
        M0 = F.jacobian0(S_hat)
        ev = np.linalg.eigvals(M0)
        if not np.max(ev.real) < -1e-9 * max(1.0, float(np.max(np.abs(ev)))):
            return None, _NOT_ATTRACTING.format(np.max(ev.real))
        from scipy.linalg import solve_continuous_lyapunov

        Pf = solve_continuous_lyapunov(M0.T, -np.eye(F.n))
        Pf = (Pf + Pf.T) / 2
        lmax = float(np.max(np.linalg.eigvalsh(Pf)))
        if not np.min(np.linalg.eigvalsh(Pf)) > 0:
            return None, "the Lyapunov matrix is not positive definite in floats"
        P = [[Fraction(float(Pf[i, j])) for j in range(F.n)] for i in range(F.n)]
        beta = Fraction(1 / (4 * lmax)).limit_denominator(10 ** 6)
        Pinv_diag = np.diag(np.linalg.inv(Pf))
        grad = np.abs(F.rate_gradient(S_hat))
        lam_hat = F.inner(F.quadratic(Sh))       # g(ẑ) = ⟨C, Q(Ŝ)⟩, the rate of w at the centre
        lam = float(lam_hat.mid())
        g0 = np.concatenate([F.vec(_to_np(F.residual(Sh))), [0.0]])
        rho_min2 = 16 * float(g0 @ Pf @ g0) / float(beta) ** 2
        zc = [Sh[i, j] for i, j in F.pairs]
        # the march, with the checker's segments
        Aq, Bq = balls.arb_matrix(params.A), balls.arb_matrix(params.B)
        S = balls.arb_matrix(state.cov)
        K = march_order(digits)
        t, march = Fraction(0), MarchSegments(params.V, RESCALE_LOG2)
        target = 10.0 ** -digits * min(1.0, loc["T"]) / 5 / 4
        growth = _ErrorGrowth(F)
        for step in range(MAX_MARCH_STEPS):
            Sn, hq = taylor_step(Aq, Bq, march.V, S, K, digits + 8)
            if not hq > 0:
                return None, "the Taylor march step underflowed (or met a vanishing series)"
            growth.step(_to_np(S), _to_np(Sn), float(hq), 2.0 ** march.E)
            S, t = Sn, t + hq
            if progress is not None and step % 50 == 0:
                progress(f"march step {step}, t = {float(t):.15g}")
            c1 = F.inner(S)
            if not c1 > 0:
                continue
            w1 = float((balls.arb_of(Fraction(1, 2 ** march.E)) / c1).mid())
            if w1 < 1e-3:
                z1 = [(S[i, j] / c1) for i, j in F.pairs]
                e1 = np.array([float((z1[k] - zc[k]).mid()) for k in range(F.n - 1)] + [w1])
                rho2 = max(4 * float(e1 @ Pf @ e1), rho_min2)
                r = np.sqrt(rho2 * Pinv_diag)
                dl = 2 * float(grad @ r) + 1e-300
                width = w1 * 2 * dl / lam ** 2
                rate_rel = 2 * (float(np.linalg.norm(r)) + dl / lam)
                # the predicted centre t1 + w1/g(ẑ) needs the working precision, not floats
                t_mid = t + balls.fraction_of_mid(balls.arb_of(Fraction(1, 2 ** march.E)) / c1 / lam_hat)
                # the contraction test −(PM + MᵀP) − 2βP ≻ 0 has a margin of about 1/2 (PM0 + M0ᵀP = −I,
                # 2βP ⪯ I/2): the spread of the ball Jacobian over the box must stay well inside it
                small = width <= target and F.contraction_radius(S_hat, r, Pf) <= 0.06   # ball evaluation spreads ~4x more
                if (width <= target and small) or -math.log2(w1) > MAX_LOG2_NORM:
                    break
            Sr = march.rescaled(S, t)
            if Sr is not None:
                S = Sr
                growth.rescale(2.0 ** -RESCALE_LOG2)
        else:
            return None, f"the march did not approach T* within {MAX_MARCH_STEPS} steps"
        if w1 >= 1e-3:
            return None, "the march did not get near infinity"
        if not small:
            return None, (f"the neighbourhood of infinity is still too wide for a contraction proof when ‖Σ‖ "
                          f"reaches 2^{MAX_LOG2_NORM} (a slowly settling direction)")
        segments = march.close(t)
        Tf = np.eye(d) if frame is None else np.array([[float(x) for x in r] for r in frame])
        rate = math.sqrt(float(np.sum((Tf @ S_hat @ Tf.T) ** 2))) / lam
        rho2q = Fraction(rho2) * Fraction(11, 10)    # a float is an exact dyadic rational
        # the checker stops the flow once Σ's relative radius passes the box's largest half-width
        half = float(np.max(np.sqrt(float(rho2q) * Pinv_diag)))
        size1 = float(max(abs(x.mid()) for x in S.entries()))
        shares = growth.radius_per_tol_by_segment()
        tol_bits = flow_tolerance(digits, math.log2(sum(shares) / (half * size1)))
        segments = with_segment_tolerances(segments, tol_bits, digits, t_mid,
                                           lambda k, _: shares[k] * len(shares) / (half * size1))
        # the budget only bounds the checker's work; the march's step count underestimates the
        # flow's, whose steps grow with log ‖Σ(t1)‖ (h ≈ 0.014(T* − t) at d = 4):
        # general_instance(3, 0, 15) needed more than 20 per march step + 2,000, and (4, 0, 5)
        # more than 60 per march step + 4,000
        witness = {"precision_bits": flow_precision(tol_bits, -math.log2(w1)),
                   "flow": {"order": flow_order(tol_bits), "jac_order": JAC_ORDER, "tol_bits": tol_bits,
                            "max_steps": flow_max_steps(step + 1, -math.log2(w1)), "box": FLOW_BOX},
                   "segments": segments, "C": C,
                   "centre": [[balls.fraction_of_mid(Sh[i, j]) for j in range(d)] for i in range(d)],
                   "P": P, "rho2": rho2q, "beta": beta}
        if frame is not None:
            witness["frame"] = [list(r) for r in frame]
    return CompactifiedPlan(witness, t_mid, width, rate, rate_rel, len(segments), step + 1), ""




RANK_TOL = 1e-6
"""An eigenvalue of the float S at infinity below RANK_TOL times its largest counts as zero (on the
d ≤ 4 draws the others are below 1e-14, or of the order of the largest for a rank-two S∞)."""


def blowup_frame(V: np.ndarray, S: np.ndarray) -> list[list[Fraction]] | None:
    """A rational frame T for the checker's flow (`check_blowup_general`, "frame"): first column
    the blow-up direction u (the top eigenvector of the float S at infinity), then a real
    eigenbasis of V without the eigenvector nearest u (real and imaginary parts for a complex
    pair), unit columns, entries with denominators ≤ 2^12.  The ball Taylor coefficients on a box
    grow with |Ṽ|, |B̃| entrywise, so in this frame the flow takes several times longer steps
    (general_instance(4, 0, 1) at 30 digits: 3.3x less CPU).  When S at infinity has rank r ≥ 2
    (general_instance(4, 0, 12): S∞ spans the plane of V's complex pair), or u is nearest a complex
    pair (dropping both parts leaves d − 1 columns), the first r columns span S's range (its
    eigenvectors, largest first) and V's real invariant directions least aligned with that range
    complete the basis ((4, 0, 12): checker 7.6 -> 5.4 s).  None when it is ill-conditioned."""
    d = len(V)
    lam, U = np.linalg.eigh((S + S.T) / 2)
    rank = int(np.sum(lam > RANK_TOL * lam[-1]))
    w, X = np.linalg.eig(V)
    X = X / np.linalg.norm(X, axis=0)
    cols = _frame_rank_one(w, X, U[:, -1]) if rank == 1 else None
    if cols is None:
        span = U[:, d - rank:][:, ::-1]
        dirs = real_directions(w, X)
        near = [float(np.linalg.norm(span.T @ x)) for x in dirs]
        cols = list(span.T) + [dirs[k] for k in np.argsort(near, kind="stable")[:d - rank]]
    if len(cols) != d:
        return None
    T = np.array(cols).T
    T = T / np.linalg.norm(T, axis=0)
    if not np.all(np.isfinite(T)) or np.linalg.cond(T) > 1e4:
        return None
    return [[Fraction(float(x)).limit_denominator(2 ** 12) for x in r] for r in T]


def turning_frame(V: np.ndarray, u: np.ndarray) -> np.ndarray | None:
    """The float frame of a turning tail (`turning.certify_turning`): Re x, Im x (x the eigenvector of
    the complex pair of V whose plane holds u best, phased so that they are orthogonal, Re x of unit
    length), then V's other real directions; None when V has no complex pair or the frame is
    ill-conditioned."""
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
    x = X[:, j]
    ang = 0.5 * math.atan2(-2 * float(x.real @ x.imag), float(x.real @ x.real - x.imag @ x.imag))
    x = x * complex(math.cos(ang), math.sin(ang))
    n = float(np.linalg.norm(x.real))
    cols = [x.real / n, x.imag / n]
    rest = [k for k in range(len(w)) if k not in conjugates(w, j) | {j}]
    cols += real_directions(w[rest], X[:, rest]) if rest else []
    if len(cols) != len(V):
        return None
    T = np.array(cols).T
    return T if np.all(np.isfinite(T)) and np.linalg.cond(T) < 1e4 else None


def _frame_rank_one(w: np.ndarray, X: np.ndarray, u: np.ndarray) -> list | None:
    """[u, V's real eigenbasis without the eigenvector nearest u], or None when that is not d columns
    (u nearest a complex pair)."""
    d = len(w)
    skip = int(np.argmax(np.abs(X.conj().T @ u)))
    rest = [j for j in range(d) if j not in conjugates(w, skip) | {skip}]
    cols = [u] + real_directions(w[rest], X[:, rest])
    return cols if len(cols) == d else None


def certify_general_blowup(params: Params, state: Gaussian, digits: int, progress=None) -> dict:
    """Plan and verify a `blowup_general` certificate.

    Returns {"ok": bool, "reason": str, and when ok: "claim", "witness", "digits", "note" and
    "certificate" (the document `verify_certificate` accepted, so nobody needs to run it again); when not
    ok, "no_blowup_seen": the float search saw Σ shrink or stay bounded (not a blow-up)}."""
    if params.dim > MAX_DIM:
        return {"ok": False, "reason": f"the compactified route runs up to d = {MAX_DIM}", "no_blowup_seen": False}
    A, B, V, _ = (np.array(x, dtype=float) for x in float_view(params))
    last: dict = {}
    S0 = np.array(state.cov, dtype=float)
    loc, seen = search_infinity(A, B, V, S0, last=last, early_unsettled=True)
    if loc is None and seen == SEEN_UNSETTLED and "S" in last and params.dim >= 2:
        # a direction that keeps turning in the plane of a complex pair of V (MATH.md §15)
        from riccati_verify.certify.blowup.turning import certify_turning
        _, U = np.linalg.eigh(last["S"])
        Tf = turning_frame(V, U[:, -1])
        out = certify_turning(params, state, digits, Tf, progress) if Tf is not None else \
            {"reason": "no complex pair of V holds the turning direction (or its frame is ill-conditioned)"}
        if out.get("ok"):
            return out
        if last.get("early"):
            # the shortcut may have cut short a direction that settles late: the full search decides
            loc, seen = search_infinity(A, B, V, S0)
        if loc is None:
            return {"ok": False, "reason": f"{_SEARCH_REASONS[seen]}; the turning tail: {out['reason']}",
                    "no_blowup_seen": False}
    if loc is None:
        return {"ok": False, "reason": _SEARCH_REASONS[seen], "no_blowup_seen": seen in (SEEN_SHRINKING, SEEN_BOUNDED)}
    T = blowup_frame(V, loc["S"])
    out = None
    if T is not None:
        pt, st = framed(params, state, T)
        At, Bt, Vt, _ = (np.array(x, dtype=float) for x in float_view(pt))
        loc_t, _ = search_infinity(At, Bt, Vt, np.array(st.cov, dtype=float))
        if loc_t is not None:
            out = _plan_and_verify(params, state, digits, pt, st, loc_t, T, progress)
            if out["ok"] or not out.get("retry"):
                return out
    # no frame, or a failure in the frame that the original coordinates may not have
    alt = _plan_and_verify(params, state, digits, params, state, loc, None, progress)
    return alt if alt["ok"] or out is None else out


RETRY_BITS = 24
"""Bits added to the flow's tolerance for the one re-check after an entry-test or width failure."""


def _too_wide(reason: str) -> bool:
    """The checker's reason is the flow's radius at t1 (the entry test, or its early stop)."""
    return "enter the neighbourhood" in reason or "too wide" in reason


def _plan_and_verify(params: Params, state: Gaussian, digits: int, pt: Params, st: Gaussian, loc: dict,
                     T, progress) -> dict:
    """Plan in the frame T (pt, st: the framed problem; T None: the original one) and verify the
    certificate of the original problem; "retry" when the failure depends on the frame (the
    checker's flow or entry test, or a plan's decline other than a non-attracting equilibrium,
    which is a property of the flow at infinity)."""
    p, why = plan(pt, st, digits, loc, progress, frame=T)
    if p is None and why.startswith(_NOT_ATTRACTING.split("(")[0]) and params.V_scalar is not None:
        # V = vI: a continuum of equilibria at infinity, not an isolated one (MATH.md §15)
        from riccati_verify.certify.blowup.continuum import certify_continuum
        return certify_continuum(params, state, digits, pt, st, T, progress)
    if p is None:
        return {"ok": False, "reason": why, "no_blowup_seen": False,
                "retry": not why.startswith(_NOT_ATTRACTING.split("(")[0])}
    k = digits_for(p.width, float(p.t_mid), digits)
    lo, hi = decimal_bracket(p.t_mid, k)
    rk = digits_for(p.rate_rel * p.rate, p.rate, 12)
    rlo, rhi = decimal_bracket(Fraction(p.rate), rk)
    claim = {"lower": decimal_str(lo), "upper": decimal_str(hi),
             "rate_lower": decimal_str(rlo), "rate_upper": decimal_str(rhi)}
    method = (f"Lohner flow to near infinity ({p.segments} rescaled segments), then a contracting "
              "ellipsoid around the equilibrium at infinity of the directional compactification")
    doc = make_certificate("blowup_general", claim, params, state, p.witness, method)
    if progress is not None:
        progress("verifying the blow-up certificate (validated flow in balls)")
    res = verify_certificate(doc)
    if not res.valid and _too_wide(res.reason):
        # the float prediction of the flow's radius (`_ErrorGrowth`) fell short: more bits can fix
        # exactly this failure, and nothing else changes (general_instance(3, 0, 8), (4, 0, 6))
        flow = p.witness["flow"]
        flow["tol_bits"] += RETRY_BITS
        flow["order"] = flow_order(flow["tol_bits"])
        p.witness["precision_bits"] += RETRY_BITS
        doc = make_certificate("blowup_general", claim, params, state, p.witness, method)
        res = verify_certificate(doc)
    if not res.valid:
        return {"ok": False, "reason": f"the planned certificate was not verified: {res.reason}",
                "retry": "validated flow failed" in res.reason or "enter the neighbourhood" in res.reason}
    Tf = np.eye(params.dim) if T is None else np.array([[float(x) for x in r] for r in T])
    centre = Tf @ np.array([[float(x) for x in r] for r in p.witness["centre"]]) @ Tf.T
    nrm = math.sqrt(float(np.sum(centre ** 2)))
    return {"ok": True, "reason": res.reason, "claim": claim, "witness": p.witness, "digits": k,
            "method": method, "rate_digits": rk, "certificate": doc,
            "direction": [[round(float(x) / nrm, 12) for x in r] for r in centre]}

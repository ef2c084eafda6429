"""Minimal time to reach a target Gaussian under a norm bound: a certified bracket.

Controls are admissible when ‖A‖₂, ‖B‖₂, ‖V‖₂ ≤ M and |b|₂ ≤ M; the
"congruence" class further has B = V = 0, the "full" class does not.

* **Lower bound T_lower (rigorous).**  The spectrum (Ostrowski), covariance
  displacement and mean (Grönwall) bounds, computed by the producer's own
  route `time_bounds` (the proofs are stated there and in the checker
  module `checker/check_unreachable_in_time.py`, which shares no code with
  it): no admissible control reaches the target before T_lower.  Eigenvalues enter through exact rational
  brackets, the formulas through ball arithmetic, and the result is rounded
  down to a rational, so every T < T_lower has an `unreachable_in_time`
  certificate that the checker re-derives on its own.
* **Upper bound T_upper (constructive, B = V = 0, so in both classes).**
  Two covariance routes; the one whose whole schedule is shorter is taken.  (1) With Σ0 = U0Λ0U0ᵀ,
  Σ1 = U1Λ1U1ᵀ, Φ = U1 D U0ᵀ with D = diag(√(λ1_i/λ0_i)) (1 on zero–zero
  pairs) maps Σ0 to Σ1, and Φ = exp(S)·R with R = U1U0ᵀ, S = U1 (log D) U1ᵀ:
  a rotation segment A = log R/t_rot (t_rot = ‖log R‖₂/M) then a stretch
  segment A = S/t_str (t_str = ‖S‖₂/M).  The columns of U1 may be permuted
  (another pairing of the eigenvalues) and their signs flipped: `_pairing`
  searches for the least t_rot + t_str.  (2) For invertible Σ0, Σ1: one
  segment A = log T/τ, T the optimal-transport map (symmetric positive
  definite, T Σ0 T = Σ1, τ = ‖log T‖₂/M).  The mean is steered by one
  constant b during those segments (no extra time when |b| ≤ M), else by
  slowing the whole schedule until |b| ≤ M or by an extra A = 0, |b| = M
  segment (before or after the flow), whichever is shorter.  Every control
  sits at M(1 − SHRINK) before rounding to rationals, so the norms are ≤ M
  exactly (re-checked in Fractions).  For B = V = 0, durations × c and
  controls ÷ c give the same trajectory, so every T ≥ T_upper is reached.
* **Optimised upper bound (`minimax_controls`).**  For B = V = 0 the minimal
  time is N*/M, N* the least sup-norm max_k max(‖A_k‖₂, |b_k|₂) of controls
  reaching the target at horizon 1 (the rescaling above).  K equal segments
  (default 4, d ≤ 8), started from the minimal-energy controls
  (`min_energy.sqp`): a trust-region SL1QP on N + ρ‖c‖₁, whose convex
  subproblems keep σ_max exact (SDP cones, cvxpy + Clarabel) and linearise
  only the terminal constraint c (closed-form Fréchet Jacobian,
  `min_energy.constraints_and_jacobian`); then `min_energy.polish` to |c| ~
  1e-48, rounding to rationals, an exact bound N̄ ≥ every norm (`exact.norm2_at_most`),
  and exact rescaling to norms ≤ M.  T_upper = min(construction, N̄/M); the
  optimiser can only lower it, and its claims never enter the bound: the
  exact norms and the re-integrated terminal error do.  When the
  minimal-energy start ends no better than the construction, the SL1QP
  restarts from the construction's own controls.  On seeded random pairs
  (bench_reach table 4b) T_upper/T_lower drops from 2.6–4.4 to 1.5–1.8.
* **Determined.**  When the eigenbases align (a pure stretch: R = I, and T_ot
  is that stretch) and the mean fits concurrently, T_upper = ρ/M = T_lower up
  to the rounding slack: the minimal time is then known to within `width`.
  Elsewhere the bracket stays open (T_upper/T_lower ≈ 2–5 for the construction
  alone on random instances, ≈ 1.5–1.8 with the optimised route, whose
  local optimum is not proved global; which end is loose is not known).
"""

from __future__ import annotations

import itertools
import math
import time
import warnings
from dataclasses import dataclass, replace
from fractions import Fraction

import mpmath
import numpy as np

from riccati_verify.certify.controls import (CONSTRUCT_DPS, control_segment, exact_matrix, exact_vector, flow_blocks,
                                             mp_matrix, mp_vector, terminal_error_mp, to_mpf)
from riccati_verify.certify.steering import rotation_log, steer_congruence
from riccati_verify.checker import verify_certificate
from riccati_verify.certify.time_bounds import (CONTROL_CLASSES, LowerBound, eigenvalue_brackets,
                                                time_lower_bound_from_brackets)
from riccati_verify.core import exact
from riccati_verify.core.errors import InputError
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.core.result import Status
from riccati_verify.core.serial import jsonable
from riccati_verify.numeric.flow import Segment
from riccati_verify.numeric.views import float_view

__all__ = ["CONTROL_CLASSES", "Construction", "LowerBound", "MINIMAX_SEGMENTS", "MinTimeBracket", "Minimax",
           "admissible", "bounded_construction", "eigenvalue_brackets", "min_time_bracket", "minimax_controls",
           "time_lower_bound", "unreachable_in_time_certificate"]

SHRINK = Fraction(1, 10 ** 30)          # controls sit at M(1 − SHRINK): rounding keeps them ≤ M
DETERMINED_REL = Fraction(1, 10 ** 12)  # bracket width / T_upper below which the minimal time is "determined"
EXHAUSTIVE_SIGNS_MAX_D = 10             # 2^(d−1) sign patterns searched up to here, greedy beyond
EXHAUSTIVE_PAIRING_MAX = 5              # all r! eigenpair pairings searched up to this rank
NEGLIGIBLE = mpmath.mpf(10) ** -40      # angles/stretches/mean gaps below this need no segment


# ------------------------------------------------------------ lower bound

def time_lower_bound(state0: Gaussian, target: Gaussian, M: Fraction, control_class: str = "congruence"
                     ) -> LowerBound:
    """The largest of the spectrum, displacement and mean bounds (`time_bounds`, the producer's own
    route; the checker re-derives any certificate built from it on its own)."""
    _check_args(state0, target, M, control_class)
    b0 = eigenvalue_brackets(state0.cov, state0.rank)
    b1 = eigenvalue_brackets(target.cov, target.rank)
    return time_lower_bound_from_brackets(state0, target, M, control_class, b0, b1)


# ------------------------------------------------------------ construction

@dataclass
class Construction:
    """Reaching B = V = 0 controls within the norm bound: their total duration is an upper bound
    on the minimal time (T_upper), and `rescaled` stretches them to any longer horizon."""

    segments: list[Segment]             # exact rational B = V = 0 controls with norms ≤ M (exactly)
    time: Fraction                      # T_upper: their total duration
    route: str                          # how Φ(T) Σ0 Φ(T)ᵀ = Σ1 is achieved
    log_norms: list                     # ‖L‖₂ of each covariance segment (its time is ‖L‖₂/M)
    mean: str                           # how the mean is steered

    def rescaled(self, T: Fraction) -> list[Segment]:
        """The same trajectory over [0, T], T ≥ self.time (durations × c, controls ÷ c)."""
        c = T / self.time
        return [Segment(s.duration * c, Params(exact.scale(1 / c, s.params.A), s.params.B, s.params.V,
                                               tuple(x / c for x in s.params.b))) for s in self.segments]


def _rotation_angle(R: np.ndarray) -> float:
    return float(np.max(np.abs(np.angle(np.linalg.eigvals(R))))) if len(R) else 0.0


def _signs(U0: np.ndarray, U1: np.ndarray, exhaustive: bool) -> tuple[np.ndarray, float]:
    """Column signs s of U1 with det(U1 diag(s) U0ᵀ) = +1, and the rotation angle they leave."""
    d = U0.shape[0]
    C = U1.T @ U0
    parity = np.sign(np.linalg.det(U1) * np.linalg.det(U0))
    best = np.where(np.diag(C) >= 0, 1.0, -1.0)
    if np.prod(best) != parity:
        best[np.argmin(np.abs(np.diag(C)))] *= -1
    best_angle = _rotation_angle((U1 * best) @ U0.T)
    if exhaustive:
        for tail in itertools.product((1.0, -1.0), repeat=d - 1):
            s = np.array((parity * np.prod(tail),) + tail)
            a = _rotation_angle((U1 * s) @ U0.T)
            if a < best_angle - 1e-12:
                best, best_angle = s, a
    return best, best_angle


def _pairing(w0: np.ndarray, U0: np.ndarray, w1: np.ndarray, U1: np.ndarray, zeros: int
             ) -> tuple[list[int], np.ndarray]:
    """Which eigenpair of Σ1 each eigenpair of Σ0 is stretched to (zeros to zeros), and the signs.

    The construction's time is (θ + ρ_π)/M with θ the rotation angle of R = U1_π U0ᵀ and
    ρ_π = max_i |log(λ1_π(i)/λ0_i)|/2: the sorted pairing minimises ρ_π, but pairing
    eigenvectors that already point the same way can save the whole rotation.  Candidates:
    every permutation of the nonzero block when it is small, else sorted and best-aligned.
    """
    from scipy.optimize import linear_sum_assignment

    d = len(w0)
    nz = list(range(zeros, d))
    if len(nz) <= EXHAUSTIVE_PAIRING_MAX:
        perms = [list(range(zeros)) + list(p) for p in itertools.permutations(nz)]
    else:
        rows, cols = linear_sum_assignment(-np.abs(U0[:, nz].T @ U1[:, nz]))
        aligned = [nz[c] for _, c in sorted(zip(rows, cols))]
        perms = [list(range(d)), list(range(zeros)) + aligned]

    def cost(p, exhaustive=False):
        s, theta = _signs(U0, U1[:, p], exhaustive)
        rho = max((abs(np.log(w1[p[i]] / w0[i])) / 2 for i in nz), default=0.0)
        return theta + rho, s

    best = min(perms, key=lambda p: cost(p)[0])
    return best, cost(best, exhaustive=d <= EXHAUSTIVE_SIGNS_MAX_D)[1]


def _segment(duration: Fraction, A: exact.Matrix, b: exact.Vector) -> Segment:
    return control_segment(duration, A=A, b=b, d=len(A))


def _duration_for(size: mpmath.mpf, M: Fraction) -> Fraction:
    """A rational τ ≥ size / (M(1 − SHRINK)): the control size/τ is then ≤ M(1 − SHRINK)."""
    x = size / (mpmath.mpf(M.numerator) / M.denominator) / (1 - mpmath.mpf(SHRINK.numerator) / SHRINK.denominator)
    return Fraction(mpmath.nstr(x * (1 + mpmath.mpf(10) ** -35), 40, min_fixed=1, max_fixed=0))


def _transport_log(w0, U0: mpmath.matrix, S1: mpmath.matrix) -> mpmath.matrix | None:
    """log T for the optimal-transport map T = Σ0^{-1/2} (Σ0^{1/2} Σ1 Σ0^{1/2})^{1/2} Σ0^{-1/2}.

    T is symmetric positive definite with T Σ0 T = Σ1, so one segment A = log T/τ moves Σ0 to Σ1;
    ‖log T‖₂ is often well below θ + ρ of the rotation + stretch route (both Σ invertible).
    """
    d = S1.rows
    root = lambda w, U, f: U * mpmath.diag([f(x) for x in w]) * U.T
    h, hi = root(w0, U0, mpmath.sqrt), root(w0, U0, lambda x: 1 / mpmath.sqrt(x))
    C = h * S1 * h
    wc, Uc = mpmath.eigsy((C + C.T) / 2)
    if min(wc) <= 0:
        return None
    T = hi * root(wc, Uc, mpmath.sqrt) * hi
    wt, Ut = mpmath.eigsy((T + T.T) / 2)
    if min(wt) <= 0 or d == 0:
        return None
    return root(wt, Ut, mpmath.log)


def _norm2(X: mpmath.matrix) -> mpmath.mpf:
    return mpmath.sqrt(max(max(mpmath.eigsy(X.T * X)[0]), 0))


def admissible(p: Params, M: Fraction, control_class: str = "full") -> bool:
    """‖A‖₂, ‖B‖₂, ‖V‖₂ ≤ M and |b|₂ ≤ M exactly (and B = V = 0 for the congruence class)."""
    if control_class == "congruence" and any(x for X in (p.B, p.V) for r in X for x in r):
        return False
    return all(exact.norm2_at_most(X, M) for X in (p.A, p.B, p.V)) and sum(x * x for x in p.b) <= M * M


def bounded_construction(state0: Gaussian, target: Gaussian, M: Fraction) -> Construction:
    """B = V = 0 controls with norms ≤ M reaching the target at T_upper: the covariance route
    (rotation + stretch, or the transport map) whose schedule, mean steering included, is shorter."""
    d, r = state0.dim, state0.rank
    with mpmath.workdps(CONSTRUCT_DPS):
        w0, U0 = mpmath.eigsy(mp_matrix(state0.cov))
        w1, U1 = mpmath.eigsy(mp_matrix(target.cov))
        f = lambda X: np.array(X.tolist(), float).reshape(d, -1)
        p, s = _pairing(f(w0).ravel(), f(U0), f(w1).ravel(), f(U1), d - r)
        U1 = mpmath.matrix([[U1[i, p[j]] * int(s[j]) for j in range(d)] for i in range(d)])
        w1 = [w1[p[j]] for j in range(d)]
        logD = [mpmath.mpf(0) if i < d - r else mpmath.log(w1[i] / w0[i]) / 2 for i in range(d)]
        Lrot = rotation_log(U1 * U0.T)
        S = U1 * mpmath.diag(logD) * U1.T
        routes = [("rotation exp(log R) then stretch exp(S)",
                   [(Lrot, _norm2(Lrot)), (S, max((abs(x) for x in logD), default=mpmath.mpf(0)))])]
        Lot = _transport_log(w0, U0, mp_matrix(target.cov)) if r == d else None
        if Lot is not None:
            routes.append(("one segment exp(log T), T the optimal-transport map", [(Lot, _norm2(Lot))]))
        built = [_with_mean(route, parts, state0, target, M) for route, parts in routes]
    best = min(built, key=lambda c: c.time)
    for sg in best.segments:
        if not admissible(sg.params, M, "congruence"):
            raise ArithmeticError("a rounded control exceeds the norm bound")   # SHRINK makes this impossible
    return best


def _with_mean(route: str, parts: list, state0: Gaussian, target: Gaussian, M: Fraction) -> Construction:
    """The covariance segments A = L/τ (τ = ‖L‖₂/(M(1 − SHRINK))) plus the mean steering."""
    d = state0.dim
    q = lambda x: mpmath.mpf(x.numerator) / x.denominator
    segs = []
    for L, size in parts:
        if size > NEGLIGIBLE:
            tau = _duration_for(size, M)
            segs.append((tau, exact_matrix(L / q(tau))))
    # constant b over the segments, from the flow of the *rounded* A's (b absorbs their error)
    Phi, Wtot = mpmath.eye(d), mpmath.matrix(d, d)
    for tau, A in segs:
        E, W = flow_blocks(mp_matrix(A) * q(tau), q(tau))
        Phi, Wtot = E * Phi, E * Wtot + W
    gap = mp_vector(target.mean) - Phi * mp_vector(state0.mean)
    # an extra A = 0 segment moves the mean in a straight line, before the flow (by Φ⁻¹m1 − m0)
    # or after it (by m1 − Φm0), whichever is shorter
    gap_before = mpmath.lu_solve(Phi, mp_vector(target.mean)) - mp_vector(state0.mean)
    first = mpmath.norm(gap_before) < mpmath.norm(gap)
    shift = gap_before if first else gap
    Mm = q(M) * (1 - q(SHRINK))
    b, extra, mean = (Fraction(0),) * d, None, "none"
    if mpmath.norm(gap) > NEGLIGIBLE:
        bb = None
        if segs:
            try:
                bb = mpmath.lu_solve(Wtot, gap)
            except (ZeroDivisionError, ValueError):
                bb = None
        t_flow = sum((q(tau) for tau, _ in segs), mpmath.mpf(0))
        slow = mpmath.norm(bb) / Mm if bb is not None else mpmath.inf
        if slow <= 1:
            b, mean = exact_vector(bb), "one constant b during the covariance segments"
        elif slow * t_flow <= t_flow + mpmath.norm(shift) / Mm:
            # slowing the whole schedule by c (durations × c, A and b ÷ c) keeps the trajectory
            c = Fraction(mpmath.nstr(slow * (1 + mpmath.mpf(10) ** -35), 40, min_fixed=1, max_fixed=0))
            segs = [(tau * c, exact.scale(1 / c, A)) for tau, A in segs]
            b, mean = tuple(x / c for x in exact_vector(bb)), "constant b, schedule slowed to fit it"
        else:
            tau = _duration_for(mpmath.norm(shift), M)
            extra = _segment(tau, exact.zeros(d), exact_vector(shift / q(tau)))
            mean = f"an extra A = 0, |b| = M segment {'before' if first else 'after'} the flow"
    flow = [_segment(tau, A, b) for tau, A in segs]
    out = ([extra] + flow if first else flow + [extra]) if extra else flow
    return Construction(out, sum((sg.duration for sg in out), Fraction(0)), route,
                        [float(size) for _, size in parts], mean)


# ------------------------------------------------------------ optimised upper bound (minimax)

MINIMAX_SEGMENTS = 4          # K equal segments of the optimised route (0: construction only)
MINIMAX_MAX_SEGMENTS = 16
MINIMAX_MAX_DIM = 8           # beyond this the SDP subproblems cost more than the bound is worth
MINIMAX_MAX_ITER = 40         # SL1QP iterations (each: one Jacobian, one Clarabel SDP)
MINIMAX_ACCEPT = mpmath.mpf(10) ** -25   # re-integrated terminal error above this: the route is refused


@dataclass
class Minimax:
    """The optimised route: K equal B = V = 0 segments minimising the sup-norm N at horizon 1, rescaled."""
    segments_count: int
    upper: Construction | None          # the rescaled controls (None: the route failed; see `failure`)
    sup_norm: Fraction | None           # exact N̄ ≥ max_k max(‖A_k‖₂, |b_k|₂) of the horizon-1 controls
    start_sup_norm: float | None        # N of the minimal-energy start (the SL1QP's first iterate)
    start: str = "minimal-energy"      # the SL1QP's starting controls: "minimal-energy" or "construction"
    iterations: int = 0
    converged: bool = False             # the SL1QP's predicted decrease fell below its tolerance
    terminal_error: float | None = None  # reach.terminal_error_mp of the rescaled controls
    seconds: float = 0.0
    failure: str | None = None

    @property
    def failure_is_skip(self) -> bool:
        """The route was not attempted (too large, nothing to move): no reason to retry it."""
        return bool(self.failure) and self.failure.startswith("skipped")

    def report(self) -> dict:
        """JSON form (the bracket's "minimax" entry); says which claims enter T_upper."""
        return {"segments": self.segments_count, "start": self.start,
                "time": self.upper.time if self.upper else None,
                "sup_norm_at_horizon_1": self.sup_norm, "start_sup_norm": self.start_sup_norm,
                "iterations": self.iterations, "converged": self.converged,
                "terminal_error": self.terminal_error, "seconds": self.seconds, "failure": self.failure,
                "optimality": "local (SL1QP from the minimal-energy controls); only the exact sup-norm "
                              "of the final controls enters T_upper"}


def _sup_norm(theta: np.ndarray, d: int, K: int) -> float:
    """max_k max(‖A_k‖₂, |b_k|₂) for θ in min_energy's (A_k row-major, b_k) layout."""
    n = d * d + d
    return max((max(float(np.linalg.norm(theta[k * n:k * n + d * d].reshape(d, d), 2)),
                    float(np.linalg.norm(theta[k * n + d * d:(k + 1) * n]))) for k in range(K)), default=0.0)


def _sl1qp_subproblem(d: int, K: int, m: int):
    """min_x  w·t + ‖c + J x‖₁  s.t.  ‖A_k(θ + x)‖₂ ≤ t, |b_k(θ + x)|₂ ≤ t, ‖x‖∞ ≤ Δ  (w = 1/ρ).

    The sup-norm enters exactly (σ_max is convex: an SDP cone), only c is linearised, so the
    model is the ℓ1 exact-penalty merit N + ρ‖c‖₁ up to the curvature of c.  Parameters (DPP)
    make cvxpy compile it once per call of `minimax_controls`."""
    import cvxpy as cp

    n = d * d + d
    par = {"theta": cp.Parameter(K * n), "c": cp.Parameter(m), "J": cp.Parameter((m, K * n)),
           "w": cp.Parameter(nonneg=True), "radius": cp.Parameter(nonneg=True)}
    x, t = cp.Variable(K * n), cp.Variable()
    cons = [cp.abs(x) <= par["radius"]]
    for k in range(K):
        A, b = slice(k * n, k * n + d * d), slice(k * n + d * d, (k + 1) * n)
        cons += [cp.sigma_max(cp.reshape(par["theta"][A] + x[A], (d, d), order="C")) <= t,
                 cp.norm(par["theta"][b] + x[b], 2) <= t]
    return cp.Problem(cp.Minimize(par["w"] * t + cp.norm1(par["c"] + par["J"] @ x)), cons), par, x, t


def _sl1qp(theta: np.ndarray, prob, d: int, K: int, max_iter: int):
    """Trust-region SL1QP (Fletcher) on the merit φ = N + ρ‖c‖₁: returns (θ, iterations, converged).

    Each trial step is followed by up to two minimum-norm returns θ ← θ − G c(θ) towards c = 0
    (second-order correction: without them the curvature of c makes the linear model reject
    good steps and the radius collapses), the best point by φ being the trial."""
    import cvxpy as cp
    from riccati_verify.certify.min_energy import min_norm_correction   # scipy: loaded only when optimising

    c, J = prob.cj(theta)
    sub, par, x, t = _sl1qp_subproblem(d, K, len(c))
    N = _sup_norm(theta, d, K)
    rho = 10.0 * (1.0 + N)      # above the multipliers ∂N*/∂c in the cases tried; if not, the end
    radius = max(N / 2, 1e-3)   # projection restores c = 0 and the exact norm is what counts
    phi = N + rho * float(np.sum(np.abs(c)))
    unit = np.ones(theta.size)
    for it in range(1, max_iter + 1):
        par["theta"].value, par["c"].value, par["J"].value = theta, c, J
        par["w"].value, par["radius"].value = 1.0 / rho, radius
        try:
            with warnings.catch_warnings():   # "inaccurate" steps are judged by the merit like any other
                warnings.simplefilter("ignore")
                sub.solve(solver=cp.CLARABEL)
        except cp.error.SolverError:
            return theta, it, False
        if sub.status not in ("optimal", "optimal_inaccurate") or x.value is None:
            return theta, it, False
        step = x.value
        pred = phi - (float(t.value) + rho * float(np.sum(np.abs(c + J @ step))))
        if pred <= 1e-10 * (1.0 + phi):
            return theta, it, True
        G = min_norm_correction(J, unit)
        best, trial = (math.inf, None), theta + step
        for _ in range(3):
            ct = prob.c(trial)
            if ct is None:
                break
            val = _sup_norm(trial, d, K) + rho * float(np.sum(np.abs(ct)))
            if val < best[0]:
                best = (val, trial)
            trial = trial - G @ ct
        ratio = (phi - best[0]) / pred
        size = float(np.max(np.abs(step)))
        if ratio > 0.1:
            theta, phi = best[1], best[0]
            c, J = prob.cj(theta)
            if ratio > 0.5 and size > 0.99 * radius:
                radius *= 2
        else:
            radius = size / 4
            if radius < 1e-12:
                return theta, it, True
    return theta, max_iter, False


def _on_unit_horizon(c: Construction, K: int) -> tuple[list[Fraction], np.ndarray]:
    """The construction's controls on [0, 1] (durations ÷ T, controls × T: the same trajectory), each
    segment cut into max(1, round(K τ_i)) equal pieces, in min_energy's θ layout."""
    taus, blocks = [], []
    for s in c.segments:
        k = max(1, round(K * s.duration / c.time))
        A, _, _, b = float_view(s.params)
        blk = np.concatenate([np.asarray(A).ravel(), np.asarray(b)]) * float(c.time)
        taus += [s.duration / c.time / k] * k
        blocks += [blk] * k
    return taus, np.concatenate(blocks)


def _exact_sup_norm(segments: list[Segment]) -> Fraction:
    """A rational N̄ ≥ ‖A_k‖₂, |b_k|₂ for every segment, proved exactly (`exact.norm2_at_most`)."""
    with mpmath.workdps(50):
        est = max((max(_norm2(mp_matrix(s.params.A)), mpmath.norm(mp_vector(s.params.b))) for s in segments),
                  default=mpmath.mpf(0))
        N = Fraction(mpmath.nstr(est * (1 + mpmath.mpf(10) ** -30) + mpmath.mpf(10) ** -40, 35,
                                 min_fixed=1, max_fixed=0))
    for s in segments:
        if not (exact.norm2_at_most(s.params.A, N) and sum(x * x for x in s.params.b) <= N * N):
            raise ArithmeticError("the sup-norm estimate is not an exact upper bound")
    return N


def minimax_controls(state0: Gaussian, target: Gaussian, M: Fraction, K: int = MINIMAX_SEGMENTS, *,
                     max_iter: int = MINIMAX_MAX_ITER, start: Construction | None = None) -> Minimax:
    """B = V = 0 controls on K equal segments of [0, 1] with small sup-norm N, reaching the target,
    rescaled to norms ≤ M: an upper bound N̄/M on the minimal time.

    For B = V = 0, durations × c and controls ÷ c give the same trajectory, so the minimal time under
    ‖A‖₂, |b|₂ ≤ M is N*/M with N* the least sup-norm reaching the target at horizon 1.  Route:
    minimal-energy SQP (min_energy.sqp) as the start, SL1QP on N + ρ‖c‖₁, minimum-norm returns to
    c = 0 in floats, min_energy.polish at POLISH_DPS digits, rounding to rationals, an exact N̄
    (`_exact_sup_norm`), exact rescaling by c = N̄/M, an exact admissibility check and the terminal
    error re-measured by reach.terminal_error_mp.  Soundness needs none of the optimiser's claims:
    only the exact norms and the re-integrated terminal state.  Failure (no convergence, d too
    large, error too big) is reported, not raised.

    `start` (a Construction): start instead from those controls, already reaching, at horizon 1 on
    their own grid (each segment cut into ~K·τ_i equal pieces); the SL1QP then only descends from
    the construction's sup-norm (used when the minimal-energy start ends in a worse local minimum)."""
    from riccati_verify.certify import min_energy as ME   # scipy: loaded only when optimising

    t0 = time.perf_counter()
    d = state0.dim
    out = Minimax(K, None, None, None, start="construction" if start else "minimal-energy")
    if not 1 <= K <= MINIMAX_MAX_SEGMENTS:
        raise InputError(f"minimax segments must be in 1..{MINIMAX_MAX_SEGMENTS}, got {K}")
    if d > MINIMAX_MAX_DIM:
        out.failure = f"skipped: d = {d} > {MINIMAX_MAX_DIM}"
        return out
    if state0 == target:
        out.failure = "skipped: the target is the initial state"
        return out
    try:
        if start is None:
            taus, theta = ME.resample(steer_congruence(state0, target, Fraction(1)).segments, K)
        else:
            taus, theta = _on_unit_horizon(start, K)
        prob = ME.TerminalConstraint("congruence", tuple(taus), state0, target)
        out.segments_count = n = len(taus)
        with np.errstate(all="ignore"):
            if start is None:
                theta = ME.sqp(theta, prob, max_iter=100)[0]
            out.start_sup_norm = _sup_norm(theta, d, n)
            theta, out.iterations, out.converged = _sl1qp(theta, prob, d, n, max_iter)
            for _ in range(4):                      # back onto c = 0 before the high-precision polish
                c, J = prob.cj(theta)
                theta = theta - ME.min_norm_correction(J, prob.weights()) @ c
            c, J = prob.cj(theta)
        th_mp, err, _ = ME.polish(theta, J, prob)
        if not err < ME.POLISH_TARGET * 10 ** 5:
            out.failure = f"polish stalled at |c| = {float(err):.2e}"
            return out
        unit = prob.segments(th_mp)                 # exact rationals, horizon 1
        N = _exact_sup_norm(unit)
    except (ArithmeticError, np.linalg.LinAlgError, ValueError) as exc:
        out.failure = f"optimisation failed: {exc}"
        return out
    finally:
        out.seconds = time.perf_counter() - t0
    if N == 0:
        out.failure = "zero controls"
        return out
    scale = N / M                                   # durations × scale, controls ÷ scale: same trajectory
    segs = [_segment(s.duration * scale, exact.scale(1 / scale, s.params.A), tuple(x / scale for x in s.params.b))
            for s in unit]
    if not all(admissible(s.params, M, "congruence") for s in segs):
        raise ArithmeticError("an exactly rescaled control exceeds the norm bound")   # N̄ is proved ≥ every norm
    err = terminal_error_mp(segs, state0, target)
    out.terminal_error, out.sup_norm = float(err), N
    out.seconds = time.perf_counter() - t0
    if err > MINIMAX_ACCEPT:
        out.failure = f"terminal error {float(err):.2e} of the rounded controls above {float(MINIMAX_ACCEPT):.0e}"
        return out
    with mpmath.workdps(30):
        gen_norms = [float(_norm2(mp_matrix(s.params.A)) * to_mpf(s.duration)) for s in segs]
    grid = f"{K} equal segments" if start is None else f"{out.segments_count} segments on the construction's grid"
    out.upper = Construction(segs, scale, f"minimax: {grid}, sup-norm minimised (SL1QP from the "
                                          f"{out.start} controls), rescaled by its exact value",
                             gen_norms, "b optimised jointly with A")
    return out



# ------------------------------------------------------------ the bracket

@dataclass
class MinTimeBracket:
    """[T_lower, T_upper] for the minimal time under the norm bound, and, once a horizon is set
    (`at`), the library's one result protocol at that horizon.

    `status` at the horizon T: REFUTED when T < T_lower and the checker accepts the emitted
    `unreachable_in_time` document (`certificate`); CONFIRMED_NUMERICALLY when T ≥ T_upper (the
    controls' norms are exact, their reaching the target is a high-precision construction:
    `reach.reach_verdict` certifies it through a `reachability` certificate); NOT_CERTIFIED in
    between, without a horizon, or when the checker refuses the document.
    """

    max_norm: Fraction
    control_class: str
    lower: LowerBound
    upper: Construction                 # the shorter of the construction and the optimised route
    dim: int
    construction: Construction | None = None
    minimax: Minimax | None = None      # the optimised route's attempt (None: not run)
    time: Fraction | None = None        # the horizon the status is about (None: not set)
    state0: Gaussian | None = None      # the query, needed to emit the certificate
    target: Gaussian | None = None

    @property
    def upper_route(self) -> str:
        """Which route gave T_upper: "optimised" or "construction" (the report names it)."""
        return "optimised" if self.minimax is not None and self.upper is self.minimax.upper else "construction"

    @property
    def width(self) -> Fraction:
        """T_upper − T_lower, exactly: how far the minimal time is from known."""
        return self.upper.time - self.lower.time

    @property
    def determined(self) -> bool:
        """The minimal time is pinned down to within `width` ≤ DETERMINED_REL · T_upper."""
        return self.width <= DETERMINED_REL * self.upper.time

    def at(self, T: Fraction) -> MinTimeBracket:
        """The same bracket asked about the horizon T (its `status`, `certificate`, `to_dict`)."""
        return replace(self, time=T)

    def _side(self, T: Fraction) -> str:
        """Where T falls, in the report's words: unreachable (below), reached (at or above), not certified."""
        if T < self.lower.time:
            return "unreachable"
        if T >= self.upper.time:
            return "reached"
        return "not certified"

    @property
    def certificate(self) -> dict | None:
        """The `unreachable_in_time` document for the horizon when it lies below T_lower, else None."""
        if self.time is None or not self.time < self.lower.time or self.state0 is None or self.target is None:
            return None
        return unreachable_in_time_certificate(self.state0, self.target, self.time, self)

    @property
    def status(self) -> Status:
        """The verdict at the horizon (see the class docstring); the lower bound counts as REFUTED
        only after `verify_certificate` accepts its document."""
        if self.time is None:
            return Status.NOT_CERTIFIED
        side = self._side(self.time)
        if side == "reached":
            return Status.CONFIRMED_NUMERICALLY
        cert = self.certificate if side == "unreachable" else None
        if cert is not None:
            if verify_certificate(cert).valid:
                return Status.REFUTED
        return Status.NOT_CERTIFIED

    def to_dict(self) -> dict:
        """JSON form: `report` at the horizon (the reach command's "bound")."""
        return jsonable(self.report(self.time))

    def controls(self, T: Fraction) -> list[Segment]:
        """Admissible controls reaching the target at T ≥ T_upper (holding still when nothing moves)."""
        if T < self.upper.time:
            raise ValueError("the construction needs T >= T_upper")
        if not self.upper.segments:   # the target is the initial state
            return [_segment(T, exact.zeros(self.dim), (Fraction(0),) * self.dim)]
        return self.upper.rescaled(T)

    def report(self, T: Fraction | None = None) -> dict:
        """The bracket as the reach command's "bound" entry; with T, also where T falls ("verdict":
        unreachable, reached or not certified, the output's words for the sides of the bracket)."""
        out = {"max_norm": self.max_norm, "control_class": self.control_class,
               "time_lower_bound": self.lower.time, "lower_bound_criterion": self.lower.criterion,
               "lower_bound_reason": self.lower.reason, "time_upper_bound": self.upper.time,
               "bracket_width": self.width, "determined": self.determined,
               "minimal_time": self.upper.time if self.determined else None,
               "route": self.upper.route, "covariance_log_norms": self.upper.log_norms,
               "mean_steering": self.upper.mean, "upper_bound_route": self.upper_route,
               "time_upper_bound_construction": self.construction.time if self.construction else None,
               "minimax": self.minimax.report() if self.minimax else None}
        if T is not None:
            out["verdict"] = self._side(T)
        return out


def _check_args(state0: Gaussian, target: Gaussian, M: Fraction, control_class: str) -> None:
    if control_class not in CONTROL_CLASSES:
        raise InputError(f"control class must be one of {', '.join(CONTROL_CLASSES)}, got {control_class!r}")
    if not M > 0:
        raise InputError(f"the norm bound must be positive, got {M}")
    if state0.dim != target.dim:
        raise InputError(f"the target has d = {target.dim} but the initial state has d = {state0.dim}")
    if state0.rank != target.rank:
        raise InputError("different ranks: the target is unreachable for every T (rank obstruction)")


def min_time_bracket(state0: Gaussian, target: Gaussian, M: Fraction, control_class: str = "congruence",
                     minimax_segments: int = MINIMAX_SEGMENTS) -> MinTimeBracket:
    """T_upper is the shorter of the construction and, when minimax_segments = K > 0 and d ≤
    MINIMAX_MAX_DIM, the optimised route (`minimax_controls`); the construction is the fallback."""
    lower = time_lower_bound(state0, target, M, control_class)
    built = bounded_construction(state0, target, M)
    opt = minimax_controls(state0, target, M, minimax_segments) if minimax_segments else None
    if (opt is not None and not opt.failure_is_skip and built.segments
            and (opt.upper is None or opt.upper.time >= built.time)):   # a worse local minimum: descend from built
        again = minimax_controls(state0, target, M, minimax_segments, start=built)
        if again.upper is not None and (opt.upper is None or again.upper.time < opt.upper.time):
            opt = again
    upper = opt.upper if opt is not None and opt.upper is not None and opt.upper.time < built.time else built
    if lower.time > upper.time:
        raise ArithmeticError(f"lower bound {lower.time} above the reaching controls' time {upper.time}")
    return MinTimeBracket(M, control_class, lower, upper, state0.dim, built, opt, state0=state0, target=target)


# ------------------------------------------------------------ certificate

def unreachable_in_time_certificate(state0: Gaussian, target: Gaussian, T: Fraction, res: MinTimeBracket) -> dict:
    """The `unreachable_in_time` document for T below the bracket's lower bound: its eigenvalue
    brackets and criterion are the witness the checker re-derives the bound from on its own."""
    from riccati_verify.certify.certificate import make_certificate

    if not T < res.lower.time:
        raise ValueError("T is not below the rigorous lower bound")
    claim = {"target_mean": target.mean, "target_cov": target.cov, "time": T, "max_norm": res.max_norm,
             "control_class": res.control_class,
             "statement": "no piecewise-continuous controls with |A|_2, |B|_2, |V|_2 <= max_norm and |b|_2 <= "
                          "max_norm" + (" and B = V = 0" if res.control_class == "congruence" else "")
                          + " steer the initial Gaussian to the target at any time t <= T"}
    witness = {"criterion": res.lower.criterion,
               "eigenvalues_initial": [list(p) for p in res.lower.eigenvalues_initial],
               "eigenvalues_target": [list(p) for p in res.lower.eigenvalues_target]}
    return make_certificate("unreachable_in_time", claim, None, state0, witness,
                            f"{res.lower.reason}; exact eigenvalue brackets (inertia counts); ball arithmetic")

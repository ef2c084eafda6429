"""Minimal-energy controls that reach the target exactly (issue 6, item 4; MATH.md §14).

Problem.  Over K equal segments τ_k = T/K with B = V = 0 and constant (A_k, b_k),

    minimise  E(θ) = Σ_k τ_k (‖A_k‖_F² + |b_k|²)
    subject to c(θ) = (m(T) − m1, upper triangle of Σ(T) − Σ1) = 0.

Closed-form flow.  With B = V = 0 a segment is affine: [m; 1] ↦ Z_k [m; 1],
Z_k = exp(X_k), X_k = τ_k [[A_k, b_k], [0, 0]], and Σ ↦ P_k Σ P_kᵀ with P_k the
upper-left d×d block of Z_k (the last row of X_k is zero, so the blocks of the
product Z = Z_K···Z_1 are the products of the blocks).  The Jacobian is exact:
dZ = Σ_k Z_K···Z_{k+1} L(X_k, dX_k) Z_{k−1}···Z_1 with L the Fréchet derivative of
expm (Van Loan: the upper-right block of exp([[X, E], [0, X]]), scipy's
`expm_frechet`).  `adjoint.adjoint_gradient` (the costate route) is the
independent cross-check of this Jacobian (tests).

Method.  SQP on the KKT system (W = diag of the τ weights).  The first step is
Gauss–Newton: θ⁺ = W⁻¹Jᵀλ with λ = (JW⁻¹Jᵀ)⁺(Jθ − c(θ)), the least-energy point
of the linearised constraint set.  Iterating that alone converges only
linearly — slowly (rate ≈ 0.99 on a rank-1 d = 2 example) when the multipliers
are large, as it ignores the curvature of c — so the Lagrangian Hessian, started
at ∇²E = 2W, is updated by Powell-damped BFGS.  Steps are damped by an Armijo
line search on the ℓ1 merit E + ρ‖c‖₁ with a second-order correction (Maratos
effect).  A fixed point satisfies Wθ = Jᵀλ and c = 0: a KKT point — a local
stationary point, not a proven global minimum.  Pseudo-inverses make
rank-deficient Σ work (there the Σ rows of J are dependent: the reachable set
has dimension below d(d+1)/2).

Polish.  The float solution reaches c ≈ 1e-13.  At `POLISH_DPS` digits c is
re-evaluated with mpmath.expm and minimum-norm (W-metric) chord steps
Δ = −W⁻¹Jᵀ(JW⁻¹Jᵀ)⁺c with the double-precision J: the contraction per step is
≈ ‖J_exact − J_float‖·‖(JW⁻¹Jᵀ)⁺‖ ≈ 1e-13, so three or four steps reach
|c| ~ 1e-45.  The controls are then rounded to `controls.CONTROL_DIGITS`-digit
rationals (`controls.exact_matrix`), and the terminal error of the *rounded*
controls is re-measured by an mpmath Taylor integration of eq. 1.1
(`controls.terminal_error_mp`).  They are B = V = 0 segments, so the
`reachability` certificate (arb_mat exponentials) applies to them as it is.

Full class (optional).  θ_k = (A_k, B_k, V_k, b_k), E = Σ τ_k ‖θ_k‖².  No closed
form: c by DOP853, one row of J per costate solve (`adjoint.adjoint_gradient`
with a linear terminal functional), the same SQP started from the congruence
optimum (a feasible point of the larger class), the polish re-integrating
eq. 1.1 in mpmath at `FULL_POLISH_DPS` digits.  Here the terminal-error
re-measurement uses the same integrator as the polish; the independent check
is the certificate (validated Taylor enclosure in `check_reachability`).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import mpmath
import numpy as np
from scipy.linalg import expm, expm_frechet

from riccati_verify.certify.controls import (CONSTRUCT_DPS, VERIFY_DPS, certificate_tolerance, control_energy, exact_matrix,
                                             exact_vector, mp_matrix, mp_vector, terminal_error_mp, to_mpf)
from riccati_verify.certify.steering import ReachResult, with_measures
from riccati_verify.numeric.flow import Segment
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.numeric.views import float_view

__all__ = ["CLASSES", "MinEnergyResult", "POLISH_DPS", "POLISH_TARGET", "TerminalConstraint", "as_reach_result",
           "constraints", "constraints_and_jacobian", "constraints_mp", "full_constraints",
           "full_constraints_and_jacobian", "grid_segments", "kkt_residual", "min_norm_correction",
           "minimal_energy", "polish", "resample", "sqp"]

POLISH_DPS = 60
POLISH_TARGET = mpmath.mpf("1e-48")
MAX_ITER = 300
FLOAT_TOL = 1e-12         # |c|∞ and relative step size at which the float SQP stops
PINV_RCOND = 1e-10        # singular values below this (relative) are the dependent Σ rows
FULL_POLISH_DPS = 45      # the full class re-integrates eq. 1.1 per polish step (mpmath odefun)
FULL_POLISH_TARGET = mpmath.mpf("1e-40")
CLASSES = ("congruence", "full")


@dataclass
class MinEnergyResult:
    """Least-energy controls and the evidence about them: exact rational controls, their energy
    against the construction's, and how well they meet the constraint and the KKT conditions
    (a local stationary point, not a proven global minimum)."""

    segments: list[Segment]          # exact rational controls (B = V = 0 unless control_class is "full")
    energy: float                    # Σ τ_k‖θ_k‖² of the rounded controls
    constructive_energy: float
    constraint_error: float          # max |c| of the rounded controls at the polish precision
    terminal_error: float | None     # max-entry error of the mpmath re-integration (None: not measured)
    terminal_error_dps: int
    kkt_residual: float              # ‖Wθ − Jᵀλ‖ / max(‖Wθ‖, 1e-12) (least-squares λ), float Jacobian
    iterations: int                  # float SQP iterations (full class: congruence stage + full stage)
    polish_steps: int
    converged: bool                  # float SQP met its tolerance (else: stopped by the iteration cap / line search)
    seconds: float
    control_class: str = "congruence"


# ---------------------------------------------------------------- parametrisation

def _layout(d: int) -> int:
    return d * d + d


def _generators(theta: np.ndarray, taus: Sequence[float], d: int) -> list[np.ndarray]:
    """X_k = τ_k [[A_k, b_k], [0, 0]] for every segment."""
    n = _layout(d)
    out = []
    for k, tau in enumerate(taus):
        blk = theta[k * n:(k + 1) * n]
        X = np.zeros((d + 1, d + 1))
        X[:d, :d] = tau * blk[:d * d].reshape(d, d)
        X[:d, d] = tau * blk[d * d:]
        out.append(X)
    return out


def _triu(d):
    return [(i, j) for i in range(d) for j in range(i, d)]


def _residual(Z, m0, S0, m1, S1, d):
    """c from the product Z (numpy float or object arrays)."""
    P = Z[:d, :d]
    return _residual_ms(P @ m0 + Z[:d, d], P @ S0 @ P.T, m1, S1, d)


def constraints(theta: np.ndarray, taus, state0: Gaussian, target: Gaussian) -> np.ndarray:
    """c(θ) in double precision."""
    d = state0.dim
    Z = np.eye(d + 1)
    for X in _generators(theta, [float(t) for t in taus], d):
        Z = expm(X) @ Z
    m0, S0 = float_view(state0)
    m1, S1 = float_view(target)
    return _residual(Z, np.asarray(m0), np.asarray(S0), np.asarray(m1), np.asarray(S1), d)


def constraints_and_jacobian(theta: np.ndarray, taus, state0: Gaussian, target: Gaussian):
    """(c(θ), J = ∂c/∂θ) in double precision, J from Fréchet derivatives of expm."""
    d = state0.dim
    K = len(taus)
    n = _layout(d)
    ft = [float(t) for t in taus]
    Xs = _generators(theta, ft, d)
    Zs = [expm(X) for X in Xs]
    # before[k] = Z_{k−1}···Z_0 and after[k] = Z_{K−1}···Z_{k+1} (0-based segments)
    before = [np.eye(d + 1)]
    for Zk in Zs:
        before.append(Zk @ before[-1])
    after = [np.eye(d + 1)] * K
    for k in range(K - 2, -1, -1):
        after[k] = after[k + 1] @ Zs[k + 1]
    Z = before[-1]
    m0, S0 = (np.asarray(a) for a in float_view(state0))
    m1, S1 = (np.asarray(a) for a in float_view(target))
    c = _residual(Z, m0, S0, m1, S1, d)
    P = Z[:d, :d]
    y = np.append(m0, 1.0)
    tri = _triu(d)
    J = np.empty((len(c), K * n))
    for k in range(K):
        for q in range(n):
            E = np.zeros((d + 1, d + 1))
            if q < d * d:
                E[q // d, q % d] = ft[k]
            else:
                E[q - d * d, d] = ft[k]
            L = expm_frechet(Xs[k], E, compute_expm=False)
            dZ = after[k] @ L @ before[k]
            dP = dZ[:d, :d]
            dm = (dZ @ y)[:d]
            dS = dP @ S0 @ P.T
            dS = dS + dS.T
            J[:, k * n + q] = np.concatenate([dm, [dS[i, j] for i, j in tri]])
    return c, J


def constraints_mp(theta_mp: list, taus, state0: Gaussian, target: Gaussian) -> list:
    """c(θ) at the current mpmath precision (θ a list of mpf)."""
    d = state0.dim
    n = _layout(d)
    Z = mpmath.eye(d + 1)
    for k, tau in enumerate(taus):
        t = to_mpf(Fraction(tau))
        blk = theta_mp[k * n:(k + 1) * n]
        X = mpmath.matrix(d + 1, d + 1)
        for i in range(d):
            for j in range(d):
                X[i, j] = t * blk[i * d + j]
            X[i, d] = t * blk[d * d + i]
        Z = mpmath.expm(X) * Z
    m0, S0 = mp_vector(state0.mean), mp_matrix(state0.cov)
    m1, S1 = mp_vector(target.mean), mp_matrix(target.cov)
    P = Z[0:d, 0:d]
    m = P * m0
    S = P * S0 * P.T
    return [m[i] + Z[i, d] - m1[i] for i in range(d)] + [S[i, j] - S1[i, j] for i, j in _triu(d)]


# ---------------------------------------------------------------- the full class

class _LinearFunctional:
    """L(m, Σ) = ⟨e, (m, Σ)⟩ for one constraint component, in `adjoint.TerminalLoss`'s interface, so
    that one costate solve gives one row of J."""

    def __init__(self, d: int, row: int):
        self.d, self.row = d, row

    def value_and_grad(self, m, S):
        d = self.d
        gm, gS = np.zeros(d), np.zeros((d, d))
        if self.row < d:
            gm[self.row] = 1.0
            return float(m[self.row]), gm, gS
        i, j = _triu(d)[self.row - d]
        gS[i, j] = 1.0
        return float(S[i, j]), gm, gS


def _full_segments(theta: np.ndarray, taus, d) -> list[Segment]:
    """Float θ = [(A_k, B_k, V_k, b_k)] as segments (floats are exact binary rationals)."""
    n = 3 * d * d + d
    out = []
    for k, tau in enumerate(taus):
        blk = theta[k * n:(k + 1) * n]
        A, B, V = (blk[q * d * d:(q + 1) * d * d].reshape(d, d) for q in range(3))
        out.append(Segment(Fraction(tau), Params.from_arrays(A, B, V, blk[3 * d * d:])))
    return out


def full_constraints(theta, taus, state0: Gaussian, target: Gaussian):
    """c(θ) for general (A, B, V, b) segments by DOP853 (rtol 1e-12); None on blow-up."""
    from riccati_verify.numeric.flow import integrate_moments

    d = state0.dim
    fr = integrate_moments(_full_segments(theta, taus, d), state0, float(sum(taus)), n_samples=2)
    if fr.blowup:
        return None
    m1, S1 = (np.asarray(a) for a in float_view(target))
    return _residual_ms(fr.mean, fr.cov, m1, S1, d)


def full_constraints_and_jacobian(theta, taus, state0: Gaussian, target: Gaussian):
    """(c, J) for general segments: one costate (adjoint) solve per row of J (float, rtol 1e-12)."""
    from riccati_verify.numeric.adjoint import adjoint_gradient

    d = state0.dim
    segs = _full_segments(theta, taus, d)
    c = full_constraints(theta, taus, state0, target)
    if c is None:
        raise ArithmeticError("the moment flow blows up under these controls")
    J = np.array([adjoint_gradient(segs, state0, _LinearFunctional(d, r)).flat() for r in range(len(c))])
    return c, J


def _residual_ms(m, S, m1, S1, d):
    return np.concatenate([m - m1, [S[i, j] - S1[i, j] for i, j in _triu(d)]])


# ---------------------------------------------------------------- one control class on one grid

@dataclass(frozen=True)
class TerminalConstraint:
    """The constraint c(θ) = (m(T) − m1, upper triangle of Σ(T) − Σ1) over K piecewise-constant segments
    (durations `taus`), its Jacobian, and the map between θ and exact rational segments."""

    control_class: str                # "congruence" (θ_k = (A_k, b_k)) or "full" (θ_k = (A_k, B_k, V_k, b_k))
    taus: tuple
    state0: Gaussian
    target: Gaussian

    @property
    def d(self) -> int:
        """The state dimension."""
        return self.state0.dim

    @property
    def full(self) -> bool:
        """All of (A, B, V, b) vary (else B = V = 0, whose flow has a closed form)."""
        return self.control_class == "full"

    def weights(self) -> np.ndarray:
        """The τ_k of each coordinate of θ: E = Σ w θ², the metric of the minimum-norm steps."""
        n = 3 * self.d * self.d + self.d if self.full else _layout(self.d)
        return np.repeat([float(t) for t in self.taus], n)

    def c(self, theta):
        """c(θ) in floats, or None where it overflows or blows up (a trial step to reject)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")        # overflow in a trial step is a rejected step
            ct = (full_constraints if self.full else constraints)(theta, self.taus, self.state0, self.target)
        return ct if ct is not None and np.all(np.isfinite(ct)) else None

    def cj(self, theta):
        """(c(θ), ∂c/∂θ) in floats: Fréchet derivatives (congruence) or costate solves (full)."""
        return (full_constraints_and_jacobian if self.full else constraints_and_jacobian)(
            theta, self.taus, self.state0, self.target)

    def segments(self, values) -> list[Segment]:
        """Controls rounded to controls.CONTROL_DIGITS-digit rationals (values: floats or mpf)."""
        d = self.d
        z = tuple((Fraction(0),) * d for _ in range(d))
        n = self.weights().size // len(self.taus)
        mat = lambda v, q: exact_matrix(mpmath.matrix([[v[q * d * d + i * d + j] for j in range(d)]
                                                         for i in range(d)]))
        out = []
        with mpmath.workdps(max(POLISH_DPS, CONSTRUCT_DPS)):    # mpf(x) rounds to the working precision
            for k, tau in enumerate(self.taus):
                blk = [mpmath.mpf(x) for x in values[k * n:(k + 1) * n]]
                nm = 3 if self.full else 1
                b = exact_vector(mpmath.matrix(blk[nm * d * d:]))
                A, B, V = (mat(blk, 0), mat(blk, 1), mat(blk, 2)) if self.full else (mat(blk, 0), z, z)
                out.append(Segment(Fraction(tau), Params(A, B, V, b)))
        return out

    def theta(self, segments: Sequence[Segment]) -> np.ndarray:
        """The inverse of `segments`: exact controls back in θ's float layout."""
        parts = (0, 1, 2) if self.full else (0,)
        return np.concatenate([np.concatenate([np.asarray(float_view(s.params)[q]).ravel() for q in parts]
                                              + [np.asarray(float_view(s.params)[3])]) for s in segments])

    def c_mp(self, values) -> list:
        """c at the current mpmath precision: closed form (congruence) or a Taylor re-integration of
        the controls rounded to rationals (full class)."""
        if not self.full:
            return constraints_mp(values, self.taus, self.state0, self.target)
        from riccati_verify.numeric.flow import integrate_segments_mp

        m, S = integrate_segments_mp(self.segments(values), self.state0, dps=mpmath.mp.dps)
        m1, S1 = mp_vector(self.target.mean), mp_matrix(self.target.cov)
        return [m[i] - m1[i] for i in range(self.d)] + [S[i][j] - S1[i, j] for i, j in _triu(self.d)]


# ---------------------------------------------------------------- the optimiser

def kkt_residual(theta: np.ndarray, J: np.ndarray, w: np.ndarray) -> float:
    """‖Wθ − Jᵀλ‖ / max(‖Wθ‖, 1e-12) with λ the least-squares multiplier (∇E = 2Wθ, so λ is half
    the Lagrange multiplier).  The floor keeps controls that are zero up to rounding (start = target)
    from reading as non-stationary."""
    g = w * theta
    lam = np.linalg.lstsq(J.T, g, rcond=None)[0]
    return float(np.linalg.norm(g - J.T @ lam) / max(np.linalg.norm(g), 1e-12))


def min_norm_correction(J: np.ndarray, w: np.ndarray) -> np.ndarray:
    """G = W⁻¹Jᵀ(JW⁻¹Jᵀ)⁺: θ ↦ θ − G(Jθ…) is the W-metric minimum-norm correction."""
    JW = J / w
    return JW.T @ np.linalg.pinv(JW @ J.T, rcond=PINV_RCOND)


def _accept(phi_trial, phi0, alpha, slope) -> bool:
    return phi_trial is not None and phi_trial <= phi0 + 1e-4 * alpha * min(slope, 0.0)


def sqp(theta: np.ndarray, prob: TerminalConstraint, *, max_iter: int = MAX_ITER):
    """Float SQP with an ℓ1-merit line search.  Returns (θ, J, iterations, converged).

    Step: minimise ½pᵀHp + ∇Eᵀp subject to Jp = −c, i.e. p = −H⁻¹(∇E − Jᵀμ) with
    (JH⁻¹Jᵀ)μ = JH⁻¹∇E − c.  H starts at ∇²E = 2W, where the step lands on the least-energy
    point of the linearised constraints (Gauss–Newton); that alone converges only linearly,
    slowly when the multipliers are large (it ignores the curvature of c), so H is then
    updated by Powell-damped BFGS on the Lagrangian gradient ∇E − Jᵀμ (stays positive
    definite; superlinear convergence)."""
    w = prob.weights()
    n = theta.size
    H = np.diag(2 * w)
    rho = 1.0
    c, J = prob.cj(theta)
    g = 2 * w * theta
    phi = lambda th, cc: None if cc is None else float(np.sum(w * th * th)) + rho * float(np.sum(np.abs(cc)))
    for it in range(1, max_iter + 1):
        Hi = np.linalg.inv(H)
        JHi = J @ Hi
        Sp = np.linalg.pinv(JHi @ J.T, rcond=PINV_RCOND)
        mu = Sp @ (JHi @ g - c)
        p = -Hi @ (g - J.T @ mu)
        G = JHi.T @ Sp                          # H⁻¹Jᵀ(JH⁻¹Jᵀ)⁺: minimum-norm return to c = 0
        rho = max(rho, 1.5 * float(np.max(np.abs(mu), initial=0.0)))   # ρ > ‖μ‖∞: exact penalty
        if np.max(np.abs(c)) < FLOAT_TOL and np.linalg.norm(p) < FLOAT_TOL * (1.0 + np.linalg.norm(theta)):
            return theta, J, it, True
        phi0 = phi(theta, c)
        slope = float(g @ p) - rho * float(np.sum(np.abs(c)))
        if abs(slope) <= 1e-13 * (1.0 + phi0):
            # the merit cannot resolve this step (its change is rounding): take the full step
            trial = theta + p
        else:
            alpha = 1.0
            while True:
                trial = theta + alpha * p
                ct = prob.c(trial)
                if _accept(phi(trial, ct), phi0, alpha, slope):
                    break
                if alpha == 1.0 and ct is not None:
                    # second-order correction against the Maratos effect: near the solution the
                    # curvature of c makes ρ‖c(θ + p)‖₁ reject good full steps; pull the trial
                    # back to the constraint set with one more minimum-norm correction
                    soc = trial - G @ ct
                    cs = prob.c(soc)
                    if _accept(phi(soc, cs), phi0, alpha, slope):
                        trial = soc
                        break
                alpha /= 2
                if alpha < 1e-12:
                    return theta, J, it, False
        try:
            c_new, J_new = prob.cj(trial)
        except ArithmeticError:                 # a full step into a blow-up: stop where we are
            return theta, J, it, False
        g_new = 2 * w * trial
        s_ = trial - theta
        y = (g_new - J_new.T @ mu) - (g - J.T @ mu)
        Hs = H @ s_
        sHs = float(s_ @ Hs)
        if sHs > 1e-300 * n:
            sy = float(s_ @ y)
            if sy < 0.2 * sHs:                  # Powell damping keeps H positive definite
                t = 0.8 * sHs / (sHs - sy)
                y = t * y + (1 - t) * Hs
                sy = float(s_ @ y)
            H = H + np.outer(y, y) / sy - np.outer(Hs, Hs) / sHs
        theta, c, J, g = trial, c_new, J_new, g_new
    return theta, J, max_iter, False


def polish(theta: np.ndarray, J: np.ndarray, prob: TerminalConstraint, *, dps: int = POLISH_DPS,
           target: mpmath.mpf = POLISH_TARGET, max_steps: int = 8):
    """Chord (simplified Newton) steps at `dps` digits with the float J: returns (θ as mpf list, |c|∞, steps)
    for the best iterate seen."""
    G = min_norm_correction(J, prob.weights())
    with mpmath.workdps(dps):
        Gm = [[mpmath.mpf(float(x)) for x in row] for row in G]
        th = [mpmath.mpf(float(x)) for x in theta]
        c = prob.c_mp(th)
        err = max(abs(x) for x in c)
        steps = 0
        while err > target and steps < max_steps:
            new_th = [t - mpmath.fsum(g * x for g, x in zip(row, c)) for t, row in zip(th, Gm)]
            new_c = prob.c_mp(new_th)
            new = max(abs(x) for x in new_c)
            steps += 1
            if not new < err:          # the chord iteration stopped contracting: keep the best
                break
            th, c, err = new_th, new_c, new
        return th, err, steps


def grid_segments(start: Sequence[Segment], n_segments: int) -> int:
    """The count of equal pieces nearest n_segments on which `resample` is exact for the
    constructions' equal-length start segments: a multiple of len(start)."""
    k = len(start)
    return n_segments if n_segments % k == 0 else k * max(1, round(n_segments / k))


def resample(start: Sequence[Segment], n_segments: int) -> tuple[list[Fraction], np.ndarray]:
    """The start controls on n_segments equal pieces: piece k takes the controls of the start
    segment containing its midpoint (exact when every start boundary is a grid point)."""
    T = sum(Fraction(s.duration) for s in start)
    taus = [T / n_segments] * n_segments
    bounds = np.cumsum([float(s.duration) for s in start])
    blocks = []
    for k in range(n_segments):
        mid = float(T) * (k + 0.5) / n_segments
        s = start[min(int(np.searchsorted(bounds, mid)), len(start) - 1)]
        A, B, V, b = (np.asarray(x) for x in float_view(s.params))
        if np.any(B) or np.any(V):
            raise ValueError("minimal-energy controls start from B = V = 0 controls")
        blocks.append(np.concatenate([A.ravel(), b]))
    return taus, np.concatenate(blocks)


def minimal_energy(state0: Gaussian, target: Gaussian, start: Sequence[Segment], *, n_segments: int = 4,
                   control_class: str = "congruence", verify_dps: int | None = VERIFY_DPS,
                   max_iter: int = MAX_ITER) -> MinEnergyResult:
    """Least-energy controls on `n_segments` equal pieces reaching `target` exactly (to the rounding
    of the published rationals), started from the reaching controls `start`.

    control_class "congruence": B = V = 0, closed-form flow, polish at POLISH_DPS digits.
    control_class "full": all of (A, B, V, b); J by costate solves, c at FULL_POLISH_DPS digits by
    mpmath Taylor integration.  It starts from the congruence-class optimum (embedded with
    B = V = 0), a feasible point from which the line search decreases E + ρ‖c‖₁, so the energy
    is expected to drop below the congruence optimum's (checked, not assumed, in the tests); V
    moves first: at B = V = 0 only V acts to first order (on the mean)."""
    if control_class not in CLASSES:
        raise ValueError(f"unknown control class {control_class!r}")
    t0 = time.perf_counter()
    taus, theta = resample(start, n_segments)
    prob = TerminalConstraint("congruence", tuple(taus), state0, target)
    theta, J, its, ok = sqp(theta, prob, max_iter=max_iter)
    if control_class == "full":
        d = state0.dim
        n = _layout(d)
        blocks = [theta[k * n:(k + 1) * n] for k in range(len(taus))]
        theta = np.concatenate([np.concatenate([blk[:d * d], np.zeros(2 * d * d), blk[d * d:]]) for blk in blocks])
        prob = TerminalConstraint("full", tuple(taus), state0, target)
        theta, J, its_full, ok = sqp(theta, prob, max_iter=max_iter)
        its += its_full
    dps, tgt = (FULL_POLISH_DPS, FULL_POLISH_TARGET) if prob.full else (POLISH_DPS, POLISH_TARGET)
    th_mp, _, steps = polish(theta, J, prob, dps=dps, target=tgt)
    segs = prob.segments(th_mp)
    exact_theta = prob.theta(segs)
    with mpmath.workdps(dps):
        cerr = float(max(abs(x) for x in prob.c_mp([to_mpf(Fraction(x)) for x in _exact_values(segs, prob)])))
    _, Jr = prob.cj(exact_theta)
    kkt = kkt_residual(exact_theta, Jr, prob.weights())
    terr = float(terminal_error_mp(segs, state0, target, verify_dps)) if verify_dps else None
    return MinEnergyResult(segs, control_energy(segs), control_energy(start), cerr, terr,
                           verify_dps or 0, kkt, its, steps, ok, time.perf_counter() - t0, control_class)


def _exact_values(segs: Sequence[Segment], prob: TerminalConstraint) -> list[Fraction]:
    names = ("A", "B", "V") if prob.full else ("A",)
    return [x for s in segs for x in [y for nm in names for row in getattr(s.params, nm) for y in row]
            + list(s.params.b)]


def as_reach_result(res: MinEnergyResult, state0: Gaussian, target: Gaussian,
                    tolerance: Fraction | None = None) -> ReachResult:
    """The minimal-energy controls as a `ReachResult` (for `reach.reachability_certificate`).

    `reachable` only when the SQP converged and the re-integrated terminal error was measured
    and is <= `tolerance` (None: `controls.certificate_tolerance` at the measurement's digits, fixed
    in advance, 1e-30 at the default); otherwise the controls are kept but the result says why
    they are not reaching controls, so no certificate is built for them."""
    if tolerance is None:
        tolerance = certificate_tolerance(dps=res.terminal_error_dps or VERIFY_DPS)
    cls = "B = V = 0" if res.control_class == "congruence" else "all of A, B, V, b"
    if not res.converged:
        ok, why = False, (f"the minimal-energy SQP did not converge ({res.iterations} iterations, "
                          f"{res.polish_steps} polish steps); its controls are not claimed to reach the target")
    elif res.terminal_error is None:
        ok, why = False, "the minimal-energy controls' terminal error was not measured"
    elif not res.terminal_error <= tolerance:
        ok, why = False, (f"the minimal-energy controls miss the target: measured terminal error "
                          f"{res.terminal_error:.3e} ({res.terminal_error_dps} digits) > tolerance {tolerance}")
    else:
        ok, why = True, "minimal-energy controls (KKT point of the SQP)"
    out = ReachResult(ok, why, f"minimal energy ({cls})",
                        list(res.segments), state0.rank, target.rank,
                        f"minimal-energy SQP ({res.control_class} class) over {len(res.segments)} segments, "
                        "polished at high precision", False, any(x for s in res.segments for x in s.params.b))
    out.terminal_error = res.terminal_error
    return with_measures(out)

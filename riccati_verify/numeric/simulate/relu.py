"""ReLU feed-forward (MATH.md §12): how far a Gaussian token law drifts from Gaussian.

The affine feed-forward Ax + b is replaced by W2·ReLU(W1 x + c) + offset (+ b from
the parameters).  The flow is then not affine and Gaussians do not stay Gaussian.
`shifted_relu(A, s)` is the block A(ReLU(x + s·1) − s·1): it equals Ax exactly
where every coordinate of x + s·1 is positive, so a large shift makes the ReLU
inactive (a control case) and s = 0 puts the kink through the bulk.

Deviation statistics of a point cloud against its moment-matched Gaussian:

* the standardised third and fourth cumulant tensors (κ3, κ4 of the whitened
  sample); for a Gaussian both vanish;
* Mardia's b1 = ‖κ3‖²_F (N b1/6 ~ χ² with d(d+1)(d+2)/6 degrees of freedom under
  Gaussianity) and b2 = mean (zᵀz)², ≈ N(d(d+2), 8d(d+2)/N) under Gaussianity;
* the sliced W2 to N(m̂, Σ̂) (`rates.gaussian_quantile_w2`).

`short_time_exponent` fits ‖κ3(t) − κ3(0)‖ ≈ C t^k on the same particles
(common random numbers: the t = 0 sample's own skewness cancels).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from riccati_verify.numeric.flow import Schedule
from riccati_verify.core.model import Gaussian
from riccati_verify.numeric.simulate.particles import TransformerDrift, integrate_particles, sample_gaussian
from riccati_verify.numeric.simulate.rates import RateFit, fit_power_law, gaussian_quantile_w2

__all__ = ["Gaussianity", "ReLUFeedForward", "ReLURun", "extrapolated_exponent", "gaussianity", "relu_deviation", "short_time_exponent", "shifted_relu", "whiten"]


@dataclass(frozen=True)
class ReLUFeedForward:
    """x ↦ W2 ReLU(W1 x + c) + offset, applied to the rows of X."""

    W1: np.ndarray
    c: np.ndarray
    W2: np.ndarray
    offset: np.ndarray

    def __call__(self, X: np.ndarray) -> np.ndarray:
        dt = X.dtype
        P = X @ self.W1.T.astype(dt) + self.c.astype(dt)
        np.maximum(P, 0, out=P)
        return P @ self.W2.T.astype(dt) + self.offset.astype(dt)

    def inactive_on(self, X: np.ndarray) -> bool:
        """True when every preactivation is positive (the block is then affine on X)."""
        return bool(np.all(X @ self.W1.T + self.c > 0))


def shifted_relu(A: np.ndarray, shift: float) -> ReLUFeedForward:
    """The feed-forward x ↦ A(ReLU(x + c·1) − c·1), c = `shift` (affine, = Ax, where x + c·1 > 0)."""
    d = A.shape[0]
    s = np.full(d, float(shift))
    return ReLUFeedForward(np.eye(d), s, np.asarray(A, float), -np.asarray(A, float) @ s)


@dataclass(frozen=True)
class Gaussianity:
    """Deviation of a token cloud from its moment-matched Gaussian: cumulants, Mardia statistics, sliced W2."""

    kappa3: np.ndarray        # standardised third cumulant tensor (d, d, d)
    kappa4: np.ndarray        # standardised fourth cumulant tensor (d, d, d, d)
    mardia_b1: float
    mardia_b2: float
    mardia_b1_pvalue: float   # under the Gaussian null
    mardia_b2_z: float
    sliced_w2: float


def whiten(X: np.ndarray) -> np.ndarray:
    """(X − m̂) Σ̂^{-1/2} with the symmetric root: unlike an eigenvector basis (whose order and signs
    can jump between times) it moves continuously with the cloud, so κ3(t) − κ3(0) is meaningful."""
    X = np.asarray(X, dtype=np.float64)
    Y = X - X.mean(axis=0)
    S = Y.T @ Y / len(Y)
    w, U = np.linalg.eigh(S)
    return Y @ ((U / np.sqrt(np.maximum(w, 1e-300))) @ U.T)


def gaussianity(X: np.ndarray, *, seed: int = 0, n_dirs: int = 32) -> Gaussianity:
    """The `Gaussianity` statistics of the rows of X (the sliced W2 uses `n_dirs` directions drawn with `seed`)."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    Z = whiten(X)
    k3 = np.einsum("ni,nj,nk->ijk", Z, Z, Z) / n
    m4 = np.einsum("ni,nj,nk,nl->ijkl", Z, Z, Z, Z) / n
    I = np.eye(d)
    k4 = m4 - (np.einsum("ij,kl->ijkl", I, I) + np.einsum("ik,jl->ijkl", I, I) + np.einsum("il,jk->ijkl", I, I))
    b1 = float(np.sum(k3**2))
    b2 = float(np.mean(np.sum(Z**2, axis=1) ** 2))
    dof = d * (d + 1) * (d + 2) / 6
    p1 = float(stats.chi2.sf(n * b1 / 6, dof))
    z2 = (b2 - d * (d + 2)) / np.sqrt(8 * d * (d + 2) / n)
    m, Y = X.mean(axis=0), X - X.mean(axis=0)
    w2 = gaussian_quantile_w2(X, m, Y.T @ Y / n, n_dirs=n_dirs, seed=seed)
    return Gaussianity(k3, k4, b1, b2, p1, float(z2), w2)


@dataclass(frozen=True)
class ReLURun:
    """A ReLU particle run: Gaussianity statistics and cumulant changes along the recording times."""

    t: np.ndarray
    stats: list            # Gaussianity at each t
    kappa3_change: np.ndarray   # ‖κ3(t) − κ3(0)‖_F
    kappa4_change: np.ndarray
    inactive: bool         # ReLU inactive at every recorded step
    seed: int
    ess_min: float
    ess_median: float
    blowup: bool
    reason: str


def relu_deviation(schedule: Schedule, state: Gaussian, ff: ReLUFeedForward, n_tokens: int, time: float,
                   steps: int, *, seed: int, method: str = "rk4", records: int = 8) -> ReLURun:
    """Run the ReLU particle system and measure the deviation from Gaussian at `records` times."""
    X0 = sample_gaussian(state, n_tokens, np.random.default_rng(seed))
    drift = TransformerDrift(schedule, feedforward=ff)
    per = max(1, steps // records)
    ts, sts, inactive, X, ess_min, ess_med = [0.0], [gaussianity(X0, seed=seed)], ff.inactive_on(X0), X0, [], []
    done, blow, reason = 0, False, ""
    while done < steps:
        k = min(per, steps - done)
        r = integrate_particles(drift, X, time * k / steps, k, method=method, record_every=k)
        ess_min.append(r.ess_min); ess_med.append(r.ess_median)
        if r.blowup:
            blow, reason = True, r.reason
            break
        X = r.X
        done += k
        ts.append(time * done / steps)
        sts.append(gaussianity(X, seed=seed))
        inactive = inactive and ff.inactive_on(X)
    k3c = np.array([np.linalg.norm(s.kappa3 - sts[0].kappa3) for s in sts])
    k4c = np.array([np.linalg.norm(s.kappa4 - sts[0].kappa4) for s in sts])
    return ReLURun(np.array(ts), sts, k3c, k4c, inactive, seed, float(min(ess_min)), float(np.median(ess_med)),
                   blow, reason)


def short_time_exponent(run: ReLURun, *, level: float = 0.99) -> RateFit:
    """Fit ‖κ3(t) − κ3(0)‖ ≈ C t^k over the recorded t > 0."""
    return fit_power_law(run.t[1:], run.kappa3_change[1:], level=level)


def extrapolated_exponent(run: ReLURun, *, level: float = 0.99) -> tuple[float, float]:
    """The growth exponent at t → 0 and an error estimate for it.

    With Δ(t) = αt^k(1 + βt + …) the local log-slope between consecutive records is k + O(t), so
    a global log-log fit is biased by the curvature.  The local slopes are extrapolated to t = 0
    with a quadratic in the interval midpoints; the error estimate is the distance to the linear
    extrapolation (the truncation error of the lower order) plus `level`-quantile times the
    intercept's regression standard error.  Returns (k₀, error estimate).
    """
    t, D = run.t[1:], run.kappa3_change[1:]
    k = np.diff(np.log(D)) / np.diff(np.log(t))
    mid = np.sqrt(t[1:] * t[:-1])
    if len(k) < 4:
        raise ValueError("exponent extrapolation needs at least five records after t = 0")
    X = np.vstack([np.ones_like(mid), mid, mid**2]).T
    coef, res, *_ = np.linalg.lstsq(X, k, rcond=None)
    dof = len(k) - 3
    s2 = float(res[0]) / dof if dof > 0 and len(res) else 0.0
    se0 = float(np.sqrt(s2 * np.linalg.inv(X.T @ X)[0, 0]))
    lin = stats.linregress(mid, k).intercept
    q = stats.t.ppf(0.5 + level / 2, max(dof, 1))
    return float(coef[0]), float(abs(coef[0] - lin) + q * se0)

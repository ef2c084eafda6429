"""Common-noise particle system (MATH.md §11) and its Gaussian moment SDE.

    dx_i = v[μ^N](x_i) dt + σ (x_i − m^N) dW_t,   one Brownian motion W for all tokens.

Schemes: Euler–Maruyama and Milstein (the noise is scalar and linear in the
centred token, so Milstein's correction is ½σ²(x_i − m^N)(ΔW² − h): the
derivative of g(x)_i = σ(x_i − m^N) along g is σ·g_i, since g has zero mean).
Stratonovich (∘dW) is simulated as Itô with the drift correction ½σ²(x_i − m^N)
derived in `symbolic.noise.stratonovich_correction`.

The prediction along the same Brownian path comes from the Gaussian moment
SDE in its pathwise form (`symbolic.noise.pathwise_solution_identity`):
Σ = e^{2Z}Σ̃ with Z = σW − σ²t/2 (Itô) or σW (Stratonovich) and
dΣ̃/dt = JΣ̃ + Σ̃Jᵀ, J = A + VΣB, ṁ = (A+V)m + VΣBm + b.  This random ODE is
integrated with RK4 on the simulation grid (W linear between grid points).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from riccati_verify.core.errors import InputError
from riccati_verify.numeric.flow import Schedule
from riccati_verify.core.model import Gaussian
from riccati_verify.core.progress import Progress
from riccati_verify.numeric.simulate.particles import DEFAULT_BLOWUP_NORM, TransformerDrift, ess_warnings, check_steps, empirical_moments, params_getter, sample_gaussian
from riccati_verify.numeric.views import float_view

__all__ = ["CALCULI", "ExponentEstimate", "NoiseResult", "SCHEMES", "moment_exponents", "moment_sde_path",
           "noise_increment", "simulate_common_noise"]

SCHEMES = ("euler", "milstein")
CALCULI = ("ito", "stratonovich")


def noise_increment(Y: np.ndarray, dW, h: float, sigma: float, scheme: str, calculus: str) -> np.ndarray:
    """The non-attention part of one step for centred positions Y (any shape; dW broadcasts)."""
    if scheme not in SCHEMES:
        raise InputError(f"unknown scheme '{scheme}' (choose {', '.join(SCHEMES)})")
    if calculus not in CALCULI:
        raise InputError(f"unknown calculus '{calculus}' (choose {', '.join(CALCULI)})")
    inc = sigma * dW * Y
    if calculus == "stratonovich":
        inc = inc + 0.5 * sigma**2 * h * Y
    if scheme == "milstein":
        inc = inc + 0.5 * sigma**2 * (dW * dW - h) * Y
    return inc


@dataclass
class NoiseResult:
    """A common-noise run: empirical moments and the moment-SDE prediction along the same Brownian path W."""

    time: float
    t: np.ndarray = field(repr=False)
    W: np.ndarray = field(repr=False)              # Brownian path at t
    means: np.ndarray = field(repr=False)
    covs: np.ndarray = field(repr=False)
    predicted_means: np.ndarray = field(repr=False)
    predicted_covs: np.ndarray = field(repr=False)
    X: np.ndarray = field(repr=False)
    seed: int = 0
    scheme: str = "milstein"
    calculus: str = "ito"
    sigma: float = 0.0
    ess_min: float = math.inf
    ess_median: float = math.inf
    blowup: bool = False
    blowup_interval: tuple[float, float] | None = None
    reason: str = ""
    warnings: list[str] = field(default_factory=list)

    @property
    def energy(self) -> np.ndarray:
        """Interaction energy (1/N²) Σ|x_i − x_j|² = 2 tr Σ^N along t."""
        return 2 * np.trace(self.covs, axis1=1, axis2=2)

    def pathwise_rate(self) -> float:
        """(1/2T) log(E(T)/E(0)): the measured synchronisation exponent of the centred tokens."""
        E = self.energy
        return float(np.log(E[-1] / E[0]) / (2 * self.t[-1]))


def moment_sde_path(schedule: Schedule, m0: np.ndarray, S0: np.ndarray, t: np.ndarray, W: np.ndarray,
                    sigma: float, calculus: str = "ito"):
    """(means, covs) of the Gaussian moment SDE along the Brownian path W given on the grid t."""
    get = params_getter(schedule)
    shift = 0.5 * sigma**2 if calculus == "ito" else 0.0
    Zf = lambda tt, Wt: sigma * Wt - shift * tt

    def rhs(tt, Wt, m, St):
        A, B, V, b = float_view(get(tt))
        S = math.exp(2 * Zf(tt, Wt)) * St
        J = A + V @ S @ B
        JS = J @ St
        return (A + V) @ m + V @ S @ B @ m + b, JS + JS.T

    m, St = np.array(m0, float), np.array(S0, float)
    ms, Ss = [m.copy()], [St.copy()]
    with np.errstate(all="ignore"):
        for k in range(len(t) - 1):
            h, t0, W0, W1 = t[k + 1] - t[k], t[k], W[k], W[k + 1]
            Wh = 0.5 * (W0 + W1)
            k1 = rhs(t0, W0, m, St)
            k2 = rhs(t0 + h / 2, Wh, m + h / 2 * k1[0], St + h / 2 * k1[1])
            k3 = rhs(t0 + h / 2, Wh, m + h / 2 * k2[0], St + h / 2 * k2[1])
            k4 = rhs(t0 + h, W1, m + h * k3[0], St + h * k3[1])
            m = m + h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
            St = St + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
            ms.append(m.copy())
            Ss.append(math.exp(2 * Zf(t[k + 1], W1)) * St)
    Ss[0] = np.array(S0, float)
    return np.array(ms), np.array(Ss)


def simulate_common_noise(schedule: Schedule, state: Gaussian, n_tokens: int, time: float, steps: int, *,
                          sigma: float, seed: int, scheme: str = "milstein", calculus: str = "ito",
                          dtype=np.float64, feedforward=None, heads=None, block: int | None = None,
                          blowup_norm: float = DEFAULT_BLOWUP_NORM, progress: bool = False,
                          increments: np.ndarray | None = None) -> NoiseResult:
    """Simulate the common-noise particle system; the seed fixes both the tokens and W.

    `increments` (length `steps`) replaces the seeded Brownian increments, so that one path can be
    integrated with several step sizes (strong-convergence checks); the tokens still come from `seed`.
    """
    if not (math.isfinite(time) and time > 0):
        raise InputError(f"time must be positive and finite, got {time}")
    if not (math.isfinite(sigma) and sigma >= 0):
        raise InputError(f"noise level must be finite and non-negative, got {sigma}")
    check_steps(steps)
    noise_increment(np.zeros(1), 0.0, 1.0, sigma, scheme, calculus)   # validates the names
    rng = np.random.default_rng(seed)
    X = sample_gaussian(state, n_tokens, rng, dtype)
    h = time / steps
    dW = rng.standard_normal(steps) * math.sqrt(h) if increments is None else np.asarray(increments, float)
    if dW.shape != (steps,):
        raise InputError(f"expected {steps} Brownian increments, got shape {dW.shape}")
    drift = TransformerDrift(schedule, heads=heads, feedforward=feedforward, block=block)
    m, S = empirical_moments(X)
    ts, Ws, ms, Ss, emin, emed = [0.0], [0.0], [m], [S], [], []
    res = NoiseResult(time, None, None, None, None, None, None, None, seed, scheme, calculus, sigma)
    bar = Progress(steps, f"common noise (N={n_tokens}, {scheme})", enabled=progress)
    W = 0.0
    with warnings.catch_warnings(), np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        for n in range(steps):
            t = n * h
            f, ess = drift(t, X, True, t + h / 2)
            emin.append(float(np.min(ess))); emed.append(float(np.median(ess)))
            Y = X - X.mean(axis=0)
            Xn = X + h * f + noise_increment(Y, dW[n], h, sigma, scheme, calculus).astype(X.dtype)
            finite = bool(np.all(np.isfinite(Xn)))
            if not finite or float(np.max(np.abs(Xn))) > blowup_norm:
                res.blowup, res.blowup_interval = True, (t, t + h)
                res.reason = (("overflow (non-finite positions)" if not finite
                               else f"a token left the ball of radius {blowup_norm:.3g}")
                              + f" between t = {t:.6g} and t = {t + h:.6g} (step {n + 1})")
                res.time = t
                break
            X, W = Xn, W + dW[n]
            m, S = empirical_moments(X)
            ts.append(t + h); Ws.append(W); ms.append(m); Ss.append(S)
            bar.step()
    res.t, res.W, res.means, res.covs, res.X = np.array(ts), np.array(Ws), np.array(ms), np.array(Ss), X
    m0, S0 = float_view(state)
    res.predicted_means, res.predicted_covs = moment_sde_path(schedule, m0, S0, res.t, res.W, sigma, calculus)
    res.ess_min, res.ess_median = float(np.min(emin)), float(np.median(emed))
    res.warnings += ess_warnings(res.ess_min, res.ess_median)
    if not np.all(np.isfinite(res.predicted_covs[-1])):
        res.warnings.append("the Gaussian moment SDE left the floating-point range along this path")
    return res


@dataclass(frozen=True)
class ExponentEstimate:
    """A Monte Carlo p-th moment exponent with its standard error and the predicted g(p)."""

    p: float
    rate: float          # (1/T) log of the Monte Carlo estimate of E|y_T|^p / |y_0|^p
    stderr: float        # delta-method standard error of `rate`
    predicted: float     # g(p) = p(λ − σ²/2) + p²σ²/2


def moment_exponents(lam: float, sigma: float, ps, time: float, steps: int, paths: int, *, seed: int,
                     scheme: str = "milstein") -> tuple[list[ExponentEstimate], ExponentEstimate]:
    """Monte Carlo p-th moment exponents of dy = λy dt + σy dW (Itô) and the pathwise one.

    This is the centred token of the common-noise system with J = λI (for
    V = 0 all tokens share the scalar factor y, so the interaction energy is
    E(0)·y_t²).  The same `noise_increment` as the particle simulator is used.
    Returns the estimates for each p and, with p = 0 standing for it, the
    pathwise rate E[log|y_T|]/T (predicted λ − σ²/2).
    """
    check_steps(steps)
    if not 1 <= paths <= 10_000_000:
        raise InputError(f"number of paths {paths} is outside 1..10,000,000")
    rng = np.random.default_rng(seed)
    h = time / steps
    y = np.ones(paths)
    for _ in range(steps):
        dW = rng.standard_normal(paths) * math.sqrt(h)
        y = y + h * lam * y + noise_increment(y, dW, h, sigma, scheme, "ito")
    a = np.abs(y)
    out = []
    for p in ps:
        yp = a**p
        mu = float(yp.mean())
        out.append(ExponentEstimate(float(p), math.log(mu) / time,
                                    float(yp.std(ddof=1) / math.sqrt(paths) / mu / time),
                                    p * (lam - sigma**2 / 2) + p * p * sigma**2 / 2))
    la = np.log(a)
    path = ExponentEstimate(0.0, float(la.mean() / time), float(la.std(ddof=1) / math.sqrt(paths) / time),
                            lam - sigma**2 / 2)
    return out, path

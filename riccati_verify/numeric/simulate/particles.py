"""The N-token particle system of MATH.md §1 and its time integrators.

    ẋ_i = F(x_i) + b + (1/H) Σ_h V_h Σ_j softmax_j(⟨B_h x_i, x_j⟩) x_j

with F(x) = Ax (the affine feed-forward) or a ReLU block, and H = 1 head
(V, B) from the parameters unless a head set is given.  Parameters may vary
with time (a `Params`, a list of `flow.Segment`, or a callable t ↦ Params —
the same schedules `flow.integrate_moments` accepts).

RK4 is true RK4: the attention is recomputed from the stage positions at all
four stages, since the velocity field depends on the whole empirical measure.
Heun is the explicit trapezoidal rule (two attention evaluations per step).

A step whose result is not finite, or leaves the ball of radius
`blowup_norm`, stops the run; the result says so and gives the time interval
in which it happened.  Nothing is raised: a blow-up is a finding, not an error.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from riccati_verify.core.errors import InputError
from riccati_verify.numeric.flow import Schedule, Segment
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.core.progress import Progress
from riccati_verify.numeric.simulate.attention import MAX_TOKENS, attention
from riccati_verify.numeric.views import float_view

__all__ = ["DEFAULT_BLOWUP_NORM", "ESS_WARN", "HeadSet", "MAX_STEPS", "ParticleResult", "TransformerDrift", "check_steps", "empirical_moments", "ess_warnings", "integrate_particles", "params_getter", "sample_gaussian", "simulate"]

MAX_STEPS = 1_000_000
DEFAULT_BLOWUP_NORM = 1e8
ESS_WARN = 30.0
"""Below this effective sample size a query's attention average is a mean of a
handful of tokens, and the particle/moment cross-check says little."""


def ess_warnings(ess_min: float, ess_median: float) -> list[str]:
    """A collapse of the median ESS invalidates the cross-check; a small minimum alone
    only concerns outlying queries (the weights of a query x have ESS ≈ N e^{-xᵀBᵀΣBx})."""
    if ess_median < ESS_WARN:
        return [f"softmax effective sample size collapsed (median {ess_median:.3g}, min {ess_min:.3g}, "
                f"< {ESS_WARN:g}): attention averages are dominated by a few tokens and the moment "
                "cross-check is not meaningful"]
    if ess_min < ESS_WARN:
        return [f"outlying queries see few tokens (min ESS {ess_min:.3g}; median {ess_median:.3g} is fine)"]
    return []


def params_getter(schedule: Schedule) -> Callable[[float], Params]:
    """t ↦ Params for a constant, piecewise-constant or callable schedule."""
    if isinstance(schedule, Params):
        return lambda _t: schedule
    if callable(schedule):
        return schedule
    segs: Sequence[Segment] = list(schedule)
    if not segs:
        raise InputError("the control schedule is empty")
    ends = np.cumsum([s.duration for s in segs])

    def get(t: float) -> Params:
        k = int(np.searchsorted(ends, t, side="right"))
        return segs[min(k, len(segs) - 1)].params

    return get


@dataclass(frozen=True)
class HeadSet:
    """H attention heads θ_h = (V_h, B_h), averaged with weight 1/H."""

    V: np.ndarray   # (H, d, d)
    B: np.ndarray   # (H, d, d)

    @property
    def H(self) -> int:
        """The number of heads."""
        return self.V.shape[0]


class TransformerDrift:
    """The particle velocity field; call as drift(t, X, with_ess, t_step) -> (Ẋ, ess or None).

    A piecewise-constant schedule is evaluated at `t_step` (the midpoint of the current step) so
    that all stages of a step see the same segment: a switch time on the step grid is then
    resolved exactly, and RK4 keeps its order.  Callable schedules are evaluated at the stage time.
    """

    def __init__(self, schedule: Schedule, *, heads: HeadSet | None = None,
                 feedforward: Callable[[np.ndarray], np.ndarray] | None = None,
                 block: int | None = None):
        self.params_at = params_getter(schedule)
        self.piecewise = not isinstance(schedule, Params) and not callable(schedule)
        self.heads, self.feedforward, self.block = heads, feedforward, block

    def __call__(self, t: float, X: np.ndarray, with_ess: bool = False, t_step: float | None = None):
        A, B, V, b = float_view(self.params_at(t_step if (self.piecewise and t_step is not None) else t))
        dt = X.dtype
        out = (X @ A.T.astype(dt)) if self.feedforward is None else self.feedforward(X)
        out = out + b.astype(dt)
        pairs = [(V, B)] if self.heads is None else list(zip(self.heads.V, self.heads.B))
        ess = None
        for Vh, Bh in pairs:
            a = attention(X, Bh, block=self.block, with_ess=with_ess)
            out += (a.value @ np.asarray(Vh, dtype=dt).T) / len(pairs)
            if with_ess:
                ess = a.ess if ess is None else np.minimum(ess, a.ess)
        return out, ess


@dataclass
class ParticleResult:
    """A particle run: empirical moments on the recording grid and diagnostics."""

    time: float                   # time reached (== requested unless blow-up)
    X: np.ndarray = field(repr=False)       # final positions (N, d)
    t: np.ndarray = field(repr=False)       # recording times
    means: np.ndarray = field(repr=False)   # (len(t), d)
    covs: np.ndarray = field(repr=False)    # (len(t), d, d), normalised by N (the empirical measure)
    ess_min: float = math.inf     # smallest per-query ESS seen at any step
    ess_median: float = math.inf  # median over steps of the per-step median ESS
    ess_trace: np.ndarray = field(default=None, repr=False)  # per-step minimum ESS
    blowup: bool = False
    blowup_interval: tuple[float, float] | None = None
    reason: str = ""
    steps: int = 0
    method: str = "rk4"
    warnings: list[str] = field(default_factory=list)

    @property
    def mean(self) -> np.ndarray:
        """The final empirical mean."""
        return self.means[-1]

    @property
    def cov(self) -> np.ndarray:
        """The final empirical covariance (1/N normalisation)."""
        return self.covs[-1]


def empirical_moments(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance of the empirical measure (1/N normalisation), in float64."""
    X = np.asarray(X, dtype=np.float64)
    m = X.mean(axis=0)
    Y = X - m
    return m, (Y.T @ Y) / X.shape[0]


def sample_gaussian(state: Gaussian | tuple, n: int, rng: np.random.Generator,
                    dtype=np.float64) -> np.ndarray:
    """n i.i.d. draws from N(m, Σ); singular Σ is allowed (symmetric square root)."""
    if not 1 <= n <= MAX_TOKENS:
        raise InputError(f"number of tokens {n} is outside 1..{MAX_TOKENS}")
    m, S = float_view(state) if isinstance(state, Gaussian) else (np.asarray(state[0], float), np.asarray(state[1], float))
    w, U = np.linalg.eigh((S + S.T) / 2)
    root = U * np.sqrt(np.clip(w, 0, None))
    return (m + rng.standard_normal((n, len(m))) @ root.T).astype(dtype)


def check_steps(steps: int) -> None:
    """InputError unless 1 ≤ steps ≤ MAX_STEPS."""
    if not 1 <= steps <= MAX_STEPS:
        raise InputError(f"number of time steps {steps} is outside 1..{MAX_STEPS}")


def _step(drift, t, X, h, method):
    tm = t + h / 2
    if method == "rk4":
        k1, ess = drift(t, X, True, tm)
        k2, _ = drift(t + h / 2, X + (h / 2) * k1, False, tm)
        k3, _ = drift(t + h / 2, X + (h / 2) * k2, False, tm)
        k4, _ = drift(t + h, X + h * k3, False, tm)
        return X + (h / 6) * (k1 + 2 * k2 + 2 * k3 + k4), ess
    if method == "heun":
        k1, ess = drift(t, X, True, tm)
        k2, _ = drift(t + h, X + h * k1, False, tm)
        return X + (h / 2) * (k1 + k2), ess
    if method == "euler":
        k1, ess = drift(t, X, True, tm)
        return X + h * k1, ess
    raise InputError(f"unknown integrator '{method}' (choose rk4, heun or euler)")


def integrate_particles(drift, X0: np.ndarray, time: float, steps: int, *, method: str = "rk4",
                        record_every: int = 1, blowup_norm: float = DEFAULT_BLOWUP_NORM,
                        progress: bool = False) -> ParticleResult:
    """Integrate the particle ODE from X0 over [0, time] with `steps` fixed steps."""
    if not (math.isfinite(time) and time > 0):
        raise InputError(f"time must be positive and finite, got {time}")
    check_steps(steps)
    X = np.array(X0)
    h = time / steps
    m, S = empirical_moments(X)
    ts, ms, Ss, ess_min, ess_med = [0.0], [m], [S], [], []
    bar = Progress(steps, f"particles (N={X.shape[0]}, {method})", enabled=progress)
    res = ParticleResult(time, X, None, None, None, steps=steps, method=method)
    with warnings.catch_warnings(), np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        for n in range(steps):
            t = n * h
            Xn, ess = _step(drift, t, X, h, method)
            if ess is not None:
                ess_min.append(float(np.min(ess)))
                ess_med.append(float(np.median(ess)))
            finite = bool(np.all(np.isfinite(Xn)))
            if not finite or float(np.max(np.abs(Xn))) > blowup_norm:
                res.blowup, res.blowup_interval = True, (t, t + h)
                what = ("overflow (non-finite positions in " + str(X.dtype) + ")") if not finite \
                    else f"a token left the ball of radius {blowup_norm:.3g}"
                res.reason = f"{what} between t = {t:.6g} and t = {t + h:.6g} (step {n + 1})"
                res.time = t
                break
            X = Xn
            if (n + 1) % record_every == 0 or n + 1 == steps:
                m, S = empirical_moments(X)
                ts.append(t + h); ms.append(m); Ss.append(S)
            bar.step()
    res.X, res.t, res.means, res.covs = X, np.array(ts), np.array(ms), np.array(Ss)
    if ess_min:
        res.ess_trace = np.array(ess_min)
        res.ess_min, res.ess_median = float(np.min(ess_min)), float(np.median(ess_med))
        res.warnings += ess_warnings(res.ess_min, res.ess_median)
    return res


def simulate(schedule: Schedule, state: Gaussian, n_tokens: int, time: float, steps: int, *,
             seed: int, dtype=np.float64, method: str = "rk4", heads: HeadSet | None = None,
             feedforward=None, block: int | None = None, record_every: int = 1,
             blowup_norm: float = DEFAULT_BLOWUP_NORM, progress: bool = False) -> ParticleResult:
    """Draw N tokens from `state` with `seed` and integrate the particle system."""
    X0 = sample_gaussian(state, n_tokens, np.random.default_rng(seed), dtype)
    drift = TransformerDrift(schedule, heads=heads, feedforward=feedforward, block=block)
    return integrate_particles(drift, X0, time, steps, method=method, record_every=record_every,
                               blowup_norm=blowup_norm, progress=progress)

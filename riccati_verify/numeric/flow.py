"""Numeric integration of the Gaussian moment ODE (MATH.md eq. 1.1).

    ṁ = (A + V) m + V Σ B m + b,   Σ̇ = J Σ + Σ Jᵀ,   J = A + V Σ B.

`moment_rhs` is the fast hand-vectorised right-hand side (three matrix
products: VΣ, (VΣ)B, JΣ; Σ̇ is formed as JΣ + (JΣ)ᵀ, which keeps Σ exactly
symmetric).  Its agreement with the sympy-derived expressions is tested.

`integrate_moments` integrates with scipy (DOP853, tight tolerances) or with
mpmath's Taylor integrator at high precision, for constant parameters, a
piecewise-constant schedule, or a callable t ↦ Params.  Blow-up (the
covariance norm crossing a bound, or the step size collapsing) is reported
in the result, never as an exception or a NaN.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Callable, Sequence, Union

import mpmath
import numpy as np
from scipy.integrate import solve_ivp

from riccati_verify.core.errors import InputError
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.numeric.views import float_view

__all__ = [
    "DEFAULT_BLOWUP_NORM", "DEFAULT_MAX_STEPS", "FlowResult", "MP_MAX_EVALS", "Schedule",
    "Segment", "integrate_moments", "integrate_moments_mp", "integrate_segments_mp", "moment_rhs",
    "numerical_rank",
]

DEFAULT_BLOWUP_NORM = 1e12
DEFAULT_MAX_STEPS = 20_000


class _StepBudgetSpent(Exception):
    def __init__(self, t: float, y: np.ndarray):
        self.t, self.y = t, y


def moment_rhs(A: np.ndarray, B: np.ndarray, V: np.ndarray, b: np.ndarray,
               m: np.ndarray, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ṁ, Σ̇) of eq. 1.1 for float arrays."""
    VS = V @ S
    J = A + VS @ B
    JS = J @ S
    return J @ m + V @ m + b, JS + JS.T


@dataclass(frozen=True)
class Segment:
    """Constant parameters held for `duration` (a piece of a piecewise-constant control)."""

    duration: float
    params: Params


Schedule = Union[Params, Sequence[Segment], Callable[[float], Params]]


@dataclass
class FlowResult:
    """Outcome of integrating the moment ODE on [0, time]."""

    time: float              # the time reached (== requested time unless blow-up)
    mean: np.ndarray
    cov: np.ndarray
    blowup: bool
    reason: str              # "" or why integration stopped early
    t: np.ndarray = field(repr=False)        # sample times
    means: np.ndarray = field(repr=False)    # (len(t), d)
    covs: np.ndarray = field(repr=False)     # (len(t), d, d)
    stalled: bool = False    # the step size collapsed (step budget spent) before `time`

    @property
    def rank(self) -> int:
        """Numerical rank of the final covariance (relative tolerance d·eps·‖Σ‖ scaled by 1e3)."""
        return numerical_rank(self.cov)

    def to_xarray(self):
        """The trajectory as an xarray Dataset: ``mean`` (t, i), ``cov`` (t, i, j) on the sample
        times, and the outcome (time reached, blow-up, reason) as attributes.  Needs the
        `xarray` extra (InputError without it)."""
        from riccati_verify.numeric.export import trajectory_dataset

        return trajectory_dataset(self.t, {"": (self.means, self.covs)},
                                  {"time": self.time, "blowup": self.blowup, "stalled": self.stalled,
                                   "reason": self.reason, "source": "riccati_verify moment ODE (float, numerical)"})


def numerical_rank(S: np.ndarray, rtol: float | None = None) -> int:
    """Eigenvalues of S above rtol·‖S‖ (default 1e3·d·eps): a float estimate, never an exact rank."""
    w = np.linalg.eigvalsh((S + S.T) / 2)
    scale = max(float(np.max(np.abs(w))), 1e-300)
    tol = rtol if rtol is not None else 1e3 * S.shape[0] * np.finfo(float).eps
    return int(np.sum(np.abs(w) > tol * scale))


def _segments(schedule: Schedule, time: float):
    """Yield (t0, t1, params-or-callable) pieces covering [0, time]."""
    if isinstance(schedule, Params):
        yield 0.0, time, schedule
        return
    if callable(schedule):
        yield 0.0, time, schedule
        return
    t0 = 0.0
    last = None
    for seg in schedule:
        if not (seg.duration >= 0 and math.isfinite(seg.duration)):
            raise InputError(f"segment duration must be finite and non-negative, got {seg.duration}")
        t1 = min(t0 + float(seg.duration), time)
        if t1 > t0:
            yield t0, t1, seg.params
        t0, last = t1, seg.params
        if t0 >= time:
            return
    # Summing durations in floating point may fall a few ulps short of `time`.
    if last is not None and time - t0 <= 1e-12 * max(1.0, time):
        yield t0, time, last
    elif t0 < time:
        raise InputError(f"the control schedule covers [0, {t0}] but time {time} was requested")


def _grew(S_flat: np.ndarray, S0: np.ndarray) -> bool:
    # A step-size collapse after Σ grew by six orders of magnitude is the
    # signature of a blow-up; anywhere else it is only a failure to finish.
    return bool(np.max(np.abs(S_flat)) > 1e6 * max(float(np.max(np.abs(S0))), 1e-300))


def integrate_moments(schedule: Schedule, state: Gaussian, time: float, *,
                      rtol: float = 1e-12, atol: float = 1e-14, n_samples: int = 201,
                      blowup_norm: float = DEFAULT_BLOWUP_NORM, max_steps: int = DEFAULT_MAX_STEPS) -> FlowResult:
    """Integrate the Gaussian moment ODE (MATH.md eq. 1.1) in floating point.

        ṁ = (A + V)m + VΣBm + b,    Σ̇ = JΣ + ΣJᵀ,    J = A + VΣB,

    the exact law of N(m, Σ) under v(x) = Ax + b + V·Attn_B[μ](x), whose
    kernel is exp(⟨Bx, y⟩) with the query x (B = KᵀQ for a Transformer with
    scores ⟨Qx, Ky⟩; softmax over all tokens).

    Parameters
    ----------
    schedule : Params, sequence of Segment, or callable
        Constant parameters, a piecewise-constant control (its durations must
        cover [0, time]), or a function t ↦ Params.
    state : Gaussian
        The initial law N(m0, Σ0).
    time : float
        The horizon, positive and finite.
    rtol, atol : float, optional
        DOP853 tolerances.
    n_samples : int, optional
        About how many sample times to record on [0, time].
    blowup_norm : float, optional
        Stop, reporting a blow-up, when max |Σ_ij| crosses this bound (raised
        to 1e6·max(1, ‖Σ0‖₂) for a large initial state).
    max_steps : int, optional
        Step budget; when it is spent the run stops (step-size collapse).

    Returns
    -------
    FlowResult
        The final ``time``, ``mean`` and ``cov``, the samples ``t``, ``means``
        and ``covs``, and why it stopped early: ``blowup`` (the norm bound was
        crossed, or integration broke down after Σ grew a millionfold) or
        ``stalled`` (it broke down otherwise), explained in ``reason``.

    Raises
    ------
    InputError
        On a non-positive or non-finite `time`, a dimension mismatch, or a
        schedule that does not cover [0, time].

    Notes
    -----
    A numerical computation with scipy's DOP853 on the nearest doubles to the
    exact `Fraction` parameters: it proves nothing, and a blow-up or stall is
    reported in the result, never as an exception or a NaN.  For rigorous
    statements use `blowup_time`, `classify_regime` or `reach`; for high
    precision, `integrate_moments_mp`.
    """
    if not (math.isfinite(time) and time > 0):
        raise InputError(f"time must be positive and finite, got {time}")
    m0, S0 = (np.array(a, dtype=float) for a in float_view(state))
    d = state.dim
    bound = max(blowup_norm, 1e6 * max(1.0, np.linalg.norm(S0, 2)))
    ts, ms, Ss = [np.array([0.0])], [m0[None]], [S0[None]]
    y = np.concatenate([m0, S0.ravel()])
    evals = [0]
    max_evals = 12 * max_steps  # DOP853 uses 12 evaluations per accepted step
    for t0, t1, p in _segments(schedule, time):
        get = p if callable(p) and not isinstance(p, Params) else (lambda _t, _p=p: _p)
        if isinstance(get(t0), Params) and get(t0).dim != d:
            raise InputError(f"parameters have d = {get(t0).dim} but the state has d = {d}")

        def f(t, y, get=get):
            evals[0] += 1
            if evals[0] > max_evals:
                raise _StepBudgetSpent(t, y)
            A, B, V, b = float_view(get(t))
            dm, dS = moment_rhs(A, B, V, b, y[:d], y[d:].reshape(d, d))
            return np.concatenate([dm, dS.ravel()])

        def too_big(t, y):
            # Only Σ can blow up: given Σ the mean solves a linear ODE.
            return bound - np.max(np.abs(y[d:]))
        too_big.terminal = True

        grid = np.linspace(t0, t1, max(2, int(n_samples * (t1 - t0) / time) + 1))
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                sol = solve_ivp(f, (t0, t1), y, method="DOP853", rtol=rtol, atol=atol,
                                t_eval=grid, events=too_big, dense_output=False)
            except _StepBudgetSpent as e:
                t_all = np.concatenate(ts)
                grew = _grew(e.y[d:], S0)
                return FlowResult(float(e.t), e.y[:d], e.y[d:].reshape(d, d), grew,
                                  f"step size collapsed: more than {max_steps} steps before t = {e.t:.10g} "
                                  f"(covariance norm {np.max(np.abs(e.y[d:])):.3g})"
                                  + ("" if grew else "; the solution is stiff or oscillates violently"),
                                  t_all, np.concatenate(ms), np.concatenate(Ss), stalled=not grew)
        # On a failure at the very first step scipy may return an empty list.
        Y = np.asarray(sol.y, dtype=float).reshape(len(y), -1).T
        tt = np.asarray(sol.t, dtype=float)[:len(Y)]
        ok = np.all(np.isfinite(Y), axis=1)
        ts.append(tt[ok][1:]); ms.append(Y[ok][1:, :d]); Ss.append(Y[ok][1:, d:].reshape(-1, d, d))
        if sol.status != 0 or not np.all(ok):
            t_all = np.concatenate(ts)
            if sol.status == 1 and len(sol.t_events[0]):
                t_stop, y_stop = float(sol.t_events[0][0]), sol.y_events[0][0]
                return FlowResult(t_stop, y_stop[:d], y_stop[d:].reshape(d, d), True,
                                  f"covariance norm exceeded {bound:.3g} at t = {t_stop:.10g}",
                                  t_all, np.concatenate(ms), np.concatenate(Ss))
            t_stop, y_stop = (float(tt[ok][-1]), Y[ok][-1]) if ok.any() else (t0, y)
            grew = _grew(y_stop[d:], S0)
            why = sol.message if sol.status != 0 else "the state overflowed"
            return FlowResult(t_stop, y_stop[:d], y_stop[d:].reshape(d, d), bool(grew),
                              f"integrator stopped at t = {t_stop:.10g}: {why}",
                              t_all, np.concatenate(ms), np.concatenate(Ss), stalled=not grew)
        y = Y[-1]
    return FlowResult(time, y[:d], y[d:].reshape(d, d), False, "",
                      np.concatenate(ts), np.concatenate(ms), np.concatenate(Ss))


def integrate_moments_mp(params: Params, state: Gaussian, time: float, *, dps: int = 30
                         ) -> tuple[list, list]:
    """High-precision integration of eq. 1.1 with mpmath's Taylor-series `odefun`.

    Uses the exact rational parameters (converted to mpf at `dps` digits).
    Returns (mean, cov) at `time` as lists of mpf.  Raises BlowupDetected if
    the Taylor integrator fails to reach `time` (a pole on the way).
    """
    return integrate_segments_mp([Segment(time, params)], state, dps=dps)


MP_MAX_EVALS = 100_000


class _MpBudgetSpent(Exception):
    pass


def integrate_segments_mp(segments: Sequence[Segment], state: Gaussian, *, dps: int = 30,
                          max_evals: int = MP_MAX_EVALS) -> tuple[list, list]:
    """`integrate_moments_mp` over a piecewise-constant schedule (one Taylor
    integration per segment, the state carried across in mpf, so a rank-deficient
    covariance never has to be re-validated as an exact PSD matrix mid-way).

    Durations may be Fractions, ints or floats (taken exactly).  Returns
    (mean, cov) at the end of the last segment as lists of mpf.  Raises
    BlowupDetected when the Taylor integrator fails or spends more than
    `max_evals` right-hand-side evaluations: near a pole its steps shrink
    without end, and without a budget it would never return.
    """
    from fractions import Fraction

    from riccati_verify.core.errors import BlowupDetected

    d = state.dim
    # A double-precision pass first: a blow-up it sees is reported at once,
    # instead of letting the Taylor integrator crawl towards the pole.
    total = float(sum(Fraction(s.duration) for s in segments))
    floats = integrate_moments(list(segments), state, total) if total > 0 else None
    if floats is not None and floats.blowup:
        raise BlowupDetected(floats.time, f"blow-up before the end of the schedule: {floats.reason}")
    evals = [0]
    with mpmath.workdps(dps):
        q = lambda x: mpmath.mpf(Fraction(x).numerator) / Fraction(x).denominator
        y = [q(x) for x in state.mean] + [q(x) for r in state.cov for x in r]
        elapsed = mpmath.mpf(0)
        for seg in segments:
            params = seg.params
            if params.dim != d:
                raise InputError(f"parameters have d = {params.dim} but the state has d = {d}")
            A, B, V = (mpmath.matrix([[q(x) for x in r] for r in M]) for M in (params.A, params.B, params.V))
            b = mpmath.matrix([q(x) for x in params.b])

            def F(t, y, A=A, B=B, V=V, b=b):
                evals[0] += 1
                if evals[0] > max_evals:
                    raise _MpBudgetSpent()
                m = mpmath.matrix(y[:d])
                S = mpmath.matrix(d, d)
                for i in range(d):
                    for j in range(d):
                        S[i, j] = y[d + i * d + j]
                J = A + V * S * B
                dm = J * m + V * m + b
                JS = J * S
                dS = JS + JS.T
                return [dm[i] for i in range(d)] + [dS[i, j] for i in range(d) for j in range(d)]

            tau = q(seg.duration)
            if tau < 0:
                raise InputError(f"segment duration must be non-negative, got {seg.duration}")
            if tau > 0:
                sol = mpmath.odefun(F, 0, y, tol=mpmath.mpf(10) ** (-dps), degree=None)
                try:
                    y = list(sol(tau))
                except (ZeroDivisionError, OverflowError, mpmath.libmp.NoConvergence) as e:
                    raise BlowupDetected(float(elapsed + tau), f"high-precision integration failed: {e}") from None
                except _MpBudgetSpent:
                    raise BlowupDetected(float(elapsed + tau), f"high-precision integration spent {max_evals} "
                                         "evaluations without reaching the end of the segment "
                                         "(a blow-up or a very stiff solution)") from None
            elapsed += tau
        return y[:d], [y[d + i * d:d + (i + 1) * d] for i in range(d)]

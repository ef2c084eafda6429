"""General V (no linearisation known): a rigorous lower bound and numerical evidence.

Lower bound (MATH.md §8).  d‖Σ‖/dt ≤ 2‖A‖‖Σ‖ + 2‖V‖‖B‖‖Σ‖², so ‖Σ‖ stays below
the scalar Bernoulli solution with a = ‖A‖, c = ‖V‖‖B‖‖Σ0‖, and T* is at least
that scalar blow-up time.  The scalar time decreases in a, c and σ0, so any
upper bounds on the spectral norms give a valid bound: we use
‖M‖₂ ≤ min(‖M‖_F, √(‖M‖₁‖M‖_∞)) (and ‖Σ0‖₂ ≤ tr Σ0), evaluated in arb.

Numerical estimate (not a proof).  The moment ODE is quadratic, so the Taylor
coefficients of Σ(t0 + s) = Σ_k S_k s^k obey the exact recursion

    S_{k+1} = (A S_k + Q_k + (A S_k + Q_k)ᵀ)/(k+1),   Q_k = Σ_{i+j=k} (V S_i)(B S_j).

Near a blow-up Σ ~ C/(T* - t), so the coefficients of tr Σ behave like
c·R^{-k} with R = T* - t0 the radius of convergence; Domb-Sykes extrapolation
of the ratios in 1/k gives R.  We march towards T* with steps of R/4 (where
the series converges like 4^{-k}) until the error estimate (`honest_error`, a
conservative scaling of the method's own indicators) is below 10^-digits relative;
else the best estimate seen is returned with its error.  Not a proof.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from flint import arb, arb_mat, ctx

from riccati_verify.core import balls, exact
from riccati_verify.core.frame import moment_frame
from riccati_verify.core.bernoulli import scalar_blowup_time
from riccati_verify.core.model import Gaussian, Params

__all__ = ["TaylorEstimate", "norm_lower_bound", "taylor_blowup_estimate"]


def _norm2_upper(M: exact.Matrix) -> arb:
    n1 = max(sum(abs(M[i][j]) for i in range(len(M))) for j in range(len(M)))
    ninf = max(sum(abs(x) for x in r) for r in M)
    fro2 = sum(x * x for r in M for x in r)
    return balls.arb_of(min(n1 * ninf, fro2)).sqrt()


def norm_lower_bound(params: Params, state: Gaussian, prec: int = 128) -> Fraction | None:
    """A rational lower bound on T* (None: the comparison equation never blows up)."""
    with ctx.workprec(prec):
        a = _norm2_upper(params.A)
        vb = _norm2_upper(params.V) * _norm2_upper(params.B)
        tr = sum(state.cov[i][i] for i in range(state.dim))
        s0 = balls.arb_of(tr).min(_norm2_upper(state.cov))
        c = vb * s0
        if not c > 0:
            return None
        T = scalar_blowup_time(a, c)   # a ≥ 0 is an exact 0 or a proved positive ball
        lo = T.lower()
        return max(Fraction(0), balls.fraction_of_mid(lo) - Fraction(1, 2 ** (prec - 8)) * balls.fraction_of_mid(lo))


@dataclass(frozen=True)
class TaylorEstimate:
    """The non-rigorous Taylor-series estimate of T* for general V; `error` is a heuristic spread, never a bound."""
    blowup: bool | None
    value: Fraction | None     # estimated T* (or the time reached)
    error: Fraction | None     # estimated absolute error (`honest_error`: conservative, but not a bound)
    steps: int
    order: int
    note: str = ""


MARCH_MIN_BITS = 64
MARCH_TAPER = 2
MARCH_SLACK = 32
"""The march steps at h ≤ R/4 (R the radius of convergence), where |S_k|h^k ≲ 4^-k |S_0|: S_{k+1} is
computed at MARCH_SLACK + MARCH_TAPER·(k+1) bits below the working precision (at least MARCH_MIN_BITS),
which keeps its rounding, times h^(k+1), 2^-MARCH_SLACK below the working precision's level, and far
below the truncation 4^-K of the series at the march's order K (a heuristic of a midpoint march)."""


def taylor_coefficients(A, Bm, V, S0: arb_mat, K: int) -> list[arb_mat]:
    """The midpoint Taylor coefficients S_0..S_K of the moment ODE's solution through S0 (planning only,
    never a proof): (k+1)S_{k+1} = F_k + F_kᵀ, F_k = A S_k + Σ_i V S_i B S_{k−i}, coefficient k+1 at
    `MARCH_SLACK` + `MARCH_TAPER`·(k+1) bits below the working precision (at least `MARCH_MIN_BITS`)."""
    At = A
    S = [S0]
    VS = [V * S0]
    BS = [Bm * S0]
    prec = ctx.prec
    try:
        for k in range(K):
            ctx.prec = max(MARCH_MIN_BITS, prec - MARCH_SLACK - MARCH_TAPER * (k + 1))
            Q = VS[0] * BS[k]
            for i in range(1, k + 1):
                Q += VS[i] * BS[k - i]
            F = At * S[k] + Q
            Sk1 = ((F + F.transpose()) / (k + 1)).mid()
            S.append(Sk1)
            VS.append(V * Sk1)
            BS.append(Bm * Sk1)
    finally:
        ctx.prec = prec
    return S


def _max_abs(M: arb_mat) -> arb:
    return max((abs(M[i, j]).mid() for i in range(M.nrows()) for j in range(M.ncols())), key=float)


FIT_SAFETY = 0.9
FIT_MARGIN = 1000
"""`_converged_step(fit=True)` shrinks h by FIT_SAFETY times the factor that would put the series' tail
FIT_MARGIN below its tolerance (one shrink usually suffices; halving lands anywhere up to 2x below).
Halving from a quarter of the radius had left the tail far below the tolerance at the march's old order.
Measured on the closed form of tests/test_blowup_turning.py (t1's error over the bisection's allowance,
20 | 30 digits): margin 1 at order 0.9·D + 15, 3.3 | 1.1e4; margin 1000 at 0.9·D + 25, 0.07 | 0.03
(`sizing.turning_march_order`)."""


def _converged_step(co: list[arb_mat], h: arb, K: int, digits: int, fit: bool = False) -> arb:
    """h, shrunk until the series' last two terms at h are below 10^-(digits+4) of the
    largest: a complex singularity nearer than the real one (which the trace's ratios do not
    see) would otherwise let the march jump past T* onto a meaningless continuation.  Halved each
    time, or with `fit` scaled by FIT_SAFETY·(tol/(FIT_MARGIN·tail))^(1/(K−1)) (the tail's K−1 term
    dominates below the radius; at least by FIT_SAFETY, at most by 1000 a time): the same test either way."""
    scale = max(_max_abs(c) for c in co[:3]) + arb(10) ** (-(digits + 40))
    tol = arb(10) ** (-(digits + 4))
    for _ in range(60):
        tail = _max_abs(co[K]) * abs(h) ** K + _max_abs(co[K - 1]) * abs(h) ** (K - 1)
        if tail < tol * scale:
            return h
        if fit:
            f = float(((tol * scale / (FIT_MARGIN * tail)) ** (arb(1) / (K - 1))).mid())
            h = (h * arb(min(FIT_SAFETY, max(1e-3, FIT_SAFETY * f)))).mid()
        else:
            h = (h / 2).mid()
    return h


def taylor_step(A, Bm, V, S: arb_mat, K: int, digits: int, coefficients: bool = False, fit: bool = False):
    """One midpoint Taylor step of order K of the moment ODE towards a blow-up (planning only, never
    a proof): h is a quarter of the smallest coefficient-norm ratio over k ∈ [K/2, K) (the radius of
    convergence is T* − t), shrunk by `_converged_step`; (Σ(t + h) midpoints, h exact), h = 0 when
    the series vanishes.  Norm ratios stay in arb: the coefficients overflow floats near T*.  With
    `coefficients`, the Taylor coefficients come third (a caller that re-sums the same polynomial);
    `fit`: `_converged_step`'s fitted shrink instead of halving."""
    co = taylor_coefficients(A, Bm, V, S, K)
    # only k ∈ [K/2, K] enter the ratios (the norms of all K + 1 cost a fifth of the march); the
    # midpoints are exact balls, which compare as numbers
    norms = {k: max(abs(x) for x in co[k].mid().entries()) for k in range(K // 2, K + 1)}
    ratios = [norms[k] / norms[k + 1] for k in range(K // 2, K) if norms[k + 1] > 0]
    if not ratios:
        return (S, Fraction(0), co) if coefficients else (S, Fraction(0))
    h = _converged_step(co, (min(ratios, key=lambda a: a.mid()) / 4).mid(), K, digits, fit)
    hq = Fraction(float(h.mid()))
    hb = balls.arb_of(hq)
    return (taylor_sum(co, hb), hq, co) if coefficients else (taylor_sum(co, hb), hq)


def taylor_sum(co: list[arb_mat], h: arb) -> arb_mat:
    """Σ_k co[k] h^k by Horner, midpoints only (planning, never a proof)."""
    Sn = co[-1]
    for k in range(len(co) - 2, -1, -1):
        Sn = (Sn * h + co[k]).mid()
    return Sn



class MarchSegments:
    """The checker's segments along a march towards T*: Σ is divided by 2^RESCALE_LOG2 whenever it
    passes that size (the checker repeats this exactly: Σ/2^E solves the moment ODE with V replaced
    by 2^E V), which keeps the state below the flow's blow-up guard.  `V` is the arb 2^E·V to march
    with; `E` the total exponent so far."""

    def __init__(self, V: exact.Matrix, rescale_log2: int):
        self._V0, self.log2 = V, rescale_log2
        self.segments: list[dict] = []
        self.t_seg, self.e_next, self.E = Fraction(0), 0, 0
        self.V = balls.arb_matrix(V)

    def rescaled(self, S: arb_mat, t: Fraction) -> arb_mat | None:
        """S/2^RESCALE_LOG2 when S has passed 2^RESCALE_LOG2 (a segment then ends at t), else None."""
        if not float(max(abs(x.mid()) for x in S.entries())) > 2.0 ** self.log2:
            return None
        self.segments.append({"duration": t - self.t_seg, "rescale_log2": self.e_next})
        self.t_seg, self.e_next = t, self.log2
        self.E += self.log2
        self.V = balls.arb_matrix(exact.scale(Fraction(2) ** self.E, self._V0))
        return S * balls.arb_of(Fraction(1, 2 ** self.log2))

    def close(self, t: Fraction) -> list[dict]:
        """The segments, the last one ending at t."""
        self.segments.append({"duration": t - self.t_seg, "rescale_log2": self.e_next})
        return self.segments


def _trace(M: arb_mat) -> arb:
    return sum((M[i, i] for i in range(M.nrows())), arb(0))


ERROR_SAFETY = 10
"""Safety factor on the error estimate (see `honest_error`)."""
INCONSISTENT = Fraction(1, 20)
"""A relative indicator above this (the estimate moved by more than R/20 in one step of R/4)
ends the march: the last consistent estimate is reported, with an error of at least its R."""
ERROR_WINDOW = 4
"""How many steps' indicators `honest_error` takes the worst of (and the fewest estimates
before the march may stop)."""


def honest_error(Rs: list[arb], indicators: list[arb], K: int) -> arb:
    """A conservative error estimate for T* ≈ t0 + R (a heuristic, never a bound).

    The method's two error indicators at each step j, each scaled to the error it
    indicates and taken relative to that step's radius R_j:

    - the Domb-Sykes intercepts R (from k = K-1, K) and R_alt (from K-2, K-1): with the
      confluent corrections of a general V (Σ is not a simple pole there, so the
      intercept converges algebraically in 1/k, e ~ c k^-p with p ≥ 1) the error is about
      k/p times the difference of consecutive intercepts: K·|R - R_alt|;
    - the change of the estimate since the last step: R shrinks by 3/4 per step (h = R/4)
      and the error with it, so the error is about 3× the change: 4·|est - prev|.

    At a fixed order K the relative error err/R is about the same at every step, so one
    step's indicators that vanish by accident say little: the estimate is the worst relative
    indicator over the last `ERROR_WINDOW` steps, times the current R and `ERROR_SAFETY`,
    plus the series truncation |R|·4^-K.  Checked against independent integrations in
    tests/test_hygiene.py (the former |R - R_alt| + |est - prev| was up to 50× below the
    true error).
    """
    rel = max(indicators[-ERROR_WINDOW:], key=lambda x: x.mid())
    R = abs(Rs[-1])
    return R * rel * ERROR_SAFETY + R * arb(4) ** (-K)


def taylor_blowup_estimate(params: Params, state: Gaussian, digits: int = 30,
                           t_max: Fraction | None = None, max_steps: int = 200) -> TaylorEstimate:
    """March the Taylor series towards T*; estimate T* by Domb-Sykes extrapolation."""
    K = int(1.7 * digits) + 16
    prec = int(3.33 * digits) + 48
    with ctx.workprec(prec):
        A, Bm, V = (balls.arb_matrix(M) for M in (params.A, params.B, params.V))
        S = balls.arb_matrix(state.cov)
        t0 = arb(0)
        prev = None
        best = last = None   # (estimate, its error) with the smallest error seen; the latest (est, err, R)
        history, Rs, indicators = [], [], []
        for step in range(max_steps):
            co = taylor_coefficients(A, Bm, V, S, K)
            tr = [_trace(c).mid() for c in co]
            tail = tr[K // 2:]
            if all(x > 0 for x in tail) and tr[K] != 0:
                # Domb-Sykes: r_k = c_k/c_{k-1} ≈ (1/R)(1 + g/k); intercept from k = K-1, K
                r1, r0 = tr[K] / tr[K - 1], tr[K - 1] / tr[K - 2]
                inv_R = K * r1 - (K - 1) * r0
                R = 1 / inv_R if inv_R > 0 else None
                r0b = tr[K - 2] / tr[K - 3]
                inv_R2 = (K - 1) * r0 - (K - 2) * r0b
                R_alt = 1 / inv_R2 if inv_R2 > 0 else None
            else:
                R = R_alt = None
            if R is not None and R_alt is not None:
                est = t0 + R
                ind = abs(R - R_alt) * K if prev is None else (abs(R - R_alt) * K).max(abs(est - prev) * 4)
                if ind > abs(R) * balls.arb_of(INCONSISTENT) and history:
                    # the estimate moved by more than the series model allows (a complex singularity
                    # near T* takes over): the indicators cannot be trusted any more, so report the
                    # last consistent estimate with an error no smaller than its distance R to T*
                    last_err = last[1].max(abs(last[2]))
                    return TaylorEstimate(True, balls.fraction_of_mid(last[0]), balls.fraction_of_mid(last_err.upper()),
                                          step, K, f"the ratio estimate stopped converging before {digits} digits; "
                                                   "the last consistent estimate is reported, its error at least "
                                                   "its distance to T*")
                Rs.append(R)
                indicators.append(ind / abs(R))
                err = honest_error(Rs, indicators, K)
                history.append(est)
                last = (est, err, R)
                if best is None or err.mid() < best[1].mid():
                    best = (est, err)
                if len(history) >= ERROR_WINDOW and err < abs(est) * arb(10) ** (-digits):
                    return TaylorEstimate(True, balls.fraction_of_mid(est), balls.fraction_of_mid(err.upper()),
                                          step, K)
                prev = est
                h = R / 4
            else:
                # no dominant real pole seen yet: step by a quarter of the root-test radius
                mags = [abs(x) for x in tr[K // 2:] if x != 0]
                if not mags:
                    return TaylorEstimate(False, None, None, step, K, "trace vanishes identically")
                rad = min((abs(tr[k]) / abs(tr[k + 1])) for k in range(K // 2, K) if tr[k + 1] != 0)
                h = rad / 4
            if t_max is not None and (t0 + h) > balls.arb_of(t_max):
                h = balls.arb_of(t_max) - t0
            hh = _converged_step(co, h.mid(), K, digits)
            S, t0 = taylor_sum(co, hh), (t0 + hh).mid()
            if t_max is not None and not t0 < balls.arb_of(t_max):
                return TaylorEstimate(False, t_max, None, step + 1, K, "reached the horizon with Σ finite")
        if best is not None:
            return TaylorEstimate(True, balls.fraction_of_mid(best[0]), balls.fraction_of_mid(best[1].upper()),
                                  max_steps, K, f"the estimate did not reach {digits} digits in {max_steps} steps; "
                                                "the best one is reported with its error")
        return TaylorEstimate(None, balls.fraction_of_mid(t0), None, max_steps, K,
                              "the ratio estimate did not settle")


def framed(params: Params, state: Gaussian, T) -> tuple[Params, Gaussian]:
    """(Ã, B̃, Ṽ) = (T⁻¹AT, TᵀBT, T⁻¹VT) and Σ̃0 = T⁻¹Σ0T⁻ᵀ, exactly (`check_blowup_general`, Frame)."""
    d = params.dim
    _, A, B, V, cov = moment_frame(T, params.A, params.B, params.V, state.cov)
    return Params.from_arrays(A, B, V), Gaussian((Fraction(0),) * d, tuple(tuple(r) for r in cov))

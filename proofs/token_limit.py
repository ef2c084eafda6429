"""Token limit N → ∞ (seeds 001 and 004, MATH.md §10).

Claim (as checked here).  For Gaussian initial tokens and parameters under
which the softmax effective sample size stays a fixed fraction of N, the
empirical mean and covariance of the N-token particle system at time T
converge to the moment ODE's (m(T), Σ(T)) at rate N^{-1/2}.

Symbolic route — only a lemma, not the claim: at a fixed query with c = Bx
and N i.i.d. tokens from N(m, Σ), the self-normalised attention average
Σ_j w_j y_j / Σ_j w_j has CLT variance (1/N) e^{cᵀΣc} (Σ + Σccᵀ Σ) (d = 1:
e^{c²s}(s + s²c²)/N) and the effective sample size satisfies ESS/N →
e^{−cᵀΣc}; both are derived from the Gaussian MGF with sympy.  This explains
the N^{-1/2} rate at one instant and why the ESS governs it; propagating it
over [0, T] (a Grönwall/propagation-of-chaos argument) is *not* proved here,
so the symbolic verdict is "not certified".

Numeric route: (a) the lemma by Monte Carlo (variance of the estimator over
many replicates); (b) particle runs on a grid of N with several seeds, the
fitted slope of the moment error against N with a 99 % confidence interval,
which must contain −1/2 and exclude 0; the sliced W2 between the empirical
measure and the predicted Gaussian is reported.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from riccati_verify.numeric.flow import integrate_moments
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.numeric.simulate.particles import simulate
from riccati_verify.numeric.simulate.rates import fit_power_law, gaussian_quantile_w2
from riccati_verify.core.result import ProofResult, Status, Verdict, timed

__all__ = [
    "CLAIM", "EXAMPLE", "HYPOTHESES", "NAME", "N_GRID", "RNG_SEED", "SEED", "SEEDS",
    "Z_THRESHOLD", "attention_clt_lemma", "check", "hypotheses", "numeric_check",
    "symbolic_check",
]

NAME = "token_limit"
SEED = "001/004"
CLAIM = "particle moments converge to the moment ODE at rate N^{-1/2} (propagation of chaos for moments)"
HYPOTHESES = ["Gaussian initial tokens, i.i.d.", "no blow-up on [0, T]; ESS a fixed fraction of N"]
RNG_SEED = 20261129
N_GRID = (64, 128, 256, 512, 1024)
SEEDS = 8
Z_THRESHOLD = 5.0
EXAMPLE = dict(A=[[-0.5]], B=[[0.5]], V=[[0.6]], b=[0.2], mean=[0.3], cov=[[0.8]], time=1.0, steps=10)


def attention_clt_lemma() -> dict:
    """Exact d = 1 asymptotic variance and ESS ratio of the self-normalised attention estimator."""
    c, m = sp.symbols("c m", real=True)
    s = sp.Symbol("s", positive=True)
    u = sp.Symbol("u", real=True)
    M = sp.exp(u * m + u**2 * s / 2)                          # E e^{uy}
    Mk = lambda k, at: sp.diff(M, u, k).subs(u, at)           # E[y^k e^{uy}]
    T = sp.simplify(Mk(1, c) / Mk(0, c))                      # tilted mean
    # delta method for ratio Σ w y / Σ w: variance (1/N) E[w²(y−T)²] / (E w)²
    num = Mk(2, 2 * c) - 2 * T * Mk(1, 2 * c) + T**2 * Mk(0, 2 * c)
    var = sp.simplify(num / Mk(0, c) ** 2)
    ess_ratio = sp.simplify(Mk(0, c) ** 2 / Mk(0, 2 * c))     # (E w)² / E w²
    return {"tilted_mean_ok": sp.simplify(T - (m + s * c)) == 0,
            "clt_variance_ok": sp.simplify(var - sp.exp(c**2 * s) * (s + s**2 * c**2)) == 0,
            "ess_ratio_ok": sp.simplify(ess_ratio - sp.exp(-(c**2) * s)) == 0,
            "N_times_variance": str(var), "ess_over_N": str(ess_ratio)}


def symbolic_check() -> Verdict:
    """Symbolic route, only the fixed-query lemma: NOT_CERTIFIED when it holds (the claim itself is
    not proved), REFUTED when it fails."""
    lem = attention_clt_lemma()
    ok = lem["tilted_mean_ok"] and lem["clt_variance_ok"] and lem["ess_ratio_ok"]
    if not ok:
        return Verdict(Status.REFUTED, lem, "the fixed-query CLT lemma failed")
    return Verdict(Status.NOT_CERTIFIED, lem,
                   "lemma certified (fixed-query CLT variance e^{c²s}(s+s²c²)/N, ESS/N → e^{−c²s}); "
                   "the propagation over [0, T] is not proved symbolically")


def _lemma_monte_carlo(seed: int) -> dict:
    rng = np.random.default_rng([seed, 7])
    m, s, c, N, R = 0.3, 0.8, 0.9, 400, 4000
    y = m + np.sqrt(s) * rng.standard_normal((R, N))
    w = np.exp(c * y - (c * y).max(axis=1, keepdims=True))
    est = (w * y).sum(1) / w.sum(1)
    nvar = N * est.var(ddof=1)
    pred = np.exp(c * c * s) * (s + s * s * c * c)
    se = nvar * np.sqrt(2 / (R - 1))                          # SE of a sample variance (≈ Gaussian estimator)
    ess = float(np.mean(w.sum(1) ** 2 / (w**2).sum(1)) / N)
    return {"N_var_mc": float(nvar), "N_var_exact": float(pred), "z": float(abs(nvar - pred) / se),
            "ess_over_N_mc": ess, "ess_over_N_exact": float(np.exp(-c * c * s)), "replicates": R, "N": N}


def numeric_check(seed: int = RNG_SEED, n_grid=N_GRID, seeds: int = SEEDS) -> Verdict:
    """Numeric cross-check: the moment-error slope vs N (99 % CI) contains −1/2; the lemma by Monte Carlo.

    At most CONFIRMED_NUMERICALLY (floats prove nothing).
    """
    ex = EXAMPLE
    p = Params.from_arrays(ex["A"], ex["B"], ex["V"], ex["b"])
    g = Gaussian.from_arrays(ex["mean"], ex["cov"])
    f = integrate_moments(p, g, ex["time"])
    errs, w2s, ess = np.empty((len(n_grid), seeds)), np.empty((len(n_grid), seeds)), []
    for i, N in enumerate(n_grid):
        for k in range(seeds):
            r = simulate(p, g, N, ex["time"], ex["steps"], seed=seed + 1000 * k + N)
            errs[i, k] = np.linalg.norm(r.mean - f.mean) + np.linalg.norm(r.cov - f.cov)
            w2s[i, k] = gaussian_quantile_w2(r.X, f.mean, f.cov, seed=k)
            ess.append(r.ess_median / N)
    fit = fit_power_law(n_grid, errs)
    fit_w2 = fit_power_law(n_grid, w2s)
    lem = _lemma_monte_carlo(seed)
    ev = {"seed": seed, "N_grid": list(n_grid), "seeds_per_N": seeds, "slope": fit.slope, "ci": fit.ci,
          "w2_slope": fit_w2.slope, "w2_ci": fit_w2.ci, "min_median_ess_over_N": float(min(ess)),
          "lemma_monte_carlo": lem}
    ok = fit.contains(-0.5) and fit.ci[1] < 0 and lem["z"] < Z_THRESHOLD
    return Verdict(Status.CONFIRMED_NUMERICALLY if ok else Status.REFUTED, ev,
                   "moment-error slope vs N (99 % CI) contains −1/2; fixed-query CLT variance matches")


def check() -> ProofResult:
    """Run both routes, timed; `ProofResult.status` combines their verdicts into the theorem's."""
    return timed(lambda: ProofResult(NAME, SEED, CLAIM, symbolic_check(), numeric_check()))


def hypotheses(problem, *, time=None):
    """The hypotheses above that concern a parameter file (`riccati-verify hypotheses`).

    The initial tokens are i.i.d. draws from the file's N(m0, Σ0) (Σ0 ⪰ 0 checked exactly).
    'ESS a fixed fraction of N' follows from no blow-up: at a query x the ESS fraction tends to
    e^{−xᵀBᵀΣBx} (MATH.md §10), bounded below on [0, T] while Σ(t) stays bounded — so the one
    check decided (rigorously) is existence on [0, T]."""
    from riccati_verify.certify.hypotheses import gaussian_state, solution_exists_on_horizon

    params, state = problem.require_params(), problem.require_state()
    return [gaussian_state(state), solution_exists_on_horizon(params, state, time)]

"""Power-law rate fits with confidence intervals (token limit, head limit).

An error e(n) ≈ C n^α is fitted by least squares on log e = log C + α log n over
every (n, seed) sample.  The confidence interval for α uses Student's t with
the OLS standard error; replicates at the same n make the residual variance an
honest measurement of the sampling noise rather than an assumption.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats
from riccati_verify.numeric.views import float_view

__all__ = ["RateFit", "fit_power_law", "gaussian_quantile_w2", "plot_rate_fit", "propagated_standard_errors",
           "rate_fit_figure"]


@dataclass(frozen=True)
class RateFit:
    """A least-squares fit log error = intercept + slope · log N, with a confidence interval for the slope."""

    slope: float
    intercept: float
    stderr: float
    ci: tuple[float, float]
    level: float
    n_points: int

    def contains(self, value: float) -> bool:
        """Whether `value` lies in the slope's confidence interval."""
        return self.ci[0] <= value <= self.ci[1]


def fit_power_law(ns, errors, *, level: float = 0.99, log_factor: bool = False) -> RateFit:
    """Fit errors ≈ C n^α (or C n^α √log n with `log_factor`, dividing the √log n out first).

    `errors` is (len(ns), replicates) or (len(ns),).
    """
    ns = np.asarray(ns, dtype=float)
    E = np.asarray(errors, dtype=float)
    if E.ndim == 1:
        E = E[:, None]
    x = np.repeat(np.log(ns), E.shape[1])
    y = np.log(E).ravel()
    if log_factor:
        y = y - 0.5 * np.log(np.log(np.repeat(ns, E.shape[1])))
    ok = np.isfinite(y)
    x, y = x[ok], y[ok]
    if len(x) < 3:
        raise ValueError("a rate fit needs at least three finite points")
    r = stats.linregress(x, y)
    q = stats.t.ppf(0.5 + level / 2, len(x) - 2)
    return RateFit(float(r.slope), float(r.intercept), float(r.stderr),
                   (float(r.slope - q * r.stderr), float(r.slope + q * r.stderr)), level, len(x))


def gaussian_quantile_w2(X: np.ndarray, m: np.ndarray, S: np.ndarray, *, n_dirs: int = 64,
                         seed: int = 0) -> float:
    """Sliced W2 between the empirical measure of X's rows and N(m, Σ).

    Each random direction θ reduces both to one dimension, where W2 between an
    empirical measure and a Gaussian is ∫(F⁻¹_emp − F⁻¹_gauss)²: the sorted
    projections against Gaussian quantiles integrated exactly over each cell
    [(i-1)/n, i/n] (by the normal partial moments).  The result is
    sqrt(mean over θ of W2²), the sliced W2.
    """
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    rng = np.random.default_rng(seed)
    th = rng.standard_normal((n_dirs, d))
    th /= np.linalg.norm(th, axis=1, keepdims=True)
    P = np.sort(X @ th.T, axis=0)                    # (n, n_dirs)
    mu = th @ m
    sd = np.sqrt(np.maximum(np.einsum("ki,ij,kj->k", th, S, th), 0))
    # cell i: ∫_{z_{i-1}}^{z_i} (p − μ − sd z)² φ(z) dz with z_i = Φ⁻¹(i/n)
    z = stats.norm.ppf(np.arange(n + 1) / n)
    p0 = np.diff(stats.norm.cdf(z))                  # = 1/n
    phi = stats.norm.pdf(z)
    p1 = -np.diff(phi)                               # ∫ z φ
    with np.errstate(invalid="ignore"):
        zphi = np.where(np.isfinite(z), z * phi, 0.0)    # z φ(z) → 0 at ±∞
    p2 = p0 - np.diff(zphi)                          # ∫ z² φ
    a = P - mu                                       # (n, k)
    w2 = (a**2 * p0[:, None] - 2 * a * sd * p1[:, None] + sd**2 * p2[:, None]).sum(axis=0)
    return float(math.sqrt(max(float(np.mean(w2)), 0.0)))


def plot_rate_fit(ns, errors, fit: RateFit, path, *, xlabel: str = "N", title: str = "") -> None:
    """Log-log plot of the replicate errors, their means and the fitted power law (PNG at `path`)."""
    import matplotlib.pyplot as plt

    fig = rate_fit_figure(ns, errors, fit, xlabel=xlabel, title=title)
    fig.savefig(path, dpi=100, bbox_inches="tight")    # "tight": the legend below the axes stays in
    plt.close(fig)


def rate_fit_figure(ns, errors, fit: RateFit, *, xlabel: str = "N", title: str = ""):
    """The figure `plot_rate_fit` saves: replicates, their means and the fit, the legend below the axes."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ns = np.asarray(ns, float)
    E = np.asarray(errors, float).reshape(len(ns), -1)
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.loglog(np.repeat(ns, E.shape[1]), E.ravel(), ".", alpha=0.4, label="replicates")
    ax.loglog(ns, E.mean(axis=1), "o", label="mean")
    ax.loglog(ns, np.exp(fit.intercept) * ns**fit.slope, "-",
              label=f"slope {fit.slope:.3f} [{fit.ci[0]:.3f}, {fit.ci[1]:.3f}] ({fit.level:.0%})")
    ax.set_xlabel(xlabel); ax.set_ylabel("error")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig


def propagated_standard_errors(schedule, state, time: float, n: float, *, rel_step: float = 1e-5,
                               max_dim: int = 8) -> tuple[float, float] | None:
    """Delta-method SE of ‖m_N(T) − m(T)‖ and ‖Σ_N(T) − Σ(T)‖_F from the initial sampling error alone.

    The initial empirical moments of n Gaussian draws have Cov(m̂) = Σ/n and
    Cov(Σ̂_ij, Σ̂_kl) = (Σ_ik Σ_jl + Σ_il Σ_jk)/n (independent of m̂).  They are pushed through the
    Jacobian of the moment flow (m0, Σ0) ↦ (m(T), Σ(T)), obtained by central differences of
    `flow.integrate_moments`.  This is the part of the particle error that the moment ODE itself
    transports; the attention's own sampling noise during the run is not included.  Returns None
    for d > max_dim or when the flow blows up near the state.
    """
    from riccati_verify.numeric.flow import integrate_moments
    from riccati_verify.core.model import Gaussian

    m0, S0 = (np.array(a, float) for a in float_view(state))
    d = len(m0)
    if d > max_dim:
        return None
    idx = [(i, j) for i in range(d) for j in range(i, d)]
    scale = max(1.0, float(np.abs(S0).max()), float(np.abs(m0).max()))
    h = rel_step * scale

    def out(m, S):
        f = integrate_moments(schedule, Gaussian.from_arrays(m.tolist(), S.tolist()), time, n_samples=2)
        return None if f.blowup else np.concatenate([f.mean, f.cov.ravel()])

    cols = []
    try:
        for k in range(d):
            e = np.zeros(d); e[k] = h
            a, b = out(m0 + e, S0), out(m0 - e, S0)
            if a is None or b is None:
                return None
            cols.append((a - b) / (2 * h))
        for i, j in idx:
            E = np.zeros((d, d)); E[i, j] = E[j, i] = h
            # keep the perturbed covariance PSD: perturb around a slightly inflated Σ0
            base = S0 + 2 * h * np.eye(d)
            a, b = out(m0, base + E), out(m0, base - E)
            if a is None or b is None:
                return None
            cols.append((a - b) / (2 * h))
    except Exception:          # an exactly singular or non-PSD perturbation: no estimate
        return None
    Jac = np.array(cols).T                      # (d + d², d + d(d+1)/2)
    C = np.zeros((d + len(idx), d + len(idx)))
    C[:d, :d] = S0 / n
    for a_, (i, j) in enumerate(idx):
        for b_, (k, l) in enumerate(idx):
            C[d + a_, d + b_] = (S0[i, k] * S0[j, l] + S0[i, l] * S0[j, k]) / n
    Cov = Jac @ C @ Jac.T
    return (float(np.sqrt(max(np.trace(Cov[:d, :d]), 0))), float(np.sqrt(max(np.trace(Cov[d:, d:]), 0))))

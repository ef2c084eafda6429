"""Gaussian-mixture token laws (MATH.md §12): the flow does not keep them a mixture of Gaussians.

Tokens are drawn from Σ_k w_k N(m_k, Σ_k) with their component labels kept,
run through the particle system, and each component's cloud is compared with
its own moment-matched Gaussian: the standardised third cumulant with its
sampling standard error, and a Kolmogorov–Smirnov distance (d = 1) between all
tokens and the best two-component fit found by EM.

`kappa3_rate` evaluates d/dt κ3 at t = 0 of a component for d = 1 by
Gauss–Hermite quadrature of 3E[(X − m)²(v(X) − E v(X))] — an independent
numeric route to the symbolic certificate in `symbolic.mixture`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from riccati_verify.core.errors import InputError
from riccati_verify.numeric.flow import Schedule
from riccati_verify.core.model import Params
from riccati_verify.numeric.simulate.attention import MAX_TOKENS
from riccati_verify.numeric.simulate.particles import TransformerDrift, integrate_particles
from riccati_verify.numeric.views import float_view

__all__ = ["ComponentSkew", "GaussianMixture", "MAX_COMPONENTS", "MixtureRun", "component_skewness", "em_two_gaussians_1d", "kappa3_rate", "ks_to_mixture_1d", "mixture_run", "mixture_tilted_mean_1d"]

MAX_COMPONENTS = 16


@dataclass(frozen=True)
class GaussianMixture:
    """A Gaussian mixture Σ_k w_k N(m_k, Σ_k); validated: 1..MAX_COMPONENTS components,
    positive weights summing to 1, symmetric PSD covariances."""

    weights: np.ndarray     # (K,)
    means: np.ndarray       # (K, d)
    covs: np.ndarray        # (K, d, d)

    def __post_init__(self):
        w = np.asarray(self.weights, float)
        if not 1 <= len(w) <= MAX_COMPONENTS:
            raise InputError(f"a mixture needs 1..{MAX_COMPONENTS} components, got {len(w)}")
        if np.any(w <= 0) or not math.isclose(float(w.sum()), 1.0, rel_tol=1e-9):
            raise InputError("mixture weights must be positive and sum to 1")
        for k, S in enumerate(np.asarray(self.covs, float)):
            if not np.allclose(S, S.T) or np.linalg.eigvalsh((S + S.T) / 2).min() < -1e-12:
                raise InputError(f"mixture component {k}: covariance is not symmetric PSD")

    @property
    def dim(self) -> int:
        """The dimension d."""
        return self.means.shape[1]

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """n draws and their component labels, with `rng`."""
        if not 1 <= n <= MAX_TOKENS:
            raise InputError(f"number of tokens {n} is outside 1..{MAX_TOKENS}")
        labels = rng.choice(len(self.weights), size=n, p=np.asarray(self.weights) / np.sum(self.weights))
        X = np.empty((n, self.dim))
        for k in range(len(self.weights)):
            idx = labels == k
            w, U = np.linalg.eigh(self.covs[k])
            root = U * np.sqrt(np.clip(w, 0, None))
            X[idx] = self.means[k] + rng.standard_normal((int(idx.sum()), self.dim)) @ root.T
        return X, labels


def mixture_tilted_mean_1d(c: np.ndarray, mix: GaussianMixture) -> np.ndarray:
    """T(c) = Σ w_k M_k(c)(m_k + s_k c)/Σ w_k M_k(c) in d = 1, stabilised by log-sum-exp."""
    m, s, w = mix.means[:, 0], mix.covs[:, 0, 0], np.asarray(mix.weights)
    c = np.asarray(c, float)[..., None]
    logw = np.log(w) + c * m + c**2 * s / 2
    logw -= logw.max(axis=-1, keepdims=True)
    W = np.exp(logw)
    return (W * (m + s * c)).sum(-1) / W.sum(-1)


def kappa3_rate(params: Params, mix: GaussianMixture, component: int, *, nodes: int = 120) -> float:
    """d/dt κ3 at t = 0 of one component (d = 1) by Gauss–Hermite quadrature."""
    if params.dim != 1 or mix.dim != 1:
        raise InputError("kappa3_rate is implemented for d = 1")
    A, B, V, b = (float(np.ravel(z)[0]) for z in float_view(params))
    m, s = float(mix.means[component, 0]), float(mix.covs[component, 0, 0])
    z, wq = np.polynomial.hermite_e.hermegauss(nodes)
    wq = wq / wq.sum()
    X = m + math.sqrt(s) * z
    vel = A * X + b + V * mixture_tilted_mean_1d(B * X, mix)
    D = vel - wq @ vel
    return float(3 * wq @ ((X - m) ** 2 * D))


@dataclass(frozen=True)
class ComponentSkew:
    """The skewness of the tokens of one mixture component, with its standard error under Gaussianity."""

    component: int
    n: int
    skewness: float          # standardised third cumulant (d = 1) or √(Mardia b1) (d > 1)
    stderr: float            # √(6/n) (d = 1) under Gaussianity


def component_skewness(X: np.ndarray, labels: np.ndarray) -> list[ComponentSkew]:
    """The skewness of each labelled component of X (d = 1: sample skewness; d > 1: √(Mardia b1))."""
    out = []
    for k in np.unique(labels):
        Y = X[labels == k]
        n = len(Y)
        if Y.shape[1] == 1:
            sk = float(stats.skew(Y[:, 0], bias=True))
            se = math.sqrt(6 / n)
        else:
            from riccati_verify.numeric.simulate.relu import gaussianity
            g = gaussianity(Y)
            sk, se = math.sqrt(g.mardia_b1), math.sqrt(6 * Y.shape[1] * (Y.shape[1] + 1) * (Y.shape[1] + 2) / 6 / n)
        out.append(ComponentSkew(int(k), n, sk, se))
    return out


def em_two_gaussians_1d(x: np.ndarray, iters: int = 200) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Maximum-likelihood two-component fit (EM from a median split); returns (w, m, s)."""
    x = np.sort(np.asarray(x, float))
    h = len(x) // 2
    w = np.array([0.5, 0.5])
    m = np.array([x[:h].mean(), x[h:].mean()])
    s = np.array([x[:h].var() + 1e-12, x[h:].var() + 1e-12])
    for _ in range(iters):
        logp = np.log(w) - 0.5 * np.log(2 * np.pi * s) - (x[:, None] - m) ** 2 / (2 * s)
        logp -= logp.max(axis=1, keepdims=True)
        r = np.exp(logp)
        r /= r.sum(axis=1, keepdims=True)
        nk = r.sum(axis=0)
        w, m = nk / len(x), (r * x[:, None]).sum(0) / nk
        s = (r * (x[:, None] - m) ** 2).sum(0) / nk + 1e-12
    return w, m, s


def ks_to_mixture_1d(x: np.ndarray, w, m, s) -> float:
    """Kolmogorov–Smirnov distance of the sample x to the 1-D mixture with weights w, means m, variances s."""
    x = np.sort(np.asarray(x, float))
    F = (np.asarray(w) * stats.norm.cdf((x[:, None] - m) / np.sqrt(s))).sum(1)
    n = len(x)
    return float(max(np.max(np.arange(1, n + 1) / n - F), np.max(F - np.arange(n) / n)))


@dataclass(frozen=True)
class MixtureRun:
    """A particle run from a mixture initial law: component skewness at 0 and T,
    the KS distance to a two-component fit (d = 1), ESS and blow-up."""

    t: float
    X: np.ndarray
    labels: np.ndarray
    skew0: list
    skewT: list
    ks_two_component: float | None     # d = 1: KS distance to the EM two-component fit at T
    ks_critical_1pct: float            # 1.63/√N: KS test at 1% for a fully specified law
    seed: int
    ess_min: float
    ess_median: float
    blowup: bool
    reason: str


def mixture_run(schedule: Schedule, mix: GaussianMixture, n_tokens: int, time: float, steps: int, *,
                seed: int, method: str = "rk4") -> MixtureRun:
    """Draw N tokens from `mix` (seeded), run the particle system to `time` and measure the components."""
    X0, labels = mix.sample(n_tokens, np.random.default_rng(seed))
    r = integrate_particles(TransformerDrift(schedule), X0, time, steps, method=method, record_every=steps)
    ks = None
    if mix.dim == 1 and not r.blowup:
        ks = ks_to_mixture_1d(r.X[:, 0], *em_two_gaussians_1d(r.X[:, 0]))
    return MixtureRun(r.time, r.X, labels, component_skewness(X0, labels), component_skewness(r.X, labels),
                      ks, 1.63 / math.sqrt(n_tokens), seed, r.ess_min, r.ess_median, r.blowup, r.reason)

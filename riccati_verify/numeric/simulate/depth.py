"""The discrete residual Transformer with common noise and its depth limit (seed 004, MATH.md §10–11).

    x_{k+1} = x_k + Δt v[μ_k](x_k) + σ (x_k − m_k) ΔW_k,   ΔW_k = √Δt ξ_k shared by all tokens,

with v the N-token attention velocity (`attention.attention`) plus Ax + b, and the noise part of
`noise.noise_increment` (Euler or Milstein).  `strong_errors` integrates the same tokens along
the same Brownian path at several layer thicknesses Δt (a coarse increment is the sum of the
fine ones it covers) and returns the pathwise error against the finest: the strong-convergence
measurement behind the claim O(Δt^{1/2}).  It is lighter than `noise.simulate_common_noise`
(no moment records, no ESS), which is what a many-path rate fit needs.
"""

from __future__ import annotations

import math

import numpy as np

from riccati_verify.core.errors import InputError
from riccati_verify.numeric.simulate.noise import noise_increment
from riccati_verify.numeric.simulate.particles import sample_gaussian
from riccati_verify.numeric.views import float_view

__all__ = ["MAX_PATH_STEPS", "residual_transformer", "strong_errors"]

MAX_PATH_STEPS = 1 << 16


def _batched_attention(X: np.ndarray, B: np.ndarray) -> np.ndarray:
    """`attention.attention` for a stack of independent token sets X (P, N, d), one per path.

    The same log-sum-exp form (query x, kernel exp(⟨Bx, y⟩), self included); batching the
    paths is what makes many-path strong-error fits affordable (tests compare it with
    `attention` path by path)."""
    L = np.matmul(X @ B.T, np.swapaxes(X, 1, 2))
    L -= L.max(axis=2, keepdims=True)
    np.exp(L, out=L)
    return np.matmul(L, X) / L.sum(axis=2, keepdims=True)


def residual_transformer(params, X0: np.ndarray, dW: np.ndarray, time: float, sigma: float,
                         scheme: str = "euler") -> np.ndarray:
    """The tokens after n residual layers of thickness time/n along the increments dW.

    X0 is (N, d) with dW of shape (n,), or a stack (P, N, d) of independent paths with dW (P, n)."""
    X = np.array(X0, float)
    single = X.ndim == 2
    if single:
        X, dW = X[None], np.asarray(dW, float)[None]
    n = dW.shape[1]
    if not 1 <= n <= MAX_PATH_STEPS:
        raise InputError(f"number of layers {n} is outside 1..{MAX_PATH_STEPS}")
    A, B, V, b = (np.asarray(a, float) for a in float_view(params))
    h = time / n
    for k in range(n):
        v = X @ A.T + b + _batched_attention(X, B) @ V.T
        X = X + h * v + noise_increment(X - X.mean(axis=1, keepdims=True), dW[:, k, None, None], h, sigma,
                                        scheme, "ito")
        if not np.all(np.isfinite(X)):
            raise ArithmeticError(f"the tokens overflowed at layer {k + 1} of {n}")
    return X[0] if single else X


def strong_errors(params, state, tokens: int, time: float, sigma: float, fine: int, coarse, paths: int, *,
                  seed: int, scheme: str = "euler") -> np.ndarray:
    """RMS token error at `time` of each coarse layer count against `fine` layers, relative to the RMS
    distance of the reference tokens to their mean, per path.

    Returns an array (len(coarse), paths).  The generator seeded by `seed` draws all paths' tokens,
    then their fine increments; every coarse count must divide `fine`."""
    if any(fine % n for n in coarse):
        raise InputError("every coarse layer count must divide the fine one")
    rng = np.random.default_rng(seed)
    X0 = np.stack([sample_gaussian(state, tokens, rng, np.float64) for _ in range(paths)])
    dW = rng.standard_normal((paths, fine)) * math.sqrt(time / fine)
    ref = residual_transformer(params, X0, dW, time, sigma, scheme)
    # the common noise scales every token's distance to the mean by the same random factor
    # e^{σW − σ²t/2}; the error relative to that spread is what a fit across paths can average
    spread = np.mean(np.sum((ref - ref.mean(axis=1, keepdims=True)) ** 2, axis=2), axis=1)
    out = np.empty((len(coarse), paths))
    for i, n in enumerate(coarse):
        X = residual_transformer(params, X0, dW.reshape(paths, n, fine // n).sum(axis=2), time, sigma, scheme)
        out[i] = np.sqrt(np.mean(np.sum((X - ref) ** 2, axis=2), axis=1) / spread)
    return out

"""Multi-head attention and the head limit H → ∞ (MATH.md §9).

Heads θ_h = (V_h, B_h) are drawn i.i.d. from a parameter measure ρ:
`GaussianHeads` (entries V₀ + s·E, B₀ + s·F with standard normal E, F,
entrywise correlation r) or `ListHeads` (ρ uniform on an explicit list).
For a Gaussian token law the H-head velocity is affine,

    v_H(x) = (A + M_H) x + V̄_H m + b,  M_H = (1/H) Σ V_h Σ B_h,  V̄_H = (1/H) Σ V_h,

(`symbolic.multihead`), and its H → ∞ limit replaces M_H, V̄_H by E_ρ[VΣB],
E_ρ[V].  For ρ Gaussian, E_ρ[VΣB] = V₀ΣB₀ + s² r Σ (derived symbolically).

`velocity_error` is the L²(μ) distance between v_H and v_∞ for μ = N(m, Σ),
in closed form: E‖δc + δM x‖² = ‖δc + δM m‖² + tr(δM Σ δMᵀ).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from riccati_verify.core.errors import InputError
from riccati_verify.numeric.simulate.particles import HeadSet

__all__ = ["GaussianHeads", "ListHeads", "MAX_HEADS", "check_heads", "head_averages", "head_limit_errors", "integrate_multihead_moments", "multihead_moment_rhs", "velocity_error"]

MAX_HEADS = 4096


def check_heads(H: int) -> None:
    """InputError unless 1 ≤ H ≤ MAX_HEADS."""
    if not 1 <= H <= MAX_HEADS:
        raise InputError(f"number of heads {H} is outside 1..{MAX_HEADS}")


@dataclass(frozen=True)
class GaussianHeads:
    """ρ: V = V₀ + s E, B = B₀ + s F, entries of (E, F) standard normal pairs with correlation r."""

    V0: np.ndarray
    B0: np.ndarray
    spread: float
    corr: float = 0.0

    def sample(self, H: int, rng: np.random.Generator) -> HeadSet:
        """H i.i.d. heads from ρ, drawn with `rng`."""
        check_heads(H)
        d = self.V0.shape[0]
        E = rng.standard_normal((H, d, d))
        G = rng.standard_normal((H, d, d))
        F = self.corr * E + math.sqrt(1 - self.corr**2) * G
        return HeadSet(self.V0 + self.spread * E, self.B0 + self.spread * F)

    def mean_V(self, S: np.ndarray) -> np.ndarray:
        """E_ρ[V] (= V₀; S is unused)."""
        return np.asarray(self.V0, float)

    def mean_VSB(self, S: np.ndarray) -> np.ndarray:
        """E_ρ[V S B] = V₀ S B₀ + s² r Sᵀ."""
        return self.V0 @ S @ self.B0 + self.spread**2 * self.corr * S.T


@dataclass(frozen=True)
class ListHeads:
    """ρ uniform on an explicit list of heads (V_k, B_k)."""

    V: np.ndarray   # (K, d, d)
    B: np.ndarray

    def sample(self, H: int, rng: np.random.Generator) -> HeadSet:
        """H heads drawn uniformly (with replacement) from the list, with `rng`."""
        check_heads(H)
        idx = rng.integers(0, self.V.shape[0], size=H)
        return HeadSet(self.V[idx], self.B[idx])

    def mean_V(self, S: np.ndarray) -> np.ndarray:
        """E_ρ[V]: the mean of the listed V_k (S is unused)."""
        return self.V.mean(axis=0)

    def mean_VSB(self, S: np.ndarray) -> np.ndarray:
        """E_ρ[V S B]: the mean of V_k S B_k over the list."""
        return np.einsum("kij,jl,klm->im", self.V, S, self.B) / self.V.shape[0]


def head_averages(heads: HeadSet, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(V̄_H, M_H = (1/H) Σ V_h Σ B_h)."""
    return heads.V.mean(axis=0), np.einsum("hij,jl,hlm->im", heads.V, S, heads.B) / heads.H


def multihead_moment_rhs(A, b, Vbar, M, m, S):
    """(ṁ, Σ̇) of the multi-head moment ODE given V̄ and M = (1/H)ΣV_hΣB_h (or their limits)."""
    J = A + M
    JS = J @ S
    return (A + Vbar) @ m + M @ m + b, JS + JS.T


def integrate_multihead_moments(A, b, averages, m0, S0, time: float, *, rtol=1e-10, atol=1e-12):
    """Integrate the multi-head moment ODE; `averages(S) -> (V̄, M)` gives the head averages at Σ.

    Returns (m(T), Σ(T), blown_up: bool, t_stop).
    """
    d = len(m0)

    def f(_t, y):
        S = y[d:].reshape(d, d)
        Vbar, M = averages(S)
        dm, dS = multihead_moment_rhs(A, b, Vbar, M, y[:d], S)
        return np.concatenate([dm, dS.ravel()])

    def big(_t, y):
        return 1e12 - np.max(np.abs(y))
    big.terminal = True
    with np.errstate(all="ignore"):
        sol = solve_ivp(f, (0, time), np.concatenate([m0, np.ravel(S0)]), method="DOP853",
                        rtol=rtol, atol=atol, events=big)
    y = sol.y[:, -1]
    return y[:d], y[d:].reshape(d, d), sol.status != 0, float(sol.t[-1])


def velocity_error(heads: HeadSet, rho, m: np.ndarray, S: np.ndarray) -> float:
    """L²(N(m,Σ)) distance between the H-head velocity and its H → ∞ limit."""
    Vbar, M = head_averages(heads, S)
    dM = M - rho.mean_VSB(S)
    dc = (Vbar - rho.mean_V(S)) @ m
    r = dc + dM @ m
    return float(np.sqrt(r @ r + np.trace(dM @ S @ dM.T)))


def head_limit_errors(rho, m: np.ndarray, S: np.ndarray, H_grid, seeds) -> np.ndarray:
    """velocity_error for each H in H_grid and each seed: array (len(H_grid), len(seeds))."""
    out = np.empty((len(H_grid), len(seeds)))
    for i, H in enumerate(H_grid):
        for k, sd in enumerate(seeds):
            out[i, k] = velocity_error(rho.sample(int(H), np.random.default_rng(sd)), rho, m, S)
    return out

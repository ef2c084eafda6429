"""Radon's linearisation of the covariance Riccati equation for V = vI (MATH.md §7).

With V = vI the covariance obeys Σ̇ = AΣ + ΣAᵀ + 2v Σ B_s Σ, and Σ = Y X⁻¹ where

    d/dt [X; Y] = H [X; Y],   H = [[-Aᵀ, -2v B_s], [0, A]],   X(0) = I, Y(0) = Σ0.

Writing E = exp(H t): E11 = e^{-Aᵀt}, E22 = e^{At}, and E12 = -2v e^{-Aᵀt} W(t)
with W(t) = ∫_0^t e^{Aᵀs} B_s e^{As} ds.  Hence X(t) = e^{-Aᵀt}(I - 2v W(t) Σ0).

Factor Σ0 = C D Cᵀ exactly (C of full column rank r, D diagonal > 0).  Then
det X(t) = e^{-t tr A} det D · det N(t) with the symmetric r×r matrix

    N(t) = D⁻¹ - 2v Cᵀ W(t) C = D⁻¹ + Cᵀ E22ᵀ E12 C,

and Σ(t) = e^{At} C N(t)⁻¹ Cᵀ e^{Aᵀt}.  N(0) = D⁻¹ ≻ 0, so the blow-up time is
the first t at which N(t) stops being positive definite; this also covers a
rank-deficient Σ0.  Its derivative Ṅ(t) = -2v Cᵀ e^{Aᵀt} B_s e^{At} C makes
N monotone in the Loewner order whenever v B_s is semidefinite:

- v B_s ⪯ 0: N(t) ⪰ D⁻¹ ≻ 0 for all t, so no blow-up ever (any A);
- v B_s ⪰ 0: N decreases, so N(T) ≻ 0 implies N ≻ 0 on all of [0, T].
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np
from flint import arb, arb_mat, ctx

from riccati_verify.core import balls, exact
from riccati_verify.core.model import Gaussian, Params

__all__ = ["RadonSystem", "loewner_sign", "psd_factor", "radon_hamiltonian"]


def radon_hamiltonian(A: exact.Matrix, v: Fraction, B: exact.Matrix) -> exact.Matrix:
    """The 2d×2d matrix H of the linear system d/dt [X; Y] = H [X; Y]."""
    d = len(A)
    Bs = exact.sym_part(B)
    zero = Fraction(0)
    top = tuple(tuple(-A[j][i] for j in range(d)) + tuple(-2 * v * Bs[i][j] for j in range(d))
                for i in range(d))
    bottom = tuple((zero,) * d + tuple(A[i]) for i in range(d))
    return top + bottom


def psd_factor(S: exact.Matrix) -> tuple[exact.Matrix, tuple[Fraction, ...]]:
    """Exact S = C diag(D) Cᵀ for a symmetric PSD S, C of full column rank r = rank S.

    Symmetric elimination with the largest diagonal pivot; for a PSD matrix a
    zero diagonal entry forces a zero row, so no 2×2 pivots are needed.  Column
    k of C has a 1 at its pivot row and 0 at the earlier pivot rows, which
    makes the full column rank evident.
    """
    n = len(S)
    M = [list(r) for r in S]
    cols, D = [], []
    while True:
        i = max(range(n), key=lambda k: M[k][k])
        p = M[i][i]
        if p <= 0:
            if any(x != 0 for r in M for x in r):
                raise ValueError("matrix is not positive semidefinite")
            break
        c = [M[k][i] / p for k in range(n)]
        for a in range(n):
            if c[a]:
                for b in range(n):
                    M[a][b] -= p * c[a] * c[b]
        cols.append(c)
        D.append(p)
    C = tuple(tuple(cols[k][i] for k in range(len(cols))) for i in range(n))
    return C, tuple(D)


def loewner_sign(v: Fraction, B: exact.Matrix) -> str:
    """'opposite' if v B_s ⪯ 0, 'same' if v B_s ⪰ 0 (and ≠ 0), else 'mixed' (exact)."""
    vBs = exact.scale(v, exact.sym_part(B))
    plus, minus, _ = exact.ldl_inertia(vBs)
    if plus == 0:
        return "opposite"
    if minus == 0:
        return "same"
    return "mixed"


@dataclass
class RadonSystem:
    """The reduced matrix N(t) of one problem with V = vI, in floats and in balls."""

    params: Params
    state: Gaussian

    def __post_init__(self):
        v = self.params.V_scalar
        if v is None:
            raise ValueError("Radon's linearisation needs V = vI")
        self.v = v
        self.d = self.params.dim
        self.H = radon_hamiltonian(self.params.A, v, self.params.B)
        self.Bs = exact.sym_part(self.params.B)
        self.C, self.D = psd_factor(self.state.cov)
        self.r = len(self.D)
        self.sign = loewner_sign(v, self.params.B)

    # --- floats: only for locating T*, never for a verdict -------------------
    @cached_property
    def _float(self):
        C = np.array(self.C, dtype=float).reshape(self.d, self.r)
        return (np.array(self.H, dtype=float), C, np.diag([1 / float(x) for x in self.D]),
                np.array(self.Bs, dtype=float))

    @cached_property
    def h_norm(self) -> float:
        """An upper bound on ‖H‖ used to choose scaling-and-squaring steps and working precision (a float heuristic, not a proof)."""
        return float(np.linalg.norm(self._float[0], 2))

    def lambda_min_float(self, t: float) -> float:
        """λ_min(N(t)) in low precision, relative to max(1, ‖N‖) (NaN if not finite).

        W(t) is built by scaling and squaring, W(2τ) = W(τ) + e^{Aᵀτ} W(τ) e^{Aτ},
        from a short Van Loan step: forming N from the blocks of exp(Ht) directly
        cancels catastrophically when e^{At} is small and e^{-Aᵀt} large.  The
        arithmetic is arb at 64 bits (midpoints only; this locates T*, it proves
        nothing), which on a loaded machine is also far faster than a
        multi-threaded BLAS call for these small matrices.
        """
        d = self.d
        scale = self.h_norm * t
        if not math.isfinite(scale):   # ‖H‖t past the float range (V ≈ 1e200): no float location
            return math.nan
        k = max(0, math.ceil(math.log2(max(scale, 1e-300))) + 1)
        with ctx.workprec(64):
            H, C, Dinv, _, _ = self._arb()
            E = (H * arb(t / 2 ** k)).exp()
            K = _block(E, d, d, d, d).transpose() * _block(E, 0, d, d, d)   # -2v W(τ)
            G = _block(E, d, d, d, d)                                          # e^{Aτ}
            for _ in range(k):
                K = K + G.transpose() * K * G
                G = G * G
            N = (Dinv + C.transpose() * K * C).mid()
        Nf = np.array([[float(N[i, j]) for j in range(self.r)] for i in range(self.r)])
        if not np.all(np.isfinite(Nf)):
            return math.nan
        # scaled first: LAPACK's eigvalsh can fail to converge on entries near the float range
        # (a LinAlgError had escaped `blowup_time` on a diagonal d = 3 draw); no convergence is no
        # float location, as for an overflow
        Nf = Nf / max(1.0, np.abs(Nf).max())
        Ns = (Nf + Nf.T) / 2
        try:
            return float(np.linalg.eigvalsh(Ns)[0])
        except np.linalg.LinAlgError:
            return math.nan

    def log2_exp_size(self, t: float) -> float:
        """log2 of max |exp(Ht)| entries (64-bit arb; no overflow)."""
        with ctx.workprec(64):
            H = self._arb()[0]
            E = (H * arb(t)).exp()
            m = max(abs(float(E[i, j].mid())) if E[i, j].mid().is_finite() else math.inf
                    for i in range(2 * self.d) for j in range(2 * self.d))
        return math.log2(m) if 0 < m < math.inf else 1.45 * self.h_norm * t

    # --- balls -----------------------------------------------------------------
    def _arb(self):
        key = ctx.prec
        cache = self.__dict__.setdefault("_arb_cache", {})
        if key not in cache:
            Dinv = arb_mat(self.r, self.r)
            for k, x in enumerate(self.D):
                Dinv[k, k] = balls.arb_of(1 / x)
            cache[key] = (balls.arb_matrix(self.H), balls.arb_matrix(self.C) if self.r else None,
                          Dinv, balls.arb_matrix(self.Bs), balls.arb_of(self.v))
        return cache[key]

    def N_balls(self, t: arb, derivative: bool = False):
        """Enclosures of N(t) (and Ṅ(t)) for every t in the ball `t`."""
        H, C, Dinv, Bs, v = self._arb()
        d = self.d
        E = (H * t).exp()
        E12 = _block(E, 0, d, d, d)
        E22 = _block(E, d, d, d, d)
        N = balls.symmetrized(Dinv + C.transpose() * E22.transpose() * E12 * C)
        if not derivative:
            return N
        G = E22 * C
        Ndot = balls.symmetrized(G.transpose() * Bs * G * (-2 * v))
        return N, Ndot

    def _expA_box(self, a: Fraction, b: Fraction) -> arb_mat:
        key = ("A", ctx.prec)
        cache = self.__dict__.setdefault("_arb_cache", {})
        if key not in cache:
            cache[key] = balls.arb_matrix(self.params.A)
            cache[("AtBs", ctx.prec)] = balls.arb_matrix(
                exact.add(exact.matmul(exact.transpose(self.params.A), self.Bs), exact.matmul(self.Bs, self.params.A)))
        return (cache[key] * balls.interval(a, b)).exp()

    def proves_positive_on(self, a: Fraction, b: Fraction) -> bool:
        """N ≻ 0 on [a, b] by a second-order Taylor form and convexity of the PD cone.

        N(a + s) = N(a) + sṄ(a) + R(s) with R(s) ∈ R := [0, h²/2]·N̈([a, b]),
        N̈ = -2v (e^{At}C)ᵀ (AᵀB_s + B_sA) e^{At}C.  For s ∈ [0, h] this is a convex
        combination of N(a) + R(s) and N(a) + hṄ(a) + R(s); if both families are
        PD (proved in balls, after a congruence that tames wrapping), so is N(a + s).
        """
        h = b - a
        _, C, _, _, v = self._arb()
        G = self._expA_box(a, b) * C
        Ndd = balls.symmetrized(G.transpose() * self._arb_cache[("AtBs", ctx.prec)] * G * (-2 * v))
        R = Ndd * balls.interval(Fraction(0), h * h / 2)
        Na, Nda = self.N_balls(balls.arb_of(a), derivative=True)
        return all(balls.proves_positive_definite(balls.congruence_preconditioned(M)[0])
                   for M in (Na + R, Na + Nda * balls.arb_of(h) + R))

    def N_box(self, a: Fraction, b: Fraction):
        """Enclosures of N(t) and Ṅ(t) for all t ∈ [a, b], by the mean-value form.

        N(t) = N(a) + ∫_a^t Ṅ ∈ N(a) + [0, b-a]·Ṅ([a, b]) entrywise, and
        Ṅ = -2v (e^{At}C)ᵀ B_s e^{At}C involves only e^{At}: no cancellation, unlike
        the blocks of exp(H·[a, b]), whose ball overestimate grows like e^{2‖H‖t}.
        """
        _, C, _, Bs, v = self._arb()
        G = self._expA_box(a, b) * C
        Ndot = balls.symmetrized(G.transpose() * Bs * G * (-2 * v))
        N = self.N_balls(balls.arb_of(a)) + Ndot * balls.interval(Fraction(0), b - a)
        return N, Ndot


def _block(M: arb_mat, r0: int, c0: int, nr: int, nc: int) -> arb_mat:
    out = arb_mat(nr, nc)
    for i in range(nr):
        for j in range(nc):
            out[i, j] = M[r0 + i, c0 + j]
    return out

"""Derivation of the Gaussian moment ODE from the attention velocity field.

Nothing here writes eq. 1.1 down and trusts it.  The chain is:

1. `tilting_identity`: for μ = N(m, Σ) the exponentially tilted mean
   ∫ y e^{⟨c,y⟩} μ(dy) / ∫ e^{⟨c,y⟩} μ(dy) equals m + Σc.  Proved twice with
   explicit symbolic entries: by completing the square in the density (Σ ≻ 0,
   with a symbolic precision matrix), and as ∇_c log E[e^{⟨c,y⟩}] from the
   Gaussian moment generating function (any PSD Σ, singular included).
2. `affine_velocity`: substituting c = Bx into v(x) = Ax + b + V·(tilted mean)
   and reading off the Jacobian and the constant term gives
   v(x) = J x + (Vm + b) with J = A + VΣB, and the remainder is checked to be 0.
3. `moment_ode`: an affine velocity pushes N(m, Σ) forward along
   x ↦ (I + hJ)x + h·c₀ to N((I+hJ)m + hc₀, (I+hJ)Σ(I+hJ)ᵀ); differentiating
   at h = 0 gives (ṁ, Σ̇).
4. `check_against_reference`: the result is compared with MATH.md eq. 1.1,
   written independently; a mismatch raises `DerivationMismatch`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

__all__ = [
    "AffineVelocity", "DerivationMismatch", "MomentODE", "MomentSymbols", "affine_velocity",
    "check_against_reference", "general_matrix", "lambdified_rhs", "moment_ode", "moment_symbols",
    "rank_invariance_identity", "reference_eq_1_1", "symmetric_matrix",
    "tilting_by_completing_square", "tilting_by_mgf", "tilting_identity",
    "tilting_identity_1d_integral", "vector",
]


class DerivationMismatch(AssertionError):
    """The derived moment ODE differs from eq. 1.1."""


@dataclass(frozen=True)
class MomentSymbols:
    """Fully symbolic d-dimensional data: A, B, V (general), b, m, Σ (symmetric)."""

    d: int
    A: sp.Matrix
    B: sp.Matrix
    V: sp.Matrix
    b: sp.Matrix
    m: sp.Matrix
    S: sp.Matrix

    @property
    def all_symbols(self) -> list[sp.Symbol]:
        """Every distinct symbol once, in a fixed order (Σ's off-diagonal symbols appear twice in S)."""
        out = []
        for M in (self.A, self.B, self.V, self.b, self.m, self.S):
            for s in M:
                if s not in out:
                    out.append(s)
        return out


def symmetric_matrix(name: str, d: int) -> sp.Matrix:
    """A d×d symmetric matrix of real symbols: entries (i, j) and (j, i) are the same symbol."""
    return sp.Matrix(d, d, lambda i, j: sp.Symbol(f"{name}_{min(i, j) + 1}{max(i, j) + 1}", real=True))


def general_matrix(name: str, d: int) -> sp.Matrix:
    """A d×d matrix of independent real symbols name_ij."""
    return sp.Matrix(d, d, lambda i, j: sp.Symbol(f"{name}_{i + 1}{j + 1}", real=True))


def vector(name: str, d: int) -> sp.Matrix:
    """A d×1 column of real symbols name_i."""
    return sp.Matrix(d, 1, lambda i, _: sp.Symbol(f"{name}_{i + 1}", real=True))


@lru_cache(maxsize=None)
def moment_symbols(d: int) -> MomentSymbols:
    """The symbolic data of dimension d, cached so that every derivation shares the same symbols."""
    if not 1 <= d <= 8:
        raise ValueError("explicit-entry derivations are supported for d = 1..8")
    return MomentSymbols(d, general_matrix("A", d), general_matrix("B", d), general_matrix("V", d),
                         vector("b", d), vector("m", d), symmetric_matrix("Sigma", d))


# -- 1. the tilting identity ------------------------------------------------

def _is_zero_matrix(M: sp.Matrix) -> bool:
    return all(sp.expand(sp.simplify(e)) == 0 for e in M)


def tilting_by_completing_square(d: int) -> bool:
    """Completing the square, with a symbolic precision matrix P = Σ⁻¹ (Σ ≻ 0).

    The log-density of the tilted law is, up to a constant in y,
        -½ (y-m)ᵀ P (y-m) + cᵀy.
    We verify the identity
        -½ (y-m)ᵀP(y-m) + cᵀy = -½ (y-m')ᵀP(y-m') + cᵀm + ½ cᵀP⁻¹c,   m' = m + P⁻¹c,
    as a polynomial identity in y, m, c, P (after clearing det P).  Hence the
    tilted law is N(m + Σc, Σ) and its mean is m + Σc.
    """
    P = symmetric_matrix("P", d)
    y, m, c = vector("y", d), vector("m", d), vector("c", d)
    adj = P.adjugate()
    det = P.det()
    # Multiply through by det P so that Σ = adj(P)/det(P) enters polynomially.
    Sc_times_det = adj * c
    lhs = det * (-(y - m).T * P * (y - m) / 2 + c.T * y)[0]
    shifted = det * (y - m) - Sc_times_det  # det·(y - m')
    rhs = (-(shifted.T * P * shifted)[0] / (2 * det)) + det * (c.T * m)[0] + (c.T * Sc_times_det)[0] / 2
    return sp.simplify(sp.expand(lhs - rhs)) == 0


def tilting_by_mgf(d: int) -> sp.Matrix:
    """∇_c log E[exp⟨c, y⟩] for y ~ N(m, Σ), any PSD Σ (the MGF holds for singular Σ).

    Returns the tilted mean as a sympy column vector in the symbols of
    `moment_symbols(d)` and a vector c.
    """
    s = moment_symbols(d)
    c = vector("c", d)
    log_mgf = (c.T * s.m)[0] + (c.T * s.S * c)[0] / 2
    return sp.Matrix([sp.diff(log_mgf, ci) for ci in c])


def tilting_identity(d: int) -> bool:
    """Both proofs of ∫ y e^{⟨c,y⟩}dμ / ∫ e^{⟨c,y⟩}dμ = m + Σc for explicit d."""
    s = moment_symbols(d)
    c = vector("c", d)
    return tilting_by_completing_square(d) and _is_zero_matrix(tilting_by_mgf(d) - (s.m + s.S * c))


def tilting_identity_1d_integral() -> bool:
    """d = 1 directly from the Gaussian integrals (sympy's integrator, σ > 0)."""
    y, m, c = sp.symbols("y m c", real=True)
    s = sp.Symbol("s", positive=True)
    dens = sp.exp(-(y - m) ** 2 / (2 * s**2)) * sp.exp(c * y)
    num = sp.integrate(y * dens, (y, -sp.oo, sp.oo))
    den = sp.integrate(dens, (y, -sp.oo, sp.oo))
    return sp.simplify(num / den - (m + s**2 * c)) == 0


# -- 2. the affine velocity -------------------------------------------------

@dataclass(frozen=True)
class AffineVelocity:
    """The velocity on a Gaussian written as v(x) = J x + c0 (J = A + VΣB, c0 = Vm + b)."""

    J: sp.Matrix   # Jacobian: v(x) = J x + c0
    c0: sp.Matrix


def affine_velocity(d: int) -> AffineVelocity:
    """Substitute the tilted mean into v and read off J and c0; raises DerivationMismatch if v is not affine in x."""
    s = moment_symbols(d)
    x = vector("x", d)
    c = vector("c", d)
    tilted = tilting_by_mgf(d).subs(dict(zip(c, s.B * x)), simultaneous=True)
    v = s.A * x + s.b + s.V * tilted
    J = v.jacobian(x)
    c0 = v.subs({xi: 0 for xi in x})
    if not _is_zero_matrix(v - (J * x + c0)):
        raise DerivationMismatch("the velocity on a Gaussian is not affine in x")
    return AffineVelocity(J.applyfunc(sp.expand), c0.applyfunc(sp.expand))


# -- 3. the moment ODE --------------------------------------------------------

@dataclass(frozen=True)
class MomentODE:
    """ṁ = mean_rhs, Σ̇ = cov_rhs, as sympy matrices in `moment_symbols(d)`."""

    d: int
    mean_rhs: sp.Matrix
    cov_rhs: sp.Matrix
    J: sp.Matrix

    def latex(self) -> str:
        """The ODE as a LaTeX string, for reports and `riccati-verify derive`."""
        return (r"\dot m = " + sp.latex(self.mean_rhs) + r",\qquad \dot\Sigma = " + sp.latex(self.cov_rhs))


@lru_cache(maxsize=None)
def moment_ode(d: int) -> MomentODE:
    """Derive the Gaussian moment ODE (ṁ, Σ̇) for dimension d, symbolically.

    The velocity is v(x) = Ax + b + V·Attn_B[μ](x), where the kernel is
    exp(⟨Bx, y⟩) with the query x (a Transformer with scores ⟨Qx, Ky⟩ has
    B = KᵀQ) and the softmax runs over all tokens.  On μ = N(m, Σ) the
    velocity is affine, v(x) = Jx + Vm + b with J = A + VΣB, and pushing N(m, Σ)
    forward along it gives

        ṁ = (A + V)m + VΣBm + b,    Σ̇ = JΣ + ΣJᵀ.

    Parameters
    ----------
    d : int
        The dimension, 1 ≤ d ≤ 8 (every matrix entry is its own symbol).

    Returns
    -------
    MomentODE
        ``mean_rhs`` (d × 1) and ``cov_rhs`` (d × d) as sympy matrices in the
        symbols of `moment_symbols(d)` (A, B, V general, Σ symmetric), and
        the Jacobian ``J``.  Cached per d.

    Raises
    ------
    ValueError
        If d is outside 1..8.
    DerivationMismatch
        If the derivation disagrees with MATH.md eq. 1.1, written
        independently (`check_against_reference`).

    Notes
    -----
    Exact symbolic algebra (sympy), no floats: the tilted mean m + Σc comes
    from the Gaussian moment generating function, so singular Σ is covered.
    `lambdified_rhs` turns the result into a float (numpy) function; the
    exact model types (`Params`, `Gaussian`) hold Fractions and are not
    involved here.
    """
    s = moment_symbols(d)
    av = affine_velocity(d)
    h = sp.Symbol("h", real=True)
    T = sp.eye(d) + h * av.J
    m_h = T * s.m + h * av.c0
    S_h = T * s.S * T.T
    mean_rhs = sp.diff(m_h, h).subs(h, 0).applyfunc(sp.expand)
    cov_rhs = sp.diff(S_h, h).subs(h, 0).applyfunc(sp.expand)
    ode = MomentODE(d, mean_rhs, cov_rhs, av.J)
    check_against_reference(ode)
    return ode


def reference_eq_1_1(d: int) -> tuple[sp.Matrix, sp.Matrix]:
    """MATH.md eq. 1.1, written independently of the derivation."""
    s = moment_symbols(d)
    mdot = (s.A + s.V) * s.m + s.V * s.S * s.B * s.m + s.b
    Sdot = s.A * s.S + s.S * s.A.T + s.V * s.S * s.B * s.S + s.S * s.B.T * s.S * s.V.T
    return mdot, Sdot


def check_against_reference(ode: MomentODE) -> None:
    """Raise DerivationMismatch unless `ode` equals eq. 1.1, which is written without the derivation."""
    mdot, Sdot = reference_eq_1_1(ode.d)
    if not (_is_zero_matrix(ode.mean_rhs - mdot) and _is_zero_matrix(ode.cov_rhs - Sdot)):
        raise DerivationMismatch(f"derived moment ODE differs from eq. 1.1 for d = {ode.d}")


# -- rank invariance ----------------------------------------------------------

def rank_invariance_identity(d: int) -> bool:
    """Σ(t) = Φ(t)Σ0Φ(t)ᵀ with Φ̇ = JΦ solves Σ̇ = JΣ + ΣJᵀ (J arbitrary, time-dependent).

    Φ's entries are undefined functions of t; their derivatives are replaced
    by the entries of JΦ, and the residual must vanish identically.
    """
    t = sp.Symbol("t", real=True)
    Phi = sp.Matrix(d, d, lambda i, j: sp.Function(f"Phi_{i + 1}{j + 1}")(t))
    J = sp.Matrix(d, d, lambda i, j: sp.Function(f"J_{i + 1}{j + 1}")(t))
    S0 = symmetric_matrix("Sigma0", d)
    S = Phi * S0 * Phi.T
    dPhi = J * Phi
    Sdot = S.diff(t).subs({sp.Derivative(Phi[i, j], t): dPhi[i, j] for i in range(d) for j in range(d)})
    return _is_zero_matrix(Sdot - (J * S + S * J.T))


@lru_cache(maxsize=8)
def lambdified_rhs(d: int):
    """A numpy function f(A, B, V, b, m, S) -> (ṁ, Σ̇) generated from the derived expressions
    (cached per d: the lambdify, not the derivation, was most of a call's cost)."""
    s = moment_symbols(d)
    ode = moment_ode(d)
    args = [list(s.A), list(s.B), list(s.V), list(s.b), list(s.m), [s.S[i, j] for i in range(d) for j in range(d)]]
    f = sp.lambdify([sp.flatten(a) for a in args], [list(ode.mean_rhs), list(ode.cov_rhs)], modules="numpy")

    def rhs(A, B, V, b, m, S):
        import numpy as np

        mdot, Sdot = f(np.ravel(A), np.ravel(B), np.ravel(V), np.ravel(b), np.ravel(m), np.ravel(S))
        return np.array(mdot, dtype=float), np.array(Sdot, dtype=float).reshape(d, d)

    return rhs

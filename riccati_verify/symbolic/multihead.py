"""The multi-head moment ODE (MATH.md §9), derived from the per-head tilting identity.

For H heads θ_h = (V_h, B_h) the velocity is

    v(x) = A x + b + (1/H) Σ_h V_h · Attn_{B_h}[μ](x).

For μ = N(m, Σ) each head's tilted mean is m + Σ B_h x (`moments.tilting_by_mgf`
with c = B_h x), so v is affine with Jacobian J = A + (1/H) Σ_h V_h Σ B_h and
constant term (1/H) Σ_h V_h m + b.  Pushing N(m, Σ) along an affine velocity
gives the moment ODE

    ṁ = (A + V̄) m + M m + b,   Σ̇ = J Σ + Σ Jᵀ,   V̄ = (1/H) Σ V_h,  M = (1/H) Σ V_h Σ B_h.

`head_limit_expectation` computes the H → ∞ limit E_ρ[V Σ B] for Gaussian head
noise V_h = V₀ + s E_h, B_h = B₀ + s F_h (entries of E_h, F_h standard normal,
with a correlation r between E_h[i,j] and F_h[i,j]) by expanding the polynomial
and replacing monomials by Gaussian moments.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from riccati_verify.symbolic.moments import DerivationMismatch, _is_zero_matrix, general_matrix, moment_symbols, tilting_by_mgf, vector

__all__ = [
    "MultiHeadODE", "check_head_limit_expectation_1d", "gaussian_expectation",
    "head_limit_closed_form", "head_limit_expectation", "head_limit_mean_square_1d",
    "multihead_moment_ode", "single_head_reduction",
]


@dataclass(frozen=True)
class MultiHeadODE:
    """The derived moment ODE for H heads: v = Ax + b + (1/H)Σ_h V_h·Attn_{B_h}, J = A + (1/H)Σ_h V_hΣB_h."""

    d: int
    H: int
    Vs: tuple        # the heads' V_h (sympy matrices)
    Bs: tuple        # the heads' B_h
    J: sp.Matrix
    mean_rhs: sp.Matrix
    cov_rhs: sp.Matrix


@lru_cache(maxsize=None)
def multihead_moment_ode(d: int, H: int) -> MultiHeadODE:
    """Derive (ṁ, Σ̇) for H heads with fully symbolic V_h, B_h; checked against the closed form."""
    if not (1 <= d <= 3 and 1 <= H <= 4):
        raise ValueError("explicit-entry multi-head derivations are supported for d ≤ 3, H ≤ 4")
    s = moment_symbols(d)
    x, c = vector("x", d), vector("c", d)
    Vs = tuple(general_matrix(f"V{h + 1}", d) for h in range(H))
    Bs = tuple(general_matrix(f"B{h + 1}", d) for h in range(H))
    tilted = tilting_by_mgf(d)                      # m + Σc as a function of c
    v = s.A * x + s.b
    for Vh, Bh in zip(Vs, Bs):
        v += Vh * tilted.subs(dict(zip(c, Bh * x)), simultaneous=True) / H
    J = v.jacobian(x)
    c0 = v.subs({xi: 0 for xi in x})
    if not _is_zero_matrix(v - (J * x + c0)):
        raise DerivationMismatch("the multi-head velocity on a Gaussian is not affine")
    h = sp.Symbol("h", real=True)
    T = sp.eye(d) + h * J
    mean_rhs = sp.diff(T * s.m + h * c0, h).subs(h, 0).applyfunc(sp.expand)
    cov_rhs = sp.diff(T * s.S * T.T, h).subs(h, 0).applyfunc(sp.expand)
    ode = MultiHeadODE(d, H, Vs, Bs, J.applyfunc(sp.expand), mean_rhs, cov_rhs)
    _check_against_closed_form(ode)
    return ode


def _check_against_closed_form(ode: MultiHeadODE) -> None:
    s = moment_symbols(ode.d)
    Vbar = sum(ode.Vs, sp.zeros(ode.d)) / ode.H
    M = sum((Vh * s.S * Bh for Vh, Bh in zip(ode.Vs, ode.Bs)), sp.zeros(ode.d)) / ode.H
    J = s.A + M
    if not (_is_zero_matrix(ode.mean_rhs - ((s.A + Vbar) * s.m + M * s.m + s.b))
            and _is_zero_matrix(ode.cov_rhs - (J * s.S + s.S * J.T))):
        raise DerivationMismatch(f"multi-head moment ODE (d={ode.d}, H={ode.H}) differs from the closed form")


def single_head_reduction(d: int) -> bool:
    """With H = 1 the derivation reproduces the single-head eq. 1.1 of `moments.moment_ode`."""
    from riccati_verify.symbolic.moments import moment_ode

    s = moment_symbols(d)
    ode = multihead_moment_ode(d, 1)
    sub = {a: b for a, b in zip(list(ode.Vs[0]) + list(ode.Bs[0]), list(s.V) + list(s.B))}
    ref = moment_ode(d)
    return (_is_zero_matrix(ode.mean_rhs.subs(sub) - ref.mean_rhs)
            and _is_zero_matrix(ode.cov_rhs.subs(sub) - ref.cov_rhs))


def gaussian_expectation(expr: sp.Expr, pairs: list[tuple[sp.Symbol, sp.Symbol]], r: sp.Expr) -> sp.Expr:
    """E[expr] for a polynomial in standard normal pairs (e, f) with corr(e, f) = r, pairs independent.

    Writing f = r e + √(1−r²) g with g independent, every monomial factorises
    into independent standard normals, whose moments are E[z^k] = (k−1)!! for
    even k and 0 for odd k.
    """
    gs = [sp.Symbol(f"g_{i}", real=True) for i in range(len(pairs))]
    sub = {f: r * e + sp.sqrt(1 - r**2) * g for (e, f), g in zip(pairs, gs)}
    normals = [e for e, _ in pairs] + gs
    poly = sp.Poly(sp.expand(expr.subs(sub, simultaneous=True)), *normals)
    total = sp.Integer(0)
    for powers, coeff in poly.terms():
        moment = sp.Integer(1)
        for k in powers:
            moment *= 0 if k % 2 else sp.factorial2(k - 1)
        total += coeff * moment
    return sp.expand(total)


def head_limit_expectation(d: int) -> tuple[sp.Matrix, sp.Matrix, sp.Symbol, sp.Symbol]:
    """E_ρ[V Σ B] and E_ρ[V] for V = V₀ + sE, B = B₀ + sF (entrywise standard normal, corr r).

    Returns (E[VΣB], E[V], s, r).  The expectation is E[V]ΣE[B] + s² r Σ_ij-terms;
    with independent V and B (r = 0) it is V₀ Σ B₀.
    """
    s_ = moment_symbols(d)
    spread, r = sp.Symbol("s", nonnegative=True), sp.Symbol("r", real=True)
    V0, B0 = general_matrix("V0", d), general_matrix("B0", d)
    E, F = general_matrix("E", d), general_matrix("F", d)
    V, B = V0 + spread * E, B0 + spread * F
    pairs = [(E[i, j], F[i, j]) for i in range(d) for j in range(d)]
    EVSB = (V * s_.S * B).applyfunc(lambda e: gaussian_expectation(e, pairs, r))
    EV = V.applyfunc(lambda e: gaussian_expectation(e, pairs, r))
    return EVSB, EV, spread, r


def head_limit_closed_form(d: int) -> bool:
    """E[VΣB] = V₀ΣB₀ + s² r Σ and E[V] = V₀ for the Gaussian head measure.

    E[E_ik Σ_kl F_lj] = r Σ_kl [i=l][k=j] = r Σ_ji, so the correction is s² r Σᵀ = s² r Σ.
    """
    s_ = moment_symbols(d)
    EVSB, EV, spread, r = head_limit_expectation(d)
    V0, B0 = general_matrix("V0", d), general_matrix("B0", d)
    return _is_zero_matrix(EVSB - (V0 * s_.S * B0 + spread**2 * r * s_.S.T)) and _is_zero_matrix(EV - V0)


def head_limit_mean_square_1d(H: int = 2) -> tuple[sp.Expr, bool]:
    """d = 1: E_ρ ‖v_H − v_∞‖²_{L²(N(m,Σ))} for H explicit Gaussian heads, and whether it equals C/H.

    v_H − v_∞ = (1/H) Σ_h ξ_h with ξ_h(x) = (V_h − E V) m + (V_h Σ B_h − E[VΣB]) x, i.i.d. with
    mean zero; the L²(μ) norm of an affine map a + Gx is (a + Gm)² + G²Σ.  The expectation is
    computed for H explicit independent heads and compared with C/H, C = E_ρ‖ξ‖² (one head).
    Returns (C, identity holds).
    """
    m, S = sp.Symbol("m", real=True), sp.Symbol("Sigma", positive=True)
    V0, B0 = sp.symbols("V0 B0", real=True)
    spread, r = sp.Symbol("s", nonnegative=True), sp.Symbol("r", real=True)
    EVSB = V0 * S * B0 + spread**2 * r * S      # `head_limit_expectation`, d = 1
    Es = [sp.Symbol(f"E{h}", real=True) for h in range(H)]
    Fs = [sp.Symbol(f"F{h}", real=True) for h in range(H)]
    xis_a, xis_G = [], []
    for E_, F_ in zip(Es, Fs):
        V, B = V0 + spread * E_, B0 + spread * F_
        xis_a.append((V - V0) * m)
        xis_G.append(V * S * B - EVSB)
    a_, G_ = sum(xis_a) / H, sum(xis_G) / H
    l2 = (a_ + G_ * m) ** 2 + G_**2 * S
    pairs = list(zip(Es, Fs))
    total = gaussian_expectation(l2, pairs, r)
    one = (xis_a[0] + xis_G[0] * m) ** 2 + xis_G[0] ** 2 * S
    C = gaussian_expectation(one, pairs[:1], r)
    return sp.factor(C), sp.simplify(total - C / H) == 0


def check_head_limit_expectation_1d() -> bool:
    """The d = 1 limit used above agrees with `head_limit_expectation(1)`."""
    EVSB, EV, spread, r = head_limit_expectation(1)
    s_ = moment_symbols(1)
    V0, B0 = general_matrix("V0", 1), general_matrix("B0", 1)
    return sp.expand(EVSB[0] - (V0[0] * s_.S[0, 0] * B0[0] + spread**2 * r * s_.S[0, 0])) == 0

"""Equilibria of the algebraic Bernoulli equation (MATH.md §5–§7).

    F(Σ) = AΣ + ΣAᵀ + VΣBΣ + ΣBᵀΣVᵀ,   Σ symmetric.

Coordinates.  A symmetric d×d matrix H is represented by its upper triangle
h = (H_ij)_{i≤j} in row-major order (`sym_pairs`), n = d(d+1)/2 numbers.  A
linear map on symmetric matrices of the form

    H ↦ Σ_k (X_k H Y_kᵀ + Y_k H X_kᵀ)

(`pair_operator`) is then an n×n matrix; both the linearisation

    DF(Σ*)[H] = JH + HJᵀ + VHWᵀ + WHVᵀ,   J = A + VΣ*B,  W = Σ*Bᵀ

(equal to MATH.md's six-term formula, grouped) and the Lyapunov operator
P ↦ AᵀP + PA = pair(Aᵀ, I) are of this form.  Since F is quadratic,

    F(Σ* + H) = F(Σ*) + DF(Σ*)[H] + VHBH + HBᵀHVᵀ                  (exact)

which is what the region-of-attraction bound in `stability.py` uses.

Closed forms: d = 1 (§6), V = vI through the Lyapunov equation
AᵀP* + P*A = −2vB_s solved exactly over ℚ (§7), diagonal decoupled systems,
and small dimensions symbolically with sympy.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

import flint
import numpy as np

from riccati_verify.core import exact
from riccati_verify.core.model import Params

__all__ = ["RiccatiEquilibrium", "bernoulli_exact", "bernoulli_np", "diagonal_equilibria",
           "fmpq_to_fraction", "from_fmpq_mat", "from_sym", "inverse_exact", "is_diagonal",
           "linearisation_fmpq", "linearisation_np", "lyapunov_solve_exact", "lyapunov_solve_scipy",
           "pair_operator", "pair_operator_np", "positive_definite_sympy", "quadratic_remainder_np",
           "riccati_equilibrium", "scalar_equilibria", "sym_dim", "sym_pairs", "symbolic_equilibria",
           "to_fmpq_mat", "to_sym"]

# ---------------------------------------------------------------------------
# symmetric coordinates


sym_pairs = exact.sym_pairs


def sym_dim(d: int) -> int:
    """n = d(d+1)/2, the number of coordinates of a symmetric d×d matrix (the size of DF and the Lyapunov operator)."""
    return d * (d + 1) // 2


def to_sym(H) -> list:
    """Upper-triangle coordinates of a symmetric matrix (any entry type)."""
    d = len(H)
    return [H[i][j] for i, j in sym_pairs(d)]


def from_sym(h: Sequence, d: int, zero: Any = 0) -> list[list]:
    """The symmetric matrix with upper-triangle coordinates h (inverse of `to_sym`), any entry type."""
    H = [[zero] * d for _ in range(d)]
    for (i, j), x in zip(sym_pairs(d), h):
        H[i][j] = x
        H[j][i] = x
    return H


def pair_operator(pairs: Sequence[tuple[Any, Any]], d: int, zero: Any = 0) -> list[list]:
    """n×n matrix of H ↦ Σ (X H Yᵀ + Y H Xᵀ) on upper-triangle coordinates.

    Entries of X, Y may be Fractions, fmpq, arb or floats (indexable [r][c]).
    The coefficient of the coordinate h_ij in (X H Yᵀ)_pq is
    X_pi Y_qj + X_pj Y_qi (the second term only when i ≠ j), because H has the
    entry h_ij at both (i, j) and (j, i).
    """
    idx = sym_pairs(d)
    out = []
    for p, q in idx:
        row = []
        for i, j in idx:
            c = zero
            for X, Y in pairs:
                c = c + X[p][i] * Y[q][j] + Y[p][i] * X[q][j]
                if i != j:
                    c = c + X[p][j] * Y[q][i] + Y[p][j] * X[q][i]
            row.append(c)
        out.append(row)
    return out


def pair_operator_np(pairs: Sequence[tuple[np.ndarray, np.ndarray]], d: int) -> np.ndarray:
    """Float version of `pair_operator`, vectorised with Kronecker products.

    Row-major vec(X H Yᵀ) = (X ⊗ Y) vec(H); the duplication matrix maps the
    coordinates h to vec(H), and the selection keeps the upper triangle.
    """
    K = sum(np.kron(X, Y) + np.kron(Y, X) for X, Y in pairs)
    idx = sym_pairs(d)
    rows = [i * d + j for i, j in idx]
    cols = np.array([i * d + j for i, j in idx])
    colsT = np.array([j * d + i for i, j in idx])
    Kr = K[rows]
    L = Kr[:, cols] + Kr[:, colsT]
    diag = np.array([i == j for i, j in idx])
    L[:, diag] = Kr[:, cols[diag]]
    return L


# ---------------------------------------------------------------------------
# F, DF, remainder (float and exact)


def bernoulli_np(A, B, V, S) -> np.ndarray:
    """F(Σ) for float arrays."""
    VSB = V @ S @ B
    JS = (A + VSB) @ S
    return JS + JS.T


def bernoulli_exact(params: Params, S: exact.Matrix) -> exact.Matrix:
    """F(Σ) in exact rationals."""
    J = exact.add(params.A, exact.matmul(exact.matmul(params.V, S), params.B))
    JS = exact.matmul(J, S)
    return exact.add(JS, exact.transpose(JS))


def linearisation_np(A, B, V, S) -> np.ndarray:
    """The n×n matrix of DF(Σ) on symmetric coordinates (floats)."""
    d = A.shape[0]
    J = A + V @ S @ B
    W = S @ B.T
    return pair_operator_np([(J, np.eye(d)), (V, W)], d)


def linearisation_fmpq(params: Params, S: exact.Matrix) -> flint.fmpq_mat:
    """DF(Σ) on symmetric coordinates, exactly (python-flint fmpq_mat)."""
    d = params.dim
    A, B, V, Sq = (to_fmpq_mat(M) for M in (params.A, params.B, params.V, S))
    J = A + V * Sq * B
    W = Sq * B.transpose()
    I = flint.fmpq_mat(d, d, [1 if i == j else 0 for i in range(d) for j in range(d)])
    n = sym_dim(d)
    rows = pair_operator([(J.tolist(), I.tolist()), (V.tolist(), W.tolist())], d, flint.fmpq(0))
    return flint.fmpq_mat(n, n, [x for r in rows for x in r])


def quadratic_remainder_np(B, V, H) -> np.ndarray:
    """F(Σ*+H) − F(Σ*) − DF(Σ*)[H] = VHBH + HBᵀHVᵀ."""
    X = V @ H @ B @ H
    return X + X.T


# ---------------------------------------------------------------------------
# conversions


to_fmpq_mat = exact.to_fmpq_mat
"""An exact matrix as python-flint fmpq_mat (`core.exact`'s, one copy)."""


def fmpq_to_fraction(x) -> Fraction:
    """A python-flint rational as a Fraction, the package's exact number type."""
    return Fraction(int(x.p), int(x.q))


from_fmpq_mat = exact.from_fmpq_mat
"""A python-flint fmpq_mat back as tuples of Fractions (`core.exact`'s)."""


# ---------------------------------------------------------------------------
# exact Lyapunov equation


def lyapunov_solve_exact(A: exact.Matrix, Q: exact.Matrix) -> exact.Matrix | None:
    """The symmetric P with AᵀP + PA = Q, exactly; None if the operator is singular.

    The package's one exact Lyapunov solve is `core.exact.lyapunov_solve`; this
    name stays for the callers in the producers.
    """
    return exact.lyapunov_solve(A, Q)


def lyapunov_solve_scipy(A: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """Float cross-check of `lyapunov_solve_exact` (scipy, unverified)."""
    from scipy.linalg import solve_continuous_lyapunov

    return solve_continuous_lyapunov(np.asarray(A, float).T, np.asarray(Q, float))


def inverse_exact(M: exact.Matrix) -> exact.Matrix | None:
    """M⁻¹ exactly (None if singular): the Riccati reduction maps Σ to P = Σ⁻¹ and back."""
    try:
        return from_fmpq_mat(to_fmpq_mat(M).inv())
    except ZeroDivisionError:
        return None


# ---------------------------------------------------------------------------
# closed forms


@dataclass(frozen=True)
class RiccatiEquilibrium:
    """V = vI (MATH.md §7): P* solves AᵀP + PA = −2vB_s; Σ* = P*⁻¹ when P* is invertible.

    For V = vI every *invertible* equilibrium Σ satisfies this equation for
    P = Σ⁻¹ (multiply F(Σ) = 0 by Σ⁻¹ on both sides), so when the Lyapunov
    operator is nonsingular Σ* is the only invertible equilibrium.
    """

    v: Fraction
    P: exact.Matrix | None          # None: the Lyapunov operator is singular
    Sigma: exact.Matrix | None      # P⁻¹ when P is invertible
    positive_definite: bool


def riccati_equilibrium(params: Params) -> RiccatiEquilibrium | None:
    """Closed-form invertible equilibrium for V = vI (None when V is not scalar)."""
    v = params.V_scalar
    if v is None:
        return None
    Bs = exact.sym_part(params.B)
    P = lyapunov_solve_exact(params.A, exact.scale(-2 * v, Bs))
    if P is None:
        return RiccatiEquilibrium(v, None, None, False)
    S = inverse_exact(P)
    return RiccatiEquilibrium(v, P, S, S is not None and exact.is_pd(P))


def scalar_equilibria(params: Params) -> list[Fraction] | None:
    """d = 1: the roots of 2aσ + 2vβσ² (MATH.md §6); None when every σ is one (a = vβ = 0)."""
    if params.dim != 1:
        raise ValueError("scalar_equilibria needs d = 1")
    a, vb = params.A[0][0], params.V[0][0] * params.B[0][0]
    if vb == 0:
        return None if a == 0 else [Fraction(0)]
    return [Fraction(0)] if a == 0 else [Fraction(0), -a / vb]


def is_diagonal(M: exact.Matrix) -> bool:
    """M has no off-diagonal entry, exactly: the decoupled closed forms apply only then."""
    return all(M[i][j] == 0 for i in range(len(M)) for j in range(len(M)) if i != j)


def diagonal_equilibria(params: Params) -> list[exact.Matrix] | None:
    """Diagonal A, V, B: the diagonal equilibria, each coordinate a scalar Bernoulli root.

    Returns None when some coordinate has a = vβ = 0 (a continuum).  Non-diagonal
    equilibria may exist as well; they are not listed.
    """
    if not all(is_diagonal(M) for M in (params.A, params.B, params.V)):
        return None
    d = params.dim
    roots = []
    for i in range(d):
        a, vb = params.A[i][i], params.V[i][i] * params.B[i][i]
        if vb == 0:
            if a == 0:
                return None
            roots.append([Fraction(0)])
        else:
            roots.append([Fraction(0)] if a == 0 else [Fraction(0), -a / vb])
    out = [()]
    for r in roots:
        out = [c + (x,) for c in out for x in r]
    return [tuple(tuple(c[i] if i == j else Fraction(0) for j in range(d)) for i in range(d)) for c in out]


# ---------------------------------------------------------------------------
# symbolic (sympy) for small d


def symbolic_equilibria(params: Params, max_dim: int = 2) -> list[exact.Matrix] | None:
    """All real equilibria (exact algebraic entries) as sympy matrices.

    Solves the polynomial system F(Σ) = 0 in the d(d+1)/2 unknowns with sympy.
    Returns None when the solution set is not finite.  Only for d ≤ max_dim
    (the Bézout bound 2^n grows fast: d = 3 has up to 64 solutions and sympy
    may take minutes, so it must be asked for explicitly).
    """
    import sympy as sp

    d = params.dim
    if d > max_dim:
        raise ValueError(f"symbolic equilibria limited to d <= {max_dim}")
    from riccati_verify.symbolic.views import sympy_view

    A, B, V, _ = sympy_view(params)
    syms = sp.symbols(f"s0:{sym_dim(d)}", real=True)
    S = sp.Matrix(from_sym(list(syms), d))
    F = A * S + S * A.T + V * S * B * S + S * B.T * S * V.T
    eqs = [sp.expand(e) for e in to_sym(F.tolist())]
    eqs = [e for e in eqs if e != 0]
    if not eqs:
        return None
    G = sp.groebner(eqs, *syms, order="lex")
    if not G.is_zero_dimensional:
        return None
    sols = sp.solve_poly_system(list(G.exprs), *syms) or []
    # Radical expressions of real roots often keep an imaginary part that simplify() cannot
    # remove, so realness is decided at 60 digits and then confirmed exactly: the number of
    # distinct real values of the last unknown must equal the number of real roots of the
    # univariate last Groebner element (Sturm count, exact).
    real = [s for s in sols if all(abs(sp.N(sp.im(x), 60)) < sp.Float(10) ** -50 for x in s)]
    last = sp.Poly(G.exprs[-1], syms[-1]) if G.exprs[-1].free_symbols <= {syms[-1]} else None
    if last is not None:
        values = {sp.N(sp.re(s[-1]), 40) for s in real}
        if len(values) != len(sp.Poly(last).real_roots()):
            raise ArithmeticError("real-root count of the elimination polynomial disagrees with the solutions")
    return [sp.Matrix(from_sym([sp.re(x) for x in s], d)) for s in real]


def positive_definite_sympy(M, digits: int = 60) -> bool:
    """Sylvester's criterion on a sympy matrix with algebraic entries (minors evaluated at `digits`;
    a minor within 10^-(digits-10) of 0 counts as not positive)."""
    import sympy as sp

    n = M.shape[0]
    for k in range(1, n + 1):
        m = sp.N(M[:k, :k].det(), digits)
        if not sp.re(m) > sp.Float(10) ** (10 - digits):
            return False
    return True


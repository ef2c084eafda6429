"""No blow-up ever, from a Lyapunov solution (V = vI, any A, any sign of B_s).

If a symmetric W∞ solves Aᵀ W∞ + W∞ A = -B_s, then d/dt(e^{Aᵀt} W∞ e^{At}) =
-e^{Aᵀt} B_s e^{At}, so W(t) = W∞ - e^{Aᵀt} W∞ e^{At}.  When v W∞ ⪰ 0 this
gives 2v W(t) ⪯ 2v W∞ for every t ≥ 0, hence

    N(t) = D⁻¹ - 2v Cᵀ W(t) C ⪰ D⁻¹ - 2v Cᵀ W∞ C =: N∞,

and N∞ ≻ 0 proves that N never loses definiteness: Σ(t) exists for all t ≥ 0 (no
finite-time blow-up; it may still grow without bound, as e^{At} may).  Every step is exact rational arithmetic (no Hurwitz assumption used).
"""

from __future__ import annotations

from fractions import Fraction

from riccati_verify.core import exact

__all__ = ["MAX_DIM_LYAPUNOV", "lyapunov_solution", "never_blows_up"]

MAX_DIM_LYAPUNOV = 12
"""Exact solve of d(d+1)/2 unknowns; larger d skips this certificate."""


def lyapunov_solution(A: exact.Matrix, Bs: exact.Matrix) -> exact.Matrix | None:
    """The symmetric solution W of AᵀW + WA = -B_s, or None (singular, too large or past the
    exact solve's work budget)."""
    if len(A) > MAX_DIM_LYAPUNOV:
        return None
    from riccati_verify.core.errors import WorkBudgetExceeded

    try:
        return exact.lyapunov_solve(A, exact.scale(-1, Bs))
    except WorkBudgetExceeded:       # as for a large d: this optional certificate is skipped
        return None


def never_blows_up(v: Fraction, A: exact.Matrix, B: exact.Matrix, C: exact.Matrix,
                   D: tuple[Fraction, ...]) -> exact.Matrix | None:
    """W∞ proving no blow-up ever (conditions checked exactly), or None.

    The certificate's whole content: a `no_blowup` "lyapunov" witness needs only W∞,
    since every condition is re-checked exactly by the checker.
    """
    Bs = exact.sym_part(B)
    W = lyapunov_solution(A, Bs)
    if W is None or not exact.is_psd(exact.scale(v, W)):
        return None
    r = len(D)
    K = exact.matmul(exact.matmul(exact.transpose(C), exact.scale(2 * v, W)), C)
    Ninf = tuple(tuple((1 / D[i] if i == j else 0) - K[i][j] for j in range(r)) for i in range(r))
    return W if exact.is_pd(Ninf) else None

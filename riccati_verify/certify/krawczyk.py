"""The producer's own existence test for an equilibrium of F in a ball (interval Newton / Krawczyk).

    F(Σ) = AΣ + ΣAᵀ + VΣBΣ + ΣBᵀΣVᵀ,   G(s) = F(Σ(s)) on the upper-triangle coordinates s.

The `equilibrium` and `lyapunov_stability` certificates claim that F has a zero
in the ball {Σ symmetric : |Σ_ij − c_ij| ≤ r}.  The checker proves such a claim
with its own code; the producer must not lean on that code (a bug in it would
be confirmed by the very code that should catch it), so it decides where to
put the ball with this module, written independently:

- F is evaluated as JΣ + (JΣ)ᵀ with J = A + VΣB on python-flint `arb_mat`s;
- the derivative is the grouped form DF(Σ)[H] = JH + HJᵀ + VHWᵀ + WHVᵀ,
  W = ΣBᵀ, assembled by `equilibria.pair_operator` (the checker writes out
  the six terms of MATH.md §5 entrywise instead);
- the Krawczyk operator K = c − Y G(c) + (I − Y G'(box))[−r, r]ⁿ with
  Y = mid(G'(c))⁻¹ is bounded row by row: |Y G(c)|ᵢ + r Σⱼ |I − Y G'(box)|ᵢⱼ < r
  for every i proves K ⊂ interior(box), hence exactly one zero in the box.

radius 0 is decided exactly in rationals (`equilibria.bernoulli_exact`).
"""

from __future__ import annotations

from fractions import Fraction

import flint

from riccati_verify.core import balls, exact
from riccati_verify.core.model import Params
from riccati_verify.core.threads import threads_for
from riccati_verify.certify.equilibria import bernoulli_exact, pair_operator, sym_dim

__all__ = ["PREC", "ball_positive_definite", "has_zero_in_ball"]

PREC = 256
"""Bits of arb precision: the checker's default, so that what the producer accepts the checker can."""


def _arb_mat(M: exact.Matrix) -> flint.arb_mat:
    return balls.arb_matrix(M)


def _ball(center: exact.Matrix, radius: Fraction) -> flint.arb_mat:
    """Every symmetric Σ with |Σ_ij − c_ij| ≤ r (entries of one ball shared by (i, j) and (j, i))."""
    d = len(center)
    B = _arb_mat(center)
    if radius:
        rad = flint.arb(0, balls.arb_of(Fraction(radius)).abs_upper())
        for i in range(d):
            for j in range(d):
                B[i, j] = B[i, j] + rad
    return B




def _rows(M: flint.arb_mat) -> list[list[flint.arb]]:
    return [[M[i, j] for j in range(M.ncols())] for i in range(M.nrows())]


def _residual(A, B, V, S: flint.arb_mat) -> list[flint.arb]:
    """G(s) = F(Σ) on upper-triangle coordinates, in ball arithmetic."""
    JS = (A + V * S * B) * S
    F = JS + JS.transpose()
    return [F[i, j] for i, j in exact.sym_pairs(S.nrows())]


def _derivative(A, B, V, S: flint.arb_mat) -> flint.arb_mat:
    """G'(s): DF(Σ)[H] = JH + HJᵀ + VHWᵀ + WHVᵀ on upper-triangle coordinates (grouped form)."""
    d = S.nrows()
    J = A + V * S * B
    W = S * B.transpose()
    I = balls.identity(d)
    return flint.arb_mat(pair_operator([(_rows(J), _rows(I)), (_rows(V), _rows(W))], d, flint.arb(0)))


def has_zero_in_ball(params: Params, center: exact.Matrix, radius: Fraction) -> bool:
    """Whether F provably has a zero in the ball around `center` (exactly one, for radius > 0).

    Parameters
    ----------
    params : Params
        The model; F is built from its exact A, B, V (kernel exp(⟨Bx, y⟩) with query x, B = KᵀQ).
    center : exact.Matrix
        A symmetric rational matrix.
    radius : Fraction
        r ≥ 0; r = 0 asks for F(center) = 0 exactly.

    Returns
    -------
    bool
        True only when proved (exact rationals for r = 0, the Krawczyk test in arb for r > 0);
        False means "not proved", never "no zero".
    """
    radius = Fraction(radius)
    if radius < 0 or not exact.is_symmetric(center):
        return False
    d = params.dim
    if radius == 0:
        return bernoulli_exact(params, center) == exact.zeros(d)
    # the n×n inverse and product (n = d(d+1)/2) are the cost: threads change the wall time only
    with flint.ctx.workprec(PREC), threads_for(sym_dim(d)):
        A, B, V = (_arb_mat(M) for M in (params.A, params.B, params.V))
        c = _arb_mat(center)
        g = _residual(A, B, V, c)
        Jc = _derivative(A, B, V, c)
        n = Jc.nrows()
        mid = flint.arb_mat([[Jc[i, j].mid() for j in range(n)] for i in range(n)])
        try:
            Yb = mid.inv()
        except ZeroDivisionError:
            return False
        Y = flint.arb_mat([[Yb[i, j].mid() for j in range(n)] for i in range(n)])
        Jbox = _derivative(A, B, V, _ball(center, radius))
        R = balls.identity(n) - Y * Jbox
        Yg = Y * flint.arb_mat([[x] for x in g])
        r = balls.arb_of(radius)
        for i in range(n):
            spread = sum((R[i, j].abs_upper() for j in range(n)), flint.arb(0))
            if not Yg[i, 0].abs_upper() + r * spread < r:
                return False
        return True


def ball_positive_definite(center: exact.Matrix, radius: Fraction) -> bool:
    """Every symmetric matrix of the ball is ≻ 0: exact inertia for r = 0, ball LDLᵀ otherwise."""
    radius = Fraction(radius)
    if radius == 0:
        return exact.is_pd(center)
    with flint.ctx.workprec(PREC):
        return balls.proves_positive_definite(_ball(center, radius))

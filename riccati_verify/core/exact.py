"""Exact rational linear algebra on tuples of `fractions.Fraction`.

This is the trusted core that turns floats into verdicts: every sign or
definiteness decision that the toolkit reports as *certified* is taken here
(or in python-flint ball arithmetic), never on floats.  Matrices are tuples of
row tuples, so they are immutable and hashable.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterable, Sequence

Vector = tuple[Fraction, ...]
Matrix = tuple[tuple[Fraction, ...], ...]


def as_matrix(rows: Iterable[Iterable[object]]) -> Matrix:
    return tuple(tuple(Fraction(x) for x in row) for row in rows)


def as_vector(xs: Iterable[object]) -> Vector:
    return tuple(Fraction(x) for x in xs)


def identity(d: int, scale: Fraction | int = 1) -> Matrix:
    s = Fraction(scale)
    return tuple(tuple(s if i == j else Fraction(0) for j in range(d)) for i in range(d))


def zeros(n: int, m: int | None = None) -> Matrix:
    return tuple((Fraction(0),) * (n if m is None else m) for _ in range(n))


def transpose(M: Matrix) -> Matrix:
    return tuple(zip(*M)) if M else ()


def matmul(X: Matrix, Y: Matrix) -> Matrix:
    Yt = transpose(Y)
    return tuple(tuple(sum((a * b for a, b in zip(row, col)), Fraction(0)) for col in Yt) for row in X)


def matvec(X: Matrix, v: Vector) -> Vector:
    return tuple(sum((a * b for a, b in zip(row, v)), Fraction(0)) for row in X)


def add(X: Matrix, Y: Matrix) -> Matrix:
    return tuple(tuple(a + b for a, b in zip(r, s)) for r, s in zip(X, Y))


def sub(X: Matrix, Y: Matrix) -> Matrix:
    return tuple(tuple(a - b for a, b in zip(r, s)) for r, s in zip(X, Y))


def scale(c: Fraction | int, X: Matrix) -> Matrix:
    c = Fraction(c)
    return tuple(tuple(c * a for a in r) for r in X)


def sym_part(X: Matrix) -> Matrix:
    """(X + Xᵀ)/2."""
    return scale(Fraction(1, 2), add(X, transpose(X)))


def is_symmetric(X: Matrix) -> bool:
    return all(X[i][j] == X[j][i] for i in range(len(X)) for j in range(i))


def ldl_inertia(S: Matrix) -> tuple[int, int, int]:
    """Exact inertia (n_plus, n_minus, n_zero) of a symmetric rational matrix.

    Symmetric Gaussian elimination with diagonal pivoting and, when every
    remaining diagonal entry vanishes, a 2×2 congruence step.  Sylvester's law
    of inertia makes the counts independent of the pivot order.
    """
    if not is_symmetric(S):
        raise ValueError("inertia needs a symmetric matrix")
    M = [list(r) for r in S]
    n = len(M)
    idx = list(range(n))
    plus = minus = 0
    while idx:
        piv = next((i for i in idx if M[i][i] != 0), None)
        if piv is None:
            pair = next(((i, j) for i in idx for j in idx if i < j and M[i][j] != 0), None)
            if pair is None:
                break  # the rest is the zero matrix
            i, j = pair
            # x_i -> x_i + x_j makes the (i, i) entry 2 M[i][j] != 0.
            for k in range(n):
                M[i][k] += M[j][k]
            for k in range(n):
                M[k][i] += M[k][j]
            piv = i
        p = M[piv][piv]
        if p > 0:
            plus += 1
        else:
            minus += 1
        rest = [i for i in idx if i != piv]
        for i in rest:
            f = M[i][piv] / p
            if f:
                for j in rest:
                    M[i][j] -= f * M[piv][j]
        idx = rest
    return plus, minus, n - plus - minus


def is_psd(S: Matrix) -> bool:
    _, minus, _ = ldl_inertia(S)
    return minus == 0


def norm2_at_most(X: Matrix, c: Fraction) -> bool:
    """‖X‖₂ ≤ c for square X, decided exactly: c²I − XᵀX ⪰ 0."""
    return is_psd(sub(identity(len(X), c * c), matmul(transpose(X), X)))


def is_pd(S: Matrix) -> bool:
    plus, _, _ = ldl_inertia(S)
    return plus == len(S)


def rank(M: Matrix) -> int:
    """Exact rank by Gaussian elimination over ℚ."""
    R = [list(r) for r in M]
    rk = 0
    ncols = len(R[0]) if R else 0
    for c in range(ncols):
        piv = next((r for r in range(rk, len(R)) if R[r][c] != 0), None)
        if piv is None:
            continue
        R[rk], R[piv] = R[piv], R[rk]
        for r in range(rk + 1, len(R)):
            f = R[r][c] / R[rk][c]
            if f:
                R[r] = [a - f * b for a, b in zip(R[r], R[rk])]
        rk += 1
    return rk


def solve(M: Matrix, rhs: Sequence[Fraction]) -> Vector:
    """Exact solution of M x = rhs; raises ValueError if M is singular."""
    n = len(M)
    R = [list(M[i]) + [Fraction(rhs[i])] for i in range(n)]
    for c in range(n):
        piv = next((r for r in range(c, n) if R[r][c] != 0), None)
        if piv is None:
            raise ValueError("singular matrix")
        R[c], R[piv] = R[piv], R[c]
        for r in range(n):
            if r != c and R[r][c] != 0:
                f = R[r][c] / R[c][c]
                R[r] = [a - f * b for a, b in zip(R[r], R[c])]
    return tuple(R[i][n] / R[i][i] for i in range(n))


def frac_to_str(x: Fraction) -> str:
    """Canonical exact string: '3', '-1/3'."""
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"

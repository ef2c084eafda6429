"""Ball-arithmetic core (python-flint arb): the companion of `exact.py`.

Everything a certificate checker needs to decide a sign or a definiteness
question about a matrix known only as an enclosure.  Like `exact.py` this is
trusted core: it imports nothing from the producing code, so checkers may use
it.  All functions work at the ambient `flint.ctx.prec`; callers choose the
precision with `flint.ctx.workprec(bits)`.

The definiteness tests are symmetric Gaussian elimination (LDLᵀ without
pivoting) on the lower triangle of a ball matrix.  Each computed pivot ball
contains the true pivot of *every* symmetric matrix whose lower-triangle
entries lie in the input balls, so a proved sign holds for all of them.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, arb_mat, fmpq, fmpq_mat

from riccati_verify.core import exact

__all__ = ["MAX_COVER_WORK", "arb_matrix", "arb_of", "identity", "congruence_preconditioned", "cover_unit", "det_derivative",
           "fmpq_of", "fraction_of_mid", "interval", "ldl_pivots", "proves_not_positive_semidefinite",
           "proves_positive_definite", "symmetrized"]

MAX_COVER_WORK = 10 ** 8
"""Work budget of one ball cover of a time interval (a no_blowup or blowup witness): the checker
refuses a cover past it before the next box proof, and the producer emits none past it, so both
agree.  Measured worst case at the budget (benchmarks/bench_bounds.py, box_cover_budget): about a
minute; at 2e9 it was 22 minutes."""


def cover_unit(d: int, prec: int) -> float:
    """Cost of one box proof in cover-work units: a ball exponential of the 2d x 2d block at prec
    bits, (2d)³·(prec/64)^1.6, plus a fixed part for the per-proof Python and conversion overhead
    (measured: it dominates at d = 1 and 64 bits, about 0.1 ms a proof)."""
    return (2 * d) ** 3 * max(1.0, prec / 64) ** 1.6 + 1000


def fmpq_of(x: Fraction) -> fmpq:
    """A Fraction as python-flint's exact rational, the entry type of exact flint matrices."""
    x = Fraction(x)
    return fmpq(x.numerator, x.denominator)


def arb_of(x: Fraction) -> arb:
    """The rational x as a ball (exact when x is dyadic, else rounded outward)."""
    return arb(fmpq_of(x))


def arb_matrix(M: exact.Matrix) -> arb_mat:
    """An exact rational matrix as a ball matrix at the current precision."""
    return arb_mat(fmpq_mat([[fmpq_of(x) for x in row] for row in M]))


def identity(n: int) -> arb_mat:
    """The n×n identity as an exact ball matrix."""
    return arb_mat(n, n, [int(i == j) for i in range(n) for j in range(n)])


def interval(a: Fraction, b: Fraction) -> arb:
    """A ball containing the whole interval [a, b]."""
    lo, hi = arb_of(a), arb_of(b)
    return lo.union(hi)


def fraction_of_mid(x: arb) -> Fraction:
    """The midpoint of a ball as an exact rational (a dyadic number).

    The one midpoint-to-Fraction conversion: exact, so a bound read off a ball
    endpoint (`x.lower()`, `x.upper()` are exact points) loses nothing.
    """
    man, exp = x.mid().man_exp()
    man, exp = int(man), int(exp)
    return Fraction(man * 2 ** exp) if exp >= 0 else Fraction(man, 2 ** -exp)


def symmetrized(N: arb_mat) -> arb_mat:
    """(N + Nᵀ)/2: contains the true matrix whenever N does and the truth is symmetric."""
    return (N + N.transpose()) * arb(0.5)


def ldl_pivots(N: arb_mat) -> list[arb]:
    """The LDLᵀ pivots d_k = m_k / m_{k-1} (ratios of leading principal minors) of a ball matrix.

    The elimination is `exact.ldl_pivots` (one copy for both arithmetics) on the
    lower triangle of N.  Stops after the first pivot whose sign is not proved
    (it is returned, and the later ones are not computed).
    """
    n = N.nrows()
    return exact.ldl_pivots([[N[i, j] for j in range(i + 1)] for i in range(n)],
                            undecided=lambda d: not (d > 0 or d < 0))


def proves_positive_definite(N: arb_mat) -> bool:
    """True only if every symmetric matrix in the ball N is positive definite.  Only N's lower triangle
    is read (a symmetric matrix is determined by it): a caller with a non-symmetric N must pass its
    symmetric part (`symmetrized`), or the answer speaks of the matrix mirrored from that triangle."""
    piv = ldl_pivots(N)
    return len(piv) == N.nrows() and all(p > 0 for p in piv)


def proves_not_positive_semidefinite(N: arb_mat) -> bool:
    """True only if every symmetric matrix in the ball N has a negative eigenvalue.

    Leading minors m_1..m_{k-1} > 0 and m_k < 0 make the leading k×k block
    indefinite (its eigenvalues have product m_k < 0).
    """
    piv = ldl_pivots(N)
    for p in piv:
        if p < 0:
            return True
        if not p > 0:
            return False
    return False


def det_derivative(N: arb_mat, Ndot: arb_mat) -> arb:
    """d/dt det N(t) by Jacobi's formula as a sum of row-replaced determinants.

    Unlike tr(adj(N) Ṅ) computed through an inverse, this stays finite when N is
    (nearly) singular.
    """
    n = N.nrows()
    total = arb(0)
    for i in range(n):
        M = arb_mat(n, n)
        for r in range(n):
            src = Ndot if r == i else N
            for c in range(n):
                M[r, c] = src[r, c]
        total += M.det()
    return total


def congruence_preconditioned(N: arb_mat, Ndot: arb_mat | None = None):
    """(QᵀNQ, QᵀṄQ) for an exact Q with QᵀNQ ≈ I, or (N, Ṅ) when mid(N) is not numerically PD.

    Q = L⁻ᵀ diag(D)^{-1/2} from an approximate LDLᵀ of the midpoint matrix.  Any
    invertible Q preserves definiteness (Sylvester) and the sign of det and of
    d/dt det (both scale by det(Q)² > 0); a singular Q only makes QᵀNQ singular,
    so nothing can be proved from it.  Q merely tames the wrapping of ball LDLᵀ
    on an ill-conditioned N, so it is computed on midpoints and trusted for nothing.
    """
    n = N.nrows()
    M = N.mid()
    L = arb_mat(n, n)
    D: list[arb] = []
    for k in range(n):
        for j in range(k):
            s = M[k, j]
            for m in range(j):
                s -= L[k, m] * L[j, m] * D[m]
            L[k, j] = (s / D[j]).mid()
        dk = M[k, k]
        for m in range(k):
            dk -= L[k, m] * L[k, m] * D[m]
        dk = dk.mid()
        if not dk > 0:
            return (N, Ndot) if Ndot is not None else (N, None)
        D.append(dk)
        L[k, k] = arb(1)
    try:
        Linv = L.inv().mid()
    except ZeroDivisionError:
        return N, Ndot
    S = arb_mat(n, n)
    for k in range(n):
        S[k, k] = (1 / D[k].sqrt()).mid()
    Q = (Linv.transpose() * S).mid()
    Qt = Q.transpose()
    return symmetrized(Qt * N * Q), (None if Ndot is None else symmetrized(Qt * Ndot * Q))

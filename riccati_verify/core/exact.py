"""Exact rational linear algebra on tuples of `fractions.Fraction`.

This is the trusted core that turns floats into verdicts: every sign or
definiteness decision that the toolkit reports as *certified* is taken here
(or in python-flint ball arithmetic), never on floats.  Matrices are tuples of
row tuples, so they are immutable and hashable.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable, Iterable, Sequence

__all__ = ["BALL_FIRST_WORK", "MAX_INERTIA_WORK", "MAX_LYAPUNOV_WORK", "Matrix", "Vector", "add", "as_matrix",
           "as_vector", "elimination_work", "entry_bits", "frac_to_str", "from_fmpq_mat", "identity", "is_pd",
           "is_psd", "is_symmetric", "ldl_inertia", "ldl_pivots", "log2_upper", "lyapunov_solve", "lyapunov_work",
           "matmul", "max_entry_bits", "matvec", "norm2_at_most", "rank", "routh_inertia", "scale", "solve", "sub", "sym_pairs",
           "sym_part", "to_fmpq_mat", "transpose", "zeros"]

Vector = tuple[Fraction, ...]
Matrix = tuple[tuple[Fraction, ...], ...]


def as_matrix(rows: Iterable[Iterable[object]]) -> Matrix:
    """Exact tuples from any rows of rationals (ints, Fractions, exact strings), so results are hashable."""
    return tuple(tuple(Fraction(x) for x in row) for row in rows)


def as_vector(xs: Iterable[object]) -> Vector:
    """Exact tuple from any sequence of rationals (see `as_matrix`)."""
    return tuple(Fraction(x) for x in xs)


def identity(d: int, scale: Fraction | int = 1) -> Matrix:
    """scale·I, exactly: the shifts and right-hand sides of the exact tests are multiples of I."""
    s = Fraction(scale)
    return tuple(tuple(s if i == j else Fraction(0) for j in range(d)) for i in range(d))


def zeros(n: int, m: int | None = None) -> Matrix:
    """The exact zero matrix (n×n, or n×m), the value exact equilibrium tests compare with."""
    return tuple((Fraction(0),) * (n if m is None else m) for _ in range(n))


def transpose(M: Matrix) -> Matrix:
    """Mᵀ as tuples (the empty matrix stays empty)."""
    return tuple(zip(*M)) if M else ()


def matmul(X: Matrix, Y: Matrix) -> Matrix:
    """XY with exact sums (Fraction(0) start, so integer matrices stay exact too); from 8 rows
    on, python-flint's exact fmpq_mat product (the Fraction sums took 2 s a product at d = 32)."""
    if len(X) >= 8 and len(Y) >= 8 and len(Y[0]) >= 8:
        from flint import fmpq, fmpq_mat

        q = lambda x: fmpq(Fraction(x).numerator, Fraction(x).denominator)
        P = fmpq_mat([[q(a) for a in r] for r in X]) * fmpq_mat([[q(b) for b in r] for r in Y])
        return tuple(tuple(Fraction(int(P[i, j].p), int(P[i, j].q)) for j in range(P.ncols()))
                     for i in range(P.nrows()))
    Yt = transpose(Y)
    return tuple(tuple(sum((a * b for a, b in zip(row, col)), Fraction(0)) for col in Yt) for row in X)


def matvec(X: Matrix, v: Vector) -> Vector:
    """Xv with exact sums."""
    return tuple(sum((a * b for a, b in zip(row, v)), Fraction(0)) for row in X)


def add(X: Matrix, Y: Matrix) -> Matrix:
    """X + Y entrywise."""
    return tuple(tuple(a + b for a, b in zip(r, s)) for r, s in zip(X, Y))


def sub(X: Matrix, Y: Matrix) -> Matrix:
    """X − Y entrywise."""
    return tuple(tuple(a - b for a, b in zip(r, s)) for r, s in zip(X, Y))


def scale(c: Fraction | int, X: Matrix) -> Matrix:
    """cX with c made exact first (a float c is taken as the binary number it denotes)."""
    c = Fraction(c)
    return tuple(tuple(c * a for a in r) for r in X)


def sym_part(X: Matrix) -> Matrix:
    """(X + Xᵀ)/2."""
    return scale(Fraction(1, 2), add(X, transpose(X)))


def is_symmetric(X: Matrix) -> bool:
    """X = Xᵀ exactly (definiteness and inertia are only defined for symmetric input)."""
    return all(X[i][j] == X[j][i] for i in range(len(X)) for j in range(i))


MAX_INERTIA_WORK = 2 * 10 ** 15
"""Budget of the exact elimination in `ldl_inertia`: d^7·b², b the most bits of an entry's numerator
or denominator (the entries of step k are ratios of k×k minors).  fmpq elimination on dense random
symmetric matrices (session 17): d = 8, b = 1400: 0.26 s (W = 4.1e12); d = 12, b = 1400: 2.7 s
(7.0e13); d = 16, b = 800: 4.5 s (1.7e14); d = 16, b = 1400: 10 s (5.3e14); d = 32, b = 50: 3.3 s
(8.6e13); d = 32, b = 1400: 374 s (6.7e16).  A matrix past it whose inertia the balls do not decide
raises WorkBudgetExceeded before the elimination starts (a certificate's matrices are untrusted)."""
BALL_FIRST_WORK = 10 ** 12
"""From this work on `ldl_inertia` first tries ball LDLᵀ (microseconds a pivot, any d), which decides
every matrix whose leading minors are far enough from 0; near-singular ones go on to the exact route."""


def entry_bits(x) -> int:
    """The bits of a rational's numerator or denominator, whichever is longer."""
    return max(int(x.numerator).bit_length(), int(x.denominator).bit_length())


def max_entry_bits(*Ms: Matrix) -> int:
    """The most `entry_bits` over the matrices' entries (1 for none)."""
    return max((entry_bits(x) for M in Ms for r in M for x in r), default=1)


def to_fmpq_mat(M: Matrix):
    """An exact matrix as python-flint's fmpq_mat (exact products, solves, inverses and ranks in C)."""
    from flint import fmpq, fmpq_mat

    return fmpq_mat(len(M), len(M[0]), [fmpq(int(x.numerator), int(x.denominator)) for r in M for x in r])


def from_fmpq_mat(M) -> Matrix:
    """An fmpq_mat back as tuples of Fractions."""
    return tuple(tuple(Fraction(int(x.p), int(x.q)) for x in r) for r in M.tolist())


def elimination_work(M: Matrix) -> int:
    """d^7·b² for a matrix with at most d rows or columns and entries of at most b bits (`MAX_INERTIA_WORK`)."""
    d = max(len(M), max((len(r) for r in M), default=0))
    return d ** 7 * max_entry_bits(M) ** 2


def _ball_inertia(S: Matrix, prec: int) -> tuple[int, int, int] | None:
    """The inertia from ball LDLᵀ pivots at `prec` bits when every pivot's sign is proved, else None.
    Proved signs make every leading principal minor nonzero, so S = LDLᵀ exists and (Sylvester) the
    pivots' signs are the inertia, with no zero eigenvalue."""
    from flint import arb, ctx, fmpq

    n = len(S)
    with ctx.workprec(prec):
        rows = [[arb(fmpq(int(x.numerator), int(x.denominator))) for x in S[i][:i + 1]] for i in range(n)]
        piv = ldl_pivots(rows, undecided=lambda d: not (d > 0 or d < 0))
    if len(piv) < n or not all(p > 0 or p < 0 for p in piv):
        return None
    minus = sum(1 for p in piv if p < 0)
    return n - minus, minus, 0


def ldl_inertia(S: Matrix) -> tuple[int, int, int]:
    """Exact inertia (n_plus, n_minus, n_zero) of a symmetric rational matrix.

    Symmetric Gaussian elimination with diagonal pivoting and, when every
    remaining diagonal entry vanishes, a 2×2 congruence step, in python-flint's
    fmpq (exact; its C gcd made d = 12 with 1400-bit entries 10 times faster than
    Fraction).  Sylvester's law of inertia makes the counts independent of the
    pivot order.  Past `BALL_FIRST_WORK`, ball LDLᵀ is tried first
    (`_ball_inertia`); past `MAX_INERTIA_WORK` an undecided matrix raises
    WorkBudgetExceeded instead of the elimination.
    """
    from flint import fmpq

    if not is_symmetric(S):
        raise ValueError("inertia needs a symmetric matrix")
    n = len(S)
    work = elimination_work(S)
    if work > BALL_FIRST_WORK:
        for prec in (256, min(2 * max_entry_bits(S) + 256, 1 << 16)):
            found = _ball_inertia(S, prec)
            if found is not None:
                return found
        if work > MAX_INERTIA_WORK:
            from riccati_verify.core.errors import WorkBudgetExceeded

            raise WorkBudgetExceeded(f"the exact inertia of this {n}x{n} matrix would cost d^7 x bits^2 = "
                                     f"{work:.3g} > {MAX_INERTIA_WORK:.3g} (its pivots are too near 0 for "
                                     f"balls to decide); fewer digits keep it small")
    M = [[fmpq(int(x.numerator), int(x.denominator)) for x in r] for r in S]
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


def ldl_pivots(S: Sequence[Sequence[Any]], undecided: Callable[[Any], bool] | None = None) -> list:
    """Pivots d_k of the unpivoted LDLᵀ factorisation (ratios of leading principal minors).

    The one elimination of the package: it works on any field-like entries, so
    the exact version (Fractions, stop after the first zero pivot) and the ball
    version (`balls.ldl_pivots`, arb entries, stop after the first pivot whose
    sign is not proved) run the same arithmetic.  Only the lower triangle of S
    is read.  The stopping pivot is returned; later ones are not computed.
    For symmetric S: S ≻ 0 iff all pivots are > 0, S ≺ 0 iff all are < 0.
    """
    stop = undecided if undecided is not None else (lambda p: p == 0)
    n = len(S)
    L = [[S[i][j] for j in range(i + 1)] for i in range(n)]
    piv: list = []
    for k in range(n):
        for j in range(k):
            s = L[k][j]
            for m in range(j):
                s -= L[k][m] * L[j][m] * piv[m]
            L[k][j] = s / piv[j]
        d = L[k][k]
        for m in range(k):
            d -= L[k][m] * L[k][m] * piv[m]
        piv.append(d)
        if stop(d):
            break
    return piv


def is_psd(S: Matrix) -> bool:
    """S ⪰ 0 exactly (no negative eigenvalue), by the exact inertia."""
    _, minus, _ = ldl_inertia(S)
    return minus == 0


MAX_PSD_WORK = 10**9
"""Budget of `psd_scaled`: d³ × (Hadamard bit bound of the denominator-cleared matrix).  The
cost of an exact PSD decision grows with it (multi-modular characteristic polynomial: about
one second at the bound); beyond it the decision is refused, never started."""


def _scaled_integer(S: Matrix) -> tuple[list[list[int]], int]:
    """(Z, H): Z = D S D / g with D_i the lcm of row i's denominators and g the gcd of the result
    (a congruence times a positive scalar, so the inertia is that of S, and Z is an integer matrix), and H a bound on the bits of Z's minors (Hadamard)."""
    d = len(S)
    D = [math.lcm(*[x.denominator for x in r]) for r in S]
    Z = [[(S[i][j] * D[i] * D[j]).numerator for j in range(d)] for i in range(d)]
    g = math.gcd(*[z for r in Z for z in r])
    if g > 1:  # a positive scalar keeps the inertia (S = I/10^90 becomes I)
        Z = [[z // g for z in r] for r in Z]
    H = sum(max(1, max(abs(z) for z in r).bit_length()) for r in Z) + d * max(1, d.bit_length()) // 2
    return Z, H


def psd_work(S: Matrix) -> int:
    """The work measure d³·H that `psd_scaled` compares with MAX_PSD_WORK (cheap: bit lengths only)."""
    return len(S) ** 3 * _scaled_integer(S)[1]


def psd_scaled(S: Matrix, max_work: int = MAX_PSD_WORK) -> tuple[bool, int]:
    """(S ⪰ 0, rank S) for a symmetric rational S, exactly, with bounded work.

    S ⪰ 0 iff the characteristic polynomial det(tI − Z) of the congruent integer matrix
    Z = D S D has coefficients of alternating sign (all its roots are real; Descartes), and the
    rank is d minus the multiplicity of the root 0.  python-flint's multi-modular fmpz_mat
    charpoly does the work; it is refused (ValueError) when d³·H exceeds `max_work`, H being the
    Hadamard bit bound of Z, before anything expensive starts.
    """
    from flint import fmpz_mat

    # Descartes' count needs real roots: a non-symmetric S (e.g. a rotation) would pass
    if any(len(r) != len(S) for r in S) or not is_symmetric(S):
        raise ValueError("psd_scaled needs a square symmetric matrix")
    d = len(S)
    Z, H = _scaled_integer(S)
    if d ** 3 * H > max_work:
        raise ValueError(f"the exact PSD test would cost d^3 x bits = {d ** 3 * H:.3g} > {max_work:.3g} "
                         f"(d = {d}, {H} bits after clearing denominators; a common denominator or "
                         f"fewer digits keeps it small)")
    cp = fmpz_mat(d, d, [z for r in Z for z in r]).charpoly()
    c = [int(cp[k]) for k in range(d + 1)]
    psd = all((-1) ** (d - k) * c[k] >= 0 for k in range(d + 1))
    nullity = next((k for k in range(d + 1) if c[k] != 0), d)
    return psd, d - nullity


def log2_upper(x: Fraction) -> int:
    """An integer ≥ log2|x| for x ≠ 0, from bit lengths only (|p/q| < 2^(bits(p) − bits(q) + 1)); 0 for x = 0."""
    return x.numerator.bit_length() - x.denominator.bit_length() + 1 if x else 0


def norm2_at_most(X: Matrix, c: Fraction) -> bool:
    """‖X‖₂ ≤ c for square X, decided exactly: c²I − XᵀX ⪰ 0 (and c ≥ 0: c² forgets the sign)."""
    if any(len(r) != len(X) for r in X):
        raise ValueError("norm2_at_most needs a square matrix")
    return c >= 0 and is_psd(sub(identity(len(X), c * c), matmul(transpose(X), X)))


def is_pd(S: Matrix) -> bool:
    """S ≻ 0 exactly, by the exact inertia."""
    plus, _, _ = ldl_inertia(S)
    return plus == len(S)


def rank(M: Matrix) -> int:
    """Exact rank over ℚ (python-flint's fmpq_mat, fraction-free in C: a 32×32 matrix of 1400-bit
    rationals in 0.15 s, where Fraction elimination took minutes)."""
    rows, cols = len(M), (len(M[0]) if M else 0)
    if rows == 0 or cols == 0:
        return 0
    if any(len(r) != cols for r in M):
        raise ValueError("rank needs a rectangular matrix")
    return to_fmpq_mat(M).rank()


def solve(M: Matrix, rhs: Sequence[Fraction]) -> Vector:
    """Exact solution of M x = rhs; raises ValueError if M is singular (python-flint's exact
    fmpq_mat solve: the Fraction elimination this replaces took 26 s at d = 32)."""
    from flint import fmpq, fmpq_mat

    n = len(M)
    if n == 0:
        return ()
    q = lambda x: fmpq(Fraction(x).numerator, Fraction(x).denominator)
    try:
        x = fmpq_mat(n, n, [q(v) for r in M for v in r]).solve(fmpq_mat(n, 1, [q(v) for v in rhs]))
    except ZeroDivisionError:
        raise ValueError("singular matrix") from None
    return tuple(Fraction(int(x[i, 0].p), int(x[i, 0].q)) for i in range(n))


def sym_pairs(d: int) -> list[tuple[int, int]]:
    """Index pairs (i, j), i ≤ j, of the upper triangle in row-major order: the coordinates of a symmetric matrix."""
    return [(i, j) for i in range(d) for j in range(i, d)]


MAX_LYAPUNOV_WORK = 2 * 10 ** 9
"""Budget of one exact Lyapunov solve, in `lyapunov_work` units (about 4 to 8 ns CPU each
measured on dense entries: d = 48 with one-digit entries is 1.6e9 units and 7.6 s; d = 64 is 9e9
and 34 s; d = 12 with 200-bit entries is 2.9e9 and 23 s).  Past it the solve raises WorkBudgetExceeded before building
anything, never None (None means singular)."""


def lyapunov_work(A: Matrix) -> float:
    """n³·max(1, H/64)² for the n = d(d+1)/2 unknowns: H bounds the bits of a row of the system
    once its denominators are cleared (two columns' lcms and the largest numerator), and
    python-flint's exact solve grows like n³ and about H² (measured)."""
    d = len(A)
    n = d * (d + 1) // 2
    col = [math.lcm(*[A[k][i].denominator for k in range(d)]).bit_length() for i in range(d)] or [0]
    top = max((abs(x.numerator).bit_length() for r in A for x in r), default=0)
    H = 2 * max(col) + top
    return n ** 3 * max(1.0, H / 64) ** 2


def lyapunov_solve(A: Matrix, Q: Matrix) -> Matrix | None:
    """The symmetric P with AᵀP + PA = Q, exactly; None if the Lyapunov operator is singular.
    Raises WorkBudgetExceeded (an InputError) when `lyapunov_work` passes MAX_LYAPUNOV_WORK.

    The one exact Lyapunov solve of the package (the Riccati reduction, the
    Ostrowski–Schneider inertia, the no-blow-up bound and the cone-collapse
    certificate all use it).  The d(d+1)/2 unknowns are the upper triangle of P
    (`sym_pairs`); the linear system is solved over ℚ with python-flint's exact
    fmpq_mat.  The operator is singular iff λ_i + λ_j = 0 for two eigenvalues of A
    (counted with multiplicity), e.g. when A has an eigenvalue on the imaginary axis.
    """
    from flint import fmpq, fmpq_mat

    d = len(A)
    A = as_matrix(A)
    work = lyapunov_work(A)
    if work > MAX_LYAPUNOV_WORK:
        from riccati_verify.core.errors import WorkBudgetExceeded

        raise WorkBudgetExceeded(f"the exact Lyapunov solve at d = {d} would cost {work:.2g} work units, past its "
                                 f"work budget of {MAX_LYAPUNOV_WORK:.0e} (d(d+1)/2 unknowns; entries with fewer "
                                 f"digits or common denominators cost less)")
    idx = sym_pairs(d)
    pos = {p: k for k, p in enumerate(idx)}
    n = len(idx)
    q = lambda x: fmpq(Fraction(x).numerator, Fraction(x).denominator)
    Aq = [[q(x) for x in r] for r in A]
    # the system has at most 2d nonzeros a row: filled in place (an n x n list of Fractions
    # and its conversion were most of the cost at d = 32)
    T = fmpq_mat(n, n)
    for row, (i, j) in enumerate(idx):
        for k in range(d):
            if Aq[k][i] != 0:
                c = pos[min(k, j), max(k, j)]
                T[row, c] = T[row, c] + Aq[k][i]     # (AᵀP)_ij = Σ_k A_ki P_kj
            if Aq[k][j] != 0:
                c = pos[min(i, k), max(i, k)]
                T[row, c] = T[row, c] + Aq[k][j]     # (PA)_ij = Σ_k P_ik A_kj
    try:
        p = T.solve(fmpq_mat(n, 1, [q(Q[i][j]) for i, j in idx]))
    except ZeroDivisionError:
        return None
    h = {ij: Fraction(int(p[k, 0].p), int(p[k, 0].q)) for k, ij in enumerate(idx)}
    return tuple(tuple(h[min(i, j), max(i, j)] for j in range(d)) for i in range(d))


def routh_inertia(A: Matrix, max_work: int = MAX_PSD_WORK) -> tuple[int, int] | None:
    """(#eigenvalues with Re > 0, #with Re < 0) of A from the Routh table of its characteristic
    polynomial, exactly, or None in the table's singular case (a zero in its first column:
    possibly an eigenvalue on the imaginary axis, or λ and −λ both eigenvalues).

    Routh's theorem: when no first-column entry vanishes, p has no root on the imaginary axis
    and the sign changes down the first column count its roots with Re > 0.  The polynomial is
    that of L·A (L the common denominator, a positive scale keeps every sign of Re λ), by
    python-flint's multi-modular charpoly under the budget of `psd_scaled` (d³·H, H the
    Hadamard bit bound): past it WorkBudgetExceeded.  The table is in exact fmpq.
    """
    from flint import fmpq, fmpz_mat

    d = len(A)
    A = as_matrix(A)
    L = math.lcm(*[x.denominator for r in A for x in r])
    Z = [[(x * L).numerator for x in r] for r in A]
    H = sum(max(1, max(abs(z) for z in r).bit_length()) for r in Z) + d * max(1, d.bit_length()) // 2
    if d ** 3 * H > max_work:
        from riccati_verify.core.errors import WorkBudgetExceeded

        raise WorkBudgetExceeded(f"the characteristic polynomial at d = {d} would cost d^3 x bits = "
                                 f"{d ** 3 * H:.3g}, past its work budget of {max_work:.3g}")
    cp = fmpz_mat(d, d, [z for r in Z for z in r]).charpoly()
    a = [fmpq(int(cp[d - k])) for k in range(d + 1)]          # a[0] = 1 (monic), a[k] of s^(d-k)
    prev, cur = a[0::2], a[1::2]
    firsts = [prev[0]]
    for _ in range(d):
        if not cur or cur[0] == 0:
            return None
        firsts.append(cur[0])
        at = lambda row, j: row[j] if j < len(row) else fmpq(0)
        nxt = [(cur[0] * at(prev, j + 1) - prev[0] * at(cur, j + 1)) / cur[0] for j in range(len(prev) - 1)]
        prev, cur = cur, nxt
    plus = sum(1 for x, y in zip(firsts, firsts[1:]) if (x > 0) != (y > 0))
    return plus, d - plus


def frac_to_str(x: Fraction) -> str:
    """Canonical exact string: '3', '-1/3'."""
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"

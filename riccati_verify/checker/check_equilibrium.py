"""Checker for `equilibrium` certificates, and the trusted core shared by the
other Bernoulli-equation checkers (`check_lyapunov_stability`,
`check_riccati_regime`).

Claim:   {"kind": "equilibrium", "positive_definite": bool}
         "F(Σ) = AΣ + ΣAᵀ + VΣBΣ + ΣBᵀΣVᵀ has a zero Σ* in the witness ball
          (and, if positive_definite, every matrix of the ball is ≻ 0)".
Witness: {"center": d×d symmetric rational matrix, "radius": rational r ≥ 0}
         The ball is {Σ symmetric : |Σ_ij − center_ij| ≤ r}.

r = 0: F(center) = 0 is checked exactly in rationals.
r > 0: the Krawczyk test in arb ball arithmetic on the upper-triangle
coordinates s: with Y any fixed matrix (here: the midpoint inverse of the
Jacobian at the centre),

    K = c − Y G(c) + (I − Y G'(box))·[−r, r]ⁿ  ⊂  interior(box)

proves that G(s) = vec_sym F(Σ(s)) has exactly one zero in the box.

This module imports only python-flint, fractions, the exact-arithmetic
trusted core (`riccati_verify.core.exact`) and the certificate plumbing: it
recomputes F and its Jacobian itself, independently of the producing code
(`certify/equilibria.py`, `certify/stability.py`).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import flint

from riccati_verify.core import balls, exact
from riccati_verify.core.threads import threads_for
from riccati_verify.checker.verify import CheckResult

__all__ = [
    "MAX_PRODUCT_WORK", "PREC", "ball_is_pd", "bernoulli", "bernoulli_exact", "check", "exact_matmul", "integer_form", "eye", "is_pd_ball", "is_pd_exact",
    "is_psd_exact", "jacobian", "mat_add", "mat_mul", "mat_t", "parse_equilibrium_witness",
    "parse_matrix", "parse_rational", "q_matrix", "require_sym_size", "MAX_SYM_UNKNOWNS", "sigma_ball", "sym_pairs", "to_arb",
    "verify_zero",
]

CLAIM_KEYS = frozenset({"positive_definite"})
"""The claim's keys besides `kind`; `verify_certificate` refuses any other."""
WITNESS_KEYS = frozenset({"center", "radius"})
"""The witness's keys (all routes); `verify_certificate` refuses any other."""

PREC = 256  # bits of arb working precision


# ---------------------------------------------------------------------------
# parsing exact witness data


_P_Q = re.compile(r"-?\d+(?:/[1-9]\d*)?", re.ASCII)
_BITS_PER_DIGIT = math.log2(10)


def parse_rational(x, where: str, max_chars: int = 20000) -> flint.fmpq:
    """A witness number: an integer or an exact rational text 'p' or 'p/q', strictly (ASCII digits, no
    spaces, '+' or '_': int() alone takes all of those, and non-ASCII digits, which no writer emits;
    review s19), never a float."""
    q = parse_fraction(x, where, max_chars)
    return flint.fmpq(q.numerator, q.denominator)


def parse_fraction(x, where: str, max_chars: int = 20000) -> Fraction:
    """`parse_rational` as a `Fraction` (for the checkers that compute in the standard library)."""
    if isinstance(x, bool) or not isinstance(x, (str, int)):
        raise ValueError(f"{where}: expected an exact rational string, got {type(x).__name__}")
    if isinstance(x, int):
        # bounded like the text (a dict handed to verify_certificate has no JSON cap on integers)
        if abs(x).bit_length() > math.ceil(max_chars * _BITS_PER_DIGIT):
            raise ValueError(f"{where}: integer too long")
        return Fraction(x)
    if len(x) > max_chars:
        raise ValueError(f"{where}: rational string too long")
    if not _P_Q.fullmatch(x):
        raise ValueError(f"{where}: not an exact rational 'p' or 'p/q'")
    num, _, den = x.partition("/")
    return Fraction(int(num), int(den) if den else 1)


def parse_matrix(rows, d: int, where: str, symmetric: bool = True) -> list[list[flint.fmpq]]:
    """A d×d witness matrix of exact rationals; ValueError on a wrong shape, a float or (by default) asymmetry."""
    if not isinstance(rows, list) or len(rows) != d or any(not isinstance(r, list) or len(r) != d for r in rows):
        raise ValueError(f"{where}: expected a {d}x{d} matrix")
    M = [[parse_rational(x, f"{where}[{i}][{j}]") for j, x in enumerate(r)] for i, r in enumerate(rows)]
    if symmetric and any(M[i][j] != M[j][i] for i in range(d) for j in range(i)):
        raise ValueError(f"{where}: matrix is not symmetric")
    return M


def q_matrix(M) -> list[list[flint.fmpq]]:
    """Exact parameter matrix (tuples of Fractions from io/model) as fmpq lists."""
    return [[flint.fmpq(x.numerator, x.denominator) for x in r] for r in M]


# ---------------------------------------------------------------------------
# small matrix algebra on nested lists (works for fmpq and arb entries)


def mat_mul(X, Y):
    """X·Y on nested lists; the zero is taken from the entries' own type, so fmpq stays exact and arb stays a ball."""
    return [[sum((X[i][k] * Y[k][j] for k in range(len(Y))), 0 * X[0][0]) for j in range(len(Y[0]))]
            for i in range(len(X))]


def mat_add(X, Y):
    """X + Y entrywise on nested lists."""
    return [[a + b for a, b in zip(r, s)] for r, s in zip(X, Y)]


def mat_t(X):
    """The transpose Xᵀ as nested lists."""
    return [list(r) for r in zip(*X)]


def eye(d, one):
    """The d×d identity with entries of the type of `one`."""
    return [[one if i == j else 0 * one for j in range(d)] for i in range(d)]


def sym_pairs(d: int):
    """Upper-triangle index pairs (i ≤ j): the d(d+1)/2 coordinates of a symmetric matrix."""
    return [(i, j) for i in range(d) for j in range(i, d)]


def bernoulli(A, B, V, S):
    """F(Σ) = JΣ + (JΣ)ᵀ with J = A + VΣB (arb balls; `bernoulli_exact` for rationals)."""
    J = mat_add(A, mat_mul(mat_mul(V, S), B))
    JS = mat_mul(J, S)
    return mat_add(JS, mat_t(JS))


MAX_PRODUCT_WORK = 2 * 10 ** 9
"""Budget of one exact matrix product (`exact_matmul`): size³·(bits of X + bits of Y) after clearing each
factor's denominators.  fmpz_mat at d = 64 with 20,000-bit entries (5e9) took 3 s; the same products on
lists of fmpq with distinct 4000-bit denominators ran for minutes, and one exact F(Σ0) at d = 64 with
1330-bit entries 82 s (reviews, session 18)."""


def integer_form(M, limit: int) -> tuple[flint.fmpz_mat, int, int]:
    """(Z, D, bits): M = Z / D for an fmpq matrix, D the lcm of its denominators and bits the longest entry
    of Z; ValueError (an invalid certificate) as soon as D or Z passes `limit` bits, so a hostile matrix
    stops the lcm loop early instead of building numbers of millions of bits."""
    D = 1
    for r in M:
        for x in r:
            D = math.lcm(D, int(x.q))
            if D.bit_length() > limit:
                raise ValueError(f"a common denominator passes {limit} bits: over the checker's product budget")
    Z = [[int(x.p) * (D // int(x.q)) for x in r] for r in M]
    bits = max((abs(z).bit_length() for r in Z for z in r), default=0)
    if bits > limit:
        raise ValueError(f"an entry passes {limit} bits: over the checker's product budget")
    return flint.fmpz_mat(Z), D, bits


def exact_matmul(X, Y):
    """X·Y for fmpq matrices (nested lists), exactly, through one fmpz_mat product of the
    denominator-cleared factors: ValueError past `MAX_PRODUCT_WORK` (checked before the product)."""
    size = max(len(X), len(Y), len(Y[0]))
    limit = MAX_PRODUCT_WORK // size ** 3
    Zx, Dx, bx = integer_form(X, limit)
    Zy, Dy, by = integer_form(Y, limit - bx)
    Z, den = Zx * Zy, flint.fmpz(Dx * Dy)
    return [[flint.fmpq(Z[i, j], den) for j in range(Z.ncols())] for i in range(Z.nrows())]


def bernoulli_exact(A, B, V, S):
    """F(Σ) = JΣ + (JΣ)ᵀ, J = A + VΣB, exactly for fmpq matrices, each product within `MAX_PRODUCT_WORK`."""
    J = mat_add(A, exact_matmul(exact_matmul(V, S), B))
    JS = exact_matmul(J, S)
    return mat_add(JS, mat_t(JS))


def jacobian(A, B, V, S):
    """Matrix of H ↦ DF(Σ)[H] = JH + HJᵀ + VHBΣ + ΣBᵀHVᵀ + VΣBH... on upper-triangle coordinates.

    Written out entrywise: (DF[H])_pq = Σ_rs H_rs ∂/∂H_rs, with the six terms
    AH + HAᵀ + VHBΣ + VΣBH + HBᵀΣVᵀ + ΣBᵀHVᵀ of MATH.md §5, and h_ij
    standing for both H_ij and H_ji.
    """
    d = len(A)
    one = 0 * A[0][0] + 1
    VSB = mat_mul(mat_mul(V, S), B)      # VΣB
    BS = mat_mul(B, S)                   # BΣ
    SBt = mat_t(BS)                      # ΣBᵀ
    Vt = mat_t(V)
    idx = sym_pairs(d)

    def term(p, q, r, s):
        # coefficient of H_rs in (DF[H])_pq
        c = 0 * one
        if q == s:
            c += A[p][r] + VSB[p][r]          # AH, VΣBH
        if p == r:
            c += A[q][s] + VSB[q][s]          # HAᵀ, HBᵀΣVᵀ = H(VΣB)ᵀ
        c += V[p][r] * BS[s][q]               # VHBΣ
        c += SBt[p][r] * Vt[s][q]             # ΣBᵀHVᵀ
        return c

    rows = []
    for p, q in idx:
        row = []
        for i, j in idx:
            c = term(p, q, i, j)
            if i != j:
                c += term(p, q, j, i)
            row.append(c)
        rows.append(row)
    return rows


def _psd_rank(S) -> tuple[bool, int]:
    """(S ⪰ 0, rank) by the trusted core's bounded exact test (`exact.psd_scaled`); ValueError,
    an invalid certificate, when its work bound refuses the matrix."""
    F = [[x if isinstance(x, Fraction) else Fraction(int(x.p), int(x.q)) for x in r] for r in S]
    if not exact.is_symmetric(F):
        raise ValueError("definiteness needs a symmetric matrix")
    return exact.psd_scaled(F)


def is_pd_exact(S) -> bool:
    """S ≻ 0 for a symmetric exact (fmpq or Fraction) matrix: PSD and of full rank, exactly."""
    psd, rank = _psd_rank(S)
    return psd and rank == len(S)


def is_psd_exact(S) -> bool:
    """S ⪰ 0 for a symmetric exact (fmpq or Fraction) matrix."""
    return _psd_rank(S)[0]


MAX_SYM_UNKNOWNS = 528
"""n = d(d+1)/2 unknowns of the Krawczyk test and the Lyapunov matrix X (n × n): at most 528,
i.e. d ≤ 32 (the n³ work of a d = 64 certificate took 5 min 51 s and 4.7 GB)."""


def require_sym_size(d: int, limit: int = MAX_SYM_UNKNOWNS) -> None:
    """ValueError (an invalid certificate) when d(d+1)/2 exceeds `limit`, before any work."""
    if d * (d + 1) // 2 > limit:
        raise ValueError(f"d = {d} gives {d * (d + 1) // 2} symmetric unknowns, over the checker's bound {limit}")


def is_pd_ball(S) -> bool:
    """Every symmetric matrix in the arb ball matrix S (a list of rows) is ≻ 0."""
    return balls.proves_positive_definite(flint.arb_mat([list(r) for r in S]))


def to_arb(M):
    """Exact entries as (point) arb balls, for the Krawczyk test."""
    return [[flint.arb(x) for x in r] for r in M]


def sigma_ball(center, radius: flint.fmpq):
    """arb matrix containing every symmetric Σ with |Σ_ij − c_ij| ≤ r (entries shared across the diagonal)."""
    rad = flint.arb(0, flint.arb(radius).abs_upper()) if radius != 0 else flint.arb(0)
    return [[flint.arb(x) + rad for x in r] for r in center]


# ---------------------------------------------------------------------------
# existence of an equilibrium in a ball


def verify_zero(A, B, V, center, radius) -> tuple[bool, str]:
    """Is there a zero of F in the ball?  Exact for radius 0, Krawczyk otherwise."""
    if radius < 0:
        return False, "negative radius"
    d = len(A)
    if radius != 0:
        require_sym_size(d)
    if radius == 0:
        F = bernoulli_exact(A, B, V, center)
        bad = [(i, j) for i in range(d) for j in range(d) if F[i][j] != 0]
        return (not bad), ("F(center) = 0 exactly" if not bad else f"F(center) != 0 at entry {bad[0]}")
    # the n×n inverse and product are the cost: threads change the wall time only (`core.threads`)
    with flint.ctx.workprec(PREC), threads_for(d * (d + 1) // 2):
        Aa, Ba, Va = to_arb(A), to_arb(B), to_arb(V)
        c = to_arb(center)
        idx = sym_pairs(d)
        n = len(idx)
        Gc = bernoulli(Aa, Ba, Va, c)
        g = [Gc[i][j] for i, j in idx]
        Jc = jacobian(Aa, Ba, Va, c)
        try:
            Yb = flint.arb_mat([[flint.arb(x.mid()) for x in r] for r in Jc]).inv()
        except ZeroDivisionError:
            return False, "Jacobian at the centre is numerically singular"
        Y = [[flint.arb(Yb[i, j].mid()) for j in range(n)] for i in range(n)]
        box = sigma_ball(center, radius)
        Jx = jacobian(Aa, Ba, Va, box)
        YJ = flint.arb_mat(Y) * flint.arb_mat(Jx)
        Yg = flint.arb_mat(Y) * flint.arb_mat([[x] for x in g])
        r = flint.arb(radius)
        worst = None
        for i in range(n):
            s = flint.arb(0)
            for j in range(n):
                z = (1 if i == j else 0) - YJ[i, j]
                s += z.abs_upper()
            bound = Yg[i, 0].abs_upper() + r * s
            if not bound < r:
                return False, f"Krawczyk inclusion fails in coordinate {idx[i]} (bound {bound.mid()} vs radius {r.mid()})"
            worst = bound if worst is None or bound.mid() > worst.mid() else worst
        return True, "Krawczyk operator maps the ball strictly into itself"


def ball_is_pd(center, radius) -> bool:
    """Every matrix of the witness ball is ≻ 0: exactly for radius 0, in balls otherwise."""
    if radius == 0:
        return is_pd_exact(center)
    with flint.ctx.workprec(PREC):
        return is_pd_ball(sigma_ball(center, radius))


def parse_equilibrium_witness(witness: dict, d: int):
    """The (center, radius) of an equilibrium ball, parsed exactly; shared by the checkers built on this one."""
    center = parse_matrix(witness["center"], d, "center")
    radius = parse_rational(witness["radius"], "radius")
    return center, radius


def check(claim: dict, problem, witness: dict) -> CheckResult:
    """Re-check one `equilibrium` claim from its witness (the entry point `verify_certificate` calls)."""
    params = problem.require_params()
    d = params.dim
    A, B, V = q_matrix(params.A), q_matrix(params.B), q_matrix(params.V)
    center, radius = parse_equilibrium_witness(witness, d)
    ok, why = verify_zero(A, B, V, center, radius)
    if not ok:
        return CheckResult(False, why)
    pd = claim.get("positive_definite")
    if not isinstance(pd, bool):
        return CheckResult(False, "claim 'positive_definite' must be true or false")
    if pd and not ball_is_pd(center, radius):
        return CheckResult(False, "the ball is not certified positive definite")
    return CheckResult(True, why + ("; every matrix in the ball is positive definite" if pd else ""))

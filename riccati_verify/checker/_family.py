"""Checker-side helpers shared by the family kinds (`check_family_*`): every statement is
about all members of an interval box (`core.box.ParamBox`), decided exactly.

The vertex argument: for a fixed symmetric Y the map A ↦ AᵀY + YA is affine, so over a box
of independent entries (the convex hull of its vertices) it is negative definite everywhere
iff it is at every vertex (the negative definite cone is convex).  Definiteness of an
interval symmetric matrix is Rohn's exact vertex test, `core.box.interval_psd`.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb

from riccati_verify.core import balls, box as bx
from riccati_verify.core import exact
from riccati_verify.checker._reduced_riccati import WitnessError, rational, rational_matrix

__all__ = ["ball", "common_lyapunov", "growing_direction", "quadratic_vanishes", "scalar_v_interval", "split_pieces",
           "sym_definite", "vbs_definite"]

MAX_SPLIT = 64
"""Most pieces one parameter may be cut into by a witness' "splits" (the total is MAX_PIECES)."""
MAX_Y_BITS = 256
"""Most bits of a witness Y entry's numerator and of its denominator.  Y is tested exactly at every
vertex of the A-box (up to 2^MAX_FREE of them), so its size bounds the work: 2000-digit entries had
taken about 13 s a vertex (review, session 16).  The producer rounds Y to denominators ≤ 2^24."""


def scalar_v_interval(box: bx.ParamBox) -> tuple[Fraction, Fraction]:
    """The interval of v when V = vI over the whole box, else WitnessError."""
    if not box.v_scalar:
        raise WitnessError("this family claim needs V = vI (a scalar 'V' in the parameter file)")
    return box.V[0][0]


def sym_definite(M: tuple, sign: int, strict: bool) -> bool:
    """sign·(X + Xᵀ)/2 ⪰ 0 (≻ 0 when strict) for every X in the interval matrix M."""
    return bx.interval_psd(bx.interval_sym_part(M), strict=strict, sign=sign)


def vbs_definite(box: bx.ParamBox, sign: int, strict: bool) -> bool:
    """sign·v·B_s ⪰ 0 (≻ 0 when strict) for every member: v keeps one sign on the box and
    B_s is definite with the matching sign (both exact)."""
    lo, hi = scalar_v_interval(box)
    if (lo > 0) if strict else (lo >= 0):
        return sym_definite(box.B, sign, strict)
    if (hi < 0) if strict else (hi <= 0):
        return sym_definite(box.B, -sign, strict)
    return False


def common_lyapunov(box: bx.ParamBox, Y_raw, stable: int) -> str | None:
    """None when the witness Y proves, for every member, that A is Hurwitz (stable = +1:
    Y ≻ 0 and AᵀY + YA ≺ 0) or that -A is (stable = -1: AᵀY + YA ≻ 0); else the reason."""
    d = box.dim
    Y = _short_matrix(Y_raw, d)
    if not exact.is_symmetric(Y):
        return "Y is not symmetric"
    if not exact.is_pd(Y):
        return "Y is not positive definite"
    if len(box.free(("A",))) > bx.MAX_FREE:
        raise WitnessError("too many interval entries in A")
    for k, A in enumerate(bx.vertex_matrices(box.A)):
        L = exact.add(exact.matmul(exact.transpose(A), Y), exact.matmul(Y, A))
        if not exact.is_pd(exact.scale(-stable, L)):
            return (f"A^T Y + Y A is not {'negative' if stable > 0 else 'positive'} definite at vertex {k} "
                    f"of the A-box: {'A' if stable > 0 else '-A'} not shown Hurwitz for every member")
    return None


def _short_matrix(raw, d: int) -> exact.Matrix:
    Y = rational_matrix(raw, "Y", d, d)
    if any(x.numerator.bit_length() > MAX_Y_BITS or x.denominator.bit_length() > MAX_Y_BITS for r in Y for x in r):
        raise WitnessError(f"Y entries must have numerators and denominators of at most {MAX_Y_BITS} bits")
    return Y


def quadratic_vanishes(box: bx.ParamBox) -> bool:
    """VΣBΣ + ΣBᵀΣVᵀ = 0 for every Σ and every member: B ≡ 0, V ≡ 0, or V = vI with v ≡ 0 or
    B_s ≡ 0 (then the term is 2vΣB_sΣ), each exactly on the box."""
    zero = lambda M: all(x == (0, 0) for r in M for x in r)
    if zero(box.B) or zero(box.V):
        return True
    return box.v_scalar and (box.V[0][0] == (0, 0) or zero(bx.interval_sym_part(box.B)))


def growing_direction(box: bx.ParamBox, Y_raw, shift_raw) -> str | None:
    """None when the witness Y and shift ε ≥ 0 prove, for every member, that ‖e^{At}‖ grows
    exponentially: Y symmetric and not negative semidefinite, and (A − εI)ᵀY + Y(A − εI) ≻ 0 at
    every vertex of the A-box (affine in A: the whole box); else the reason.

    Why: for y0 with W(y0) = y0ᵀYy0 > 0 and y(t) = e^{(A − εI)t}y0, Ẇ ≥ μ|y|² ≥ (μ/‖Y‖)W
    (μ > 0 the margin), so W and |y|² ≥ W/‖Y‖ grow exponentially, and |e^{At}y0| = e^{εt}|y(t)|.
    """
    d = box.dim
    Y = _short_matrix(Y_raw, d)
    eps = rational(shift_raw, "shift")
    if eps < 0:
        return "shift must be non-negative"
    if not exact.is_symmetric(Y):
        return "Y is not symmetric"
    if exact.is_psd(exact.scale(-1, Y)):
        return "Y is negative semidefinite: no growing direction shown"
    if len(box.free(("A",))) > bx.MAX_FREE:
        raise WitnessError("too many interval entries in A")
    for k, A in enumerate(bx.vertex_matrices(box.A)):
        As = exact.sub(A, exact.identity(d, eps))
        L = exact.add(exact.matmul(exact.transpose(As), Y), exact.matmul(Y, As))
        if not exact.is_pd(L):
            return (f"(A - eps I)^T Y + Y (A - eps I) is not positive definite at vertex {k} of the A-box: "
                    "no growing direction shown for every member")
    return None


def ball(iv) -> arb:
    """A ball containing the interval [lo, hi]."""
    return balls.interval(iv[0], iv[1])


def split_pieces(box: bx.ParamBox, raw, max_total: int = bx.MAX_PIECES) -> list[bx.ParamBox]:
    """The sub-boxes of a witness' uniform subdivision {key: pieces} of the A, B, V entries
    (a partition of the box: `ParamBox.split`); WitnessError on a malformed one or on more
    than `max_total` sub-boxes (refused before any is built)."""
    if not isinstance(raw, dict) or len(raw) > bx.MAX_FREE:
        raise WitnessError("splits must be an object {parameter: pieces}")
    free = {k for k, _ in box.free(("A", "B", "V"))}
    out = {}
    for k, n in raw.items():
        if k not in free:
            raise WitnessError(f"splits names '{str(k)[:40]}', not an interval entry of A, B or V")
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_SPLIT:
            raise WitnessError(f"splits['{k}'] must be an integer in 1..{MAX_SPLIT}")
        out[k] = n
    total = 1
    for n in out.values():
        total *= n
    if total > max_total:
        raise WitnessError(f"splits make {total} sub-boxes, more than the {max_total} this kind allows")
    return box.split(out)

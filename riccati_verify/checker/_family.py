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
from riccati_verify.checker._reduced_riccati import WitnessError, rational_matrix

__all__ = ["ball", "common_lyapunov", "scalar_v_interval", "split_pieces", "sym_definite", "vbs_definite"]

MAX_SPLIT = 64
"""Most pieces one parameter may be cut into by a witness' "splits" (the total is MAX_PIECES)."""


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
    Y = rational_matrix(Y_raw, "Y", d, d)
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


def ball(iv) -> arb:
    """A ball containing the interval [lo, hi]."""
    return balls.interval(iv[0], iv[1])


def split_pieces(box: bx.ParamBox, raw) -> list[bx.ParamBox]:
    """The sub-boxes of a witness' uniform subdivision {key: pieces} of the A, B, V entries
    (a partition of the box: `ParamBox.split`); WitnessError on a malformed one."""
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
    return box.split(out)

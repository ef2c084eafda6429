"""Checker for `family_blowup` certificates: every member of a box with V = vI blows up from
the one exact Σ0, with T* ∈ (lower, upper] (MATH.md §7, Radon's linearisation in balls).

N(t) = D⁻¹ − 2v CᵀW(t)C with Σ0 = C diag(D) Cᵀ and W(t) = ∫_0^t e^{Aᵀs}B_s e^{As} ds (the
route of `_reduced_riccati`): Σ(t) exists exactly while N(t) ≻ 0.  Here A, B_s and v are
ball matrices that contain the whole (sub-)box, so every ball computed encloses the value of
every member at once (inclusion monotonicity of arb; entries that appear twice, as A in
−Aᵀ and A, are treated as independent, which only widens the enclosure).

  1. v B_s ⪰ 0 for every member (Rohn, exact): N is Loewner-decreasing, so N(lower) ≻ 0
     gives N ≻ 0 on [0, lower], i.e. T* > lower.
  2. The witness' "splits" cut the box uniformly (`ParamBox.split`, a partition); on every
     sub-box N(lower) ≻ 0 and N(upper) has a negative direction (xᵀN(upper)x < 0 for the
     witness' "direction" x, or the LDL pivots) are proved in balls, so T* ≤ upper.

Claim {"kind": "family_blowup", "lower", "upper"}; witness {"precision_bits", "factor_C",
"factor_D", "splits": {key: pieces}, "direction": [...] (optional)}.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb_mat, ctx

from riccati_verify.core import balls, box as bx
from riccati_verify.checker._family import ball as _ball, scalar_v_interval, split_pieces, vbs_definite
from riccati_verify.checker._reduced_riccati import (WitnessError, checked_factor, precision, rational,
                                                     witness_checked)
from riccati_verify.checker.verify import CheckResult

__all__ = ["check"]

FAMILY = True
"""The params are an interval box (`core.io.box_from_dict`), not one model."""
CLAIM_KEYS = frozenset({"lower", "upper"})
"""The claim's keys besides `kind`; `verify_certificate` refuses any other."""
WITNESS_KEYS = frozenset({"precision_bits", "factor_C", "factor_D", "splits", "direction"})
"""The witness's keys; `verify_certificate` refuses any other."""

MAX_FAMILY_PRECISION = 1024


def n_enclosure(box: bx.ParamBox, C, D, t: Fraction) -> arb_mat:
    """A ball matrix containing N(t) of every member of the box (at the ambient precision)."""
    d, r = box.dim, len(D)
    Bs = bx.interval_sym_part(box.B)
    H = arb_mat(2 * d, 2 * d)
    for i in range(d):
        for j in range(d):
            H[i, j] = -_ball(box.A[j][i])
            H[i, d + j] = _ball(Bs[i][j])
            H[d + i, d + j] = _ball(box.A[i][j])
    F = (H * balls.arb_of(t)).exp()
    F12, F22 = arb_mat(d, d), arb_mat(d, d)
    for i in range(d):
        for j in range(d):
            F12[i, j], F22[i, j] = F[i, d + j], F[d + i, d + j]
    Cb = balls.arb_matrix(C)
    Dinv = arb_mat(r, r)
    for k in range(r):
        Dinv[k, k] = balls.arb_of(1 / D[k])
    return balls.symmetrized(Dinv - Cb.transpose() * (F22.transpose() * F12) * Cb * (2 * _ball(scalar_v_interval(box))))


def check(claim: dict, box, witness: dict) -> CheckResult:
    """Re-check one `family_blowup` claim over every member of the box."""
    return witness_checked(_check, claim, box, witness)


def _check(claim: dict, box, witness: dict) -> CheckResult:
    if box.cov is None or box.free(("cov",)):
        return CheckResult(False, "a family_blowup claim needs one exact initial covariance (no interval in cov)")
    lo, hi = rational(claim.get("lower"), "claim.lower"), rational(claim.get("upper"), "claim.upper")
    if not 0 <= lo < hi:
        return CheckResult(False, "the claim needs 0 <= lower < upper")
    prec = precision(witness)
    if prec > MAX_FAMILY_PRECISION:
        raise WitnessError(f"precision_bits above {MAX_FAMILY_PRECISION}")
    state = box.member()[1]
    C, D = checked_factor(state, witness)
    r = len(D)
    x = None
    if "direction" in witness:
        raw = witness["direction"]
        if not isinstance(raw, list) or len(raw) != r:
            raise WitnessError(f"direction must be a list of {r} rationals")
        x = arb_mat([[balls.arb_of(rational(v, f"direction[{i}]"))] for i, v in enumerate(raw)])
    if not vbs_definite(box, 1, strict=False):
        return CheckResult(False, "v B_s >= 0 fails for some member (exact Rohn test): N is not shown monotone")
    pieces = split_pieces(box, witness.get("splits", {}))
    with ctx.workprec(prec):
        for n, sub in enumerate(pieces):
            if not balls.proves_positive_definite(balls.congruence_preconditioned(n_enclosure(sub, C, D, lo))[0]):
                return CheckResult(False, f"sub-box {n}: N(lower) > 0 not proved for every member")
            Nu = n_enclosure(sub, C, D, hi)
            neg = (x is not None and (x.transpose() * Nu * x)[0, 0] < 0) or balls.proves_not_positive_semidefinite(Nu)
            if not neg:
                return CheckResult(False, f"sub-box {n}: N(upper) not proved indefinite for every member")
    return CheckResult(True, f"every member blows up with T* in ({claim['lower']}, {claim['upper']}] "
                             f"({len(pieces)} sub-boxes, arb {prec} bits; v B_s >= 0 by Rohn's test)")

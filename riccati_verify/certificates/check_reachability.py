"""Checker for `reachability`: piecewise-constant B = V = 0 controls steer
N(m0, Σ0) to within `tolerance` of N(m1, Σ1) at `time`.

With B = V = 0 on a segment of length τ the moment flow is affine and solved
in closed form: [m; 1] ↦ exp([[Aτ, bτ], [0, 0]]) [m; 1] and Σ ↦ e^{Aτ} Σ e^{Aτ}ᵀ.
The exponentials are python-flint `arb_mat.exp` balls, so the terminal state
is enclosed rigorously; the claim holds when every entry of |m(T) − m1| and
|Σ(T) − Σ1| is certainly ≤ tolerance.  Imports only the trusted core.
"""

from __future__ import annotations

from fractions import Fraction

import flint

from ..io import parse_entry, parse_matrix, parse_vector
from ..model import Gaussian
from .checker import CheckResult

MAX_SEGMENTS = 256
PREC_BITS = 320


def _arb(x: Fraction) -> flint.arb:
    return flint.arb(flint.fmpq(x.numerator, x.denominator))


def check(claim: dict, problem, witness: dict) -> CheckResult:
    state0 = problem.require_state()
    d = state0.dim
    target = Gaussian(parse_vector(claim["target_mean"], "target_mean")[0],
                      parse_matrix(claim["target_cov"], "target_cov")[0])
    if target.dim != d:
        return CheckResult(False, f"target has d = {target.dim}, initial state d = {d}")
    T = parse_entry(claim["time"], "time")
    tol = parse_entry(claim["tolerance"], "tolerance")
    if not (T > 0 and tol > 0):
        return CheckResult(False, "time and tolerance must be positive")
    segs = witness["segments"]
    if not isinstance(segs, list) or not 1 <= len(segs) <= MAX_SEGMENTS:
        return CheckResult(False, f"witness needs 1..{MAX_SEGMENTS} segments")
    old = flint.ctx.prec
    flint.ctx.prec = PREC_BITS
    try:
        Z = flint.arb_mat(d + 1, d + 1)
        for i in range(d + 1):
            Z[i, i] = 1
        total = Fraction(0)
        for k, s in enumerate(segs):
            tau = parse_entry(s["duration"], f"segments[{k}].duration")
            if tau <= 0:
                return CheckResult(False, f"segment {k} has non-positive duration")
            A = parse_matrix(s["A"], f"segments[{k}].A")[0]
            b = parse_vector(s["b"], f"segments[{k}].b")[0]
            for name in ("B", "V"):
                M = parse_matrix(s[name], f"segments[{k}].{name}")[0]
                if len(M) != d or any(x != 0 for r in M for x in r):
                    return CheckResult(False, f"segment {k}: {name} must be the {d}x{d} zero matrix "
                                              "(this kind certifies B = V = 0 controls only)")
            if len(A) != d or len(b) != d:
                return CheckResult(False, f"segment {k}: A and b must have dimension {d}")
            Aug = flint.arb_mat(d + 1, d + 1)
            for i in range(d):
                for j in range(d):
                    Aug[i, j] = _arb(A[i][j] * tau)
                Aug[i, d] = _arb(b[i] * tau)
            Z = Aug.exp() * Z
            total += tau
        if total != T:
            return CheckResult(False, f"segment durations sum to {total}, not the claimed time {T}")
        Phi = flint.arb_mat(d, d)
        for i in range(d):
            for j in range(d):
                Phi[i, j] = Z[i, j]
        S0 = flint.arb_mat([[_arb(x) for x in r] for r in state0.cov])
        ST = Phi * S0 * Phi.transpose()
        t = _arb(tol)
        worst = flint.arb(0)
        for i in range(d):
            mi = Z[i, d] + sum((Z[i, j] * _arb(state0.mean[j]) for j in range(d)), flint.arb(0))
            errs = [abs(mi - _arb(target.mean[i]))] + [abs(ST[i, j] - _arb(target.cov[i][j])) for j in range(d)]
            for e in errs:
                if not e <= t:
                    return CheckResult(False, f"terminal error not certified below tolerance {tol}: "
                                              f"entry error enclosure {e.str(5)} (row {i})")
                worst = flint.arb(max(worst.upper(), e.upper()))
        return CheckResult(True, f"ball-arithmetic terminal state ({PREC_BITS} bits) within {tol} of the target; "
                                 f"largest entry error <= {worst.str(3, radius=False)}")
    finally:
        flint.ctx.prec = old

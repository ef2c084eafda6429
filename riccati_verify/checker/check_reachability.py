"""Checker for `reachability`: piecewise-constant controls steer N(m0, Σ0) to
within `tolerance` of N(m1, Σ1) at `time`.

The ball state (m, Σ) is propagated segment by segment at `PREC_BITS`:

* B = V = 0: the flow is affine and solved in closed form,
  [m; 1] ↦ exp([[Aτ, bτ], [0, 0]]) [m; 1] and Σ ↦ e^{Aτ} Σ e^{Aτ}ᵀ, with
  python-flint `arb_mat.exp` balls applied to the current ball state.
* any other segment (attention on): the validated Taylor integrator
  `_validated_flow.enclose_segment`, whose enclosure contains the exact
  solution of eq. 1.1 (or which reports that it cannot build one — then the
  claim is not certified).

The claim holds when every entry of |m(T) − m1| and |Σ(T) − Σ1| is certainly
≤ tolerance: "within tolerance", so a perturbation of the controls too small
to move the terminal state by that much is (rightly) still accepted.

Optional claim field `max_norm` (rational M): every segment must satisfy
‖A‖₂, ‖B‖₂, ‖V‖₂ ≤ M and |b|₂ ≤ M, decided exactly in rationals
(M²I − XᵀX ⪰ 0 by exact LDLᵀ, |b|² ≤ M²).  Imports only the trusted core.

Wrapping: plain balls grow like e^{‖|J|‖t} even where the flow contracts, so
on long horizons the enclosure can become wider than the tolerance.  When a
first attempt (PREC_BITS, order ORDER) fails only for that reason — the
terminal error ball straddles the tolerance, or the widths exploded — the
check is repeated once at twice the precision, order and step-accuracy bits
(about 8× the work, starting from a far smaller radius).

Work bounds (the certificate is untrusted input): `MAX_SEGMENTS` segments, and
min(MAX_TOTAL_STEPS, MAX_TAYLOR_WORK / d³) validated Taylor steps in all —
20000 steps up to d = 8, 2500 at d = 16, 39 at d = 64; beyond that the claim is
not certified (no crash, no unbounded run).
"""

from __future__ import annotations

from fractions import Fraction

import flint

from riccati_verify.core import exact
from riccati_verify.core.balls import arb_matrix, arb_of
from riccati_verify.core.io import parse_entry, parse_matrix, parse_vector
from riccati_verify.core.model import Gaussian
from riccati_verify.checker._validated_flow import ball_state, enclose_segment, max_radius
from riccati_verify.checker.verify import CheckResult, claim_transfer

__all__ = [
    "MAX_SEGMENTS", "MAX_TAYLOR_WORK", "MAX_TOTAL_STEPS", "ORDER", "PREC_BITS",
    "TAYLOR_SLACK_BITS", "check", "norm_violation", "taylor_tol_bits",
]

CLAIM_KEYS = frozenset({"target_mean", "target_cov", "time", "tolerance", "max_norm", "statement"})
"""The claim's keys besides `kind`; `verify_certificate` refuses any other."""
WITNESS_KEYS = frozenset({"segments"})
"""The witness's keys (all routes); `verify_certificate` refuses any other."""


def statement(claim: dict, witness: dict) -> str:
    """The one sentence a `reachability` claim means (`claim.statement`, if present, must be it):
    it names B = V = 0 exactly when every segment has B = V = 0, and the norm bound exactly
    when the claim has `max_norm`."""
    congruence = all(parse_entry(x, f"segments[{k}].{n}") == 0 for k, s in enumerate(witness["segments"])
                     for n in ("B", "V") for row in s[n] for x in row)
    return ("the witness controls " + ("(B = V = 0) " if congruence else "")
            + "steer the initial Gaussian to within tolerance (max entry error of mean and covariance) "
              "of the target at time T" + (", and every control has 2-norm <= max_norm" if "max_norm" in claim else ""))

MAX_SEGMENTS = 256
PREC_BITS = 320
ORDER = 30
MAX_TOTAL_STEPS = 20_000      # validated Taylor steps over all segments ...
MAX_TAYLOR_WORK = 20_000 * 8 ** 3  # ... and at most this many steps × d³ (each step costs ~10³ d×d products)
TAYLOR_SLACK_BITS = 40        # per-step remainder 2^-40 below the tolerance (the sum over steps stays far below it)
MAX_CLOSED_WORK = 2 * 10 ** 8
"""Closed-form (B = V = 0) segments in all: Σ (d + 1)³·log2‖[Aτ, bτ]‖ at most this.  arb's matrix
exponential squares about log2 of the norm times; with ‖Aτ‖ ≈ 1e300 one exponential took 2.1 s at
d = 16 and 25 s at d = 33 (640 bits), and 150 such segments fit in a 1 MB certificate (review, session 16).
The bound is about a minute of exponentials; a modest norm (a few bits) at d = 16 uses 0.01% of it a
segment."""


def _segments(segs: list, d: int) -> list[tuple[Fraction, exact.Matrix, exact.Matrix, exact.Matrix, exact.Vector]]:
    out = []
    for k, s in enumerate(segs):
        tau = parse_entry(s["duration"], f"segments[{k}].duration")
        if tau <= 0:
            raise ValueError(f"segment {k} has non-positive duration")
        mats = [parse_matrix(s[n], f"segments[{k}].{n}")[0] for n in ("A", "B", "V")]
        b = parse_vector(s["b"], f"segments[{k}].b")[0]
        if any(len(X) != d or any(len(r) != d for r in X) for X in mats) or len(b) != d:
            raise ValueError(f"segment {k}: A, B, V must be {d}x{d} and b of length {d}")
        out.append((tau, *mats, b))
    return out


def norm_violation(segments, M: Fraction) -> str | None:
    """The first control with ‖X‖₂ > M or |b| > M (exact), or None."""
    for k, (_, A, B, V, b) in enumerate(segments):
        for name, X in (("A", A), ("B", B), ("V", V)):
            if not exact.norm2_at_most(X, M):
                return f"segment {k}: ||{name}||_2 > max_norm {M}"
        if sum(x * x for x in b) > M * M:
            return f"segment {k}: |b| > max_norm {M}"
    return None


def _log2_size(xs: list[Fraction], n: int) -> int:
    """An upper bound on log2 of n·max|x|, at least 1."""
    return max(1, exact.log2_upper(max((abs(x) for x in xs), default=Fraction(0)) * n))


def _affine_step(m, S, A, b, tau):
    """Closed-form B = V = 0 segment applied to the ball state."""
    d = len(A)
    Aug = arb_matrix(tuple(tuple(A[i][j] * tau for j in range(d)) + (b[i] * tau,) for i in range(d))
                     + ((Fraction(0),) * (d + 1),))
    Z = Aug.exp()
    Phi = flint.arb_mat(d, d)
    shift = flint.arb_mat(d, 1)
    for i in range(d):
        shift[i, 0] = Z[i, d]
        for j in range(d):
            Phi[i, j] = Z[i, j]
    return Phi * m + shift, Phi * S * Phi.transpose()


def taylor_tol_bits(tol: Fraction) -> int:
    """Per-step Taylor remainder 2^-bits: TAYLOR_SLACK_BITS below the claimed tolerance (at least 64)."""
    return max(64, tol.denominator.bit_length() - tol.numerator.bit_length() + TAYLOR_SLACK_BITS)


def check(claim: dict, problem, witness: dict) -> CheckResult:
    """Re-check one `reachability` claim from its witness (the entry point `verify_certificate` calls)."""
    state0, target, T, tol = claim_transfer(claim, problem, "tolerance")
    d = state0.dim
    M = parse_entry(claim["max_norm"], "max_norm") if "max_norm" in claim else None
    if M is not None and not M > 0:
        return CheckResult(False, "max_norm must be positive")
    raw = witness["segments"]
    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_SEGMENTS:
        return CheckResult(False, f"witness needs 1..{MAX_SEGMENTS} segments")
    segments = _segments(raw, d)
    total = sum(s[0] for s in segments)
    if total != T:
        return CheckResult(False, f"segment durations sum to {total}, not the claimed time {T}")
    if M is not None:
        bad = norm_violation(segments, M)
        if bad:
            return CheckResult(False, bad)
    result, retry = None, True
    for prec, order, bits in ((PREC_BITS, ORDER, taylor_tol_bits(tol)),
                              (2 * PREC_BITS, 2 * ORDER, 2 * taylor_tol_bits(tol))):
        if not retry:
            break
        result, retry = _attempt(state0, target, segments, tol, M, prec, order, bits)
    return result


def _attempt(state0: Gaussian, target: Gaussian, segments, tol: Fraction, M, prec: int, order: int,
             tol_bits: int) -> tuple[CheckResult, bool]:
    """One propagation at `prec` bits; also whether a finer attempt could change a failure
    (the error enclosure straddles the tolerance, or the balls grew too wide)."""
    d = state0.dim
    old = flint.ctx.prec
    flint.ctx.prec = prec
    try:
        m, S = ball_state(state0.mean, state0.cov, prec)
        budget, validated, closed = min(MAX_TOTAL_STEPS, MAX_TAYLOR_WORK // d ** 3), 0, 0
        closed_work = 0
        for k, (tau, A, B, V, b) in enumerate(segments):
            if not any(x for X in (B, V) for r in X for x in r):
                closed_work += (d + 1) ** 3 * _log2_size([x * tau for r in A for x in r] + [x * tau for x in b], d + 1)
                if closed_work > MAX_CLOSED_WORK:
                    return (CheckResult(False, f"segment {k}: the closed-form segments exceed the work bound "
                                               f"(d + 1)^3 log2|[A tau, b tau]| <= {MAX_CLOSED_WORK:.0e} in all"), False)
                m, S = _affine_step(m, S, A, b, tau)
                closed += 1
                continue
            enc = enclose_segment(m, S, A, B, V, b, tau, order=order, prec=prec,
                                  tol_bits=min(tol_bits, prec - 64), max_steps=budget)
            if not enc.ok:
                return (CheckResult(False, f"segment {k}: no rigorous enclosure of the flow ({prec} bits): "
                                           f"{enc.reason}"), "too wide" in enc.reason)
            m, S = enc.mean, enc.cov
            budget -= enc.steps
            validated += enc.steps
        t = arb_of(tol)
        worst = flint.arb(0)
        for i in range(d):
            errs = [abs(m[i, 0] - arb_of(target.mean[i]))] + [abs(S[i, j] - arb_of(target.cov[i][j]))
                                                               for j in range(d)]
            for e in errs:
                if not e <= t:
                    # a finer attempt can only help a finite ball that straddles the tolerance (a NaN
                    # compares false both ways, and had bought a 640-bit retry of every segment)
                    return (CheckResult(False, f"terminal error not certified below tolerance {tol} ({prec} bits): "
                                               f"entry error enclosure {e.str(5)} (row {i})"),
                            validated > 0 and e.is_finite() and not e > t)
                worst = flint.arb(max(worst.upper(), e.upper()))
        how = " + ".join(([f"{validated} validated Taylor steps of order {order}"] if validated else [])
                         + ([f"{closed} closed-form arb_mat exponential segment(s)"] if closed else []))
        norm = f"; every control norm <= {M} (exact)" if M is not None else ""
        try:
            radius = f"{max_radius(m, S):.2e}"
        except ArithmeticError:
            radius = "(beyond the float range)"
        return (CheckResult(True, f"ball-arithmetic terminal state ({prec} bits, {how}; final radius "
                                  f"<= {radius}) within {tol} of the target; largest entry "
                                  f"error <= {worst.str(3, radius=False)}{norm}"), False)
    finally:
        flint.ctx.prec = old

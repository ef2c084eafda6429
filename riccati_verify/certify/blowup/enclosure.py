"""Locating and certifying the first singular time of N(t) (see `radon.py`).

Three steps:

1. locate T* in double precision (λ_min of N(t); exponential search when N is
   Loewner-monotone, a grid scan otherwise) — a float is only a starting point;
2. refine by Newton's method on log det N(t), whose derivative is tr(N⁻¹Ṅ),
   in arb at doubling precision;
3. prove, in ball arithmetic at a rational bracket [T_lo, T_hi]:
   N(T_lo) ≻ 0, N(T_hi) has a negative eigenvalue, and N ≻ 0 on [0, T_lo].
   The last follows from monotonicity when v B_s ⪰ 0 (checked exactly);
   otherwise from a cover of [0, T_lo] by boxes, each either proved positive
   definite as a whole, or on which d/dt det N < 0 and det N > 0 at the
   right end (so det N ≠ 0 on the box and no eigenvalue crosses 0).
"""

from __future__ import annotations

import math
from fractions import Fraction

from flint import arb, arb_mat, ctx

from riccati_verify.core import balls
from riccati_verify.certify.blowup.radon import RadonSystem

__all__ = ["MAX_BOXES", "cover_positive", "decimal_bracket", "decimal_str", "floor_log10", "guard_bits",
           "locate_float", "prove_bracket", "prove_positive_at", "refine_newton"]

MAX_BOXES = 3000
"""Bound on the boxes of a cover (work is bounded; a failed cover is 'undetermined')."""


def locate_float(sys: RadonSystem, t_start: float, t_max: float
                 ) -> tuple[tuple[float, float] | None, float]:
    """A float bracket (a, b), λ_min(N(a)) > 0 ≥ λ_min(N(b)), of the first crossing in (0, t_max].

    Returns (bracket or None, largest time seen with N numerically ≻ 0).  The
    search doubles the time window (a grid of 64 points per window unless N is
    Loewner-decreasing, where one point per window suffices); it stops at
    t_max or where the double-precision exponential overflows.
    """
    f = sys.lambda_min_float
    per_window = 1 if sys.sign == "same" else 64
    a, hi = 0.0, min(max(t_start, 1e-300), t_max)
    b = None
    while b is None:
        lo = a
        for k in range(1, per_window + 1):
            t = lo + (hi - lo) * k / per_window
            y = f(t)
            if math.isnan(y):
                return None, a
            if y <= 0:
                b = t
                break
            a = t
        if b is None:
            if hi >= t_max:
                return None, a
            hi = min(2 * hi, t_max)
    for _ in range(200):
        m = (a + b) / 2
        if not a < m < b or b - a <= 1e-12 * b:   # Newton takes over from here
            break
        y = f(m)
        if math.isnan(y):
            return None, a
        if y > 0:
            a = m
        else:
            b = m
    return (a, b), a


def guard_bits(sys: RadonSystem, t: float) -> int:
    """Extra bits against cancellation in N(t) = D⁻¹ + Cᵀ E22ᵀ E12 C (E = exp(Ht)).

    Twice log2 of the size of exp(Ht) (a bound on the digits lost when the
    product cancels down to the O(1) entries of N).
    """
    return 32 + 2 * max(0, int(sys.log2_exp_size(t))) + 2 * int(math.log2(sys.d + 1))


def _rayleigh(M, u) -> arb:
    return (u.transpose() * M * u)[0, 0] / (u.transpose() * u)[0, 0]


def refine_newton(sys: RadonSystem, bracket: tuple[float, float], bits: int) -> Fraction | None:
    """`_refine_newton`, or None when its float steps overflow (entries near the float range's
    ends): the candidate is only a heuristic, so no candidate just means no bracket from here."""
    try:
        return _refine_newton(sys, bracket, bits)
    except OverflowError:
        return None


def _refine_newton(sys: RadonSystem, bracket: tuple[float, float], bits: int) -> Fraction | None:
    """Newton on λ_min(N(t)) from the float bracket, to about `bits` correct bits.

    λ_min and its eigenvector u come from inverse iteration (a few solves with
    the midpoint matrix; near T* the crossing eigenvalue is far below the
    others, so this converges at once); λ̇ = uᵀṄu/uᵀu.  Working on λ_min
    rather than det N keeps quadratic convergence when several eigenvalues
    cross together (det N then has a multiple root).  The result is only a
    candidate: `prove_bracket` decides.  An exactly singular N(t) (e.g. A = 0
    with a rational T*) ends the iteration at t.
    """
    import numpy as np

    a, b = bracket
    t = Fraction((a + b) / 2)
    guard = guard_bits(sys, b)
    good = 40
    u = None
    for _ in range(60):
        prec = min(bits, 2 * good) + guard + 32
        try:
            with ctx.workprec(prec):
                N, Nd = sys.N_balls(balls.arb_of(t), derivative=True)
                N, Nd = N.mid(), Nd.mid()
                if u is None:
                    Nf = np.array([[float(N[i, j]) for j in range(sys.r)] for i in range(sys.r)])
                    w = np.linalg.eigh(Nf)[1][:, 0]
                    u = arb_mat([[float(x)] for x in w])
                for _ in range(3):
                    u = N.solve(u, algorithm="approx").mid()   # a direction, no bounds needed
                    scale = max(abs(u[i, 0]) for i in range(sys.r))
                    u = (u * (1 / scale)).mid()
                lam, dlam = _rayleigh(N, u), _rayleigh(Nd, u)
                t_new = balls.fraction_of_mid(balls.arb_of(t) - lam / dlam)
        except (ZeroDivisionError, ValueError):
            # N(t) is singular at this precision: t is a root to about `prec` bits only (A = 0, v = β = 1,
            # Σ0 = 3 at 50 digits stopped here 1.9e-45 from T* = 1/6, and no 50-digit bracket around
            # it was provable); an exactly singular N (A = 0 with a rational T*) is singular at every
            # precision, so the full-precision pass ends here too
            if prec >= bits + guard:
                return t
            good = bits
            continue
        if not (a / 2 < t_new < 2 * b + 1e-300):
            return None
        rel = abs(t_new - t) / t_new
        t = t_new
        if rel == 0 or rel < Fraction(1, 2 ** (bits + 4)):
            if prec >= bits + guard:
                return t
            good = bits
        else:
            good = max(good, min(bits, rel.denominator.bit_length() - rel.numerator.bit_length() - 1))
    return None


def floor_log10(x: Fraction) -> int:
    """⌊log10 x⌋ for a positive rational, exactly (floats underflow at high precision)."""
    e = len(str(x.numerator)) - len(str(x.denominator))
    while Fraction(10) ** e > x:
        e -= 1
    while Fraction(10) ** (e + 1) <= x:
        e += 1
    return e


def decimal_bracket(t: Fraction, digits: int) -> tuple[Fraction, Fraction]:
    """[T_lo, T_hi] around t, exact decimals, width ≤ 10^-digits · min(1, t) / 2."""
    delta = Fraction(1, 10 ** digits) * min(Fraction(1), t) / 5
    e = floor_log10(delta) - 1
    q = Fraction(10) ** e
    lo = math.floor((t - delta) / q) * q
    hi = math.ceil((t + delta) / q) * q
    return lo, hi


def decimal_str(x: Fraction) -> str:
    """Exact decimal string of a rational whose denominator has only factors 2 and 5."""
    den, k = x.denominator, 0
    while 10 ** k % den:
        k += 1
        if k > 100_000:
            raise ValueError("not a finite decimal")
    n = abs(x.numerator) * (10 ** k // den)
    digits = str(n).rjust(k + 1, "0")
    sign = "-" if x < 0 else ""
    return sign + (digits[:-k] + "." + digits[-k:] if k else digits)


def prove_bracket(sys: RadonSystem, lo: Fraction, hi: Fraction, prec: int) -> bool:
    """N(lo) ≻ 0 and N(hi) not ⪰ 0, both proved in balls."""
    with ctx.workprec(prec):
        return (balls.proves_positive_definite(sys.N_balls(balls.arb_of(lo)))
                and balls.proves_not_positive_semidefinite(sys.N_balls(balls.arb_of(hi))))


def prove_positive_at(sys: RadonSystem, t: Fraction, prec: int) -> bool:
    """Whether N(t) ≻ 0 is proved in ball arithmetic at one time t: the existence side of a bracket."""
    with ctx.workprec(prec):
        return balls.proves_positive_definite(sys.N_balls(balls.arb_of(t)))


def cover_positive(sys: RadonSystem, t_end: Fraction, prec: int, progress=None
                   ) -> list[tuple[str, Fraction, Fraction]] | None:
    """Boxes covering [0, t_end] on which N ≻ 0 is proved, or None if the cover fails.

    None also when the cover would pass the checker's work budget (`balls.cover_unit`).
    Each box is ("pd", a, b): N ≻ 0 on [a, b] (second-order Taylor form,
    `RadonSystem.proves_positive_on`); or ("det", a, b):
    d/dt det N < 0 on [a, b] and det N(b) > 0, which with N(a) ≻ 0 (from the
    previous box, or N(0) = D⁻¹) keeps N ≻ 0 on [a, b].
    """
    boxes: list[tuple[str, Fraction, Fraction]] = []
    a, h = Fraction(0), t_end / 8
    tries = 0
    # the checker re-proves every box within balls.MAX_COVER_WORK, splits included: a cover
    # keeps half of it for those splits, and the search itself stops at twice the budget
    unit = balls.cover_unit(sys.d, prec)
    with ctx.workprec(prec):
        while a < t_end:
            tries += 1
            if (tries > 4 * MAX_BOXES or len(boxes) >= MAX_BOXES or h == 0
                    or (len(boxes) + 1) * unit > balls.MAX_COVER_WORK / 2 or tries * unit > 2 * balls.MAX_COVER_WORK):
                return None
            b = min(a + h, t_end)
            if sys.proves_positive_on(a, b):
                boxes.append(("pd", a, b))
            elif (balls.det_derivative(*balls.congruence_preconditioned(*sys.N_box(a, b))) < 0
                  and sys.N_balls(balls.arb_of(b)).det() > 0):
                boxes.append(("det", a, b))
            else:
                h /= 2
                if h < t_end / 2 ** (prec + 8):
                    return None
                continue
            if progress:
                progress(float(b / t_end))
            a, h = b, h * 2
    return boxes

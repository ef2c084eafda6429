"""The producer's own route to the rigorous lower bound T_lower of min_time.

No admissible control (‖A‖₂, ‖B‖₂, ‖V‖₂ ≤ M, |b|₂ ≤ M; B = V = 0 in the
congruence class) reaches the target before T_lower.  The mathematics is the
one the `unreachable_in_time` certificate states (MATH.md §3: Σ(t) = ΦΣ0Φᵀ,
Φ̇ = (A + VΣB)Φ, Ostrowski's theorem for the spectrum, Grönwall for the mean
and the covariance displacement); it is written here a second time, in the
producer's own terms, so that the producer and the checker do not run the
same code: the producer learns whether its `unreachable_in_time` document is
valid only from `verify_certificate`.

Each bound reads "every horizon T with g(T) < threshold is excluded" for an
increasing g, and is inverted in closed form where it can be:

* spectrum: ρ = max_i |log(λ_i(Σ1)/λ_i(Σ0))|/2 needs u(T) ≥ ρ with
  u = log max(‖Φ‖, ‖Φ⁻¹‖); congruence: u ≤ MT, so T ≥ ρ/M; full:
  e^{−2u} ≥ (1 + Ms)e^{−2MT} − Ms (s ≥ ‖Σ0‖₂), so
  T ≥ log((1 + Ms)/(e^{−2ρ} + Ms))/(2M);
* displacement: with r = ‖Σ1 − Σ0‖_F/‖Σ0‖_F the same inversion with
  e^{−2ρ} replaced by 1/(1 + r) (congruence: T ≥ log(1 + r)/(2M));
* mean: |m1 − m0| ≤ (|m0| + M/a)(e^{aT} − 1) with a = M (congruence:
  T ≥ log(1 + |m1 − m0|/(|m0| + 1))/M) or a = 2M + M²s/W(T),
  W(T) = (1 + Ms)e^{−2MT} − Ms (full: no closed form; bisection on the
  exclusion test, which holds on an interval [0, T*)).

Eigenvalues enter through rational brackets proved by exact inertia counts
(`exact.ldl_inertia` of Σ − cI), the formulas through 256-bit balls, and each
time is rounded down to a 30-decimal rational, so T_lower is a rigorous lower
bound in its own right.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import flint
import mpmath

from riccati_verify.certify.controls import mp_matrix
from riccati_verify.core import exact
from riccati_verify.core.balls import arb_of, fraction_of_mid
from riccati_verify.core.model import Gaussian

__all__ = ["CONTROL_CLASSES", "LowerBound", "brackets_hold", "eigenvalue_brackets", "mean_excluded",
           "time_lower_bound_from_brackets"]

CONTROL_CLASSES = ("congruence", "full")
BALL_BITS = 256
BRACKET_REL = 10 ** -25                 # relative half-width of the eigenvalue brackets
BISECTION_STEPS = 80
ROUND_DIGITS = 30                       # times are rounded down to this many decimals

Bracket = tuple[Fraction, Fraction]


@dataclass(frozen=True)
class LowerBound:
    """A rigorous lower bound on the minimal time and the witness that a certificate needs."""

    time: Fraction                      # rigorous: no admissible control reaches the target before it
    criterion: str                      # "covariance" (spectrum), "displacement", "mean", or "none"
    reason: str
    eigenvalues_initial: list = field(default_factory=list)   # exact brackets (the certificate witness)
    eigenvalues_target: list = field(default_factory=list)


# ------------------------------------------------------------ eigenvalue brackets

def brackets_hold(S: exact.Matrix, brackets: list[Bracket]) -> bool:
    """λ_i(S) ∈ [lo_i, hi_i] for every i (ascending), decided exactly: at most i eigenvalues lie below
    lo_i and at least i + 1 lie at or below hi_i (counts from the exact inertia of S − cI).  The
    brackets feed a rigorous bound, so a float eigenvalue is never trusted without this."""
    d = len(S)
    if len(brackets) != d:
        return False
    seen: dict[Fraction, tuple[int, int]] = {}

    def below_and_at(c: Fraction) -> tuple[int, int]:
        if c not in seen:
            _, minus, zero = exact.ldl_inertia(exact.sub(S, exact.identity(d, c)))
            seen[c] = (minus, minus + zero)
        return seen[c]

    for i, (lo, hi) in enumerate(brackets):
        if not Fraction(0) <= lo <= hi:
            return False
        if below_and_at(lo)[0] > i or below_and_at(hi)[1] < i + 1:
            return False
    return True


def _decimal(x: mpmath.mpf) -> Fraction:
    return Fraction(mpmath.nstr(x, 30, min_fixed=1, max_fixed=0))


def eigenvalue_brackets(S: exact.Matrix, rank: int) -> list[Bracket]:
    """Rational [lo_i, hi_i] ∋ λ_i(S), ascending, proved by `brackets_hold` (zeros exactly [0, 0]).

    Guessed around 40-digit eigenvalues and widened (10⁸, then 10¹⁶ times) only when the exact test
    refuses the guess, so the brackets are tight for well-conditioned covariances."""
    d = len(S)
    with mpmath.workdps(40):
        w = sorted(mpmath.eigsy(mp_matrix(S))[0]) if d else []
        for widen in (1, 10 ** 8, 10 ** 16):
            rel = mpmath.mpf(BRACKET_REL) * widen
            out = []
            for i in range(d):
                if i < d - rank:
                    out.append((Fraction(0), Fraction(0)))
                    continue
                lam = max(w[i], mpmath.mpf(0))
                lo = _decimal(lam * (1 - rel)) if lam > 0 else Fraction(0)
                hi = _decimal(lam * (1 + rel) + rel * abs(w[-1]))
                out.append((max(lo, Fraction(0)), hi))
            if brackets_hold(S, out):
                return out
    raise ArithmeticError("could not bracket the eigenvalues (ill-conditioned covariance)")


# ------------------------------------------------------------ the bounds, in balls

def _norm(v) -> flint.arb:
    return sum((arb_of(x) * arb_of(x) for x in v), flint.arb(0)).sqrt()


def _floor_time(x: flint.arb) -> Fraction:
    """A ROUND_DIGITS-decimal rational ≤ every point of x (0 when x is not finite or not positive)."""
    lo = x.lower()
    if not lo.is_finite():
        return Fraction(0)
    scale = 10 ** ROUND_DIGITS
    return max(Fraction(math.floor(fraction_of_mid(lo) * scale), scale), Fraction(0))


def _spectral_gap(b0: list[Bracket], b1: list[Bracket]) -> flint.arb:
    """An exact point ≤ ρ = max_i |log(λ_i(Σ1)/λ_i(Σ0))|/2, from the pairs whose ratio is proved ≠ 1
    (a ratio in [l1/h0, h1/l0]; zero eigenvalues pair with zeros and contribute nothing)."""
    rho = flint.arb(0)
    for (l0, h0), (l1, h1) in zip(b0, b1):
        if l0 <= 0 or l1 <= 0:
            continue
        if l1 > h0:
            gap = (arb_of(l1) / arb_of(h0)).log() / 2
        elif h1 < l0:
            gap = (arb_of(l0) / arb_of(h1)).log() / 2
        else:
            continue
        if gap.lower() > rho:
            rho = gap.lower()
    return rho


def _invert_floor(q: flint.arb, M: flint.arb, s: flint.arb) -> flint.arb:
    """The T at which (1 + Ms)e^{−2MT} − Ms falls to q: every shorter horizon is excluded."""
    return ((1 + M * s) / (q + M * s)).log() / (2 * M)


def _comparison(T: flint.arb, M: flint.arb, s: flint.arb) -> flint.arb:
    return (1 + M * s) * (-2 * M * T).exp() - M * s


def mean_excluded(T: Fraction, M: Fraction, control_class: str, state0: Gaussian, target: Gaussian,
                  s: Fraction) -> bool:
    """True only when the Grönwall bound proves |m(t) − m0| < |m1 − m0| for every t ≤ T (s ≥ ‖Σ0‖₂):
    the step of the full-class bisection, where the bound has no closed-form inverse."""
    with flint.ctx.workprec(BALL_BITS):
        Tb, Mb, sb = arb_of(T), arb_of(M), arb_of(s)
        if control_class == "congruence":
            a = Mb
        else:
            W = _comparison(Tb, Mb, sb)
            if not W > 0:
                return False
            a = 2 * Mb + Mb * Mb * sb / W
        reach_of_mean = (_norm(state0.mean) + Mb / a) * ((a * Tb).exp() - 1)
        return bool(reach_of_mean < _norm([y - x for x, y in zip(state0.mean, target.mean)]))


def _mean_time(state0: Gaussian, target: Gaussian, M: Fraction, control_class: str, s: Fraction) -> Fraction:
    if state0.mean == target.mean:
        return Fraction(0)
    if control_class == "congruence":
        with flint.ctx.workprec(BALL_BITS):
            dm = _norm([y - x for x, y in zip(state0.mean, target.mean)])
            return _floor_time((1 + dm / (_norm(state0.mean) + 1)).log() / arb_of(M))
    lo, hi = Fraction(0), Fraction(1)
    while mean_excluded(hi, M, control_class, state0, target, s):
        lo, hi = hi, 2 * hi
    for _ in range(BISECTION_STEPS):
        mid = (lo + hi) / 2
        if mean_excluded(mid, M, control_class, state0, target, s):
            lo = mid
        else:
            hi = mid
    return lo


_REASONS = {
    "covariance": {"congruence": "spectrum (Ostrowski): max_i |log(l1_i/l0_i)|/2 <= M T",
                   "full": "spectrum (Ostrowski): exp(-2 rho) >= (1 + M s0) exp(-2MT) - M s0"},
    "displacement": {"congruence": "displacement: |S1 - S0|_F <= |S0|_F (exp(2MT) - 1)",
                     "full": "displacement: |S1 - S0|_F <= |S0|_F (1/W(T) - 1), W = (1 + M s0) exp(-2MT) - M s0"},
    "mean": {"congruence": "mean: |m1 - m0| <= (|m0| + 1)(exp(MT) - 1)",
             "full": "mean: |m1 - m0| <= (|m0| + M/a)(exp(aT) - 1), a = 2M + M^2 s0/W(T)"},
}


def time_lower_bound_from_brackets(state0: Gaussian, target: Gaussian, M: Fraction, control_class: str,
                                   b0: list[Bracket], b1: list[Bracket]) -> LowerBound:
    """The largest of the spectrum, displacement and mean bounds, from proved eigenvalue brackets.

    Ties go to the first of covariance, displacement, mean, the order the report has always used."""
    s = max((hi for _, hi in b0), default=Fraction(0)) if control_class == "full" else Fraction(0)
    times = {}
    with flint.ctx.workprec(BALL_BITS):
        Mb, sb = arb_of(M), arb_of(s)
        rho = _spectral_gap(b0, b1)
        if control_class == "congruence":
            times["covariance"] = _floor_time(rho / Mb)
        else:
            times["covariance"] = _floor_time(_invert_floor((-2 * rho).exp(), Mb, sb))
        f0 = _norm([x for row in state0.cov for x in row])
        if f0 > 0:
            r = _norm([y - x for r0, r1 in zip(state0.cov, target.cov) for x, y in zip(r0, r1)]) / f0
            times["displacement"] = _floor_time(_invert_floor(1 / (1 + r), Mb, sb))
        else:
            times["displacement"] = Fraction(0)
    times["mean"] = _mean_time(state0, target, M, control_class, s)
    crit = max(times, key=times.get)
    if times[crit] == 0:
        return LowerBound(Fraction(0), "none", "no positive lower bound", b0, b1)
    return LowerBound(times[crit], crit, _REASONS[crit][control_class], b0, b1)

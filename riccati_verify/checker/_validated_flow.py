"""Rigorous enclosure of the moment flow (MATH.md eq. 1.1) over one segment of constant controls.

    ṁ = (A + V) m + V Σ B m + b,   Σ̇ = A Σ + Σ Aᵀ + V Σ B Σ + Σ Bᵀ Σ Vᵀ

Moore's interval Taylor method in python-flint ball arithmetic.  Trusted
core: imports only flint, fractions and `riccati_verify.core.exact/balls`, so a
certificate checker may rely on it.

Soundness, one step [t0, t0 + h] from a ball state X0 (every entry of the
true state lies in its ball):

1. *A-priori enclosure.*  A candidate box E is accepted when
   X0 + [0, h]·f(E) ⊆ E (ball containment, entry by entry).  Then the Picard
   operator (Px)(t) = x0 + ∫_0^t f(x(s)) ds maps the continuous functions on
   [0, h] with values in E into themselves: ∫_0^t f(x) = t · (mean of f(x(s)))
   and that mean lies in the convex box f(E).  f is polynomial, hence
   Lipschitz on the compact E, so the Picard iterates converge uniformly on
   [0, h] to the solution, which therefore exists on the whole step and stays
   in E (no blow-up inside the step).
2. *Taylor coefficients.*  The solution through x0 is analytic and its
   coefficients x_k(x0) obey the Cauchy-product recursion (the RHS is
   quadratic in (m, Σ)): with C_k = Σ_j S_j B S_{k−j}, c_k = Σ_j S_j B m_{k−j},
       (k+1) m_{k+1} = (A + V) m_k + V c_k + [k = 0] b
       (k+1) S_{k+1} = P_k + P_kᵀ,   P_k = A S_k + V C_k.
   Evaluated on the ball X0, every ball x_k(X0) contains x_k(x0) for every
   x0 ∈ X0 (interval extension of a polynomial map), at whatever working
   precision each coefficient is computed.  When m0 is exactly 0 and b = 0,
   m ≡ 0 (ṁ = (A + V + VΣB) m), so the mean coefficients are exact zeros and
   their products are skipped; the Picard box of point 1 then keeps m = 0
   exactly too (f's mean part vanishes there, so the containment holds).
3. *Remainder.*  Componentwise Taylor with the Lagrange remainder:
   x_i(t0 + h) = Σ_{k<K} x_{i,k}(x0) h^k + x_i^{(K)}(ξ_i) h^K / K!  with
   ξ_i ∈ [t0, t0 + h].  The segment's ODE is autonomous, so
   x^{(K)}(ξ)/K! is the K-th coefficient of the solution through x(ξ) ∈ E:
   it lies in x_K(E), the same recursion evaluated on E.  Hence
   X1 = Σ_{k<K} x_k(X0) h^k + x_K(E) h^K contains the true state at t0 + h.
   A rational h that is not dyadic enters as a ball containing it (and
   [0, h] as a ball containing [0, h]), which keeps every inclusion.

Step sizes, the inflation of the candidate E and every other heuristic use
ball midpoints only; they affect efficiency, never soundness.  The symmetric
update (P + Pᵀ) keeps Σ's balls exactly symmetric.  Plain balls suffer from
the wrapping effect (radius growth like e^{‖|J|‖ t} instead of the true
contraction); for the horizons of our certificates it stays far below the
tolerances, and the final radius is reported so callers can see it.

Failure — blow-up inside the segment, radii that explode, a step size that
collapses or a spent step budget — is returned as `SegmentEnclosure(ok=False,
reason=...)`, never raised.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import flint
from flint import arb, arb_mat

from riccati_verify.core import deadline, exact
from riccati_verify.core.balls import arb_matrix, arb_of

DEFAULT_PREC = 320
DEFAULT_ORDER = 30
DEFAULT_MAX_STEPS = 4000
BLOWUP_NORM = 2 ** 40          # an entry beyond this is treated as (imminent) blow-up
PICARD_TRIES = 4
SHRINK_TRIES = 30
MIN_STEP_FRACTION = Fraction(1, 2 ** 60)
SAFETY = 0.75   # the remainder is evaluated on the wider box E: aim a bit short to avoid rejected steps


@dataclass
class SegmentEnclosure:
    ok: bool
    mean: arb_mat | None        # d×1 ball vector, contains m(t0 + τ)   (None when not ok)
    cov: arb_mat | None         # d×d ball matrix, contains Σ(t0 + τ)
    steps: int
    reason: str = ""
    radius: float = 0.0         # largest entry radius of the final state (for reports only)
    products: int = 0           # d×d arb_mat products in the Taylor recursions (the unit of work)


def ball_state(mean: exact.Vector, cov: exact.Matrix, prec: int = DEFAULT_PREC) -> tuple[arb_mat, arb_mat]:
    """An exact rational state as (d×1, d×d) ball matrices at `prec` bits."""
    old = flint.ctx.prec
    flint.ctx.prec = prec
    try:
        return arb_matrix(tuple((x,) for x in mean)), arb_matrix(cov)
    finally:
        flint.ctx.prec = old


def max_radius(*Ms: arb_mat) -> float:
    return max((float(e.rad()) for M in Ms for e in M.entries()), default=0.0)


def _max_abs(*Ms: arb_mat) -> float:
    return max((float(abs(e).upper()) for M in Ms for e in M.entries()), default=0.0)


class _Field:
    """The moment vector field for one set of constant ball controls."""

    def __init__(self, A, B: exact.Matrix, V: exact.Matrix, b: exact.Vector):
        # A may be a ball matrix (an arb_mat): every coefficient below is then an enclosure for
        # every A in it, so the enclosures hold for each such A (a return map near infinity
        # needs A ∈ [0, ε̄]·A to cover every later scale at once: MATH.md §15)
        self.d = len(B)
        self.A = arb_mat(A) if isinstance(A, arb_mat) else arb_matrix(A)
        self.B = arb_matrix(B)
        self.V = arb_matrix(V)
        self.AV = self.A + self.V
        self.b = arb_matrix(tuple((x,) for x in b))
        self.b_zero = not any(b)
        # Without V or B the field is linear: skip the Cauchy products (a speed-up only).
        self.quadratic = any(x for r in B for x in r) and any(x for r in V for x in r)
        self.products = 0

    def coefficients(self, m: arb_mat, S: arb_mat, K: int, bits=None) -> tuple[list[arb_mat], list[arb_mat]]:
        """Taylor coefficients x_0..x_K of the solution through (m, S) (ball enclosures).

        bits(k, ms, Ss), when given, is the working precision for x_{k+1} (ball arithmetic at any
        precision encloses the exact values, so this changes widths only); the ambient precision
        is restored on return.

        When m is exactly 0 and b = 0, m ≡ 0 solves the mean equation (ṁ = (A + V + VΣB) m), so
        the mean coefficients are the exact zeros and their Cauchy products are skipped."""
        quad = self.quadratic
        mean = not (self.b_zero and all(e.is_zero() for e in m.entries()))
        ms, Ss, SBs = [m], [S], [S * self.B] if quad else []
        ambient = flint.ctx.prec
        try:
            for k in range(K):
                if bits is not None:
                    flint.ctx.prec = bits(k, ms, Ss)
                self._next(k, ms, Ss, SBs, quad, mean)
        finally:
            flint.ctx.prec = ambient
        return ms, Ss

    def cauchy(self, k, ms, Ss, SBs, mean):
        """The quadratic terms of the k-th step of the recursion: (V Σ_j S_j B S_{k−j},
        V Σ_j S_j B m_{k−j}) (the second None when not mean), SBs[j] = S_j B.  The Σ-part of
        Σ_{i+j=k} Q(x_i, x_j), Q the field's quadratic form, is the first plus its transpose."""
        C = SBs[0] * Ss[k]
        for j in range(1, k + 1):
            C = C + SBs[j] * Ss[k - j]
        c = None
        if mean:
            c = SBs[0] * ms[k]
            for j in range(1, k + 1):
                c = c + SBs[j] * ms[k - j]
            c = self.V * c
        return self.V * C, c

    def _next(self, k, ms, Ss, SBs, quad, mean):
        """Append x_{k+1} (the recursion of the module docstring, point 2)."""
        inv = arb(1) / (k + 1)
        P = self.A * Ss[k]
        if quad:
            qS, qm = self.cauchy(k, ms, Ss, SBs, mean)
            P = P + qS
        if mean:
            dm = self.AV * ms[k]
            if k == 0:
                dm = dm + self.b
            if quad:
                dm = dm + qm
            ms.append(dm * inv)
        else:
            ms.append(arb_mat(self.d, 1))
        self.products += (k + 4) if quad else 1
        Ss.append((P + P.transpose()) * inv)
        if quad:
            SBs.append(Ss[-1] * self.B)

    def rhs(self, m: arb_mat, S: arb_mat) -> tuple[arb_mat, arb_mat]:
        ms, Ss = self.coefficients(m, S, 1)
        return ms[1], Ss[1]


def _step_log2_guesses(ms, Ss, K: int, target: float) -> list[float]:
    """log2 of the step h that makes |x_K| h^K ≈ target, from each of the last two coefficients
    (ρ ≈ |x_k|^(-1/k) estimates the radius of convergence; either coefficient may vanish)."""
    out = []
    for k in (K - 1, K):
        la = _log2_max_abs(ms[k], Ss[k])
        if la is not None:
            out.append(math.log2(target) / K - la / k)
    return out


def _log2_max_abs(*Ms: arb_mat) -> float | None:
    """log2 of the largest entry bound (no float overflow for huge coefficients); None if all zero."""
    best = None
    for M in Ms:
        for e in M.entries():
            u = abs(e).upper()
            if u > 0 and (best is None or u > best):     # exact arbs: the comparison is decided
                best = u
    return None if best is None else float(best.log() / arb(2).log())


def _inflate(M: arb_mat, delta: arb) -> arb_mat:
    out = arb_mat(M.nrows(), M.ncols())
    for i in range(M.nrows()):
        for j in range(M.ncols()):
            e = M[i, j]
            out[i, j] = arb(e.mid(), e.rad() * 2) + delta
    return out


def _contains(E: arb_mat, X: arb_mat) -> bool:
    return all(E[i, j].contains(X[i, j]) for i in range(E.nrows()) for j in range(E.ncols()))


def _horner(coeffs: list[arb_mat], h: arb) -> arb_mat:
    acc = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        acc = acc * h + c
    return acc


def _centre_step(guesses: list[float], remaining: Fraction) -> Fraction:
    """SAFETY times the smallest step guess (log2), as a short dyadic at most `remaining`; all of
    `remaining` when there is no guess or when a sliver below h/16 would be left for a last step.
    Clamped to 2^±1000: tiny coefficients (B = V = 1e-400, A = 0) give a guess past the float
    range, and any step beyond `remaining` is capped to it anyway."""
    h = (_dyadic_below(SAFETY * 2.0 ** min(max(min(guesses), -1000.0), 1000.0), remaining)
         if guesses else remaining)
    return remaining if remaining - h < h / 16 else h


def _dyadic_below(x: float, cap: Fraction) -> Fraction:
    """A short dyadic rational ≤ x (positive x), at most cap."""
    if x <= 0:
        return Fraction(0)
    # ldexp, not x * 2**e: an int power past 2^1023 does not convert to a float (x below about 2^-1003
    # raised OverflowError; review s17)
    _, e = math.frexp(x)
    e = 21 - e                          # now 2^20 ≤ x·2^e < 2^21
    m = int(math.ldexp(x, e))
    return min(Fraction(m, 2 ** e) if e >= 0 else Fraction(m * 2 ** -e), cap)


def enclose_segment(mean: arb_mat, cov: arb_mat, A: exact.Matrix, B: exact.Matrix, V: exact.Matrix,
                    b: exact.Vector, duration: Fraction, *, order: int = DEFAULT_ORDER,
                    prec: int = DEFAULT_PREC, tol_bits: int | None = None,
                    max_steps: int = DEFAULT_MAX_STEPS) -> SegmentEnclosure:
    """Enclose (m, Σ) after `duration` under constant rational controls, from the ball state (mean, cov).

    tol_bits: each step's Taylor remainder is kept below 2^-tol_bits · max(1, |state|)
    (default prec // 2).  Runs at `prec` bits and restores the ambient precision.
    """
    if order < 2:
        raise ValueError("the Taylor order must be at least 2")
    duration = Fraction(duration)
    if duration <= 0:
        return SegmentEnclosure(False, None, None, 0, "non-positive duration")
    old = flint.ctx.prec
    flint.ctx.prec = prec
    try:
        return _enclose(mean, cov, _Field(A, B, V, b), duration, order,
                        tol_bits if tol_bits is not None else prec // 2, max_steps)
    except (ArithmeticError, ValueError) as e:
        # the float step-size and size heuristics may still overflow on extreme magnitudes
        # (a float view of a huge duration or entry); no enclosure then, never an exception
        return SegmentEnclosure(False, None, None, 0, f"the validated integrator failed on these magnitudes "
                                                      f"({type(e).__name__}: {e})")
    finally:
        flint.ctx.prec = old


def _enclose(m: arb_mat, S: arb_mat, F: _Field, duration: Fraction, K: int, tol_bits: int,
             max_steps: int) -> SegmentEnclosure:
    t = Fraction(0)
    steps = 0
    tol = 2.0 ** -tol_bits
    while t < duration:
        if steps >= max_steps:
            return SegmentEnclosure(False, None, None, steps,
                                    f"step budget ({max_steps}) spent at t = {float(t):.6g} of {float(duration):.6g}")
        size = _max_abs(m, S)
        if not size < BLOWUP_NORM:
            return SegmentEnclosure(False, None, None, steps,
                                    f"state norm exceeds {BLOWUP_NORM:.3g} at t = {float(t):.6g} (blow-up?)")
        scale = max(1.0, size)
        if max_radius(m, S) > 2.0 ** -(tol_bits // 2) * scale:   # widths have exploded (wrapping)
            return SegmentEnclosure(False, None, None, steps,
                                    f"enclosure radius {max_radius(m, S):.3g} too wide at t = {float(t):.6g} "
                                    "(widths explode: wrapping effect, or a blow-up nearby)")
        ms, Ss = F.coefficients(m, S, K)
        # Step-size guess: radius of convergence ρ ≈ |x_k|^(-1/k) from the last two coefficients
        # (either may vanish by accident), h = ρ·(tol·scale)^(1/K) so that |x_K| h^K ≈ tol·scale.
        h = _centre_step(_step_log2_guesses(ms, Ss, K, tol * scale), duration - t)
        if h < duration * MIN_STEP_FRACTION:
            return SegmentEnclosure(False, None, None, steps,
                                    f"step size collapsed ({float(h):.3g}) at t = {float(t):.6g} (blow-up?)")
        step = _step(m, S, ms, Ss, F, h, K, tol * scale)
        if step is None:
            return SegmentEnclosure(False, None, None, steps,
                                    f"no a-priori enclosure / remainder bound for any step size at "
                                    f"t = {float(t):.6g} (blow-up inside the segment?)")
        m, S, h = step
        for X in (m, S):
            if not all(e.is_finite() for e in X.entries()):
                return SegmentEnclosure(False, None, None, steps, f"non-finite enclosure at t = {float(t):.6g}")
        t += h
        steps += 1
    return SegmentEnclosure(True, m, S, steps, "", max_radius(m, S), F.products)


def _step(m, S, ms, Ss, F: _Field, h: Fraction, K: int, tol: float):
    """One validated step of length ≤ h: (m1, S1, h_taken), or None when none can be validated."""
    for _ in range(SHRINK_TRIES):
        deadline.check()
        hb = arb_of(h)
        H = arb(0).union(hb)                    # contains [0, h]
        E = _picard_box(m, S, F, H, h)
        if E is not None:
            Em, ES = E
            rm, rS = F.coefficients(Em, ES, K)
            hK = hb ** K
            Rm, RS = rm[K] * hK, rS[K] * hK
            if _max_abs(Rm, RS) <= tol:
                return _horner(ms[:K], hb) + Rm, _horner(Ss[:K], hb) + RS, h
        h = h / 2
    return None


def _picard_box(m, S, F: _Field, H: arb, h: Fraction):
    """A box E ⊇ the trajectory on [0, h] by the Picard containment test, or None.

    With m exactly 0 and b = 0 the mean part of E is the exact 0 (f's mean part vanishes there, so
    the containment test holds for it exactly), which keeps the mean's Cauchy products skipped."""
    zero_mean = F.b_zero and all(e.is_zero() for e in m.entries())
    fm, fS = F.rhs(m, S)
    Em, ES = m + fm * H, S + fS * H
    # Inflation per block: the mean may be orders of magnitude larger than Σ (or vice versa), and a
    # box sized by the larger block would make the other's f(E) uselessly wide.
    dm, dS = (arb(0, arb(_max_abs(f) * float(h) / 4 + 2.0 ** -40 * max(1.0, _max_abs(x))))
              for f, x in ((fm, m), (fS, S)))
    for _ in range(PICARD_TRIES):
        Em, ES = (m if zero_mean else _inflate(Em, dm)), _inflate(ES, dS)
        fm, fS = F.rhs(Em, ES)
        Nm, NS = m + fm * H, S + fS * H
        if _contains(Em, Nm) and _contains(ES, NS):
            return Em, ES
        Em, ES = _hull(Em, Nm), _hull(ES, NS)
    return None


def _hull(X: arb_mat, Y: arb_mat) -> arb_mat:
    out = arb_mat(X.nrows(), X.ncols())
    for i in range(X.nrows()):
        for j in range(X.ncols()):
            out[i, j] = X[i, j].union(Y[i, j])
    return out


__all__ = ["SegmentEnclosure", "ball_state", "enclose_segment", "max_radius"]

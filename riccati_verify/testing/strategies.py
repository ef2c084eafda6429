"""Public hypothesis strategies for riccati_verify, in the style of `hypothesis.extra.numpy`.

Every exact strategy builds its object so that the advertised property holds
*exactly, by construction*, never by filtering:

- symmetric matrices with a prescribed spectrum are Q D Qᵀ with D a rational
  diagonal and Q a rational orthogonal matrix from the Cayley transform
  Q = (I − K)(I + K)⁻¹ of a rational skew-symmetric K (I + K is always
  invertible because K has imaginary spectrum).  So the eigenvalues of the
  result are *exactly* the drawn diagonal entries: rank, inertia and
  condition number are known exactly;
- matrices with a prescribed symmetric part are P + K with K skew-symmetric;
- Hurwitz matrices are T (−P + K) T⁻¹ with P ≻ 0, K skew and T an integer
  unimodular matrix (a product of integer shears), so T⁻¹ is an integer matrix
  and (T⁻ᵀT⁻¹) is a quadratic Lyapunov certificate.

Shrinking: every strategy shrinks towards the simplest member of its class
(K = 0 and T = I, hence diagonal matrices; eigenvalues and entries towards the
lower magnitude bound or 0; fewest segments; smallest dimension), so minimal
failing examples are small diagonal rational matrices.

Exact matrices are `riccati_verify.core.exact.Matrix` (tuples of tuples of
`fractions.Fraction`); `*_arrays` variants return the float64 rounding of the
exact object as a (writable) numpy array.  Parameters default to small
magnitudes and dimensions (well-conditioned inputs): the property suites in
`riccati_verify.testing` derive their tolerances from these bounds.

Dimension arguments accept an int or a strategy of ints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Literal, Sequence

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis.strategies import SearchStrategy

from riccati_verify.core import exact
from riccati_verify.numeric.flow import Segment
from riccati_verify.core.model import MAX_DIM, Gaussian, Params
from riccati_verify.numeric.views import float_view

__all__ = [
    "rationals", "rational_matrices", "rational_vectors", "skew_symmetric_matrices",
    "orthogonal_matrices", "unimodular_matrices", "symmetric_matrices", "psd_matrices",
    "pd_matrices", "psd_arrays", "pd_arrays", "definite_matrices", "matrices_with_symmetric_part",
    "hurwitz_matrices", "params", "gaussians", "control_sequences", "WeightedCloud",
    "particle_clouds", "effective_sample_size", "general_instances", "general_instance",
    "opposite_instances", "opposite_instance", "reference_fate", "reference_blowup",
]

Num = int | Fraction
DimArg = int | SearchStrategy[int]
Sign = Literal[1, -1]


def _q(x: Num | str) -> Fraction:
    return Fraction(x)


def _dim(draw, dim: DimArg) -> int:
    d = draw(dim) if isinstance(dim, SearchStrategy) else dim
    if not isinstance(d, int) or not 1 <= d <= MAX_DIM:
        raise ValueError(f"dimension must be an int in 1..{MAX_DIM}, got {d!r}")
    return d


# -- scalars, vectors and general matrices -----------------------------------

def rationals(min_value: Num = -1, max_value: Num = 1, *, max_denominator: int = 8) -> SearchStrategy[Fraction]:
    """Fractions p/q in [min_value, max_value] with 1 ≤ q ≤ max_denominator (in lowest terms the
    denominator may be smaller).  Draws q first, then p, so it shrinks towards q = 1 and then
    towards the value of least magnitude.  (hypothesis's own `fractions` shrinks towards the
    upper bound.)  A drawn q with no multiple of 1/q in the range is replaced by the smallest q that
    has one; ValueError when no q ≤ max_denominator has one (e.g. [1/7, 1/6] with max_denominator 4:
    the draws could not keep the promise)."""
    lo, hi = _q(min_value), _q(max_value)
    if lo > hi or max_denominator < 1:
        raise ValueError("need min_value <= max_value and max_denominator >= 1")

    def span(q: int) -> tuple[int, int]:
        return -((-lo * q).__floor__()), (hi * q).__floor__()     # ceil(lo·q), floor(hi·q)
    q0 = _simplest_in(lo, hi).denominator       # the smallest q with a multiple of 1/q in range
    if q0 > max_denominator:
        raise ValueError(f"no p/q with q <= {max_denominator} lies in [{lo}, {hi}]")

    def numerators(q: int) -> SearchStrategy[Fraction]:
        p_lo, p_hi = span(q)
        if p_lo > p_hi:
            q = q0
            p_lo, p_hi = span(q)
        return st.integers(p_lo, p_hi).map(lambda p, q=q: Fraction(p, q))

    return st.integers(1, max_denominator).flatmap(numerators)


def _simplest_in(lo: Fraction, hi: Fraction) -> Fraction:
    """The fraction with the smallest denominator in [lo, hi] (lo ≤ hi), by continued fractions: an integer
    when one lies in the range, else ⌊lo⌋ + 1/(the simplest in [1/(hi − ⌊lo⌋), 1/(lo − ⌊lo⌋)])."""
    n = lo.__floor__()
    if n == lo or n + 1 <= hi:
        return Fraction(n if n == lo else n + 1)
    return n + 1 / _simplest_in(1 / (hi - n), 1 / (lo - n))


def rational_vectors(dim: DimArg, *, max_magnitude: Num = 1, max_denominator: int = 8) -> SearchStrategy[exact.Vector]:
    """Exact vectors of length `dim` with entries p/q, |p/q| ≤ max_magnitude, q ≤ max_denominator."""

    @st.composite
    def build(draw):
        d = _dim(draw, dim)
        e = rationals(-_q(max_magnitude), _q(max_magnitude), max_denominator=max_denominator)
        return tuple(draw(e) for _ in range(d))

    return build()


def rational_matrices(rows: DimArg, cols: DimArg | None = None, *, max_magnitude: Num = 1,
                      max_denominator: int = 8) -> SearchStrategy[exact.Matrix]:
    """Exact `rows`×`cols` matrices (square when cols is None) with entries p/q,
    |p/q| ≤ max_magnitude and 1 ≤ q ≤ max_denominator.  Shrinks towards the zero matrix."""

    @st.composite
    def build(draw):
        n = _dim(draw, rows)
        m = n if cols is None else _dim(draw, cols)
        e = rationals(-_q(max_magnitude), _q(max_magnitude), max_denominator=max_denominator)
        return tuple(tuple(draw(e) for _ in range(m)) for _ in range(n))

    return build()


def skew_symmetric_matrices(dim: DimArg, *, max_magnitude: Num = 1, max_denominator: int = 4
                            ) -> SearchStrategy[exact.Matrix]:
    """Exact K with K = −Kᵀ, off-diagonal entries p/q with |p/q| ≤ max_magnitude, q ≤ max_denominator."""

    @st.composite
    def build(draw):
        d = _dim(draw, dim)
        e = rationals(-_q(max_magnitude), _q(max_magnitude), max_denominator=max_denominator)
        K = [[Fraction(0)] * d for _ in range(d)]
        for i in range(d):
            for j in range(i + 1, d):
                K[i][j] = draw(e)
                K[j][i] = -K[i][j]
        return tuple(map(tuple, K))

    return build()


def _inverse(M: exact.Matrix) -> exact.Matrix:
    d = len(M)
    cols = [exact.solve(M, [Fraction(int(i == j)) for i in range(d)]) for j in range(d)]
    return exact.transpose(tuple(cols))


def cayley(K: exact.Matrix) -> exact.Matrix:
    """Q = (I − K)(I + K)⁻¹: rational and exactly orthogonal for skew-symmetric rational K."""
    d = len(K)
    I = exact.identity(d)
    return exact.matmul(exact.sub(I, K), _inverse(exact.add(I, K)))


def orthogonal_matrices(dim: DimArg, *, max_magnitude: Num = 1, max_denominator: int = 4
                        ) -> SearchStrategy[exact.Matrix]:
    """Exact rational orthogonal matrices Q (QQᵀ = I exactly, det Q = +1): the Cayley transform of
    `skew_symmetric_matrices(dim, max_magnitude, max_denominator)`.  Shrinks towards I."""
    return skew_symmetric_matrices(dim, max_magnitude=max_magnitude, max_denominator=max_denominator).map(cayley)


def unimodular_matrices(dim: DimArg, *, max_shears: int = 3, max_factor: int = 1) -> SearchStrategy[exact.Matrix]:
    """Integer matrices T with det T = 1 exactly (so T⁻¹ is an integer matrix): products of at most
    `max_shears` shears I + c·E_ij (i ≠ j, 1 ≤ |c| ≤ max_factor).  Each shear at most multiplies the
    largest entry by (1 + max_factor).  Shrinks towards I (no shears)."""

    @st.composite
    def build(draw):
        d = _dim(draw, dim)
        T = [[Fraction(int(i == j)) for j in range(d)] for i in range(d)]
        if d == 1:
            return tuple(map(tuple, T))
        n = draw(st.integers(0, max_shears))
        for _ in range(n):
            i = draw(st.integers(0, d - 1))
            j = draw(st.integers(0, d - 2))
            j += j >= i
            c = draw(st.integers(1, max_factor)) * draw(st.sampled_from([1, -1]))
            T[i] = [a + c * b for a, b in zip(T[i], T[j])]  # row i += c·row j
        return tuple(map(tuple, T))

    return build()


# -- symmetric matrices with a prescribed spectrum --------------------------

def _spectrum(draw, n_plus: int, n_minus: int, n_zero: int, lo: Fraction, hi: Fraction,
              max_condition: Fraction | None, max_denominator: int) -> list[Fraction]:
    """|λ| of the nonzero eigenvalues lie in [s, min(hi, s·κ)] with s ∈ [lo, hi] the smallest one."""
    k = n_plus + n_minus
    if k == 0:
        return [Fraction(0)] * n_zero
    smallest = draw(rationals(lo, hi, max_denominator=max_denominator))
    top = hi if max_condition is None else min(hi, smallest * max_condition)
    mags = [smallest] + [draw(rationals(smallest, top, max_denominator=max_denominator)) for _ in range(k - 1)]
    signed = [mags[i] if i < n_plus else -mags[i] for i in range(k)]
    return signed + [Fraction(0)] * n_zero


def symmetric_matrices(dim: DimArg, *, inertia: tuple[int, int, int] | None = None,
                       min_abs_eigenvalue: Num = Fraction(1, 4), max_abs_eigenvalue: Num = 2,
                       max_condition: Num | None = None, max_denominator: int = 4,
                       rotate: bool = True) -> SearchStrategy[exact.Matrix]:
    """Exact symmetric S = Q D Qᵀ with Q from `orthogonal_matrices` (Q = I when rotate=False) and
    D = diag(λ) in a random order.  Exactly:

    - inertia (n₊, n₋, n₀) as given (default: drawn uniformly with n₊ + n₋ + n₀ = dim);
    - every nonzero eigenvalue has min_abs_eigenvalue ≤ |λ| ≤ max_abs_eigenvalue;
    - the condition number of the nonzero spectrum, max|λ| / min|λ|, is at most max_condition.

    The eigenvalues are rationals with denominator ≤ max_denominator·(denominator of the bounds)."""
    lo, hi = _q(min_abs_eigenvalue), _q(max_abs_eigenvalue)
    kappa = None if max_condition is None else _q(max_condition)
    if not 0 < lo <= hi:
        raise ValueError("need 0 < min_abs_eigenvalue <= max_abs_eigenvalue")
    if kappa is not None and kappa < 1:
        raise ValueError("max_condition must be >= 1")

    @st.composite
    def build(draw):
        d = _dim(draw, dim)
        if inertia is None:
            n_plus = draw(st.integers(0, d))
            n_minus = draw(st.integers(0, d - n_plus))
            n_zero = d - n_plus - n_minus
        else:
            n_plus, n_minus, n_zero = inertia
            if min(inertia) < 0 or sum(inertia) != d:
                raise ValueError(f"inertia {inertia} does not add up to dimension {d}")
        lam = _spectrum(draw, n_plus, n_minus, n_zero, lo, hi, kappa, max_denominator)
        order = draw(st.permutations(range(d)))
        D = tuple(tuple(lam[order[i]] if i == j else Fraction(0) for j in range(d)) for i in range(d))
        if not rotate or d == 1:
            return D
        Q = draw(orthogonal_matrices(d))
        return exact.matmul(exact.matmul(Q, D), exact.transpose(Q))

    return build()


def psd_matrices(dim: DimArg, *, rank: DimArg | None = None, min_eigenvalue: Num = Fraction(1, 4),
                 max_eigenvalue: Num = 2, max_condition: Num | None = None, max_denominator: int = 4,
                 rotate: bool = True) -> SearchStrategy[exact.Matrix]:
    """Exact symmetric positive semidefinite matrices of exact rank `rank` (default: drawn in
    0..dim), whose nonzero eigenvalues lie in [min_eigenvalue, max_eigenvalue] with ratio
    λ_max/λ_min⁺ ≤ max_condition.  Built as in `symmetric_matrices` with inertia (rank, 0, dim − rank)."""

    @st.composite
    def build(draw):
        d = _dim(draw, dim)
        r = draw(st.integers(0, d)) if rank is None else (draw(rank) if isinstance(rank, SearchStrategy) else rank)
        if not 0 <= r <= d:
            raise ValueError(f"rank {r} outside 0..{d}")
        return draw(symmetric_matrices(d, inertia=(r, 0, d - r), min_abs_eigenvalue=min_eigenvalue,
                                       max_abs_eigenvalue=max_eigenvalue, max_condition=max_condition,
                                       max_denominator=max_denominator, rotate=rotate))

    return build()


def pd_matrices(dim: DimArg, **kwargs) -> SearchStrategy[exact.Matrix]:
    """Exact symmetric positive definite matrices: `psd_matrices(dim, rank=dim, **kwargs)`."""

    @st.composite
    def build(draw):
        d = _dim(draw, dim)
        return draw(psd_matrices(d, rank=d, **kwargs))

    return build()


def definite_matrices(dim: DimArg, sign: Sign, **kwargs) -> SearchStrategy[exact.Matrix]:
    """Exact symmetric matrices that are positive definite (sign=+1) or negative definite (sign=−1):
    sign · `pd_matrices(dim, **kwargs)`."""
    if sign not in (1, -1):
        raise ValueError("sign must be +1 or -1")
    return pd_matrices(dim, **kwargs).map(lambda P: exact.scale(sign, P))


def _to_array(M: exact.Matrix) -> np.ndarray:
    return np.array([[float(x) for x in r] for r in M], dtype=float)


def psd_arrays(dim: DimArg, **kwargs) -> SearchStrategy[np.ndarray]:
    """float64 arrays: the entrywise rounding of `psd_matrices(dim, **kwargs)`.  The rounded
    matrix is exactly symmetric; its eigenvalues differ from the exact ones by at most about
    dim·2⁻⁵³·max_eigenvalue, so rank and definiteness hold up to that resolution."""
    return psd_matrices(dim, **kwargs).map(_to_array)


def pd_arrays(dim: DimArg, **kwargs) -> SearchStrategy[np.ndarray]:
    """float64 arrays: the entrywise rounding of `pd_matrices(dim, **kwargs)` (see `psd_arrays`)."""
    return pd_matrices(dim, **kwargs).map(_to_array)


def matrices_with_symmetric_part(sym: exact.Matrix, *, max_magnitude: Num = Fraction(1, 2),
                                 max_denominator: int = 4) -> SearchStrategy[exact.Matrix]:
    """Exact M = sym + K with K from `skew_symmetric_matrices`: the symmetric part (M + Mᵀ)/2 is
    exactly `sym`.  Shrinks towards M = sym."""
    return skew_symmetric_matrices(len(sym), max_magnitude=max_magnitude,
                                   max_denominator=max_denominator).map(lambda K: exact.add(sym, K))


def hurwitz_matrices(dim: DimArg, *, anti: bool = False, min_decay: Num = Fraction(1, 4),
                     max_decay: Num = 2, max_rotation: Num = Fraction(1, 2), max_shears: int = 2,
                     max_denominator: int = 4) -> SearchStrategy[exact.Matrix]:
    """Exact Hurwitz matrices (every eigenvalue has Re λ ≤ −min_decay < 0), or anti-Hurwitz
    (Re λ ≥ min_decay > 0) with anti=True.

    Built as A = ± T (−P + K) T⁻¹: P from `pd_matrices(dim)` with eigenvalues in [min_decay,
    max_decay], K skew-symmetric with entries ≤ max_rotation, T from `unimodular_matrices` with at
    most `max_shears` shears.  Because (−P + K) + (−P + K)ᵀ = −2P ≺ 0, X = T⁻ᵀT⁻¹ is an exact
    Lyapunov certificate: AᵀX + XA = ∓2 T⁻ᵀ P T⁻¹.  Shrinks towards the diagonal −diag(min_decay)."""

    @st.composite
    def build(draw):
        d = _dim(draw, dim)
        P = draw(pd_matrices(d, min_eigenvalue=min_decay, max_eigenvalue=max_decay, max_denominator=max_denominator))
        K = draw(skew_symmetric_matrices(d, max_magnitude=max_rotation, max_denominator=max_denominator))
        T = draw(unimodular_matrices(d, max_shears=max_shears))
        core = exact.sub(K, P)
        A = exact.matmul(exact.matmul(T, core), _inverse(T))
        return exact.scale(-1, A) if anti else A

    return build()


# -- model objects -------------------------------------------------------------

Regime = Literal["opposite", "same"]
ASpectrum = Literal["hurwitz", "anti_hurwitz", "zero"]


def params(dim: DimArg = st.integers(1, 3), *, signs: Regime | None = None, scalar_V: bool = False,
           diagonal: bool = False, A_spectrum: ASpectrum | None = None, zero_b: bool = False,
           max_magnitude: Num = 1, max_denominator: int = 4) -> SearchStrategy[Params]:
    """Exact `Params(A, B, V, b)` of dimension `dim`, restricted to a regime.

    - signs="opposite": the symmetric parts V_s = (V + Vᵀ)/2 and B_s are definite with opposite
      signs (V_s ≻ 0, B_s ≺ 0 or V_s ≺ 0, B_s ≻ 0, the sign drawn); signs="same": both ≻ 0 or both
      ≺ 0.  None: V and B arbitrary rational matrices.
    - scalar_V=True: V = vI exactly, v ≠ 0 (its sign follows `signs`; v = 0 is allowed when signs
      is None).
    - diagonal=True: A, B, V are diagonal (decoupled scalar Bernoulli equations).
    - A_spectrum: "hurwitz" (Re λ(A) < 0, see `hurwitz_matrices`), "anti_hurwitz" (Re λ(A) > 0),
      "zero" (A = 0), or None (an arbitrary rational matrix).
    - zero_b=True: b = 0.

    Definite symmetric parts (and the decay rates of a (anti-)Hurwitz A) have eigenvalues of
    absolute value in [min(1/4, max_magnitude), max_magnitude]; skew parts, b and unrestricted
    entries are bounded by max_magnitude; a non-diagonal (anti-)Hurwitz A is conjugated by at most
    two integer shears (see `hurwitz_matrices`).  Unrestricted and diagonal entries, and b, have
    denominators ≤ max_denominator; definite symmetric parts are built through exact rotations and
    shears, so their entries' denominators can be larger.  Every property above holds exactly
    (tested exactly in tests/test_strategies.py)."""
    M = _q(max_magnitude)
    if M <= 0:
        raise ValueError("max_magnitude must be positive")
    lo = min(Fraction(1, 4), M)

    @st.composite
    def build(draw):
        d = _dim(draw, dim)
        entry = rationals(-M, M, max_denominator=max_denominator)
        pos = rationals(lo, M, max_denominator=max_denominator)

        def diag(vals):
            return tuple(tuple(vals[i] if i == j else Fraction(0) for j in range(d)) for i in range(d))

        def signed_matrix(sign: int | None):
            if sign is None:
                return diag([draw(entry) for _ in range(d)]) if diagonal else draw(rational_matrices(d, max_magnitude=M, max_denominator=max_denominator))
            if diagonal:
                return diag([sign * draw(pos) for _ in range(d)])
            S = draw(definite_matrices(d, sign, min_eigenvalue=lo, max_eigenvalue=M, max_denominator=max_denominator))
            return draw(matrices_with_symmetric_part(S, max_magnitude=M, max_denominator=max_denominator))

        sV = sB = None
        if signs is not None:
            sV = draw(st.sampled_from([1, -1]))
            sB = -sV if signs == "opposite" else sV
        if scalar_V:
            v = draw(entry) if sV is None else sV * draw(pos)
            V = exact.identity(d, v)
        else:
            V = signed_matrix(sV)
        B = signed_matrix(sB)

        if A_spectrum is None:
            A = signed_matrix(None)
        elif A_spectrum == "zero":
            A = exact.zeros(d)
        elif A_spectrum in ("hurwitz", "anti_hurwitz"):
            s = -1 if A_spectrum == "hurwitz" else 1
            if diagonal:
                A = diag([s * draw(pos) for _ in range(d)])
            else:
                A = draw(hurwitz_matrices(d, anti=A_spectrum == "anti_hurwitz", min_decay=lo, max_decay=M,
                                          max_rotation=M, max_denominator=max_denominator))
        else:
            raise ValueError(f"unknown A_spectrum {A_spectrum!r}")
        b = (Fraction(0),) * d if zero_b else draw(rational_vectors(d, max_magnitude=M, max_denominator=max_denominator))
        return Params(A, B, V, b)

    if signs not in (None, "opposite", "same"):
        raise ValueError(f"signs must be 'opposite', 'same' or None, got {signs!r}")
    return build()


def gaussians(dim: DimArg = st.integers(1, 3), *, rank: DimArg | None = None, max_mean: Num = 1,
              max_denominator: int = 4, **cov_kwargs) -> SearchStrategy[Gaussian]:
    """Exact `Gaussian(mean, cov)`: mean from `rational_vectors(dim, max_magnitude=max_mean)`, cov
    from `psd_matrices(dim, rank=rank, **cov_kwargs)` (exact rank; rank=None draws 0..dim)."""

    @st.composite
    def build(draw):
        d = _dim(draw, dim)
        m = draw(rational_vectors(d, max_magnitude=max_mean, max_denominator=max_denominator))
        S = draw(psd_matrices(d, rank=rank, max_denominator=max_denominator, **cov_kwargs))
        return Gaussian(m, S)

    return build()


def control_sequences(dim: DimArg, *, segment_params: Callable[[int], SearchStrategy[Params]] | None = None,
                      min_segments: int = 1, max_segments: int = 3, max_duration: float = 0.5,
                      duration_step: float = 0.0625) -> SearchStrategy[list[Segment]]:
    """Piecewise-constant (time-varying) controls: lists of `flow.Segment(duration, params)` with
    min_segments..max_segments pieces, all of dimension `dim`.  Durations are positive multiples of
    `duration_step` (exact binary fractions by default) at most max_duration; parameters come from
    segment_params(d) (default `params(d)`).  Shrinks towards one shortest segment."""
    if not 1 <= min_segments <= max_segments:
        raise ValueError("need 1 <= min_segments <= max_segments")
    steps = int(max_duration / duration_step)
    if steps < 1:
        raise ValueError("max_duration must be at least duration_step")

    @st.composite
    def build(draw):
        d = _dim(draw, dim)
        ps = segment_params(d) if segment_params is not None else params(d)
        n = draw(st.integers(min_segments, max_segments))
        return [Segment(draw(st.integers(1, steps)) * duration_step, draw(ps)) for _ in range(n)]

    return build()


# -- weighted particle clouds ---------------------------------------------------

@dataclass(frozen=True)
class WeightedCloud:
    """N weighted particles: points (N, d) float64, exact normalised weights, their exact ESS."""

    points: np.ndarray
    weights: tuple[Fraction, ...]
    ess: Fraction

    @property
    def float_weights(self) -> np.ndarray:
        """The weights as float64, for the numerical simulators (the exact ones stay in `weights`)."""
        return np.array([float(w) for w in self.weights])


def effective_sample_size(weights: Sequence[Fraction]) -> Fraction:
    """Kish's ESS (Σw)² / Σw², exactly."""
    s1 = sum(weights, Fraction(0))
    s2 = sum((w * w for w in weights), Fraction(0))
    return s1 * s1 / s2


def _two_level_ess(k: int, n: int, t: Fraction) -> Fraction:
    m = n - k
    return (k + m * t) ** 2 / (k + m * t * t)


def particle_clouds(n: DimArg, dim: DimArg, *, min_ess: Num = 1, max_ess: Num | None = None,
                    max_abs: float = 3.0) -> SearchStrategy[WeightedCloud]:
    """Weighted clouds of n particles in ℝ^dim whose effective sample size lies exactly in
    [min_ess, max_ess] (default max_ess = n).

    The weights are exact rationals summing to 1: k particles (k drawn in 1..⌊max_ess⌋) carry
    weight ∝ 1 and the others weight ∝ t ∈ [0, 1], t a dyadic rational chosen by exact bisection so
    that ESS = (k + (n−k)t)² / (k + (n−k)t²) (increasing in t, from k to n) falls in the range; the
    weights are then permuted.  When min_ess = max_ess it must be an integer (t = 0, k = ESS).  The
    points are float64 in [−max_abs, max_abs]^dim.  Shrinks towards k = 1-ish clouds at the origin."""

    @st.composite
    def build(draw):
        N = _dim(draw, n)
        d = _dim(draw, dim)
        lo_ess = _q(min_ess)
        hi_ess = _q(N if max_ess is None else max_ess)
        if not 1 <= lo_ess <= hi_ess <= N:
            raise ValueError(f"need 1 <= min_ess <= max_ess <= n, got {lo_ess}, {hi_ess}, n = {N}")
        k_hi = int(hi_ess)  # floor
        k_lo = 1 if lo_ess < hi_ess else k_hi
        if lo_ess == hi_ess and lo_ess.denominator != 1:
            raise ValueError("an exactly prescribed ESS (min_ess == max_ess) must be an integer")
        k = draw(st.integers(k_lo, k_hi))
        lo, hi = max(lo_ess, Fraction(k)), hi_ess
        if lo == hi:
            t = Fraction(0) if lo == k else Fraction(1)
        else:
            u = draw(st.integers(0, 8))
            target = lo + (hi - lo) * (1 + Fraction(u, 4)) / 4    # in [lo + w/4, hi - w/4]
            window = (hi - lo) / 8
            a, b = Fraction(0), Fraction(1)
            t = None
            for _ in range(200):
                mid = (a + b) / 2
                e = _two_level_ess(k, N, mid)
                if abs(e - target) <= window:
                    t = mid
                    break
                a, b = (mid, b) if e < target else (a, mid)
            assert t is not None, "bisection on a continuous increasing function cannot fail"
        raw = [Fraction(1)] * k + [t] * (N - k)
        order = draw(st.permutations(range(N)))
        total = sum(raw, Fraction(0))
        w = tuple(raw[order[i]] / total for i in range(N))
        pts = draw(hnp.arrays(np.float64, (N, d), elements=st.floats(-max_abs, max_abs, allow_nan=False,
                                                                   allow_subnormal=False, width=64)))
        return WeightedCloud(pts, w, effective_sample_size(w))

    return build()


# -- general instances (issue 13's distribution) ------------------------------

GENERAL_DENOMINATORS = (2, 3, 4)
GENERAL_MAX_K = 6
GENERAL_SIGMA_SHIFT = Fraction(1, 4)


def _general_entry(k: int, den: int) -> Fraction:
    return Fraction(k, den)


def _general_build(d: int, ks: Sequence[int], dens: Sequence[int], shift: Fraction) -> tuple[Params, Gaussian]:
    it = iter(zip(ks, dens))
    mats = [tuple(tuple(_general_entry(*next(it)) for _ in range(d)) for _ in range(d)) for _ in range(4)]
    A, B, V, G = mats
    S0 = exact.add(exact.matmul(G, exact.transpose(G)), exact.identity(d, shift))
    return Params(A, B, V, (Fraction(0),) * d), Gaussian((Fraction(0),) * d, S0)


def general_instances(d: DimArg, *, max_k: int = GENERAL_MAX_K, denominators: Sequence[int] = GENERAL_DENOMINATORS,
                      shift: Num = GENERAL_SIGMA_SHIFT) -> SearchStrategy[tuple[Params, Gaussian]]:
    """General (non-scalar, non-diagonal) rational instances `(Params, Gaussian)` of dimension d.

    Distribution: every entry of A, B, V and of an auxiliary G (all d×d) is k/q with an integer
    k ∈ [−max_k, max_k] and q drawn from `denominators` (default k/2, k/3, k/4 with |k| ≤ 6: the
    distribution of issue 13); b = 0, the mean m0 = 0, and Σ0 = G Gᵀ + shift·I.

    Guaranteed exactly, by construction: Σ0 is symmetric positive definite (G Gᵀ ⪰ 0 and
    shift > 0), every entry is an exact `Fraction`.  Nothing is guaranteed about the regime: about
    a third of the d = 2 draws converge (to a positive-definite or singular equilibrium, or to 0),
    most of the others blow up.

    Seed behaviour: a hypothesis strategy, so the draws follow hypothesis's seed (fixed under the
    `ci` profile, which derandomizes); it shrinks towards k = 0 and q = the first denominator.
    For a reproducible sample outside hypothesis use `general_instance(d, seed, index)`.
    """
    shift = _q(shift)
    if not shift > 0 or max_k < 0 or not denominators or any(int(q) < 1 for q in denominators):
        raise ValueError("need shift > 0, max_k >= 0 and positive denominators")

    @st.composite
    def build(draw):
        dd = _dim(draw, d)
        m = 4 * dd * dd
        ks = draw(st.lists(st.integers(-max_k, max_k), min_size=m, max_size=m))
        qs = draw(st.lists(st.sampled_from(tuple(int(q) for q in denominators)), min_size=m, max_size=m))
        return _general_build(dd, ks, qs, shift)

    return build()


def general_instance(d: int, seed: int, index: int = 0, *, max_k: int = GENERAL_MAX_K,
                     denominators: Sequence[int] = GENERAL_DENOMINATORS,
                     shift: Num = GENERAL_SIGMA_SHIFT) -> tuple[Params, Gaussian]:
    """The `index`-th instance of the `general_instances` distribution for `seed`, deterministic:
    the same (d, seed, index) always gives the same instance (numpy's default_rng seeded with
    (seed, d, index)); Σ0 positive definite exactly.  For benchmarks and reproducible reports."""
    rng = np.random.default_rng([int(seed), int(d), int(index)])
    m = 4 * d * d
    ks = [int(k) for k in rng.integers(-max_k, max_k + 1, size=m)]
    qs = [int(denominators[int(i)]) for i in rng.integers(0, len(denominators), size=m)]
    return _general_build(d, ks, qs, _q(shift))


def _opposite(p: Params) -> Params:
    d = p.dim

    def skew(M):
        return tuple(tuple((M[a][b] - M[b][a]) / 2 for b in range(d)) for a in range(d))

    def gram(M):
        return exact.add(tuple(tuple(x / d for x in r) for r in exact.matmul(M, exact.transpose(M))),
                         exact.identity(d, Fraction(1, 4)))

    return Params(p.A, exact.add(skew(p.B), gram(p.B)), exact.sub(skew(p.V), gram(p.V)), p.b)


def opposite_instances(d: DimArg, **kw) -> SearchStrategy[tuple[Params, Gaussian]]:
    """`general_instances(d, **kw)` moved into the seed theorem's opposite-sign class: V, B become
    V' = skew(V) − (VVᵀ/d + I/4) and B' = skew(B) + (BBᵀ/d + I/4), skew(M) = (M − Mᵀ)/2.

    Guaranteed exactly: V'_s ≺ 0 ≺ B'_s (symmetric parts definite with opposite signs), Σ0 ≻ 0,
    exact `Fraction` entries; V', B' are neither scalar nor diagonal in general.  Most draws
    converge (to an equilibrium or to 0), unlike `general_instances` at d ≥ 3, so this family
    measures how often a converging general instance is certified.  Seeds as `general_instances`;
    `opposite_instance(d, seed, index)` is the reproducible twin."""
    return general_instances(d, **kw).map(lambda inst: (_opposite(inst[0]), inst[1]))


def opposite_instance(d: int, seed: int, index: int = 0, **kw) -> tuple[Params, Gaussian]:
    """`general_instance(d, seed, index)` moved into the opposite-sign class as in `opposite_instances`
    (deterministic in (d, seed, index))."""
    p, s = general_instance(d, seed, index, **kw)
    return _opposite(p), s


REFERENCE_BLOWUP_ENTRY = 1e8
"""`reference_fate` calls a trajectory a blow-up once an entry of Σ passes this (see its docstring)."""


def _moment_field(A, B, V):
    """The moment field on row-major vec(Σ) ∈ ℝ^{d²}, f(Σ) = Y + Yᵀ with Y = (A + VΣB)Σ, and its exact
    Jacobian.  With vec(XHY) = (X ⊗ Yᵀ)vec(H) (row-major), dY[H] = AH + VHBΣ + VΣBH gives
    M = A ⊗ I + V ⊗ (BΣ)ᵀ + VΣB ⊗ I, and the transpose adds P·M, P the permutation vec(H) ↦ vec(Hᵀ).
    Written here, not taken from certify/, so that the reference stays independent of the producers."""
    d = A.shape[0]
    I = np.eye(d)
    P = np.zeros((d * d, d * d))
    for i in range(d):
        for j in range(d):
            P[i * d + j, j * d + i] = 1.0
    KA = np.kron(A, I)

    def f(_, y):
        X = y.reshape(d, d)
        Y = (A + V @ X @ B) @ X
        return (Y + Y.T).ravel()

    def jac(_, y):
        X = y.reshape(d, d)
        M = KA + np.kron(V, (B @ X).T) + np.kron(V @ X @ B, I)
        return M + P @ M

    return f, jac


def _symmetric_jacobian(jac, S) -> np.ndarray:
    """DF(Σ) restricted to the symmetric matrices, in an orthonormal basis for the Frobenius inner
    product (E_ii and (E_ij + E_ji)/√2), so that its 2-norms are Frobenius-norm statements."""
    d = S.shape[0]
    cols = []
    for i in range(d):
        for j in range(i, d):
            E = np.zeros((d, d))
            E[i, j] = E[j, i] = 1.0 if i == j else math.sqrt(0.5)
            cols.append(E.ravel())
    E = np.array(cols).T
    return E.T @ jac(0.0, S.ravel()) @ E


def _fate_run(A, B, V, S0, T, rtol, wall, max_steps, stiff=False):
    import time

    from scipy.integrate import DOP853, Radau

    d = S0.shape[0]
    f, jac = _moment_field(A, B, V)
    if stiff:
        # atol far below every entry the verdicts read (1e-8 for a collapse), so that an algebraic
        # decay Σ ~ 1/t is still followed in relative terms at t = 1e10, where it is ~1e-9
        r = Radau(f, 0.0, S0.ravel(), T, rtol=rtol, atol=rtol * 1e-8, jac=jac)
    else:
        r = DOP853(f, 0.0, S0.ravel(), T, rtol=rtol, atol=rtol * 1e-2)
    t0, k = time.perf_counter(), 0
    with np.errstate(all="ignore"):
        while r.status == "running":
            r.step()
            k += 1
            if not np.all(np.isfinite(r.y)) or float(np.max(np.abs(r.y))) > REFERENCE_BLOWUP_ENTRY:
                return "blowup", float(r.t), None, f, jac
            if time.perf_counter() - t0 > wall or k > max_steps:
                return "timeout", float(r.t), None, f, jac
    if r.status == "failed":
        return "blowup", float(r.t), None, f, jac
    return "end", float(r.t), r.y.reshape(d, d), f, jac


def _compactified_field(A, B, V):
    """The Poincaré-compactified moment flow on z = (vec S, u, t): Σ = S e^{−u}, ‖S‖_F = 1, w = e^u,
    dt = w ds (MATH.md §15, written with u = ln w so that w can fall below any float):
    S′ = Q(S) − ⟨S, Q(S)⟩S + w(L(S) − ⟨S, L(S)⟩S), u′ = −(⟨S, Q(S)⟩ + w⟨S, L(S)⟩), t′ = w."""
    d = A.shape[0]

    def f(_, z):
        S = z[:d * d].reshape(d, d)
        # u past the float range (Σ shrinking to 0): inf, which the callers read as a non-finite state
        # (math.exp raised OverflowError out of the integration instead)
        w = math.exp(z[d * d]) if z[d * d] < 709.0 else math.inf
        Y = V @ S @ B @ S
        Q = Y + Y.T
        L = A @ S + S @ A.T
        q, l = float(np.sum(S * Q)), float(np.sum(S * L))
        return np.concatenate([(Q - q * S + w * (L - l * S)).ravel(), [-(q + w * l), w]])

    return f


BLOWUP_DECADES = (1e8, 1e9, 1e10)
"""‖Σ‖_F levels at which `reference_blowup` reads the time; the ratio compares the last decade with the first."""
TAIL_DECADES = (1e11, 1e12)
"""Further levels, read only for `reference_blowup`'s T* interval: its geometric tail must show in three
consecutive decade ratios, not one."""
GEOMETRIC_SPREAD = 1.1
"""The largest max/min of those three ratios for which `reference_blowup` gives a T* interval.  Measured at
rtol 1e-10 on decades 1e6..1e15: the draws with an equilibrium at infinity settle to 0.1 (general_instance(4,
0, 6): 0.0956, 0.0995, 0.1001, then 0.1000 ± 1e-4; (4, 0, 1), (3, 0, 0), (2, 0, 9): 0.1000 ± 1e-4 from 1e6
on); the turning draws swing (4, 0, 15): 0.084, 0.166, 0.050, 0.263, 0.046, 0.166, 0.073, 0.082; (3, 0, 4) up
to 1.11; (4, 0, 7) 0.026 to 0.278), so the single-ratio tail had put T* of (4, 0, 15) 5e-11 below the truth."""


def _decade_times(A, B, V, S0, rtol, wall, max_steps):
    import time

    from scipy.integrate import DOP853

    d = S0.shape[0]
    n0 = float(np.linalg.norm(S0))
    f = _compactified_field(A, B, V)
    r = DOP853(f, 0.0, np.concatenate([(S0 / n0).ravel(), [-math.log(n0), 0.0]]), math.inf,
               rtol=rtol, atol=rtol * 1e-3)
    levels = [-math.log(x) for x in BLOWUP_DECADES + TAIL_DECADES]
    times, t0, k = [], time.perf_counter(), 0
    with np.errstate(all="ignore"):
        while len(times) < len(levels) and r.status == "running":
            r.step()
            k += 1
            if not np.all(np.isfinite(r.y)) or k > max_steps or time.perf_counter() - t0 > wall:
                # the verdict needs the first three levels only; the T* interval all of them
                return times if len(times) >= len(BLOWUP_DECADES) else None
            while len(times) < len(levels) and r.y[d * d] < levels[len(times)]:
                # u = ln w decreases through a level inside the step: bisect the dense output
                sol, a, b = r.dense_output(), r.t_old, r.t
                for _ in range(60):
                    c = (a + b) / 2
                    a, b = (a, c) if sol(c)[d * d] < levels[len(times)] else (c, b)
                times.append(float(sol(b)[-1]))
    return times if len(times) >= len(BLOWUP_DECADES) else None


def reference_blowup(params: Params, state: Gaussian, *, max_steps: int = 100000, wall: float = 300.0) -> dict:
    """Finite-time blow-up or fast growth in infinite time?  Independent float evidence, by the time
    Σ(t) takes per decade of ‖Σ‖_F (for tests and benchmarks only; it proves nothing).

    Method: DOP853 on the Poincaré-compactified flow (`_compactified_field`, own code: Σ = S/w,
    ‖S‖_F = 1, dt = w ds) from Σ0, at rtol 1e-10 and again at 1e-8, reading t₈, t₉, t₁₀ where
    ‖Σ‖_F passes 1e8, 1e9, 1e10; `ratio` = (t₁₀ − t₉)/(t₉ − t₈).

    Criterion and why: a blow-up at an equilibrium at infinity has ‖Σ‖_F(T* − t) → C > 0 (MATH.md
    §15; d = 1: C = 1/(2|vβ|)), so each decade takes a tenth of the time of the one before: ratio →
    0.1; more generally ‖Σ‖ ~ (T* − t)^{−p} gives 10^{−1/p}.  Growth in infinite time at a bounded
    exponential rate μ (‖Σ‖ ~ e^{μt}; e.g. B = 0 and A unstable, or a trajectory that creeps along
    the cone {uᵀBu = 0} at infinity, where the rate g of MATH §15 falls like 1/s) takes the same
    time ln(10)/μ per decade: ratio → 1 (≥ 1 for slower growth).  So `blowup` is True when the ratio
    is at most 10^{−1/2} (a blow-up with p ≤ 2), False when it is at least 10^{−1/8} (fast growth
    that is not a blow-up of order p < 8), and None otherwise, when the two tolerances disagree,
    when the flow does not reach 1e10 within `max_steps` steps (the budget: deterministic, unlike
    the `wall` seconds that only guard against a runaway), or when it never passes 1e8 (then
    nothing is claimed: a trajectory that stays bounded is not this function's business).  Transients
    (a direction still settling when ‖Σ‖ = 1e8) can push a ratio into the band: None, not a guess.

    T* itself (`t_star`, when blowup is True): the decades go on to 1e11 and 1e12 (`TAIL_DECADES`), and
    when the three ratios r₁₀, r₁₁, r₁₂ (each decade's time over the one before) agree within
    `GEOMETRIC_SPREAD` (a settled geometric tail, as at an equilibrium at infinity), T* − t₁₂ is at most
    (t₁₂ − t₁₁)·r/(1 − r) with r the largest of them, if the later decades keep shrinking by r ≤ 10^{−1/2}:
    [t₁₂, t₁₂ + (t₁₂ − t₁₁)r/(1 − r)], widened on both sides by the integration's error estimate e =
    max_k |t_k(1e-10) − t_k(1e-8)| (the looser run's difference: conservative for the tighter one).  A
    direction that keeps turning at infinity (MATH.md §15) makes the ratios swing with its phase: then no
    interval (None), since one ratio says nothing of the next.

    Returns {"blowup": True | False | None, "times": [t₈, t₉, t₁₀] | None, "ratio": float | None,
    "ratio_error": |ratio(1e-10) − ratio(1e-8)| | None, "t_star": (lower, upper) | None}."""
    A, B, V, _ = float_view(params)
    S0 = np.array(state.cov, dtype=float)
    runs = [_decade_times(A, B, V, S0, rtol, wall, max_steps) for rtol in (1e-10, 1e-8)]
    if runs[0] is None:
        return {"blowup": None, "times": None, "ratio": None, "ratio_error": None, "t_star": None}

    def ratio(ts, k=0):
        return (ts[k + 2] - ts[k + 1]) / (ts[k + 1] - ts[k]) if ts[k + 1] > ts[k] else math.inf

    rat = ratio(runs[0])
    err = abs(rat - ratio(runs[1])) if runs[1] is not None else math.inf

    def side(x):
        return True if x <= 10 ** -0.5 else False if x >= 10 ** -0.125 else None

    verdict = side(rat) if side(rat - err) == side(rat + err) else None
    t_star = None
    n = len(BLOWUP_DECADES) + len(TAIL_DECADES)
    if verdict and runs[1] is not None and len(runs[0]) == len(runs[1]) == n:
        rs = [ratio(runs[0], k) for k in range(n - 2)]
        r = max(rs)
        if 0 < min(rs) and r <= GEOMETRIC_SPREAD * min(rs) and side(r):
            e = max(abs(a - b) for a, b in zip(*runs))
            t11, t12 = runs[0][-2:]
            t_star = (t12 - e, t12 + (t12 - t11) * r / (1 - r) + e)
    return {"blowup": verdict, "times": runs[0][:len(BLOWUP_DECADES)], "ratio": rat, "ratio_error": err,
            "t_star": t_star}


def reference_fate(params: Params, state: Gaussian, *, horizon: float = 200.0, wall: float = 10.0,
                   max_steps: int = 200000, stiff: bool = False) -> dict:
    """The independent float fate of Σ(t) (numerical evidence, for tests and benchmarks only).

    Default: scipy's DOP853 on Σ̇ = AΣ + ΣAᵀ + VΣBΣ + ΣBᵀΣVᵀ at rtol 1e-12 (atol 1e-14) and again at
    rtol 1e-10.  `stiff=True`: scipy's Radau (implicit, order 5) with the exact Jacobian of the field,
    at rtol 1e-10 and again at 1e-8 (atol rtol·1e-8): for long horizons (1e10) and trajectories with a
    fast converging component next to a slow, algebraic one (Σ_ii ~ 1/t), where an explicit method's
    step stays bounded by the fast rate and it cannot reach the horizon.  The step sizes of the
    implicit method grow with t along an algebraic approach, so t = 1e10 takes a few hundred steps.

    `fate` is "blowup" (an entry beyond `REFERENCE_BLOWUP_ENTRY` = 1e8, at `t`, and
    `reference_blowup` reads a finite-time blow-up from the time per decade of ‖Σ‖), "growth" (an
    entry beyond 1e8 at `t`, but growth in infinite time by `reference_blowup`), "collapse"
    (‖Σ(horizon)‖_F < 1e-8), "equilibrium" (‖F(Σ(horizon))‖_F < 1e-8·max(1, ‖Σ‖)), "other", or
    "timeout" (more than `wall` seconds or `max_steps` steps: typically a stiff blow-up, or a stiff
    long run without `stiff`; or an entry beyond 1e8 that `reference_blowup` cannot classify).  `limit` is
    Σ(horizon) of the tighter run and `error` an estimate of its distance to the limit: the difference
    of the two runs plus ‖F(Σ)‖_F·‖DF(Σ)⁻¹‖₂ (the distance still to go to the equilibrium, to first
    order; DF on the symmetric matrices with the Frobenius norm).  Nothing here calls certify/."""
    A, B, V, _ = float_view(params)
    S0 = np.array(state.cov, dtype=float)
    tight, loose = (1e-10, 1e-8) if stiff else (1e-12, 1e-10)
    fate, t, S, f, jac = _fate_run(A, B, V, S0, horizon, tight, wall, max_steps, stiff)
    if fate == "blowup":
        # a large entry is not yet a blow-up: fast growth in infinite time passes 1e8 as well
        verdict = reference_blowup(params, state)["blowup"]
        if verdict is not True:
            fate = "growth" if verdict is False else "timeout"
    if fate != "end":
        return {"fate": fate, "t": t, "limit": None, "error": None}
    nS = float(np.linalg.norm(S))
    res = float(np.linalg.norm(f(0, S.ravel())))
    if nS < 1e-8:
        fate = "collapse"
    elif res < 1e-8 * max(1.0, nS):
        fate = "equilibrium"
    else:
        return {"fate": "other", "t": t, "limit": S, "error": None}
    _, _, S2, _, _ = _fate_run(A, B, V, S0, horizon, loose, wall, max_steps, stiff)
    err = float(np.linalg.norm(S2 - S)) if S2 is not None else math.inf
    with np.errstate(all="ignore"):
        try:
            inv = float(np.linalg.norm(np.linalg.inv(_symmetric_jacobian(jac, S)), 2))
        except np.linalg.LinAlgError:
            inv = math.inf
    return {"fate": fate, "t": t, "limit": S, "error": err + (res * inv if res > 0 else 0.0)}

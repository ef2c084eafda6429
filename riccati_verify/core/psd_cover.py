"""The region and root box of the `all_equilibria` box cover (trusted core, exact rationals).

The region is {Σ ⪰ 0 : max_i Σ_ii ≤ R}; it contains every PSD Σ with ‖Σ‖₂ ≤ R, and a PSD Σ
in it has |Σ_ij| ≤ √(Σ_iiΣ_jj) ≤ R.  The root box on the upper-triangle coordinates is
Σ_ii ∈ [−R/3, 4R/3], Σ_ij ∈ [−8R/7, 6R/5] (i < j): it contains the region, and its odd end
points keep 0 and the dyadic fractions of R (where simple equilibria such as Σ = 0 sit) off
every bisection plane.  The producer (`certify.equilibria_all`) and the checker
(`checker.check_all_equilibria`) share this one definition of what is covered.
"""

from __future__ import annotations

from fractions import Fraction

from riccati_verify.core.exact import sym_pairs

__all__ = ["diagonal_within", "outside_region", "root_box"]


def root_box(R: Fraction, d: int) -> tuple[list[Fraction], list[Fraction]]:
    """(lower, upper) end points of the root box on the upper-triangle coordinates."""
    lo, hi = [], []
    for i, j in sym_pairs(d):
        lo.append(-R / 3 if i == j else -R * Fraction(8, 7))
        hi.append(R * Fraction(4, 3) if i == j else R * Fraction(6, 5))
    return lo, hi


def outside_region(lo, hi, R: Fraction, d: int) -> bool:
    """The box [lo, hi] meets no PSD Σ with max Σ_ii ≤ R, decided exactly: a diagonal interval
    outside [0, R], an off-diagonal one outside [−R, R], or a 2×2 principal minor
    Σ_iiΣ_jj − Σ_ij² negative on the whole box."""
    idx = sym_pairs(d)
    pos = {p: k for k, p in enumerate(idx)}
    for k, (i, j) in enumerate(idx):
        if (hi[k] < 0 or lo[k] > R) if i == j else (hi[k] < -R or lo[k] > R):
            return True
    for k, (i, j) in enumerate(idx):
        if i != j:
            m = Fraction(0) if lo[k] <= 0 <= hi[k] else min(abs(lo[k]), abs(hi[k]))
            if max(hi[pos[(i, i)]], 0) * max(hi[pos[(j, j)]], 0) < m * m:
                return True
    return False


def diagonal_within(hi, R: Fraction, d: int) -> bool:
    """Every diagonal upper end of the box is ≤ R: every matrix of the box has max Σ_ii ≤ R, so a zero
    of F in it, if PSD, is one of the region's (a listed pd or psd ball must pass this to be counted)."""
    return all(h <= R for (i, j), h in zip(sym_pairs(d), hi) if i == j)

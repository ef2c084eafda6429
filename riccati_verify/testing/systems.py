"""Seeded example systems for tests and benchmarks (exact rationals, reproducible from the seed)."""

from __future__ import annotations

import random
from fractions import Fraction as F

from riccati_verify.core import exact

__all__ = ["rotating_drift"]


def rotating_drift(d: int, diagonal: F, seed: int = 1) -> tuple[exact.Matrix, exact.Matrix, exact.Matrix, exact.Vector]:
    """(A, B, V, b) with A = diagonal·I + a skew part (entries k/8, |k| ≤ 4) and small B, V (entries
    k/20, |k| ≤ 2) and b (entries k/4): for diagonal < 0 the flow contracts (A's symmetric part is
    diagonal·I), for diagonal > 0 it expands slowly.  Drawn with `random.Random(seed)`."""
    rng = random.Random(seed)
    A = [[F(0)] * d for _ in range(d)]
    for i in range(d):
        A[i][i] = F(diagonal)
        for j in range(i + 1, d):
            w = F(rng.randint(-4, 4), 8)
            A[i][j], A[j][i] = w, -w
    mat = lambda: tuple(tuple(F(rng.randint(-2, 2), 20) for _ in range(d)) for _ in range(d))
    B, V = mat(), mat()
    b = tuple(F(rng.randint(-2, 2), 4) for _ in range(d))
    return tuple(map(tuple, A)), B, V, b

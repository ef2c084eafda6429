"""The exact sympy view of the model types (core holds Fractions only)."""

from __future__ import annotations

import sympy as sp

from riccati_verify.core.model import Params

__all__ = ["sympy_view"]


def _rational_matrix(M) -> sp.Matrix:
    return sp.Matrix([[sp.Rational(x.numerator, x.denominator) for x in r] for r in M])


def sympy_view(params: Params) -> tuple[sp.Matrix, sp.Matrix, sp.Matrix, sp.Matrix]:
    """(A, B, V, b) as sympy matrices of exact Rationals (b as a column)."""
    return (_rational_matrix(params.A), _rational_matrix(params.B), _rational_matrix(params.V),
            _rational_matrix(tuple((x,) for x in params.b)))

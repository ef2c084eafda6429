"""The model: parameters θ = (A, B, V, b) and Gaussian states N(m, Σ).

Values are stored exactly, as `fractions.Fraction`.  A JSON float is stored as
the exact binary rational it denotes, so every certified statement refers to
the very numbers the user gave; `exact_input` records whether the file used
only exact notations (integers and rational/decimal strings).

Kernel convention (MATH.md §1): the attention kernel is exp(⟨Bx, y⟩) with the
query x, i.e. B = KᵀQ for a Transformer with ⟨Qx, Ky⟩.  `Params.transposed_kernel`
converts from the other convention exp(⟨x, By⟩).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property

import numpy as np
import sympy as sp

from . import exact
from .errors import InputError

MAX_DIM = 64
"""Largest dimension d accepted from a file (bounded: files are untrusted)."""


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


def _square(name: str, M: exact.Matrix, d: int) -> None:
    if len(M) != d or any(len(r) != d for r in M):
        raise InputError(f"'{name}' must be a {d}x{d} matrix, got shape {_shape(M)}")


def _shape(M) -> str:
    rows = len(M)
    cols = sorted({len(r) for r in M})
    return f"{rows}x{cols[0]}" if len(cols) == 1 else f"{rows} rows of lengths {cols}"


@dataclass(frozen=True)
class Params:
    """Controls θ = (A, B, V, b) of the velocity v(x) = Ax + b + V·Attn_B[μ](x)."""

    A: exact.Matrix
    B: exact.Matrix
    V: exact.Matrix
    b: exact.Vector
    exact_input: bool = field(default=True, compare=False)

    def __post_init__(self):
        d = len(self.A)
        if not 1 <= d <= MAX_DIM:
            raise InputError(f"dimension d = {d} is outside 1..{MAX_DIM}")
        for name in ("A", "B", "V"):
            _square(name, getattr(self, name), d)
        if len(self.b) != d:
            raise InputError(f"'b' must have length {d}, got {len(self.b)}")

    @classmethod
    def from_arrays(cls, A, B, V, b=None) -> "Params":
        """Build from numbers or nested lists (floats are taken exactly); V may be a scalar."""
        A_ = exact.as_matrix(np.asarray(A, dtype=object).tolist() if not isinstance(A, tuple) else A)
        d = len(A_)
        if np.ndim(V) == 0:
            V_ = exact.identity(d, Fraction(V))
        else:
            V_ = exact.as_matrix(np.asarray(V, dtype=object).tolist())
        B_ = exact.as_matrix(np.asarray(B, dtype=object).tolist())
        b_ = exact.as_vector([0] * d if b is None else np.asarray(b, dtype=object).tolist())
        return cls(A_, B_, V_, b_, exact_input=not _any_float(A, B, V, b))

    @property
    def dim(self) -> int:
        return len(self.A)

    @cached_property
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Float view (A, B, V, b) as read-only numpy arrays."""
        return tuple(_frozen(np.array(x, dtype=float)) for x in (self.A, self.B, self.V, self.b))

    def sympy(self) -> tuple[sp.Matrix, sp.Matrix, sp.Matrix, sp.Matrix]:
        """Exact view (A, B, V, b) as sympy matrices of Rationals."""
        to = lambda M: sp.Matrix([[sp.Rational(x.numerator, x.denominator) for x in r] for r in M])
        return to(self.A), to(self.B), to(self.V), to(tuple((x,) for x in self.b))

    @property
    def V_scalar(self) -> Fraction | None:
        """v if V = vI exactly, else None."""
        v = self.V[0][0]
        return v if self.V == exact.identity(self.dim, v) else None

    def transposed_kernel(self) -> "Params":
        """The same model under the other kernel convention exp(⟨x, By⟩)."""
        return Params(self.A, exact.transpose(self.B), self.V, self.b, self.exact_input)


@dataclass(frozen=True)
class Gaussian:
    """A Gaussian state N(mean, cov); cov is symmetric PSD, checked exactly."""

    mean: exact.Vector
    cov: exact.Matrix
    exact_input: bool = field(default=True, compare=False)

    def __post_init__(self):
        d = len(self.mean)
        if not 1 <= d <= MAX_DIM:
            raise InputError(f"dimension d = {d} is outside 1..{MAX_DIM}")
        _square("cov", self.cov, d)
        if not exact.is_symmetric(self.cov):
            i, j = next((i, j) for i in range(d) for j in range(i) if self.cov[i][j] != self.cov[j][i])
            raise InputError(f"'cov' is not symmetric: entry ({i},{j}) differs from ({j},{i})")
        if not exact.is_psd(self.cov):
            raise InputError("'cov' is not positive semidefinite (exact LDL^T test found a negative pivot)")

    @classmethod
    def from_arrays(cls, mean, cov) -> "Gaussian":
        m = exact.as_vector(np.asarray(mean, dtype=object).tolist())
        S = exact.as_matrix(np.asarray(cov, dtype=object).tolist())
        return cls(m, S, exact_input=not _any_float(mean, cov))

    @property
    def dim(self) -> int:
        return len(self.mean)

    @cached_property
    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return _frozen(np.array(self.mean, dtype=float)), _frozen(np.array(self.cov, dtype=float))

    @cached_property
    def rank(self) -> int:
        """Exact rank of the covariance."""
        return exact.rank(self.cov)


def _any_float(*xs) -> bool:
    for x in xs:
        if x is None:
            continue
        for v in np.asarray(x, dtype=object).ravel():
            if isinstance(v, (float, np.floating)):
                return True
    return False

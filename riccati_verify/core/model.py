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

from riccati_verify.core import exact
from riccati_verify.core.errors import InputError

MAX_DIM = 64
"""Largest dimension d accepted from a file (bounded: files are untrusted)."""


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
        """Build from numbers, nested lists or arrays (floats are taken exactly); V may be a scalar.

        Arrays are read through their ``tolist()``, so this needs no numpy.
        """
        A_ = exact.as_matrix(_plain(A))
        d = len(A_)
        V = _plain(V)
        V_ = exact.identity(d, Fraction(V)) if not isinstance(V, (list, tuple)) else exact.as_matrix(V)
        B_ = exact.as_matrix(_plain(B))
        b_ = exact.as_vector([0] * d if b is None else _plain(b))
        return cls(A_, B_, V_, b_, exact_input=not _any_float(A, B, V, b))

    @property
    def dim(self) -> int:
        return len(self.A)

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
        """Build from nested lists or arrays (floats are taken exactly)."""
        m = exact.as_vector(_plain(mean))
        S = exact.as_matrix(_plain(cov))
        return cls(m, S, exact_input=not _any_float(mean, cov))

    @property
    def dim(self) -> int:
        return len(self.mean)

    @cached_property
    def rank(self) -> int:
        """Exact rank of the covariance."""
        return exact.rank(self.cov)


def _plain(x):
    """Nested lists/tuples/numbers from anything array-like (numpy arrays and scalars have tolist)."""
    return x.tolist() if hasattr(x, "tolist") else x


def _any_float(*xs) -> bool:
    """Does any entry hold a binary float (so the input is not exact)?"""
    stack = [_plain(x) for x in xs if x is not None]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(_plain(u) for u in v)
        elif isinstance(v, float):
            return True
    return False

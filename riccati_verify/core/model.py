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

__all__ = ["MAX_DIM", "Gaussian", "Params"]

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
    """Controls θ = (A, B, V, b) of the velocity v(x) = Ax + b + V·Attn_B[μ](x).

    Attn_B[μ](x) = ∫ y exp(⟨Bx, y⟩) μ(dy) / ∫ exp(⟨Bx, y⟩) μ(dy): the kernel is
    exp(⟨Bx, y⟩) with the query x, so a Transformer head with scores ⟨Qx, Ky⟩
    has B = KᵀQ, and the softmax runs over all tokens, the query's own included.

    Parameters
    ----------
    A, B, V : list of list of Fraction
        d × d matrices, 1 ≤ d ≤ `MAX_DIM`: the linear part, the attention
        bilinear form and the value matrix.
    b : list of Fraction
        The constant drift, length d.
    exact_input : bool, optional
        Whether the source used only exact notations (integers, rational or
        decimal strings).  False when any entry was a binary float; the value
        is then the float's exact binary rational.  Not part of equality.

    Raises
    ------
    InputError
        On a dimension outside 1..MAX_DIM or mismatched shapes.

    Notes
    -----
    Entries are `fractions.Fraction`, so every certificate refers to exactly
    the numbers given; the float and sympy views live in the producer layers
    (`numeric.views.float_view`, `symbolic.views.sympy_view`).  Use
    `from_arrays` to build from numbers or arrays, and `transposed_kernel` for
    a model written in the other convention exp(⟨x, By⟩).
    """

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
        """The dimension d of the token space."""
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
    """A Gaussian token law N(mean, cov), the state of the moment flow.

    Under v(x) = Ax + b + V·Attn_B[μ](x), with the kernel exp(⟨Bx, y⟩) (query x;
    B = KᵀQ for scores ⟨Qx, Ky⟩; softmax over all tokens), N(m, Σ) stays
    Gaussian: ṁ = (A + V)m + VΣBm + b and Σ̇ = JΣ + ΣJᵀ with J = A + VΣB.

    Parameters
    ----------
    mean : list of Fraction
        m, length d with 1 ≤ d ≤ `MAX_DIM`.
    cov : list of list of Fraction
        Σ, d × d, symmetric positive semidefinite (a singular Σ is allowed:
        its rank is invariant under the flow).
    exact_input : bool, optional
        Whether the source used only exact notations; not part of equality.

    Raises
    ------
    InputError
        On a bad dimension or shape, or a Σ that is not symmetric or not PSD.

    Notes
    -----
    Entries are `fractions.Fraction` and symmetry and PSD are decided exactly
    (`exact.psd_scaled`: the characteristic polynomial of the denominator-cleared
    congruent integer matrix), never up to a float tolerance; the work is bounded by
    `exact.MAX_PSD_WORK`, and a covariance over it is refused (InputError).
    """

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
        try:
            psd, rank = exact.psd_scaled(self.cov)
        except ValueError as e:
            raise InputError(f"'cov' is too costly to check: {e}") from None
        if not psd:
            raise InputError("'cov' is not positive semidefinite (exact test: its characteristic "
                             "polynomial's coefficients do not alternate in sign)")
        self.__dict__["rank"] = rank  # the cached_property below, computed by the same exact test

    @classmethod
    def from_arrays(cls, mean, cov) -> "Gaussian":
        """Build from nested lists or arrays (floats are taken exactly)."""
        m = exact.as_vector(_plain(mean))
        S = exact.as_matrix(_plain(cov))
        return cls(m, S, exact_input=not _any_float(mean, cov))

    @property
    def dim(self) -> int:
        """The dimension d of the token space."""
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

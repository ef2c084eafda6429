"""A rational change of frame for the moment equation Σ̇ = F(Σ) = (A + VΣB)Σ + Σ(A + VΣB)ᵀ.

For an invertible rational T put Σ̃ = T⁻¹ΣT⁻ᵀ.  Then Σ = TΣ̃Tᵀ and

    d/dt Σ̃ = T⁻¹ Σ̇ T⁻ᵀ = T⁻¹(A + VΣB)ΣT⁻ᵀ + T⁻¹Σ(A + VΣB)ᵀT⁻ᵀ,

and T⁻¹(A + VΣB)ΣT⁻ᵀ = (T⁻¹AT + T⁻¹VT·Σ̃·TᵀBT)·Σ̃ (insert T T⁻¹ and T⁻ᵀTᵀ between the factors), so

    d/dt Σ̃ = F̃(Σ̃)  with  Ã = T⁻¹AT,  Ṽ = T⁻¹VT,  B̃ = TᵀBT,  Σ̃(0) = T⁻¹Σ0T⁻ᵀ,

the same equation with other (exact) controls.  Σ ↦ T⁻¹ΣT⁻ᵀ is a linear bijection of the symmetric
matrices, so the two solutions exist on the same interval and determine each other: a validated flow
for Σ̃ encloses Σ = TΣ̃Tᵀ.  A frame changes the work only (the ball Taylor coefficients on a box grow
with the entrywise absolute values |Ã|, |Ṽ|, |B̃|), never what is proved.

Exact rationals throughout; imports only the standard library and `core.exact`.
"""

from __future__ import annotations

from fractions import Fraction

from riccati_verify.core import exact

__all__ = ["MAX_FRAME_BITS", "frame_inverse", "moment_frame"]

MAX_FRAME_BITS = 128
"""Bits of a frame entry's numerator and denominator.  T⁻¹ and the framed controls are exact, and a
frame comes from an untrusted witness: at d = 8 the cost grows about quadratically with the entries'
bits (128 bits: 0.25 s; 2000-digit entries, within a certificate's 4000-character bound: about 170 s
before any check).  The producers' frames have denominators of at most 2^12."""


def frame_inverse(T: exact.Matrix) -> exact.Matrix:
    """T⁻¹ exactly; ValueError when T is not square or singular."""
    d = len(T)
    if any(len(r) != d for r in T):
        raise ValueError("a frame must be a square matrix")
    cols = [exact.solve(T, [Fraction(int(r == c)) for r in range(d)]) for c in range(d)]
    return exact.transpose(cols)


def moment_frame(T: exact.Matrix, A: exact.Matrix, B: exact.Matrix, V: exact.Matrix, cov: exact.Matrix):
    """(T⁻¹, T⁻¹AT, TᵀBT, T⁻¹VT, T⁻¹·cov·T⁻ᵀ), exact: the moment equation's controls and initial
    covariance in the frame T (module docstring); ValueError on a singular T or on entries longer than
    MAX_FRAME_BITS (checked first: the exact work grows with them)."""
    T = exact.as_matrix(T)
    if any(max(x.numerator.bit_length(), x.denominator.bit_length()) > MAX_FRAME_BITS for r in T for x in r):
        raise ValueError(f"frame entries must have numerators and denominators of at most {MAX_FRAME_BITS} bits")
    Ti = frame_inverse(T)
    mm, tr = exact.matmul, exact.transpose
    return (Ti, mm(mm(Ti, A), T), mm(mm(tr(T), B), T), mm(mm(Ti, V), T), mm(mm(Ti, cov), tr(Ti)))

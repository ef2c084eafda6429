"""Real eigenbases in floats: the frames the producers propose (never a proof: a frame changes the
checker's work only, and the checker maps every enclosure back exactly)."""

from __future__ import annotations

import numpy as np

__all__ = ["conjugates", "real_directions", "real_eigenbasis"]

IMAG_TOL = 1e-12
"""An eigenvalue with |Im λ| above this is one of a complex pair."""


def conjugates(w: np.ndarray, j: int) -> set[int]:
    """The indices k with w[k] the complex conjugate of w[j] (to 1e-9 relative); {j} when w[j] is real
    (a repeated real eigenvalue keeps each of its eigenvectors)."""
    if not abs(w[j].imag) > IMAG_TOL:
        return {j}
    return {k for k in range(len(w)) if abs(w[k] - w[j].conjugate()) < 1e-9 * max(1.0, abs(w[j]))}


def real_directions(w: np.ndarray, X: np.ndarray) -> list[np.ndarray]:
    """Unit real vectors from the eigenpairs (w, columns of X), in their order: a real eigenvector, or
    the real and imaginary parts of the first eigenvector of each complex pair (its conjugate skipped).
    They span the same real invariant subspaces as the eigenvectors."""
    out, done = [], set()
    for j in range(len(w)):
        if j in done:
            continue
        parts = [X[:, j].real, X[:, j].imag] if abs(w[j].imag) > IMAG_TOL else [X[:, j].real]
        out += [x / np.linalg.norm(x) for x in parts]
        done |= conjugates(w, j) | {j}
    return out


def real_eigenbasis(M: np.ndarray) -> np.ndarray:
    """M's real eigenbasis as the columns of a matrix (`real_directions` of np.linalg.eig(M)); for a
    diagonalisable M it is invertible and block-diagonalises M (2×2 blocks for complex pairs)."""
    w, X = np.linalg.eig(M)
    return np.column_stack(real_directions(w, X))

"""`numeric.eigen`: the real eigenbases behind the producers' frames (roa.propose_frame "eig"/"veig",
compactified.blowup_frame / turning_frame)."""

from __future__ import annotations

import numpy as np

from riccati_verify.numeric.eigen import conjugates, real_directions, real_eigenbasis


def _blocked(M: np.ndarray, T: np.ndarray, blocks: list[int]) -> float:
    """The largest entry of T⁻¹MT outside the diagonal blocks of the given sizes."""
    R = np.linalg.solve(T, M @ T)
    mask = np.ones_like(R, dtype=bool)
    k = 0
    for b in blocks:
        mask[k:k + b, k:k + b] = False
        k += b
    return float(np.max(np.abs(R[mask])))


def test_real_eigenbasis_block_diagonalises_a_complex_pair_and_a_repeated_real_eigenvalue():
    # M = S diag(R(1, 2), 3, 3) S⁻¹ with a rotation block: eigenvalues 1 ± 2i, 3, 3 (repeated, two
    # independent eigenvectors, which must both stay: the old pair matching dropped the second)
    rng = np.random.default_rng(7)
    S = rng.standard_normal((4, 4)) + 4 * np.eye(4)
    D = np.zeros((4, 4))
    D[:2, :2] = [[1, -2], [2, 1]]
    D[2, 2] = D[3, 3] = 3
    M = S @ D @ np.linalg.inv(S)
    w, X = np.linalg.eig(M)
    T = real_eigenbasis(M)
    assert T.shape == (4, 4) and np.linalg.cond(T) < 1e6
    assert np.allclose(np.linalg.norm(T, axis=0), 1.0)
    order = [2 if abs(x.imag) > 1e-12 else 1 for k, x in enumerate(w) if not (x.imag < -1e-12)]
    # float error of eig and solve: a few ulps times ‖M‖ cond(T)
    assert _blocked(M, T, order) < 1e-12 * np.linalg.norm(M) * np.linalg.cond(T)
    j = int(np.argmax(w.imag))
    assert conjugates(w, j) == {int(np.argmin(w.imag))}
    reals = [k for k in range(4) if abs(w[k].imag) < 1e-12]
    assert all(conjugates(w, k) == {k} for k in reals)
    assert len(real_directions(w, X)) == 4


def test_a_defective_matrix_gives_a_singular_basis_the_frames_refuse():
    # a Jordan block has one eigenvector: both columns are (nearly) parallel, and the callers' condition
    # tests (cond > 1e4 or 1e6) must then refuse the frame
    T = real_eigenbasis(np.array([[2.0, 1.0], [0.0, 2.0]]))
    assert np.linalg.cond(T) > 1e6

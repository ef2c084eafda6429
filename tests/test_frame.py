"""core.frame: the moment equation in a rational frame T, checked exactly on random rationals."""

from __future__ import annotations

import random
from fractions import Fraction as Q

import pytest

from riccati_verify.core import exact
from riccati_verify.core.frame import frame_inverse, moment_frame


def _F(A, B, V, S):
    # the moment field written out here, independently of the checker: (A + VΣB)Σ + Σ(A + VΣB)ᵀ
    mm = exact.matmul
    G = mm(exact.add(A, mm(mm(V, S), B)), S)
    return exact.add(G, exact.transpose(G))


def _rand(rng, d, sym=False):
    M = [[Q(rng.randint(-9, 9), rng.randint(1, 7)) for _ in range(d)] for _ in range(d)]
    if sym:
        M = [[M[max(i, j)][min(i, j)] for j in range(d)] for i in range(d)]
    return exact.as_matrix(M)


@pytest.mark.parametrize("d, seed", [(1, 0), (2, 1), (3, 2), (4, 3)])
def test_the_framed_field_is_the_conjugated_field_exactly(d, seed):
    rng = random.Random(seed)
    A, B, V, cov = _rand(rng, d), _rand(rng, d), _rand(rng, d), _rand(rng, d, sym=True)
    T = _rand(rng, d)
    while exact.rank(T) < d:
        T = _rand(rng, d)
    Ti, At, Bt, Vt, covt = moment_frame(T, A, B, V, cov)
    assert exact.matmul(T, Ti) == exact.identity(d)
    tr, mm = exact.transpose, exact.matmul
    assert covt == mm(mm(Ti, cov), tr(Ti))
    for _ in range(3):
        S = _rand(rng, d, sym=True)
        St = mm(mm(Ti, S), tr(Ti))
        # F̃(T⁻¹ΣT⁻ᵀ) = T⁻¹F(Σ)T⁻ᵀ: d/dt of T⁻¹ΣT⁻ᵀ along the flow
        assert _F(At, Bt, Vt, St) == mm(mm(Ti, _F(A, B, V, S)), tr(Ti))


def test_a_wrong_frame_formula_is_caught():
    # the test above can fail: with TᵀBT replaced by T⁻¹BT (a plausible slip) the identity breaks
    rng = random.Random(7)
    d = 3
    A, B, V = _rand(rng, d), _rand(rng, d), _rand(rng, d)
    T = exact.as_matrix([[2, 1, 0], [0, 1, 0], [1, 0, 3]])
    Ti, At, _, Vt, _ = moment_frame(T, A, B, V, exact.identity(d))
    mm, tr = exact.matmul, exact.transpose
    S = _rand(rng, d, sym=True)
    St = mm(mm(Ti, S), tr(Ti))
    assert _F(At, mm(mm(Ti, B), T), Vt, St) != mm(mm(Ti, _F(A, B, V, S)), tr(Ti))


def test_singular_and_non_square_frames_are_refused():
    I2 = exact.identity(2)
    with pytest.raises(ValueError):
        moment_frame(((Q(1), Q(2)), (Q(2), Q(4))), I2, I2, I2, I2)
    with pytest.raises(ValueError):
        frame_inverse(((Q(1), Q(2)),))
    assert frame_inverse(((Q(2), Q(0)), (Q(0), Q(4)))) == ((Q(1, 2), Q(0)), (Q(0), Q(1, 4)))


def test_frames_of_long_rationals_are_refused_before_the_exact_work():
    """A frame comes from an untrusted witness; its exact inverse costs minutes for 2000-digit
    entries, so entries beyond MAX_FRAME_BITS are refused first, and entries at the bound pass."""
    from riccati_verify.core.frame import MAX_FRAME_BITS

    I2 = exact.identity(2)
    at_bound = [[Q(2 ** MAX_FRAME_BITS - 1, 3), Q(0)], [Q(0), Q(1, 2 ** MAX_FRAME_BITS - 1)]]
    Ti, *_ = moment_frame(at_bound, I2, I2, I2, I2)
    assert exact.matmul(Ti, at_bound) == I2
    for too_long in (Q(2 ** MAX_FRAME_BITS, 3), Q(1, 2 ** MAX_FRAME_BITS)):
        with pytest.raises(ValueError, match="frame entries"):
            moment_frame([[too_long, Q(0)], [Q(0), Q(1)]], I2, I2, I2, I2)


def test_trajectory_certificate_with_a_frame_of_long_rationals_is_refused():
    import copy
    import json
    from pathlib import Path

    from riccati_verify.checker import verify_certificate

    doc = json.loads((Path(__file__).parent / "data" / "certificates" / "trajectory_convergence.json").read_text())
    assert verify_certificate(doc).valid
    d = len(doc["params"]["A"])
    rng = random.Random(3)
    bad = copy.deepcopy(doc)
    bad["witness"]["frame"] = [[f"{rng.randint(10 ** 60, 10 ** 61)}/{rng.randint(10 ** 60, 10 ** 61)}"
                                for _ in range(d)] for _ in range(d)]
    r = verify_certificate(bad)
    assert not r.valid and "frame entries" in r.reason, r.reason

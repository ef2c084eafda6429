"""Adjoint gradients of terminal losses vs high-precision finite differences (MATH.md §14).

The finite differences run eq. 1.1 forward at `DPS` digits with exact rational
perturbations θ ± hδ, h = 1e-12: truncation O(h²·|L'''|) ≈ 1e-24 and rounding
O(10^-DPS/h) ≈ 1e-18 relative, so the 1e-8 acceptance bound is far above the
method's error and far below the size of any wrong term in the costate.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from riccati_verify.numeric import adjoint as AD
from riccati_verify.numeric.flow import Segment
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.testing.strategies import control_sequences, gaussians, params, rational_matrices, rational_vectors

DPS = 30
ACCEPT = 1e-8


def small_params(d):
    # entries ≤ 1/4 ⇒ ‖A‖ ≤ d/4, ‖V‖‖B‖ ≤ d²/16, ‖Σ0‖ ≤ 2: the rigorous blow-up lower bound of
    # MATH.md §8 is ≥ 0.69 for d ≤ 2 and ≥ 0.34 for d = 3, above the horizons drawn (0.5, 0.25)
    return params(d, max_magnitude=Fraction(1, 4))


@st.composite
def problems(draw, dims=st.integers(1, 2), max_duration=0.25):
    d = draw(dims)
    segs = draw(control_sequences(d, segment_params=small_params, max_segments=2, max_duration=max_duration))
    s0 = draw(gaussians(d, rank=d))
    target = draw(gaussians(d, rank=d))
    direction = [(draw(rational_matrices(d, d)), draw(rational_matrices(d, d)), draw(rational_matrices(d, d)),
                  draw(rational_vectors(d))) for _ in segs]
    return segs, s0, target, direction


@settings(max_examples=4)
@given(problems(), st.sampled_from(["frobenius", "kl"]))
def test_adjoint_matches_high_precision_finite_differences(prob, kind):
    segs, s0, target, direction = prob
    loss = AD.TerminalLoss(kind, target)
    chk = AD.directional_fd_check(segs, s0, loss, direction, dps=DPS)
    assert chk["relative_error"] < ACCEPT, chk


@settings(max_examples=3)
@given(problems(dims=st.integers(1, 2)))
def test_float_adjoint_agrees_with_high_precision_adjoint(prob):
    segs, s0, target, _ = prob
    loss = AD.TerminalLoss("frobenius", target)
    g_float = AD.adjoint_gradient(segs, s0, loss).flat()
    g_mp = AD.adjoint_gradient(segs, s0, loss, mp=True, dps=DPS).flat().astype(float)
    # DOP853 at rtol 1e-12: the float gradient is good to ~1e-9 of the gradient's scale
    assert np.max(np.abs(g_float - g_mp)) <= 1e-8 * max(1.0, np.max(np.abs(g_mp)))


def test_every_coordinate_against_finite_differences():
    """Full gradient, coordinate by coordinate (d = 1, two segments: 8 coordinates)."""
    segs = [Segment(Fraction(1, 4), Params.from_arrays([[Fraction(1, 3)]], [[Fraction(-1, 2)]], [[Fraction(1, 4)]], [1])),
            Segment(Fraction(1, 3), Params.from_arrays([[Fraction(-1, 5)]], [[Fraction(1, 3)]], [[Fraction(-1, 2)]], [0]))]
    s0 = Gaussian.from_arrays([Fraction(1, 2)], [[Fraction(3, 2)]])
    loss = AD.TerminalLoss("kl", Gaussian.from_arrays([2], [[Fraction(1, 2)]]))
    grad = AD.adjoint_gradient(segs, s0, loss, mp=True, dps=DPS).flat()
    for k in range(8):
        e = np.zeros(8, dtype=object)
        e[k] = 1
        direction = [tuple([[e[4 * j + i]]] if i < 3 else [e[4 * j + 3]] for i in range(4)) for j in range(2)]
        chk = AD.directional_fd_check(segs, s0, loss, direction, dps=DPS)
        assert chk["relative_error"] < ACCEPT, (k, chk)
        assert abs(chk["adjoint"] - grad[k]) <= 1e-20 * max(1, abs(grad[k]))


def test_finite_difference_check_rejects_a_wrong_costate(monkeypatch):
    """Dropping the Q = PΣᵀ + PᵀΣ term from ∂H/∂A must be caught by the check."""
    segs = [Segment(Fraction(1, 2), Params.from_arrays([[Fraction(1, 2)]], [[Fraction(-1, 2)]], 1, [1]))]
    s0 = Gaussian.from_arrays([1], [[2]])
    loss = AD.TerminalLoss("frobenius", Gaussian.from_arrays([0], [[1]]))
    direction = [([[1]], [[0]], [[0]], [0])]
    assert AD.directional_fd_check(segs, s0, loss, direction, dps=DPS)["relative_error"] < ACCEPT
    right = AD.hamiltonian_gradients

    def wrong(A, B, V, m, S, p, P):
        gA, gB, gV, gb = right(A, B, V, m, S, p, P)
        return (np.outer(p, m), gB, gV, gb)

    monkeypatch.setattr(AD, "hamiltonian_gradients", wrong)
    assert AD.directional_fd_check(segs, s0, loss, direction, dps=DPS)["relative_error"] > 1e-3


@pytest.mark.slow
@settings(max_examples=20)
@given(problems(dims=st.integers(1, 3), max_duration=0.125), st.sampled_from(["frobenius", "kl"]))
def test_adjoint_matches_finite_differences_thorough(prob, kind):
    segs, s0, target, direction = prob
    chk = AD.directional_fd_check(segs, s0, AD.TerminalLoss(kind, target), direction, dps=40)
    assert chk["relative_error"] < ACCEPT, chk


def test_costate_formulas_are_the_hamiltonian_derivatives():
    from riccati_verify.proofs import adjoint as proof

    v = proof.symbolic_check(dims=(1, 2))
    assert v.status.value == "certified" and all(v.evidence.values())


def test_symbolic_check_refutes_a_wrong_formula(monkeypatch):
    from riccati_verify.proofs import adjoint as proof

    right = AD.costate_rhs

    def wrong(A, B, V, m, S, p, P):
        dp, dP = right(A, B, V, m, S, p, P)
        return dp, dP - P @ (A + V @ S @ B)      # drop the PJ term

    monkeypatch.setattr(AD, "costate_rhs", wrong)
    v = proof.symbolic_check(dims=(1,))
    assert v.status.value == "refuted" and v.evidence["d=1 -Pdot=dH/dSigma"] is False


@pytest.mark.slow
def test_proofs_pass():
    from riccati_verify.proofs import adjoint, reachability

    for mod in (adjoint, reachability):
        assert mod.check().status.value == "certified"

"""Review of `checker/_lohner`: the wiring of point 3's second-derivative bound in `_run`.

Point 3's majorant g_j ≥ ‖Q[x_j]‖_∞ (j ≥ 1) needs T_ac ≥ Σ_b |∂²f_a/∂x_b∂x_c| (`second_row_sums`).
The one-step tests pass T themselves; in `_run` a zero T (the mutant `T2 = arb_mat(n, n)`) only
under-estimates ρ by the terms of order ≥ 1 in the state's motion, which the end-to-end enclosures
do not resolve (tried: 1-D closed forms with JAC_TOL = 1 and Jacobian orders 3-6 stay enclosed).
So this test looks at what `_run` hands to `_jacobian_remainders` (point 3 at every order).
"""

from __future__ import annotations

from fractions import Fraction as Q

import pytest
from flint import arb, arb_mat, ctx

from riccati_verify.checker import _lohner as L


@pytest.mark.parametrize("hoe", [False, True])
def test_run_passes_the_second_derivative_bound_of_a_quadratic_field(monkeypatch, hoe):
    seen = []
    real = L._jacobian_remainders

    def spy(DfE, T, *rest):
        seen.append(max(float(abs(e).upper()) for e in T.entries()))
        return real(DfE, T, *rest)

    monkeypatch.setattr(L, "_jacobian_remainders", spy)
    A = [[Q(-1, 2), Q(1, 3)], [Q(0), Q(-1)]]
    B = [[Q(1), Q(1, 4)], [Q(1, 4), Q(1)]]
    V = [[Q(1, 2), Q(1, 5)], [Q(0), Q(1, 2)]]      # V ≠ 0, B ≠ 0: the field is quadratic
    with ctx.workprec(128):
        S = arb_mat([[arb(1), arb(0)], [arb(0), arb(1)]])
        r = L.enclose_lohner(None, S, A, B, V, None, Q(1, 10), order=20, jac_order=6, prec=128,
                             tol_bits=60, covariance_only=True, high_order_box=hoe)
    assert r.ok, r.reason
    if not hoe:
        assert seen, "the Picard path must use point 3"
    # every use of point 3 on this quadratic field must see a positive second-derivative bound
    assert all(x > 0 for x in seen), seen


@pytest.mark.parametrize("high_order_box", [False, True])
def test_a_horizon_below_the_float_range_ends_without_an_exception(high_order_box):
    """enclose_lohner never raises: a duration of 10^-400 (float(h) == 0) once made the high-order
    box's log2(h) raise ValueError.  The enclosure over so short a time must hold Σ0 itself."""
    with ctx.workprec(128):
        S = arb_mat([[1, 0], [0, 1]])
    I2 = [[Q(1), Q(0)], [Q(0), Q(1)]]
    mI2 = [[Q(-1), Q(0)], [Q(0), Q(-1)]]
    half = [[Q(1, 2), Q(0)], [Q(0), Q(1, 2)]]
    r = L.enclose_lohner(None, S, mI2, I2, half, None, Q(1, 10 ** 400), order=20, jac_order=10, prec=128,
                         tol_bits=60, covariance_only=True, high_order_box=high_order_box)
    if r.ok:
        for i in range(2):
            for j in range(2):
                assert r.cov[i, j].contains(arb(int(i == j)))

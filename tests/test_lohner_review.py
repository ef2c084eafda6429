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


def test_a_framed_step_encloses_the_whole_split_start_set():
    """Review s17: with a split start set (x̂, C, r0, r) and the local frame, the framed a-priori box
    started from Pi·(C·r) only, leaving out r0, and enclose_lohner returned ok with a set that missed
    solutions.  σ' = σ², m' = (1 + σ/2)m (A = 0, B = 1/2, V = 1) from x̂ = (50, 1), r0 = (±0.01, ±3.5),
    r = 0, to T = 11/50: the vertex (50.01, 4.5) has σ(T) = 4.5/(1 − 4.5T) = 450 and
    m(T) = 50.01·e^T/√(1 − 4.5T).  The run must fail or contain that solution (it returned
    σ(T) ∈ [±322] before the fix)."""
    from fractions import Fraction as F

    from riccati_verify.checker._lohner import enclose_lohner

    with ctx.workprec(200):
        xc, C, r = arb_mat([[50], [1]]), arb_mat([[1, 0], [0, 1]]), arb_mat(2, 1)
        r0 = arb_mat([[arb(0, 0.01)], [arb(0, 3.5)]])
        T = F(11, 50)
        res = enclose_lohner(arb_mat(1, 1), arb_mat(1, 1), [[F(0)]], [[F(1, 2)]], [[F(1)]], [F(0)], T, order=36,
                             jac_order=10, prec=200, tol_bits=20, high_order_box=True, width_limit=1e300,
                             max_steps=50, start=(xc, C, r0, r), local_frame=True)
        t = arb(11) / 50
        m_true = arb(5001) / 100 * t.exp() / (1 - arb(9) / 2 * t).sqrt()
        assert not res.ok or (res.cov[0, 0].contains(arb(450)) and res.mean[0, 0].contains(m_true))


@pytest.mark.parametrize("which", ["BV", "A"])
def test_tiny_controls_end_without_an_exception(which):
    """Controls of 2^-1400 made the first step guess exceed 2^1024: an OverflowError, not a result."""
    from fractions import Fraction as F

    tiny = F(1, 2 ** 1400)
    A, B, V = ([[tiny]], [[F(0)]], [[F(0)]]) if which == "A" else ([[F(0)]], [[tiny]], [[tiny]])
    P = type("P", (), dict(A=A, B=B, V=V, b=[F(0)]))
    res = L.enclose_lohner_params(P, [F(0)], [[F(1)]], F(1), order=12, jac_order=6)
    with ctx.workprec(3000):
        t = arb(F(1, 2 ** 1400).numerator) / arb(2) ** 1400
        # Σ̇ = 2aΣ (Σ = e^{2a}) or Σ̇ = 2vbΣ² (Σ = 1/(1 − 2vb)), from Σ0 = 1 over [0, 1]
        true = (2 * t).exp() if which == "A" else 1 / (1 - 2 * t * t)
        assert res.ok and res.cov[0, 0].contains(true)


def test_upper_maxima_do_not_drop_a_nan():
    """Review s19: a running maximum drops a NaN (it compares false with everything), so a bound built
    from it could come out too small; the helpers answer +∞ instead."""
    from flint import arb, arb_mat

    from riccati_verify.checker._lohner import _abs_upper_max, _max_upper, _row_sum_upper

    assert _max_upper([arb(1), arb("nan"), arb(2)]) == arb("inf")
    assert _max_upper([arb(1), arb(3, 1)]) >= 4 and _max_upper([]) == 0
    M = arb_mat(2, 2, [arb(1), arb(-5), arb("nan"), arb(0)])
    assert _abs_upper_max(M) == arb("inf") and _row_sum_upper(M) == arb("inf")
    N = arb_mat(2, 2, [1, -5, 2, 0])
    assert _abs_upper_max(N) == 5 and _row_sum_upper(N) == 6

"""Regression tests of the training items left open by session 18 (/work/lead/s19/helperF.md): the numeric
route of training_wellposed compares the continuous flow (not its Euler recursion) with the bounds, the float
comparisons' allowance, the attempt-counted work budget of `hypotheses training_deep`."""

from __future__ import annotations

import pytest

from riccati_verify.core.result import Status
from riccati_verify.numeric import training as T


@pytest.fixture
def cheap_wellposed(monkeypatch):
    # fewer deep steps and a stubbed Lipschitz sampler: the verdict logic is under test, not the computation
    from riccati_verify.proofs import training_wellposed as W

    monkeypatch.setattr(W, "DEEP", dict(W.DEEP, steps=20))
    monkeypatch.setattr(T, "gradient_lipschitz", lambda model, heads, seed=0: {"lipschitz_lower_bound": 1e-9})
    return W


def _bumped(monkeypatch, W, real, size, scales_with_step):
    # the shallow path's Σ_k E|θ|² raised at t = 10η, by `size` (per unit step when `scales_with_step`)

    def fake(doc, steps=None, coarsen=1):
        p = real(doc, steps, coarsen) if coarsen != 1 else real(doc, steps)
        if doc is not W.SHALLOW:
            return p
        X = p["X"].copy()
        X[10 // coarsen] += size * (coarsen if scales_with_step else 1)
        return dict(p, X=X)

    monkeypatch.setattr(W, "closure_path", fake)


def test_an_euler_only_excess_of_the_moment_bound_refutes_nothing(monkeypatch, cheap_wellposed):
    # review s18 M2 (c): X̄ bounds the continuous flow. An excess that halves with the step is the recursion's
    # discretisation error (its free energy need not decrease), not the flow's: the old route compared the
    # Euler path at η = 1/20 itself and reported REFUTED here
    W = cheap_wellposed
    from riccati_verify.certify.training_wellposed import wellposedness

    X_bar = float(wellposedness(W.SHALLOW)["X_bar"])          # ≈ 5.34; the path's max is Σ_k E|θ|²(0) = 2
    real = W.closure_path
    _bumped(monkeypatch, W, real, X_bar, scales_with_step=True)     # Euler at η: 2 + X̄ > X̄
    v = W.numeric_check()
    assert v.status is not Status.REFUTED, v.note
    assert v.skipped and "integration error" in v.note and "second_moment" in v.note, v.note
    lo, hi = v.evidence["shallow"]["max_second_moment_flow_estimate"]
    assert lo <= X_bar < hi and v.evidence["shallow"]["max_second_moment_euler"] > X_bar
    # the same excess at both steps is the flow's own: a measured excess, REFUTED
    _bumped(monkeypatch, W, real, X_bar, scales_with_step=False)
    assert W.numeric_check().status is Status.REFUTED


def test_the_flow_estimate_is_exact_for_a_first_order_error_and_widens_with_it(cheap_wellposed):
    # a global Euler error c·h·t: Q_h(t) = Q(t) + c·h·t with Q ≡ 1, so at index j of the step-h path (t = jh) the
    # value is 1 + a·(h/η)²·j with a = cη²; at t = 2jη the η path has 1 + 2aj, the 2η path 1 + 4aj: the flow's
    # estimate is 1 + 2aj ± 2·2aj, which contains Q = 1, and its upper end is 1 + 6aj
    import numpy as np

    W = cheap_wellposed
    real = W.closure_path
    try:
        W.closure_path = lambda doc, steps=None, coarsen=1: dict(
            real(doc, 8, coarsen), X=1 + 0.5 * coarsen ** 2 * np.arange(8 // coarsen))
        est = W.flow_estimate(W.SHALLOW, 8)["X"]
    finally:
        W.closure_path = real
    assert est["euler"] == 1 + 0.5 * 7                       # the recursion's own max, index 7
    assert est["flow_low"] == 1 and est["flow_high"] == 1 + 6 * 0.5 * 3

"""classify_regime on general parameters (issue 13): a certified regime never contradicts an
independent integration, and every emitted trajectory_convergence certificate verifies.

Instances: `testing.strategies.general_instances(2)` (entries k/2, k/3, k/4, |k| <= 6, Σ0 PD exactly).
Reference: `testing.strategies.reference_fate`, scipy's DOP853 at rtol 1e-12 on the covariance
equation (its own right-hand side, not the producer's `certify.roa._float_path` nor
`numeric.flow`), horizon 200; the tolerance on the limit is 10x its error estimate (the difference
between the rtol 1e-12 and 1e-10 runs plus ‖F(Σ(200))‖·‖DF⁻¹‖) plus the certified ball's radius.
A certified claim that it leaves undecided is judged by its stiff variant (Radau with the field's
exact Jacobian, rtol 1e-10 and 1e-8) at t = 1e10 (see `_consistent`); a draw that neither can judge
is reported as undecided (a warning), not counted as agreeing.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings

from riccati_verify.checker import verify_certificate
from riccati_verify.certify.stability import classify_regime
from riccati_verify.testing.strategies import general_instance, general_instances, reference_fate

_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])


LONG_HORIZON = 1e10
"""Where the stiff reference judges a certified limit that t = 200 leaves undecided: an algebraic
approach Σ ~ c/t is below the reference's 1e-8 there for c < 100."""


def _consistent(fate: dict, r, inst=None) -> str:
    """A certified regime must agree with the independent float fate of `inst` = (params, state):
    raises AssertionError when it disagrees, else returns "agrees", "not certified" or "undecided".

    When the explicit reference at t = 200 cannot judge a certified claim — a limit not reached yet
    ("other": an algebraic approach, A = 0, V = −I/4, B = Σ0 = I/4 gives Σ(t) = I/(4 + t/8); near 0 its
    small residual even reads as an equilibrium) or a DOP853 timeout (a stiff component) — the stiff
    reference (Radau, exact Jacobian) judges it: at t = 1e10 for a limit, at the same horizon for a
    blow-up.  If that one times out too, nothing was compared: the draw is "undecided", reported by
    a warning, never counted as agreeing."""
    if r.certificate is not None and r.certificate["claim"]["kind"] == "trajectory_convergence":
        assert verify_certificate(r.certificate).valid
    if not r.certified:
        return "not certified"
    converging = r.regime in ("collapse", "equilibrium")
    undecided = (fate["fate"] == "timeout" or (converging and fate["fate"] == "other")
                 or (r.regime == "collapse" and fate["fate"] == "equilibrium"))
    if undecided and inst is not None:
        fate = reference_fate(*inst, horizon=LONG_HORIZON if converging else 200.0, stiff=True)
    if fate["fate"] == "timeout":
        warnings.warn(f"undecided: certified {r.regime} ({r.method}); the references time out at t = {fate['t']:.3g}")
        return "undecided"
    if r.regime == "collapse":
        assert fate["fate"] == "collapse", (fate, r.method)
    elif r.regime == "equilibrium":
        assert fate["fate"] == "equilibrium", (fate, r.method)
        S = np.array(r.equilibrium["cov"], dtype=float)
        rad = float(r.equilibrium.get("radius") or 0)
        assert float(np.max(np.abs(fate["limit"] - S))) <= rad + 10 * fate["error"] + 1e-9
    elif r.regime == "blowup":
        assert fate["fate"] == "blowup", (fate, r.method)
        upper = r.blowup and r.blowup.get("upper")
        if upper is not None:
            assert fate["t"] <= float(upper) * (1 + 1e-6) + 1e-9
    else:
        assert fate["fate"] not in ("equilibrium", "collapse"), (fate, r.regime)
    return "agrees"


@settings(max_examples=4, **_SETTINGS)
@given(general_instances(2))
def test_converging_general_instances_are_never_certified_wrongly(inst):
    # the certification rate is not asserted here (issue 13 asks for 90%, not all: A = 0, V = −I/4-like
    # draws approach a singular limit algebraically and stay not certified); the seeded test below
    # asserts certification (review s18, M1: this test passed with a classify_regime that never certifies)
    p, s = inst
    fate = reference_fate(p, s, wall=2.0)
    assume(fate["fate"] in ("equilibrium", "collapse"))
    r = classify_regime(p, s)
    _consistent(fate, r, (p, s))


@pytest.mark.parametrize("i", [3, 6, 10])
def test_seeded_converging_instances_are_certified(i):
    """general_instance(2, 0, i) for the i < 12 whose reference integration converges (3: collapse,
    6 and 10: an equilibrium; the slow sweep below checks all i < 12): certified, and consistent."""
    p, s = general_instance(2, 0, i)
    fate = reference_fate(p, s)
    assert fate["fate"] in ("equilibrium", "collapse")
    r = classify_regime(p, s)
    assert r.certified, (i, r.method, r.evidence)
    assert _consistent(fate, r, (p, s)) == "agrees"


@pytest.mark.slow
@settings(max_examples=30, **_SETTINGS)
@given(general_instances(2))
def test_general_instances_never_certified_wrongly(inst):
    p, s = inst
    fate = reference_fate(p, s)
    assume(fate["fate"] != "timeout")
    _consistent(fate, classify_regime(p, s), (p, s))


@pytest.mark.slow
def test_seeded_converging_instances_at_d2_are_certified():
    # general_instance(2, 0, i), i < 12: the converging ones (by the reference integration) are certified
    # (measured: all 4 of them; over i < 80, 16 of 16, benchmarks/bench_regime.py)
    done = 0
    for i in range(12):
        p, s = general_instance(2, 0, i)
        fate = reference_fate(p, s)
        if fate["fate"] not in ("equilibrium", "collapse"):
            continue
        r = classify_regime(p, s)
        _consistent(fate, r, (p, s))
        assert r.certified, (i, r.method, r.evidence)
        done += 1
    assert done >= 1


def test_singular_diagonal_limit_is_an_equilibrium_with_positive_definite_false():
    """The taxonomy (README): a certified singular non-zero limit is the `equilibrium` regime with
    positive_definite False, on the diagonal route as on the general one.  σ_i' = 2a_iσ_i + 2v_iβ_iσ_i²:
    a = 1, vβ = −1 tends to −a/(vβ) = 1; a = −1, vβ = −1 tends to 0 (both from σ0 = 1)."""
    from fractions import Fraction as F

    from riccati_verify.core.model import Gaussian, Params

    one, zero = F(1), F(0)
    p = Params(((one, zero), (zero, -one)), ((one, zero), (zero, one)), ((-one, zero), (zero, -one)), (zero, zero))
    r = classify_regime(p, Gaussian((zero, zero), ((one, zero), (zero, one))))
    assert r.regime == "equilibrium" and r.certified
    assert r.equilibrium["positive_definite"] is False
    assert r.equilibrium["cov"] == ((one, zero), (zero, zero))


@pytest.mark.slow
def test_seeded_converging_instances_at_d3_are_certified():
    # general_instance(3, 0, i), i < 80: the reference integration converges for i = 28, 43, 59, 77
    # (bench_regime measured all 4 certified); the first two here
    for i in (28, 43):
        p, s = general_instance(3, 0, i)
        fate = reference_fate(p, s)
        assert fate["fate"] in ("equilibrium", "collapse"), (i, fate["fate"])
        r = classify_regime(p, s)
        _consistent(fate, r, (p, s))
        assert r.certified, (i, r.method, r.evidence)


def _diagonal(a, v, beta, s0):
    """Decoupled σ_i' = 2a_iσ_i + 2v_iβ_iσ_i² (diagonal A, V, B, Σ0; b = m0 = 0), exact."""
    from fractions import Fraction as Q

    from riccati_verify.core.model import Gaussian, Params

    d = len(a)
    D = lambda x: tuple(tuple(Q(x[i]) if i == j else Q(0) for j in range(d)) for i in range(d))   # noqa: E731
    return Params(D(a), D(beta), D(v), (Q(0),) * d), Gaussian((Q(0),) * d, D(s0))


def _claim(regime, cov=None):
    from types import SimpleNamespace

    eq = None if cov is None else {"cov": cov}
    return SimpleNamespace(regime=regime, equilibrium=eq, certificate=None, certified=True, method="test")


def test_the_long_horizon_oracle_still_rejects_wrong_claims():
    """_consistent judges at t = 1e10 a claim that the reference leaves undecided at t = 200 (an
    algebraic collapse, Σ(t) = I/(4 + t/8) here): the true collapse then passes, and a claimed
    equilibrium Σ* = I/4 of the same instance, or a claimed collapse of Σ̇ = 0 at Σ0 = I/4, still fails."""
    q = 0.25
    slow = _diagonal([0, 0], [-q, -q], [q, q], [q, q])
    fate = reference_fate(*slow)
    assert fate["fate"] == "other"                  # undecided at t = 200: the case this handles
    assert _consistent(fate, _claim("collapse"), slow) == "agrees"
    with pytest.raises(AssertionError):
        _consistent(fate, _claim("equilibrium", [[q, 0], [0, q]]), slow)
    still = _diagonal([0, 0], [0, 0], [0, 0], [q, q])
    with pytest.raises(AssertionError):
        _consistent(reference_fate(*still), _claim("collapse"), still)


def test_the_stiff_long_horizon_oracle_judges_and_rejects():
    """The draw the explicit oracle could not judge (slow d = 3 property, last round): two coordinates
    collapse algebraically, σ = 1/(4 + t/8), the third is fast.  With a3 = 1/2 it tends to
    −a3/(v3β3) = 8 (rate 1), with a3 = −3/2 to 0 (rate 3); DOP853 cannot reach t = 1e10 through
    the fast one (~1e9 steps), the stiff Radau reference can.  Right claims agree; a wrong limit,
    a collapse claimed for the non-collapsing one and an equilibrium claimed for the collapsing one
    are rejected."""
    q = 0.25
    conv = _diagonal([0, 0, 0.5], [-q] * 3, [q] * 3, [q] * 3)
    gone = _diagonal([0, 0, -1.5], [-q] * 3, [q] * 3, [q] * 3)
    D = lambda x: [[x[i] if i == j else 0 for j in range(3)] for i in range(3)]   # noqa: E731
    for inst in (conv, gone):
        assert reference_fate(*inst)["fate"] == "other"     # undecided at t = 200
    # the explicit step stays at the fast rate's stability limit (~6.4 here): 5,000 steps end near
    # t = 3e4, so t = 1e10 would take ~1.6e9 steps
    explicit = reference_fate(*conv, horizon=LONG_HORIZON, max_steps=5000)
    assert explicit["fate"] == "timeout" and explicit["t"] < 1e5
    undecided = {"fate": "other", "t": 200.0, "limit": None, "error": None}
    assert _consistent(undecided, _claim("equilibrium", D([0, 0, 8])), conv) == "agrees"   # via the stiff one
    assert _consistent(undecided, _claim("collapse"), gone) == "agrees"
    for inst, wrongs in ((conv, [_claim("equilibrium", D([0, 0, 4])), _claim("collapse"), _claim("blowup")]),
                         (gone, [_claim("equilibrium", D([0, 0, 8]))])):
        fate = reference_fate(*inst, horizon=LONG_HORIZON, stiff=True)   # what _consistent computed above
        for wrong in wrongs:
            with pytest.raises(AssertionError):
                _consistent(fate, wrong, inst)

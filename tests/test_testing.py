"""The property suites hold for the project's own code and REJECT wrong models.

Each suite is run once on the real implementation and once on a deliberately
wrong one (sign flip, transposed B, non-affine velocity, rank-breaking
integrator, dropped linearisation term, mis-signed Hamiltonian, tampered
certificates); the wrong ones must raise AssertionError.  The mutation script
(tests/mutation/run_mutants.py) runs this file against mutated copies of the
package.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, settings, strategies as st

from riccati_verify.core import exact
from riccati_verify.testing import strategies as rst
from riccati_verify.numeric.flow import integrate_moments, moment_rhs
from riccati_verify.testing import attention_velocity_quadrature, check_certificates_roundtrip, check_gaussian_invariance, check_linearisation, check_moment_ode, check_radon_linearisation, check_rank_invariance, check_riccati_regimes, check_reachability, check_scalar_bernoulli, perturb_entry
from riccati_verify.numeric.views import float_view

# Wrong models must be caught within a few examples; the failure is then shrunk, so bound it.
# Generation only: the test needs the rejection, not a shrunk counterexample (shrinking and the
# explain phase re-run the slow failing example many times).
FEW = settings(max_examples=10, derandomize=True, database=None, deadline=None,
               suppress_health_check=list(HealthCheck), phases=[Phase.generate])


# -- moment ODE ------------------------------------------------------------------

def test_moment_ode_holds_for_the_project_rhs():
    check_moment_ode()


def test_moment_ode_holds_in_opposite_sign_scalar_regime():
    check_moment_ode(rst.params(st.integers(1, 2), signs="opposite", scalar_V=True, A_spectrum="anti_hurwitz"))


def _sign_flipped(A, B, V, b, m, S):
    dm, dS = moment_rhs(A, -B, V, b, m, S)  # the attention term with the wrong sign
    return dm, dS


def _transposed_B(A, B, V, b, m, S):
    return moment_rhs(A, B.T, V, b, m, S)


def _mean_missing_Vm(A, B, V, b, m, S):
    dm, dS = moment_rhs(A, B, V, b, m, S)
    return dm - V @ m, dS


@pytest.mark.parametrize("wrong", [_sign_flipped, _transposed_B, _mean_missing_Vm])
def test_moment_ode_rejects_wrong_rhs(wrong):
    with pytest.raises(AssertionError):
        check_moment_ode(rhs=wrong, symbolic_max_dim=0, settings=FEW)


# -- Gaussian invariance -----------------------------------------------------------

def test_gaussian_invariance_of_attention_velocity():
    check_gaussian_invariance()


def _relu_feed_forward(p, g, X):
    # x ↦ ReLU(Ax + b) + V·Attn: not affine, so Gaussians are not preserved (MATH.md §12)
    A, B, V, b = float_view(p)
    attn, err = attention_velocity_quadrature(p, g, X)
    return np.maximum(X @ A.T + b, 0.0) + (attn - X @ A.T - b), err


def test_gaussian_invariance_rejects_relu_feed_forward():
    full_rank = lambda d: rst.gaussians(d, rank=d)
    with pytest.raises(AssertionError, match="not affine"):
        check_gaussian_invariance(_relu_feed_forward, params=rst.params(st.integers(1, 2), A_spectrum="hurwitz"),
                                  states=full_rank, settings=FEW)


# -- rank invariance ---------------------------------------------------------------

def test_rank_invariance_along_time_varying_controls():
    check_rank_invariance()


def _leaky_integrator(*args, **kwargs):
    # a wrong integrator: a tiny isotropic drift fills the null space of Σ
    res = integrate_moments(*args, **kwargs)
    res.covs = res.covs + 1e-6 * res.t[:, None, None] * np.eye(res.covs.shape[1])
    return res


def test_rank_invariance_rejects_rank_breaking_integrator():
    deficient = lambda d: rst.gaussians(d, rank=d - 1) if d > 1 else rst.gaussians(1, rank=0)
    with pytest.raises(AssertionError, match="rank changed"):
        check_rank_invariance(states=deficient, integrate=_leaky_integrator, settings=FEW)


# -- linearisation and Radon's form ----------------------------------------------------

def test_linearisation_matches_exact_central_difference():
    check_linearisation()


def test_linearisation_rejects_a_dropped_term():
    from riccati_verify.certify.equilibria import pair_operator_np

    def dropped(p, S):
        A, B, V, _ = float_view(p)
        J = A + V @ np.array(S, dtype=float) @ B
        return pair_operator_np([(J, np.eye(p.dim))], p.dim), "float"   # the (V, ΣBᵀ) pair is missing

    with pytest.raises(AssertionError, match="differs"):
        check_linearisation(linearisations={"dropped": dropped}, settings=FEW)


def test_radon_linearisation_matches_moment_flow():
    check_radon_linearisation()


def test_radon_linearisation_rejects_wrong_hamiltonian():
    from riccati_verify.certify.blowup.radon import radon_hamiltonian

    def wrong(A, v, B):
        return radon_hamiltonian(A, -v, B)  # coupling with the wrong sign

    with pytest.raises(AssertionError, match="differs"):
        check_radon_linearisation(hamiltonian=wrong, settings=FEW)


# -- certificates ---------------------------------------------------------------------

def _blowup_certificate(problem):
    """Certificate of the scalar blow-up bracket from the issue-4 producer (d = 1, same signs)."""
    from riccati_verify.certify.blowup import blowup_time
    from riccati_verify.certify.certificate import make_certificate

    p, g = problem
    res = blowup_time(p, g, digits=10)
    if res.certificate_spec is None or not res.blowup:
        return None
    c = res.certificate_spec
    return make_certificate(c["kind"], c["claim"], p, g, c["witness"], c["method"])


BLOWUP_PROBLEMS = st.tuples(
    rst.params(1, signs="same", scalar_V=True, A_spectrum="anti_hurwitz", zero_b=True),
    rst.gaussians(1, rank=1),
)


def _tamper_A(cert, _):
    return perturb_entry(cert, ["params", "A", 0, 0], 1)


def _tamper_kind(cert, _):
    cert["claim"]["kind"] = "no_blowup"
    return cert


def test_certificates_roundtrip_and_tampering():
    # each example runs the certified blow-up enclosure (≈1 s): keep the count at the CI level
    check_certificates_roundtrip(_blowup_certificate, BLOWUP_PROBLEMS,
                                 tampers={"A[0][0] + 1": _tamper_A, "claim kind": _tamper_kind},
                                 settings=settings(max_examples=8, derandomize=True, deadline=None))


def test_certificate_suite_rejects_a_tamper_that_the_checker_accepts():
    # Negative control: a "tamper" that changes nothing must be reported as accepted.
    with pytest.raises(AssertionError, match="was accepted"):
        check_certificates_roundtrip(_blowup_certificate, BLOWUP_PROBLEMS,
                                     tampers={"identity": lambda c, _: c}, settings=FEW)


def test_certificate_suite_fails_when_nothing_is_certified():
    with pytest.raises(AssertionError, match="tested nothing"):
        check_certificates_roundtrip(lambda _: None, st.just(0), tampers={}, settings=FEW)


def test_perturb_entry():
    doc = {"w": {"x": ["1/3", 2]}}
    assert perturb_entry(doc, ["w", "x", 0], "1/6") == {"w": {"x": ["1/2", 2]}}
    assert perturb_entry(doc, ["w", "x", 1], 1) == {"w": {"x": ["1/3", 3]}}
    assert perturb_entry(doc, ["w", "y"], 1) is None
    assert doc == {"w": {"x": ["1/3", 2]}}


# -- closed forms: scalar Bernoulli and the V = vI regimes --------------------------------

def test_scalar_bernoulli_closed_form_matches_flow():
    check_scalar_bernoulli()


def _doubled_attention(schedule, state, time, **kw):
    # a wrong model: twice the attention term (vβ → 2vβ) changes σ(t) and T*
    from riccati_verify.core.model import Params

    p = schedule
    return integrate_moments(Params(p.A, exact.scale(2, p.B), p.V, p.b), state, time, **kw)


def test_scalar_bernoulli_rejects_wrong_flow():
    with pytest.raises(AssertionError, match="closed.form"):
        check_scalar_bernoulli(params=rst.params(1, signs="same", max_magnitude=1), integrate=_doubled_attention,
                               settings=FEW)


def test_riccati_regimes_converge_or_blow_up():
    check_riccati_regimes()


def test_riccati_regimes_reject_a_flow_without_attention():
    def no_attention(p, g, t, **kw):
        from riccati_verify.core.model import Params

        return integrate_moments(Params(p.A, exact.zeros(p.dim), p.V, p.b), g, t, **kw)

    with pytest.raises(AssertionError, match="away from Σ|no blow-up|reports blow-up"):
        check_riccati_regimes(integrate=no_attention, settings=FEW)


# -- reachability --------------------------------------------------------------------------

def test_reachability_controls_land_on_target():
    check_reachability()


def test_reachability_attention_only_controls_land_on_target():
    check_reachability(attention_only=True, dims=st.integers(1, 2))


def test_reachability_rejects_controls_that_miss():
    from riccati_verify.numeric.flow import Segment
    from riccati_verify.core.model import Params
    from riccati_verify.certify.reach import reach

    def sloppy(s0, s1, T):  # every control 1% too strong
        res = reach(s0, s1, T, verify=False)
        res.segments = [Segment(s.duration, Params(exact.scale(Fraction(101, 100), s.params.A), s.params.B,
                                                   s.params.V, s.params.b)) for s in res.segments]
        return res

    with pytest.raises(AssertionError, match="miss the target"):
        check_reachability(sloppy, dims=st.just(2), settings=FEW)


def test_reachability_rejects_a_rank_changing_claim():
    from riccati_verify.certify.reach import ReachResult

    with pytest.raises(AssertionError, match="reported reachable"):
        check_reachability(lambda s0, s1, T: ReachResult(True, "claims everything"), settings=FEW)

"""Numeric moment flow: accuracy, blow-up detection, rank and PSD preservation."""

import json
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from riccati_verify.core import exact
from riccati_verify.numeric.flow import Segment, integrate_moments, integrate_moments_mp, numerical_rank
from riccati_verify.core.model import Gaussian, Params

ROT = Params.from_arrays([["1/2", 1], [-1, "1/2"]], [[-1, 0], [0, "-1/2"]], "1/2", ["1/10", 0])
G0 = Gaussian.from_arrays([1, 0], [[1, "1/4"], ["1/4", "1/2"]])


def test_flow_agrees_with_high_precision():
    res = integrate_moments(ROT, G0, 2.0)
    m, S = integrate_moments_mp(ROT, G0, 2.0, dps=30)
    ref = np.array([float(x) for x in m] + [float(x) for r in S for x in r])
    got = np.concatenate([res.mean, res.cov.ravel()])
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 1e-9
    assert not res.blowup


def test_scalar_closed_form_trajectory():
    """d = 1: σ' = 2aσ + 2vβσ², solved via u = 1/σ (MATH.md §6)."""
    a, vb, s0, T = -1.0, -0.5, 2.0, 1.5
    p = Params.from_arrays([[a]], [[vb]], 1)
    res = integrate_moments(p, Gaussian.from_arrays([0], [[s0]]), T)
    exact = 1 / ((1 / s0 + vb / a) * math.exp(-2 * a * T) - vb / a)
    assert abs(res.cov[0, 0] - exact) < 1e-10 * exact


@pytest.mark.parametrize("a,vb,s0", [(0.0, 1.0, 1.0), (1.0, 1.0, 1.0), (-0.5, 2.0, 1.0), (0.3, 0.25, 2.0)])
def test_blowup_detected_near_closed_form_time(a, vb, s0):
    Tstar = 1 / (2 * vb * s0) if a == 0 else math.log(1 + a / (vb * s0)) / (2 * a)
    p = Params.from_arrays([[a]], [[vb]], 1)
    res = integrate_moments(p, Gaussian.from_arrays([0], [[s0]]), 3 * Tstar)
    assert res.blowup and "exceeded" in res.reason
    # σ reaches the bound 1e12 at T* − O(1/(2vβ·1e12)): the detected time is within 1e-9 of T*.
    assert Tstar - 1e-9 < res.time <= Tstar + 1e-9
    assert np.all(np.isfinite(res.cov))


def test_no_blowup_reported_when_bounded():
    p = Params.from_arrays([[-1]], [[1]], 1)  # a + vβσ0 = -1 + 0.5 < 0: σ → 0, no blow-up
    res = integrate_moments(p, Gaussian.from_arrays([0], [["1/2"]]), 20)
    assert not res.blowup and res.cov[0, 0] < 1e-10


def test_piecewise_and_callable_schedules_agree():
    P1 = ROT
    P2 = Params.from_arrays([[0, 0], [0, -1]], [[1, 0], [0, 1]], "-1/4", [0, 1])
    seg = integrate_moments([Segment(0.7, P1), Segment(0.8, P2)], G0, 1.5)
    call = integrate_moments(lambda t: P1 if t < 0.7 else P2, G0, 1.5)
    assert np.allclose(seg.cov, call.cov, rtol=1e-6, atol=1e-9)  # callable: the jump is resolved by step control only
    assert np.allclose(seg.mean, call.mean, rtol=1e-6, atol=1e-9)


@st.composite
def rank_deficient_cases(draw):
    d = draw(st.integers(2, 5))
    r = draw(st.integers(1, d))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # Σ0 = F Fᵀ formed exactly, so it is PSD of rank r exactly (a float product need not be PSD).
    F = exact.scale(Fraction(1, 64), exact.as_matrix(np.round(rng.standard_normal((d, r)) * 64).tolist()))
    S0 = exact.matmul(F, exact.transpose(F))
    pieces = [Segment(float(rng.uniform(0.05, 0.2)),
                      Params.from_arrays(*(0.3 * rng.standard_normal((d, d)) for _ in range(3)), rng.standard_normal(d)))
              for _ in range(3)]
    return d, exact.rank(S0), S0, pieces


@given(rank_deficient_cases())
def test_rank_and_psd_preserved_along_time_varying_controls(case):
    d, r, S0, pieces = case
    state = Gaussian(exact.as_vector([0] * d), S0)
    res = integrate_moments(pieces, state, sum(p.duration for p in pieces))
    if res.blowup:
        return  # invariance is claimed only while the solution exists
    # Rank tolerance: eigenvalues below 1e-7·‖Σ‖ are integration noise (rtol 1e-12 over t < 1, cond(Φ) ≤ e^{O(1)}).
    assert numerical_rank(res.cov, rtol=1e-7) == r
    assert np.linalg.eigvalsh(res.cov).min() > -1e-9 * np.linalg.norm(res.cov, 2)
    # PSD along the whole sampled trajectory, too.
    assert all(np.linalg.eigvalsh(S).min() > -1e-9 * max(1, np.linalg.norm(S, 2)) for S in res.covs)


def test_flow_cli_json(cli, tmp_path):
    p = tmp_path / "p.json"
    p.write_text(json.dumps({"A": [[0]], "B": [[1]], "V": 1, "mean": [1], "cov": [[1]]}))
    r = cli("flow", p, "--time", "0.25", "--json")
    assert r.returncode == 0
    data = json.loads(r.stdout)
    assert set(data) >= {"mean", "cov", "time", "blowup", "rank"}
    assert abs(data["cov"][0][0] - 1 / (1 - 2 * 0.25)) < 1e-10  # σ' = 2σ², σ0 = 1
    r = cli("flow", p, "--time", "1", "--json")
    assert r.returncode == 1 and json.loads(r.stdout)["blowup"] is True


def test_step_budget_reports_stall_not_crash():
    res = integrate_moments(ROT, G0, 50.0, max_steps=20)
    assert res.stalled and not res.blowup and "step size collapsed" in res.reason
    assert res.time < 50.0 and np.all(np.isfinite(res.cov))


def test_high_precision_integration_reports_blowup_instead_of_hanging():
    from riccati_verify.core.errors import BlowupDetected

    p = Params.from_arrays([[0]], [[1]], 1)  # σ' = 2σ², σ0 = 1: pole at t = 1/2
    with pytest.raises(BlowupDetected) as e:
        integrate_moments_mp(p, Gaussian.from_arrays([0], [[1]]), 1.0, dps=20)
    assert abs(e.value.time - 0.5) < 1e-9


def test_extreme_magnitudes_give_a_result_not_a_crash():
    p = Params.from_arrays([[1e300, 0], [0, 1]], [[1, 0], [0, 1]], 1)
    res = integrate_moments(p, Gaussian.from_arrays([1e300, 0], [[1e300, 0], [0, 1]]), 1.0)
    assert (res.blowup or res.stalled) and res.reason


def test_diverging_mean_is_not_a_covariance_blowup():
    # Σ stays 1 (a = 0, B = 0); the mean grows like e^{40 t}, far past 1e12, with no blow-up of Σ.
    p = Params.from_arrays([[0]], [[0]], 40, [0])
    res = integrate_moments(p, Gaussian.from_arrays([1], [[1]]), 1.0)
    assert not res.blowup and not res.stalled and abs(res.cov[0, 0] - 1) < 1e-12
    assert abs(res.mean[0] / math.exp(40) - 1) < 1e-9


def test_rotating_blowup_is_reported_as_blowup():
    """A = I + K (K skew), B_s = I, V = 1, Σ0 = I: P = Σ⁻¹ = (2e^{-2t} − 1) I, so T* = ln(2)/2.

    The skew parts make the solution spin faster and faster near T*, so the
    integrator's steps collapse before the norm bound is reached."""
    p = Params.from_arrays([[1, "-1/2"], ["1/2", 1]], [[1, -1], [1, 1]], 1)
    res = integrate_moments(p, Gaussian.from_arrays([0, 0], [[1, 0], [0, 1]]), 0.35)
    assert res.blowup and not res.stalled
    assert abs(res.time - math.log(2) / 2) < 1e-5


def test_schedule_durations_summing_to_the_horizon_in_exact_arithmetic():
    segs = [Segment(Fraction(1, 4), ROT), Segment(Fraction(1, 3), ROT)]
    res = integrate_moments(segs, G0, float(Fraction(1, 4) + Fraction(1, 3)))
    assert not res.blowup and res.time == float(Fraction(7, 12))
    with pytest.raises(Exception, match="covers"):
        integrate_moments(segs, G0, 0.6)

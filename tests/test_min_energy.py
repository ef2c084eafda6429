"""Minimal-energy controls (riccati_verify.certify.min_energy): exact reach, optimality against closed forms,
the closed-form Jacobian against the costate route, certificates and the CLI."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from riccati_verify.numeric import adjoint as AD
from riccati_verify.certify import min_energy as ME, reach as R
from riccati_verify.checker import verify_certificate
from riccati_verify.numeric.flow import integrate_moments
from riccati_verify.core.io import problem_to_dict
from riccati_verify.core.model import Gaussian
from riccati_verify.testing.strategies import gaussians
from riccati_verify.numeric.views import float_view

S0 = Gaussian.from_arrays([1, 0], [[2, Fraction(1, 2)], [Fraction(1, 2), 1]])
S1 = Gaussian.from_arrays([0, 1], [[1, 0], [0, Fraction(1, 2)]])
VERIFY_DPS = 40      # the mpmath Taylor re-integration is good to ~1e-40 here, below the 1e-30 bar


def _solve(s0, s1, T, K, verify_dps=VERIFY_DPS):
    start = R.reach(s0, s1, Fraction(T), verify=False).segments
    return ME.minimal_energy(s0, s1, start, n_segments=K * len(start), verify_dps=verify_dps), start


# ------------------------------------------------------------ the Jacobian

@st.composite
def controls_and_states(draw):
    d = draw(st.integers(1, 3))
    K = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    theta = np.round(np.random.default_rng(seed).standard_normal(K * (d * d + d)) * 0.5, 3)
    return d, [Fraction(1, 3)] * K, theta, draw(gaussians(d, rank=d)), draw(gaussians(d))


def _costate_jt_g(theta, taus, s0, target):
    """dL/dθ for L = |m − m1|² + ‖Σ − Σ1‖_F² by the adjoint (costate) ODE route, in θ's (A_k, b_k) order."""
    segs = ME.TerminalConstraint("congruence", tuple(taus), s0, target).segments(list(theta))
    res = AD.adjoint_gradient(segs, s0, AD.TerminalLoss("frobenius", target))
    return np.concatenate([np.concatenate([gA.ravel(), gb]) for gA, _, _, gb in res.grads])


def _frechet_jt_g(theta, taus, s0, target):
    """The same gradient from the Fréchet Jacobian: ∇L = Jᵀg, g = 2c on the mean and the diagonal,
    4c on the strict upper triangle (each off-diagonal entry appears twice in ‖·‖_F²)."""
    d = s0.dim
    c, J = ME.constraints_and_jacobian(theta, taus, s0, target)
    g = np.concatenate([2 * c[:d], [2 * x if i == j else 4 * x for (i, j), x in zip(ME._triu(d), c[d:])]])
    return J.T @ g


@settings(max_examples=6, deadline=None)
@given(controls_and_states())
def test_frechet_jacobian_matches_the_costate_gradient(case):
    d, taus, theta, s0, target = case
    fr = _frechet_jt_g(theta, taus, s0, target)
    co = _costate_jt_g(theta, taus, s0, target)
    # DOP853 at rtol 1e-12 in the adjoint: agreement to ~1e-9 of the gradient's scale
    assert np.max(np.abs(fr - co)) <= 1e-8 * max(1.0, np.max(np.abs(co)))


def test_jacobian_cross_check_rejects_a_wrong_frechet_derivative(monkeypatch):
    """Replacing L(X, E) by its first-order term E (wrong unless X = 0) must be caught."""
    theta = np.array([0.4, -0.3, 0.2, 0.5, 0.7, -0.1])
    taus = [Fraction(1, 2)]
    good = _frechet_jt_g(theta, taus, S0, S1)
    co = _costate_jt_g(theta, taus, S0, S1)
    assert np.max(np.abs(good - co)) <= 1e-8 * max(1.0, np.max(np.abs(co)))
    monkeypatch.setattr(ME, "expm_frechet", lambda X, E, compute_expm=False: E)
    bad = _frechet_jt_g(theta, taus, S0, S1)
    assert np.max(np.abs(bad - co)) > 1e-3 * np.max(np.abs(co))


# ------------------------------------------------------------ closed forms

@pytest.mark.parametrize("sigma0, sigma1, T, K", [(2, Fraction(1, 3), 2, 4), (Fraction(1, 2), 5, Fraction(1, 3), 3)])
def test_scalar_covariance_closed_form(sigma0, sigma1, T, K):
    """d = 1, m0 = m1 = 0: σ(T) = σ0 exp(2∫a dt) depends on a alone, so every feasible control has
    ∫a = log(σ1/σ0)/2 and energy ≥ ∫a² ≥ T·ā² (Jensen, equality iff a is constant).  The constant
    a = log(σ1/σ0)/(2T) with b = 0 is feasible (m stays 0), so it is the minimum: energy T·a²."""
    s0 = Gaussian.from_arrays([0], [[sigma0]])
    s1 = Gaussian.from_arrays([0], [[sigma1]])
    res, _ = _solve(s0, s1, T, K)
    a = math.log(float(sigma1) / float(sigma0)) / (2 * float(T))
    A = [float(s.params.A[0][0]) for s in res.segments]
    b = [float(s.params.b[0]) for s in res.segments]
    assert max(abs(x - a) for x in A) < 1e-9 * max(1, abs(a))
    assert max(abs(x) for x in b) < 1e-9
    assert abs(res.energy - float(T) * a * a) < 1e-9 * float(T) * a * a
    assert res.terminal_error < 1e-30 and res.kkt_residual < 1e-8


def test_scalar_mean_only_converges_to_the_hyperbolic_geodesic():
    """d = 1 with Σ0 = Σ1 = 0 (a point mass): minimise ∫(a² + b²) dt with ṁ = a m + b, m(0) = m0,
    m(T) = m1.  Pontryagin: H = a² + b² + p(a m + b) gives a = −p m/2, b = −p/2 (so a = b m) and
    ṗ = −p a.  H is conserved: H = −b²(1 + m²) = −c², so ṁ = a m + b = b(1 + m²) = c√(1 + m²), i.e.
    asinh m(t) moves at the constant speed c = (asinh m1 − asinh m0)/T, and the energy is
    ∫ b²(1 + m²) dt = c²T = (asinh m1 − asinh m0)²/T — the infimum over all measurable controls.
    Piecewise-constant controls on K pieces can only do worse, and a smooth optimal control is
    approximated with energy excess O(1/K²): the excess must be ≥ 0 and quarter when K doubles."""
    m0, m1, T = Fraction(-1, 2), 2, Fraction(1, 2)
    s0, s1 = Gaussian.from_arrays([m0], [[0]]), Gaussian.from_arrays([m1], [[0]])
    best = (math.asinh(m1) - math.asinh(m0)) ** 2 / float(T)
    excess = {}
    for K in (4, 8, 16):
        res, _ = _solve(s0, s1, T, K, verify_dps=VERIFY_DPS if K == 16 else None)
        excess[K] = res.energy - best
        assert excess[K] > 0
    assert 0.23 < excess[8] / excess[4] < 0.27 and 0.23 < excess[16] / excess[8] < 0.27
    assert excess[16] < 1e-3 * best
    assert res.terminal_error < 1e-30


# ------------------------------------------------------------ random instances

@settings(max_examples=5, deadline=None)
@given(st.integers(1, 3).flatmap(lambda d: st.tuples(gaussians(d, rank=d), gaussians(d, rank=d))), st.integers(1, 2))
def test_random_full_rank_targets_are_reached_with_less_energy(pair, K):
    s0, s1 = pair
    res, start = _solve(s0, s1, 1, K)
    assert res.converged
    assert res.terminal_error < 1e-30
    # the start is feasible on the grid, the line search decreases E + ρ‖c‖₁ from there
    assert res.energy <= R.control_energy(start) * (1 + 1e-12)
    assert res.kkt_residual < 1e-8


def test_rank_deficient_target_is_reached():
    """Rank 1 in d = 2: the Σ rows of J are dependent (pseudo-inverse steps)."""
    s0 = Gaussian.from_arrays([1, 0], [[1, 1], [1, 1]])
    s1 = Gaussian.from_arrays([0, 2], [[4, -2], [-2, 1]])
    res, start = _solve(s0, s1, 1, 2)
    assert res.terminal_error < 1e-30
    assert res.energy <= res.constructive_energy * (1 + 1e-12)
    assert res.kkt_residual < 1e-8


def test_target_equal_to_start_needs_zero_energy():
    res, _ = _solve(S0, S0, 1, 2)
    assert res.energy < 1e-40 and res.terminal_error < 1e-30 and res.kkt_residual < 1e-8


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4).flatmap(lambda d: st.integers(0, d).flatmap(
    lambda r: st.tuples(gaussians(d, rank=r), gaussians(d, rank=r)))), st.integers(1, 3))
def test_random_same_rank_targets_thorough(pair, K):
    s0, s1 = pair
    res, start = _solve(s0, s1, 1, K)
    assert res.terminal_error < 1e-30
    assert res.energy <= R.control_energy(start) * (1 + 1e-12)
    assert res.converged and res.kkt_residual < 1e-8


def test_kkt_residual_flags_a_feasible_non_optimal_point():
    """The constructive controls reach the target but are not stationary for the energy."""
    start = R.reach(S0, S1, Fraction(1), verify=False).segments
    taus, theta = ME.resample(start, 4)
    c, J = ME.constraints_and_jacobian(theta, taus, S0, S1)
    assert np.max(np.abs(c)) < 1e-12
    assert ME.kkt_residual(theta, J, ME.TerminalConstraint("congruence", tuple(taus), S0, S1).weights()) > 1e-2


# ------------------------------------------------------------ certificates

@pytest.fixture(scope="module")
def min_energy_cert():
    res, _ = _solve(S0, S1, 1, 4, verify_dps=R.VERIFY_DPS)
    rr = ME.as_reach_result(res, S0, S1)
    return R.reachability_certificate(rr, S0, S1, Fraction(1), R.certificate_tolerance())


def test_minimal_energy_certificate_passes_verify(min_energy_cert):
    chk = verify_certificate(min_energy_cert)
    assert chk.valid, chk.reason


@pytest.mark.parametrize("where", [("A", 0, 1), ("b", 1), ("duration",)])
def test_perturbed_minimal_energy_certificates_fail(min_energy_cert, where):
    doc = json.loads(json.dumps(min_energy_cert))
    seg = doc["witness"]["segments"][2]
    if where[0] == "A":
        seg["A"][where[1]][where[2]] = str(Fraction(seg["A"][where[1]][where[2]]) + Fraction(1, 10 ** 6))
    elif where[0] == "b":
        seg["b"][where[1]] = str(Fraction(seg["b"][where[1]]) + Fraction(1, 10 ** 6))
    else:
        seg["duration"] = str(Fraction(seg["duration"]) + Fraction(1, 10 ** 6))
    assert not verify_certificate(doc).valid


# ------------------------------------------------------------ the full class (A, B, V, b)

def test_full_class_jacobian_matches_finite_differences():
    """Costate rows of J against central differences of the DOP853 flow (h = 1e-6: truncation
    ~h² times the third derivative, rounding ~1e-12/h; ≈ 1e-6 of J's scale at worst), at a point
    with attention on."""
    rng = np.random.default_rng(3)
    taus = (Fraction(1, 3), Fraction(1, 3))
    theta = np.round(rng.standard_normal(2 * (3 * 4 + 2)) * 0.3, 3)
    prob = ME.TerminalConstraint("full", taus, S0, S1)
    c, J = prob.cj(theta)
    h = 1e-6
    fd = np.array([(prob.c(theta + h * e) - prob.c(theta - h * e)) / (2 * h) for e in np.eye(theta.size)]).T
    assert np.max(np.abs(J - fd)) < 1e-6 * np.max(np.abs(J))
    assert np.max(np.abs(J[:, 4:12])) > 1e-2          # B and V of segment 0 do act on the terminal state


@pytest.fixture(scope="module")
def full_result():
    res, start = _solve(S0, S1, 1, 2, verify_dps=VERIFY_DPS)
    full = ME.minimal_energy(S0, S1, start, n_segments=2 * len(start), control_class="full",
                             verify_dps=VERIFY_DPS)
    return res, full


def test_full_class_reaches_with_no_more_energy_than_the_congruence_class(full_result):
    cong, full = full_result
    assert full.control_class == "full" and full.converged
    assert full.terminal_error < 1e-30
    # it starts from the congruence optimum, a feasible point of the larger class
    assert full.energy <= cong.energy * (1 + 1e-12)
    assert full.kkt_residual < 1e-8
    assert any(x for s in full.segments for M in (s.params.B, s.params.V) for r in M for x in r)


def test_full_class_certificate_passes_and_perturbed_fails(full_result):
    _, full = full_result
    rr = ME.as_reach_result(full, S0, S1)
    cert = R.reachability_certificate(rr, S0, S1, Fraction(1), R.certificate_tolerance())
    chk = verify_certificate(cert)
    assert chk.valid, chk.reason
    doc = json.loads(json.dumps(cert))
    B = doc["witness"]["segments"][0]["B"]
    B[0][1] = str(Fraction(B[0][1]) + Fraction(1, 10 ** 6))
    assert not verify_certificate(doc).valid


# ------------------------------------------------------------ CLI

def _files(write_json, s0=S0, s1=S1):
    return (write_json(problem_to_dict(None, s0), "p0.json"), write_json(problem_to_dict(None, s1), "p1.json"))


def test_cli_min_energy_json_and_certificate(run, write_json, tmp_path):
    p, t = _files(write_json)
    cert = tmp_path / "me.json"
    code, out, err = run("reach", p, "--target", t, "--time", "1", "--min-energy", "4", "--dps", "40",
                         "--json", "--cert", cert)
    assert code == 0, err
    me = json.loads(out)["min_energy"]
    assert {"terminal_error", "kkt_residual", "energy", "constructive_energy", "controls"} <= set(me)
    assert float(me["terminal_error"]) < 1e-30 and me["terminal_error_dps"] == 40
    assert float(me["energy"]) < float(me["constructive_energy"])
    assert float(me["kkt_residual"]) < 1e-8
    # the published controls, integrated independently (float DOP853), land on the target
    from riccati_verify.numeric.flow import Segment
    from riccati_verify.core.model import Params

    segs = [Segment(Fraction(s["duration"]), Params.from_arrays(
        *[[[Fraction(x) for x in r] for r in s[k]] for k in ("A", "B", "V")], [Fraction(x) for x in s["b"]]))
        for s in me["controls"]]
    assert len(segs) == 4 and all(not np.any(float_view(s.params)[1]) for s in segs)
    fr = integrate_moments(segs, S0, 1.0, rtol=1e-12, atol=1e-14, n_samples=2)
    m1, C1 = float_view(S1)
    assert np.max(np.abs(fr.mean - m1)) < 1e-9 and np.max(np.abs(fr.cov - C1)) < 1e-9
    # the certificate holds the minimal-energy controls and passes verify
    doc = json.loads(cert.read_text())
    assert [s["A"] for s in doc["witness"]["segments"]] == [s["A"] for s in me["controls"]]
    assert run("verify", cert)[0] == 0


def test_cli_full_class_certificate(run, write_json, tmp_path):
    p, t = _files(write_json)
    cert = tmp_path / "full.json"
    code, out, err = run("reach", p, "--target", t, "--time", "1", "--min-energy", "2",
                         "--control-class", "full", "--json", "--cert", cert)
    assert code == 0, err
    me = json.loads(out)["min_energy"]
    assert me["control_class"] == "full" and float(me["energy"]) < float(me["constructive_energy"])
    assert run("verify", cert)[0] == 0


@pytest.mark.parametrize("extra, msg", [(["--min-energy", "0"], ""),
                                        (["--min-energy", "2", "--control-class", "affine"], "invalid choice"),
                                        (["--min-energy", "2", "--attention-only"], "attention-only"),
                                        (["--min-energy", "2", "--max-norm", "3"], "max-norm")])
def test_cli_min_energy_bad_input_exit_2(run, write_json, extra, msg):
    p, t = _files(write_json)
    code, out, err = run("reach", p, "--target", t, "--time", "1", *extra)
    assert code == 2 and msg in err and "Traceback" not in err


def test_cli_min_energy_on_an_unreachable_target_exit_1(run, write_json):
    p, t = _files(write_json, s1=Gaussian.from_arrays([0, 1], [[1, 1], [1, 1]]))
    code, out, _ = run("reach", p, "--target", t, "--time", "1", "--min-energy", "2", "--json")
    assert code == 1
    data = json.loads(out)
    assert data["min_energy"] is None and data["controls"] == []

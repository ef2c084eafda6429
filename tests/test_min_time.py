"""Minimal time under a norm bound: the certified bracket [T_lower, T_upper] (min_time.py).

Independent routes: the lower bound is tested against trajectories of explicit
admissible controls integrated by mpmath's Taylor method (flow.integrate_segments_mp,
30 digits), never against the bound's own algebra; the d = 1 minimal time against
its closed form |log(σ1/σ0)|/(2M); the constructed controls' terminal state against
that same high-precision integration.

Tolerance of the soundness test: the integrated terminal state is accurate to
~1e-27 per entry (30 digits); the bounds are Lipschitz in the state with constant
≤ 1/(2 M λ_min) ≤ 2e3 here (λ_min ≥ e^{-6}/4, M ≥ 1/4), so a sound bound may exceed
the elapsed time by at most ~1e-23: TOL = 1e-18 leaves room and still catches any
real error (which would be of the size of the bound's slack, ≫ 1e-18).
"""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from riccati_verify.core import exact
from riccati_verify.certify import reach as R
from riccati_verify.certify import min_time as MT
from riccati_verify.checker import verify_certificate
from riccati_verify.checker import check_unreachable_in_time as CK
from riccati_verify.core.errors import BlowupDetected, InputError
from riccati_verify.numeric.flow import Segment, integrate_segments_mp
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.core.result import Status
from riccati_verify.testing.strategies import gaussians, orthogonal_matrices, rationals, symmetric_matrices
from riccati_verify.numeric.views import float_view

TOL = Fraction(1, 10 ** 18)
ACCEPT = 1e-20


# ------------------------------------------------------------ helpers

def _diag(v):
    return tuple(tuple(v[i] if i == j else Fraction(0) for j in range(len(v))) for i in range(len(v)))


def _conj(Q, D):
    return exact.matmul(exact.matmul(Q, D), exact.transpose(Q))


def _to_fraction(x) -> Fraction:
    return Fraction(mpmath.nstr(x, 40, min_fixed=1, max_fixed=0))


def reached_state(segments, state0) -> Gaussian:
    m, S = integrate_segments_mp(segments, state0, dps=30)
    d = state0.dim
    cov = tuple(tuple((_to_fraction(S[i][j]) + _to_fraction(S[j][i])) / 2 for j in range(d)) for i in range(d))
    return Gaussian(tuple(_to_fraction(x) for x in m), cov)


@st.composite
def bounded_matrix(draw, d, M, kind=None):
    """A rational matrix with ‖X‖₂ ≤ M exactly: general (scaled by d·max|x| ≥ ‖X‖_F ≥ ‖X‖₂),
    or tight M·Q diag(s) Qᵀ / M·Q J Qᵀ (‖·‖₂ = M exactly for |s_i| = 1, J a rotation generator)."""
    kind = kind or draw(st.sampled_from(["general", "symmetric", "skew", "zero"]))
    if kind == "zero":
        return exact.zeros(d)
    Q = draw(orthogonal_matrices(d))
    if kind == "symmetric":
        s = draw(st.lists(st.sampled_from([Fraction(1), Fraction(-1), Fraction(1, 2)]), min_size=d, max_size=d))
        return exact.scale(M, _conj(Q, _diag(s)))
    if kind == "skew" and d >= 2:
        J = [[Fraction(0)] * d for _ in range(d)]
        J[0][1], J[1][0] = Fraction(1), Fraction(-1)
        return exact.scale(M, _conj(Q, tuple(map(tuple, J))))
    X = draw(st.lists(st.lists(rationals(-1, 1), min_size=d, max_size=d), min_size=d, max_size=d))
    big = max(abs(x) for r in X for x in r)
    return exact.scale(M / (d * big), exact.as_matrix(X)) if big else exact.zeros(d)


@st.composite
def bounded_vector(draw, d, M):
    if draw(st.booleans()):
        return (Fraction(0),) * d
    Q = draw(orthogonal_matrices(d))
    c = draw(rationals(-1, 1))
    return tuple(M * c * Q[i][0] for i in range(d))   # |Q e1| = 1 exactly


@st.composite
def bounded_controls(draw, d, M, full):
    segs = []
    for _ in range(draw(st.integers(1, 3))):
        A = draw(bounded_matrix(d, M))
        B = draw(bounded_matrix(d, M, "general" if full else "zero"))
        V = draw(bounded_matrix(d, M, None if full else "zero"))
        segs.append(Segment(draw(st.sampled_from([Fraction(1, 8), Fraction(1, 4), Fraction(1, 2)])),
                            Params(A, B, V, draw(bounded_vector(d, M)))))
    return segs


def _admissible(seg, M):
    return MT.admissible(seg.params, M)


# ------------------------------------------------------------ (a) soundness of T_lower

def _sound(state0, segs, M, cls):
    assert all(_admissible(s, M) for s in segs)   # the strategy's exact norm claim
    T = sum(s.duration for s in segs)
    try:
        s1 = reached_state(segs, state0)
    except BlowupDetected:
        assume(False)
    lb = MT.time_lower_bound(state0, s1, M, cls)
    assert lb.time <= T + TOL, (lb, T)
    # and the checker refuses to certify the false claim "unreachable by T + TOL", whichever criterion is
    # named (s1 is the reached state only to ~1e-27, so at T itself the claim can be true when a bound is tight;
    # by T + TOL the bounded controls can absorb that error: the Lyapunov map A ↦ AΣ + ΣAᵀ is onto)
    for crit in CK.CRITERIA:
        res = MT.MinTimeBracket(M, cls, MT.LowerBound(T + 1, crit, "", lb.eigenvalues_initial,
                                                      lb.eigenvalues_target), None, state0.dim)
        cert = MT.unreachable_in_time_certificate(state0, s1, T + TOL, res)
        assert not verify_certificate(cert).valid


@settings(deadline=None)
@given(st.data(), st.integers(1, 3), st.sampled_from([Fraction(1, 2), Fraction(1), Fraction(2)]))
def test_lower_bound_never_exceeds_the_time_of_admissible_congruence_controls(data, d, M):
    state0 = data.draw(gaussians(d, rank=d))
    _sound(state0, data.draw(bounded_controls(d, M, full=False)), M, "congruence")


@settings(deadline=None, max_examples=10)
@given(st.data(), st.integers(1, 3), st.sampled_from([Fraction(1, 4), Fraction(1, 2)]))
def test_lower_bound_never_exceeds_the_time_of_admissible_controls_with_attention(data, d, M):
    state0 = data.draw(gaussians(d, rank=d))
    _sound(state0, data.draw(bounded_controls(d, M, full=True)), M, "full")


@settings(deadline=None, max_examples=10)
@given(st.data(), st.integers(1, 4), st.sampled_from([Fraction(1, 2), Fraction(1)]),
       st.sampled_from([Fraction(1, 4), Fraction(1, 2), Fraction(1)]))
def test_pure_stretch_at_full_norm_attains_the_bound(data, d, M, T):
    """A = M·Q Qᵀ-diagonal stretch with every s_i = +1 along Σ0's own eigenbasis multiplies every
    eigenvalue by e^{2MT}: the spectrum bound is attained, so T_lower = T (to TOL) and the
    construction (R = I) meets it: the minimal time is determined and equals T."""
    Q = data.draw(orthogonal_matrices(d))
    lam = data.draw(st.lists(rationals(Fraction(1, 4), 2), min_size=d, max_size=d, unique=True))
    state0 = Gaussian((Fraction(0),) * d, _conj(Q, _diag(lam)))
    seg = Segment(T, Params(exact.scale(M, exact.identity(d)), exact.zeros(d), exact.zeros(d), (Fraction(0),) * d))
    s1 = reached_state([seg], state0)
    br = MT.min_time_bracket(state0, s1, M, minimax_segments=0)   # the construction alone attains it
    assert abs(br.lower.time - T) <= TOL and br.lower.criterion in ("covariance", "displacement")
    assert br.determined and abs(br.upper.time - T) <= TOL


@pytest.mark.parametrize("d,M,s0,T", [(1, Fraction(1, 2), Fraction(1), Fraction(1, 2)),
                                      (2, Fraction(1, 4), Fraction(1, 2), Fraction(1)),
                                      (3, Fraction(1, 2), Fraction(1, 2), Fraction(1, 4))])
def test_full_class_bound_is_attained_by_the_comparison_riccati_flow(d, M, s0, T):
    """A = B = V = M·I on Σ0 = s0·I gives Σ̇ = 2MΣ + 2M²Σ², the comparison equation itself:
    Σ(T) = s0/W(T)·I, so the full-class spectrum bound equals T (the argument has no slack here)."""
    I = exact.identity(d)
    state0 = Gaussian((Fraction(0),) * d, exact.scale(s0, I))
    seg = Segment(T, Params(exact.scale(M, I), exact.scale(M, I), exact.scale(M, I), (Fraction(0),) * d))
    s1 = reached_state([seg], state0)
    lb = MT.time_lower_bound(state0, s1, M, "full")
    assert lb.criterion in ("covariance", "displacement") and abs(lb.time - T) <= TOL
    congruence = MT.time_lower_bound(state0, s1, M, "congruence")
    assert congruence.time > T   # unreachable without attention: the attention term did real work


# ------------------------------------------------------------ the construction

@settings(deadline=None, max_examples=12)
@given(st.data(), st.integers(1, 4), st.sampled_from([Fraction(1, 2), Fraction(2)]))
def test_construction_reaches_every_same_rank_target_within_the_bound(data, d, M):
    r = data.draw(st.integers(0, d))
    s0, s1 = data.draw(gaussians(d, rank=r)), data.draw(gaussians(d, rank=r))
    br = MT.min_time_bracket(s0, s1, M, minimax_segments=0)
    assert br.lower.time <= br.upper.time and br.upper_route == "construction"
    T = br.upper.time if br.upper.time > 0 else Fraction(1)
    segs = br.controls(T)
    assert sum(s.duration for s in segs) == T
    assert all(MT.admissible(s.params, M, "congruence") for s in segs)
    assert float(R.terminal_error_mp(segs, s0, s1)) < ACCEPT
    assert br.at(T).status is Status.CONFIRMED_NUMERICALLY and br.at(T * 3).status is Status.CONFIRMED_NUMERICALLY


# ------------------------------------------------------------ (b) d = 1 closed form

@settings(deadline=None)
@given(rationals(Fraction(1, 8), 8, max_denominator=16), rationals(Fraction(1, 8), 8, max_denominator=16),
       st.sampled_from([Fraction(1, 3), Fraction(1), Fraction(5, 2)]))
def test_d1_minimal_time_is_the_closed_form(s0, s1, M):
    assume(s0 != s1)
    a, b = Gaussian((Fraction(0),), ((s0,),)), Gaussian((Fraction(0),), ((s1,),))
    with mpmath.workdps(60):
        exact_time = abs(mpmath.log(mpmath.mpf(s1.numerator) / s1.denominator * s0.denominator / s0.numerator)) \
            / (2 * mpmath.mpf(M.numerator) / M.denominator)
        t_star = _to_fraction(exact_time)
    br = MT.min_time_bracket(a, b, M)
    assert br.lower.time <= t_star + Fraction(1, 10 ** 35) and t_star <= br.upper.time
    assert br.determined and br.width < Fraction(1, 10 ** 20) * (1 + t_star)
    assert br.at(t_star * (1 - Fraction(1, 10 ** 15))).status is Status.REFUTED
    assert br.at(t_star * (1 + Fraction(1, 10 ** 15))).status is Status.CONFIRMED_NUMERICALLY
    full = MT.time_lower_bound(a, b, M, "full")
    assert full.time <= br.lower.time     # attention can only help: its bound is weaker


# ------------------------------------------------------------ (c) aligned diagonal case

@settings(deadline=None, max_examples=10)
@given(st.data(), st.integers(2, 4))
def test_aligned_eigenbases_determine_the_minimal_time(data, d):
    Q = data.draw(orthogonal_matrices(d))
    lam0 = sorted(data.draw(st.lists(rationals(Fraction(1, 4), 2), min_size=d, max_size=d, unique=True)))
    lam1 = sorted(data.draw(st.lists(rationals(Fraction(1, 4), 2), min_size=d, max_size=d, unique=True)))
    assume(lam0 != lam1)
    zero = (Fraction(0),) * d   # a moving mean would need b on top, and the bracket may open up
    s0, s1 = Gaussian(zero, _conj(Q, _diag(lam0))), Gaussian(zero, _conj(Q, _diag(lam1)))
    M = Fraction(1)
    br = MT.min_time_bracket(s0, s1, M, minimax_segments=0)
    rho = max(abs(mpmath.log(mpmath.mpf(b.numerator) / b.denominator * a.denominator / a.numerator))
              for a, b in zip(lam0, lam1)) / 2
    assert br.determined and br.width < Fraction(1, 10 ** 20)
    assert abs(float(br.upper.time) - float(rho)) < 1e-14
    segs = br.controls(br.upper.time)
    assert all(_admissible(s, M) for s in segs)
    assert float(R.terminal_error_mp(segs, s0, s1)) < ACCEPT


# ------------------------------------------------------------ (d) cases that stay open

def _transport_time(S0, S1) -> float:
    """‖log T‖₂ of the optimal-transport map T = Σ0^{-1/2}(Σ0^{1/2}Σ1Σ0^{1/2})^{1/2}Σ0^{-1/2} (scipy)."""
    import numpy as np
    from scipy.linalg import sqrtm

    h = sqrtm(np.array(S0, float)).real
    hi = np.linalg.inv(h)
    T = hi @ sqrtm(h @ np.array(S1, float) @ h).real @ hi
    return float(np.max(np.abs(np.log(np.linalg.eigvalsh((T + T.T) / 2)))))


@pytest.mark.parametrize("cov1,rotation_stretch", [
    ([[2, 0], [0, 1]], mpmath.log(2) / 2),             # swap: a stretch along the same axes (pairing 1<->2)
    ([["3/2", "1/2"], ["1/2", "3/2"]], mpmath.pi / 4),  # the same spectrum, rotated by π/4
])
def test_rotated_targets_are_not_determined(cov1, rotation_stretch):
    """The construction's time is the shorter of its two routes, ‖log T_ot‖₂ computed here independently
    (scipy sqrtm); for the π/4 rotation the transport map (0.240) beats rotating (π/4), yet the spectra
    agree, so only the displacement bound (0.185) is positive and the bracket stays open.  The optimised
    route may only shorten T_upper (it does, by ~1e-4, on the π/4 rotation)."""
    s0 = Gaussian.from_arrays([0, 0], [[1, 0], [0, 2]])
    s1 = Gaussian((Fraction(0),) * 2, exact.as_matrix([[Fraction(x) for x in r] for r in cov1]))
    br = MT.min_time_bracket(s0, s1, Fraction(1))
    assert not br.determined and br.lower.criterion == "displacement"   # the spectra agree: ρ = 0
    expected = min(float(rotation_stretch), _transport_time(s0.cov, s1.cov))
    assert abs(float(br.construction.time) - expected) < 1e-12 and br.upper.time <= br.construction.time
    between = (br.lower.time + br.upper.time) / 2
    assert br.at(between).status is Status.NOT_CERTIFIED
    res = R.reach(s0, s1, between, max_norm=Fraction(1), verify=False)
    assert not res.reachable and res.segments == [] and res.bound["verdict"] == "not certified"


# ------------------------------------------------------------ exact eigenvalue brackets

@pytest.mark.parametrize("S", [[[1, 0, 0], [0, 1, 0], [0, 0, 2]], [[1, 1, 0], [1, 1, 0], [0, 0, 0]],
                               [[0, 0], [0, 0]], [["1/3", 0], [0, "1/3"]]])
def test_brackets_are_exact_for_repeated_and_zero_eigenvalues(S):
    S = exact.as_matrix([[Fraction(x) for x in r] for r in S])
    br = MT.eigenvalue_brackets(S, exact.rank(S))
    assert CK.bracket_error(S, br) is None
    assert all(hi - lo <= Fraction(1, 10 ** 20) for lo, hi in br)
    # a bracket shifted past its eigenvalue is rejected by the inertia count
    lo, hi = br[-1]
    assert CK.bracket_error(S, br[:-1] + [(hi + Fraction(1, 10 ** 6), hi + Fraction(2, 10 ** 6))]) is not None
    assert CK.bracket_error(S, br[:-1] + [(lo / 2, lo - Fraction(1, 10 ** 6))]) is not None


@given(st.integers(1, 5).flatmap(lambda d: st.tuples(*(st.integers(0, d) for _ in range(2))).flatmap(
    lambda pm: symmetric_matrices(d, inertia=(min(pm), max(pm) - min(pm), d - max(pm))))))
def test_ball_inertia_agrees_with_exact_inertia(S):
    """The checker's fast path (ball LDLᵀ, exact fallback) against exact.ldl_inertia, zero eigenvalues included."""
    _, minus, zero = exact.ldl_inertia(S)
    assert CK._inertia(S) == (minus, zero)


# ------------------------------------------------------------ (e) certificates

S0 = Gaussian.from_arrays([1, 0], [[2, Fraction(1, 2)], [Fraction(1, 2), 1]])
S1 = Gaussian.from_arrays([0, 3], [[1, 0], [0, Fraction(1, 3)]])
M1 = Fraction(1)


@pytest.fixture(scope="module")
def brackets():
    return {c: MT.min_time_bracket(S0, S1, M1, c) for c in MT.CONTROL_CLASSES}


def _roundtrip(cert):
    return json.loads(json.dumps(cert))


def _set(doc, path, value):
    doc = _roundtrip(doc)
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return doc


@pytest.mark.parametrize("cls", MT.CONTROL_CLASSES)
def test_unreachable_in_time_certificate_passes_and_tampering_fails(brackets, cls):
    br = brackets[cls]
    T = br.lower.time * Fraction(99, 100)
    cert = _roundtrip(MT.unreachable_in_time_certificate(S0, S1, T, br))
    assert verify_certificate(cert).valid, verify_certificate(cert).reason
    bad = [
        _set(cert, ["claim", "time"], str(br.lower.time * 2)),                      # larger T
        _set(cert, ["claim", "max_norm"], "100"),                                   # larger M
        _set(cert, ["claim", "target_mean"], ["1", "0"]),                           # other target (the start)
        _set(cert, ["claim", "control_class"], "attention"),                        # unknown class
        _set(cert, ["witness", "criterion"], "covariance"),                         # a criterion that does not hold
        _set(cert, ["witness", "eigenvalues_initial"], [["0", "1/2"], ["1", "2"]]),  # false brackets
        _set(cert, ["claim", "max_norm"], "-1"),
        _set(cert, ["claim", "time"], "1.5e"),
    ]
    for doc in bad:
        assert not verify_certificate(doc).valid
    # a smaller M or a shorter T is a weaker claim and stays true: honestly accepted
    assert verify_certificate(_set(cert, ["claim", "max_norm"], "1/2")).valid
    assert verify_certificate(_set(cert, ["claim", "time"], str(T / 2))).valid


def test_class_matters_for_the_certificate(brackets):
    """Between the full-class and the congruence-class bound, only the congruence claim is provable."""
    lo_full, lo_cong = brackets["full"].lower.time, brackets["congruence"].lower.time
    assert lo_full < lo_cong
    T = (lo_full + lo_cong) / 2
    cert = _roundtrip(MT.unreachable_in_time_certificate(S0, S1, T, brackets["congruence"]))
    assert verify_certificate(cert).valid
    assert not verify_certificate(_set(cert, ["claim", "control_class"], "full")).valid


def test_reached_controls_certificate_with_max_norm(brackets):
    br = brackets["congruence"]
    T = br.upper.time * (1 + Fraction(1, 10 ** 6))   # controls at ~M(1 − 1e-6): near the bound
    res = R.reach(S0, S1, T, max_norm=M1)
    assert res.reachable and res.bound["verdict"] == "reached" and res.terminal_error < ACCEPT
    assert all(_admissible(s, M1) for s in res.segments) and res.bound["controls_within_max_norm"]
    assert not any(MT.admissible(s.params, M1 * Fraction(999, 1000)) for s in res.segments[:2])
    cert = _roundtrip(R.reachability_certificate(res, S0, S1, T, R.certificate_tolerance(),
                                                 max_norm=M1))
    assert verify_certificate(cert).valid, verify_certificate(cert).reason
    assert not verify_certificate(_set(cert, ["claim", "max_norm"], "999/1000")).valid  # smaller M
    assert not verify_certificate(_set(cert, ["claim", "time"], str(T * 2))).valid  # other T


# ------------------------------------------------------------ (f) CLI

@pytest.fixture
def files(write_json):
    return (write_json({"mean": [1, 0], "cov": [[2, "1/2"], ["1/2", 1]]}, "p.json"),
            write_json({"mean": [0, 3], "cov": [[1, 0], [0, "1/3"]]}, "t.json"))


@pytest.mark.parametrize("time,cls,code,status", [
    ("10", "congruence", 0, "reached"), ("1/100", "congruence", 1, "unreachable"),
    ("1/100", "full", 1, "unreachable"), ("2", "congruence", 1, "not certified")])
def test_cli_verdicts_and_certificates(run, files, tmp_path, time, cls, code, status):
    p, t = files
    cert = tmp_path / "c.json"
    rc, out, err = run("reach", p, "--target", t, "--time", time, "--max-norm", "1", "--control-class", cls,
                       "--json", "--cert", cert)
    assert rc == code, err
    data = json.loads(out)
    assert data["status"] == status and data["bound"]["verdict"] == status
    assert Fraction(data["bound"]["time_lower_bound"]) <= Fraction(data["bound"]["time_upper_bound"])
    if status == "not certified":
        assert not cert.exists() and data["controls"] == []
    else:
        assert run("verify", cert)[0] == 0
        kind = json.loads(cert.read_text())["claim"]["kind"]
        assert kind == ("reachability" if status == "reached" else "unreachable_in_time")
    if status == "reached":
        assert data["controls"] and data["terminal_error"] < ACCEPT


def test_cli_text_reports_the_determined_minimal_time(run, write_json):
    p = write_json({"mean": [0], "cov": [[1]]}, "p.json")
    t = write_json({"mean": [0], "cov": [[4]]}, "t.json")
    rc, out, _ = run("reach", p, "--target", t, "--time", "1", "--max-norm", "1")
    assert rc == 0 and "minimal time determined: 0.693147180559945" in out   # log(4)/2


@pytest.mark.parametrize("extra,msg", [(["--max-norm", "0"], "positive"), (["--max-norm", "-1"], "positive"),
                                       (["--max-norm", "abc"], "max-norm"),
                                       (["--max-norm", "1", "--control-class", "other"], "control-class"),
                                       (["--max-norm", "1", "--attention-only"], "attention")])
def test_cli_bad_input_exit_2(run, files, extra, msg):
    p, t = files
    rc, out, err = run("reach", p, "--target", t, "--time", "1", *extra)
    assert rc == 2 and msg in err and "Traceback" not in err


def test_api_bad_input():
    with pytest.raises(InputError, match="control class"):
        MT.min_time_bracket(S0, S1, M1, "attention")
    with pytest.raises(InputError, match="rank"):
        MT.min_time_bracket(S0, Gaussian.from_arrays([0, 0], [[1, 0], [0, 0]]), M1)


# ------------------------------------------------------------ (g) the optimised T_upper route (minimax)

def _check_optimised(br, s0, s1, M):
    """Soundness of the optimised route by routes independent of the optimiser: the exact norm test,
    a 40-digit re-integration (the route itself measured at 32), the rigorous lower bound."""
    mm = br.minimax
    assert br.upper.time <= br.construction.time and br.lower.time <= br.upper.time
    if mm.upper is None:
        assert br.upper is br.construction and mm.failure
        return
    segs = mm.upper.segments
    assert len(segs) == mm.segments_count and sum(s.duration for s in segs) == mm.upper.time == mm.sup_norm / M
    assert all(MT.admissible(s.params, M, "congruence") for s in segs)
    assert float(R.terminal_error_mp(segs, s0, s1, dps=40)) < ACCEPT
    assert br.lower.time <= mm.upper.time


@settings(deadline=None, max_examples=6)
@given(st.data(), st.integers(1, 3), st.sampled_from([Fraction(1, 2), Fraction(2)]))
def test_optimised_upper_bound_is_admissible_reaches_and_never_worse(data, d, M):
    r = data.draw(st.integers(0, d))
    s0, s1 = data.draw(gaussians(d, rank=r)), data.draw(gaussians(d, rank=r))
    assume(s0 != s1)
    br = MT.min_time_bracket(s0, s1, M, minimax_segments=3)
    _check_optimised(br, s0, s1, M)
    # the bracket's controls at T ≥ T_upper (rescaled once more) stay admissible and reaching
    segs = br.controls(br.upper.time * Fraction(5, 4))
    assert all(MT.admissible(s.params, M, "congruence") for s in segs)
    assert float(R.terminal_error_mp(segs, s0, s1)) < ACCEPT


MT_EXAMPLE_M = Fraction(3)


@pytest.fixture(scope="module")
def optimised_example():
    """The lead's example: Σ0 = [[2, 1/2], [1/2, 1]], m0 = (1, 0) → diag(1, 1/3), m1 = (0, 3), M = 3."""
    return MT.min_time_bracket(S0, S1, MT_EXAMPLE_M, minimax_segments=4)


def test_optimiser_clearly_beats_the_construction_and_the_minimal_energy_controls(optimised_example):
    """Baselines computed here by other routes: the construction (rotation + stretch / transport map,
    minimax_segments = 0) and minimal-energy controls on the same grid rescaled by their own sup-norm
    (min_energy.minimal_energy, the optimiser's start)."""
    import numpy as np
    from riccati_verify.certify import min_energy as ME

    br = optimised_example
    _check_optimised(br, S0, S1, MT_EXAMPLE_M)
    built = MT.min_time_bracket(S0, S1, MT_EXAMPLE_M, minimax_segments=0)
    assert built.upper_route == "construction" and built.upper.time == br.construction.time
    assert br.upper_route == "optimised" and br.report()["upper_bound_route"] == "optimised"
    assert br.upper.time < Fraction(3, 4) * built.upper.time
    start = R.steer_congruence(S0, S1, Fraction(1)).segments
    me = ME.minimal_energy(S0, S1, start, n_segments=4, verify_dps=None)
    n_energy = max(max(np.linalg.norm(np.asarray(float_view(s.params)[0]), 2), np.linalg.norm(float_view(s.params)[3]))
                   for s in me.segments)
    assert float(br.upper.time) < n_energy / float(MT_EXAMPLE_M)
    assert br.lower.time < br.upper.time and not br.determined


def test_optimised_controls_certificate_passes_and_tampering_fails(optimised_example):
    br = optimised_example
    T = br.upper.time
    res = R.reach(S0, S1, T, max_norm=MT_EXAMPLE_M, min_time_segments=4)
    assert res.reachable and res.bound["upper_bound_route"] == "optimised" and res.bound["controls_within_max_norm"]
    assert res.terminal_error < ACCEPT
    cert = _roundtrip(R.reachability_certificate(res, S0, S1, T, R.certificate_tolerance(),
                                                 max_norm=MT_EXAMPLE_M))
    assert verify_certificate(cert).valid, verify_certificate(cert).reason
    # the sup-norm is attained up to 1e-30: a bound 1e-6 smaller is refused
    smaller = str(MT_EXAMPLE_M * (1 - Fraction(1, 10 ** 6)))
    assert not verify_certificate(_set(cert, ["claim", "max_norm"], smaller)).valid
    a00 = Fraction(cert["witness"]["segments"][0]["A"][0][0]) + Fraction(1, 10 ** 6)
    tampered = _roundtrip(cert)
    tampered["witness"]["segments"][0]["A"][0][0] = str(a00)
    assert not verify_certificate(tampered).valid
    assert not verify_certificate(_set(cert, ["claim", "time"], str(T * 2))).valid


def test_optimiser_started_from_the_construction_only_descends():
    """From the construction's own (reaching) controls the SL1QP descends on N + ρ‖c‖₁ from N_c, so the
    result is at most the construction's time (up to the ~1e-8 final return to c = 0), admissible and reaching."""
    M = Fraction(1)
    built = MT.bounded_construction(S0, S1, M)
    mm = MT.minimax_controls(S0, S1, M, 4, start=built)
    assert mm.start == "construction" and mm.upper is not None and mm.failure is None
    assert mm.segments_count >= len(built.segments)
    assert float(mm.upper.time) <= float(built.time) * (1 + 1e-6)
    assert all(MT.admissible(s.params, M, "congruence") for s in mm.upper.segments)
    assert float(R.terminal_error_mp(mm.upper.segments, S0, S1, dps=40)) < ACCEPT


def test_optimiser_failure_or_skip_keeps_the_construction(monkeypatch):
    monkeypatch.setattr(MT, "MINIMAX_MAX_DIM", 1)
    br = MT.min_time_bracket(S0, S1, MT_EXAMPLE_M)
    assert br.upper is br.construction and br.upper_route == "construction"
    assert br.minimax.failure.startswith("skipped") and br.report()["minimax"]["time"] is None
    monkeypatch.setattr(MT, "MINIMAX_ACCEPT", mpmath.mpf(0))   # no terminal error is small enough
    monkeypatch.setattr(MT, "MINIMAX_MAX_DIM", 8)
    br = MT.min_time_bracket(S0, S1, MT_EXAMPLE_M)
    assert br.upper is br.construction and "terminal error" in br.minimax.failure
    with pytest.raises(InputError, match="segments"):
        MT.minimax_controls(S0, S1, MT_EXAMPLE_M, 17)


def test_d1_with_the_optimiser_stays_determined_at_the_closed_form():
    """d = 1: N* = |log(σ1/σ0)|/2 with the mean still; whichever route wins, the bracket closes."""
    a, b = Gaussian((Fraction(0),), ((Fraction(1, 2),),)), Gaussian((Fraction(0),), ((Fraction(9, 2),),))
    br = MT.min_time_bracket(a, b, Fraction(2), minimax_segments=4)
    _check_optimised(br, a, b, Fraction(2))
    assert br.determined and abs(float(br.upper.time) - float(mpmath.log(9) / 4)) < 1e-14


def test_cli_min_time_segments(run, files, optimised_example, monkeypatch):
    """The first run asks for the bracket `optimised_example` already holds (the same states, M = 3
    and the default 4 minimax segments, ~7 s of optimisation): that call gets the fixture's bracket;
    a call with any other arguments runs `min_time_bracket` itself."""
    bracket = MT.min_time_bracket

    def shared(state0, target, M, control_class="congruence", minimax_segments=4):
        if (state0, target, M, control_class, minimax_segments) == (S0, S1, MT_EXAMPLE_M, "congruence", 4):
            return optimised_example
        return bracket(state0, target, M, control_class, minimax_segments)

    monkeypatch.setattr(MT, "min_time_bracket", shared)
    p, t = files
    rc, out, _ = run("reach", p, "--target", t, "--time", "10", "--max-norm", "3", "--json")
    data = json.loads(out)
    assert rc == 0 and data["bound"]["upper_bound_route"] == "optimised" and data["bound"]["minimax"]["segments"] == 4
    rc, out, _ = run("reach", p, "--target", t, "--time", "10", "--max-norm", "3", "--min-time-segments", "0")
    assert rc == 0 and "upper bound by the construction route" in out
    rc, _, err = run("reach", p, "--target", t, "--time", "1", "--min-time-segments", "2")
    assert rc == 2 and "--max-norm" in err and "Traceback" not in err


def test_exact_spectral_norm_test_is_sharp():
    """exact.norm2_at_most decides ‖X‖₂ ≤ c exactly: σ_max([[1, 1], [0, 1]]) is the golden ratio
    (1 + √5)/2 = 1.6180339887…, and a diagonal matrix's norm is its largest |entry|."""
    from riccati_verify.core import exact

    shear = ((Fraction(1), Fraction(1)), (Fraction(0), Fraction(1)))
    assert exact.norm2_at_most(shear, Fraction(16180340, 10 ** 7))
    assert not exact.norm2_at_most(shear, Fraction(16180339, 10 ** 7))
    diag = ((Fraction(-4), Fraction(0)), (Fraction(0), Fraction(3)))
    assert exact.norm2_at_most(diag, Fraction(4)) and not exact.norm2_at_most(diag, Fraction(4) - Fraction(1, 10 ** 30))

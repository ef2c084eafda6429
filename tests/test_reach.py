"""Reachability: constructed controls, the rank obstruction, bounded controls (MATH.md §3–4).

Every constructed control sequence is judged by an independent route: eq. 1.1
integrated under the published exact controls with mpmath's Taylor method at
`VERIFY_DPS` digits (flow.integrate_segments_mp), never by the construction's
own algebra.  The 1e-20 threshold is the acceptance bound; the method's own
error is ~10^-(VERIFY_DPS - 2) (integration tolerance 10^-dps, controls
rounded at 45 digits), so a pass is not a tuned tolerance.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from riccati_verify.core import exact
from riccati_verify.certify import reach as R
from riccati_verify.certify import controls as CT, steering as ST
from riccati_verify.core.errors import InputError
from riccati_verify.core.model import Gaussian
from riccati_verify.testing.strategies import gaussians, orthogonal_matrices

ACCEPT = 1e-20
horizons = st.sampled_from([Fraction(1, 4), Fraction(1, 2), Fraction(1), Fraction(3, 2)])


@st.composite
def same_rank_pairs(draw, dims=st.integers(1, 6), full_rank=False):
    d = draw(dims)
    r = d if full_rank else draw(st.integers(0, d))
    return draw(gaussians(d, rank=r)), draw(gaussians(d, rank=r))


@st.composite
def different_rank_pairs(draw):
    d = draw(st.integers(1, 6))
    r0 = draw(st.integers(0, d))
    r1 = draw(st.integers(0, d).filter(lambda r: r != r0))
    # no PSD draw is filtered: the ranks are prescribed exactly by the strategy
    return draw(gaussians(d, rank=r0)), draw(gaussians(d, rank=r1))


def _mp(M):
    return CT.mp_matrix(M)


@pytest.mark.parametrize("d", range(1, 7))
@settings(max_examples=2)
@given(data=st.data(), T=horizons)
def test_same_rank_targets_are_reached(d, data, T):
    s0, s1 = data.draw(same_rank_pairs(dims=st.just(d)))
    res = R.reach(s0, s1, T)
    assert res.reachable and res.rank_initial == res.rank_target == s0.rank
    assert sum(Fraction(s.duration) for s in res.segments) == T
    for s in res.segments:  # the congruence route uses B = V = 0 only
        assert not any(x for r in s.params.B + s.params.V for x in r)
    assert res.terminal_error < ACCEPT


@settings(max_examples=6)
@given(same_rank_pairs(dims=st.integers(1, 3), full_rank=True), horizons)
def test_attention_only_reaches_full_rank_targets(pair, T):
    s0, s1 = pair
    res = R.reach(s0, s1, T, attention_only=True)
    assert res.reachable
    for s in res.segments:
        assert not any(x for r in s.params.A for x in r)   # A = 0 throughout
    # b is used only when no linear flow can move the mean: m = 0 at an end, or d = 1 with a sign change
    needs_b = (not any(s0.mean) and any(s1.mean)) or (any(s0.mean) and not any(s1.mean)) or \
              (s0.dim == 1 and s0.mean[0] * s1.mean[0] < 0)
    assert res.uses_b == needs_b
    assert res.terminal_error < ACCEPT


@given(different_rank_pairs(), horizons)
def test_different_rank_is_unreachable_with_certificate(pair, T):
    from riccati_verify.checker import verify_certificate

    s0, s1 = pair
    res = R.reach(s0, s1, T)
    assert not res.reachable and res.segments == [] and res.controls() == []
    assert "rank obstruction" in res.reason
    chk = verify_certificate(R.unreachable_certificate(s0, s1))
    assert chk.valid, chk.reason


@given(gaussians(st.integers(1, 5)))
def test_rank_decision_is_exact(s0):
    # a PSD perturbation of size 1e-30 along a kernel vector changes the exact rank: the decision follows it
    d = s0.dim
    if s0.rank == d:
        return
    eps = Fraction(1, 10 ** 30)
    # add eps·vvᵀ along a null vector of Σ0 (an exact kernel vector over Q)
    kernel = _null_vector(s0.cov)
    S1 = exact.add(s0.cov, exact.scale(eps, tuple(tuple(a * b for b in kernel) for a in kernel)))
    s1 = Gaussian(s0.mean, S1)
    assert s1.rank == s0.rank + 1
    assert not R.reach(s0, s1, Fraction(1), verify=False).reachable


def _null_vector(S):
    import sympy as sp

    v = sp.Matrix([[sp.Rational(x.numerator, x.denominator) for x in r] for r in S]).nullspace()[0]
    return tuple(Fraction(int(sp.fraction(x)[0]), int(sp.fraction(x)[1])) for x in v)


# ----------------------------------------------------------------- algebra

@settings(max_examples=10)
@given(same_rank_pairs(dims=st.integers(1, 5)))
def test_congruence_is_orientation_preserving(pair):
    s0, s1 = pair
    with mpmath.workdps(50):
        G, _ = ST.congruence(_mp(s0.cov), _mp(s1.cov), s0.rank)
        assert mpmath.det(G) > 0
        res = G * _mp(s0.cov) * G.T - _mp(s1.cov)
        assert mpmath.mnorm(res, 1) < mpmath.mpf(10) ** -40


def test_reflection_fixes_sigma0_and_flips_det():
    with mpmath.workdps(50):
        S = mpmath.matrix([[2, 1, 0], [1, 2, 0], [0, 0, 0]])
        P0 = ST.psd_congruence_factor(S, 2)
        P1 = P0 * mpmath.diag([1, 1, -1])      # same Σ (last column of P hits the E = 1 block), det < 0
        G, reflected = ST.oriented_congruence(P0, P1)
        assert reflected and mpmath.det(G) > 0
        assert mpmath.mnorm(G * S * G.T - S, 1) < mpmath.mpf(10) ** -45


@pytest.mark.parametrize("G", [
    [[-1, 0], [0, -1]],                                     # no real principal log
    [[-1, 0], [0, -2]],                                     # negative eigenvalues, no real log at all
    [[-1, 0, 0, 0], [0, -1, 0, 0], [0, 0, 2, 1], [0, 0, 0, 3]],
    [[0, -1], [1, 0]],                                      # principal log exists
])
def test_exponential_factors_multiply_to_G(G):
    with mpmath.workdps(60):
        Gm = mpmath.matrix(G)
        Ls, how = ST.exponential_factors(Gm)
        prod = mpmath.eye(Gm.rows)
        for L in Ls:
            assert all(mpmath.im(L[i, j]) == 0 for i in range(L.rows) for j in range(L.cols))
            prod = mpmath.expm(L) * prod
        assert mpmath.mnorm(prod - Gm, 1) < mpmath.mpf(10) ** -40
        ev = np.linalg.eigvals(np.array(G, float))
        has_principal_log = not any(e.real <= 0 and abs(e.imag) < 1e-12 for e in ev)
        assert (len(Ls) == 1) == has_principal_log


@settings(max_examples=10)
@given(st.integers(2, 5).flatmap(lambda d: orthogonal_matrices(d)), st.booleans())
def test_rotation_log_is_a_real_skew_logarithm(Q, flip_pair):
    with mpmath.workdps(50):
        O = _mp(Q)
        if mpmath.det(O) < 0:
            O = O * mpmath.diag([-1] + [1] * (O.rows - 1))
        if flip_pair:  # force a −1 eigenvalue pair (rotation by exactly π in a plane)
            O = O * mpmath.diag([-1, -1] + [1] * (O.rows - 2))
        L = ST.rotation_log(O)
        assert mpmath.mnorm(L + L.T, 1) == 0
        assert mpmath.mnorm(mpmath.expm(L) - O, 1) < mpmath.mpf(10) ** -30


# (bounded controls: tests/test_min_time.py)


# ---------------------------------------------------------------- edge cases

@pytest.mark.parametrize("m0,m1,uses_b", [
    ([0, 0], [1, 2], True), ([1, 2], [0, 0], True), ([1, 0], [-2, 0], False), ([0, 0], [0, 0], False)])
def test_attention_mean_steering(m0, m1, uses_b):
    s0 = Gaussian.from_arrays(m0, [[1, 0], [0, 2]])
    s1 = Gaussian.from_arrays(m1, [[2, Fraction(1, 2)], [Fraction(1, 2), 1]])
    res = R.reach(s0, s1, Fraction(1), attention_only=True)
    assert res.uses_b == uses_b and res.terminal_error < ACCEPT


def test_bad_input_is_rejected():
    s0 = Gaussian.from_arrays([0, 0], [[1, 0], [0, 1]])
    with pytest.raises(InputError, match="d = 1"):
        R.reach(s0, Gaussian.from_arrays([0], [[1]]), Fraction(1))
    with pytest.raises(InputError, match="positive"):
        R.reach(s0, s0, Fraction(0))
    with pytest.raises(InputError, match="invertible"):
        R.reach(Gaussian.from_arrays([0, 0], [[1, 0], [0, 0]]), Gaussian.from_arrays([0, 0], [[1, 0], [0, 0]]),
                Fraction(1), attention_only=True)


@pytest.mark.slow
@settings(max_examples=30)
@given(same_rank_pairs(dims=st.integers(5, 8)), horizons)
def test_same_rank_targets_are_reached_larger_d(pair, T):
    s0, s1 = pair
    assert R.reach(s0, s1, T).terminal_error < ACCEPT


# ------------------------------------------------------------ the command's verdict

_INIT = {"mean": ["1", "0"], "cov": [["2", "1/2"], ["1/2", "1"]]}
_TARGET = {"mean": ["0", "3"], "cov": [["1", "0"], ["0", "1/3"]]}


@pytest.mark.parametrize("target,extra,verdict,code", [
    (_TARGET, [], "certified", 0),                                            # ball-checked controls
    ({"mean": ["0", "3"], "cov": [["1", "1"], ["1", "1"]]}, [], "refuted", 1),  # rank 1 ≠ 2
    (_TARGET, ["--max-norm", "3", "--min-time-segments", "0"], "certified", 0),  # T = 2 ≥ T_upper ≈ 1.27
])
def test_every_reach_verdict_comes_from_the_checker(run, target, extra, verdict, code):
    import json

    T = "2" if extra else "1"
    got, out, _ = run("reach", _INIT, "--target", target, "--time", T, "--json", *extra)
    data = json.loads(out)
    assert (data["verdict"], got) == (verdict, code), data["verdict_reason"]


def test_time_bound_verdicts_are_refuted_or_not_certified(run):
    """M = 3: the mean bound gives T_lower = log(1 + √10/2)/3 ≈ 0.316 (|m0| = 1, |m1 − m0| = √10), so
    T = 1/10 is refuted by the checker; T = 1/2 lies below the construction's time and is not certified."""
    import json

    for T, verdict in (("1/10", "refuted"), ("1/2", "not certified")):
        code, out, _ = run("reach", _INIT, "--target", _TARGET, "--time", T, "--max-norm", "3",
                           "--min-time-segments", "0", "--json")
        data = json.loads(out)
        assert (data["verdict"], code) == (verdict, 1), data
    assert abs(float(Fraction(data["bound"]["time_lower_bound"])) - np.log(1 + np.sqrt(10) / 2) / 3) < 1e-12


def test_a_checker_refusal_leaves_only_a_numerical_confirmation(run, monkeypatch):
    """The 32-digit re-integration alone is a measurement: when the ball check does not accept, the
    verdict drops to 'confirmed numerically' and the exit status to 1."""
    import json

    from riccati_verify.checker.verify import CheckResult
    from riccati_verify.certify import reach as lib   # the verdict is the library's (reach_verdict)

    monkeypatch.setattr(lib, "verify_certificate", lambda cert: CheckResult(False, "refused for the test"))
    code, out, _ = run("reach", _INIT, "--target", _TARGET, "--time", "1", "--json")
    data = json.loads(out)
    assert (data["verdict"], code) == ("confirmed numerically", 1)
    assert data["reachable"] and data["terminal_error"] < 1e-20

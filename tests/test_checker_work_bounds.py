"""The trusted core's exact linear algebra on untrusted sizes (reviews, session 17).

- `exact.ldl_inertia` decides well-separated large matrices by balls first, and refuses (before it
  starts) an elimination past its work budget, instead of running for hours;
- `exact.rank` runs in flint's fmpq_mat: a 24x24 matrix of 1400-bit rationals in well under a second;
- `_reduced_riccati.checked_factor` checks C diag(D) Cᵀ = Σ0 in fmpq and reads rank C from Σ0, and
  still refuses a factor without full column rank.
"""

import random
import time
from fractions import Fraction as Q

import pytest

from riccati_verify.checker._reduced_riccati import WitnessError, checked_factor
from riccati_verify.core import exact
from riccati_verify.core.errors import WorkBudgetExceeded
from riccati_verify.core.model import Gaussian


def _random_symmetric(d: int, bits: int, seed: int) -> list:
    rng = random.Random(seed)
    S = [[Q(0)] * d for _ in range(d)]
    for i in range(d):
        for j in range(i + 1):
            S[i][j] = S[j][i] = Q(rng.getrandbits(bits) - (1 << (bits - 1)), rng.getrandbits(bits) | 1)
    return S


def _diag_dominant(d: int, bits: int, seed: int) -> list:
    """A random symmetric matrix plus a diagonal that fixes its inertia: +, −, +, … ."""
    S = _random_symmetric(d, bits, seed)
    for i in range(d):
        S[i][i] = (1 if i % 2 == 0 else -1) * (d + 1) * (1 << bits)
    return S


def test_a_large_well_separated_matrix_is_decided_by_balls():
    d = 24
    S = _diag_dominant(d, 1400, 1)
    assert exact.elimination_work(S) > exact.MAX_INERTIA_WORK     # the elimination would be refused
    t0 = time.perf_counter()
    assert exact.ldl_inertia(S) == ((d + 1) // 2, d // 2, 0)
    assert time.perf_counter() - t0 < 10


def test_a_singular_large_matrix_is_refused_before_the_elimination():
    # S = uuᵀ at d = 24: its zero pivots no ball decides, and the exact elimination of its 2800-bit
    # entries is past the budget; S + 2^-3000·I, near-singular, the balls still decide
    d = 24
    rng = random.Random(2)
    u = [Q(rng.getrandbits(1400) | 1, rng.getrandbits(1400) | 1) for _ in range(d)]
    S = [[u[i] * u[j] for j in range(d)] for i in range(d)]
    eps = Q(1, 2 ** 3000)
    near = [[S[i][j] + (eps if i == j else 0) for j in range(d)] for i in range(d)]
    assert exact.ldl_inertia(near) == (d, 0, 0)
    t0 = time.perf_counter()
    with pytest.raises(WorkBudgetExceeded, match="inertia"):
        exact.ldl_inertia(S)
    assert time.perf_counter() - t0 < 10


def test_small_matrices_keep_the_exact_answer_singular_ones_included():
    assert exact.ldl_inertia([[Q(0), Q(1)], [Q(1), Q(0)]]) == (1, 1, 0)
    assert exact.ldl_inertia([[Q(1), Q(0)], [Q(0), Q(0)]]) == (1, 0, 1)
    assert exact.ldl_inertia([[Q(0)] * 3 for _ in range(3)]) == (0, 0, 3)
    with pytest.raises(ValueError):
        exact.ldl_inertia([[Q(0), Q(1)], [Q(2), Q(0)]])


def test_rank_is_exact_and_fast():
    d = 24
    S = _random_symmetric(d, 1400, 3)
    rng = random.Random(4)
    W = [[rng.getrandbits(700) for _ in range(5)] for _ in range(d)]
    low = [[Q(sum(W[i][k] * W[j][k] for k in range(5)), 3) for j in range(d)] for i in range(d)]   # rank 5
    t0 = time.perf_counter()
    assert exact.rank(S) == d and exact.rank(low) == 5
    assert time.perf_counter() - t0 < 5
    assert exact.rank([[Q(1), Q(2), Q(3)]]) == 1 and exact.rank([[Q(0)], [Q(0)]]) == 0


def test_checked_factor_refuses_a_rank_deficient_factor():
    # C diag(D) Cᵀ = diag(1, 0) = Σ0, but C = diag(1, 0) has rank 1 < r = 2
    state = Gaussian((Q(0), Q(0)), ((Q(1), Q(0)), (Q(0), Q(0))))
    with pytest.raises(WitnessError, match="full column rank"):
        checked_factor(state, {"factor_D": ["1", "1"], "factor_C": [["1", "0"], ["0", "0"]]})
    with pytest.raises(WitnessError, match="differs from the covariance"):
        checked_factor(state, {"factor_D": ["2"], "factor_C": [["1"], ["0"]]})
    C, D = checked_factor(state, {"factor_D": ["1"], "factor_C": [["1"], ["0"]]})
    assert C == ((Q(1),), (Q(0),)) and D == (Q(1),)


def test_moment_frame_is_exact_and_bounded():
    from riccati_verify.core.frame import moment_frame

    rng = random.Random(6)
    R = lambda b: Q(rng.getrandbits(b) | 1, rng.getrandbits(b) | 1) * rng.choice((1, -1))   # noqa: E731
    d = 3
    T, A, B, V = ([[R(12) for _ in range(d)] for _ in range(d)] for _ in range(4))
    cov = exact.identity(d)
    Ti, At, Bt, Vt, St = moment_frame(T, A, B, V, cov)
    mm, tr = exact.matmul, exact.transpose
    assert mm(Ti, T) == exact.identity(d)
    assert At == mm(mm(Ti, A), T) and Bt == mm(mm(tr(T), B), T) and Vt == mm(mm(Ti, V), T)
    assert St == mm(mm(Ti, cov), tr(Ti))
    # d = 16: T⁻¹ entries of ~32,000 bits times 1400-bit controls ran for minutes; refused at once
    d = 16
    T = [[R(128) for _ in range(d)] for _ in range(d)]
    A = [[R(1400) for _ in range(d)] for _ in range(d)]
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="framed controls would cost"):
        moment_frame(T, A, A, A, exact.identity(d))
    assert time.perf_counter() - t0 < 10


def test_a_box_cover_past_its_horizon_is_refused_before_any_proof():
    from riccati_verify.checker._reduced_riccati import ReducedRiccati, check_cover

    d = 2
    I = exact.identity(d)
    sys_ = ReducedRiccati(I, exact.zeros(d), Q(1), I, (Q(1), Q(1)))
    proved = []
    sys_.positive_on = lambda a, b: proved.append((a, b)) or True
    with pytest.raises(WitnessError, match="end at"):
        check_cover(sys_, [["pd", "0", str(2 ** 100)]], Q(1), 128)
    assert proved == []                               # nothing was proved before the refusal
    check_cover(sys_, [["pd", "0", "1/2"], ["pd", "1/2", "1"]], Q(1), 128)
    assert proved == [(0, Q(1, 2)), (Q(1, 2), 1)]


def test_reasons_are_bounded(monkeypatch):
    import importlib

    from riccati_verify.checker import verify as V
    from riccati_verify.checker.verify import CheckResult

    mod = importlib.import_module("riccati_verify.checker.check_reachability")
    monkeypatch.setattr(mod, "check", lambda claim, problem, witness: CheckResult(False, "x" * 10_000))
    doc = {"format": "riccati-verify-certificate", "version": 1, "tool_version": "0",
           "claim": {"kind": "reachability"}, "params": {}, "witness": {}}
    monkeypatch.setattr(V, "check_schema", lambda *a: None)
    monkeypatch.setattr(V, "problem_from_dict", lambda d: None)
    monkeypatch.setattr(V.schema, "check_envelope", lambda d: "reachability")
    r = V.verify_certificate(doc)
    assert not r.valid and len(r.reason) == V.MAX_REASON_CHARS and r.reason.endswith("...")


def test_dyadic_step_below_the_float_exponent_range():
    from riccati_verify.checker._validated_flow import _dyadic_below

    for x in (2.0 ** -1010, 5e-324, 0.3, 2.0 ** 1000):
        h = _dyadic_below(x, Q(10) ** 400)
        assert 0 < h <= Q(x) and Q(x) < 2 * h


def _big_rational(rng) -> str:
    return f"{rng.randrange(10 ** 399, 10 ** 400)}/{rng.randrange(10 ** 399, 10 ** 400)}"


def test_hostile_parameters_are_refused_before_exact_products():
    """Final read of session 18: A, B, V with distinct 1330-bit denominators made riccati_regime's lcm
    loop build a 5-Mbit common denominator (d = 64: 124 s and 5.6 GB before the refusal; 0.17 s before
    its integer products) and one exact F(Σ0) of stationary_state take 82 s at d = 64.  The exact products
    of the Bernoulli checkers now share one budget (`check_equilibrium.exact_matmul`), checked while the
    denominators are cleared."""
    import json
    from pathlib import Path

    from riccati_verify.checker import verify_certificate

    data = Path(__file__).parent / "data" / "certificates"
    rng = random.Random(4)
    n = 64
    I = [["1" if i == j else "0" for j in range(n)] for i in range(n)]
    rr = json.loads((data / "riccati_regime.json").read_text())
    rr.update(params={"A": [[_big_rational(rng) for _ in range(n)] for _ in range(n)], "B": I, "V": I,
                      "b": ["0"] * n, "mean": ["0"] * n, "cov": I},
              claim={"kind": "riccati_regime", "regime": "equilibrium", "scope": "all_pd_states"},
              witness={"Y": I, "P_star": I})
    st = json.loads((data / "stationary_state.json").read_text())
    st.update(params={k: [[_big_rational(rng) for _ in range(n)] for _ in range(n)] for k in ("A", "B", "V")}
              | {"b": ["0"] * n, "mean": ["0"] * n, "cov": I},
              claim={"kind": "stationary_state", "positive_definite": True, "zero": False})
    for doc in (rr, st):
        t = time.perf_counter()
        res = verify_certificate(doc)
        assert not res.valid and "budget" in res.reason, res.reason
        assert time.perf_counter() - t < 10

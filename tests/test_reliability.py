"""Issue 18: bounded work on any input, no traceback, producer and checker agree.

Each finding of the adversarial review is one test here, written against the behaviour
before the fix (it failed then) and passing after it.
"""

from __future__ import annotations

import json
import os
import time
from fractions import Fraction
from pathlib import Path

import pytest

from riccati_verify.app.cli import main
from riccati_verify.checker import verify_certificate
from riccati_verify.core import exact
from riccati_verify.core.errors import InputError
from riccati_verify.core.io import MAX_ENTRY_BITS, loads_json, parse_entry, read_json_file
from riccati_verify.core.model import Gaussian

DATA = Path(__file__).parent / "data" / "certificates"
BASE = {"A": [["1/2", 0], [0, "1/2"]], "B": [[1, 0], [0, 1]], "V": 1, "mean": [0, 0], "cov": [[1, 0], [0, 1]]}


def cert(kind: str) -> dict:
    return json.loads((DATA / f"{kind}.json").read_text())


def write(tmp_path, name, doc) -> str:
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return str(p)


def run_cli(argv, capsys):
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def one_line_error(rc, err, code=2):
    assert rc == code, err
    assert "Traceback" not in err and err.count("\n") == 1, err


# --- 1. no traceback at the documented extremes ---------------------------------------

@pytest.mark.parametrize("key,value", [("cov", [["1e400", 0], [0, 1]]), ("cov", [["1e-400", 0], [0, 1]]),
                                       ("A", [["1e400", 0], [0, 1]])])
@pytest.mark.parametrize("cmd", [["blowup"], ["flow", "--time", "1"], ["check"], ["equilibrium"],
                                 ["simulate", "-N", "20", "-T", "0.1", "--quiet"]])
def test_extreme_entries_give_one_line_exit_2(tmp_path, capsys, key, value, cmd):
    f = write(tmp_path, "p.json", {**BASE, key: value})
    rc, _, err = run_cli(cmd[:1] + [f] + cmd[1:], capsys)
    one_line_error(rc, err)
    assert "floating point" in err


def test_reach_huge_time_refused_at_once(tmp_path, capsys):
    s0 = write(tmp_path, "s0.json", {"mean": [0, 0], "cov": [[1, 0], [0, 1]]})
    t0 = time.perf_counter()
    for T in ("1e400", "1e300"):
        rc, _, err = run_cli(["reach", s0, "--target", s0, "--time", T], capsys)
        one_line_error(rc, err)
    assert time.perf_counter() - t0 < 5


@pytest.mark.parametrize("flag", ["--plot"])
def test_simulate_plot_bad_path(tmp_path, capsys, flag):
    f = write(tmp_path, "p.json", BASE)
    for target in (str(tmp_path / "missing" / "x.png"), str(tmp_path)):
        with pytest.raises(SystemExit) as e:
            main(["simulate", f, "-N", "20", "-T", "0.1", flag, target])
        assert e.value.code == 2


def test_sweep_out_and_plot_bad_path(tmp_path):
    spec = write(tmp_path, "spec.json", {"family": "scalar_grid", "a": {"min": -1, "max": 1, "num": 2},
                                         "vbeta": {"min": -1, "max": 1, "num": 2}, "sigma0": 1})
    for argv in (["--out", str(tmp_path / "missing" / "r.csv")], ["--out", str(tmp_path)],
                 ["--out", str(tmp_path / "r.csv"), "--plot", str(tmp_path / "no" / "p.png")]):
        with pytest.raises(SystemExit) as e:
            main(["sweep", spec] + argv)
        assert e.value.code == 2


def test_flow_negative_digits_refused():
    with pytest.raises(SystemExit) as e:
        main(["flow", "x.json", "--time", "1", "--digits", "-5"])
    assert e.value.code == 2


def test_prove_report_never_creates_outside(tmp_path):
    with pytest.raises(SystemExit) as e:
        main(["prove", "bernoulli_scalar", "--report", str(tmp_path / "a" / "b")])
    assert e.value.code == 2
    assert not (tmp_path / "a").exists()


def test_internal_error_is_exit_3_one_line(monkeypatch, capsys):
    from riccati_verify.app.commands import verify as vcmd

    def boom(args):
        raise RuntimeError("planted\nbug")
    monkeypatch.setattr(vcmd, "run", boom)
    rc, _, err = run_cli(["verify", str(DATA / "blowup.json")], capsys)
    one_line_error(rc, err, 3)
    assert "--debug" in err
    with pytest.raises(RuntimeError):
        main(["--debug", "verify", str(DATA / "blowup.json")])


# --- the checker never crashes --------------------------------------------------------

def test_cone_collapse_cov_1e400_does_not_crash():
    doc = cert("cone_collapse")
    d = len(doc["params"]["cov"])
    doc["params"]["cov"] = [["1e400" if i == j else "0" for j in range(d)] for i in range(d)]
    res = verify_certificate(doc)       # the claim is then false (tr(P Sigma0) huge): invalid, no crash
    assert res.valid is False and res.reason


def test_cone_collapse_tiny_B_accepted_without_zero_division():
    """A true claim with B = 1e-400: k = norm_PV·norm_B underflows a float; the reason
    formatting divided by float(k) = 0.  The certificate is valid and must be accepted."""
    doc = cert("cone_collapse")
    d = len(doc["params"]["B"])
    doc["params"]["B"] = [["1e-400" if i == j else "0" for j in range(d)] for i in range(d)]
    doc["witness"]["norm_B"] = f"1/{10 ** 400}"
    res = verify_certificate(doc)
    assert res.valid, res.reason


def test_lyapunov_tiny_B_does_not_crash():
    doc = cert("lyapunov_stability")
    d = len(doc["params"]["B"])
    doc["params"]["B"] = [["1e-300" if i == j else "0" for j in range(d)] for i in range(d)]
    res = verify_certificate(doc)
    assert isinstance(res.valid, bool) and res.reason


def test_reachability_tiny_attention_segment_does_not_crash():
    doc = cert("reachability")
    seg = doc["witness"]["segments"][0]
    d = len(seg["A"])
    seg["B"] = [["1e-400" if i == j else "0" for j in range(d)] for i in range(d)]
    seg["V"] = [["1e-400" if i == j else "0" for j in range(d)] for i in range(d)]
    res = verify_certificate(doc)
    assert isinstance(res.valid, bool) and res.reason


def test_validated_flow_tiny_attention_no_overflow_and_encloses_closed_form():
    # A = b = m = 0, B = V = t·I, Σ0 = I: σ' = 2t²σ³, so σ(1) = (1 − 4t²)^(-1/2).  The step
    # guess from coefficients ~ t^k used to overflow 2.0 ** guess (an OverflowError escaped).
    import flint
    from riccati_verify.checker._validated_flow import ball_state, enclose_segment

    t = Fraction(1, 10 ** 400)
    Z, T = ((Fraction(0),) * 2,) * 2, ((t, Fraction(0)), (Fraction(0), t))
    m, S = ball_state((Fraction(0),) * 2, ((Fraction(1), Fraction(0)), (Fraction(0), Fraction(1))))
    enc = enclose_segment(m, S, Z, T, T, (Fraction(0),) * 2, Fraction(1))
    assert enc.ok, enc.reason
    with flint.ctx.workprec(400):
        t2 = flint.arb(flint.fmpq(1, 10 ** 400)) ** 2
        exact_sigma = 1 / (1 - 4 * t2).sqrt()
        assert enc.cov[0, 0].overlaps(exact_sigma) and enc.cov[1, 1].overlaps(exact_sigma)
        assert not enc.cov[0, 0].overlaps(flint.arb("1.0001"))   # a wrong value is excluded


def test_validated_flow_heuristic_overflow_is_a_failed_enclosure(monkeypatch):
    from riccati_verify.checker import _validated_flow as vf

    def overflow(*a):
        raise OverflowError("(34, 'Numerical result out of range')")

    monkeypatch.setattr(vf, "_dyadic_below", overflow)
    m, S = vf.ball_state((Fraction(0),), ((Fraction(1),),))
    one = ((Fraction(1),),)
    enc = vf.enclose_segment(m, S, one, one, one, (Fraction(0),), Fraction(1, 10))
    assert not enc.ok and enc.mean is None and "OverflowError" in enc.reason


def test_verify_turns_any_exception_into_invalid(monkeypatch):
    from riccati_verify.checker import check_blowup

    def boom(*a):
        raise OverflowError("integer division result too large for a float")
    monkeypatch.setattr(check_blowup, "check", boom)
    res = verify_certificate(cert("blowup"))
    assert not res.valid and "OverflowError" in res.reason


# --- strict envelope -----------------------------------------------------------------

@pytest.mark.parametrize("version", [True, 1.0, "1"])
def test_version_must_be_an_exact_integer(version):
    doc = cert("blowup")
    assert verify_certificate(doc).valid
    doc["version"] = version
    assert not verify_certificate(doc).valid


def test_duplicate_keys_refused():
    with pytest.raises(InputError, match="duplicate key"):
        loads_json('{"A": [[1]], "A": [[2]]}')


def test_verify_non_certificate_exit_2(tmp_path, capsys):
    f = write(tmp_path, "p.json", BASE)
    rc, _, err = run_cli(["verify", f], capsys)
    one_line_error(rc, err)


# --- bounded reading ------------------------------------------------------------------

def test_dev_zero_refused_quickly():
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    with pytest.raises(InputError, match="not a regular file"):
        read_json_file("/dev/zero")


def test_fifo_refused_without_hanging(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    p = tmp_path / "f"
    os.mkfifo(p)
    with pytest.raises(InputError, match="not a regular file"):
        read_json_file(p)


def test_oversized_regular_file(tmp_path):
    p = tmp_path / "big.json"
    p.write_text(" " * 1_000_001)
    with pytest.raises(InputError, match="larger than"):
        read_json_file(p)


# --- entries: size of the rational, and the round trip ---------------------------------

def test_entry_bound_is_on_the_rational():
    assert parse_entry("1e-300", "x") == Fraction(1, 10 ** 300)
    assert parse_entry(exact.frac_to_str(Fraction(1, 10 ** 300)), "x") == Fraction(1, 10 ** 300)
    assert parse_entry("1e400", "x") == 10 ** 400
    big = Fraction(2 ** MAX_ENTRY_BITS - 1, 2 ** MAX_ENTRY_BITS - 3)
    assert parse_entry(exact.frac_to_str(big), "x") == big     # the writer's longest form reads back
    with pytest.raises(InputError, match="bits"):
        parse_entry(str(2 ** MAX_ENTRY_BITS), "x")
    with pytest.raises(InputError, match="exponent"):
        parse_entry("1e401", "x")


def test_blowup_cert_round_trip_tiny_mean(tmp_path, capsys):
    f = write(tmp_path, "p.json", {"A": [[1]], "B": [[1]], "V": 1, "mean": ["1e-300"], "cov": [[1]]})
    c = str(tmp_path / "c.json")
    rc, out, err = run_cli(["blowup", f, "--cert", c], capsys)
    assert rc == 0, err
    rc, out, err = run_cli(["verify", c], capsys)
    assert rc == 0, out + err


# --- bounded work ---------------------------------------------------------------------

def test_psd_work_bound_refuses_before_starting():
    import random

    rng = random.Random(1)
    d = 32
    S = [[Fraction(0)] * d for _ in range(d)]
    for i in range(d):
        for j in range(i + 1):
            x = Fraction(rng.randrange(10 ** 95), rng.randrange(1, 10 ** 95)) + (d * 10 ** 95 if i == j else 0)
            S[i][j] = S[j][i] = x
    t0 = time.perf_counter()
    with pytest.raises(InputError, match="too costly"):
        Gaussian((Fraction(0),) * d, tuple(map(tuple, S)))
    assert time.perf_counter() - t0 < 3


def test_psd_exact_decisions():
    for S, psd, rank in ((((1, 0), (0, 0)), True, 1), (((1, 2), (2, 1)), False, 2), (((0, 0), (0, 0)), True, 0),
                         (((2, 1), (1, 2)), True, 2), (((0, 1), (1, 0)), False, 2)):
        F = tuple(tuple(Fraction(x) for x in r) for r in S)
        assert exact.psd_scaled(F) == (psd, rank)
        assert exact.is_psd(F) == psd


def test_common_denominator_keeps_big_d_cheap():
    d = 64
    S = tuple(tuple(Fraction(2 if i == j else 1, 10 ** 90) for j in range(d)) for i in range(d))
    assert Gaussian((Fraction(0),) * d, S).rank == d


def test_equilibrium_dimension_bound():
    from riccati_verify.checker import check_equilibrium as ce

    with pytest.raises(ValueError, match="symmetric unknowns"):
        ce.require_sym_size(33)
    ce.require_sym_size(32)


def test_lyapunov_dimension_bound_rejects_d17():
    doc = cert("lyapunov_stability")
    d = 17
    I = [["1" if i == j else "0" for j in range(d)] for i in range(d)]
    doc["params"] = {"A": I, "B": I, "V": I, "b": ["0"] * d, "mean": ["0"] * d, "cov": I}
    t0 = time.perf_counter()
    res = verify_certificate(doc)
    assert not res.valid and "bound" in res.reason
    assert time.perf_counter() - t0 < 2


def _cover_system(d: int, rank: int):
    from riccati_verify.checker import _reduced_riccati as rr

    C = tuple(tuple(Fraction(int(i == k)) for k in range(rank)) for i in range(d))
    return rr, rr.ReducedRiccati(exact.identity(d, Fraction(-1)), exact.identity(d), Fraction(1), C,
                                 (Fraction(1),) * rank)


def test_box_cover_budget_refuses_past_it_before_any_proof():
    from riccati_verify.core import balls

    rr, sys = _cover_system(1, 1)
    n = int(balls.MAX_COVER_WORK // balls.cover_unit(1, 40_000)) + 1    # one box past the budget
    boxes = [["pd", str(Fraction(k, n)), str(Fraction(k + 1, n))] for k in range(n)]
    t0 = time.perf_counter()
    with pytest.raises(rr.WitnessError, match="work budget"):
        rr.check_cover(sys, boxes, Fraction(1), 40_000)
    assert time.perf_counter() - t0 < 2          # one 40,000-bit proof alone takes ~0.05 s


def test_box_cover_unit_is_the_dimension_not_the_rank():
    """The exponential is of the 2d x 2d block: a rank-1 covariance at d = 8 costs as d = 8 (the
    old unit used the rank, so about 400 times more boxes of this size passed its budget)."""
    from riccati_verify.core import balls

    rr, sys = _cover_system(8, 1)
    n = int(balls.MAX_COVER_WORK // balls.cover_unit(8, 4000)) + 1
    assert n * balls.cover_unit(1, 4000) < balls.MAX_COVER_WORK
    boxes = [["pd", str(Fraction(k, n)), str(Fraction(k + 1, n))] for k in range(n)]
    with pytest.raises(rr.WitnessError, match="work budget"):
        rr.check_cover(sys, boxes, Fraction(1), 4000)


def test_box_cover_budget_charges_every_split(monkeypatch):
    """Splits are charged as they run: one box that does not prove at first is refused once its
    halves pass the budget, though the box count alone fits."""
    from riccati_verify.core import balls

    rr, sys = _cover_system(1, 1)
    unit = balls.cover_unit(1, 64)
    monkeypatch.setattr(balls, "MAX_COVER_WORK", 3.5 * unit)
    calls = []
    monkeypatch.setattr(sys, "positive_on", lambda a, b: calls.append((a, b)) or b - a <= Fraction(1, 8))
    with pytest.raises(rr.WitnessError, match="exceeds the checker's work budget"):
        rr.check_cover(sys, [["pd", "0", "1"]], Fraction(1), 64)
    assert len(calls) == 3                       # [0, 1], [0, 1/2], [0, 1/4]; the 4th is refused
    monkeypatch.setattr(balls, "MAX_COVER_WORK", 100 * unit)
    rr.check_cover(sys, [["pd", "0", "1"]], Fraction(1), 64)


def test_producer_emits_no_cover_past_the_checker_budget(monkeypatch):
    """With a budget too small for any cover, the mixed-sign blow-up is not certified and carries
    no certificate (the producer never emits a cover its checker would refuse for its cost)."""
    from riccati_verify import blowup_time
    from riccati_verify.certify.blowup import enclosure
    from riccati_verify.core import balls
    from riccati_verify.core.model import Params

    P = Params.from_arrays([[Fraction(1, 2), 1], [0, -1]], [[1, 0], [0, -2]], Fraction(1, 2))
    S = Gaussian((Fraction(0),) * 2, ((Fraction(1), Fraction(0)), (Fraction(0), Fraction(1))))
    full = blowup_time(P, S, digits=20)
    assert full.rigorous and full.certificate["witness"]["route"] == "radon-cover"
    n = len(full.certificate["witness"]["boxes"])
    unit = balls.cover_unit(2, full.certificate["witness"]["precision_bits"])
    monkeypatch.setattr(balls, "MAX_COVER_WORK", 2 * (n - 1) * unit)     # half of it: n - 1 boxes
    seen = []
    real = enclosure.cover_positive
    monkeypatch.setattr(enclosure, "cover_positive", lambda *a, **k: seen.append(real(*a, **k)) or seen[-1])
    res = blowup_time(P, S, digits=20)
    assert seen and all(b is None for b in seen)
    assert not res.rigorous and res.certificate is None


def _known_spectrum(diag, seed: int) -> exact.Matrix:
    """E T E⁻¹ with T upper triangular of the given diagonal (its spectrum) and E a product of
    elementary matrices I + cE_ij (inverse I − cE_ij), so the inertia is known without
    computing any eigenvalue."""
    import random

    rnd = random.Random(seed)
    d = len(diag)
    M = [[Fraction(diag[i]) if i == j else Fraction(rnd.randint(-3, 3)) if j > i else Fraction(0)
          for j in range(d)] for i in range(d)]
    for _ in range(2 * d):
        i, j, c = rnd.randrange(d), rnd.randrange(d), rnd.randint(-2, 2)
        if i != j:
            M[i] = [x + c * y for x, y in zip(M[i], M[j])]        # (I + cE_ij) M
            for r in M:                                            # M (I − cE_ij)
                r[j] -= c * r[i]
    return exact.as_matrix(M)


@pytest.mark.parametrize("diag,expected", [
    ([1, 2, -3], (2, 1)), ([-1, -1, -1, -2], (0, 4)), ([Fraction(1, 7), -5, 3, 3, -Fraction(1, 3)], (3, 2)),
    ([2], (1, 0)), ([-Fraction(1, 10 ** 30), 4, -4 + Fraction(1, 2)], (1, 2)),
])
def test_routh_inertia_on_known_spectra(diag, expected):
    """Routh decides when its table is regular ({1, 2, -3} has trace 0, a zero in the first
    column: it says None and eigen_inertia's Lyapunov step decides)."""
    from riccati_verify.certify.hypotheses import eigen_inertia

    for seed in range(3):
        A = _known_spectrum(diag, seed)
        assert exact.routh_inertia(A) == (None if sum(diag) == 0 else expected)
        assert eigen_inertia(A) == expected
        P = exact.lyapunov_solve(A, exact.identity(len(A)))      # Ostrowski–Schneider agrees
        assert exact.ldl_inertia(P)[:2] == expected


@pytest.mark.parametrize("A", [
    [[0, 1], [-1, 0]],             # ±i: on the imaginary axis
    [[1, 0], [0, -1]],             # λ and −λ (a Hurwitz determinant vanishes)
    [[0, 0], [0, -1]],             # 0 an eigenvalue
])
def test_routh_inertia_singular_case_is_none_and_inertia_falls_back(A):
    from riccati_verify.certify.hypotheses import eigen_inertia

    A = exact.as_matrix(A)
    assert exact.routh_inertia(A) is None
    assert eigen_inertia(A) is None           # the Lyapunov operator is singular for all three


def test_eigen_inertia_at_d64_by_routh():
    from riccati_verify.certify.hypotheses import eigen_inertia

    diag = [Fraction((-1) ** k * (k + 1), 3) for k in range(64)]
    A = _known_spectrum(diag, 0)
    # Routh decides (the Lyapunov route was one 2,080-unknown solve, 34 s CPU: bench_bounds)
    assert exact.routh_inertia(A) == (32, 32)
    assert eigen_inertia(A) == (32, 32)


def test_lyapunov_solve_refuses_past_its_budget_before_building_the_system():
    from riccati_verify.core.errors import WorkBudgetExceeded

    big = Fraction(2 ** 1399 + 1, 2 ** 1398 + 3)
    for A in (exact.identity(64, Fraction(-1, 2)),
              tuple(tuple(big + i + 7 * j if i == j else Fraction(1, 2 ** 1300 + i * 12 + j) for j in range(12))
                    for i in range(12))):
        t0 = time.perf_counter()
        with pytest.raises(WorkBudgetExceeded, match="past its work budget"):
            exact.lyapunov_solve(A, exact.identity(len(A)))
        assert time.perf_counter() - t0 < 1
    assert exact.lyapunov_work(exact.identity(16)) < exact.MAX_LYAPUNOV_WORK      # d = 16 fits


def test_a_refused_exact_step_makes_the_regime_undetermined_never_singular(monkeypatch):
    """V = vI at d = 2: the Riccati reduction's exact solve refused for its cost gives
    'undetermined, not certified' with the reason (a singular solve would take other branches)."""
    from riccati_verify import classify_regime
    from riccati_verify.core.model import Params

    P = Params.from_arrays([[Fraction(1, 2), 0], [0, Fraction(1, 3)]], [[-1, 0], [0, -1]], Fraction(1))
    S = Gaussian((Fraction(0),) * 2, ((Fraction(1), Fraction(0)), (Fraction(0), Fraction(1))))
    assert classify_regime(P, S).certified                     # within the budget: decided
    monkeypatch.setattr(exact, "MAX_LYAPUNOV_WORK", 1)
    res = classify_regime(P, S)
    assert res.regime == "undetermined" and not res.certified and "work budget" in res.note
    assert res.certificate is None


def test_general_v_high_digits_returns_the_best_estimate(tmp_path, capsys):
    """--digits above the general-V working maximum (60) used to exit 2 with nothing; now it is
    the best estimate at 60 with its error, labelled as an estimate."""
    import numpy as np
    from scipy.integrate import solve_ivp

    doc = {"A": [["1/2", "1/5"], ["0", "1/3"]], "B": [[1, "1/4"], [0, 1]], "V": [[1, "1/2"], ["-1/3", 1]],
           "mean": [0, 0], "cov": [[1, "1/4"], ["1/4", 1]]}
    f = write(tmp_path, "g.json", doc)
    rc, out, err = run_cli(["blowup", f, "--digits", "100", "--json"], capsys)
    assert rc == 1, err
    res = json.loads(out)
    assert res["blowup"] is True and res["rigorous"] is False and "lower" not in res and "digits" not in res
    assert "100 digits asked" in res["note"] and "best estimate" in res["note"]
    assert 0 < float(res["error_estimate"]) < 1e-12
    # independent reference: DOP853 until ‖Σ‖ = 1e10; near T* ‖Σ‖ ~ c/(T* − t), so T* is within
    # about 1e-10 of the event time (plus the integration error)
    A, B = np.array([[0.5, 0.2], [0, 1 / 3]]), np.array([[1, 0.25], [0, 1]])
    V = np.array([[1, 0.5], [-1 / 3, 1]])

    def rhs(t, y):
        S = y.reshape(2, 2)
        J = A + V @ S @ B
        return (J @ S + S @ J.T).ravel()

    big = lambda t, y: np.abs(y).max() - 1e10  # noqa: E731
    big.terminal = True
    sol = solve_ivp(rhs, (0, 10), np.array([1, 0.25, 0.25, 1.0]), method="DOP853", rtol=1e-13, atol=1e-300,
                    events=big)
    t_event = sol.t_events[0][0]
    assert abs(float(res["estimate"]) - t_event) < 1e-8
    assert abs(t_event + 1e-3 - float(res["estimate"])) > 1e-8   # a wrong estimate is told apart

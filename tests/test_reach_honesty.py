"""The reach route's honesty (review s17, H3 and P1-P3).

H3: the reachability claim's tolerance is fixed before the controls are measured, so controls
that miss the target (a minimal-energy SQP that stalls, or one that says it converged but ends
off the constraint) are not certified.  P1-P3: the minimal-time bracket and the inequalities in
the reason strings are printed rounded outward (lower bounds down, upper bounds up), so what is
printed is true: checked here by exact comparisons of the printed decimals.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from riccati_verify.certify import min_energy as ME
from riccati_verify.certify import reach as R
from riccati_verify.core.io import load_problem
from riccati_verify.core.model import Gaussian
from riccati_verify.core.result import Status

ROOT = Path(__file__).resolve().parent.parent
S0 = load_problem(str(ROOT / "examples" / "reach_init.json")).require_state()        # N(0, I), d = 2
S1 = load_problem(str(ROOT / "examples" / "reach_target.json")).require_state()
FOUR = Gaussian.from_arrays([0, 0], [[4, 0], [0, 4]])        # 4I from I at norm 1: minimal time ln 2

with mpmath.workdps(45):
    LN2_TEXT = mpmath.nstr(mpmath.log(2), 40)                 # 40 digits of ln 2
LN2 = Fraction(LN2_TEXT)
LN2_WIDTH = Fraction(1, 10 ** 38)                             # |LN2 - ln 2| < 1e-39, with room


# ------------------------------------------------------------------ H3: the tolerance

def _stall(monkeypatch, converged: bool):
    """A min-energy SQP that stops off the constraint (its iterate scaled by 1.002) and a polish
    that takes no step: the published controls miss the target by about 3e-3."""
    real_sqp, real_polish = ME.sqp, ME.polish

    def stalled_sqp(theta, prob, max_iter=0):
        th, J, its, _ = real_sqp(theta, prob, max_iter=max_iter)
        return th * 1.002, J, its, converged

    def no_polish(theta, J, prob, dps=ME.POLISH_DPS, target=ME.POLISH_TARGET, max_steps=8):
        return real_polish(theta, J, prob, dps=dps, target=target, max_steps=0)

    monkeypatch.setattr(ME, "sqp", stalled_sqp)
    monkeypatch.setattr(ME, "polish", no_polish)


@pytest.mark.parametrize("converged", [False, True])
def test_min_energy_controls_that_miss_are_not_certified(monkeypatch, converged):
    """converged=False: the review's reproducer (reach_stalled.py); converged=True: the SQP
    claims convergence, and only the measured miss (above the fixed 1e-30) stops it."""
    _stall(monkeypatch, converged)
    res = R.reach_verdict(S0, S1, Fraction(1), min_energy_segments=4)
    assert res.min_energy["converged"] is converged
    assert res.min_energy["terminal_error"] > 1e-4                 # they really miss
    assert res.status == Status.NOT_CERTIFIED
    assert res.certificate is None and res.certificate_kind is None
    assert res.min_energy["reaches_target"] is False
    assert "no certificate is issued" in res.status_reason
    assert ("did not converge" if not converged else "miss the target") in res.status_reason
    assert not res.min_energy_result.reachable


def test_cli_says_not_certified_for_stalled_min_energy(monkeypatch, cli, tmp_path):
    """The command line: exit 1, verdict not certified, no certificate written (it said
    "verdict: certified" and exit 0 for controls 3e-3 off the target)."""
    _stall(monkeypatch, False)
    cert = tmp_path / "c.json"
    out = cli("reach", str(ROOT / "examples" / "reach_init.json"), "--target",
              str(ROOT / "examples" / "reach_target.json"), "--time", "1", "--min-energy", "4", "--cert", str(cert))
    assert out.returncode == 1, out.stdout + out.stderr
    assert "verdict: not certified" in out.stdout and "did not converge" in out.stdout, out.stdout
    assert "NOT written" in out.stdout and not cert.exists()


def test_as_reach_result_is_not_reaching_unconditionally():
    e = ME.MinEnergyResult(segments=[], energy=1.0, constructive_energy=2.0, constraint_error=0.0,
                           terminal_error=1e-40, terminal_error_dps=32, kkt_residual=0.0, iterations=300,
                           polish_steps=0, converged=False, seconds=0.0)
    assert not ME.as_reach_result(e, S0, S1).reachable               # the SQP stopped by its cap
    e.converged, e.terminal_error = True, 3e-3
    assert not ME.as_reach_result(e, S0, S1).reachable               # the controls miss
    e.terminal_error = None
    assert not ME.as_reach_result(e, S0, S1).reachable               # nothing measured
    e.terminal_error = 1e-40
    assert ME.as_reach_result(e, S0, S1).reachable


def test_tolerance_is_fixed_in_advance():
    """The old rule was 10^-(3 + digits of the miss), capped at 1: a 3e-3 miss got tolerance 1."""
    assert R.certificate_tolerance() == Fraction(1, 10 ** 30)     # no measured miss enters it
    assert R.certificate_tolerance(dps=20) == Fraction(1, 10 ** 18)
    assert R.certificate_tolerance(dps=200) == Fraction(1, 10 ** 30)


def test_genuine_controls_stay_certified_at_the_fixed_tolerance():
    res = R.reach_verdict(S0, S1, Fraction(1))
    assert res.status == Status.CERTIFIED and res.reachable
    assert Fraction(res.certificate["claim"]["tolerance"]) == Fraction(1, 10 ** 30)


# ------------------------------------------------------------------ P1-P3: printed numbers

def test_printed_minimal_time_bracket_contains_ln2(cli, write_json):
    """P1: 4I from I at norm 1: the proved bracket closes on ln 2 (width ~1e-30); the printed
    one used to be [0.69314718056, 0.69314718056], which excludes ln 2."""
    target = write_json({"mean": [0, 0], "cov": [[4, 0], [0, 4]]}, "t4.json")
    out = cli("reach", str(ROOT / "examples" / "reach_init.json"), "--target", target, "--time", "1",
              "--max-norm", "1").stdout
    m = re.search(r"minimal time in \[([0-9.]+), ([0-9.]+)\]", out)
    assert m, out
    lo, hi = Fraction(m.group(1)), Fraction(m.group(2))
    assert lo < hi
    assert lo <= LN2 - LN2_WIDTH and LN2 + LN2_WIDTH <= hi, (m.group(0), LN2)
    # P3: "determined" prints only the digits both printed ends share, and ln 2 starts with them
    d = re.search(r"minimal time determined: ([0-9.]+)\.\.\.", out)
    assert d, out
    shared = d.group(1)
    assert m.group(1).startswith(shared) and m.group(2).startswith(shared)
    assert LN2_TEXT.startswith(shared) and len(shared) > 14


def test_lower_bound_reason_is_true_as_printed():
    """P2: T = 0.6931471 < ln 2: the reason used to say "rigorous lower bound 0.693147 > T"."""
    T = Fraction("0.6931471")
    res = R.reach(S0, FOUR, T, max_norm=Fraction(1), min_time_segments=0, verify=False)
    m = re.search(r"rigorous lower bound (\S+) > T", res.reason)
    assert m, res.reason
    printed = Fraction(m.group(1))
    assert printed > T                                   # the printed inequality holds
    assert printed <= res.min_time.lower.time             # and the lower bound was rounded down


def test_upper_bound_and_bracket_reasons_are_true_as_printed():
    """P2 for "T >= T_upper = X" (X rounded up) and "T lies in the bracket [lo, hi]" (outward)."""
    M = Fraction(7)
    br = R.reach(S0, S1, Fraction(1, 100), max_norm=M, min_time_segments=0, verify=False).min_time
    lower, upper = br.lower.time, br.upper.time
    assert lower < upper
    mid = (lower + upper) / 2
    inside = R.reach(S0, S1, mid, max_norm=M, min_time_segments=0, verify=False)
    m = re.search(r"bracket \[(\S+), (\S+)\]", inside.reason)
    assert m, inside.reason
    lo, hi = Fraction(m.group(1)), Fraction(m.group(2))
    assert lo <= lower and upper <= hi and lo <= mid <= hi
    T = upper                                              # T exactly at T_upper: "T >= T_upper" must hold as printed
    at = R.reach(S0, S1, T, max_norm=M, min_time_segments=0, verify=False)
    m = re.search(r"T >= T_upper = (\S+):", at.reason)
    assert m, at.reason
    assert upper <= Fraction(m.group(1)) <= T


def test_outward_rounding_helpers():
    x = Fraction(2, 3)
    assert R.decimal_bound(x, 3, False) == "0.666" and R.decimal_bound(x, 3, True) == "0.667"
    assert R.decimal_bound(-x, 3, False) == "-0.667" and R.decimal_bound(-x, 3, True) == "-0.666"
    T = Fraction("0.6666667")
    text = R.inequality_text(x, True, keeps=lambda v: v > T)   # an upper bound, rounded up
    assert Fraction(text) >= x
    lo, hi = R.outward_bracket(Fraction(1, 3), Fraction(1, 3) + Fraction(1, 10 ** 12))
    assert Fraction(lo) <= Fraction(1, 3) and Fraction(hi) >= Fraction(1, 3) + Fraction(1, 10 ** 12)
    # the ends are printed to one place past the first at which they can differ: ⌊log10 width⌋
    # exactly (width 1/3 -> first place 1 -> two places; the digit-count estimate gave one)
    assert R.outward_bracket(Fraction(1, 3), Fraction(2, 3)) == ("0.33", "0.67")
    assert R.outward_bracket(Fraction(0), Fraction(1, 10)) == ("0.00", "0.10")
    assert R.outward_bracket(Fraction(-3, 2), Fraction(-5, 4)) == ("-1.50", "-1.25")
    assert [R._floor_log10(Fraction(x)) for x in ("1/3", "1/10", "999/1000", "1", "10", "1001/1000")] == \
        [-1, -1, -1, 0, 1, 0]
    assert R.scientific_up(Fraction(87, 10 ** 32)) == "8.7e-31"
    assert R.scientific_up(Fraction(999, 1000)) == "1.0e0" and R.scientific_up(Fraction(1, 3)) == "3.4e-1"
    assert R.common_digits("123.4", "125.6") == "" and R.common_digits("0.6931", "0.6932") == "0.693"

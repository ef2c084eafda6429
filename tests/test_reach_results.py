"""The reach results in the one result protocol, the producer's own lower-bound route, and the
library's verdict (certify.reach.reach_verdict) with the checker as the only source of validity.

Every verification routine of the producer's route (`time_bounds.brackets_hold`,
`time_bounds.mean_excluded`) is shown to reject a wrong input; the verdict is shown to follow the
checker (a refusal removes CERTIFIED / REFUTED).
"""

from __future__ import annotations

import ast
import dataclasses
import re
from fractions import Fraction
from pathlib import Path

import pytest

from riccati_verify.certify import min_time as MT
from riccati_verify.certify import reach as R
from riccati_verify.certify import time_bounds as TB
from riccati_verify.checker import verify_certificate
from riccati_verify.checker import check_unreachable_in_time as CK
from riccati_verify.checker.verify import CheckResult
from riccati_verify.core.errors import InputError
from riccati_verify.core.model import Gaussian
from riccati_verify.core.result import Result, Status

S0 = Gaussian.from_arrays([0, 0], [[1, 0], [0, 2]])
S1 = Gaussian.from_arrays([1, 0], [[2, 0], [0, 3]])
RANK1 = Gaussian.from_arrays([0, 0], [[1, 0], [0, 0]])
M1 = Fraction(1)


# ------------------------------------------------------------ the result protocol

def test_reach_verdict_certified_refuted_and_not_certified():
    ok = R.reach_verdict(S0, S1, Fraction(1))
    assert isinstance(ok, Result) and ok.status is Status.CERTIFIED
    assert ok.certificate is not None and verify_certificate(ok.certificate).valid
    assert ok.to_dict()["verdict"] == "certified" and ok.to_dict()["status"] == "reached"

    rank = R.reach_verdict(S0, RANK1, Fraction(1))
    assert rank.status is Status.REFUTED and rank.certificate["claim"]["kind"] == "unreachable_rank"
    assert rank.to_dict()["status"] == "unreachable"

    br = MT.min_time_bracket(S0, S1, M1, minimax_segments=0)
    fast = R.reach_verdict(S0, S1, br.lower.time / 2, max_norm=M1, min_time_segments=0)
    assert fast.status is Status.REFUTED and fast.certificate["claim"]["kind"] == "unreachable_in_time"
    if br.lower.time < br.upper.time:
        mid = R.reach_verdict(S0, S1, (br.lower.time + br.upper.time) / 2, max_norm=M1, min_time_segments=0)
        assert mid.status is Status.NOT_CERTIFIED and mid.certificate is None and mid.certificate_check is None


def test_a_refusal_removes_the_proof(monkeypatch):
    """The verdict rests on the checker alone: refused, a reaching result is only confirmed numerically
    and an unreachable one is not certified; no document is attached to either."""
    monkeypatch.setattr(R, "verify_certificate", lambda doc: CheckResult(False, "refused for the test"))
    ok = R.reach_verdict(S0, S1, Fraction(1))
    assert ok.status is Status.CONFIRMED_NUMERICALLY and ok.certificate is None
    assert ok.status_reason == "refused for the test"
    rank = R.reach_verdict(S0, RANK1, Fraction(1))
    assert rank.status is Status.NOT_CERTIFIED and rank.certificate is None


def test_min_time_bracket_status_at_a_horizon(monkeypatch):
    br = MT.min_time_bracket(S0, S1, M1, minimax_segments=0)
    assert isinstance(br, Result) and br.status is Status.NOT_CERTIFIED      # no horizon: nothing claimed
    below = br.at(br.lower.time / 2)
    assert below.status is Status.REFUTED and verify_certificate(below.certificate).valid
    assert below.to_dict()["verdict"] == "unreachable"
    above = br.at(br.upper.time)
    assert above.status is Status.CONFIRMED_NUMERICALLY and above.certificate is None
    assert above.to_dict()["verdict"] == "reached"
    monkeypatch.setattr(MT, "verify_certificate", lambda doc: CheckResult(False, "refused for the test"))
    assert br.at(br.lower.time / 2).status is Status.NOT_CERTIFIED


def test_library_messages_name_no_flag():
    with pytest.raises(InputError) as e:
        R.reach(S0, S1, Fraction(1), attention_only=True, max_norm=M1)
    assert "--" not in str(e.value) and "attention" in str(e.value)
    with pytest.raises(InputError) as e:
        R.reach(RANK1, RANK1, Fraction(1), attention_only=True)   # singular: attention-only cannot start
    assert "--" not in str(e.value)
    for kw in ({"min_time_segments": 2}, {"min_energy_segments": 2, "max_norm": M1},
               {"min_energy_segments": 2, "attention_only": True}):
        with pytest.raises(InputError) as e:
            R.reach_verdict(S0, S1, Fraction(1), **kw)
        assert "--" not in str(e.value)


def test_no_flag_in_the_strings_of_the_reach_library():
    root = Path(__file__).resolve().parents[1] / "riccati_verify" / "certify"
    flag = re.compile(r"(?<![\w-])--[a-z]")
    for name in ("reach", "steering", "controls", "min_time", "min_energy", "time_bounds"):
        tree = ast.parse((root / f"{name}.py").read_text())
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
                and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        bad = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
               and id(n) not in docs and flag.search(n.value)]
        assert bad == [], (name, bad)


# ------------------------------------------------------------ the producer's own lower-bound route

def test_brackets_hold_accepts_true_and_rejects_wrong_brackets():
    S = ((Fraction(2), Fraction(1)), (Fraction(1), Fraction(2)))     # eigenvalues 1 and 3
    good = [(Fraction(1), Fraction(1)), (Fraction(3), Fraction(3))]
    assert TB.brackets_hold(S, good) and CK.bracket_error(S, good) is None
    for bad in ([(Fraction(11, 10), Fraction(2)), (Fraction(3), Fraction(3))],   # misses λ = 1 from above
                [(Fraction(1), Fraction(1)), (Fraction(2), Fraction(29, 10))],   # misses λ = 3 from below
                [(Fraction(3), Fraction(3)), (Fraction(1), Fraction(1))],        # not ascending
                [(Fraction(1), Fraction(1))],                                    # too few
                [(Fraction(2), Fraction(1)), (Fraction(3), Fraction(3))]):       # lo > hi
        assert not TB.brackets_hold(S, bad)
        assert CK.bracket_error(S, bad) is not None       # the checker agrees, on its own route


def test_mean_excluded_rejects_a_reachable_horizon():
    a = Gaussian.from_arrays([0], [[1]])
    b = Gaussian.from_arrays([3], [[1]])
    # b = 1 moves the mean by T: by T = 3 the target is reachable, so no bound may exclude it
    for cls in ("congruence", "full"):
        assert not TB.mean_excluded(Fraction(3), M1, cls, a, b, Fraction(1))
        assert TB.mean_excluded(Fraction(1, 100), M1, cls, a, b, Fraction(1))


@pytest.mark.parametrize("cls", MT.CONTROL_CLASSES)
@pytest.mark.parametrize("s1", [S1, Gaussian.from_arrays([0, 0], [[2, 1], [1, 2]]),
                                Gaussian.from_arrays([4, -1], [[1, 0], [0, 2]])])
def test_own_lower_bound_is_accepted_by_the_checker(cls, s1):
    lb = MT.time_lower_bound(S0, s1, M1, cls)
    assert lb.time > 0
    for S, b in ((S0.cov, lb.eigenvalues_initial), (s1.cov, lb.eigenvalues_target)):
        assert CK.bracket_error(S, b) is None
    # at T_lower itself (rounded down, so still strictly excluded); the wrapper only admits T
    br = MT.MinTimeBracket(M1, cls, dataclasses.replace(lb, time=lb.time + 1), None, 2)
    assert verify_certificate(MT.unreachable_in_time_certificate(S0, s1, lb.time, br)).valid
    # and the time of admissible reaching controls is refused (they reach by then: the claim is false)
    T = MT.bounded_construction(S0, s1, M1).time
    cert = MT.unreachable_in_time_certificate(S0, s1, T, MT.MinTimeBracket(
        M1, cls, MT.LowerBound(T + 1, lb.criterion, "", lb.eigenvalues_initial, lb.eigenvalues_target), None, 2))
    assert not verify_certificate(cert).valid


def test_rank_argument_is_the_producers_and_must_match():
    cert = R.unreachable_certificate(S0, RANK1)
    assert verify_certificate(cert).valid
    cert["witness"]["argument"] = R.RANK_ARGUMENT.replace("invertible", "nonsingular")
    assert not verify_certificate(cert).valid

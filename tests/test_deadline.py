"""The wall-clock limit of a check (`core.deadline`, `verify_certificate(max_seconds=...)`,
`riccati-verify verify --max-seconds`; review s19 F1: every witness field is bounded, but their
product can ask for hours of validated flow).

What is pinned: a check that runs out of time is *not certified* with a reason that says so (never
valid, never a verdict on the claim), no checker's own exception handler swallows the stop, a finished
check is unchanged, and a bad limit is the caller's error."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest

from riccati_verify.checker import verify_certificate
from riccati_verify.core import deadline

CERTS = Path(__file__).resolve().parent / "data" / "certificates"
# the kinds whose checks run validated flows (the step loops call deadline.check)
FLOW_KINDS = ["blowup_general", "blowup_general.turning", "trajectory_convergence", "training_nonconvexity"]


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, True, "1"])
def test_a_bad_limit_is_refused(bad):
    with pytest.raises(ValueError):
        with deadline.time_limit(bad):
            pass
    with pytest.raises(ValueError):
        verify_certificate(json.loads((CERTS / "equilibrium.json").read_text()), max_seconds=bad)


def test_check_stops_only_after_the_limit_and_an_inner_limit_never_extends_an_outer_one():
    deadline.check()                                  # no limit: nothing happens
    assert deadline.remaining() is None
    with deadline.time_limit(60):
        deadline.check()
        assert 0 < deadline.remaining() <= 60
        with deadline.time_limit(1e-3):
            time.sleep(0.01)
            with pytest.raises(deadline.TimeLimit):
                deadline.check()
        deadline.check()                              # the outer minute is not spent
        with deadline.time_limit(3600):
            assert deadline.remaining() <= 60         # the outer limit stays in force
    assert deadline.remaining() is None


def test_the_stop_passes_through_exception_handlers():
    with deadline.time_limit(1e-9):
        time.sleep(0.001)
        with pytest.raises(deadline.TimeLimit):
            try:
                deadline.check()
            except Exception:                          # noqa: BLE001 - what the checkers' handlers catch
                pytest.fail("TimeLimit was caught as an ordinary Exception")


@pytest.mark.parametrize("name", FLOW_KINDS)
def test_a_check_out_of_time_is_not_certified_and_a_finished_one_is_unchanged(name):
    doc = json.loads((CERTS / f"{name}.json").read_text())
    res = verify_certificate(doc, max_seconds=1e-9)
    assert not res.valid
    assert res.reason.startswith("not certified: the check did not finish within its time limit")
    assert deadline.remaining() is None               # the limit ends with the call
    full = verify_certificate(doc, max_seconds=3600)
    assert full.valid, full.reason


def test_the_command_line_option(run):
    cert = json.loads((CERTS / "blowup_general.turning.json").read_text())
    code, out, err = run("verify", cert, "--max-seconds", "1e-9")
    assert code == 1 and "did not finish" in out and err == ""
    code, out, err = run("verify", cert, "--max-seconds", "-1")
    assert code == 2 and out == "" and "--max-seconds must be a positive number" in err


def test_a_check_out_of_time_on_two_cores_leaves_no_second_process(monkeypatch):
    """The stop can come while `_stage1`'s speculative second process runs: the check is still not
    certified, and that process is stopped, not left behind (review s19, L2)."""
    from riccati_verify.checker import _stage1

    monkeypatch.setenv("RICCATI_VERIFY_THREADS", "2")
    monkeypatch.setattr(_stage1, "MIN_WORK", 0)                # a cut, so a second process, on this small chain
    procs = []
    real = _stage1._Speculation.__init__

    def recording(self, job):
        real(self, job)
        procs.append(self.proc)

    monkeypatch.setattr(_stage1._Speculation, "__init__", recording)
    doc = json.loads((CERTS / "blowup_general.json").read_text())
    res = verify_certificate(doc, max_seconds=0.05)
    assert not res.valid and "did not finish" in res.reason
    assert procs, "no second process was started: the test did not reach the two-core path"
    assert all(p.poll() is not None for p in procs)

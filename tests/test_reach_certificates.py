"""Reachability certificates and the `reach` command: valid ones pass `verify`, tampered ones fail."""

from __future__ import annotations

import copy
import json
from fractions import Fraction

import pytest

from riccati_verify import reach as R
from riccati_verify.certificates.checker import verify_certificate
from riccati_verify.model import Gaussian

S0 = Gaussian.from_arrays([1, 0], [[2, Fraction(1, 2)], [Fraction(1, 2), 1]])
S1 = Gaussian.from_arrays([0, 3], [[1, 0], [0, Fraction(1, 3)]])
RANK1 = Gaussian.from_arrays([0, 3], [[1, 1], [1, 1]])


@pytest.fixture(scope="module")
def reach_cert():
    res = R.reach(S0, S1, Fraction(1))
    tol = R.certificate_tolerance(res.terminal_error)
    return R.reachability_certificate(res, S0, S1, Fraction(1), tol)


@pytest.fixture(scope="module")
def rank_cert():
    return R.unreachable_certificate(S0, RANK1)


def _set(doc, path, value):
    doc = copy.deepcopy(doc)
    obj = doc
    for k in path[:-1]:
        obj = obj[k]
    obj[path[-1]] = value(obj[path[-1]]) if callable(value) else value
    return doc


def _bump(s, by="1/10000000000"):
    return str(Fraction(s) + Fraction(by))


def test_reachability_certificate_is_valid(reach_cert):
    res = verify_certificate(reach_cert)
    assert res.valid, res.reason
    assert Fraction(reach_cert["claim"]["tolerance"]) <= Fraction(1, 10 ** 20)


def test_rigorous_check_rounds_trip_through_json(reach_cert, tmp_path):
    doc = json.loads(json.dumps(reach_cert))
    assert verify_certificate(doc).valid


@pytest.mark.parametrize("path,value", [
    (("witness", "segments", 0, "A", 0, 1), _bump),                           # perturbed control
    (("witness", "segments", 0, "b", 1), lambda s: _bump(s, "1/10**0" if False else "1/1000000000000000000000")),
    (("witness", "segments", 0, "duration"), "1/2"),                          # durations no longer sum to T
    (("claim", "time"), "2"),                                                 # wrong horizon
    (("claim", "tolerance"), "1/10000000000000000000000000000000000000000000000000000000000000"),
    (("claim", "target_mean", 0), "1/1000000000"),                            # wrong target
    (("claim", "target_cov", 1, 1), _bump),
    (("params", "mean", 0), "1/2"),                                           # wrong initial state
    (("witness", "segments", 0, "B"), [["1/1000000000000000000000000000000000", "0"], ["0", "0"]]),
    (("witness", "segments", 0, "A", 0, 0), "x"),                             # malformed number
])
def test_tampered_reachability_certificates_fail(reach_cert, path, value):
    res = verify_certificate(_set(reach_cert, path, value))
    assert not res.valid


def test_rank_certificate_is_valid_and_tampering_fails(rank_cert):
    assert verify_certificate(rank_cert).valid
    assert not verify_certificate(_set(rank_cert, ("claim", "rank_target"), 2)).valid
    assert not verify_certificate(_set(rank_cert, ("claim", "rank_initial"), 1)).valid
    # same rank after tampering the target: no obstruction any more
    same = _set(_set(rank_cert, ("claim", "target_cov"), [["1", "0"], ["0", "1"]]), ("claim", "rank_target"), 2)
    assert not verify_certificate(same).valid
    assert not verify_certificate(_set(rank_cert, ("witness", "argument"), "trust me")).valid
    # a non-PSD target is malformed, not certified
    assert not verify_certificate(_set(rank_cert, ("claim", "target_cov"), [["1", "2"], ["2", "1"]])).valid


# ------------------------------------------------------------------- CLI

@pytest.fixture
def files(write_json):
    p = write_json({"mean": [1, 0], "cov": [[2, "1/2"], ["1/2", 1]]}, "p.json")
    t = write_json({"mean": [0, 3], "cov": [[1, 0], [0, "1/3"]]}, "t.json")
    return p, t


def test_cli_reach_json_and_certificate(cli, files, tmp_path):
    p, t = files
    cert = tmp_path / "c.json"
    r = cli("reach", p, "--target", t, "--time", "1/2", "--json", "--cert", cert)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["reachable"] is True and out["terminal_error"] < 1e-20
    for seg in out["controls"]:
        assert set(seg) == {"duration", "A", "B", "V", "b"}
        assert len(seg["V"]) == 2 and len(seg["V"][0]) == 2     # V as a matrix
    assert sum(Fraction(s["duration"]) for s in out["controls"]) == Fraction(1, 2)
    assert cli("verify", cert).returncode == 0
    doc = json.loads(cert.read_text())
    doc["witness"]["segments"][-1]["b"][0] = _bump(doc["witness"]["segments"][-1]["b"][0], "1/1000")
    cert.write_text(json.dumps(doc))
    assert cli("verify", cert).returncode == 1


def test_cli_unreachable_exit_1_with_certificate(cli, files, write_json, tmp_path):
    p, _ = files
    t = write_json({"mean": [0, 0], "cov": [[1, 1], [1, 1]]}, "t1.json")
    cert = tmp_path / "u.json"
    r = cli("reach", p, "--target", t, "--time", "1", "--json", "--cert", cert)
    assert r.returncode == 1
    out = json.loads(r.stdout)
    assert out["reachable"] is False and out["controls"] == [] and "rank" in out["reason"]
    assert cli("verify", cert).returncode == 0


@pytest.mark.parametrize("target,time,msg", [
    ({"mean": [0, 0], "cov": [[1, 2], [2, 1]]}, "1", "positive semidefinite"),
    ({"mean": [0, 0], "cov": [[1, 0], [1, 1]]}, "1", "not symmetric"),
    ({"mean": [0], "cov": [[1]]}, "1", "d = 1"),
    ({"mean": [0, 0], "cov": [[1, 0], [0, 1]]}, "0", "positive"),
    ({"mean": [0, 0], "cov": [[1, 0], [0, 1]]}, "-1/2", "positive"),
    ({"mean": [0, 0], "cov": [[1, 0], [0, 1]]}, "soon", "malformed"),
    ({"mean": [0, 0]}, "1", "'mean' and 'cov'"),
])
def test_cli_bad_input_exit_2(cli, files, write_json, target, time, msg):
    p, _ = files
    t = write_json(target, "bad.json")
    r = cli("reach", p, "--target", t, f"--time={time}")
    assert r.returncode == 2
    assert msg in r.stderr and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1

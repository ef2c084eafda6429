"""Reachability certificates and the `reach` command: valid ones pass `verify`, tampered ones fail."""

from __future__ import annotations

import copy
import json
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from riccati_verify.certify import reach as R
from riccati_verify.testing import strategies as rst
from riccati_verify.checker import verify_certificate
from riccati_verify.core.model import Gaussian

S0 = Gaussian.from_arrays([1, 0], [[2, Fraction(1, 2)], [Fraction(1, 2), 1]])
S1 = Gaussian.from_arrays([0, 3], [[1, 0], [0, Fraction(1, 3)]])
RANK1 = Gaussian.from_arrays([0, 3], [[1, 1], [1, 1]])


@pytest.fixture(scope="module")
def reach_cert():
    res = R.reach(S0, S1, Fraction(1))
    tol = R.certificate_tolerance()
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
    (("witness", "segments", 0, "V"), [["1/10000000000", "0"], ["0", "0"]]),   # attention switched on
    (("witness", "segments", 0, "A", 0, 0), "x"),                             # malformed number
])
def test_tampered_reachability_certificates_fail(reach_cert, path, value):
    res = verify_certificate(_set(reach_cert, path, value))
    assert not res.valid


def test_harmless_perturbation_is_accepted_within_tolerance(reach_cert):
    """The claim is "within tolerance": switching on attention by 1e-60 (V) moves the terminal state
    by ~1e-60, far below the 1e-30 tolerance, so the (now validated-Taylor) check still accepts it and
    reports the error it proved.  B alone changes nothing (it enters only through V Σ B)."""
    doc = _set(reach_cert, ("witness", "segments", 0, "V"), [["1/10" + "0" * 59, "0"], ["0", "1/10" + "0" * 59]])
    assert not verify_certificate(doc).valid          # its statement still says B = V = 0: now false
    del doc["claim"]["statement"]                     # the statement is optional
    res = verify_certificate(doc)
    assert res.valid, res.reason
    assert "validated Taylor steps" in res.reason and "largest entry error" in res.reason
    only_b = _set(reach_cert, ("witness", "segments", 0, "B"), [["1000", "0"], ["0", "0"]])
    del only_b["claim"]["statement"]
    assert verify_certificate(only_b).valid


# ------------------------------------------------- attention-only (validated Taylor route)

@pytest.fixture(scope="module")
def attention_cert():
    res = R.reach(S0, S1, Fraction(1), attention_only=True)
    tol = R.certificate_tolerance()
    return R.reachability_certificate(res, S0, S1, Fraction(1), tol, max_norm=Fraction(5))


def test_attention_only_certificate_is_valid(attention_cert):
    segs = attention_cert["witness"]["segments"]
    assert any(Fraction(x) != 0 for s in segs for r in s["V"] for x in r)
    assert any(Fraction(x) != 0 for s in segs for r in s["B"] for x in r)
    assert "B = V = 0" not in attention_cert["claim"]["statement"]
    res = verify_certificate(attention_cert)
    assert res.valid, res.reason
    assert "validated Taylor steps" in res.reason and "norm <= 5" in res.reason
    assert Fraction(attention_cert["claim"]["tolerance"]) <= Fraction(1, 10 ** 20)
    no_bound = copy.deepcopy(attention_cert)
    del no_bound["claim"]["max_norm"]                                     # a weaker claim: still valid
    assert not verify_certificate(no_bound).valid                         # once its statement drops the norm
    no_bound["claim"]["statement"] = no_bound["claim"]["statement"].replace(", and every control has 2-norm <= max_norm", "")
    assert verify_certificate(no_bound).valid


@pytest.mark.parametrize("path,value", [
    (("witness", "segments", 0, "B", 0, 1), _bump),                       # perturbed attention controls
    (("witness", "segments", 0, "V", 1, 1), _bump),
    (("witness", "segments", 1, "V", 0, 1), _bump),
    (("claim", "target_mean", 1), _bump),                                 # wrong target
    (("claim", "target_cov", 0, 1), _bump),
    (("claim", "time"), "3/2"),                                           # wrong horizon
    (("witness", "segments", 0, "duration"), lambda s: _bump(s, "1/100")),  # durations no longer sum to T
    (("claim", "max_norm"), "1"),                                         # smaller than the controls' norm
    (("claim", "max_norm"), "0"),
    (("claim", "max_norm"), "five"),                                      # malformed number
    (("claim", "max_norm"), None),
])
def test_tampered_attention_certificates_fail(attention_cert, path, value):
    res = verify_certificate(_set(attention_cert, path, value))
    assert not res.valid, res.reason


@st.composite
def full_rank_pairs(draw):
    d = draw(st.integers(1, 3))
    g = lambda: draw(rst.gaussians(d, rank=d, min_eigenvalue=Fraction(1, 2), max_eigenvalue=2))
    return g(), g()


@given(full_rank_pairs())
def test_attention_only_certificates_pass_and_perturbed_ones_fail(pair):
    """Random full-rank pairs, d = 1..3: the attention-only controls' certificate passes verify;
    moving B[0][0] of the Riccati segment (V = I) by 1e-6 makes it fail: there P(τ) = P0 − 2τB
    exactly, so Σ(T) moves by about 2τ·1e-6·λ_min(Σ)² ≥ 1e-7, far above the tolerance."""
    s0, s1 = pair
    res = R.reach(s0, s1, Fraction(1), attention_only=True)
    cert = R.reachability_certificate(res, s0, s1, Fraction(1), R.certificate_tolerance())
    chk = verify_certificate(cert)
    assert chk.valid, chk.reason
    bad = verify_certificate(_set(cert, ("witness", "segments", 0, "B", 0, 0), lambda x: _bump(x, "1/1000000")))
    assert not bad.valid, bad.reason


def test_max_norm_is_decided_exactly():
    """‖A‖₂ = 3 for A = [[3, 0], [0, 0]] and |b| = 5 for b = (3, 4): a bound of exactly 3 resp. 5 holds,
    one smaller by 1e-40 does not."""
    from riccati_verify.checker.check_reachability import norm_violation

    z = ((Fraction(0),) * 2,) * 2
    A = ((Fraction(3), Fraction(0)), (Fraction(0), Fraction(0)))
    seg = [(Fraction(1), A, z, z, (Fraction(0), Fraction(0)))]
    assert norm_violation(seg, Fraction(3)) is None
    assert "||A||_2" in norm_violation(seg, 3 - Fraction(1, 10 ** 40))
    seg_b = [(Fraction(1), z, A, z, (Fraction(3), Fraction(4)))]
    assert norm_violation(seg_b, Fraction(5)) is None
    assert "|b|" in norm_violation(seg_b, 5 - Fraction(1, 10 ** 40))
    assert "||B||_2" in norm_violation(seg_b, Fraction(29, 10))


def test_blowup_segment_is_not_certified(write_json):
    """d = 1, v = β = 1, σ0 = 1 blows up at t = 1/2: a certificate claiming a state at t = 1 is rejected
    (no enclosure exists), with a reason, not a crash."""
    from riccati_verify.certify.certificate import make_certificate

    g = Gaussian.from_arrays([0], [[1]])
    claim = {"target_mean": ["0"], "target_cov": [["-1"]], "time": "1", "tolerance": "1/1000"}
    seg = {"duration": "1", "A": [["0"]], "B": [["1"]], "V": [["1"]], "b": ["0"]}
    cert = make_certificate("reachability", claim, None, g, {"segments": [seg]}, "test")
    cert["claim"]["target_cov"] = [["1"]]          # a PSD target, so the claim parses
    res = verify_certificate(cert)
    assert not res.valid and "no rigorous enclosure" in res.reason and "blow-up" in res.reason


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


def test_cli_attention_only_certificate(cli, files, tmp_path):
    p, t = files
    cert = tmp_path / "a.json"
    r = cli("reach", p, "--target", t, "--time", "1", "--attention-only", "--json", "--cert", cert)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["reachable"] and out["certificate"]["valid"] and cert.exists()
    assert cli("verify", cert).returncode == 0
    doc = json.loads(cert.read_text())
    doc["witness"]["segments"][0]["B"][0][0] = _bump(doc["witness"]["segments"][0]["B"][0][0])
    cert.write_text(json.dumps(doc))
    assert cli("verify", cert).returncode == 1


def test_spent_step_budget_is_not_certified(attention_cert, monkeypatch):
    """The checker's work is bounded (the certificate is untrusted): with a budget of 3 validated
    Taylor steps the attention segment cannot be enclosed and the claim is not certified."""
    from riccati_verify.checker import check_reachability as CR

    monkeypatch.setattr(CR, "MAX_TOTAL_STEPS", 3)
    res = verify_certificate(attention_cert)
    assert not res.valid and "step budget" in res.reason


def test_wrapping_retry_at_double_precision(attention_cert, monkeypatch):
    """At 100 bits the first attempt's balls (~2^-36 per step) are wider than the 1e-29 tolerance,
    so the error enclosure straddles it and the check is repeated once at 200 bits, which certifies.
    A control moved by 1e-10 is rejected at once: its error is certainly above the tolerance."""
    from riccati_verify.checker import check_reachability as CR

    monkeypatch.setattr(CR, "PREC_BITS", 100)
    res = verify_certificate(attention_cert)
    assert res.valid and "200 bits" in res.reason, res.reason
    bad = verify_certificate(_set(attention_cert, ("witness", "segments", 0, "B", 0, 0), _bump))
    assert not bad.valid and "100 bits" in bad.reason, bad.reason


def test_mixed_congruence_and_attention_segments():
    """S0 → S1 by congruence controls (closed-form route), then S1 → S0 by attention-only controls
    (validated Taylor route): the concatenated controls reach S0 at T = 2, and the ball state
    carried across the two kinds of segment certifies it; ending at S1 instead is refused."""
    there = R.reach(S0, S1, Fraction(1))
    back = R.reach(S1, S0, Fraction(1), attention_only=True)
    both = R.ReachResult(True, "round trip", segments=there.segments + back.segments)
    err = R.terminal_error_mp(both.segments, S0, S0)
    assert err < 1e-25
    cert = R.reachability_certificate(both, S0, S0, Fraction(2), R.certificate_tolerance())
    res = verify_certificate(cert)
    assert res.valid and "validated Taylor steps" in res.reason and "closed-form" in res.reason, res.reason
    wrong = _set(_set(cert, ("claim", "target_cov"), [[str(x) for x in r] for r in S1.cov]),
                 ("claim", "target_mean"), [str(x) for x in S1.mean])
    assert not verify_certificate(wrong).valid


def _reach_doc(d, segs, time, tol="1"):
    I = [["1" if i == j else "0" for j in range(d)] for i in range(d)]
    return {"format": "riccati-verify-certificate", "version": 1, "tool_version": "0.1.0", "method": "test",
            "claim": {"kind": "reachability", "target_mean": ["0"] * d, "target_cov": I, "time": time,
                      "tolerance": tol},
            "params": {"mean": ["0"] * d, "cov": I}, "witness": {"segments": segs}}


def test_a_nan_terminal_error_buys_no_finer_retry():
    """Review of session 16: with ‖Aτ‖ ≈ 1e300 the exponential is NaN, and a NaN error (false both ways)
    was taken for a straddle of the tolerance, so every segment ran again at 640 bits (hours at d = 33)."""
    d = 2
    Z = [["0"] * d for _ in range(d)]
    tiny = [["1/1000" if i == j else "0" for j in range(d)] for i in range(d)]
    segs = [{"duration": "1/1000", "A": Z, "B": tiny, "V": tiny, "b": ["0"] * d},
            {"duration": "1" + "0" * 300, "A": [["1"] * d for _ in range(d)], "B": Z, "V": Z, "b": ["0"] * d}]
    res = verify_certificate(_reach_doc(d, segs, "1" + "0" * 300 + "001/1000"))
    assert not res.valid and "(320 bits)" in res.reason


def test_closed_form_segments_have_a_work_bound(monkeypatch):
    """Σ (d + 1)³·log2‖[Aτ, bτ]‖ over the B = V = 0 segments is bounded (MAX_CLOSED_WORK; lowered here,
    since at d = 2 the entry-size limits keep any certificate far below the real bound)."""
    from riccati_verify.checker import check_reachability as cr

    d = 2
    Z = [["0"] * d for _ in range(d)]
    seg = {"duration": "1", "A": [["1" if i == j else "0" for j in range(d)] for i in range(d)], "B": Z, "V": Z,
           "b": ["0"] * d}
    big = dict(seg, A=[[str(2 ** 100) if i == j else "0" for j in range(d)] for i in range(d)])
    monkeypatch.setattr(cr, "MAX_CLOSED_WORK", 27 * 102 * 2)       # two segments of norm 2^100 (log2 3·2^100 < 102)
    assert "work bound" not in verify_certificate(_reach_doc(d, [big, big], "2")).reason
    res = verify_certificate(_reach_doc(d, [big, big, big], "3"))
    assert not res.valid and res.reason.startswith("segment 2: the closed-form segments exceed the work bound")

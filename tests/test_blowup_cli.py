"""`riccati-verify blowup`: output contract, exit codes, certificates through `verify`, bad input."""

from __future__ import annotations

import json
from fractions import Fraction as F


SAME = {"A": [["1/2", 1], [0, -1]], "B": [[1, 0], [0, 2]], "V": "1/2", "mean": [0, 0], "cov": [[1, 0], [0, 1]]}
OPPOSITE = {**SAME, "B": [[-1, 0], [0, -2]]}
GENERAL = {"A": [["1/10", "1/5"], [0, "-1/10"]], "B": [[1, "1/3"], [0, 1]], "V": [[1, "1/2"], ["-1/4", 1]],
           "mean": [0, 0], "cov": [[1, "1/5"], ["1/5", 1]]}


def test_json_output_and_certificate(cli, write_json, tmp_path):
    p = write_json(SAME)
    cert = tmp_path / "c.json"
    r = cli("blowup", p, "--json", "--digits", "40", "--cert", cert)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["blowup"] is True and out["rigorous"] is True and out["digits"] == 40
    assert set(out) >= {"blowup", "lower", "upper", "digits", "method", "rigorous"}
    lo, hi = F(out["lower"]), F(out["upper"])
    assert 0 < hi - lo <= F(1, 10 ** 39)
    v = cli("verify", cert, "--json")
    assert v.returncode == 0 and json.loads(v.stdout)["valid"] is True


def test_tampered_certificate_fails_verify(cli, write_json, tmp_path):
    cert = tmp_path / "c.json"
    assert cli("blowup", write_json(SAME), "--digits", "20", "--cert", cert).returncode == 0
    doc = json.loads(cert.read_text())
    lo, hi = F(doc["claim"]["lower"]), F(doc["claim"]["upper"])
    doc["claim"]["lower"], doc["claim"]["upper"] = str(hi + (hi - lo)), str(hi + 2 * (hi - lo))
    bad = write_json(doc, "bad.json")
    r = cli("verify", bad)
    assert r.returncode == 1 and "invalid" in r.stdout


def test_no_blowup_text_and_exit(cli, write_json):
    r = cli("blowup", write_json(OPPOSITE))
    assert r.returncode == 0 and "no blow-up for all t >= 0, certified" in r.stdout


def test_horizon(cli, write_json):
    r = cli("blowup", write_json(SAME), "--horizon", "1/2", "--json")
    out = json.loads(r.stdout)
    assert r.returncode == 0 and out["blowup"] is False and out["horizon"] == "1/2"


def test_general_V_is_not_certified_exit_1(cli, write_json, tmp_path):
    r = cli("blowup", write_json(GENERAL), "--digits", "12", "--json", "--cert", tmp_path / "c.json")
    out = json.loads(r.stdout)
    assert r.returncode == 1 and out["rigorous"] is False and out["certificate"] is None
    assert not (tmp_path / "c.json").exists()
    assert F(out["lower_bound"]) <= F(out["estimate"]) and "lower" not in out and "digits" not in out
    text = cli("blowup", write_json(GENERAL), "--digits", "12").stdout
    assert "estimate" in text and "correct digits" not in text and " in (" not in text


def test_bad_inputs_exit_2_one_line(cli, write_json):
    p = write_json(SAME)
    for args in (["--digits", "100000"], ["--digits", "0"], ["--horizon", "-1"], ["--horizon", "abc"]):
        r = cli("blowup", p, *args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    r = cli("blowup", write_json(GENERAL), "--digits", "500")   # beyond 60: the best estimate, not exit 2
    assert r.returncode == 1 and "best estimate" in r.stdout and "Traceback" not in r.stderr
    r = cli("blowup", write_json({k: v for k, v in SAME.items() if k not in ("mean", "cov")}), "--digits", "10")
    assert r.returncode == 0 and "N(0, I)" in r.stdout          # the default state, as for check
    r = cli("blowup", write_json({**SAME, "cov": [[1, 2], [2, 1]]}))
    assert r.returncode == 2 and "semidefinite" in r.stderr


def test_singular_covariance_is_handled(cli, write_json):
    r = cli("blowup", write_json({**SAME, "A": [[0, 1], [-1, 0]], "B": [[1, 0], [0, 1]], "V": 1,
                                  "cov": [[1, 1], [1, 1]]}), "--json", "--digits", "30")
    out = json.loads(r.stdout)
    assert r.returncode == 0 and F(out["lower"]) < F(1, 4) <= F(out["upper"])

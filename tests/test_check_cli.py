"""`riccati-verify check`, `equilibrium` and `verify` on certificates from `check --cert`."""

import json

import pytest

from riccati_verify.app.cli import main
from riccati_verify.app.examples import EXAMPLES
from riccati_verify.core.io import problem_to_dict


def _run(capsys, *args):
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, out, err


def _example_file(write_json, name):
    ex = next(e for e in EXAMPLES if e.name == name)
    return write_json(problem_to_dict(ex.params, ex.state, name), f"{name}.json")


def test_check_without_params_runs_examples_table(capsys):
    rc, out, _ = _run(capsys, "check")
    assert rc == 0
    for ex in EXAMPLES:
        assert ex.name in out
    assert f"{len(EXAMPLES)}/{len(EXAMPLES)} examples classified as expected" in out
    regimes = {e.expected for e in EXAMPLES}
    assert {"equilibrium", "blowup", "collapse", "growth"} <= regimes
    assert {e.params.dim for e in EXAMPLES} >= {1, 2, 3, 4}


def test_check_examples_json(capsys):
    rc, out, _ = _run(capsys, "check", "--json")
    doc = json.loads(out)
    assert rc == 0 and doc["all_as_expected"] and len(doc["examples"]) == len(EXAMPLES)


@pytest.mark.parametrize("name", ["riccati_equilibrium_2d", "general_equilibrium_3d", "riccati_collapse_4d",
                                  "linear_growth_2d"])
def test_check_json_cert_and_verify(capsys, write_json, tmp_path, name):
    path = _example_file(write_json, name)
    cert = tmp_path / "cert.json"
    rc, out, _ = _run(capsys, "check", path, "--json", "--cert", cert)
    doc = json.loads(out)
    expected = next(e.expected for e in EXAMPLES if e.name == name)
    assert rc == 0 and doc["regime"] == expected and doc["certified"] is True
    for h in doc["hypotheses"]:
        assert set(h) == {"name", "holds", "witness"} and h["holds"] in (True, False, None)
    if expected == "equilibrium":
        assert set(doc["equilibrium"]) >= {"mean", "cov"}
    assert doc["certificate_file"] == str(cert)
    rc, out, _ = _run(capsys, "verify", cert, "--json")
    assert rc == 0 and json.loads(out)["valid"]
    # tampering with the written file is caught by `verify`
    c = json.loads(cert.read_text())
    c["params"]["A"][0][0] = str(int(c["params"]["A"][0][0].split("/")[0]) + 7) if "/" not in c["params"]["A"][0][0] \
        else "123"
    cert.write_text(json.dumps(c))
    rc, out, _ = _run(capsys, "verify", cert)
    assert rc == 1 and "invalid" in out


def test_check_blowup_reports_interval(capsys, write_json):
    rc, out, _ = _run(capsys, "check", _example_file(write_json, "scalar_blowup"), "--json")
    doc = json.loads(out)
    assert rc == 0 and doc["regime"] == "blowup"
    lo, hi = float(doc["blowup"]["lower"]), float(doc["blowup"]["upper"])
    assert lo <= 0.34657359027997264 <= hi    # ln(2)/2, MATH.md §6


def test_check_reports_seed_disagreement(capsys, write_json):
    rc, out, _ = _run(capsys, "check", _example_file(write_json, "riccati_collapse_4d"))
    assert rc == 0 and "seed sign rule predicts: blowup; agrees: False" in out


def test_check_default_state_is_recorded(capsys, write_json):
    p = write_json({"A": [[1, 0], [0, 2]], "B": [[-1, 0], [0, -1]], "V": "1"})
    rc, out, _ = _run(capsys, "check", p, "--json")
    doc = json.loads(out)
    assert rc == 0 and doc["state"] == "default N(0, I)" and doc["regime"] == "equilibrium"


@pytest.mark.parametrize("doc, fragment", [
    ({"A": [[1, 0], [0, 1]], "B": [[1, 0], [0, 1]], "V": 1, "mean": [0, 0], "cov": [[1, 2], [2, 1]]},
     "positive semidefinite"),
    ({"A": [[1]], "B": [[1]]}, "missing"),
    ({"A": [[1, 2]], "B": [[1]], "V": 1}, "square"),
    ({"A": [["1/0"]], "B": [[1]], "V": 1}, "zero denominator"),
    ({"A": [["1/" + "9" * 1001]], "B": [[1]], "V": 1}, "longer than"),
])
def test_bad_input_exit_2_one_line(capsys, write_json, doc, fragment):
    rc, out, err = _run(capsys, "check", write_json(doc))
    assert rc == 2 and fragment in err and err.count("\n") == 1 and "Traceback" not in err


def test_cert_without_params_is_usage_error(capsys, tmp_path):
    rc, _, err = _run(capsys, "check", "--cert", tmp_path / "x.json")
    assert rc == 2 and "needs a parameter file" in err


def test_huge_denominators_and_singular_cases_do_not_crash(capsys, write_json, tmp_path):
    big = "1/" + "7" * 150
    p = write_json({"A": [[big, 0], [0, "-" + big]], "B": [[0, 0], [0, 0]], "V": [[1, 0], [0, 0]],
                    "mean": [0, 0], "cov": [[1, 0], [0, 0]]})
    rc, out, err = _run(capsys, "check", p, "--json", "--cert", tmp_path / "c.json")
    assert rc in (0, 1) and "Traceback" not in err
    doc = json.loads(out)
    assert doc["regime"] in ("growth", "collapse", "undetermined", "equilibrium")
    # A with eigenvalues ±i (α = 0), singular Σ0: nothing to certify, but a clean answer
    p2 = write_json({"A": [[0, 1], [-1, 0]], "B": [[1, 0], [0, 2]], "V": [[1, 1], [0, 1]],
                     "mean": [0, 0], "cov": [[1, 1], [1, 1]]}, "p2.json")
    rc, out, err = _run(capsys, "check", p2, "--json")
    assert rc in (0, 1) and "Traceback" not in err and json.loads(out)["regime"] in (
        "equilibrium", "blowup", "collapse", "growth", "undetermined")


def test_equilibrium_command_json(capsys, write_json):
    rc, out, _ = _run(capsys, "equilibrium", _example_file(write_json, "general_equilibrium_3d"), "--json")
    doc = json.loads(out)
    assert rc == 0
    for e in doc["equilibria"]:
        assert {"cov", "positive_definite", "stable", "verified"} <= set(e)
    pd = [e for e in doc["equilibria"] if e["positive_definite"] and e["verified"]]
    assert len(pd) == 1 and pd[0]["stable"] is True
    # the known closed-form equilibrium Σ* = I (see examples.py)
    assert pd[0]["cov"] == [["1", "0", "0"], ["0", "1", "0"], ["0", "0", "1"]]
    zero = [e for e in doc["equilibria"] if all(x == "0" for r in e["cov"] for x in r)]
    assert len(zero) == 1 and zero[0]["verified"]


def test_equilibrium_command_no_pd_equilibrium_exit_1(capsys, write_json):
    rc, out, _ = _run(capsys, "equilibrium", write_json({"A": [[-1]], "B": [[-1]], "V": 1}))
    assert rc == 1 and "PD=False" in out


@pytest.mark.parametrize("command", [["check", "--all"], ["blowup", "examples/scalar_blowup.json"],
                                     ["reach", "examples/rotation_stable.json", "--target",
                                      "examples/rotation_stable.json", "--time", "1"]])
def test_certificate_path_is_checked_before_any_work(run, tmp_path, command):
    """--cert into a missing folder or onto a folder: exit 2 with one message, before computing anything."""
    for bad, why in ((tmp_path / "missing" / "c.json", "does not exist"), (tmp_path, "is a directory")):
        code, out, err = run(*command, "--cert", bad)
        assert code == 2 and why in err and "Traceback" not in err, err

"""Under --json every error is one JSON object on stdout, with the exit status of the text mode."""

from __future__ import annotations

import json

import pytest

from riccati_verify.app.commands import COMMANDS

MISSING = "/nonexistent/riccati-verify-missing.json"
# one bad input per subcommand: a file that does not exist, a value argparse rejects, or a
# file that is not what the command reads (each reaches the error before any computation)
BAD = {
    "blowup": [MISSING],
    "check": [MISSING],
    "derive": ["--dim", "99"],
    "equilibrium": ["{badjson}"],
    "family": [MISSING],
    "family": [MISSING],
    "flow": ["{notcert}", "--time", "-1"],
    "hypotheses": ["no_such_theorem", "{notcert}"],
    "pretrained": ["--batch", "0"],
    "prove": ["no_such_proof"],
    "reach": [MISSING, "--target", MISSING, "--time", "1"],
    "simulate": [MISSING, "--tokens", "1", "--time", "1"],
    "sweep": [MISSING, "--out", "{out}"],
    "train": [MISSING],
    "verify": ["{notcert}"],
}


def test_every_subcommand_has_a_bad_input_case():
    assert set(BAD) == set(COMMANDS)


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_is_a_json_error_object(cli, tmp_path, name):
    files = {"badjson": tmp_path / "bad.json", "notcert": tmp_path / "notcert.json", "out": tmp_path / "o.csv"}
    files["badjson"].write_text('{"A": [[1}')
    files["notcert"].write_text('{"x": 1}')
    args = [a.format(**{k: str(v) for k, v in files.items()}) for a in BAD[name]]
    r = cli(name, "--json", *args)
    assert r.returncode == 2, r.stderr
    obj = json.loads(r.stdout)
    assert obj["kind"] == "input" and obj["command"] == name
    assert isinstance(obj["error"], str) and obj["error"]
    # the same message as the text mode's one line on stderr
    assert obj["error"] in r.stderr
    # and without --json: nothing on stdout, same status
    plain = cli(name, *args)
    assert plain.returncode == 2 and plain.stdout == ""


def test_internal_error_is_a_json_object_with_status_3(cli, monkeypatch, tmp_path):
    from riccati_verify.app.commands import verify

    def boom(args):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(verify, "run", boom)
    r = cli("verify", "--json", str(tmp_path / "x.json"))
    assert r.returncode == 3
    obj = json.loads(r.stdout)
    assert obj["kind"] == "internal" and "simulated bug" in obj["error"] and obj["command"] == "verify"


def test_json_before_the_subcommand_is_not_the_subcommands_flag(cli):
    # only the subcommand has --json: before it, argparse rejects it as usual (text, exit 2)
    r = cli("--json", "verify", MISSING)
    assert r.returncode == 2 and r.stdout == ""

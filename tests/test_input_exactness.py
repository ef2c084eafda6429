"""Honest inputs: a JSON float is read as the binary rational it denotes, and that is recorded
("exact": false with the entries that were floats) in the JSON output, the text output and every
certificate, where the independent checker accepts (and ignores) the record."""

from __future__ import annotations

import contextlib
import copy
import io
import json
from pathlib import Path

import pytest

from riccati_verify.checker import verify_certificate

CERT = Path(__file__).resolve().parent / "data" / "certificates" / "blowup.json"


def _cert():
    return json.loads(CERT.read_text())


@pytest.mark.parametrize("record", [{"exact": True, "float_entries": []},
                                    {"exact": False, "float_entries": ["A[0][0]", "target file: mean[1]"]}])
def test_checker_accepts_an_input_record(record):
    doc = _cert()
    assert verify_certificate(doc).valid
    doc["input"] = record
    assert verify_certificate(doc).valid


@pytest.mark.parametrize("record", [
    {"exact": False, "float_entries": []},                       # says inexact but names nothing
    {"exact": True, "float_entries": ["A[0][0]"]},               # says exact but names a float
    {"exact": 0, "float_entries": ["A[0][0]"]},                  # not a bool
    {"exact": False, "float_entries": "A[0][0]"},                # not a list
    {"exact": False, "float_entries": [1]},                      # not names
    {"exact": False, "float_entries": ["x" * 201]},              # over the name bound
    {"exact": False, "float_entries": ["A"] * 10_001},           # over the count bound
    {"exact": False, "float_entries": ["A"], "note": "x"},       # an unknown key
    [False],
])
def test_checker_rejects_a_malformed_input_record(record):
    doc = _cert()
    doc["input"] = copy.deepcopy(record)
    res = verify_certificate(doc)
    assert not res.valid and "input" in res.reason


def test_other_unknown_envelope_keys_still_refused():
    doc = _cert()
    doc["inputs"] = {"exact": True, "float_entries": []}
    assert not verify_certificate(doc).valid


def test_float_entries_names_every_binary_float():
    from riccati_verify.app.output import float_entries

    doc = {"name": "x", "A": [[1, 0.5], ["1/3", 2]], "V": 0.1, "mean": ["0.1", 0], "loss": {"beta": 1e-3}}
    assert float_entries(doc) == ["A[0][1]", "V", "loss.beta"]
    assert float_entries({"A": [[1]], "V": "1/10"}) == []


FLOATS = {"A": [[1.0]], "B": [[1]], "V": 0.5, "mean": [0], "cov": [[1]]}     # 1.0 and 0.5 are floats


def test_float_input_is_flagged_in_json_text_certificate_and_survives_verify(cli, write_json, tmp_path):
    p = write_json(FLOATS)
    cert = tmp_path / "c.json"
    r = cli("blowup", p, "--digits", "10", "--cert", cert, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["input"] == {"exact": False, "float_entries": ["A[0][0]", "V"]}
    text = cli("blowup", p, "--digits", "10").stdout
    assert "input not exact: A[0][0], V were JSON floats" in text
    doc = json.loads(cert.read_text())
    assert doc["input"] == {"exact": False, "float_entries": ["A[0][0]", "V"]}
    v = cli("verify", cert, "--json")
    assert v.returncode == 0 and json.loads(v.stdout)["input"]["exact"] is False
    assert "input: not exact" in cli("verify", cert).stdout


def test_exact_input_is_recorded_as_exact(cli, write_json, tmp_path):
    exact = {k: (v if k not in ("A", "V") else ([[1]] if k == "A" else "1/2")) for k, v in FLOATS.items()}
    cert = tmp_path / "c.json"
    r = cli("blowup", write_json(exact), "--digits", "10", "--cert", cert, "--json")
    assert json.loads(r.stdout)["input"] == {"exact": True, "float_entries": []}
    assert json.loads(cert.read_text())["input"]["exact"] is True
    assert "input not exact" not in cli("blowup", write_json(exact), "--digits", "10").stdout


def test_a_second_file_is_named_by_its_role(cli, write_json, tmp_path):
    init = write_json({"mean": [0], "cov": [[1]]}, "init.json")
    target = write_json({"mean": [0.25], "cov": [[2]]}, "tgt.json")
    cert = tmp_path / "r.json"
    r = cli("reach", init, "--target", target, "--time", "1", "--cert", cert, "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    assert json.loads(r.stdout)["input"] == {"exact": False, "float_entries": ["target file: mean[0]"]}
    assert json.loads(cert.read_text())["input"]["float_entries"] == ["target file: mean[0]"]
    assert cli("verify", cert).returncode == 0


def test_train_and_sweep_specs_flag_their_floats(cli, write_json, tmp_path):
    """The spec-driven commands record the spec's JSON floats like a parameter file's."""
    spec = json.loads((Path(__file__).resolve().parents[1] / "examples" / "train_shallow.json").read_text())
    spec.update(heads=8, steps=3, beta=0.02)                               # beta a binary float
    r = cli("train", write_json(spec, "train.json"), "--json")
    assert r.returncode in (0, 1), r.stderr
    assert json.loads(r.stdout)["input"] == {"exact": False, "float_entries": ["training spec: beta"]}
    sweep = write_json({"family": "scalar_grid", "classifier": "flow", "sigma0": 0.5,
                        "a": {"min": -1, "max": 1, "num": 2}, "vbeta": {"min": -1, "max": 1, "num": 2}}, "sweep.json")
    r = cli("sweep", sweep, "--out", tmp_path / "s.csv", "--workers", "0", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["input"] == {"exact": False, "float_entries": ["sweep spec: sigma0"]}
    text = cli("sweep", sweep, "--out", tmp_path / "s.csv", "--workers", "0").stdout      # resumed: no work
    assert "input not exact: sweep spec: sigma0 was a JSON float" in text
    exact = write_json({"family": "scalar_grid", "classifier": "flow", "sigma0": "1/2",
                        "a": {"min": -1, "max": 1, "num": 2}, "vbeta": {"min": -1, "max": 1, "num": 2}}, "sweep2.json")
    r = cli("sweep", exact, "--out", tmp_path / "s2.csv", "--workers", "0", "--json")
    assert json.loads(r.stdout)["input"] == {"exact": True, "float_entries": []}


def test_sweep_point_certificates_carry_the_spec_record(cli, write_json, tmp_path):
    sweep = write_json({"family": "scalar_grid", "classifier": "stability", "certificates": True, "sigma0": 0.5,
                        "a": {"min": -1, "max": 1, "num": 2}, "vbeta": {"min": -1, "max": -1, "num": 1}}, "sw.json")
    out = tmp_path / "s.csv"
    r = cli("sweep", sweep, "--out", out, "--workers", "0", "--json")
    assert r.returncode in (0, 1), r.stderr
    certs = sorted((tmp_path / "s.csv.certs").glob("*.json"))
    assert certs
    for c in certs:
        doc = json.loads(c.read_text())
        assert doc["input"] == {"exact": False, "float_entries": ["sweep spec: sigma0"]}
        assert verify_certificate(doc).valid


def test_the_record_ends_with_the_command(write_json):
    """A library call after a command in the same process does not inherit that command's record."""
    from riccati_verify.app.cli import main
    from riccati_verify.app.output import input_record

    p = write_json(FLOATS)
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["blowup", str(p), "--digits", "5"]) == 0
    assert input_record() is None


def test_hypotheses_on_a_training_spec_flag_its_floats(cli, write_json):
    spec = json.loads((Path(__file__).resolve().parents[1] / "examples" / "train_shallow.json").read_text())
    spec["beta"] = 0.02
    r = cli("hypotheses", "training_shallow", write_json(spec, "t.json"), "--json")
    assert r.returncode in (0, 1), r.stderr
    assert json.loads(r.stdout)["input"] == {"exact": False, "float_entries": ["training spec: beta"]}


def test_exact_psd_and_norm_tests_refuse_invalid_input():
    """Review of session 16 (robustness): psd_scaled answered "PSD, rank 2" for the rotation [[0, 1], [−1, 0]]
    (Descartes needs real roots), and norm2_at_most "proved" ‖0‖ ≤ −1 and cut a wide matrix short."""
    from fractions import Fraction as Fr

    import pytest as _pytest

    from riccati_verify.core import exact as ex

    with _pytest.raises(ValueError):
        ex.psd_scaled(((Fr(0), Fr(1)), (Fr(-1), Fr(0))))
    with _pytest.raises(ValueError):
        ex.psd_scaled(((Fr(1), Fr(0), Fr(0)), (Fr(0), Fr(1), Fr(0))))
    assert ex.psd_scaled(((Fr(1), Fr(0)), (Fr(0), Fr(0)))) == (True, 1)
    assert not ex.norm2_at_most(((Fr(0), Fr(0)), (Fr(0), Fr(0))), Fr(-1))
    assert ex.norm2_at_most(((Fr(0), Fr(0)), (Fr(0), Fr(0))), Fr(0))
    with _pytest.raises(ValueError):
        ex.norm2_at_most(((Fr(1), Fr(100)),), Fr(2))

"""Honest inputs: a JSON float is read as the binary rational it denotes, and that is recorded
("exact": false with the entries that were floats) in the JSON output, the text output and every
certificate, where the independent checker accepts (and ignores) the record."""

from __future__ import annotations

import copy
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

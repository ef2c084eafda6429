"""The certificate envelope: its format, and reading it as untrusted input.

    {
      "format": "riccati-verify-certificate",
      "version": 1,
      "tool_version": "0.1.0",
      "claim": {"kind": "<kind>", ...claim fields...},
      "params": {...exact parameter file, see io.problem_to_dict...},
      "witness": {...kind-specific, exact rationals as strings...},
      "method": "free text naming the method",
      "input": {"exact": false, "float_entries": ["A[0][1]", ...]}    (optional)
    }

``input`` (optional, written by the command line) records whether the files the claim was
computed from gave every number exactly: a JSON float such as 0.1 is read as the binary
rational it denotes, which is what the certificate speaks of; ``float_entries`` names those
entries.  The checker does not use it for the verdict; it only checks its shape.

`kind` selects the checker module `riccati_verify.checker.check_<kind>`.

Strictness (`check_envelope`, then `check_keys` from `checker.verify`):

- ``version`` is the exact integer `VERSION`: not a bool (``true == 1`` in Python), not a
  float (``1.0``), not a string;
- the envelope has exactly `ENVELOPE_KEYS`;
- the claim and the witness have no key their checker does not read: each
  ``check_<kind>`` module declares ``CLAIM_KEYS`` and ``WITNESS_KEYS`` (``kind`` is
  implicit in the claim), and a missing declaration refuses the certificate;
- duplicate JSON keys are refused when the file is read (`core.io.read_json_file`).

The free-text ``claim.statement`` is CHECKED, never trusted: a kind that allows it
(``reachability``, ``unreachable_in_time``, ``unreachable_rank``) defines
``statement(claim, witness) -> str`` deriving the one sentence its verified fields mean,
and `checker.verify` refuses a certificate whose statement differs from it by a single
character.  A kind without that function refuses the key like any unknown key.  The
statement is optional: leaving it out loses nothing, since the verdict is decided from the
structured fields alone.
Numbers that matter to the verdict are exact rational strings ("p/q"); a
checker must refuse floats where it needs exact values.  The envelope lives in
core because both sides need it: producers write it (`certify.certificate`)
and the independent checker reads it (`checker.verify`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from riccati_verify.core.errors import InputError
from riccati_verify.core.io import read_json_file

__all__ = ["ENVELOPE_KEYS", "FORMAT", "KIND_RE", "OPTIONAL_KEYS", "VERSION", "check_envelope", "check_input_record",
           "check_keys", "read_certificate"]

FORMAT = "riccati-verify-certificate"
VERSION = 1
KIND_RE = re.compile(r"[a-z][a-z0-9_]{0,63}")
ENVELOPE_KEYS = {"format", "version", "tool_version", "claim", "params", "witness", "method"}
OPTIONAL_KEYS = {"input"}
MAX_FLOAT_ENTRIES, MAX_ENTRY_NAME = 10_000, 200


def read_certificate(path: str | Path) -> dict:
    """Read and check the envelope (not the claim); InputError if malformed."""
    doc = read_json_file(path, "certificate")
    check_envelope(doc)
    return doc


def check_envelope(doc: Any) -> str:
    """Validate the envelope and return the claim kind."""
    if not isinstance(doc, dict):
        raise InputError("a certificate must be a JSON object")
    missing = ENVELOPE_KEYS - set(doc)
    if missing:
        raise InputError(f"certificate lacks key(s) {sorted(missing)}")
    extra = set(doc) - ENVELOPE_KEYS - OPTIONAL_KEYS
    if extra:
        raise InputError(f"certificate has unknown key(s) {sorted(extra)}")
    if doc["format"] != FORMAT:
        raise InputError(f"not a {FORMAT} document")
    if type(doc["version"]) is not int:   # bool is an int subclass and True == 1; 1.0 == 1 too
        raise InputError(f"'version' must be the integer {VERSION} (not a bool, a float or a string), "
                         f"got {type(doc['version']).__name__}")
    if doc["version"] != VERSION:
        raise InputError(f"not a {FORMAT} version {VERSION} document (version {doc['version']})")
    claim = doc["claim"]
    if not isinstance(claim, dict) or not isinstance(claim.get("kind"), str) or not KIND_RE.fullmatch(claim["kind"]):
        raise InputError("certificate 'claim' must be an object with a valid 'kind'")
    if not isinstance(doc["witness"], dict) or not isinstance(doc["params"], dict):
        raise InputError("certificate 'witness' and 'params' must be objects")
    if "input" in doc:
        check_input_record(doc["input"])
    return claim["kind"]


def check_input_record(rec: Any) -> None:
    """InputError unless `rec` is ``{"exact": bool, "float_entries": [names]}``, bounded, with
    ``exact`` true exactly when no entry is named."""
    if not isinstance(rec, dict) or set(rec) != {"exact", "float_entries"}:
        raise InputError("certificate 'input' must be an object with exactly the keys 'exact' and 'float_entries'")
    entries = rec["float_entries"]
    if type(rec["exact"]) is not bool or not isinstance(entries, list) or len(entries) > MAX_FLOAT_ENTRIES \
            or not all(isinstance(e, str) and len(e) <= MAX_ENTRY_NAME for e in entries):
        raise InputError(f"certificate 'input': 'exact' must be a bool and 'float_entries' a list of at most "
                         f"{MAX_FLOAT_ENTRIES} names of at most {MAX_ENTRY_NAME} characters")
    if rec["exact"] == bool(entries):
        raise InputError("certificate 'input': 'exact' must be true exactly when 'float_entries' is empty")


def check_keys(where: str, obj: dict, allowed) -> None:
    """InputError unless every key of `obj` is in `allowed` (a claim's or a witness's schema)."""
    extra = set(obj) - set(allowed)
    if extra:
        shown = sorted(str(k)[:40] for k in extra)[:8]
        raise InputError(f"{where} has unknown key(s) {shown} (allowed: {sorted(allowed)})")

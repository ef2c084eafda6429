"""The certificate envelope: its format, and reading it as untrusted input.

    {
      "format": "riccati-verify-certificate",
      "version": 1,
      "tool_version": "0.1.0",
      "claim": {"kind": "<kind>", ...claim fields...},
      "params": {...exact parameter file, see io.problem_to_dict...},
      "witness": {...kind-specific, exact rationals as strings...},
      "method": "free text naming the method"
    }

`kind` selects the checker module `riccati_verify.checker.check_<kind>`.
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

__all__ = ["ENVELOPE_KEYS", "FORMAT", "KIND_RE", "VERSION", "check_envelope", "read_certificate"]

FORMAT = "riccati-verify-certificate"
VERSION = 1
KIND_RE = re.compile(r"[a-z][a-z0-9_]{0,63}")
ENVELOPE_KEYS = {"format", "version", "tool_version", "claim", "params", "witness", "method"}


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
    extra = set(doc) - ENVELOPE_KEYS
    if extra:
        raise InputError(f"certificate has unknown key(s) {sorted(extra)}")
    if doc["format"] != FORMAT or doc["version"] != VERSION:
        raise InputError(f"not a {FORMAT} version {VERSION} document")
    claim = doc["claim"]
    if not isinstance(claim, dict) or not isinstance(claim.get("kind"), str) or not KIND_RE.fullmatch(claim["kind"]):
        raise InputError("certificate 'claim' must be an object with a valid 'kind'")
    if not isinstance(doc["witness"], dict) or not isinstance(doc["params"], dict):
        raise InputError("certificate 'witness' and 'params' must be objects")
    return claim["kind"]

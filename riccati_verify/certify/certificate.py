"""Making certificates: the producers' side of the envelope that `core.envelope` defines.

A producer builds its document with `make_certificate` and learns whether it is
valid only from `riccati_verify.checker.verify_certificate`, never from a
checker module's internals.
"""

from __future__ import annotations

import json
from pathlib import Path

from riccati_verify.core.envelope import FORMAT, KIND_RE, VERSION
from riccati_verify.core.errors import InputError
from riccati_verify.core.io import problem_to_dict
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.core.serial import jsonable
from riccati_verify.core.version import __version__

__all__ = ["SCHEMA", "certificate_schema", "make_certificate", "write_certificate"]

SCHEMA = "schemas/certificate.schema.json"
"""The published JSON schema of every kind's certificate, relative to this package (installed
with it).  For readers and producers: the checker keeps its own, stricter parser."""


def certificate_schema() -> dict:
    """The published JSON schema (draft 2020-12): the envelope, and each kind's claim and witness."""
    from importlib import resources

    return json.loads(resources.files(__package__).joinpath(SCHEMA).read_text(encoding="utf-8"))


def make_certificate(kind: str, claim: dict, params: Params | None, state: Gaussian | None,
                     witness: dict, method: str) -> dict:
    """The certificate document: the envelope around `claim` and `witness`, with the exact
    parameters and state it speaks of (so the checker needs nothing else)."""
    if not KIND_RE.fullmatch(kind):
        raise ValueError(f"bad certificate kind {kind!r}")
    return {
        "format": FORMAT,
        "version": VERSION,
        "tool_version": __version__,
        "claim": {"kind": kind, **jsonable(claim)},
        "params": problem_to_dict(params, state),
        "witness": jsonable(witness),
        "method": method,
    }


def write_certificate(path: str | Path, cert: dict) -> None:
    """Write `cert` as JSON; an unwritable path is bad input (InputError), not a crash."""
    try:
        Path(path).write_text(json.dumps(cert, indent=1) + "\n")
    except OSError as e:
        raise InputError(f"cannot write the certificate to {path}: {e.strerror or e}") from None

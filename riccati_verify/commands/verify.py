"""`riccati-verify verify CERT`: the independent checker."""

from ..certificates.checker import verify_certificate
from ..io import read_json_file
from ..output import emit

NAME = "verify"
HELP = "re-check a certificate independently (exit 0 valid, 1 invalid)"


def add_arguments(p):
    p.add_argument("cert", help="certificate JSON file")


def run(args) -> int:
    # Unreadable or non-JSON files are bad input (exit 2); anything that parses
    # is judged by the checker, so a tampered envelope is 'invalid' (exit 1).
    doc = read_json_file(args.cert, "certificate")
    res = verify_certificate(doc)
    claim = doc.get("claim") if isinstance(doc, dict) else None
    kind = claim.get("kind") if isinstance(claim, dict) else None
    verdict = "valid" if res.valid else "invalid"
    emit({"valid": res.valid, "kind": kind, "reason": res.reason},
         f"certificate {verdict} ({kind}): {res.reason}", args.json)
    return 0 if res.valid else 1

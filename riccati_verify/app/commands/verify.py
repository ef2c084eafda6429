"""`riccati-verify verify CERT`: the independent checker."""

from riccati_verify.checker import verify_certificate
from riccati_verify.core.envelope import ENVELOPE_KEYS, FORMAT
from riccati_verify.core.errors import InputError
from riccati_verify.core.io import read_json_file
from riccati_verify.app.output import decimal_powers, emit
from riccati_verify.app.commands import COMMANDS

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "verify"
HELP = COMMANDS[NAME]


def add_arguments(p):
    """Declare this subcommand's arguments (`cli` adds --json to every subcommand)."""
    p.add_argument("cert", help="certificate JSON file")
    p.add_argument("--max-seconds", type=float, default=None, metavar="S",
                   help="stop the check's validated flows after S seconds of wall time (tested at every flow "
                        "step; other work is bounded by its own budgets): 'invalid' with the reason 'did not "
                        "finish' (nothing is decided about the claim); default: no limit")


def run(args) -> int:
    # Unreadable, non-JSON and non-certificate files (no "format" marker, or an envelope
    # without its parts) are bad input (exit 2) with what is missing; anything else is
    # judged by the checker, so a tampered envelope is 'invalid' (exit 1).
    """Check the certificate and print the verdict; exit 0 valid, 1 invalid, 2 not a certificate."""
    doc = read_json_file(args.cert, "certificate")
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InputError(f"'{args.cert}' is not a certificate (a JSON object with \"format\": \"{FORMAT}\")")
    missing = sorted(ENVELOPE_KEYS - set(doc))
    if missing:
        raise InputError(f"'{args.cert}' is not a complete certificate: it lacks {', '.join(map(repr, missing))}")
    limit = args.max_seconds
    if limit is not None and not 0 < limit < float("inf"):
        raise InputError(f"--max-seconds must be a positive number of seconds, got {limit:g}")
    res = verify_certificate(doc, max_seconds=limit)
    claim = doc["claim"]
    kind = claim.get("kind") if isinstance(claim, dict) else None
    verdict = "valid" if res.valid else "invalid"
    data = {"valid": res.valid, "kind": kind, "reason": res.reason}
    # text only: 1/10^30 as 1e-30 (the same number); the JSON keeps the checker's reason as it is
    text = (f"certificate {verdict} ({kind if isinstance(kind, str) else 'claim without a kind'}): "
            f"{decimal_powers(res.reason)}")
    rec = doc.get("input")
    if res.valid and isinstance(rec, dict):   # shape checked by the checker (a valid certificate)
        data["input"] = rec
        text += ("\ninput: exact (every number was given exactly)" if rec["exact"] else
                 f"\ninput: not exact: the producer read JSON floats at {', '.join(rec['float_entries'][:6])}"
                 f"{' ...' if len(rec['float_entries']) > 6 else ''}; "
                 "the claim is about the binary numbers they denote")
    emit(data, text, args.json)
    return 0 if res.valid else 1

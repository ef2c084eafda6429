"""`riccati-verify family PARAMS_WITH_INTERVALS [--json] [--cert FILE]`: one claim for a whole box."""

from __future__ import annotations

from riccati_verify.app.commands import COMMANDS
from riccati_verify.app.commands._common import FLOAT_MAX, FLOAT_MIN, bounded_int, output_file
from riccati_verify.app.output import emit
from riccati_verify.core.errors import InputError

__all__ = ["HELP", "NAME", "add_arguments", "in_float_range_box", "run"]

NAME = "family"
HELP = COMMANDS[NAME]


def add_arguments(p):
    """The command's arguments: a parameter file whose entries may be intervals {"lo", "hi"}."""
    p.add_argument("params", help='parameter file (JSON); any entry may be an interval {"lo": "1/2", "hi": "3/4"}')
    p.add_argument("--cert", default=None, metavar="FILE", type=output_file,
                   help="write the certificate of the proved claim (blow-up bracket, regime or sign regime)")
    p.add_argument("--precision", type=bounded_int(64, 1024), default=128, help="ball arithmetic bits (64..1024)")
    p.add_argument("--max-pieces", type=bounded_int(1, 4096), default=256,
                   help="most sub-boxes a blow-up time bracket may use (1..4096); default 256")


def in_float_range_box(box, what: str = "parameter file"):
    """`box` unchanged, or InputError naming the first interval end outside the float range."""
    for key, ends in box.entries():
        for x in ends:
            if x and not FLOAT_MIN <= abs(x) <= FLOAT_MAX:
                raise InputError(f"{what}: {key} has magnitude outside [1e-300, 1e300], the range this "
                                 "command computes in with floating point (0 is allowed)")
    return box


def run(args) -> int:
    """Certify the box; exit 0 when some claim is certified for every member, 1 otherwise."""
    from riccati_verify.app.commands._common import record_file, write_cert
    from riccati_verify.certify.family import certify_family
    from riccati_verify.core.io import load_box

    box = in_float_range_box(load_box(args.params))
    record_file(args.params, "parameter file")   # its JSON floats, for the output and the certificate
    res = certify_family(box, precision=args.precision, max_pieces=args.max_pieces)
    data = res.to_dict()
    data["free"] = {k: [str(lo), str(hi)] for k, (lo, hi) in box.free()}
    if args.cert:
        if res.certificate is None:
            data["certificate"] = None
        else:
            write_cert(args.cert, res.certificate)
            data["certificate"] = str(args.cert)
    free = ", ".join(f"{k} in [{lo}, {hi}]" for k, (lo, hi) in box.free()) or "no interval entries"
    lines = [f"family of d = {box.dim} models: {free}",
             f"regime for every member: {res.regime}"
             + ("" if res.regime != "undetermined" else " (no regime certified)")
             + f"; {len(res.certified_claims)} of {len(res.claims)} claims certified ({res.status} as to "
               f"those claims: {', '.join(c.kind for c in res.certified_claims) or 'none'})"]
    if res.bracket:
        lines.append(f"blow-up time for every member: T* in ({res.bracket[0]}, {res.bracket[1]}]")
    for c in res.claims:
        lines.append(f"  {c.kind} {'certified' if c.valid else 'not certified'}: {c.reason}")
    if res.note:
        lines.append(f"note: {res.note}")
    if args.cert:
        lines.append(f"certificate: {args.cert}" if res.certificate else "no certificate: nothing was certified")
    emit(data, "\n".join(lines), args.json)
    return 0 if res.certified_claims else 1

"""`riccati-verify blowup PARAMS [--digits N] [--horizon T] [--cert FILE]`: enclose the blow-up time."""

from riccati_verify.certify.blowup import MAX_DIGITS
from riccati_verify.certify.global_existence import decide_blowup
from riccati_verify.app.commands._common import write_cert
from riccati_verify.core.errors import InputError
from riccati_verify.app.commands._common import load_for_floats
from riccati_verify.core.io import parse_entry
from riccati_verify.core.result import Status
from riccati_verify.app.output import Progress, emit
from riccati_verify.app.commands._common import DEFAULT_STATE_NOTE, bounded_int, output_file, state_or_default
from riccati_verify.app.commands import COMMANDS

__all__ = ["NAME", "HELP", "add_arguments", "run"]

NAME = "blowup"
HELP = COMMANDS[NAME]


def add_arguments(p):
    """The command's arguments: a parameter file, the digits wanted, an optional horizon and certificate file."""
    p.add_argument("params", help="parameter file (JSON) with A, B, V and the initial mean, cov "
                                   "(default N(0, I) when the file has no mean/cov, as for check)")
    p.add_argument("--digits", type=bounded_int(1, MAX_DIGITS), default=50,
                   help=f"correct significant digits wanted (1..{MAX_DIGITS}; general V: a best estimate, "
                        "worked at <= 60); default 50")
    p.add_argument("--horizon", default=None,
                   help="decide blow-up on [0, T] only (exact rational or decimal, e.g. 5 or 1/3)")
    p.add_argument("--cert", default=None, metavar="FILE", type=output_file, help="write a certificate that `verify` re-checks")


def _horizon(s):
    if s is None:
        return None
    h = parse_entry(s, "--horizon")
    if not h > 0:
        raise InputError(f"--horizon must be positive, got {s}")
    return h


def run(args) -> int:
    """Parse, call `decide_blowup` (`blowup_time` plus the convergence route), print; exit 0 exactly
    when its status is certified."""
    prob = load_for_floats(args.params)
    params = prob.require_params()
    state, state_used = state_or_default(prob)
    horizon = _horizon(args.horizon)
    with Progress(None, "blowup") as bar:
        res = decide_blowup(params, state, digits=args.digits, horizon=horizon, progress=bar.note)
    data = res.to_dict() | {"state": state_used}
    if args.cert:
        if res.certificate is None:
            data["certificate"] = None
            data["note"] = (data["note"] + "; " if data["note"] else "") + "no certificate: the result is not rigorous"
        else:
            write_cert(args.cert, res.certificate)
            data["certificate"] = str(args.cert)
    tag = "certified" if res.rigorous else "NOT certified (numerical evidence)"
    if res.blowup and res.rigorous:
        text = f"blow-up: T* in ({res.lower}, {res.upper}]\n{res.digits} correct digits, {tag}\nmethod: {res.method}"
    elif res.blowup:
        text = (f"blow-up (estimate): T* ~ {res.estimate}, estimated error {res.error_estimate}\n"
                f"estimate, {tag}\nmethod: {res.method}")
        if res.lower_bound:
            text += f"\nrigorous lower bound: T* >= {res.lower_bound}"
    elif res.blowup is False:
        span = "for all t >= 0" if res.horizon is None else f"on [0, {res.horizon}]"
        text = f"no blow-up {span}, {tag}\nmethod: {res.method}"
    else:
        text = f"undetermined\nmethod: {res.method}"
        if res.lower_bound:
            text += f"\nrigorous lower bound: T* >= {res.lower_bound}"
    if prob.state is None:
        text += f"\nnote: {DEFAULT_STATE_NOTE}"
    if res.note:
        text += f"\nnote: {res.note}"
    if res.closed_form:
        text += f"\nclosed form: {res.closed_form}"
    if args.cert:
        text += f"\ncertificate: {data['certificate'] or 'not written (not rigorous)'}"
    emit(data, text, args.json)
    # exit 0 when a definite verdict (blow-up bracket or no blow-up) was proved
    return 0 if res.status is Status.CERTIFIED else 1

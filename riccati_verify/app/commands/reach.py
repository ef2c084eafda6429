"""`riccati-verify reach PARAMS --target TARGET --time T`: steer a Gaussian to a target, or prove it impossible."""

from __future__ import annotations

from riccati_verify.app.commands._common import write_cert
from riccati_verify.core.errors import InputError
from riccati_verify.app.commands._common import load_for_floats
from riccati_verify.core.io import parse_entry
from riccati_verify.app.output import Progress, decimal_powers, emit, format_matrix
from riccati_verify.core.result import Status
from riccati_verify.certify import reach as R
from riccati_verify.app.commands._common import bounded_int, output_file
from riccati_verify.numeric.views import float_view
from riccati_verify.app.commands import COMMANDS

__all__ = ["HELP", "NAME", "add_arguments", "run"]

MAX_TIME = 100
"""Largest horizon: controls scale like 1/T and the re-integrations' work grows with T; beyond
this the command refuses instead of starting (reach --time 1e300 ran 5.5 min, then crashed;
--time 1e4 spends 4 min in the re-integration; --time 100 about 20 s)."""

NAME = "reach"
HELP = COMMANDS[NAME]


def add_arguments(p):
    """The reach flags; the library's own checks repeat the ones that concern the query."""
    p.add_argument("params", help="file with the initial Gaussian ('mean', 'cov'); A, B, V there are ignored")
    p.add_argument("--target", required=True, help="file with the target 'mean' and 'cov'")
    p.add_argument("--time", required=True, help="horizon T > 0 (number or exact rational, e.g. 1/2)")
    p.add_argument("--attention-only", action="store_true", help="A = 0: steer with V and B (b only if unavoidable)")
    p.add_argument("--max-norm", help="bound M on ‖A‖₂, ‖B‖₂, ‖V‖₂ and ‖b‖₂: report the certified bracket "
                                      "[T_lower, T_upper] of the minimal time and the verdict at --time")
    p.add_argument("--min-time-segments", type=bounded_int(0, 16), metavar="K",
                   help="with --max-norm: K equal segments of the optimised T_upper route (sup-norm minimised, "
                        "d <= 8; default 4); 0 = the explicit construction only")
    p.add_argument("--control-class", choices=("congruence", "full"), default="congruence",
                   help="congruence: B = V = 0 controls (A, b); full: any A, B, V, b. With --max-norm: the "
                        "controls the lower bound covers; with --min-energy: the controls optimised "
                        "(full uses costate Jacobians and is slower); default congruence")
    p.add_argument("--min-energy", type=bounded_int(1, 64), metavar="K",
                   help="also minimise the energy ∫‖θ‖² dt over K piecewise-constant segments "
                        "(SQP reaching the target exactly, polished at high precision) "
                        "starting from the constructed controls; with --cert these controls are certified")
    p.add_argument("--cert", metavar="FILE", type=output_file,
                   help="write a certificate (reachability, unreachable_rank or unreachable_in_time) to this file")
    p.add_argument("--dps", type=bounded_int(20, 200), default=R.VERIFY_DPS,
                   help=f"digits for the high-precision terminal check (default {R.VERIFY_DPS})")


def _positive(text: str, what: str):
    x = parse_entry(text, what)
    if not x > 0:
        raise InputError(f"{what} must be positive, got {text}")
    return x


def run(args) -> int:
    """Parse the arguments, ask the library for the verdict (`reach.reach_verdict`), print it."""
    state0 = load_for_floats(args.params).require_state()
    target = load_for_floats(args.target, "target file").require_state()
    T = _positive(args.time, "--time")
    if T > MAX_TIME:
        raise InputError(f"--time {args.time} exceeds the bound {MAX_TIME} on the horizon")
    M = _positive(args.max_norm, "--max-norm") if args.max_norm is not None else None
    # the library checks these combinations too, in its own words; here they are named by their flags
    if args.min_energy and args.attention_only:
        raise InputError("--min-energy starts from the congruence construction; drop --attention-only")
    if args.min_time_segments is not None and M is None:
        raise InputError("--min-time-segments needs --max-norm")
    if args.min_energy and M is not None:
        raise InputError("--min-energy minimises energy without a norm bound; drop --max-norm")
    if M is not None and args.attention_only:
        raise InputError("--max-norm applies to the congruence (B = V = 0) controls, not --attention-only")
    # stages: construct (or bracket) and verify; minimal energy; certificate
    bar = Progress(1 + bool(args.min_energy) + 1, "reach", enabled=not args.json)
    res = R.reach_verdict(state0, target, T, attention_only=args.attention_only, max_norm=M,
                          control_class=args.control_class, dps=args.dps, min_time_segments=args.min_time_segments,
                          min_energy_segments=args.min_energy or None, progress=bar)
    chk, opt, verdict = res.certificate_check, res.min_energy, res.status
    cert_info = None
    if args.cert:
        if chk is not None:
            cert_info = {"path": args.cert, "kind": res.certificate_kind, "valid": chk.valid, "reason": chk.reason}
            if res.certificate is not None:
                write_cert(args.cert, res.certificate)
        else:
            cert_info = {"path": None, "kind": None, "valid": False,
                         "reason": ("no certificate: the bounded-controls verdict is not a certified claim"
                                    if res.status_reason == R.BETWEEN_BOUNDS else
                                    res.status_reason)}
    data = res.to_dict() | {"certificate": cert_info}
    verdict_reason = decimal_powers(res.status_reason)
    lines = [f"verdict: {verdict} — {verdict_reason}",
             f"reachable: {res.reachable} — {res.reason}",
             f"ranks: initial {res.rank_initial}, target {res.rank_target}"]
    if res.reachable:
        lines += [f"mode: {res.mode}; route: {res.factorisation}" + ("; reflection used" if res.reflected else ""),
                  f"terminal error (mpmath, {args.dps} digits): {res.terminal_error:.3e}",
                  f"energy ∫|θ|² dt = {res.energy:.6g}; max control norm {res.max_norm:.6g}"]
        for k, s in enumerate(res.segments):
            A, B, V, b = float_view(s.params)
            lines.append(f"segment {k}: duration {float(s.duration):.6g}")
            for nm, X in (("A", A), ("B", B), ("V", V)):
                if X.any():
                    lines.append(f" {nm} =\n{format_matrix(X)}")
            if b.any():
                lines.append(f" b = {format_matrix(b)}")
    if res.bound:
        b = res.bound
        # the proved bracket, lower end rounded down and upper end rounded up (exact rationals);
        # "determined" prints only the digits both printed ends share
        lo, hi = R.outward_bracket(b['time_lower_bound'], b['time_upper_bound'])
        width = R.scientific_up(b['bracket_width'])
        lines.append(f"bounded controls (M = {M}, {b['control_class']} class): verdict at T = {T}: {b['verdict']}; "
                     f"minimal time in [{lo}, {hi}] "
                     f"(lower bound by the {b['lower_bound_criterion']}; upper bound by the {b['upper_bound_route']} "
                     f"route; width <= {width})"
                     + (f"; minimal time determined: {R.common_digits(lo, hi)}... (the digits both ends share)"
                        if b["determined"] and R.common_digits(lo, hi) else ""))
    if opt:
        lines.append(f"minimal-energy {opt['control_class']} controls ({opt['segments']} segments, "
                     f"SQP {opt['iterations']} iterations"
                     f"{'' if opt['converged'] else ', NOT converged'}"
                     f"{'' if opt['reaches_target'] else '; ' + opt['reaches_target_reason']}): "
                     f"energy {opt['energy']:.6g} vs constructive "
                     f"{opt['constructive_energy']:.6g}; terminal error (mpmath, {opt['terminal_error_dps']} digits) "
                     f"{opt['terminal_error']:.3e}; KKT residual {opt['kkt_residual']:.2e} (a local stationary point)")
    if cert_info:
        lines.append(f"certificate ({cert_info['kind']}): {'written to ' + args.cert if cert_info['valid'] else 'NOT written'}"
                     f" — {decimal_powers(cert_info['reason'])}")
    emit(data, "\n".join(lines), args.json)
    return 0 if verdict == Status.CERTIFIED else 1

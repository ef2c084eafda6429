"""`riccati-verify reach PARAMS --target TARGET --time T`: steer a Gaussian to a target, or prove it impossible."""

from __future__ import annotations

from ..certificates.checker import verify_certificate
from ..certificates.schema import write_certificate
from ..errors import InputError
from ..io import load_problem, parse_entry
from ..output import emit, format_matrix
from .. import reach as R
from ._common import bounded_int

NAME = "reach"
HELP = "controls that steer the Gaussian in PARAMS to a target Gaussian, or a certificate that none exist"


def add_arguments(p):
    p.add_argument("params", help="file with the initial Gaussian ('mean', 'cov'); A, B, V there are ignored")
    p.add_argument("--target", required=True, help="file with the target 'mean' and 'cov'")
    p.add_argument("--time", required=True, help="horizon T > 0 (number or exact rational, e.g. 1/2)")
    p.add_argument("--attention-only", action="store_true", help="A = 0: steer with V and B (b only if unavoidable)")
    p.add_argument("--max-norm", help="bound on the 2-norm of every control (congruence mode)")
    p.add_argument("--min-energy", type=bounded_int(1, 64), metavar="K",
                   help="also minimise the energy ∫|θ|² dt over K piecewise-constant (A, b) segments "
                        "(adjoint gradients, penalty method) starting from the constructed controls")
    p.add_argument("--cert", help="write a certificate (reachability or unreachable_rank) to this file")
    p.add_argument("--dps", type=bounded_int(20, 200), default=R.VERIFY_DPS,
                   help=f"digits for the high-precision terminal check (default {R.VERIFY_DPS})")


def _positive(text: str, what: str):
    x = parse_entry(text, what)
    if not x > 0:
        raise InputError(f"{what} must be positive, got {text}")
    return x


def run(args) -> int:
    state0 = load_problem(args.params).require_state()
    target = load_problem(args.target, "target file").require_state()
    T = _positive(args.time, "--time")
    M = _positive(args.max_norm, "--max-norm") if args.max_norm is not None else None
    if args.min_energy and args.attention_only:
        raise InputError("--min-energy optimises B = V = 0 controls; drop --attention-only")
    if args.cert and args.attention_only:
        raise InputError("--cert needs the congruence mode (B = V = 0 controls); drop --attention-only")
    res = R.reach(state0, target, T, attention_only=args.attention_only, max_norm=M, dps=args.dps)
    cert_info = None
    if args.cert:
        if res.reachable:
            tol = R.certificate_tolerance(res.terminal_error)
            cert = R.reachability_certificate(res, state0, target, T, tol)
        elif not res.segments:
            cert = R.unreachable_certificate(state0, target)
        else:
            cert = None
        if cert is not None:
            chk = verify_certificate(cert)
            cert_info = {"path": args.cert, "kind": cert["claim"]["kind"], "valid": chk.valid, "reason": chk.reason}
            if chk.valid:
                write_certificate(args.cert, cert)
        else:
            cert_info = {"path": None, "kind": None, "valid": False,
                         "reason": "no certificate: the bounded-controls verdict is not a certified claim"}
    opt = None
    if args.min_energy and res.reachable:
        from ..adjoint import minimal_energy

        k = len(res.segments)
        K = args.min_energy if args.min_energy % k == 0 else k * max(1, round(args.min_energy / k))
        e = minimal_energy(state0, target, res.segments, n_segments=K)
        opt = {"segments": K, "energy": e.energy, "constructive_energy": e.constructive_energy,
               "terminal_error_float": e.terminal_error, "penalty": e.penalty, "iterations": e.iterations,
               "controls": [{"duration": s.duration, "A": s.params.A, "b": s.params.b} for s in e.segments]}
    status = ("reached" if res.reachable else "unreachable" if not res.segments
              or (res.bound and res.bound["verdict"] == "unreachable") else "not certified")
    data = {"reachable": res.reachable, "status": status, "reason": res.reason, "mode": res.mode,
            "rank_initial": res.rank_initial, "rank_target": res.rank_target,
            "terminal_error": res.terminal_error, "terminal_error_dps": args.dps,
            "factorisation": res.factorisation, "reflected": res.reflected, "uses_b": res.uses_b,
            "energy": res.energy, "max_control_norm": res.max_norm, "bound": res.bound,
            "controls": res.controls() if res.reachable else [], "certificate": cert_info,
            "min_energy": opt}
    lines = [f"reachable: {res.reachable} — {res.reason}",
             f"ranks: initial {res.rank_initial}, target {res.rank_target}"]
    if res.reachable:
        lines += [f"mode: {res.mode}; route: {res.factorisation}" + ("; reflection used" if res.reflected else ""),
                  f"terminal error (mpmath, {args.dps} digits): {res.terminal_error:.3e}",
                  f"energy ∫|θ|² dt = {res.energy:.6g}; max control norm {res.max_norm:.6g}"]
        for k, s in enumerate(res.segments):
            A, B, V, b = s.params.arrays
            lines.append(f"segment {k}: duration {float(s.duration):.6g}")
            for nm, X in (("A", A), ("B", B), ("V", V)):
                if X.any():
                    lines.append(f" {nm} =\n{format_matrix(X)}")
            if b.any():
                lines.append(f" b = {format_matrix(b)}")
    if res.bound:
        lines.append(f"bounded controls (M = {float(M):g}): {res.bound['verdict']}; construction needs "
                     f"T >= {res.bound['construction_min_time']:.6g}; lower bound {float(res.bound['time_lower_bound']):.6g}")
    if opt:
        lines.append(f"minimal-energy controls ({opt['segments']} segments, penalty {opt['penalty']:g}): energy "
                     f"{opt['energy']:.6g} vs constructive {opt['constructive_energy']:.6g}; terminal error "
                     f"{opt['terminal_error_float']:.2e} (float, penalty method: approximate)")
    if cert_info:
        lines.append(f"certificate ({cert_info['kind']}): {'written to ' + args.cert if cert_info['valid'] else 'NOT written'}"
                     f" — {cert_info['reason']}")
    emit(data, "\n".join(lines), args.json)
    if cert_info and not cert_info["valid"]:
        return 1
    return 0 if res.reachable else 1

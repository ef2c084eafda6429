"""`riccati-verify flow PARAMS --time T`: integrate the moment ODE."""

import numpy as np

from riccati_verify.numeric.flow import integrate_moments, integrate_moments_mp
from riccati_verify.app.commands._common import load_for_floats
from riccati_verify.app.output import emit, format_matrix
from riccati_verify.app.commands._common import bounded_int, positive_float
from riccati_verify.app.commands import COMMANDS

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "flow"
HELP = COMMANDS[NAME]


def add_arguments(p):
    """Declare this subcommand's arguments (`cli` adds --json to every subcommand)."""
    p.add_argument("params", help="parameter file (JSON) with A, B, V, b, mean, cov")
    p.add_argument("--time", type=positive_float, required=True, help="final time T > 0")
    p.add_argument("--digits", type=bounded_int(0, 200), default=0,
                   help="if > 0, also integrate with mpmath at this many digits (slow) and report the gap")


def run(args) -> int:
    """Integrate and print the final state; exit 1 on blow-up or an unfinished integration."""
    prob = load_for_floats(args.params)
    params, state = prob.require_params(), prob.require_state()
    res = integrate_moments(params, state, args.time)
    data = {"time": res.time, "mean": res.mean, "cov": res.cov, "blowup": res.blowup,
            "rank": res.rank, "initial_rank": state.rank, "reason": res.reason,
            "method": "scipy DOP853 rtol=1e-12 atol=1e-14"}
    if args.digits > 0 and not (res.blowup or res.stalled):
        if args.digits > 100:
            from riccati_verify.core.errors import InputError

            raise InputError("--digits is bounded by 100 for the mpmath Taylor integrator")
        m, S = integrate_moments_mp(params, state, args.time, dps=args.digits)
        ref = np.array([float(x) for x in m] + [float(x) for r in S for x in r])
        got = np.concatenate([res.mean, res.cov.ravel()])
        data["high_precision_relative_gap"] = float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-300))
    data["stalled"] = res.stalled
    if res.blowup or res.stalled:
        text = f"{'blow-up' if res.blowup else 'not completed'}: {res.reason}\n(last state at t = {res.time:.10g})"
    else:
        text = (f"t = {res.time:g}\nmean = {np.array2string(res.mean, precision=10)}\n"
                f"cov =\n{format_matrix(res.cov, '{:.10g}')}\nrank(cov) = {res.rank} (initially {state.rank})")
        if "high_precision_relative_gap" in data:
            text += f"\nrelative gap to {args.digits}-digit integration: {data['high_precision_relative_gap']:.3g}"
    emit(data, text, args.json)
    return 1 if res.blowup or res.stalled else 0

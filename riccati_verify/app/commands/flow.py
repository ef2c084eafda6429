"""`riccati-verify flow PARAMS --time T`: integrate the moment ODE."""

import numpy as np

from riccati_verify.numeric.export import require_xarray, write_netcdf
from riccati_verify.numeric.flow import integrate_moments, integrate_moments_mp
from riccati_verify.app.commands._common import load_for_floats
from riccati_verify.app.output import emit, format_matrix, input_record
from riccati_verify.app.commands._common import (DEFAULT_STATE_NOTE, bounded_int, output_file, positive_float,
                                                 state_or_default)
from riccati_verify.app.commands import COMMANDS

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "flow"
HELP = COMMANDS[NAME]


def add_arguments(p):
    """Declare this subcommand's arguments (`cli` adds --json to every subcommand)."""
    p.add_argument("params", help="parameter file (JSON) with A, B, V, b and the initial mean, cov "
                                   "(default N(0, I) when the file has no mean/cov, as for check)")
    p.add_argument("--time", type=positive_float, required=True, help="final time T > 0")
    p.add_argument("--digits", type=bounded_int(0, 200), default=0,
                   help="if > 0, also integrate with mpmath at this many digits (slow) and report the gap")
    p.add_argument("--netcdf", type=output_file, default=None,
                   help="also write the trajectory (mean, cov on the sample times) as netCDF via xarray "
                        "(the xarray extra)")


def _high_precision(params, state, time: float, digits: int) -> dict:
    """The final state to `digits` significant digits where two mpmath Taylor integrations at
    digits + 5 and digits + 15 working digits agree (fewer where they do not): an estimate of
    the digits that are right, not a proof."""
    import mpmath

    dps = (digits + 5, digits + 15)
    (m1, S1), (m2, S2) = (integrate_moments_mp(params, state, time, dps=p) for p in dps)
    with mpmath.workdps(dps[1]):
        a = list(m1) + [x for r in S1 for x in r]
        b = list(m2) + [x for r in S2 for x in r]
        scale = max(abs(x) for x in b) or mpmath.mpf(1)
        gap = max(abs(x - y) for x, y in zip(a, b)) / scale
        # digits relative to the largest entry, so a near-zero entry does not hide the agreement
        agree = digits if gap == 0 else int(mpmath.floor(-mpmath.log10(gap)))
        shown = max(1, min(digits, agree))

        def fmt(x):
            # significant digits of x that lie above the agreeing decimal place of the largest entry
            n = shown if x == 0 else max(1, shown + int(mpmath.floor(mpmath.log10(abs(x) / scale))))
            return mpmath.nstr(x, n, min_fixed=-4, max_fixed=6) if n > 0 else "0"

        return {"digits_requested": digits, "digits_shown": shown, "dps": list(dps),
                "mean": [fmt(x) for x in m2], "cov": [[fmt(x) for x in r] for r in S2],
                "method": "mpmath odefun (Taylor) at two working precisions; digits where they agree"}


def run(args) -> int:
    """Integrate and print the final state; exit 1 on blow-up or an unfinished integration."""
    prob = load_for_floats(args.params)
    params = prob.require_params()
    state, state_used = state_or_default(prob)
    if args.netcdf:
        require_xarray()                    # before the work, so that none is lost to a missing extra
    res = integrate_moments(params, state, args.time)
    # `blowup` is the float integrator's norm threshold, not a proof (`riccati-verify blowup` decides)
    data = {"time": res.time, "mean": res.mean, "cov": res.cov, "blowup": res.blowup, "rigorous": False,
            "rank": res.rank, "initial_rank": state.rank, "reason": res.reason,
            "method": "scipy DOP853 rtol=1e-12 atol=1e-14", "state": state_used}
    high = None
    if args.digits > 0 and not (res.blowup or res.stalled):
        if args.digits > 100:
            from riccati_verify.core.errors import InputError

            raise InputError("--digits is bounded by 100 for the mpmath Taylor integrator")
        high = _high_precision(params, state, args.time, args.digits)
        ref = np.array([float(x) for x in high["mean"]] + [float(x) for r in high["cov"] for x in r])
        got = np.concatenate([res.mean, res.cov.ravel()])
        data["high_precision_relative_gap"] = float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-300))
        data["high_precision"] = high
    data["stalled"] = res.stalled
    if res.blowup or res.stalled:
        text = (f"{'blow-up in floats (numerical, not a proof; riccati-verify blowup decides)' if res.blowup else 'not completed'}"
                f": {res.reason}\n(last state at t = {res.time:.10g})")
    elif high is not None:
        text = (f"t = {res.time:g}  (to {high['digits_shown']} digits relative to the largest entry, where mpmath "
                f"Taylor integrations at {high['dps'][0]} and {high['dps'][1]} working digits agree; numerical, "
                f"not certified)\n"
                f"mean = [{', '.join(high['mean'])}]\ncov =\n"
                + "\n".join("  [" + ", ".join(row) + "]" for row in high["cov"])
                + f"\nrank(cov) = {res.rank} (initially {state.rank})\n"
                f"relative gap of the float integration (DOP853) to it: {data['high_precision_relative_gap']:.3g}")
        if high["digits_shown"] < args.digits:
            text += f"\nnote: {args.digits} digits asked; only {high['digits_shown']} agree between the two runs"
    else:
        text = (f"t = {res.time:g}\nmean = {np.array2string(res.mean, precision=10)}\n"
                f"cov =\n{format_matrix(res.cov, '{:.10g}')}\nrank(cov) = {res.rank} (initially {state.rank})")
    if prob.state is None:
        text += f"\nnote: {DEFAULT_STATE_NOTE}"
    if args.netcdf:
        data["netcdf"] = write_netcdf(res.to_xarray(), args.netcdf, input_record())
        text += f"\ntrajectory (netCDF): {args.netcdf}"
    emit(data, text, args.json)
    return 1 if res.blowup or res.stalled else 0

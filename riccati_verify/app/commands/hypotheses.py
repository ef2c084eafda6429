"""`riccati-verify hypotheses THEOREM PARAMS`: check a theorem's hypotheses on your parameters.

THEOREM is a module of proofs/ that defines
`hypotheses(problem, *, time=None) -> list[riccati_verify.certify.hypotheses.HypothesisCheck]`
(PARAMS is a training spec instead when the module sets HYPOTHESES_INPUT = "training spec";
keyword arguments optional: a theorem takes only the ones it needs among time, noise,
delta, target — the --time/--noise/--delta/--target options);
each check is decided exactly (rationals, exact LDLᵀ, exact inertia) or by a
rigorous enclosure, and `holds` is None when it could not be decided.  Exit 0
when every hypothesis holds, 1 when one fails or is undecided (named), 2 on
bad input (unknown theorem, malformed file, a theorem whose hypotheses are
not about a parameter file).
"""

from __future__ import annotations

import inspect
from fractions import Fraction

from riccati_verify.core.errors import InputError
from riccati_verify.core.result import Status
from riccati_verify.app.commands._common import load_for_floats
from riccati_verify.core.io import parse_entry
from riccati_verify.app.output import describe, emit, record_input
from riccati_verify.app.commands import COMMANDS

NAME = "hypotheses"
HELP = COMMANDS[NAME]


def _time(s: str) -> Fraction:
    t = parse_entry(s, "--time")
    if t <= 0:
        raise InputError(f"--time must be positive, got {s}")
    return t


def _noise(s: str) -> Fraction:
    return parse_entry(s, "--noise")


def _delta(s: str) -> Fraction:
    return parse_entry(s, "--delta")


def _target(path: str):
    try:
        target = load_for_floats(path, "target file").state
    except InputError as e:   # the parameter file's messages do not say which file they are about
        raise InputError(str(e) if "target file" in str(e) else f"target file: {e}") from None
    if target is None:
        raise InputError("target file: no Gaussian state ('mean' and 'cov' are required)")
    return target


def add_arguments(p):
    """The command's arguments: a theorem, a parameter file and the quantities some theorems need."""
    p.add_argument("theorem", help="theorem name (a module of proofs/, e.g. rank_invariance)")
    p.add_argument("params", help="parameter file (JSON)")
    p.add_argument("--time", type=str, default=None,
                   help="horizon T for hypotheses stated on [0, T] (exact: '1/2', '0.5'); default: all t >= 0")
    p.add_argument("--noise", type=str, default=None,
                   help="common-noise level sigma (exact rational; common_noise)")
    p.add_argument("--delta", type=str, default=None,
                   help="mixture component offset delta of (1/2)N(delta, s) + (1/2)N(-delta, s) "
                        "(exact rational; mixture_noninvariance)")
    p.add_argument("--target", type=str, default=None,
                   help="file with the target Gaussian N(m1, Sigma1) ('mean', 'cov'; reachability)")


def checkable_theorems() -> list[str]:
    """Theorems with a `hypotheses(problem)` function, listed in the error for one without."""
    from riccati_verify import proofs

    out = []
    for name in proofs.all_proofs():
        try:
            mod = proofs.load(name)
        except Exception:  # a broken proofs module is not a reason to fail this listing
            continue
        if callable(getattr(mod, "hypotheses", None)):
            out.append(name)
    return out


__all__ = ["NAME", "HELP", "add_arguments", "checkable_theorems", "run"]

OPTIONS = {"time": "--time", "noise": "--noise", "delta": "--delta", "target": "--target"}


def _shown(witness: dict) -> dict:
    """The witness as printed: a library `missing` quantity becomes 'pass --OPTION' in the reason
    (the library names quantities, only the command line knows its options)."""
    missing = witness.get("missing")
    if missing not in OPTIONS:
        return witness
    w = {k: v for k, v in witness.items() if k != "missing"}
    w["reason"] = f"{w.get('reason', 'missing quantity')}: pass {OPTIONS[missing]}"
    return w


def run(args) -> int:
    """Parse the theorem, the file and the quantities; the verdict is `certify.hypotheses.all_hold`."""
    from riccati_verify import proofs
    from riccati_verify.certify.hypotheses import all_hold

    mod = proofs.load(args.theorem)          # InputError (exit 2) for an unknown name
    fn = getattr(mod, "hypotheses", None)
    if not callable(fn):
        raise InputError(f"theorem '{args.theorem}' has no hypotheses checkable on a parameter file; "
                         f"checkable: {', '.join(checkable_theorems())}")
    if getattr(mod, "HYPOTHESES_INPUT", None) == "training spec":   # the training theorems (issue 16)
        from riccati_verify.core.io import read_json_file

        problem = read_json_file(args.params, "training spec")
        record_input("training spec", problem)     # its JSON floats: "exact": false in the output
    else:
        problem = load_for_floats(args.params)
    accepted = inspect.signature(fn).parameters
    kwargs = {}
    # Each extra quantity goes only to a theorem whose hypotheses() takes it; giving it to another
    # theorem is bad input (it would be silently ignored otherwise).
    for option, key, what, parse in (("--time", "time", "depends on a horizon", _time),
                                     ("--noise", "noise", "depends on a noise level", _noise),
                                     ("--delta", "delta", "depends on a mixture offset", _delta),
                                     ("--target", "target", "depends on a target state", _target)):
        raw = getattr(args, key, None)
        if raw is None:
            continue
        if key not in accepted:
            raise InputError(f"theorem '{args.theorem}' has no hypothesis that {what} ({option})")
        kwargs[key] = parse(raw)
    checks = fn(problem, **kwargs)
    status, failed, undecided = all_hold(checks)
    data = {"theorem": args.theorem, "claim": getattr(mod, "CLAIM", ""),
            "time": kwargs.get("time"), "noise": kwargs.get("noise"), "delta": kwargs.get("delta"),
            "target": args.target,
            "hypotheses": [c.to_dict() | {"witness": _shown(c.witness)} for c in checks],
            "all_hold": status is Status.CERTIFIED, "failed": failed, "undecided": undecided}
    mark = {True: "holds", False: "FAILS", None: "undecided"}
    lines = [f"theorem {args.theorem}: {data['claim']}"]
    lines += [f"  [{mark[c.holds]}] {c.name}" + (f"  ({describe(_shown(c.witness))})" if c.witness else "")
              for c in checks]
    if failed:
        lines.append(f"hypothesis failed: {', '.join(failed)}")
    elif undecided:
        lines.append(f"hypothesis undecided (could not be proved either way): {', '.join(undecided)}")
    else:
        lines.append("all hypotheses hold")
    emit(data, "\n".join(lines), args.json)
    return 0 if data["all_hold"] else 1

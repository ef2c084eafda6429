"""`riccati-verify hypotheses THEOREM PARAMS`: check a theorem's hypotheses on your parameters.

THEOREM is a module of proofs/ that defines
`hypotheses(problem, *, time=None) -> list[riccati_verify.hypotheses.HypothesisCheck]`;
each check is decided exactly (rationals, exact LDLᵀ, exact inertia) or by a
rigorous enclosure, and `holds` is None when it could not be decided.  Exit 0
when every hypothesis holds, 1 when one fails or is undecided (named), 2 on
bad input (unknown theorem, malformed file, a theorem whose hypotheses are
not about a parameter file).
"""

from __future__ import annotations

import inspect
from fractions import Fraction

from ..errors import InputError
from ..io import load_problem, parse_entry
from ..output import emit

NAME = "hypotheses"
HELP = "check each hypothesis of a theorem in proofs/ on the given parameters (exit 0 all hold, 1 one fails)"


def _time(s: str) -> Fraction:
    t = parse_entry(s, "--time")
    if t <= 0:
        raise InputError(f"--time must be positive, got {s}")
    return t


def add_arguments(p):
    p.add_argument("theorem", help="theorem name (a module of proofs/, e.g. rank_invariance)")
    p.add_argument("params", help="parameter file (JSON)")
    p.add_argument("--time", type=str, default=None,
                   help="horizon T for hypotheses stated on [0, T] (exact: '1/2', '0.5'); default: all t >= 0")


def checkable_theorems() -> list[str]:
    import proofs

    out = []
    for name in proofs.all_proofs():
        try:
            mod = proofs.load(name)
        except Exception:  # a broken proofs module is not a reason to fail this listing
            continue
        if callable(getattr(mod, "hypotheses", None)):
            out.append(name)
    return out


def _describe(witness: dict) -> str:
    return "; ".join(f"{k}: {v}" for k, v in witness.items())


def run(args) -> int:
    import proofs

    mod = proofs.load(args.theorem)          # InputError (exit 2) for an unknown name
    fn = getattr(mod, "hypotheses", None)
    if not callable(fn):
        raise InputError(f"theorem '{args.theorem}' has no hypotheses checkable on a parameter file; "
                         f"checkable: {', '.join(checkable_theorems())}")
    problem = load_problem(args.params)
    kwargs = {}
    if args.time is not None:
        if "time" not in inspect.signature(fn).parameters:
            raise InputError(f"theorem '{args.theorem}' has no hypothesis that depends on a horizon (--time)")
        kwargs["time"] = _time(args.time)
    checks = fn(problem, **kwargs)
    failed = [c.name for c in checks if c.holds is False]
    undecided = [c.name for c in checks if c.holds is None]
    data = {"theorem": args.theorem, "claim": getattr(mod, "CLAIM", ""),
            "time": kwargs.get("time"),
            "hypotheses": [{"name": c.name, "holds": c.holds, "witness": c.witness} for c in checks],
            "all_hold": not failed and not undecided, "failed": failed, "undecided": undecided}
    mark = {True: "holds", False: "FAILS", None: "undecided"}
    lines = [f"theorem {args.theorem}: {data['claim']}"]
    lines += [f"  [{mark[c.holds]}] {c.name}" + (f"  ({_describe(c.witness)})" if c.witness else "") for c in checks]
    if failed:
        lines.append(f"hypothesis failed: {', '.join(failed)}")
    elif undecided:
        lines.append(f"hypothesis undecided (could not be proved either way): {', '.join(undecided)}")
    else:
        lines.append("all hypotheses hold")
    emit(data, "\n".join(lines), args.json)
    return 0 if data["all_hold"] else 1

"""`riccati-verify check [PARAMS] [--json] [--cert FILE]`: regime classification.

With PARAMS: classify the long-time behaviour of Σ(t) (equilibrium / blowup /
collapse / growth / undetermined), report every seed hypothesis with its exact
status and whether the seeds' sign rule agrees; exit 0 when the regime is
certified, 1 when it is not.  `--cert FILE` writes the certificate behind a
certified regime (re-check it with `riccati-verify verify FILE`).

Without PARAMS: run the built-in examples (`riccati_verify.app.examples`) and
print a table; exit 0 iff every example lands in its expected regime.
"""

from __future__ import annotations

import sys

from riccati_verify.app.commands._common import write_cert
from riccati_verify.core.errors import InputError
from riccati_verify.core.exact import frac_to_str
from riccati_verify.app.commands._common import load_for_floats
from riccati_verify.app.output import Progress, bound_text, describe, emit, enclosure_text
from riccati_verify.app.commands._common import bounded_int, output_file
from riccati_verify.app.commands import COMMANDS

__all__ = ["NAME", "HELP", "add_arguments", "run", "run_examples"]

NAME = "check"
HELP = COMMANDS[NAME]


def add_arguments(p):
    """The command's arguments: an optional parameter file, a certificate file and the Newton seed."""
    p.add_argument("params", nargs="?", help="parameter file (JSON); omit to run the built-in examples")
    p.add_argument("--cert", metavar="FILE", type=output_file, help="write the certificate of the certified regime to FILE")
    p.add_argument("--seed", type=bounded_int(0, 2 ** 32 - 1), default=0,
                   help="seed for the random Newton starts (recorded in the output)")


def _fmt(x) -> str:
    if x is None:
        return "-"
    try:
        return f"{float(x):.6g}"
    except (TypeError, ValueError):
        return str(x)


def _key_numbers(r) -> str:
    if r.regime == "equilibrium" and r.equilibrium:
        cov = r.equilibrium["cov"]
        return "diag Sigma* = [" + ", ".join(_fmt(cov[i][i]) for i in range(len(cov))) + "]"
    if r.regime == "blowup" and r.blowup:
        lo, hi = str(r.blowup.get("lower")), str(r.blowup.get("upper"))
        common = next((i for i, (a, b) in enumerate(zip(lo, hi)) if a != b), min(len(lo), len(hi)))
        if r.blowup.get("rigorous") and common > 2 and "." in lo[:common]:
            # The digits shared by both ends of the enclosure are certified.
            return f"T* = {lo[:min(common, 24)]}…" + ("" if r.blowup.get("rigorous") else " (not rigorous)")
        if r.blowup.get("rigorous"):
            # rounded outward: to nearest, a proved [0.49…95, 0.50…05] printed as [0.5, 0.5]
            return "T* in " + enclosure_text(lo, hi)
        return f"T* in [{_fmt(r.blowup.get('lower'))}, {_fmt(r.blowup.get('upper'))}] (not rigorous)"
    return ""


def _text(r) -> str:
    lines = [f"regime: {r.regime} ({r.status})",
             f"method: {r.method}", f"state: {r.state}", "hypotheses:"]
    for h in r.hypotheses:
        mark = {True: "holds", False: "fails", None: "undecided"}[h.holds]
        lines.append(f"  [{mark:9s}] {h.name}  ({describe(h.witness)})" if h.witness else f"  [{mark:9s}] {h.name}")
    if r.equilibrium:
        e = r.equilibrium
        lines.append("equilibrium covariance Sigma*" + (" (exact)" if e.get("exact") else
                                                        f" (enclosure radius <= {bound_text(e['radius'], 'up')})" if e.get('radius') is not None else " (enclosure)") + ":")
        lines += ["  [" + ", ".join(_fmt(x) for x in row) + "]" for row in e["cov"]]
        if e.get("mean") is not None:
            hurwitz = {True: "certified", False: "refuted", None: "undecided"}.get(e.get("mean_stable"), "undecided")
            lines.append("mean equilibrium m* = [" + ", ".join(_fmt(x) for x in e["mean"]) + "]"
                         f"; M = A + V + V Sigma* B Hurwitz: {hurwitz}")
    if r.blowup:
        b = r.blowup
        how = f"{'rigorous' if b.get('rigorous') else 'not rigorous'}; {b.get('method')}"
        if b.get("lower") is not None and b.get("upper") is not None:
            lines.append(f"blow-up time: [{b['lower']}, {b['upper']}] ({how})")
        elif b.get("estimate") is not None:
            lines.append(f"blow-up time: about {b['estimate']} (an estimate; {how})")
        else:
            lines.append(f"blow-up time: no enclosure computed ({how})")
    if r.seed_prediction:
        lines.append(f"seed sign rule predicts: {r.seed_prediction}; agrees: {r.agrees_with_seed}")
    if r.note:
        lines.append(f"note: {r.note}")
    return "\n".join(lines)


def run_examples(args) -> int:
    """The built-in examples table; exit 0 iff every example lands in its expected regime."""
    from riccati_verify.app.examples import EXAMPLES
    from riccati_verify.certify.stability import classify_regime

    prog = Progress(len(EXAMPLES), "check examples", enabled=not args.json)
    rows, ok_all = [], True
    for ex in EXAMPLES:
        r = classify_regime(ex.params, ex.state, seed=args.seed)
        ok = r.regime == ex.expected
        ok_all &= ok
        rows.append({"example": ex.name, "d": ex.params.dim, "expected": ex.expected, "regime": r.regime,
                     "certified": r.certified, "as_expected": ok, "key_numbers": _key_numbers(r),
                     "seed_prediction": r.seed_prediction, "agrees_with_seed": r.agrees_with_seed})
        prog.step(ex.name)
    head = f"{'example':26s} {'d':>2s} {'expected':12s} {'regime':12s} {'certified':9s} {'ok':3s} key numbers"
    text = [head, "-" * len(head)]
    for w in rows:
        text.append(f"{w['example']:26s} {w['d']:>2d} {w['expected']:12s} {w['regime']:12s} "
                    f"{'yes' if w['certified'] else 'no':9s} {'yes' if w['as_expected'] else 'NO':3s} "
                    f"{w['key_numbers']}")
    n_ok = sum(w["as_expected"] for w in rows)
    text.append(f"{n_ok}/{len(rows)} examples classified as expected; "
                f"{sum(w['certified'] for w in rows)} certified (seed {args.seed})")
    emit({"examples": rows, "all_as_expected": ok_all, "seed": args.seed}, "\n".join(text), args.json)
    return 0 if ok_all else 1


def run(args) -> int:
    """Parse, call `classify_regime`, print (and write its certificate); exit 0 iff certified."""
    from riccati_verify.core.result import Status

    if args.params is None:
        if args.cert:
            raise InputError("--cert needs a parameter file")
        return run_examples(args)
    from riccati_verify.certify.stability import classify_regime

    problem = load_for_floats(args.params)
    params = problem.require_params()
    r = classify_regime(params, problem.state, seed=args.seed)
    data = r.to_dict() | {"seed": args.seed}
    if r.equilibrium:
        data["equilibrium"] = {k: (v if k != "cov" else [[frac_to_str(x) for x in row] for row in v])
                               for k, v in r.equilibrium.items()}
    if args.cert:
        why = r.missing_certificate_reason()
        if why is None:
            write_cert(args.cert, r.certificate)
            data["certificate_file"] = args.cert
        else:
            sys.stderr.write(f"riccati-verify check: {why}; nothing written to {args.cert}\n")
            data["certificate_file"] = None
    emit(data, _text(r), args.json)
    return 0 if r.status is Status.CERTIFIED else 1

"""`riccati-verify prove [NAME ...|--all] [--report DIR]`: run proofs/ and print the verdict table.

Each proof runs in a forked child process, so that one that crashes or runs
past `--timeout` is reported as *not certified* (with the reason) instead of
taking the whole run down.  Exit 0 when every claim holds (certified or
confirmed numerically), 1 otherwise.
"""

from __future__ import annotations

import multiprocessing as mp
import time
import traceback

from riccati_verify.core.errors import InputError
from riccati_verify.app.output import Progress, emit
from riccati_verify.core.result import ProofResult, Status, Verdict
from riccati_verify.app.commands._common import output_dir, positive_float, require
from riccati_verify.app.commands import COMMANDS

__all__ = [
    "HELP", "HOLDS", "NAME", "add_arguments", "format_table", "result_dict", "run", "run_proof",
]

NAME = "prove"
HELP = COMMANDS[NAME]

HOLDS = (Status.CERTIFIED, Status.CONFIRMED_NUMERICALLY)
"""The verdicts `holds` / `all_hold` and exit status 0 accept: certified, or the explicitly weaker
confirmed numerically.  `certified` / `all_certified` in the JSON keep the two apart."""


def add_arguments(p):
    """Declare this subcommand's arguments (`cli` adds --json to every subcommand)."""
    p.add_argument("names", nargs="*", metavar="NAME", help="proofs to run (default: all)")
    p.add_argument("--all", action="store_true", help="run every proof")
    p.add_argument("--report", metavar="DIR", default=None, type=output_dir,
                   help="write report.md and report.html with plots into DIR")
    p.add_argument("--timeout", type=positive_float, default=300.0,
                   help="seconds allowed per proof before it counts as not certified (default 300)")
    p.add_argument("--seed", type=int, default=0, help="seed for the report's simulations (default 0)")
    p.add_argument("--list", action="store_true", help="list the proofs and exit")


def _child(name: str, conn) -> None:
    from riccati_verify import proofs

    from riccati_verify.app.sweep import single_threaded_blas

    try:
        mod = proofs.load(name)
        t0 = time.perf_counter()
        with single_threaded_blas():
            r = mod.check()
        r = ProofResult(r.name, r.seed, r.claim, r.symbolic, r.numeric, time.perf_counter() - t0)
        conn.send(("ok", r))
    except BaseException as e:  # reported, never swallowed: the verdict says the check did not run
        conn.send(("error", f"{type(e).__name__}: {e}", traceback.format_exc(limit=4)))
    finally:
        conn.close()


def _failed(name: str, seed: str, claim: str, why: str, evidence: dict, seconds: float) -> ProofResult:
    v = Verdict(Status.NOT_CERTIFIED, evidence, why)
    return ProofResult(name, seed, claim, v, v, seconds)


def run_proof(name: str, timeout: float) -> ProofResult:
    """Run proofs/<name>.check() in a child process with a time limit."""
    from riccati_verify import proofs

    mod = proofs.load(name)
    seed, claim = str(getattr(mod, "SEED", "?")), str(getattr(mod, "CLAIM", ""))
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(name, send), daemon=True)
    t0 = time.perf_counter()
    proc.start()
    send.close()
    msg = None
    if recv.poll(timeout):
        try:
            msg = recv.recv()
        except EOFError:
            msg = None
    seconds = time.perf_counter() - t0
    if proc.is_alive():
        proc.kill()
    proc.join(5)
    if msg is None:
        why = (f"timed out after {timeout:g}s" if seconds >= timeout
               else f"the check process died (exit code {proc.exitcode})")
        return _failed(name, seed, claim, why, {"timeout_s": timeout}, seconds)
    if msg[0] == "error":
        return _failed(name, seed, claim, f"the check raised {msg[1]}", {"traceback": msg[2]}, seconds)
    return msg[1]


def _short(v: Verdict) -> str:
    return f"{v.status}" + (f" ({v.note})" if v.note else "")


def format_table(results: list[ProofResult]) -> str:
    """The text verdict table: one row per theorem, then each route's status and note."""
    head = f"{'theorem':<28} {'seed':<8} {'verdict':<22} {'time':>7}  claim"
    lines = [head, "-" * len(head)]
    for r in results:
        lines.append(f"{r.name:<28} {r.seed:<8} {str(r.status):<22} {r.seconds:>6.1f}s  {r.claim}")
        lines.append(f"{'':<28}   exact/symbolic: {_short(r.symbolic)}")
        lines.append(f"{'':<28}   numeric:        {_short(r.numeric)}")
        if r.reason:
            lines.append(f"{'':<28}   why:            {r.reason}")
    return "\n".join(lines)


def _plain(x):
    """Evidence is free-form: anything JSON cannot hold (a set, an object) is shown as text."""
    import json

    from riccati_verify.app.output import jsonable

    return json.loads(json.dumps(jsonable(x), default=str))


def result_dict(r: ProofResult) -> dict:
    """One proof's JSON row for --json; free-form evidence is made JSON-safe."""
    return _plain({"name": r.name, "seed": r.seed, "claim": r.claim, "verdict": str(r.status),
            "reason": r.reason, "holds": r.status in HOLDS, "certified": r.status is Status.CERTIFIED,
            "seconds": r.seconds,
            "symbolic": {"status": str(r.symbolic.status), "note": r.symbolic.note, "evidence": r.symbolic.evidence},
            "numeric": {"status": str(r.numeric.status), "note": r.numeric.note, "evidence": r.numeric.evidence}})


def run(args) -> int:
    """Run the selected proofs and print the verdict table; exit 0 when every claim holds."""
    from riccati_verify import proofs

    available = proofs.all_proofs()
    if args.list:
        emit({"proofs": available}, "\n".join(available), args.json)
        return 0
    require(not (args.all and args.names), "give proof names or --all, not both")
    names = available if (args.all or not args.names) else list(dict.fromkeys(args.names))
    for n in names:
        if n not in available:
            raise InputError(f"unknown proof '{n}'; available: {', '.join(available)}")
    progress = Progress(len(names), "prove")
    results = []
    for n in names:
        results.append(run_proof(n, args.timeout))
        progress.step(f"{n}: {results[-1].status}")
    report_paths = None
    if args.report:
        from riccati_verify.app.report import write_report

        report_paths = write_report(args.report, results, seed=args.seed)
    holds = all(r.status in HOLDS for r in results)
    counts = {str(s): sum(1 for r in results if r.status is s) for s in Status}
    text = format_table(results) + "\n\n" + ", ".join(f"{k}: {v}" for k, v in counts.items())
    if report_paths:
        text += "\nreport: " + ", ".join(str(p) for p in report_paths)
    emit({"proofs": [result_dict(r) for r in results], "counts": counts, "all_hold": holds,
          "all_certified": all(r.status is Status.CERTIFIED for r in results),
          "report": [str(p) for p in report_paths] if report_paths else None}, text, args.json)
    return 0 if holds else 1

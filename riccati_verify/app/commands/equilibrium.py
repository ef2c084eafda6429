"""`riccati-verify equilibrium PARAMS [--json]`: equilibria of the Bernoulli equation.

Lists Σ = 0, the exact closed forms (d = 1; V = vI through the Lyapunov
equation; diagonal decoupled systems) and Newton solutions from seeded random
starts.  Each is `verified` (exactly, or by a Krawczyk ball in arb
arithmetic), with `positive_definite` proved on the whole ball, and `stable`
(True when a rational Lyapunov certificate is accepted by the checker; False
when an eigenvalue with Re > 0 is proved exactly or seen numerically, see
`stable_certified`).  Exit 0 when at least one verified positive-definite
equilibrium exists, 1 otherwise.

``--all`` adds the census of *all* PSD equilibria Σ with max_i Σ_ii ≤ R (so all with
‖Σ‖₂ ≤ R) for d ≤ 3, by a box cover the independent checker re-verifies
(`certify.equilibria_all`); R is ``--radius``, else an a-priori bound when the trace form
tr(VΣBΣ) is definite (then the list holds every PSD equilibrium), else twice the largest
one Newton found.  The JSON's "all" entry says which, and why.  ``--all-cert FILE`` writes its
`all_equilibria` certificate.  With ``--all`` the exit status is 0 iff the census is certified.
A radius beyond 2^40 or d > 3 is refused (exit 2) before the subdivision starts; a cover that
needs more than ``--max-boxes`` boxes ends as not certified (exit 1).

``--cert FILE`` writes a `lyapunov_stability` certificate (local stability of the enclosed
Σ*, independent of any initial state) for each equilibrium certified stable: to FILE when
there is one, else to FILE-k.json for equilibrium [k]; `verify` re-checks each.
"""

from __future__ import annotations

from riccati_verify.app.commands._common import load_for_floats
from riccati_verify.app.output import bound_text, emit, human
from riccati_verify.app.commands._common import bounded_int, output_file, write_cert
from riccati_verify.app.commands import COMMANDS

__all__ = ["NAME", "HELP", "add_arguments", "run"]

NAME = "equilibrium"
HELP = COMMANDS[NAME]


def add_arguments(p):
    """The command's arguments: a parameter file, the Newton seed and starts, an optional target mean."""
    p.add_argument("params", help="parameter file (JSON)")
    p.add_argument("--seed", type=bounded_int(0, 2 ** 32 - 1), default=0, help="seed for random Newton starts")
    p.add_argument("--starts", type=bounded_int(0, 200), default=8, help="number of random Newton starts")
    p.add_argument("--cert", metavar="FILE", type=output_file,
                   help="write a lyapunov_stability certificate for each equilibrium certified stable "
                        "(FILE, or FILE-k.json for equilibrium [k] when several are)")
    p.add_argument("--all", action="store_true",
                   help="certify the list of all PSD equilibria with max diag <= R (d <= 3, a box cover)")
    p.add_argument("--radius", metavar="R", help="R for --all (a rational); default: an a-priori bound if one "
                                                 "exists, else twice the largest equilibrium found")
    p.add_argument("--max-boxes", type=bounded_int(1, 500_000), default=100_000,
                   help="box budget of --all (default 100000)")
    p.add_argument("--all-cert", metavar="FILE", type=output_file,
                   help="write the all_equilibria certificate of --all")
    p.add_argument("--target-mean", metavar="JSON",
                   help='prescribed mean, e.g. \'[1, "1/2"]\': report b = -M m_target for each exact PD '
                        'equilibrium and whether M = A + V + V S* B is Hurwitz (exact)')


def run(args) -> int:
    """Parse, call `find_equilibria` (and `mean_target_entry`), print; exit 0 iff its status is certified."""
    from riccati_verify.core.result import Status
    from riccati_verify.certify.stability import find_equilibria

    params = load_for_floats(args.params).require_params()
    radius = None
    if args.all or args.radius is not None or args.all_cert:
        from riccati_verify.core.io import parse_entry
        from riccati_verify.certify.equilibria_all import check_request

        radius = None if args.radius is None else parse_entry(args.radius, "--radius")
        check_request(params.dim, radius, args.max_boxes)
    reps = find_equilibria(params, seed=args.seed, n_random=args.starts)
    lines = [f"{len(reps)} equilibria (seed {args.seed}, {args.starts} random Newton starts):"]
    for k, r in enumerate(reps):
        lines.append(f"[{k}] {r.source}: verified={r.verified} "
                     f"{'exact' if r.radius == 0 else 'ball radius <= ' + bound_text(r.radius, 'up')} "
                     f"PD={human(r.positive_definite, 'undecided')} stable={_stability_text(r)}")
        lines += ["    [" + ", ".join(f"{float(x):.8g}" for x in row) + "]" for row in r.cov]
    data = reps.to_dict() | {"seed": args.seed}
    if args.target_mean is not None:
        from riccati_verify.core.io import loads_json, parse_vector
        from riccati_verify.certify.stability import mean_target_entry

        target, _ = parse_vector(loads_json(args.target_mean, "--target-mean"), "target mean")
        for k, r in enumerate(reps):
            entry = mean_target_entry(params, r, target)
            if entry is None:
                continue
            data["equilibria"][k]["mean_target"] = entry
            if entry["b"] is not None:
                lines.append(f"[{k}] b = -M m_target = [" + ", ".join(f"{float(x):.8g}" for x in entry["b"]) +
                             f"]; M Hurwitz (exact): {entry['M_hurwitz']}")
            else:
                lines.append(f"[{k}] Sigma* enclosed only: M Hurwitz over the ball: "
                             f"{entry['M_hurwitz'] or 'not certified'}")
    if args.all or args.radius is not None or args.all_cert:
        census = _census(params, radius, args, lines)
        data["all"] = census.to_dict()
        if args.all_cert and census.certificate is not None:
            write_cert(args.all_cert, census.certificate)
            data["all"]["certificate"] = args.all_cert
            lines.append(f"all_equilibria certificate: {args.all_cert}")
    else:
        census = None
    if args.cert:
        data["certificates"] = _write_stability_certificates(args.cert, reps, lines)
    emit(data, "\n".join(lines), args.json)
    if census is not None:
        return 0 if census.status is Status.CERTIFIED else 1
    return 0 if reps.status is Status.CERTIFIED else 1


def _stability_text(r) -> str:
    """A certified verdict, or a float guess said to be one (`stable` False without a certificate
    comes from float eigenvalues of the linearisation)."""
    if r.stable is None:
        return "undecided"
    return f"{human(r.stable)} ({'certified' if r.stable_certified else 'numerical, not certified'})"


def _census(params, radius, args, lines: list[str]):
    """Run `census` for --all and describe it."""
    from riccati_verify.certify.equilibria_all import census

    res = census(params, radius, max_boxes=args.max_boxes, seed=args.seed)
    # the census is proved for R: a bound printed rounded down states less, never more
    R = bound_text(res.radius, "down", 6)
    lines.append(f"all PSD equilibria with max diag <= {R} "
                 f"(contains the ball |Sigma|_2 <= {R}); R: {res.radius_reason}")
    if res.certificate is None:
        lines.append(f"  {res.reason}")
        return res
    names = {"pd": "positive definite", "psd": "PSD, singular", "excluded": "not PSD in the region",
             "undecided": "PSD undecided"}
    where = ("so these are all the PSD equilibria anywhere" if res.radius_source == "apriori"
             else "these are all of them in the region")
    lines.append(f"  {where}, certified ({res.reason}; checked by the independent checker):")
    for k, e in enumerate(res.equilibria):
        lines.append(f"  ({k}) {names[e['status']]}, " +
                     ("exact" if e["radius"] == 0 else "ball radius <= " + bound_text(e["radius"], "up")) + ": [" +
                     "; ".join(", ".join(f"{float(x):.8g}" for x in row) for row in e["center"]) + "]")
    return res


def _write_stability_certificates(path: str, reps, lines: list[str]) -> list[dict]:
    """Write one certificate per equilibrium certified stable; the list of what was written."""
    from pathlib import Path

    stable = [(k, r.certificate) for k, r in enumerate(reps)
              if r.stable is True and r.stable_certified and r.certificate is not None]
    if not stable:
        lines.append(f"no equilibrium is certified stable: no certificate written to {path}")
        return []
    p = Path(path)
    written = []
    for k, cert in stable:
        target = p if len(stable) == 1 else p.with_name(f"{p.stem}-{k}{p.suffix or '.json'}")
        write_cert(target, cert)
        written.append({"equilibrium": k, "path": str(target), "kind": cert["claim"]["kind"]})
        lines.append(f"[{k}] local stability certificate ({cert['claim']['kind']}): {target}")
    return written

"""`riccati-verify sweep SPEC --out FILE [--tiles]`: a phase diagram on Dask, resumable.

Without --tiles the spec's points are classified one by one; with --tiles the spec is a tile
spec (`app.tiles`) and the slice is covered by certified boxes, split adaptively."""

from __future__ import annotations

import re
from pathlib import Path

from riccati_verify.app import sweep as sw
from riccati_verify.core.io import read_json_file
from riccati_verify.app.output import Progress, emit, record_input
from riccati_verify.core.errors import InputError
from riccati_verify.app.commands._common import bounded_int, output_file, require
from riccati_verify.app.commands import COMMANDS

__all__ = ["HELP", "NAME", "add_arguments", "json_point", "run"]

NAME = "sweep"
HELP = COMMANDS[NAME]

_ADDRESS = re.compile(r"(?:(?:tcp|tls|inproc|ws|wss|ucx)://)?[A-Za-z0-9._\-\[\]:]{1,200}")


def add_arguments(p):
    """Declare this subcommand's arguments (`cli` adds --json to every subcommand)."""
    p.add_argument("spec", help="sweep spec (JSON): family scalar_grid or random")
    p.add_argument("--out", required=True, type=output_file, help="results file (CSV); an existing one is resumed")
    p.add_argument("--workers", type=bounded_int(0, 64), default=2,
                   help="local Dask worker processes (0: in this process, no Dask); default 2")
    p.add_argument("--scheduler", default=None, help="address of an existing Dask scheduler")
    p.add_argument("--chunk", type=bounded_int(1, 10_000), default=None, help="points per task")
    p.add_argument("--plot", default=None, type=output_file, help="write the phase diagram (PNG) here")
    p.add_argument("--max-listed", type=bounded_int(0, 1_000_000), default=50,
                   help="disagreements printed in text mode (all of them are in --json)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--tiles", action="store_true",
                   help="certified tiles: SPEC is a tile spec (family 'tiles'); each tile is one box claim or split")
    p.add_argument("--parquet", default=None, type=output_file, help="also write the rows as Parquet (needs pyarrow)")
    p.add_argument("--max-tiles", type=bounded_int(1, 10_000_000), default=None,
                   help="with --tiles: stop after exactly this many tiles in this run (resume later)")


def run(args) -> int:
    """Run or resume the sweep and print its summary; exit 1 on a missing point or a disagreement
    (with --tiles: on an unfinished frontier)."""
    require(args.scheduler is None or bool(_ADDRESS.fullmatch(args.scheduler)),
            f"--scheduler: malformed address '{str(args.scheduler)[:60]}'")
    doc = read_json_file(args.spec, "sweep spec")
    record_input("sweep spec", doc)                # its JSON floats: "exact": false in the output
    if args.tiles or (isinstance(doc, dict) and doc.get("family") == "tiles"):
        require(args.tiles, "a tile spec (family 'tiles') runs with --tiles")
        return _run_tiles(args, doc)
    require(args.max_tiles is None, "--max-tiles needs --tiles")
    spec = sw.parse_spec(doc)
    _require_pyarrow(args)

    # the one progress policy (app.output): a bar on a terminal only, none under --json or --quiet
    with Progress(spec.n_points, "sweep") as bar:
        def progress(done: int, total: int) -> None:
            while bar.done < done:                  # resumed points count as done from the start
                bar.step("points")

        s = sw.run_sweep(spec, args.out, workers=args.workers, scheduler=args.scheduler,
                         chunk=args.chunk, progress=progress)
    missing = sw.missing_points(args.out, spec)
    plot = str(sw.plot_diagram(args.out, spec, args.plot)) if args.plot else None
    parquet = str(sw.write_parquet(Path(args.out), args.parquet)) if args.parquet else None
    lines = [f"sweep {spec.family}: {s.n_points}/{spec.n_points} points in {args.out} "
             f"({s.computed_now} computed now, {s.resumed} resumed; classifier {s.classifier}; "
             f"{s.seconds:.1f}s)",
             "regimes: " + ", ".join(f"{k} {v}" for k, v in s.counts.items() if v)]
    if s.compared:
        lines.append(f"closed-form comparison: {s.compared} points compared, "
                     f"{len(s.disagreements)} disagreements ({s.contradictions} contradict it, "
                     f"{len(s.disagreements) - s.contradictions} undetermined by the classifier)")
        for dis in s.disagreements[:args.max_listed]:
            lines.append(f"  #{dis['index']} {json_point(dis['point'])}: computed {dis['regime']}, "
                         f"closed form {dis['reference']} ({dis['note']})")
        if len(s.disagreements) > args.max_listed:
            lines.append(f"  ... {len(s.disagreements) - args.max_listed} more (see --json or the CSV)")
    else:
        lines.append("closed-form comparison: no point of this family has a closed-form verdict")
    n_certs = sum(1 for r in sw.read_rows(args.out) if r.get("certificate"))
    certs = str(sw.certificate_dir(args.out)) if n_certs else None
    if certs:
        lines.append(f"certificates: {n_certs} in {certs} (re-check each with `riccati-verify verify`)")
    if plot:
        lines.append(f"phase diagram: {plot}")
    if parquet:
        lines.append(f"parquet: {parquet}")
    lines.append(f"metadata: {sw.meta_path(Path(args.out))}")
    emit({"family": spec.family, "parquet": parquet, "meta": str(sw.meta_path(Path(args.out))), "spec": spec.doc, "out": args.out, "points": s.n_points,
          "total": spec.n_points, "computed_now": s.computed_now, "resumed": s.resumed,
          "classifier": s.classifier, "counts": s.counts, "compared": s.compared,
          "disagreements": s.disagreements, "contradictions": s.contradictions, "missing": len(missing), "duplicates": s.duplicates,
          "seconds": s.seconds, "plot": plot, "certificates": certs, "n_certificates": n_certs}, "\n".join(lines), args.json)
    return 0 if not missing and not s.disagreements else 1


def _require_pyarrow(args) -> None:
    """Checked before the sweep, so that no work is lost to a missing extra."""
    import importlib.util

    if args.parquet:
        if importlib.util.find_spec("pyarrow") is None:
            raise InputError("--parquet needs pyarrow, which is not installed (pip install pyarrow); "
                             "the CSV holds the same rows")


def _run_tiles(args, doc) -> int:
    from riccati_verify.app import tiles as tl

    spec = tl.parse_tile_spec(doc)
    _require_pyarrow(args)
    with Progress(None, "tiles") as bar:
        def progress(done: int, now: int, area: float) -> None:
            bar.step(f"{done} tiles, {100 * area:.1f}% certified")

        s = tl.run_tiles(spec, args.out, workers=args.workers, scheduler=args.scheduler, progress=progress,
                         max_tiles=args.max_tiles)
    out = Path(args.out)
    plot = str(tl.plot_tiles(out, spec, args.plot)) if args.plot else None
    parquet = str(tl.write_parquet(out, spec, args.parquet)) if args.parquet else None
    x, y = spec.labels
    lines = [f"tiles over ({x}, {y}): {s.processed} processed in {args.out} ({s.computed_now} now, "
             f"{s.seconds:.1f}s, {args.workers} workers{', scheduler ' + args.scheduler if args.scheduler else ''})",
             f"outcomes: certified {s.counts['certified']}, split {s.counts['split']}, "
             f"uncertified {s.counts['uncertified']} (minimum size {spec.doc['min_size']}, depth {spec.depth})",
             "certified regimes: " + (", ".join(f"{k} {v}" for k, v in sorted(s.regimes.items())) or "none"),
             f"certified area fraction: {100 * s.certified_area:.2f}%",
             f"metadata: {tl.meta_path(out)}"]
    if s.missing:
        lines.append(f"unfinished: {s.missing} tiles left in the frontier (run again to resume)")
    if plot:
        lines.append(f"phase diagram: {plot}")
    if parquet:
        lines.append(f"parquet: {parquet}")
    emit({"tiles": s.to_dict(), "spec": spec.doc, "out": args.out, "meta": str(tl.meta_path(out)),
          "plot": plot, "parquet": parquet}, "\n".join(lines), args.json)
    return 0 if not s.missing and not s.duplicates else 1


def json_point(p: dict) -> str:
    """A sweep point's short label for the disagreement list."""
    if "a" in p:
        return f"a={p['a']} vβ={p['vbeta']}"
    return f"seed={p.get('seed')} draw={p.get('draw')}"

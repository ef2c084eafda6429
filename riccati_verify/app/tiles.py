"""Certified phase diagrams: an adaptive quadtree of boxes over a 2-parameter slice.

Every tile is a box of models (two entries of a parameter file set to the tile's intervals,
`core.box.ParamBox`); `certify.family.certify_family` proves one regime for every member of
the tile or the tile is cut into four, down to the spec's minimum size.  A certified tile
is a theorem about all of its (uncountably many) members, checked by the independent
checker; an uncertified tile at the minimum size says nothing.

Spec (untrusted JSON)::

    {"family": "tiles", "params": {...a parameter file...},
     "x": {"entry": "A[0][0]", "min": "-2", "max": "2", "label": "a"},
     "y": {"entry": "B[0][0]", "min": "-2", "max": "2", "label": "vbeta"},
     "min_size": "1/64", "precision": 128, "max_pieces": 4, "certificates": false,
     "property": "regime"}

``property`` "regime" (the default) certifies one regime per tile; "local_stability"
(d >= 2, any V) certifies instead that every member of the tile has a locally
asymptotically stable equilibrium (`family_stability`, subdivided inside the tile when one
ball or one Lyapunov matrix does not cover it): not a regime, since it says nothing about
where Σ0 goes, and its tiles are labelled ``locally_stable``.

Output: a tidy CSV (one row per processed tile, one column per parameter end, exact
rationals), appended and fsync'ed tile by tile, with the metadata in a sidecar
``FILE.meta.json``; an interrupted sweep resumes from the file (the frontier is the root
and the unprocessed children of split tiles), so no tile is lost or done twice.
"""

from __future__ import annotations

import csv
import hashlib
import io as _io
import json
import math
import os
import re
import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Callable

from riccati_verify.core import exact
from riccati_verify.core.errors import InputError
from riccati_verify.core.io import box_from_dict, parse_entry

__all__ = ["COLUMNS_FIXED", "MAX_TILES", "TileSpec", "TileSummary", "area_fraction", "evaluate_tiles",
           "evaluate_subtrees", "frontier", "meta_path", "open_tiles", "parse_tile_spec", "plot_tiles", "read_tiles", "reference_regime",
           "run_tiles", "tile_bounds", "tiles_figure", "write_parquet"]

MAX_TILES = 4 ** 10
"""The finest level may have at most this many tiles (min_size against the slice's sides)."""
MAX_DEPTH = 10
FORMAT = "riccati-verify-tiles"
OUTCOMES = ("certified", "split", "uncertified")
PROPERTIES = ("regime", "local_stability")
LOCALLY_STABLE = "locally_stable"
"""The `regime` column of a tile certified under property local_stability."""
COLUMNS_FIXED = ("tile", "level", "i", "j")
COLUMNS_RESULT = ("outcome", "regime", "kind", "lower", "upper", "sign", "seconds", "certificate", "reason")

_LABEL = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,31}")


@dataclass(frozen=True)
class TileSpec:
    """A validated tile-sweep spec: the base box, the two axes and the depth bound."""

    doc: dict          # normalised JSON (hashed into the sidecar)
    depth: int         # levels below the root; tiles at this level are never split

    @property
    def digest(self) -> str:
        """A hash of the normalised spec: resuming into another spec's file is refused."""
        return hashlib.sha256(json.dumps(self.doc, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def labels(self) -> tuple[str, str]:
        """The two parameters' column names."""
        return self.doc["x"]["label"], self.doc["y"]["label"]

    @property
    def columns(self) -> tuple[str, ...]:
        """The CSV columns: tile id, level, i, j, one per parameter end, then the result."""
        x, y = self.labels
        return COLUMNS_FIXED + (f"{x}_lo", f"{x}_hi", f"{y}_lo", f"{y}_hi") + COLUMNS_RESULT


def _axis(doc, name: str, base) -> dict:
    if not isinstance(doc, dict) or set(doc) - {"entry", "min", "max", "label"} or not {"entry", "min", "max"} <= set(doc):
        raise InputError(f"tile spec '{name}' must be an object {{\"entry\", \"min\", \"max\"[, \"label\"]}}")
    entry = doc["entry"]
    if not isinstance(entry, str) or len(entry) > 20:
        raise InputError(f"tile spec '{name}.entry' must name one parameter entry, e.g. \"A[0][0]\" or \"V\"")
    if entry in ("dim", "d") or entry.startswith(("dim", "d[")):
        raise InputError(f"tile spec '{name}': the dimension cannot be an axis (a family has one fixed d)")
    base.interval(entry)                               # InputError on an unknown key
    lo, hi = parse_entry(doc["min"], f"{name}.min"), parse_entry(doc["max"], f"{name}.max")
    if not lo < hi:
        raise InputError(f"tile spec '{name}': need min < max")
    label = doc.get("label", re.sub(r"[^A-Za-z0-9]+", "_", entry).strip("_"))
    if not isinstance(label, str) or not _LABEL.fullmatch(label):
        raise InputError(f"tile spec '{name}.label' must be a column name (a letter, then letters, digits, _)")
    return {"entry": entry, "min": exact.frac_to_str(lo), "max": exact.frac_to_str(hi), "label": label}


def parse_tile_spec(doc) -> TileSpec:
    """Validate an untrusted tile spec; every violation is an InputError naming the field."""
    if not isinstance(doc, dict):
        raise InputError("a tile spec must be a JSON object")
    allowed = {"family", "params", "x", "y", "min_size", "precision", "max_pieces", "certificates", "property"}
    extra = set(doc) - allowed
    if extra:
        raise InputError(f"unknown tile spec keys: {', '.join(sorted(map(str, extra)))[:200]}")
    if doc.get("family", "tiles") != "tiles":
        raise InputError("a tile spec has \"family\": \"tiles\"")
    if "params" not in doc:
        raise InputError("tile spec needs 'params' (a parameter file whose entries may be intervals)")
    base = box_from_dict(doc["params"])
    x, y = _axis(doc.get("x"), "x", base), _axis(doc.get("y"), "y", base)
    if x["entry"] == y["entry"] or x["label"] == y["label"]:
        raise InputError("tile spec: the axes must be two different entries with different labels")
    size = parse_entry(doc.get("min_size", "1/64"), "min_size")
    if not size > 0:
        raise InputError("tile spec 'min_size' must be positive")
    widths = [Fraction(a["max"]) - Fraction(a["min"]) for a in (x, y)]
    depth = max(0, max(math.ceil(math.log2(w / size)) if w > size else 0 for w in widths))
    while any(w / 2 ** depth > size for w in widths):   # log2 in floats may round down
        depth += 1
    if depth > MAX_DEPTH or 4 ** depth > MAX_TILES:
        raise InputError(f"the slice is too large to subdivide to min_size {doc.get('min_size')}: it needs "
                         f"2^{depth} tiles per side, more than the bound of {MAX_TILES} tiles ({MAX_DEPTH} levels)")
    prec = doc.get("precision", 128)
    if isinstance(prec, bool) or not isinstance(prec, int) or not 64 <= prec <= 1024:
        raise InputError("tile spec 'precision' must be an integer in 64..1024")
    pieces = doc.get("max_pieces", 4)
    if isinstance(pieces, bool) or not isinstance(pieces, int) or not 1 <= pieces <= 256:
        raise InputError("tile spec 'max_pieces' must be an integer in 1..256")
    if not isinstance(doc.get("certificates", False), bool):
        raise InputError("tile spec 'certificates' must be true or false")
    prop = doc.get("property", "regime")
    if prop not in PROPERTIES:
        raise InputError(f"tile spec 'property' must be one of {', '.join(PROPERTIES)}")
    if prop == "local_stability" and base.dim < 2:
        raise InputError("tile spec property local_stability needs d >= 2 (d = 1 has the closed form: use regime)")
    from riccati_verify.core.io import box_to_dict

    # the whole slice is one box: the box bounds and cov ⪰ 0 for every member hold for each tile
    whole = base.with_entry(x["entry"], Fraction(x["min"]), Fraction(x["max"]))
    box_from_dict(box_to_dict(whole.with_entry(y["entry"], Fraction(y["min"]), Fraction(y["max"]))))
    norm = {"family": "tiles", "params": box_to_dict(base), "x": x, "y": y, "min_size": exact.frac_to_str(size),
            "precision": prec, "max_pieces": pieces, "certificates": doc.get("certificates", False)}
    if prop != "regime":        # the default stays out of the spec, so older files' digests still match
        norm["property"] = prop
    return TileSpec(norm, depth)


# --------------------------------------------------------------------------- geometry

def tile_bounds(spec: TileSpec, level: int, i: int, j: int) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    """(x_lo, x_hi, y_lo, y_hi) of tile (level, i, j): column i, row j of the 2^level grid."""
    n = 2 ** level
    xa, xb = Fraction(spec.doc["x"]["min"]), Fraction(spec.doc["x"]["max"])
    ya, yb = Fraction(spec.doc["y"]["min"]), Fraction(spec.doc["y"]["max"])
    return (xa + (xb - xa) * i / n, xa + (xb - xa) * (i + 1) / n, ya + (yb - ya) * j / n, ya + (yb - ya) * (j + 1) / n)


def _tile_id(level: int, i: int, j: int) -> str:
    return f"{level}-{i}-{j}"


def _children(level: int, i: int, j: int) -> list[tuple[int, int, int]]:
    return [(level + 1, 2 * i + a, 2 * j + b) for b in (0, 1) for a in (0, 1)]


def tile_box(spec: TileSpec, level: int, i: int, j: int):
    """The box of models of one tile."""
    x0, x1, y0, y1 = tile_bounds(spec, level, i, j)
    base = box_from_dict(spec.doc["params"])
    return base.with_entry(spec.doc["x"]["entry"], x0, x1).with_entry(spec.doc["y"]["entry"], y0, y1)


# --------------------------------------------------------------------------- evaluation (Dask workers)

def evaluate_tiles(doc: dict, tiles: list[tuple[int, int, int]]) -> list[dict]:
    """Certify tiles (runs on a Dask worker): one row each, plus the certificate to persist."""
    from riccati_verify.certify.family import certify_family

    spec = parse_tile_spec(doc)
    x, y = spec.labels
    rows = []
    local = doc.get("property", "regime") == "local_stability"
    for level, i, j in tiles:
        t0 = time.perf_counter()
        box = tile_box(spec, level, i, j)
        # local stability is not a regime (it says nothing of Σ0): only under its own property
        res = certify_family(box, precision=doc["precision"], max_pieces=doc["max_pieces"], bracket=False,
                             stability=local, regimes=not local)
        x0, x1, y0, y1 = tile_bounds(spec, level, i, j)
        sign = next((f"V {c.claim['V']}, B {c.claim['B']}" for c in res.certified_claims if c.kind == "family_sign"), "")
        stable = next((c for c in res.certified_claims if c.kind == "family_stability"), None) if local else None
        certified = stable is not None if local else res.regime != "undetermined"
        outcome = "certified" if certified else ("split" if level < spec.depth else "uncertified")
        main = (stable.certificate if local else res.certificate) if certified else None
        regime = (LOCALLY_STABLE if local else res.regime) if certified else ""
        rows.append({
            "tile": _tile_id(level, i, j), "level": level, "i": i, "j": j,
            f"{x}_lo": exact.frac_to_str(x0), f"{x}_hi": exact.frac_to_str(x1),
            f"{y}_lo": exact.frac_to_str(y0), f"{y}_hi": exact.frac_to_str(y1),
            "outcome": outcome, "regime": regime,
            "kind": main["claim"]["kind"] if main else "",
            "lower": (res.bracket or ("", ""))[0], "upper": (res.bracket or ("", ""))[1], "sign": sign,
            "seconds": f"{time.perf_counter() - t0:.6f}", "certificate": "",
            "reason": "" if certified else "; ".join(c.reason for c in res.claims if not c.valid)[:300],
            "_certificate": main if doc["certificates"] else None,
        })
    return rows


def evaluate_subtrees(doc: dict, tiles: list[tuple[int, int, int]], levels: int) -> list[dict]:
    """`evaluate_tiles` on `tiles` and, below every split one, on its descendants down to
    `levels` levels further (one Dask task for a whole subtree: tiles of the d = 1 plane take
    milliseconds, less than a task's round trip).  Children left below the last level are
    the caller's frontier."""
    rows, todo = [], list(tiles)
    top = {t: t[0] + levels for t in tiles}
    while todo:
        new = evaluate_tiles(doc, todo)
        rows += new
        todo = []
        for r in new:
            t = (r["level"], r["i"], r["j"])
            if r["outcome"] == "split" and t[0] + 1 <= top[t]:
                for c in _children(*t):
                    top[c] = top[t]
                    todo.append(c)
    return rows


# --------------------------------------------------------------------------- durable output

def meta_path(out: Path) -> Path:
    """The sidecar JSON that holds the metadata of a tiles CSV."""
    return Path(str(out) + ".meta.json")


def _fsync_write(path: Path, text: str, mode: str = "w") -> None:
    with open(path, mode, newline="") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def open_tiles(out: Path, spec: TileSpec) -> dict[str, dict]:
    """Create the output (CSV with a header row, sidecar metadata) or validate an existing one;
    return the rows already there by tile id (a line cut short by a kill is dropped)."""
    meta = {"format": FORMAT, "spec_sha256": spec.digest, "spec": spec.doc, "depth": spec.depth,
            "columns": list(spec.columns),
            "axes": {"x": spec.doc["x"], "y": spec.doc["y"]},
            "notes": {"outcome": "certified: one regime proved for every member of the tile; split: cut into "
                                 "its four children; uncertified: nothing proved at the minimum size",
                      "bounds": "exact rationals p/q; tile (level, i, j) is column i, row j of the 2^level grid"}}
    mp = meta_path(out)
    if out.exists() and out.stat().st_size > 0:
        try:
            old = json.loads(mp.read_text())
        except (OSError, ValueError):
            raise InputError(f"'{out}' exists but its metadata '{mp}' is missing or unreadable; use another "
                             "output file") from None
        if old.get("format") != FORMAT or old.get("spec_sha256") != spec.digest:
            raise InputError(f"'{out}' was written by a different tile spec; use another output file")
        data = out.read_bytes()
        if not data.endswith(b"\n"):
            with open(out, "r+b") as f:
                f.truncate(data.rfind(b"\n") + 1)
                f.flush()
                os.fsync(f.fileno())
        return {r["tile"]: r for r in read_tiles(out)}
    _fsync_write(mp, json.dumps(meta, indent=1) + "\n")
    buf = _io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(spec.columns)
    _fsync_write(out, buf.getvalue())
    return {}


def read_tiles(out: Path) -> list[dict]:
    """Every row of a tiles CSV (duplicates included; `frontier` and `summarize` count them)."""
    return list(csv.DictReader(_io.StringIO(Path(out).read_text(encoding="utf-8"))))


def _persist(out: Path, spec: TileSpec, rows: list[dict]) -> None:
    """Certificates first (each fsync'ed), then the rows: a row never names a missing file."""
    from riccati_verify.app.output import with_input_record

    for r in rows:
        cert = r.pop("_certificate", None)
        if cert:
            cert = with_input_record(cert)        # the spec's floats, when the command line read one
            d = Path(str(out) + ".certs")
            d.mkdir(exist_ok=True)
            path = d / f"tile-{r['tile']}.json"
            _fsync_write(path, json.dumps(cert, indent=1) + "\n")
            r["certificate"] = path.name
    buf = _io.StringIO()
    csv.DictWriter(buf, fieldnames=spec.columns, lineterminator="\n").writerows(rows)
    _fsync_write(out, buf.getvalue(), "a")


def frontier(done: dict[str, dict]) -> list[tuple[int, int, int]]:
    """The tiles still to do: the root if not done, and every unprocessed child of a split tile."""
    if "0-0-0" not in done:
        return [(0, 0, 0)]
    todo = []
    for r in done.values():
        if r["outcome"] == "split":
            todo += [c for c in _children(int(r["level"]), int(r["i"]), int(r["j"])) if _tile_id(*c) not in done]
    return sorted(todo)


# --------------------------------------------------------------------------- driver

@dataclass
class TileSummary:
    """What a tile sweep holds: tiles per outcome and regime, certified area, gaps, timing."""

    processed: int
    computed_now: int
    counts: dict
    regimes: dict
    certified_area: float
    missing: int
    duplicates: int
    seconds: float = 0.0
    workers: int = 0
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON form."""
        return dict(self.__dict__)


def area_fraction(spec: TileSpec, rows) -> Fraction:
    """The certified share of the slice's area (exact: tiles of level L have area 4^-L)."""
    seen, total = set(), Fraction(0)
    for r in rows:
        if r["tile"] not in seen and r["outcome"] == "certified":
            total += Fraction(1, 4 ** int(r["level"]))
        seen.add(r["tile"])
    return total


def summarize(out: Path, spec: TileSpec) -> TileSummary:
    """Counts, regimes and the certified area read back from the file itself."""
    rows = read_tiles(out)
    ids = [r["tile"] for r in rows]
    done = {r["tile"]: r for r in rows}
    counts = {o: sum(1 for r in done.values() if r["outcome"] == o) for o in OUTCOMES}
    regimes: dict = {}
    for r in done.values():
        if r["outcome"] == "certified":
            regimes[r["regime"]] = regimes.get(r["regime"], 0) + 1
    return TileSummary(len(done), 0, counts, regimes, float(area_fraction(spec, rows)), len(frontier(done)),
                       len(ids) - len(set(ids)))


def run_tiles(spec: TileSpec, out: str | Path, *, workers: int = 2, scheduler: str | None = None,
              progress: Callable[[int, int, float], None] | None = None, max_tiles: int | None = None,
              connect_timeout: float = 20.0, levels: int = 2) -> TileSummary:
    """Process the frontier until it is empty (or exactly `max_tiles` tiles were recorded in this run:
    rows a task computed beyond the budget are dropped, and redone by the next run).

    workers = 0 runs in this process; otherwise a local Dask cluster of `workers` processes,
    or the scheduler at `scheduler`, where one task is a group of siblings with their
    subtrees `levels` levels deep (`evaluate_subtrees`).  A task's rows are written when it
    returns, so a kill loses at most the tasks in flight, which the next run redoes.
    """
    t0 = time.perf_counter()
    out = Path(out)
    done = open_tiles(out, spec)
    todo = frontier(done)
    area = area_fraction(spec, done.values())
    computed = 0

    def record(rows):
        nonlocal computed, area
        if max_tiles is not None:
            # a prefix of a task's rows (parents come before their children) keeps the file
            # consistent, so the budget is exact: the rest is the next run's frontier
            rows = rows[:max(0, max_tiles - computed)]
        _persist(out, spec, rows)
        computed += len(rows)
        for r in rows:
            done[r["tile"]] = r
            if r["outcome"] == "certified":
                area += Fraction(1, 4 ** r["level"])
        if progress:
            progress(len(done), computed, float(area))
        # siblings stay together: the children of one split tile that are not done yet
        return [[c for c in _children(r["level"], r["i"], r["j"]) if _tile_id(*c) not in done]
                for r in rows if r["outcome"] == "split"
                and any(_tile_id(*c) not in done for c in _children(r["level"], r["i"], r["j"]))]

    def budget_left() -> bool:
        return max_tiles is None or computed < max_tiles

    if workers == 0 and scheduler is None:
        queue = [todo[k:k + 4] for k in range(0, len(todo), 4)]
        while queue and budget_left():
            queue += record(evaluate_tiles(spec.doc, queue.pop(0)))
    elif todo:
        _dask_tiles(spec, todo, record, budget_left, workers, scheduler, connect_timeout, levels)
    s = summarize(out, spec)
    s.computed_now, s.seconds, s.workers = computed, time.perf_counter() - t0, workers
    return s


def _dask_tiles(spec, todo, record, budget_left, workers, scheduler, connect_timeout, levels):
    from riccati_verify.app.sweep import dask_client

    with dask_client(workers, scheduler, connect_timeout) as client:
        from dask.distributed import as_completed

        submit = lambda batch: client.submit(evaluate_subtrees, spec.doc, batch, levels, pure=False)
        ac = as_completed([submit(todo[k:k + 4]) for k in range(0, len(todo), 4)])
        for fut in ac:
            children = record(fut.result())
            if not budget_left():
                for f in list(ac.futures):
                    f.cancel()
                break
            for batch in children:
                ac.add(submit(batch))


# --------------------------------------------------------------------------- reference, plot, parquet

def reference_regime(spec: TileSpec, x: Fraction, y: Fraction, base=None) -> str | None:
    """The closed-form regime (MATH.md §6, §7) at one point of the slice, or None where there is none
    (the base box's other interval entries at their midpoints; `base` saves re-reading the box)."""
    from riccati_verify.app.sweep import riccati_reference_regime

    base = box_from_dict(spec.doc["params"]) if base is None else base
    params, state = base.with_entry(spec.doc["x"]["entry"], x, x).with_entry(spec.doc["y"]["entry"], y, y).member()
    if state is None:
        return None
    ref = riccati_reference_regime(params, state)
    return ref[0] if ref else None


_COLORS = {"equilibrium": "tab:green", "blowup": "tab:red", "collapse": "tab:blue", "growth": "tab:orange",
           LOCALLY_STABLE: "tab:purple"}


def plot_tiles(out: Path, spec: TileSpec, png: str | Path, boundary_grid: int = 120) -> Path:
    """Certified tiles coloured by regime, uncertified ones hatched, and the closed-form phase
    boundary (contours of the §6/§7 reference regime on a grid) where one exists: `tiles_figure`
    written as PNG."""
    import matplotlib.pyplot as plt

    fig = tiles_figure(out, spec, boundary_grid)
    png = Path(png)
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return png


def tiles_figure(out: Path, spec: TileSpec, boundary_grid: int = 120):
    """The matplotlib figure of `plot_tiles` (the caller closes it)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.patches import Patch, Rectangle

    x, y = spec.labels
    rows = {r["tile"]: r for r in read_tiles(out)}
    fig, ax = plt.subplots(figsize=(8.5, 6))
    for r in rows.values():
        if r["outcome"] == "split":
            continue
        x0, x1, y0, y1 = (float(Fraction(r[k])) for k in (f"{x}_lo", f"{x}_hi", f"{y}_lo", f"{y}_hi"))
        if r["outcome"] == "certified":
            ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, facecolor=_COLORS.get(r["regime"], "gray"),
                                   edgecolor="none", alpha=0.85))
        else:
            ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, facecolor="white", edgecolor="0.5",
                                   hatch="////", linewidth=0.2))
    xa, xb = float(Fraction(spec.doc["x"]["min"])), float(Fraction(spec.doc["x"]["max"]))
    ya, yb = float(Fraction(spec.doc["y"]["min"])), float(Fraction(spec.doc["y"]["max"]))
    codes = {name: k for k, name in enumerate(("collapse", "equilibrium", "growth", "blowup"))}
    gx = [Fraction(xa) + (Fraction(xb) - Fraction(xa)) * (k + Fraction(1, 2)) / boundary_grid for k in range(boundary_grid)]
    gy = [Fraction(ya) + (Fraction(yb) - Fraction(ya)) * (k + Fraction(1, 2)) / boundary_grid for k in range(boundary_grid)]
    base = box_from_dict(spec.doc["params"])
    local = spec.doc.get("property", "regime") == "local_stability"
    # the closed-form regimes bound regime tiles; local stability has no closed-form boundary here
    Z = np.array([[np.nan if local else codes.get(reference_regime(spec, u, w, base), np.nan) for u in gx]
                  for w in gy], dtype=float)
    shown = [LOCALLY_STABLE] if local else [n for n in _COLORS if n != LOCALLY_STABLE]
    handles = [Patch(facecolor=_COLORS[n], label=f"certified {n.replace('_', ' ')}") for n in shown]
    handles.append(Patch(facecolor="white", edgecolor="0.5", hatch="////", label="not certified"))
    segs = _boundary_segments(Z, xa, xb, ya, yb)
    if segs:
        from matplotlib.collections import LineCollection

        ax.add_collection(LineCollection(segs, colors="k", linewidths=0.9))
        handles.append(plt.Line2D([], [], color="k", lw=0.9, label="closed-form boundary (§6/§7)"))
    ax.set_xlim(xa, xb)
    ax.set_ylim(ya, yb)
    ax.set_xlabel(f"{x} ({spec.doc['x']['entry']})")
    ax.set_ylabel(f"{y} ({spec.doc['y']['entry']})")
    frac = float(area_fraction(spec, rows.values()))
    ax.set_title(f"certified tiles: {100 * frac:.1f}% of the area ({len(rows)} tiles processed)")
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    return fig


def _boundary_segments(Z, xa: float, xb: float, ya: float, yb: float) -> list:
    """Cell edges between neighbouring grid cells whose closed-form regimes are both known and
    differ: the phase boundary, and nothing where one side has no closed form."""
    ny, nx = Z.shape
    hx, hy = (xb - xa) / nx, (yb - ya) / ny
    segs = []
    for r in range(ny):
        for c in range(nx):
            z = Z[r, c]
            if z != z:
                continue
            if c + 1 < nx and Z[r, c + 1] == Z[r, c + 1] and Z[r, c + 1] != z:
                x = xa + (c + 1) * hx
                segs.append([(x, ya + r * hy), (x, ya + (r + 1) * hy)])
            if r + 1 < ny and Z[r + 1, c] == Z[r + 1, c] and Z[r + 1, c] != z:
                y = ya + (r + 1) * hy
                segs.append([(xa + c * hx, y), (xa + (c + 1) * hx, y)])
    return segs


def write_parquet(out: Path, spec: TileSpec, path: str | Path) -> Path:
    """The tiles as Parquet (pyarrow): the parameter ends as float64 plus their exact strings."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError("Parquet output needs pyarrow, which is not installed (pip install pyarrow); "
                         "the CSV holds the same tiles") from None
    rows = list({r["tile"]: r for r in read_tiles(out)}.values())
    x, y = spec.labels
    cols = {}
    for c in spec.columns:
        vals = [r[c] for r in rows]
        if c in ("level", "i", "j"):
            cols[c] = pa.array([int(v) for v in vals], pa.int32())
        elif c in (f"{x}_lo", f"{x}_hi", f"{y}_lo", f"{y}_hi"):
            cols[c] = pa.array([float(Fraction(v)) for v in vals], pa.float64())
            cols[c + "_exact"] = pa.array(vals, pa.string())
        elif c == "seconds":
            cols[c] = pa.array([float(v) for v in vals], pa.float64())
        else:
            cols[c] = pa.array(vals, pa.string())
    table = pa.table(cols).replace_schema_metadata({"riccati-verify": json.dumps(json.loads(meta_path(out).read_text()))})
    pq.write_table(table, str(path))
    return Path(path)

"""Certified tile sweeps: spec validation, tiles against the d = 1 closed form, resumability
with no lost or duplicated tile, the tidy CSV and its sidecar, Parquet guard, plot."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from fractions import Fraction as Q
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from riccati_verify.app import tiles as tl
from riccati_verify.app.cli import main
from riccati_verify.app.sweep import scalar_regime
from riccati_verify.core.errors import InputError

SCALAR = {"family": "tiles", "params": {"A": [[0]], "B": [[0]], "V": 1, "mean": [0], "cov": [[1]]},
          "x": {"entry": "A[0][0]", "min": "-2", "max": "2", "label": "a"},
          "y": {"entry": "B[0][0]", "min": "-2", "max": "2", "label": "vbeta"},
          "min_size": "1/4"}


@pytest.mark.parametrize("patch, fragment", [
    ({"x": {"entry": "dim", "min": 1, "max": 3}}, "dimension cannot be an axis"),
    ({"x": {"entry": "A[1][0]", "min": 0, "max": 1}}, "no parameter"),
    ({"x": {"entry": "A[0][0]", "min": 1, "max": 1}}, "min < max"),
    ({"y": {"entry": "A[0][0]", "min": 0, "max": 1}}, "two different entries"),
    ({"min_size": "1/100000"}, "too large to subdivide"),
    ({"min_size": "0"}, "positive"),
    ({"precision": 10**6}, "precision"),
    ({"extra": 1}, "unknown tile spec keys"),
    ({"x": {"entry": "A[0][0]", "min": 0, "max": 1, "label": "a b"}}, "column name"),
    ({"params": {**SCALAR["params"], "A": [[{"lo": 1, "hi": 0}]]}}, "lo > hi"),
    ({"x": {"entry": "cov[0][0]", "min": -1, "max": 1}}, "positive semidefinite for every member"),
])
def test_tile_spec_rejects_bad_input(patch, fragment):
    with pytest.raises(InputError, match=fragment):
        tl.parse_tile_spec({**SCALAR, **patch})


def test_cli_too_large_slice_is_exit_2(tmp_path, capsys):
    spec = tmp_path / "s.json"
    spec.write_text(json.dumps({**SCALAR, "min_size": "1/100000"}))
    assert main(["sweep", str(spec), "--tiles", "--out", str(tmp_path / "t.csv")]) == 2
    assert "too large to subdivide" in capsys.readouterr().err
    assert main(["sweep", str(spec), "--out", str(tmp_path / "t.csv")]) == 2     # a tile spec needs --tiles


def _tiles(tmp_path, doc=SCALAR, **kw):
    spec = tl.parse_tile_spec(doc)
    out = tmp_path / "tiles.csv"
    return spec, out, tl.run_tiles(spec, out, workers=0, **kw)


@pytest.fixture(scope="module")
def scalar_run(tmp_path_factory):
    """One full run of the small scalar plane, shared by the read-only tests."""
    return _tiles(tmp_path_factory.mktemp("tiles"))


def test_certified_tiles_never_contradict_the_scalar_closed_form(scalar_run):
    spec, out, s = scalar_run
    rng = np.random.default_rng(150)
    checked = 0
    for r in tl.read_tiles(out):
        if r["outcome"] != "certified":
            continue
        x0, x1, y0, y1 = (Q(r[k]) for k in ("a_lo", "a_hi", "vbeta_lo", "vbeta_hi"))
        pts = [(x, y) for x in (x0, x1) for y in (y0, y1)]
        pts += [(x0 + (x1 - x0) * Q(int(u * 997), 997), y0 + (y1 - y0) * Q(int(w * 997), 997))
                for u, w in rng.uniform(0, 1, (6, 2))]
        for a, c in pts:
            assert scalar_regime(a, c, Q(1))[0] == r["regime"], (r["tile"], a, c)
            checked += 1
    assert s.counts["certified"] > 20 and checked > 200 and s.missing == 0 and s.duplicates == 0


def test_resume_loses_and_duplicates_no_tile(tmp_path, scalar_run):
    spec, out, full = scalar_run
    reference = {r["tile"]: (r["outcome"], r["regime"]) for r in tl.read_tiles(out)}
    out2 = tmp_path / "part.csv"
    s1 = tl.run_tiles(spec, out2, workers=0, max_tiles=9)
    assert s1.missing > 0 and s1.computed_now == s1.processed == 9     # the budget is exact
    with open(out2, "a") as f:      # a row cut short by a kill
        f.write("2-0-0,2,0,0,-2,-1,-2")
    s2 = tl.run_tiles(spec, out2, workers=0)
    rows = tl.read_tiles(out2)
    assert [r["tile"] for r in rows].count("2-0-0") == 1
    assert {r["tile"]: (r["outcome"], r["regime"]) for r in rows} == reference
    assert s2.duplicates == 0 and s2.missing == 0 and s2.certified_area == full.certified_area


def test_csv_is_tidy_with_a_sidecar_and_another_spec_is_refused(scalar_run):
    spec, out, _ = scalar_run
    with open(out) as f:
        header = next(csv.reader(f))
    assert header == list(spec.columns) and header[4:8] == ["a_lo", "a_hi", "vbeta_lo", "vbeta_hi"]
    meta = json.loads(tl.meta_path(out).read_text())
    assert meta["spec_sha256"] == spec.digest and meta["columns"] == header
    other = tl.parse_tile_spec({**SCALAR, "min_size": "1/8"})
    with pytest.raises(InputError, match="different tile spec"):
        tl.run_tiles(other, out, workers=0)


def test_parquet_without_pyarrow_is_a_clear_error(tmp_path, monkeypatch):
    spec, out, _ = _tiles(tmp_path, max_tiles=4)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(InputError, match="pyarrow"):
        tl.write_parquet(out, spec, tmp_path / "t.parquet")


@pytest.mark.slow
def test_plot_is_written(tmp_path, scalar_run):
    spec, out, _ = scalar_run
    png = tl.plot_tiles(out, spec, tmp_path / "t.png", boundary_grid=24)
    assert png.stat().st_size > 5000


@pytest.mark.slow
@pytest.mark.parametrize("workers", [0, 2])
def test_kill_and_resume_loses_no_tile(tmp_path, workers):
    doc = {**SCALAR, "min_size": "1/32"}
    spec = tmp_path / "s.json"
    spec.write_text(json.dumps(doc))
    out = tmp_path / "k.csv"
    cmd = [sys.executable, "-m", "riccati_verify", "sweep", str(spec), "--tiles", "--out", str(out),
           "--workers", str(workers), "--quiet"]
    p = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and (not out.exists() or len(out.read_bytes().splitlines()) < 60):
        time.sleep(0.05)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    assert subprocess.run(cmd, timeout=600).returncode == 0
    ref = tmp_path / "ref.csv"
    tl.run_tiles(tl.parse_tile_spec(doc), ref, workers=0)
    rows = tl.read_tiles(out)
    assert len(rows) == len({r["tile"] for r in rows})
    key = lambda rs: {r["tile"]: (r["outcome"], r["regime"]) for r in rs}
    assert key(rows) == key(tl.read_tiles(ref))


def test_existing_scheduler_address_is_checked(tmp_path, capsys):
    spec = tmp_path / "s.json"
    spec.write_text(json.dumps(SCALAR))
    assert main(["sweep", str(spec), "--tiles", "--out", str(tmp_path / "t.csv"), "--scheduler", "bad address!"]) == 2


def test_written_rows_name_their_certificates(tmp_path):
    spec, out, _ = _tiles(tmp_path, {**SCALAR, "certificates": True, "min_size": "1/2"})
    from riccati_verify.checker import verify_certificate

    rows = [r for r in tl.read_tiles(out) if r["outcome"] == "certified"]
    assert rows and all(r["certificate"] for r in rows)
    for r in rows[:5]:
        cert = json.loads((Path(str(out) + ".certs") / r["certificate"]).read_text())
        assert verify_certificate(cert).valid and cert["claim"].get("regime", "blowup") == r["regime"]


def test_parquet_holds_the_csv_tiles(tmp_path, scalar_run):
    pq = pytest.importorskip("pyarrow.parquet")
    spec, out, _ = scalar_run
    path = tl.write_parquet(out, spec, tmp_path / "t.parquet")
    table = pq.read_table(path).to_pydict()
    rows = tl.read_tiles(out)
    assert table["tile"] == [r["tile"] for r in rows]
    assert table["a_lo"] == [float(Q(r["a_lo"])) for r in rows]
    assert table["vbeta_hi_exact"] == [r["vbeta_hi"] for r in rows]
    assert table["outcome"] == [r["outcome"] for r in rows]


def _ray_distance(px, py, ux, uy):
    t = np.maximum(px * ux + py * uy, 0)
    return np.hypot(px - t * ux, py - t * uy)


@pytest.mark.slow
def test_acceptance_scalar_plane_95_percent_outside_the_band(tmp_path):
    """Issue 15: in the (a, vβ) plane (σ0 = 1) the certified tiles never contradict the closed
    form and cover >= 95% of the area farther than 1/100 from the phase boundaries (the rays
    a = -vβ for vβ >= 0, vβ = 0 for a >= 0, a = 0 for vβ <= 0), measured on a 512² raster."""
    spec, out, s = _tiles(tmp_path, {**SCALAR, "min_size": "1/64"})
    G = 512
    centres = -2 + 4 * (np.arange(G) + 0.5) / G
    A, C = np.meshgrid(centres, centres, indexing="xy")
    h = 1 / np.sqrt(2)
    dist = np.minimum.reduce([_ray_distance(A, C, -h, h), _ray_distance(A, C, 1.0, 0.0),
                              _ray_distance(A, C, 0.0, -1.0)])
    cert = np.zeros((G, G), dtype=bool)
    rng = np.random.default_rng(1500)
    for r in tl.read_tiles(out):
        if r["outcome"] != "certified":
            continue
        L, i, j = int(r["level"]), int(r["i"]), int(r["j"])
        k = G >> L
        cert[j * k:(j + 1) * k, i * k:(i + 1) * k] = True
        x0, x1, y0, y1 = (Q(r[c]) for c in ("a_lo", "a_hi", "vbeta_lo", "vbeta_hi"))
        for u, w in rng.uniform(0, 1, (2, 2)):
            a, c = x0 + (x1 - x0) * Q(int(u * 997), 997), y0 + (y1 - y0) * Q(int(w * 997), 997)
            assert scalar_regime(a, c, Q(1))[0] == r["regime"]
    outside = dist >= 0.01
    assert (cert & outside).sum() / outside.sum() >= 0.95


@pytest.mark.slow
def test_acceptance_d2_slice_80_percent_confirmed_by_the_point_classifier(tmp_path):
    """Issue 15: A = [[a, 1], [-1, 0]], B = [[1, 1/4], [1/4, 1/2]], V = vI, Σ0 = I over
    (a, v) in [-1, 1]²: >= 80% of the area certified, every certified tile confirmed at a
    seeded interior point by the point classifier (never a certified point that differs)."""
    from riccati_verify.certify.stability import classify_regime

    doc = {"family": "tiles", "min_size": "1/32",
           "params": {"A": [[0, 1], [-1, 0]], "B": [[1, "1/4"], ["1/4", "1/2"]], "V": 0, "mean": [0, 0],
                      "cov": [[1, 0], [0, 1]]},
           "x": {"entry": "A[0][0]", "min": "-1", "max": "1", "label": "a"},
           "y": {"entry": "V", "min": "-1", "max": "1", "label": "v"}}
    spec, out, s = _tiles(tmp_path, doc)
    assert s.certified_area >= 0.8
    base = tl.box_from_dict(spec.doc["params"])
    rng = np.random.default_rng(1501)
    for r in tl.read_tiles(out):
        if r["outcome"] != "certified":
            continue
        x0, x1, y0, y1 = (Q(r[c]) for c in ("a_lo", "a_hi", "v_lo", "v_hi"))
        u, w = rng.uniform(0, 1, 2)
        a, v = x0 + (x1 - x0) * Q(int(u * 997) + 1, 999), y0 + (y1 - y0) * Q(int(w * 997) + 1, 999)
        params, state = base.with_entry("A[0][0]", a, a).with_entry("V", v, v).member()
        res = classify_regime(params, state)
        assert res.regime == r["regime"] or not res.certified, (r["tile"], a, v, res.regime)


def test_max_tiles_is_exact_with_dask_subtree_tasks(tmp_path, scalar_run):
    """A Dask task returns a sibling group with its subtrees (up to 84 tiles); the budget keeps
    only a prefix of it, and resuming completes the same tiles."""
    from dask.distributed import LocalCluster

    spec, ref, _ = scalar_run
    out = tmp_path / "t.csv"
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        s1 = tl.run_tiles(spec, out, scheduler=cluster.scheduler_address, max_tiles=7)
        assert s1.computed_now == s1.processed == 7 and s1.missing > 0
        s2 = tl.run_tiles(spec, out, scheduler=cluster.scheduler_address)
    key = lambda rs: {r["tile"]: (r["outcome"], r["regime"]) for r in rs}
    assert s2.missing == 0 and s2.duplicates == 0 and key(tl.read_tiles(out)) == key(tl.read_tiles(ref))


@pytest.mark.slow
def test_tiles_on_an_existing_scheduler(tmp_path, scalar_run):
    from dask.distributed import LocalCluster

    spec, ref, _ = scalar_run
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        s = tl.run_tiles(spec, tmp_path / "t.csv", scheduler=cluster.scheduler_address)
    key = lambda rs: {r["tile"]: (r["outcome"], r["regime"]) for r in rs}
    assert s.missing == 0 and s.duplicates == 0
    assert key(tl.read_tiles(tmp_path / "t.csv")) == key(tl.read_tiles(ref))


LOCAL = {"family": "tiles", "property": "local_stability", "min_size": "1/16", "certificates": True,
         "params": {"A": [[1, 1], [-1, 1]], "B": [[1, 0], [0, 1]], "V": [[-1, 0], [0, -1]], "mean": [0, 0],
                    "cov": [[1, 0], [0, 1]]},
         "x": {"entry": "A[0][0]", "min": "1", "max": "9/8", "label": "a"},
         "y": {"entry": "V[0][1]", "min": "0", "max": "1/4", "label": "w"}}


@pytest.mark.parametrize("patch, fragment", [
    ({"property": "stable"}, "property"),
    ({"property": "local_stability", "params": SCALAR["params"]}, "d >= 2"),
])
def test_tile_property_is_validated(patch, fragment):
    with pytest.raises(InputError, match=fragment):
        tl.parse_tile_spec({**(LOCAL if "params" not in patch else SCALAR), **patch})


def test_local_stability_tiles_for_a_general_V_slice(tmp_path):
    """General V (not vI, no regime claim for a box): tiles certified as locally stable, each by a
    family_stability certificate (subdivided inside the tile where one ball does not cover it)
    that the checker accepts; at sampled interior points Newton finds an equilibrium with a
    Hurwitz linearisation (an independent float route)."""
    from riccati_verify.certify import equilibria as eq
    from riccati_verify.certify.stability import newton_equilibrium
    from riccati_verify.checker import verify_certificate
    from riccati_verify.core.model import Params

    spec, out, s = _tiles(tmp_path, LOCAL)
    rows = [r for r in tl.read_tiles(out) if r["outcome"] == "certified"]
    assert rows and s.certified_area > 0.5 and s.missing == 0
    assert {r["regime"] for r in rows} == {tl.LOCALLY_STABLE} and {r["kind"] for r in rows} == {"family_stability"}
    rng = np.random.default_rng(152)
    for r in rows:
        cert = json.loads((Path(str(out) + ".certs") / r["certificate"]).read_text())
        assert cert["claim"]["kind"] == "family_stability" and verify_certificate(cert).valid
        x0, x1, y0, y1 = (float(Q(r[c])) for c in ("a_lo", "a_hi", "w_lo", "w_hi"))
        a, w = rng.uniform(x0, x1), rng.uniform(y0, y1)
        p = Params.from_arrays([[a, 1], [-1, 1]], [[1, 0], [0, 1]], [[-1, w], [0, -1]])
        S = newton_equilibrium(p, np.diag([a, 1.0]))
        L = eq.linearisation_np(np.array([[a, 1], [-1, 1.0]]), np.eye(2), np.array([[-1, w], [0, -1.0]]), S)
        assert np.linalg.eigvalsh(S)[0] > 0 and np.linalg.eigvals(L).real.max() < 0
    # the default property leaves these general-V tiles uncertified (no regime claim for a box)
    plain = tl.parse_tile_spec({k: v for k, v in {**LOCAL, "min_size": "1/8"}.items() if k != "property"})
    assert tl.run_tiles(plain, tmp_path / "plain.csv", workers=0).counts["certified"] == 0


D2 = {"family": "tiles", "min_size": "1/2",
      "params": {"A": [[0, 1], [-1, 0]], "B": [[1, "1/4"], ["1/4", "1/2"]], "V": 0, "mean": [0, 0],
                 "cov": [[1, 0], [0, 1]]},
      "x": {"entry": "A[0][0]", "min": "-1", "max": "1", "label": "a"},
      "y": {"entry": "V", "min": "-1", "max": "1", "label": "v"}}


def _integrated_regime(a, v, T=120.0):
    """Independent route: Σ' = AΣ + ΣAᵀ + 2vΣB_sΣ from Σ0 = I (DOP853); blowup when ‖Σ‖ hits 1e8,
    collapse when ‖Σ(T)‖ < 1e-6 (the slowest decay here is e^{2 Re λ t} = e^{-t/4}: 1e-13 at T)."""
    A = np.array([[a, 1.0], [-1.0, 0.0]])
    Bs = np.array([[1.0, 0.25], [0.25, 0.5]])
    rhs = lambda t, y: (A @ y.reshape(2, 2) + y.reshape(2, 2) @ A.T
                        + 2 * v * y.reshape(2, 2) @ Bs @ y.reshape(2, 2)).ravel()
    hit = lambda t, y: np.abs(y).max() - 1e8
    hit.terminal = True
    sol = solve_ivp(rhs, (0, T), np.eye(2).ravel(), events=hit, method="DOP853", rtol=1e-10, atol=1e-14)
    if len(sol.t_events[0]):
        # the blow-ups here happen before t = 5; the linear flows' growth e^{a t} needs t > 30 to reach 1e8
        return "blowup" if sol.t_events[0][0] < 10 else "growth"
    return "collapse" if np.abs(sol.y[:, -1]).max() < 1e-6 else "other"


def test_sigma0_dependent_reference_boundary_matches_the_integrated_flow():
    """For A Hurwitz (a < 0) and v > 0 the closed form depends on Σ0 (P0 − P* ≻ 0: collapse; a
    negative direction: blow-up); the plot's reference draws that boundary."""
    spec = tl.parse_tile_spec(D2)
    seen = set()
    for a, v in [(-1, "1/8"), (-1, "1/2"), ("-1/4", "1/8"), ("-1/4", "3/4"), ("-1/2", "-1/2"), ("-1/2", "1/10"),
                 ("-1/2", "2/5"), ("-1/2", 0), ("1/2", 0)]:
        ref = tl.reference_regime(spec, Q(a), Q(v))
        assert ref == _integrated_regime(float(Q(a)), float(Q(v))), (a, v, ref)
        seen.add(ref)
    assert seen == {"collapse", "blowup", "growth"}      # v = 0: a linear flow

"""Sweeps: spec validation, the d = 1 closed form against the explicit solution,
the swept grid against the closed-form boundary, and resumability after a real kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
from hypothesis import given, strategies as st

from riccati_verify.app import sweep as sw
from riccati_verify.core.errors import InputError
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.numeric.views import float_view

GRID = {"family": "scalar_grid", "classifier": "flow",
        "a": {"min": -1, "max": 1, "num": 11}, "vbeta": {"min": -1, "max": 1, "num": 11}}


def _run_cli(*argv, timeout=120):
    return subprocess.run([sys.executable, "-m", "riccati_verify", *argv], capture_output=True,
                          text=True, timeout=timeout)


# ----------------------------------------------------------------- spec validation

@pytest.mark.parametrize("doc, fragment", [
    ([], "JSON object"),
    ({"family": "nope"}, "family"),
    ({**GRID, "a": {"min": 1, "max": 0, "num": 3}}, "min <= max"),
    ({**GRID, "a": {"min": 0, "max": 1, "num": 10**6}}, "a.num"),
    ({**GRID, "vbeta": {"min": 0, "max": 1}}, "vbeta"),
    ({**GRID, "sigma0": "-1"}, "sigma0"),
    ({**GRID, "sigma0": "1e999"}, "exponent"),
    ({**GRID, "v": 0}, "nonzero"),
    ({**GRID, "classifier": "closed_form"}, "classifier"),
    ({**GRID, "extra": 1}, "unknown spec keys"),
    ({"family": "random", "dim": 99}, "dim"),
    ({"family": "random", "count": 10**7}, "count"),
    ({"family": "random", "V": "diag"}, "'V'"),
    ({**GRID, "horizon": "1e9"}, "horizon"),
])
def test_spec_rejects_bad_input(doc, fragment):
    with pytest.raises(InputError, match=fragment):
        sw.parse_spec(doc)


def test_cli_bad_spec_is_exit_2_one_line(tmp_path):
    spec = tmp_path / "s.json"
    spec.write_text('{"family": "scalar_grid", "a": 3}')
    r = _run_cli("sweep", str(spec), "--out", str(tmp_path / "o.csv"))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


# ----------------------------------------------------------------- closed form vs explicit solution

def _explicit_regime(a: Fraction, c: Fraction, s0: Fraction) -> str:
    """Regime read off the explicit solution u(t) = 1/σ(t) of u̇ = −2au − 2c (an independent route)."""
    mpmath.mp.dps = 50
    a_, c_, s_ = (mpmath.mpf(x.numerator) / x.denominator for x in (a, c, s0))
    if a == 0:
        u = lambda t: 1 / s_ - 2 * c_ * t
    else:
        u = lambda t: (1 / s_ + c_ / a_) * mpmath.exp(-2 * a_ * t) - c_ / a_
    # blow-up: u reaches 0 at some finite t > 0 (u is monotone, so check a far time)
    far = mpmath.mpf(10) ** 6
    if u(far) <= 0:
        return sw.BLOWUP
    du0 = -2 * a_ * u(0) - 2 * c_
    if du0 == 0:
        return sw.EQUILIBRIUM      # u stationary: σ constant
    lim = u(far)
    if lim > mpmath.mpf(10) ** 5:   # u → ∞ means σ → 0
        return sw.COLLAPSE
    if a > 0 and c == 0:
        return sw.GROWTH
    return sw.EQUILIBRIUM          # u → −c/a > 0: σ → −a/c


small = st.fractions(min_value=-3, max_value=3, max_denominator=7)


@given(a=small, c=small, s0=st.fractions(min_value=Fraction(1, 7), max_value=3, max_denominator=7))
def test_scalar_regime_matches_explicit_solution(a, c, s0):
    assert sw.scalar_regime(a, c, s0)[0] == _explicit_regime(a, c, s0)


def test_riccati_reference_rejects_wrong_sign():
    """§7: vB_s ≻ 0 with Re λ(A) > 0 is blow-up; flipping v makes it an equilibrium."""
    I = ((Fraction(1), Fraction(0)), (Fraction(0), Fraction(1)))
    A = ((Fraction(1), Fraction(3)), (Fraction(0), Fraction(2)))
    st0 = Gaussian((Fraction(0),) * 2, I)
    assert sw.riccati_reference_regime(Params(A, I, I, (Fraction(0),) * 2), st0)[0] == sw.BLOWUP
    neg = tuple(tuple(-x for x in r) for r in I)
    assert sw.riccati_reference_regime(Params(A, I, neg, (Fraction(0),) * 2), st0)[0] == sw.EQUILIBRIUM
    # A with an eigenvalue of negative real part: §7 gives no closed-form verdict
    A2 = ((Fraction(1), Fraction(0)), (Fraction(0), Fraction(-1)))
    assert sw.riccati_reference_regime(Params(A2, I, neg, (Fraction(0),) * 2), st0) is None


def test_exact_re_positive_against_eigenvalues():
    import numpy as np
    rng = np.random.default_rng(3)
    for _ in range(30):
        M = rng.integers(-4, 5, size=(3, 3))
        A = tuple(tuple(Fraction(int(x)) for x in r) for r in M)
        ev = np.linalg.eigvals(M.astype(float)).real
        if np.min(np.abs(ev)) < 1e-6:
            continue
        assert sw._all_re_positive(A) == bool(np.all(ev > 0))


# ----------------------------------------------------------------- the swept grid vs the closed form

def test_flow_grid_never_contradicts_closed_form(tmp_path):
    spec = sw.parse_spec(GRID)
    s = sw.run_sweep(spec, tmp_path / "g.csv", workers=0)
    assert s.n_points == 121 and not sw.missing_points(tmp_path / "g.csv", spec)
    assert s.compared == 121
    # the numerical classifier may be inconclusive near slow dynamics, never contradictory
    assert s.contradictions == 0, s.disagreements
    # and it is decisive on both sides of the blow-up boundary a + vβσ0 = 0
    rows = {(r["a"], r["vbeta"]): r["regime"] for r in sw.read_rows(tmp_path / "g.csv")}
    assert rows[("4/5", "1/5")] == sw.BLOWUP
    assert rows[("-4/5", "1/5")] == sw.COLLAPSE


def test_stability_grid_reproduces_closed_form_exactly(tmp_path):
    assert sw.stability_classifier() is not None  # issue 3 has landed: a missing classifier is a failure
    doc = {**GRID, "classifier": "stability", "a": {"min": -1, "max": 1, "num": 21},
           "vbeta": {"min": -1, "max": 1, "num": 21}}
    spec = sw.parse_spec(doc)
    s = sw.run_sweep(spec, tmp_path / "g.csv", workers=0)
    assert s.compared == 441
    assert s.disagreements == [], s.disagreements[:5]


def test_classifier_disagreement_is_reported(tmp_path, monkeypatch):
    """A classifier that is wrong on one side of the boundary must show up as a contradiction."""
    real = sw._flow_regime

    def wrong(params, state, horizon):
        r = real(params, state, horizon)
        return (sw.GROWTH, *r[1:]) if r[0] == sw.BLOWUP else r

    monkeypatch.setattr(sw, "_flow_regime", wrong)
    s = sw.run_sweep(sw.parse_spec(GRID), tmp_path / "g.csv", workers=0)
    assert s.contradictions > 0
    assert all(d["reference"] == sw.BLOWUP for d in s.disagreements if d["regime"] == sw.GROWTH)


# ----------------------------------------------------------------- durability and resumability

def test_partial_line_is_dropped_and_recomputed(tmp_path):
    spec = sw.parse_spec(GRID)
    out = tmp_path / "g.csv"
    sw.run_sweep(spec, out, workers=0)
    full = {r["index"]: r["regime"] for r in sw.read_rows(out)}
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:-10]) + lines[-10][:7])      # a kill mid-write
    s = sw.run_sweep(spec, out, workers=0)
    assert s.computed_now == 10 and s.duplicates == 0
    assert {r["index"]: r["regime"] for r in sw.read_rows(out)} == full


def test_resume_refuses_a_different_spec(tmp_path):
    out = tmp_path / "g.csv"
    sw.run_sweep(sw.parse_spec(GRID), out, workers=0)
    other = sw.parse_spec({**GRID, "sigma0": 2})
    with pytest.raises(InputError, match="different sweep"):
        sw.run_sweep(other, out, workers=0)
    sw.meta_path(out).unlink()
    with pytest.raises(InputError, match="without its metadata"):
        sw.run_sweep(sw.parse_spec(GRID), out, workers=0)


def test_csv_is_tidy_with_metadata_in_a_sidecar(tmp_path):
    import csv

    spec = sw.parse_spec(GRID)
    out = tmp_path / "g.csv"
    sw.run_sweep(spec, out, workers=0)
    with open(out) as f:
        header = next(csv.reader(f))
    assert header == list(sw.columns(spec)) and header[:3] == ["index", "a", "vbeta"]
    assert not out.read_text().startswith("#") and "point" not in header
    meta = json.loads(sw.meta_path(out).read_text())
    assert meta["spec_sha256"] == spec.digest and meta["classifier"] == "flow" and meta["columns"] == header
    pq = pytest.importorskip("pyarrow.parquet")
    table = pq.read_table(sw.write_parquet(out, tmp_path / "g.parquet")).to_pydict()
    rows = sw.read_rows(out)
    assert table["index"] == [int(r["index"]) for r in rows] and table["vbeta"] == [r["vbeta"] for r in rows]


@pytest.mark.parametrize("workers", [pytest.param("0", marks=pytest.mark.slow), "1"])
def test_kill_and_restart_loses_no_finished_point(tmp_path, workers):
    # 42 points: the kill comes after 12 finished rows (chunks of 2), so 30 remain for the restart;
    # a larger grid only adds restart time (13 x 12 took ~5 s more), no case (unequal axes stay unequal)
    doc = {**GRID, "a": {"min": -1, "max": 1, "num": 7}, "vbeta": {"min": -1, "max": 1, "num": 6}}
    spec_file = tmp_path / "s.json"
    spec_file.write_text(json.dumps(doc))
    out = tmp_path / "g.csv"
    argv = [sys.executable, "-m", "riccati_verify", "sweep", str(spec_file), "--out", str(out),
            "--workers", workers, "--chunk", "2", "--quiet"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 90
    n_before = 0
    while time.monotonic() < deadline:
        n_before = len(sw.read_rows(out)) if out.exists() else 0
        if n_before >= 12 or proc.poll() is not None:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)          # the whole group we started: client and workers
    proc.wait()
    spec = sw.parse_spec(doc)
    finished = {r["index"]: r["regime"] for r in sw.read_rows(out) if r["seconds"]}
    assert 0 < len(finished) < spec.n_points, "the sweep was not interrupted mid-way"
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1), r.stderr
    rows = sw.read_rows(out)
    indices = [int(x["index"]) for x in rows]
    assert sorted(indices) == list(range(spec.n_points))      # nothing lost, nothing twice
    after = {x["index"]: x["regime"] for x in rows}
    assert all(after[i] == reg for i, reg in finished.items())
    # rows computed after the restart are what an uninterrupted run computes
    redo = [i for i in range(spec.n_points) if str(i) not in finished][::6]
    ref = sw.evaluate_chunk(spec.doc, "flow", redo)
    assert all(after[str(x["index"])] == x["regime"] for x in ref)


def test_cli_json_and_plot(tmp_path):
    spec_file = tmp_path / "s.json"
    spec_file.write_text(json.dumps(GRID))
    r = _run_cli("sweep", str(spec_file), "--out", str(tmp_path / "g.csv"), "--workers", "0",
                 "--plot", str(tmp_path / "g.png"), "--json", "--quiet")
    assert r.returncode == 1          # the flow classifier leaves points undetermined
    doc = json.loads(r.stdout)
    assert doc["points"] == 121 and doc["missing"] == 0 and doc["contradictions"] == 0
    assert all(d["regime"] == "undetermined" for d in doc["disagreements"])
    assert (tmp_path / "g.png").stat().st_size > 10_000


def test_random_family_has_reference_where_section_7_applies(tmp_path):
    doc = {"family": "random", "dim": 2, "count": 30, "seed": 5, "V": "scalar", "classifier": "flow",
           "horizon": 10}
    spec = sw.parse_spec(doc)
    s = sw.run_sweep(spec, tmp_path / "r.csv", workers=0)
    assert s.n_points == 30
    assert s.contradictions == 0, s.disagreements
    rows = sw.read_rows(tmp_path / "r.csv")
    assert rows[0]["seed"] == "5" and "A_1_0" in rows[0] and "cov_1_1" in rows[0]   # seed and draw recorded
    # same seed and index: same draw
    assert sw.point(spec, 7)[0] == sw.point(spec, 7)[0]


def test_existing_scheduler(tmp_path):
    from dask.distributed import LocalCluster

    spec = sw.parse_spec({**GRID, "a": {"min": -1, "max": 1, "num": 5}, "vbeta": {"min": -1, "max": 1, "num": 4}})
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        s = sw.run_sweep(spec, tmp_path / "g.csv", scheduler=cluster.scheduler_address)
    assert s.n_points == 20 and s.contradictions == 0
    with pytest.raises(InputError, match="cannot reach"):
        sw.run_sweep(spec, tmp_path / "h.csv", scheduler="tcp://127.0.0.1:9", connect_timeout=2)


def test_riccati_definite_family_is_decided_by_section_7(tmp_path):
    import numpy as np

    doc = {"family": "random", "dim": 3, "count": 12, "seed": 2, "V": "scalar",
           "structure": "riccati_definite", "classifier": "flow"}
    spec = sw.parse_spec(doc)
    for i in range(spec.n_points):
        params, _, _ = sw.point(spec, i)
        A, B, V, _ = float_view(params)
        assert np.linalg.eigvals(A).real.min() > 0                      # the drawn A has Re λ > 0
        if V[0, 0] != 0:
            assert np.all(np.abs(np.linalg.eigvalsh(V[0, 0] * (B + B.T) / 2)) > 0)
    s = sw.run_sweep(spec, tmp_path / "r.csv", workers=0)
    assert s.compared >= 10 and s.contradictions == 0, s.disagreements


def test_certificates_where_asked_pass_the_independent_checker(tmp_path):
    assert sw.stability_classifier() is not None  # issue 3 has landed: a missing classifier is a failure
    from riccati_verify.checker import verify_certificate

    doc = {"family": "random", "dim": 2, "count": 6, "seed": 3, "V": "scalar",
           "structure": "riccati_definite", "classifier": "stability", "certificates": True}
    out = tmp_path / "c.csv"
    sw.run_sweep(sw.parse_spec(doc), out, workers=0)
    rows = sw.read_rows(out)
    named = [r for r in rows if r["certificate"]]
    assert named and all(r["certified"] == "1" for r in named)
    for r in named:
        cert = json.loads((sw.certificate_dir(out) / r["certificate"]).read_text())
        assert verify_certificate(cert).valid
        assert cert["claim"].get("regime", cert["claim"]["kind"]) == r["regime"]
        tampered = json.loads(json.dumps(cert))       # same witness, different parameters
        a00 = tampered["params"]["A"][0][0]
        tampered["params"]["A"][0][0] = str(Fraction(a00) + 1)
        assert not verify_certificate(tampered).valid
    with pytest.raises(InputError, match="stability"):
        sw.parse_spec({**doc, "classifier": "flow"})

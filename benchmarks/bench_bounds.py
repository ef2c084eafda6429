"""Worst measured cost at each documented input bound (README, "The model and parameter files").

    python benchmarks/bench_bounds.py [--only NAME ...] [--list]

Each case builds an input AT its bound (the largest the tool accepts) and runs what the bound
protects, in a fresh child process, reporting wall and CPU time, the child's peak resident memory
(getrusage ru_maxrss, interpreter and imports included), the same before the case (the
baseline), and tracemalloc's peak of Python allocations during the case (python-flint's own
memory is not traced; the RSS column includes it).  Inputs are deterministic (no random draw).
Cases just past a bound are refused before any expensive step; their time is reported too.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import tracemalloc
from fractions import Fraction as F
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _frac(q: F) -> str:
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def _diag_dominant(d: int, entry: F, diag: F) -> list[list[str]]:
    return [[_frac(diag if i == j else entry) for j in range(d)] for i in range(d)]


# --- the cases ---------------------------------------------------------------------------------

def case_file_size_1mb():
    """A parameter file of just under 1,000,000 bytes (d = 64, A and B of ~55-digit rationals, the
    byte cap is on the read): read, parsed (16,000 exact entries) and the cov's exact PSD test."""
    from riccati_verify.core.io import MAX_FILE_BYTES, load_problem

    d = 64

    def mat(k):
        return [[f"{(i * d + j) % 97 - 48}/{10 ** 54 + 7 * k + i + j}" for j in range(d)] for i in range(d)]
    doc = {"A": mat(1), "B": mat(2), "V": "1/3", "mean": ["1/7"] * d,
           "cov": _diag_dominant(d, F(1, 1000), F(1)), "description": ""}
    doc["description"] = "p" * (MAX_FILE_BYTES - len(json.dumps(doc)) - 1)
    path = Path("/tmp/bench_bounds_1mb.json")
    path.write_text(json.dumps(doc))
    size = path.stat().st_size

    def run():
        from riccati_verify.core.errors import InputError
        try:
            load_problem(path)
            return f"{size} bytes: accepted"
        except InputError as e:
            return f"{size} bytes: refused ({str(e)[:60]})"
    return run


def _bidiagonal_vi(d: int):
    """A = I/2 + N/10 (N the shift), B = −I, V = I, N(0, I): a V = vI system of dimension d."""
    from riccati_verify.core.model import Gaussian, Params

    A = [[F(1, 2) if i == j else (F(1, 10) if j == i + 1 else F(0)) for j in range(d)] for i in range(d)]
    B = [[F(-1) if i == j else F(0) for j in range(d)] for i in range(d)]
    V = [[F(1) if i == j else F(0) for j in range(d)] for i in range(d)]
    s = Gaussian((F(0),) * d, tuple(tuple(F(1) if i == j else F(0) for j in range(d)) for i in range(d)))
    return Params.from_arrays(A, B, V), s


def case_dimension_64():
    """d = 64 (the dimension bound): `check` (classify_regime) on a V = vI system (its exact
    Lyapunov solves, 9e9 units, are past their budget: undetermined with the reason) and a
    100-step `flow` integration."""
    from riccati_verify import classify_regime, integrate_moments

    p, s = _bidiagonal_vi(64)

    def run():
        r = classify_regime(p, s)
        integrate_moments(p, s, time=1.0)
        return f"classify: {r.regime}, {r.status} ({r.note[:50]}); flow to t = 1"
    return run


def case_check_lyapunov_budget_d48():
    """`check` (classify_regime) at d = 48, V = vI: the exact Lyapunov solves of the Riccati
    reduction just under their budget (exact.lyapunov_work 1.6e9 of 2e9 units each)."""
    from riccati_verify import classify_regime
    from riccati_verify.core import exact

    p, s = _bidiagonal_vi(48)
    work = exact.lyapunov_work(p.A)

    def run():
        r = classify_regime(p, s)
        return f"Lyapunov work {work:.3g} of {exact.MAX_LYAPUNOV_WORK:.0e}: {r.regime}, {r.status}"
    return run


def case_entry_bits_1400():
    """Entries at the bit bound (numerator and denominator 1,400 bits, a 421-digit integer, a
    1,000-character string, exponent ±400) in a d = 8 cov: parse and the exact PSD test."""
    from riccati_verify.core.io import load_problem_text

    d = 8
    big = 2 ** 1399 + 1
    cov = [[_frac(F(big + 4, big + 2)) if i == j else _frac(F(1, big + 2 * (i + j))) for j in range(d)]
           for i in range(d)]
    for i in range(d):
        for j in range(i):
            cov[i][j] = cov[j][i]
    cov[0][0] = "1" * 421
    cov[1][1] = "0." + "3" * 396 + "e2"
    doc = {"mean": ["1e-400"] + ["1e400"] + ["0"] * (d - 2), "cov": cov}
    text = json.dumps(doc)

    def run():
        load_problem_text(text)
        return "accepted"
    return run


def case_psd_work_budget():
    """The exact PSD test at its budget d³·H ≤ 10⁹: d = 32, integer entries of 950 bits
    (H = 30,496 bits, d³·H = 9.99e8)."""
    from riccati_verify.core import exact

    d = 32
    S = [[F(40 * 2 ** 944) if i == j else F(2 ** 944 + i + j) for j in range(d)] for i in range(d)]
    work = exact.psd_work(S)

    def run():
        try:
            ok, rank = exact.psd_scaled(S)
            return f"work {work:.3g} of {exact.MAX_PSD_WORK:.0e}: psd {ok}, rank {rank}"
        except ValueError:
            return f"work {work:.3g}: refused"
    return run


def _equilibrium_cert(d: int, radius: str) -> dict:
    from riccati_verify.certify.certificate import make_certificate
    from riccati_verify.core.model import Params

    A = [[F(1) if i == j else (F(1, 8) if j == i + 1 else F(0)) for j in range(d)] for i in range(d)]
    I = [[F(1) if i == j else F(0) for j in range(d)] for i in range(d)]
    V = [[-x for x in r] for r in I]
    p = Params.from_arrays(A, I, V)
    # F(Σ) = AΣ + ΣAᵀ − 2Σ²: Σ* solves it; the ball around the float Newton root
    import numpy as np
    An = np.array(A, dtype=float)
    S = np.eye(d)
    for _ in range(30):
        Fm = An @ S + S @ An.T - 2 * S @ S
        # Newton on the Lyapunov-type linearisation (floats; the checker decides)
        from scipy.linalg import solve_continuous_lyapunov
        J = An - 2 * S
        S = S - solve_continuous_lyapunov(J, Fm)
    c = [[_frac(F(float((S[i, j] + S[j, i]) / 2)).limit_denominator(10 ** 12)) for j in range(d)] for i in range(d)]
    return make_certificate("equilibrium", {"positive_definite": True}, p, None,
                            {"center": c, "radius": radius}, "bench_bounds: float Newton root")


def _verify_case(cert: dict):
    from riccati_verify.checker import verify_certificate

    def run():
        r = verify_certificate(cert)
        return f"valid {r.valid}: {r.reason[:60]}"
    return run


def case_krawczyk_d32():
    """The equilibrium checker's Krawczyk test at its bound d = 32 (528 unknowns)."""
    return _verify_case(_equilibrium_cert(32, "1/1000000000"))


def case_krawczyk_d33_refused():
    """Just past it (d = 33): refused before the test."""
    return _verify_case(_equilibrium_cert(33, "1/1000000000"))


def case_lyapunov_d16():
    """The lyapunov_stability checker at its bound d = 16 (136 unknowns): the producer's
    certificate for a non-scalar V (A = I + N/8, B = I, V = −I + N/100)."""
    from riccati_verify import classify_regime
    from riccati_verify.checker import verify_certificate
    from riccati_verify.core.model import Gaussian, Params

    d = 16
    N = [[F(1) if j == i + 1 else F(0) for j in range(d)] for i in range(d)]
    I = [[F(1) if i == j else F(0) for j in range(d)] for i in range(d)]
    A = [[I[i][j] + N[i][j] / 8 for j in range(d)] for i in range(d)]
    V = [[-I[i][j] + N[i][j] / 100 for j in range(d)] for i in range(d)]
    p = Params.from_arrays(A, I, V)
    s = Gaussian((F(0),) * d, tuple(tuple(F(11, 10) * I[i][j] for j in range(d)) for i in range(d)))
    cert = classify_regime(p, s).certificate
    kind = cert["claim"]["kind"] if cert else None

    def run():
        if cert is None:
            return "no certificate produced"
        r = verify_certificate(cert)
        return f"{kind}: valid {r.valid}"
    return run


def _cover_cert(n: int, prec: int, A: int = -1, cov: F = F(1, 10), horizon: F = F(1)):
    from riccati_verify.certify.certificate import make_certificate
    from riccati_verify.core.model import Gaussian, Params

    p = Params.from_arrays([[F(A)]], [[F(1)]], [[F(1)]])
    s = Gaussian((F(0),), ((cov,),))
    boxes = [["pd", _frac(horizon * k / n), _frac(horizon * (k + 1) / n)] for k in range(n)]
    return make_certificate("no_blowup", {"horizon": _frac(horizon)}, p, s,
                            {"route": "radon-cover", "precision_bits": prec, "factor_C": [["1"]],
                             "factor_D": [_frac(cov)], "boxes": boxes}, "bench_bounds")


def case_box_cover_budget():
    """A radon-cover no_blowup certificate at the cover budget (balls.MAX_COVER_WORK): d = 1 at
    40,000 bits (the precision bound, where a unit costs the most time), as many "pd" boxes as
    the budget admits (--boxes overrides; past the budget it is refused before any proof)."""
    from riccati_verify.checker import verify_certificate
    from riccati_verify.core import balls

    prec = 40_000
    unit = balls.cover_unit(1, prec)
    n = int(sys.argv[sys.argv.index("--boxes") + 1]) if "--boxes" in sys.argv else int(balls.MAX_COVER_WORK // unit)
    cert = _cover_cert(n, prec)

    def run():
        r = verify_certificate(cert)
        return f"{n} boxes at {prec} bits ({n * unit:.3g} units): valid {r.valid}: {r.reason[:50]}"
    return run


def case_box_cover_splits():
    """The same budget spent on box proofs that fail and split (charged like the others): one
    box [0, 1] of a system blowing up at T* = ln(2)/2 ≈ 0.35 (A = 1, B = V = 1, Σ0 = 1), whose
    claim of no blow-up on [0, 1] is false, at 40,000 bits; and 8 boxes over [0, 0.34] where N
    approaches 0, so the checker splits near the end."""
    from riccati_verify.checker import verify_certificate

    false_claim = _cover_cert(1, 40_000, A=1, cov=F(1))
    near = _cover_cert(8, 40_000, A=1, cov=F(1), horizon=F(34, 100))

    def run():
        r1, r2 = verify_certificate(false_claim), verify_certificate(near)
        return f"false claim: valid {r1.valid} ({r1.reason[:40]}); near T*: valid {r2.valid} ({r2.reason[:40]})"
    return run


def case_reach_time_100():
    """`reach --time 100` (the horizon bound), d = 2."""
    from fractions import Fraction

    from riccati_verify.certify.reach import reach_verdict
    from riccati_verify.core.model import Gaussian

    s0 = Gaussian((F(0), F(0)), ((F(1), F(0)), (F(0), F(1))))
    s1 = Gaussian((F(1, 2), F(0)), ((F(2), F(1, 2)), (F(1, 2), F(1))))

    def run():
        r = reach_verdict(s0, s1, Fraction(100))
        return f"{r.status}"
    return run


def case_certificate_1mb_structural():
    """A 1 MB certificate that the envelope refuses (an unknown witness key after 1 MB of JSON)
    and a duplicate-key file: the strict-envelope bounds cost one parse."""
    from riccati_verify.checker import verify_certificate
    from riccati_verify.core.io import loads_json

    doc = json.loads((ROOT / "tests" / "data" / "certificates" / "reachability.json").read_text())
    doc["witness"]["zz"] = ["1"] * 190_000
    text = json.dumps(doc)
    dup = text[:-1] + ', "version": 1}'

    def run():
        r = verify_certificate(loads_json(text))
        try:
            loads_json(dup)
            d = "accepted"
        except Exception as e:  # noqa: BLE001
            d = type(e).__name__
        return f"{len(text)} bytes: valid {r.valid}; duplicate key: {d}"
    return run


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def _child(name: str) -> None:
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run = CASES[name]()
    tracemalloc.start()
    t0, c0 = time.perf_counter(), time.process_time()
    what = run()
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(json.dumps({"case": name, "seconds": dt, "cpu_seconds": cpu, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "base_rss_mb": base / 1024, "traced_peak_mb": peak / 2 ** 20, "result": what}))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--child", default=None)
    ap.add_argument("--boxes", default=None, help="box count of box_cover_budget (default 5000)")
    a = ap.parse_args(argv)
    if a.child:
        _child(a.child)
        return 0
    if a.list:
        print("\n".join(CASES))
        return 0
    print(f"{'bound':30} {'time s':>9} {'CPU s':>9} {'peak RSS MB':>12} {'(before)':>9} {'traced MB':>10}  result")
    for name in a.only or CASES:
        cmd = [sys.executable, __file__, "--child", name] + (["--boxes", a.boxes] if a.boxes else [])
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{name:30} FAILED: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{name:30} {r['seconds']:9.2f} {r['cpu_seconds']:9.2f} {r['rss_mb']:12.0f} {r['base_rss_mb']:9.0f} {r['traced_peak_mb']:10.1f}"
              f"  {r['result']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The census of all PSD equilibria (`certify.equilibria_all.census`) on the issue's general
instances: how often the box cover is certified, how many boxes and how long, and the checker's time.

Instances: `testing.strategies.general_instance(d, seed, i)` (A, B, V with entries k/2, k/3, k/4,
|k| <= 6), i < N.  R: the a-priori trace-form bound when tr(VΣBΣ) is definite, else the default
(twice the largest PSD equilibrium Newton finds, rounded up to a power of 2).  Columns per
instance: R and where it came from, certified, boxes, the equilibria by PSD status (pd / psd /
excluded / undecided), the producer's and the checker's CPU seconds.  A sympy cross-check of the
count (d = 2 only, --sympy) solves F(Σ) = 0 by a Gröbner basis and counts the real PSD solutions
in the region.

Usage: python benchmarks/bench_all_equilibria.py [--dims 2,3] [--n 10] [--seed 0] [--max-boxes 100000] [--sympy]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from riccati_verify.checker import verify_certificate
from riccati_verify.certify.equilibria_all import census
from riccati_verify.testing.strategies import general_instance


def sympy_count(p, R: float) -> int | None:
    """Real PSD solutions of F = 0 in the region by sympy (None: not finitely many; -1: sympy failed)."""
    from riccati_verify.certify.equilibria import symbolic_equilibria

    try:
        sols = symbolic_equilibria(p)
    except ArithmeticError:          # sympy's radicals disagree with its own real-root count
        return -1
    if sols is None:
        return None
    M = [np.array(S.evalf(30).tolist(), dtype=float) for S in sols]
    return sum(1 for S in M if np.linalg.eigvalsh(S)[0] >= -1e-9 and np.max(np.diag(S)) <= R)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dims", default="2,3")
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-boxes", type=int, default=100_000)
    ap.add_argument("--sympy", action="store_true")
    a = ap.parse_args()
    print(f"general_instance(d, seed={a.seed}, i), i < {a.n}; box budget {a.max_boxes}; CPU seconds")
    print(f"{'d':>2} {'i':>3} {'R':>8} {'from':>8} {'cert':>5} {'boxes':>7} {'pd':>3} {'psd':>4} {'excl':>5} "
          f"{'und':>4} {'prod_s':>7} {'check_s':>8}" + (f" {'sympy':>6}" if a.sympy else ""))
    for d in (int(x) for x in a.dims.split(",")):
        done = 0
        for i in range(a.n):
            p, _ = general_instance(d, a.seed, i)
            t0 = time.process_time()
            res = census(p, max_boxes=a.max_boxes, progress=False, seed=a.seed)
            tp = time.process_time() - t0
            cnt = {s: sum(e["status"] == s for e in res.equilibria) for s in ("pd", "psd", "excluded", "undecided")}
            tc = float("nan")
            if res.certificate is not None:
                t0 = time.process_time()
                assert verify_certificate(res.certificate).valid
                tc = time.process_time() - t0
                done += 1
            extra = ""
            if a.sympy and d == 2:
                c = sympy_count(p, float(res.radius))
                extra = f" {c if c is not None else 'inf':>6}"
            print(f"{d:>2} {i:>3} {float(res.radius):>8.3g} {res.radius_source:>8} "
                  f"{'yes' if res.certificate else 'no':>5} {res.boxes:>7} {cnt['pd']:>3} {cnt['psd']:>4} "
                  f"{cnt['excluded']:>5} {cnt['undecided']:>4} {tp:>7.2f} {tc:>8.2f}{extra}", flush=True)
        print(f"d = {d}: {done}/{a.n} certified", flush=True)


if __name__ == "__main__":
    main()

"""Sweep throughput: points per second in this process, and on Dask with 1 and 2 workers.

Baseline: the same points evaluated serially in this process (no Dask).
Machine limit: perfect scaling, i.e. the serial rate times the number of
worker processes (capped by the CPU count).  Ratios are measured in this run.

    python benchmarks/bench_sweep.py [--side N] [--classifier stability|flow]
"""

from __future__ import annotations

import os

# Dask workers run single-threaded BLAS; the in-process baseline must too, or
# BLAS thread oversubscription on tiny matrices (measured: 20x slower on a
# loaded 2-core machine) would flatter Dask.
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse
import tempfile
import time
from pathlib import Path

from riccati_verify.app import sweep as sw


def measure(spec, workers: int, chunk: int | None) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "s.csv"
        t0 = time.perf_counter()
        s = sw.run_sweep(spec, out, workers=workers, chunk=chunk)
        dt = time.perf_counter() - t0
        assert s.n_points == spec.n_points and not sw.missing_points(out, spec)
        return dt, spec.n_points / dt


def cluster_startup(workers: int) -> float:
    from dask.distributed import Client, LocalCluster

    t0 = time.perf_counter()
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        with Client(c) as client:
            client.submit(sum, [1, 2]).result()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", type=int, default=60, help="grid side (side² points)")
    ap.add_argument("--classifier", default="auto")
    args = ap.parse_args()
    spec = sw.parse_spec({"family": "scalar_grid", "classifier": args.classifier,
                          "a": {"min": -1, "max": 1, "num": args.side},
                          "vbeta": {"min": -1, "max": 1, "num": args.side}})
    cls = sw.resolve_classifier(spec.classifier)
    ncpu = os.cpu_count() or 1
    print(f"d = 1 grid, {spec.n_points} points, classifier {cls}, {ncpu} CPUs "
          "(wall times include LocalCluster start-up)")
    t_serial, r_serial = measure(spec, 0, None)
    print(f"{'run':<22}{'seconds':>9}{'points/s':>10}{'vs serial':>11}{'vs ideal':>10}{'startup s':>11}")
    print(f"{'in-process (baseline)':<22}{t_serial:>9.2f}{r_serial:>10.1f}{1.0:>11.2f}{1.0:>10.2f}")
    for w in (1, 2):
        t, r = measure(spec, w, None)
        ideal = r_serial * min(w, ncpu)
        print(f"{f'dask, {w} worker(s)':<22}{t:>9.2f}{r:>10.1f}{r / r_serial:>11.2f}{r / ideal:>10.2f}"
              f"{cluster_startup(w):>11.2f}")


if __name__ == "__main__":
    main()

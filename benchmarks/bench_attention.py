"""Attention evaluations per second: blocked log-sum-exp attention vs baselines, same run.

One *evaluation* is the attention average for all N queries over all N tokens
(what one stage of a particle step needs).  For each N, d and dtype it prints

  ours        riccati_verify.numeric.simulate.attention.attention (blocked, BLAS, log-sum-exp)
  naive       one query at a time in numpy, timed on a subset of queries and extrapolated to N
  torch       torch.nn.functional.scaled_dot_product_attention on CPU, same inputs
              (q = X Bᵀ, k = v = X, scale = 1), if torch is importable (optional `bench` extra)
  limit       the machine's own floor measured now: BLAS GEMMs of the same flop count
              (2N²d for the logits + 2N²(d+1) for the weighted sums, in the same blocks) plus one
              numpy exp over the N² entries

and the ratios ours/limit (goal ≤ 2 for N ≥ 4000), torch/ours (goal ≥ 1) and naive/ours.

Usage: python benchmarks/bench_attention.py [--quick] [--repeats K] [--threads T]
(--quick: N ∈ {1000, 4000}; the full table includes N = 16000 and takes a few minutes.)
BLAS and torch both run with T threads (default 1): on a shared, oversubscribed
machine multi-threaded OpenBLAS spins and becomes ~30× slower for these shapes,
which would measure the load, not the code.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from riccati_verify.numeric.simulate.attention import attention, attention_naive, default_block


def best_time(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def machine_limit(X: np.ndarray, d: int, block: int) -> float:
    """GEMMs of the same flop count and one exp over N² entries, in the same blocks (no max, no divide)."""
    N = X.shape[0]
    dt = X.dtype
    Q = np.ascontiguousarray(X)
    XT = np.ascontiguousarray(X.T)
    W = np.ones((N, d + 1), dtype=dt)
    L = np.empty((min(block, N), N), dtype=dt)
    for s in range(0, N, block):
        e = min(s + block, N)
        Lb = L[: e - s]
        np.matmul(Q[s:e], XT, out=Lb)     # 2·b·N·d flops
        Lb *= 1e-3                        # keep exp finite; costs one pass like our max shift would not
        np.exp(Lb, out=Lb)
        Lb @ W                            # 2·b·N·(d+1) flops
    return 0.0


def limit_time(X, d, block, repeats) -> float:
    # the scaling pass above is not part of the floor: time it separately and subtract it
    N = X.shape[0]
    L = np.zeros((min(block, N), N), dtype=X.dtype)
    t_scale = best_time(lambda: [L.__imul__(1.0) for _ in range(0, N, block)], repeats)
    return max(best_time(lambda: machine_limit(X, d, block), repeats) - t_scale, 1e-9)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--n", type=int, nargs="*", help="token counts (default 1000 4000 16000)")
    ap.add_argument("--d", type=int, nargs="*", help="dimensions (default 4 16 64)")
    args = ap.parse_args(argv)
    from threadpoolctl import threadpool_limits
    with threadpool_limits(args.threads):
        run(args)


def run(args) -> None:
    try:
        import torch
        import torch.nn.functional as F
        torch.set_num_threads(args.threads)
        torch_info = f"torch {torch.__version__}, {torch.get_num_threads()} threads"
    except ImportError:
        torch = None
        torch_info = "torch not installed (pip install riccati-verify[bench])"
    Ns = args.n or ((1000, 4000) if args.quick else (1000, 4000, 16000))
    print(f"attention evaluations per second (one evaluation = N queries × N tokens); BLAS threads "
          f"{args.threads}; {torch_info}; seed {args.seed}")
    hdr = (f"{'N':>6} {'d':>3} {'dtype':>7} | {'ours/s':>9} {'naive/s':>9} {'torch/s':>9} {'limit/s':>9} | "
           f"{'ours/limit':>10} {'torch/ours':>10} {'naive/ours':>10}")
    print(hdr)
    print("-" * len(hdr))
    rng = np.random.default_rng(args.seed)
    for N in Ns:
        reps = args.repeats if N <= 4000 else max(1, args.repeats // 2)
        for d in args.d or (4, 16, 64):
            X64 = rng.standard_normal((N, d))
            B64 = rng.standard_normal((d, d)) / d
            for dtype in (np.float64, np.float32):
                X = X64.astype(dtype)
                block = default_block(N)
                t_ours = best_time(lambda: attention(X, B64), reps)
                nq = min(N, 100)
                t_naive = best_time(lambda: attention_naive(X, B64, range(nq)), reps) * N / nq
                t_lim = limit_time(X, d, block, reps)
                t_torch = float("nan")
                if torch is not None:
                    tX = torch.from_numpy(np.ascontiguousarray(X))[None]
                    tq = torch.from_numpy(np.ascontiguousarray(X @ B64.T.astype(dtype)))[None]
                    with torch.no_grad():
                        t_torch = best_time(lambda: F.scaled_dot_product_attention(tq, tX, tX, scale=1.0), reps)
                name = "float64" if dtype == np.float64 else "float32"
                print(f"{N:>6} {d:>3} {name:>7} | {1 / t_ours:>9.3g} {1 / t_naive:>9.3g} {1 / t_torch:>9.3g} "
                      f"{1 / t_lim:>9.3g} | {t_ours / t_lim:>10.2f} {t_torch / t_ours:>10.2f} {t_naive / t_ours:>10.1f}",
                      flush=True)


if __name__ == "__main__":
    main()

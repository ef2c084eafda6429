"""Softmax attention over an empirical measure, blocked and BLAS-vectorised.

For tokens x_1..x_N (rows of X) and a kernel matrix B, the attention average
seen by the query x_i is

    Attn_B(x_i) = Σ_j w_ij x_j,   w_ij = exp(⟨B x_i, x_j⟩) / Σ_k exp(⟨B x_i, x_k⟩)

(MATH.md §1, query x, kernel exp(⟨Bx, y⟩), self included).

Why it is written this way:

* the logits of a block of queries are one GEMM, (X_q Bᵀ) Xᵀ;
* the row maximum is subtracted before `exp` (log-sum-exp), so no logit
  overflows; the largest weight of every row is exactly 1, so the
  denominator is ≥ 1 and never underflows;
* numerator and denominator come from a single second GEMM against [X | 1];
* only `block` rows of the N×N weight matrix exist at a time, so memory is
  O(N·block) and N = 100,000 runs in a few hundred MB.

The effective sample size of row i, ESS_i = (Σ_j w_ij)² / Σ_j w_ij², is the
number of tokens a query effectively averages over.  When it collapses the
particle average is a poor estimate of the mean-field one (MATH.md §10), so
it is reported alongside every simulation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["AttentionOutput", "MAX_TOKENS", "attention", "attention_naive", "default_block", "ess_summary"]

MAX_TOKENS = 200_000
"""Largest N the simulators accept (memory is O(N·block), time O(N²·d))."""

_BLOCK_ELEMENTS = 1 << 19
"""Default block: about 512k weights (4 MB in float64) per block of queries, so the max, exp and
sum passes over a block run from cache; measured on this machine, 32–128 query rows are
1.3–2.5× faster than 1000-row blocks for N = 4000–16000 (benchmarks/bench_attention.py)."""


def default_block(n: int) -> int:
    """Query rows per block for N tokens: 32..128 rows, about `_BLOCK_ELEMENTS` weights per block."""
    return int(min(n, max(32, min(128, _BLOCK_ELEMENTS // max(n, 1)))))


@dataclass(frozen=True)
class AttentionOutput:
    """The attention averages of the queries and, if requested, their effective sample sizes."""

    value: np.ndarray            # (n_queries, d): Σ_j w_ij x_j
    ess: np.ndarray | None       # (n_queries,): effective sample size, if requested


def attention(X: np.ndarray, B: np.ndarray, *, queries: np.ndarray | None = None,
              block: int | None = None, with_ess: bool = False) -> AttentionOutput:
    """Attention averages of the empirical measure of the rows of X.

    X: (N, d) keys = values (the token positions); B: (d, d) kernel;
    queries: (n, d) query points (default X itself).  Computation happens in
    X's dtype (float32 or float64).
    """
    X = np.asarray(X)
    dt = X.dtype if X.dtype in (np.float32, np.float64) else np.float64
    X = np.ascontiguousarray(X, dtype=dt)
    Q = X if queries is None else np.ascontiguousarray(queries, dtype=dt)
    n, N = Q.shape[0], X.shape[0]
    QB = Q @ np.asarray(B, dtype=dt).T            # rows (B q_i)ᵀ
    X1 = np.empty((N, X.shape[1] + 1), dtype=dt)  # [X | 1]: numerator and denominator in one GEMM
    X1[:, :-1] = X
    X1[:, -1] = 1
    XT = np.ascontiguousarray(X.T)
    blk = block or default_block(N)
    out = np.empty((n, X.shape[1]), dtype=dt)
    ess = np.empty(n, dtype=np.float64) if with_ess else None
    L = np.empty((min(blk, n), N), dtype=dt)
    for s in range(0, n, blk):
        e = min(s + blk, n)
        Lb = L[: e - s]
        np.matmul(QB[s:e], XT, out=Lb)
        Lb -= Lb.max(axis=1, keepdims=True)
        np.exp(Lb, out=Lb)
        ND = Lb @ X1
        den = ND[:, -1:]
        out[s:e] = ND[:, :-1] / den
        if with_ess:
            sq = np.einsum("ij,ij->i", Lb, Lb, dtype=np.float64)
            ess[s:e] = den[:, 0].astype(np.float64) ** 2 / sq
    return AttentionOutput(out, ess)


def attention_naive(X: np.ndarray, B: np.ndarray, query_indices) -> np.ndarray:
    """Reference: one query at a time, plain numpy on vectors (the per-token baseline)."""
    X = np.asarray(X, dtype=np.float64)
    out = []
    for i in query_indices:
        logits = X @ (B @ X[i])
        w = np.exp(logits - logits.max())
        out.append(w @ X / w.sum())
    return np.array(out)


def ess_summary(ess: np.ndarray) -> tuple[float, float]:
    """(min, median) of per-query effective sample sizes."""
    return float(np.min(ess)), float(np.median(ess))

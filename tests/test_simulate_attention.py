"""Blocked log-sum-exp attention against the per-token reference, stability, ESS and memory."""

import tracemalloc

import numpy as np
from hypothesis import given, strategies as st

from riccati_verify.numeric.simulate.attention import attention, attention_naive, default_block, ess_summary


def _data(seed, n, d, scale=1.0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), scale * rng.standard_normal((d, d)) / np.sqrt(d)


@given(st.integers(0, 2**32 - 1), st.integers(2, 300), st.integers(1, 6), st.integers(1, 64))
def test_blocked_equals_per_token_reference(seed, n, d, block):
    X, B = _data(seed, n, d)
    got = attention(X, B, block=block).value
    ref = attention_naive(X, B, range(n))
    # both compute the same convex combination; float64 rounding is O(eps · (d + log n)) relative to max|x|
    tol = 64 * np.finfo(float).eps * (d + np.log(n)) * np.abs(X).max()
    assert np.max(np.abs(got - ref)) <= tol


def test_float32_agrees_within_its_rounding():
    X, B = _data(1, 500, 8)
    ref = attention(X, B).value
    got = attention(X.astype(np.float32), B).value
    assert got.dtype == np.float32
    # relative rounding of float32 logits (|logit| ≲ max‖Bx‖‖x‖) propagates into the weights
    L = np.abs(X @ B.T).max() * np.abs(X).max() * 8
    tol = 16 * np.finfo(np.float32).eps * (L + 8 + np.log(500)) * np.abs(X).max()
    err = np.max(np.abs(got - ref))
    assert err <= tol
    assert err > 0  # float32 really was used


def test_huge_logits_do_not_overflow():
    X, B = _data(2, 200, 3, scale=1e4)
    out = attention(X, B, with_ess=True)
    assert np.all(np.isfinite(out.value))
    # without the max shift the same computation overflows: the test input really is extreme
    with np.errstate(over="ignore", invalid="ignore"):
        raw = np.exp((X @ B.T) @ X.T)
    assert not np.all(np.isfinite(raw))
    # with such sharp weights each query picks (almost) one token: ESS near 1
    assert ess_summary(out.ess)[0] < 2.0
    np.testing.assert_allclose(out.value, attention_naive(X, B, range(200)), atol=1e-9)


def test_ess_uniform_and_queries():
    X, _ = _data(3, 400, 2)
    out = attention(X, np.zeros((2, 2)), with_ess=True)
    np.testing.assert_allclose(out.ess, 400.0)
    np.testing.assert_allclose(out.value, np.broadcast_to(X.mean(0), (400, 2)), atol=1e-13)
    Q = np.array([[10.0, 0.0]])
    one = attention(X, np.eye(2), queries=Q).value
    w = np.exp(X @ Q[0] - (X @ Q[0]).max())
    np.testing.assert_allclose(one[0], w @ X / w.sum(), rtol=1e-12)


def test_memory_is_order_n_times_block():
    n, d, block = 20_000, 4, 64
    X, B = _data(4, n, d)
    tracemalloc.start()
    attention(X, B, block=block, queries=X[:256])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # one block of logits plus [X | 1], Xᵀ and outputs; an N×N matrix would be 3.2 GB
    bound = 3 * block * n * 8 + 4 * n * (d + 1) * 8 + 10**6
    assert peak <= bound, (peak, bound)
    assert default_block(100_000) * 100_000 * 8 < 2 * 2**30 / 4

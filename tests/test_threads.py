"""flint threads for large ball products (core/threads.py): the count's parsing, its scope, and that
a validated flow gives the same balls, bit for bit, on one thread and on several."""

from __future__ import annotations

from fractions import Fraction as F

import flint
import pytest

from riccati_verify.checker._lohner import enclose_lohner
from riccati_verify.checker._validated_flow import ball_state
from riccati_verify.core import threads
from riccati_verify.core.errors import InputError
from riccati_verify.testing.strategies import opposite_instance


@pytest.mark.parametrize("raw", ["0", "65", "-1", "two", "1.5", "2 threads"])
def test_bad_thread_counts_are_refused(monkeypatch, raw):
    monkeypatch.setenv(threads.ENV, raw)
    with pytest.raises(InputError, match=threads.ENV):
        threads.thread_count()


def test_a_bad_thread_count_is_refused_at_every_size(monkeypatch):
    monkeypatch.setenv(threads.ENV, "many")
    for n in (1, threads.THREAD_MIN_N):
        with pytest.raises(InputError, match=threads.ENV):
            with threads.threads_for(n):
                pass


def test_thread_count_from_the_environment_or_the_cpus(monkeypatch):
    monkeypatch.setenv(threads.ENV, " 3 ")
    assert threads.thread_count() == 3
    monkeypatch.delenv(threads.ENV)
    assert 1 <= threads.thread_count() <= threads.DEFAULT_MAX_THREADS


def test_threads_only_for_large_matrices_and_restored(monkeypatch):
    monkeypatch.setenv(threads.ENV, "2")
    before = flint.ctx.threads
    with threads.threads_for(threads.THREAD_MIN_N) as k:
        assert k == 2 and flint.ctx.threads == 2
    assert flint.ctx.threads == before
    with threads.threads_for(threads.THREAD_MIN_N - 1) as k:
        assert k == 1 and flint.ctx.threads == 1
    with pytest.raises(RuntimeError):
        with threads.threads_for(64):
            raise RuntimeError("inside")
    assert flint.ctx.threads == before


def _flow(monkeypatch, count: str):
    monkeypatch.setenv(threads.ENV, count)
    p, s = opposite_instance(6, 0, 0)          # n = 21 = THREAD_MIN_N: the threaded path
    d = p.dim
    m, S = ball_state((F(0),) * d, s.cov, 128)
    return enclose_lohner(m, S, p.A, p.B, p.V, (F(0),) * d, F(1, 256), order=12, jac_order=6, prec=128,
                          tol_bits=60, covariance_only=True, high_order_box=True)


def test_a_threaded_flow_is_the_same_balls(monkeypatch):
    one, two = _flow(monkeypatch, "1"), _flow(monkeypatch, "2")
    assert one.ok and two.ok, (one.reason, two.reason)
    assert one.steps == two.steps
    a, b = one.cov.entries(), two.cov.entries()
    assert all(x.mid() == y.mid() and x.rad() == y.rad() for x, y in zip(a, b))
    # the comparison can fail: a ball one ulp wider is told apart
    assert not (a[0].rad() == (a[0] + flint.arb(0, 2.0 ** -200)).rad())

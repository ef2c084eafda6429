"""Threads for python-flint's large ball-matrix products (trusted core).

flint splits one `arb_mat` product over `flint.ctx.threads` threads.  The result is the same ball,
bit for bit, at any thread count (every output entry is computed independently, and the integer
block products flint uses are exact), so the count changes the wall time only, never a proof or a
certificate.  It pays only for large matrices: measured on this project's 2-core machine, a 36×36
product at 64 bits takes 613 µs on one thread and 256 µs on two; a 10×10 product at 256 bits
takes 11 µs on one and 42 µs on two (the thread start costs more than the product).  Hence
`threads_for(n)`: several threads only for work on n×n matrices with n ≥ `THREAD_MIN_N`.

The count is `RICCATI_VERIFY_THREADS` when set (an integer 1..`MAX_THREADS`; anything else is an
`InputError`), else the number of CPUs this process may run on, at most `DEFAULT_MAX_THREADS`.
A test suite that already runs one worker per core (pytest-xdist) sets it to 1.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

import flint

from riccati_verify.core.errors import InputError

__all__ = ["DEFAULT_MAX_THREADS", "ENV", "MAX_THREADS", "THREAD_MIN_N", "thread_count", "threads_for"]

ENV = "RICCATI_VERIFY_THREADS"
MAX_THREADS = 64
DEFAULT_MAX_THREADS = 8
THREAD_MIN_N = 21
"""Smallest matrix dimension given several threads (d = 6 in the covariance-only Lohner flow, n =
d(d+1)/2): 21×21 products at 64 bits took 143 µs on one thread and 87 µs on two; 15×15, 56 and 40 µs,
but 15×15 at 256 bits 35 and 52 µs."""


def thread_count() -> int:
    """The thread count for large products: `ENV` when set, else the usable CPUs (≤ 8)."""
    raw = os.environ.get(ENV)
    if raw is not None and raw.strip():
        text = raw.strip()
        if not (text.isdigit() and 1 <= int(text) <= MAX_THREADS):
            raise InputError(f"{ENV} must be an integer from 1 to {MAX_THREADS}, got {raw!r}")
        return int(text)
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):     # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, DEFAULT_MAX_THREADS))


@contextmanager
def threads_for(n: int):
    """Run the block with `thread_count()` flint threads when n ≥ `THREAD_MIN_N`, else one; the
    previous count is restored on exit.  Yields the count used."""
    old = flint.ctx.threads
    k = thread_count()              # read (and a bad value refused) at every size, not only large ones
    k = k if n >= THREAD_MIN_N else 1
    flint.ctx.threads = k
    try:
        yield k
    finally:
        flint.ctx.threads = old

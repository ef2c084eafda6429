"""One helper the benchmarks share: a measurement in a child process with a wall-time limit."""

from __future__ import annotations

import multiprocessing as mp


def run_with_limit(target, args: tuple, limit: float, missing=None):
    """Run target(*args, queue) in a forked child and return the one result it puts on the queue;
    None when the child is still running after `limit` seconds (it is killed), `missing` when it
    exits without a result (it crashed)."""
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    pr = ctx.Process(target=target, args=(*args, q))
    pr.start()
    pr.join(limit)
    if pr.is_alive():
        pr.terminate()
        pr.join()
        return None
    return q.get() if not q.empty() else missing

"""A wall-clock limit on a certificate check (trusted core: the standard library only).

Every witness field of a certificate is bounded, but not their product: a 2 kB `blowup_general`
witness at d = 8 with the largest order, precision and step budget asks for hours of validated flow
(review s19 F1), and a check that answers after hours is of no use to a service.  The step loops of the
validated flows (`checker._lohner`, `checker._validated_flow`) call `check` once per step attempt; inside
`time_limit(seconds)` it raises `TimeLimit` once the time is spent, which `verify_certificate` reports as
*not certified* (the check did not finish: nothing was proved either way).  Outside a limit it costs
one context-variable read.  A limit never changes what a finished check proves.
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["TimeLimit", "check", "remaining", "time_limit"]

_DEADLINE: ContextVar[tuple[float, float] | None] = ContextVar("riccati_verify_deadline", default=None)


class TimeLimit(BaseException):
    """The check ran past its `time_limit`.  A BaseException, like KeyboardInterrupt: a cancellation,
    not an error of the certificate, so the checkers' `except Exception` handlers (which turn a malformed
    witness into a refusal with its reason) let it pass up to `verify_certificate`."""

    def __init__(self, seconds: float):
        super().__init__(f"the check did not finish within its time limit of {seconds:g} s")
        self.seconds = seconds


@contextmanager
def time_limit(seconds: float | None):
    """Run the block under a limit of `seconds` of wall time (None: no limit; a limit already set
    outside stays in force when it ends sooner).  Raises ValueError unless seconds is positive and finite."""
    if seconds is None:
        yield
        return
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not (0 < seconds < math.inf):
        raise ValueError(f"a time limit must be a positive number of seconds, got {seconds!r}")
    end = time.monotonic() + float(seconds)
    outer = _DEADLINE.get()
    token = _DEADLINE.set((end, float(seconds)) if outer is None or end < outer[0] else outer)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def check() -> None:
    """Raise `TimeLimit` when the innermost active limit has passed; nothing otherwise."""
    limit = _DEADLINE.get()
    if limit is not None and time.monotonic() > limit[0]:
        raise TimeLimit(limit[1])


def remaining() -> float | None:
    """Seconds left under the innermost active limit (at least 0), or None when there is none: for a
    wait that must not outlast the limit (`checker._stage1` waiting for its second process)."""
    limit = _DEADLINE.get()
    return None if limit is None else max(0.0, limit[0] - time.monotonic())

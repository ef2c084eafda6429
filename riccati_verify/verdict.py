"""Verdicts.  Three for claims (certified, refuted, not certified) plus the
explicitly weaker `confirmed numerically`, which is never shown as a proof.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable


class Status(str, Enum):
    CERTIFIED = "certified"
    REFUTED = "refuted"
    NOT_CERTIFIED = "not certified"
    CONFIRMED_NUMERICALLY = "confirmed numerically"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Verdict:
    """One check's outcome with the evidence that supports it."""

    status: Status
    evidence: dict[str, Any] = field(default_factory=dict)
    note: str = ""


@dataclass(frozen=True)
class ProofResult:
    """The outcome of one proofs/ module: a symbolic (or exact) check and a numeric cross-check."""

    name: str
    seed: str
    claim: str
    symbolic: Verdict
    numeric: Verdict
    seconds: float = 0.0

    @property
    def status(self) -> Status:
        """Overall: refuted if either route refutes; certified only if the exact route certifies
        and the numeric route does not disagree; otherwise the weaker of the two."""
        s, n = self.symbolic.status, self.numeric.status
        if Status.REFUTED in (s, n):
            return Status.REFUTED
        if s is Status.CERTIFIED and n in (Status.CERTIFIED, Status.CONFIRMED_NUMERICALLY):
            return Status.CERTIFIED
        if Status.CONFIRMED_NUMERICALLY in (s, n) and Status.NOT_CERTIFIED not in (s,):
            return Status.CONFIRMED_NUMERICALLY
        return Status.NOT_CERTIFIED


def timed(fn: Callable[[], ProofResult]) -> ProofResult:
    t0 = time.perf_counter()
    r = fn()
    return ProofResult(r.name, r.seed, r.claim, r.symbolic, r.numeric, time.perf_counter() - t0)

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
        """Overall verdict.

        - refuted if either route refutes;
        - certified only if the exact route certifies and the numeric
          cross-check agrees (certified or confirmed numerically);
        - confirmed numerically if the evidence is numerical only (the exact
          route could not certify, or is itself numerical);
        - not certified otherwise (e.g. a cross-check that could not run).
        """
        s, n = self.symbolic.status, self.numeric.status
        agree = (Status.CERTIFIED, Status.CONFIRMED_NUMERICALLY)
        if Status.REFUTED in (s, n):
            return Status.REFUTED
        if s is Status.CERTIFIED and n in agree:
            return Status.CERTIFIED
        if s is Status.CONFIRMED_NUMERICALLY or (s is Status.NOT_CERTIFIED and n in agree):
            return Status.CONFIRMED_NUMERICALLY
        return Status.NOT_CERTIFIED


def timed(fn: Callable[[], ProofResult]) -> ProofResult:
    t0 = time.perf_counter()
    r = fn()
    return ProofResult(r.name, r.seed, r.claim, r.symbolic, r.numeric, time.perf_counter() - t0)

"""Verdicts and the one result protocol.

Four verdicts: three for claims (certified, refuted, not certified) plus the
explicitly weaker `confirmed numerically`, which is never shown as a proof.

Every result the library returns (regime, equilibria, blow-up, reach,
min-time bracket, simulation comparison, proof, certificate check) follows
`Result`: a `status` (one `Status`), `to_dict()` (its JSON form) and
`certificate` (the document that supports the status, or None).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Protocol, runtime_checkable

from riccati_verify.core.serial import jsonable

__all__ = ["ProofResult", "Result", "SKIPPED", "Status", "Verdict", "timed"]


class Status(str, Enum):
    """The verdict on a claim, the one `status` every result carries.

    Claims are about the mean-field flow v(x) = Ax + b + V·Attn_B[μ](x) with the
    kernel exp(⟨Bx, y⟩) and the query x (B = KᵀQ for a Transformer with scores
    ⟨Qx, Ky⟩, softmax over all tokens).  A `str` enum: ``str(status)`` and the
    JSON form are the value, e.g. ``"not certified"``.

    Attributes
    ----------
    CERTIFIED
        Proved: exact rational (`Fraction`) arithmetic or outward-rounded ball
        arithmetic, re-checked by the independent checker where a certificate
        exists.
    REFUTED
        Proved false, with the same standard of proof.
    NOT_CERTIFIED
        Neither proved nor refuted: the method gave up, a hypothesis failed or
        the checker refused the certificate.  Says nothing about the claim.
    CONFIRMED_NUMERICALLY
        Floating-point evidence (integration, simulation) agrees with the
        claim.  Weaker than a proof and never shown as one.

    Notes
    -----
    Only CERTIFIED and REFUTED are rigorous; float computations can reach at
    most CONFIRMED_NUMERICALLY.
    """

    CERTIFIED = "certified"
    REFUTED = "refuted"
    NOT_CERTIFIED = "not certified"
    CONFIRMED_NUMERICALLY = "confirmed numerically"

    def __str__(self) -> str:
        return self.value


@runtime_checkable
class Result(Protocol):
    """The protocol every result follows (see the module docstring)."""

    @property
    def status(self) -> Status:
        """The verdict (see `Status`)."""
        ...

    @property
    def certificate(self) -> dict | None:
        """The certificate document supporting `status`, or None when there is none."""
        ...

    def to_dict(self) -> dict:
        """The JSON form (exact numbers as rational strings)."""
        ...


SKIPPED = "skipped: "
"""The note prefix of a route that did not run (a missing extra, no data): `Verdict.skip`."""


@dataclass(frozen=True)
class Verdict:
    """One check's outcome with the evidence that supports it.

    A route that did not run is made with `Verdict.skip(reason)`: status NOT_CERTIFIED,
    note ``"skipped: <reason>"``.  A verdict whose note says it was skipped but whose status
    is anything else is refused (ValueError): a check that did not run is never evidence.
    """

    status: Status
    evidence: dict[str, Any] = field(default_factory=dict)
    note: str = ""

    def __post_init__(self):
        if self.skipped and self.status is not Status.NOT_CERTIFIED:
            raise ValueError(f"a skipped check is not certified, not {self.status}: {self.note}")

    @classmethod
    def skip(cls, reason: str, evidence: dict[str, Any] | None = None) -> "Verdict":
        """The verdict of a route that could not run: NOT_CERTIFIED with the note 'skipped: <reason>'."""
        return cls(Status.NOT_CERTIFIED, {"skipped": reason, **(evidence or {})}, SKIPPED + reason)

    @property
    def skipped(self) -> bool:
        """True when the route did not run (its note starts with 'skipped: ')."""
        return self.note.startswith(SKIPPED) or "skipped" in self.evidence


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

        - refuted only if the exact route refutes: a float or Monte-Carlo
          route is never proof, of the claim or against it;
        - not certified if the numeric route refutes and the exact one does
          not (`reason` quotes the numeric route: a disagreement to look
          into, never a verdict either way);
        - certified only if the exact route certifies and the numeric
          cross-check agrees (certified or confirmed numerically);
        - confirmed numerically if the evidence is numerical only (the exact
          route could not certify, or is itself numerical) and the numeric
          route ran and agrees;
        - not certified otherwise: a cross-check that could not run, and any
          proof with a skipped route (`Verdict.skip`; `reason` says why), since
          an experiment that did not run is no evidence either way.
        """
        if self.symbolic.skipped or self.numeric.skipped:
            return Status.NOT_CERTIFIED
        s, n = self.symbolic.status, self.numeric.status
        agree = (Status.CERTIFIED, Status.CONFIRMED_NUMERICALLY)
        if s is Status.REFUTED:
            return Status.REFUTED
        if n is Status.REFUTED:
            return Status.NOT_CERTIFIED
        if s is Status.CERTIFIED and n in agree:
            return Status.CERTIFIED
        if s in (Status.CONFIRMED_NUMERICALLY, Status.NOT_CERTIFIED) and n in agree:
            return Status.CONFIRMED_NUMERICALLY
        return Status.NOT_CERTIFIED

    @property
    def reason(self) -> str:
        """Why the proof is not certified when a route was skipped, or when the numeric route found
        evidence against the claim that the exact route does not confirm ('' otherwise)."""
        out = [f"{route} route {v.note}" for route, v in (("exact/symbolic", self.symbolic),
                                                          ("numeric", self.numeric)) if v.skipped]
        if not out and self.numeric.status is Status.REFUTED and self.symbolic.status is not Status.REFUTED:
            out.append(f"the numeric route found evidence against the claim (numerical, so no refutation): "
                       f"{self.numeric.note}")
        return "; ".join(out)

    @property
    def certificate(self) -> dict | None:
        """The exact route's certificate, when its evidence carries one."""
        c = self.symbolic.evidence.get("certificate")
        return c if isinstance(c, dict) else None

    def to_dict(self) -> dict:
        """JSON form: name, seed, claim, status, both routes and the time taken."""
        return jsonable({"name": self.name, "seed": self.seed, "claim": self.claim, "status": str(self.status),
                         "reason": self.reason, "symbolic": self.symbolic, "numeric": self.numeric, "seconds": self.seconds})


def timed(fn: Callable[[], ProofResult]) -> ProofResult:
    """Run one proof and record its wall time in `seconds`."""
    t0 = time.perf_counter()
    r = fn()
    return ProofResult(r.name, r.seed, r.claim, r.symbolic, r.numeric, time.perf_counter() - t0)

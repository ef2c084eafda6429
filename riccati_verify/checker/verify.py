"""The independent checker: `verify_certificate(doc) -> CheckResult`.

Each claim kind has a module `check_<kind>.py` in this package defining
`check(claim: dict, problem: io.Problem, witness: dict) -> CheckResult`.
Checkers recompute the verdict from the witness in exact rationals
(fractions / python-flint fmpq) or ball arithmetic (python-flint arb).
"""

from __future__ import annotations

import importlib
from fractions import Fraction
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path

from riccati_verify.core import deadline
from riccati_verify.core import envelope as schema
from riccati_verify.core.errors import InputError
from riccati_verify.core.io import box_from_dict, parse_entry, parse_matrix, parse_vector, problem_from_dict
from riccati_verify.core.model import Gaussian
from riccati_verify.core.result import Status

__all__ = ["CheckResult", "check_schema", "claim_target", "claim_transfer", "fmt_q", "key_sets",
           "known_kinds", "verify_certificate"]


def fmt_q(x, digits: int = 4) -> str:
    """A rational (Fraction, fmpq or int) for a message, in arb so any exponent prints (a float
    conversion overflows at 1e309 and makes 1e-400 a zero to divide by)."""
    import flint

    if isinstance(x, flint.arb):
        return x.mid().str(digits, radius=False)
    if not isinstance(x, (flint.fmpq, flint.fmpz, int)):
        x = flint.fmpq(x.numerator, x.denominator)
    return flint.arb(x).str(digits, radius=False)


@dataclass(frozen=True)
class CheckResult:
    """The checker's verdict on one certificate: `valid` and the reason for it, and `facts`: values the
    check established on the way that a caller may need as data rather than prose (e.g. the segment
    where a trajectory entered its region of attraction); empty for most kinds."""

    valid: bool
    reason: str
    facts: dict = field(default_factory=dict)

    @property
    def status(self) -> Status:
        """CERTIFIED when the certificate is valid, else NOT_CERTIFIED (an invalid
        certificate proves nothing either way)."""
        return Status.CERTIFIED if self.valid else Status.NOT_CERTIFIED

    @property
    def certificate(self) -> None:
        """A check result is not itself a certificate."""
        return None

    def to_dict(self) -> dict:
        """JSON form: status, valid, reason (and facts when there are any)."""
        out = {"status": str(self.status), "valid": self.valid, "reason": self.reason}
        return out | {"facts": dict(self.facts)} if self.facts else out


def claim_target(claim: dict, state0: Gaussian) -> Gaussian:
    """The claim's target N(target_mean, target_cov), parsed as untrusted input; InputError
    (an invalid certificate) when it is not a Gaussian of the initial state's dimension."""
    target = Gaussian(parse_vector(claim["target_mean"], "target_mean")[0],
                      parse_matrix(claim["target_cov"], "target_cov")[0])
    if target.dim != state0.dim:
        raise InputError(f"target has d = {target.dim}, initial state d = {state0.dim}")
    return target


def claim_transfer(claim: dict, problem, bound: str) -> tuple[Gaussian, Gaussian, Fraction, Fraction]:
    """(initial state, target, horizon T, claim[bound]) of a transfer claim (`reachability`,
    `unreachable_in_time`); T and the bound must be positive, else InputError (invalid)."""
    state0 = problem.require_state()
    T, x = parse_entry(claim["time"], "time"), parse_entry(claim[bound], bound)
    if not (T > 0 and x > 0):
        raise InputError(f"time and {bound} must be positive")
    return state0, claim_target(claim, state0), T, x


def known_kinds() -> list[str]:
    """The claim kinds this checker knows: one `check_<kind>.py` module each."""
    return sorted(i.name[len("check_"):] for i in pkgutil.iter_modules([str(Path(__file__).parent)])
                  if i.name.startswith("check_"))


def key_sets(kind: str, mod=None) -> tuple[frozenset, frozenset]:
    """The keys a `kind` certificate may have in its claim (``kind`` included) and its witness.
    A kind whose module does not declare them (attributes CLAIM_KEYS / WITNESS_KEYS) is refused:
    InputError."""
    if mod is None:
        mod = importlib.import_module(f"{__package__}.check_{kind}")
    if hasattr(mod, "CLAIM_KEYS") and hasattr(mod, "WITNESS_KEYS"):
        c, w = frozenset(mod.CLAIM_KEYS), frozenset(mod.WITNESS_KEYS)
    else:
        raise InputError(f"the checker for '{kind}' declares no claim and witness keys")
    return c | {"kind"}, w


def check_schema(kind: str, mod, claim: dict, witness: dict) -> None:
    """The one place the claim and witness keys are enforced (before `check` runs): no unknown
    key, and a `statement` only where the kind derives it, equal to the derived sentence."""
    claim_keys, witness_keys = key_sets(kind, mod)
    schema.check_keys("claim", claim, claim_keys)
    schema.check_keys("witness", witness, witness_keys)
    if "statement" in claim:
        derive = getattr(mod, "statement", None)
        if derive is None:
            raise InputError(f"a '{kind}' claim has no statement")
        expected = derive(claim, witness)
        if claim["statement"] != expected:
            raise InputError(f"claim.statement does not say what the claim's fields mean; it must read: {expected!r}")


def verify_certificate(doc: dict, *, max_seconds: float | None = None) -> CheckResult:
    """Re-check a certificate from its witness, independently of the code that made it.

    Claims are about the mean-field flow v(x) = Ax + b + V·Attn_B[μ](x) on
    Gaussian token laws, with the kernel exp(⟨Bx, y⟩) and the query x: a
    Transformer with scores ⟨Qx, Ky⟩ has B = KᵀQ, and the softmax runs over all
    tokens.  The parameters in ``doc["params"]`` are read in that convention.

    Parameters
    ----------
    doc : dict
        A parsed certificate (untrusted): the envelope of
        `riccati_verify.core.envelope` with ``claim["kind"]`` naming the
        checker module ``check_<kind>`` (see `known_kinds`).
    max_seconds : float, optional
        A wall-clock limit (`core.deadline`) on the check's validated flows, tested at every step attempt
        (and on the wait for `_stage1`'s second process): a check whose flows run past it ends as not
        certified ("did not finish"), never as a verdict on the claim.  Work outside the flows (box
        covers, subdivisions, exact products) has its own budgets and does not read the limit, so a
        check can overrun it by that work and one step.  None (the default): no limit.  Every witness
        field is bounded, but their product can still ask for hours of validated flow.

    Returns
    -------
    CheckResult
        ``valid`` and a one-line ``reason``; ``status`` is
        `Status.CERTIFIED` when valid and `Status.NOT_CERTIFIED` otherwise (an
        invalid certificate proves nothing either way).

    Notes
    -----
    Never raises on bad content: a malformed envelope, parameter file or
    witness is reported as an invalid result.  Every verdict is decided in
    exact rationals (`Fraction`, python-flint fmpq) or outward-rounded arb
    balls; every number is read exactly, and no float computation decides
    validity.  Imports python-flint and the standard
    library only: no numpy, scipy, sympy, mpmath or cvxpy.
    """
    try:
        # a bad max_seconds is the caller's error, not the certificate's: its ValueError propagates
        with deadline.time_limit(max_seconds):
            return _verify(doc)
    except deadline.TimeLimit as e:
        return CheckResult(False, f"not certified: {e} (nothing was decided about the claim)")


def _verify(doc: dict) -> CheckResult:
    try:
        kind = schema.check_envelope(doc)
        if kind not in known_kinds():
            return CheckResult(False, f"unknown claim kind '{kind}' (known: {', '.join(known_kinds())})")
        mod = importlib.import_module(f"{__package__}.check_{kind}")
        claim, witness = doc["claim"], doc["witness"]
        check_schema(kind, mod, claim, witness)
        # a family kind (FAMILY = True) speaks of an interval box of models, not one model
        problem = (box_from_dict if getattr(mod, "FAMILY", False) else problem_from_dict)(doc["params"])
        return _bounded(mod.check(claim, problem, witness))
    except InputError as e:
        return CheckResult(False, f"malformed certificate: {e}")
    except (KeyError, TypeError, ValueError, ArithmeticError, IndexError, AttributeError) as e:
        # ArithmeticError covers OverflowError (a float view of 1e400) and ZeroDivisionError
        return CheckResult(False, f"malformed witness: {type(e).__name__}: {_short(e)}")
    except (RecursionError, MemoryError) as e:
        return CheckResult(False, f"the certificate exceeds the checker's resources: {type(e).__name__}")
    except Exception as e:  # noqa: BLE001 - untrusted data must never crash the checker
        return CheckResult(False, f"checker error on this certificate (not accepted): {type(e).__name__}: {_short(e)}")


MAX_REASON_CHARS = 2000
"""The longest reason `verify_certificate` returns: a reason may quote a certificate's numbers (a
1400-bit norm bound, a 4000-character rational), and 8,000-character lines were seen (review s17)."""


def _bounded(r: CheckResult) -> CheckResult:
    if len(r.reason) <= MAX_REASON_CHARS:
        return r
    return CheckResult(r.valid, r.reason[:MAX_REASON_CHARS - 3] + "...", r.facts)


def _short(e: BaseException) -> str:
    s = " ".join(str(e).split())
    return s if len(s) <= 300 else s[:297] + "..."

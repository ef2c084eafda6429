"""The independent checker: `verify_certificate(doc) -> CheckResult`.

Each claim kind has a module `check_<kind>.py` in this package defining
`check(claim: dict, problem: io.Problem, witness: dict) -> CheckResult`.
Checkers recompute the verdict from the witness in exact rationals
(fractions / python-flint fmpq) or ball arithmetic (python-flint arb).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass

from ..errors import InputError
from ..io import parse_matrix, parse_vector, problem_from_dict
from ..model import Gaussian
from . import schema


@dataclass(frozen=True)
class CheckResult:
    valid: bool
    reason: str


def claim_target(claim: dict, state0: Gaussian) -> Gaussian:
    """The claim's target N(target_mean, target_cov), parsed as untrusted input; InputError
    (an invalid certificate) when it is not a Gaussian of the initial state's dimension."""
    target = Gaussian(parse_vector(claim["target_mean"], "target_mean")[0],
                      parse_matrix(claim["target_cov"], "target_cov")[0])
    if target.dim != state0.dim:
        raise InputError(f"target has d = {target.dim}, initial state d = {state0.dim}")
    return target


def known_kinds() -> list[str]:
    from .. import certificates

    return sorted(i.name[len("check_"):] for i in pkgutil.iter_modules(certificates.__path__)
                  if i.name.startswith("check_"))


def verify_certificate(doc: dict) -> CheckResult:
    """Re-check a certificate; malformed content is reported as invalid, not raised."""
    try:
        kind = schema.check_envelope(doc)
        if kind not in known_kinds():
            return CheckResult(False, f"unknown claim kind '{kind}' (known: {', '.join(known_kinds())})")
        problem = problem_from_dict(doc["params"])
        mod = importlib.import_module(f"{__package__}.check_{kind}")
        return mod.check(doc["claim"], problem, doc["witness"])
    except InputError as e:
        return CheckResult(False, f"malformed certificate: {e}")
    except (KeyError, TypeError, ValueError, ZeroDivisionError, IndexError) as e:
        return CheckResult(False, f"malformed witness: {type(e).__name__}: {e}")

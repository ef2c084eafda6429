"""Checker for `family_sign` certificates: over a whole box of parameters, the symmetric
parts V_s and B_s are definite with the claimed signs for every member (MATH.md §5, §7:
opposite signs are the seeds' convergence regime, equal signs their blow-up regime).

Claim {"kind": "family_sign", "V": S, "B": S}, S in {"positive_definite",
"negative_definite"}; the params are an interval box (`core.box`).  Witness {"route": "rohn"}
(the only route; it names the criterion): the checker decides both statements itself by
Rohn's exact vertex criterion on the interval matrices of
symmetric parts ((lo_ij + lo_ji)/2, (hi_ij + hi_ji)/2), 2^(d-1) exact LDL tests each.  With
V = vI the criterion reads v's interval (one parameter), so it is exact there too.
"""

from __future__ import annotations

from riccati_verify.checker._family import sym_definite
from riccati_verify.checker.verify import CheckResult

__all__ = ["check"]

FAMILY = True
"""The params are an interval box (`core.io.box_from_dict`), not one model."""
CLAIM_KEYS = frozenset({"V", "B"})
"""The claim's keys besides `kind`; `verify_certificate` refuses any other."""
WITNESS_KEYS = frozenset({"route"})
"""The criterion ("rohn"): the verdict is recomputed from the box, no other data is needed."""

_SIGNS = {"positive_definite": 1, "negative_definite": -1}


def check(claim: dict, box, witness: dict) -> CheckResult:
    """Re-check one `family_sign` claim over every member of the box."""
    if witness.get("route", "rohn") != "rohn":
        return CheckResult(False, "unknown family_sign route (known: rohn)")
    if not all(isinstance(claim.get(k), str) and claim[k] in _SIGNS for k in ("V", "B")):
        return CheckResult(False, f"claim V and B must each be one of {sorted(_SIGNS)}")
    for name in ("V", "B"):
        if not sym_definite(getattr(box, name), _SIGNS[claim[name]], strict=True):
            return CheckResult(False, f"{name}_s is not {claim[name].replace('_', ' ')} for every member "
                                      "(Rohn's vertex test fails)")
    rel = "opposite" if claim["V"] != claim["B"] else "the same"
    return CheckResult(True, f"for every member, V_s is {claim['V'].replace('_', ' ')} and B_s "
                             f"{claim['B'].replace('_', ' ')} ({rel} signs; Rohn's exact vertex test)")

"""Blow-up or global existence: `blowup_time`, and for a general V with no blow-up in sight, a
proof that Σ(t) converges, hence exists for all t ≥ 0 (MATH.md §15, "No blow-up for all time").

This sits above both `certify.blowup` and `certify.stability`: the regime classifier asks
`blowup_time` for blow-up evidence, so `blowup_time` cannot ask the classifier back.
"""

from __future__ import annotations

import time
from typing import Callable

from riccati_verify.core.model import Gaussian, Params
from riccati_verify.certify.blowup import BlowupResult, blowup_time
from riccati_verify.certify.stability import classify_regime

__all__ = ["decide_blowup", "converges_no_blowup"]

NO_BLOWUP_KINDS = frozenset({"trajectory_convergence", "cone_collapse"})
"""Regime certificates that prove Σ(t) exists and stays bounded for all t ≥ 0 (a region of
attraction entered by the validated flow, or the cone collapse certificate); a lyapunov_stability
certificate counts when it proves the initial state inside its (forward invariant) region."""


def decide_blowup(params: Params, state: Gaussian, digits: int = 50, horizon=None,
                  progress: Callable[[str], None] | None = None) -> BlowupResult:
    """Decide blow-up: `blowup_time`, and for a general V with no blow-up in sight a proof of
    global existence.

    When `blowup_time` proves nothing, has no horizon and its float search saw Σ shrink or stay
    bounded, `converges_no_blowup` tries the regime route: a certified convergence of Σ(t) is a
    certified "no blow-up for all t ≥ 0".  This is what `riccati-verify blowup` runs.

    Parameters
    ----------
    params, state, digits, horizon, progress
        As for `blowup_time` (the kernel convention there: exp(⟨Bx, y⟩), so B = KᵀQ).

    Returns
    -------
    BlowupResult
        `blowup_time`'s result, or the proved absence of blow-up whose certificate is the
        regime's own (kind `trajectory_convergence`, `cone_collapse` or `lyapunov_stability`),
        which `verify` re-checks.
    """
    t0 = time.perf_counter()
    res = blowup_time(params, state, digits=digits, horizon=horizon, progress=progress)
    if horizon is not None or res.rigorous or not res.no_blowup_seen:
        return res
    if progress is not None:
        progress("no blow-up in sight: trying to certify that Σ(t) converges instead")
    conv = converges_no_blowup(params, state)
    if conv is None:
        res.note = (res.note + "; " if res.note else "") + "convergence was not certified either"
        res.seconds = time.perf_counter() - t0
        return res
    conv.lower_bound = res.lower_bound
    conv.seconds = time.perf_counter() - t0
    return conv


def converges_no_blowup(params: Params, state: Gaussian) -> BlowupResult | None:
    """No blow-up for all t ≥ 0, for any V: `classify_regime` certified that Σ(t) converges (to an
    equilibrium or to 0) by a certificate the checker accepted, and a convergent solution exists
    for all time.  None when the regime is not certified convergent."""
    reg = classify_regime(params, state)
    cert = reg.certificate
    if not (reg.certified and reg.regime in ("equilibrium", "collapse") and cert is not None):
        return None
    claim = cert["claim"]
    if not (claim["kind"] in NO_BLOWUP_KINDS or
            (claim["kind"] == "lyapunov_stability" and claim.get("initial_state_in_region") is True)):
        return None
    limit = "0" if reg.regime == "collapse" else "an equilibrium Σ*"
    res = BlowupResult(False, None, None, 0, f"{reg.method} (certified convergence implies no blow-up)", True,
                       note=f"no blow-up for all t ≥ 0: Σ(t) provably converges to {limit} "
                            f"({claim['kind']} certificate)")
    res.certificate = cert
    return res

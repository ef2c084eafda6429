"""The scalar Bernoulli blow-up time, written once (MATH.md §6).

σ̇ = 2aσ + 2cσ² from σ(0) = σ0 > 0: u = 1/σ solves the linear u̇ = −2au − 2c,
and σ blows up iff c > 0 and a + cσ0 > 0, at

    T* = ln(1 + a/(cσ0)) / (2a)   (a ≠ 0),      T* = 1/(2cσ0)   (a = 0).

Every place that needs T* (the closed-form and diagonal blow-up routes, the
norm-comparison lower bound, the regime classifier, the property tests and the
proof of seed 000) calls `scalar_blowup_time`, in its own number type: floats,
Fractions (the result is then a float unless a = 0), mpmath, arb balls
(rigorous) or sympy symbols (the proof checks this very formula).
"""

from __future__ import annotations

import math
from typing import Any, Callable

__all__ = ["scalar_blowup_time", "scalar_blows_up"]


def _default_log1p(x: Any) -> Any:
    """log(1 + x) in the number type of x: arb's own method, else `math.log1p` (floats, Fractions).

    Other number types (mpmath, sympy) pass their own log1p: core imports no numerics library.
    """
    return x.log1p() if hasattr(x, "log1p") else math.log1p(x)


def scalar_blows_up(a: Any, c: Any, s0: Any = 1) -> bool:
    """Whether σ̇ = 2aσ + 2cσ² from s0 blows up: s0 > 0, c > 0 and a + c·s0 > 0.

    With exact (Fraction) arguments this is an exact decision; with arb balls a
    comparison is True only when proved, so True is always safe to act on.
    """
    return bool(s0 > 0 and c > 0 and a + c * s0 > 0)


def scalar_blowup_time(a: Any, c: Any, s0: Any = 1, *, log1p: Callable[[Any], Any] | None = None) -> Any:
    """T* of σ̇ = 2aσ + 2cσ², σ(0) = s0, assuming it blows up (see `scalar_blows_up`).

    Parameters
    ----------
    a, c, s0 : numbers of one kind (float, Fraction, mpmath, arb or sympy)
        The linear rate, the quadratic coefficient (vβ in the model) and the
        initial value; pass s0 = 1 when c already holds vβσ0.
    log1p : callable, optional
        log(1 + x) for the number type; by default arb's own, else `math.log1p`
        (mpmath callers pass ``mpmath.log1p``, sympy ones ``lambda x: sympy.log(1 + x)``).

    Returns
    -------
    The blow-up time in the arithmetic of the arguments: ln(1 + a/(c s0))/(2a),
    or 1/(2 c s0) when a == 0 (a sympy symbol is never == 0, so it gets the
    general branch).
    """
    k = c * s0
    if a == 0:
        return 1 / (2 * k)
    return (log1p or _default_log1p)(a / k) / (2 * a)

"""Enclose a closed-form sympy constant in an arb ball (shared by the proofs' exact routes).

An exact route that compares a float implementation with a closed form must not evaluate the
closed form with sympy's `evalf` (adaptive, but not outward-rounded).  `enclose` walks the
expression tree and evaluates it in flint's ball arithmetic, so the result is a rigorous
enclosure; a node it does not know raises ValueError, so an unsupported closed form is reported,
never approximated.  Only expressions the proofs build themselves are passed here (no file text).
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

__all__ = ["enclose", "exact_value", "overlaps"]


def enclose(expr: sp.Expr, prec: int = 256):
    """The ball of a constant sympy expression (rationals, +, ×, powers, exp, log) at `prec` bits."""
    from flint import arb, ctx

    old = ctx.prec
    ctx.prec = prec
    try:
        return _ball(sp.sympify(expr), arb)
    finally:
        ctx.prec = old


def _ball(e, arb):
    if e.free_symbols:
        raise ValueError(f"not a constant: free symbols {sorted(map(str, e.free_symbols))}")
    if e.is_Rational:
        return arb(int(e.p)) / int(e.q)
    if e is sp.E:
        return arb(1).exp()
    if e is sp.pi:
        return arb.pi()
    if isinstance(e, sp.Add):
        out = arb(0)
        for a in e.args:
            out += _ball(a, arb)
        return out
    if isinstance(e, sp.Mul):
        out = arb(1)
        for a in e.args:
            out *= _ball(a, arb)
        return out
    if isinstance(e, sp.Pow):
        base, ex = _ball(e.base, arb), e.exp
        if ex.is_Integer:
            n = int(ex)
            return base ** n if n >= 0 else 1 / base ** (-n)
        if ex.is_Rational:
            # a fractional power is real only for a positive base: arb returns NaN balls otherwise,
            # which no comparison accepts
            if not base > 0:
                raise ValueError(f"fractional power of a base not proved positive: {e}")
            return (base.log() * int(ex.p) / int(ex.q)).exp()
        return (base.log() * _ball(ex, arb)).exp()
    if isinstance(e, sp.exp):
        return _ball(e.args[0], arb).exp()
    if isinstance(e, sp.log):
        x = _ball(e.args[0], arb)
        if not x > 0:
            raise ValueError(f"log of an argument not proved positive: {e}")
        return x.log()
    raise ValueError(f"cannot enclose {type(e).__name__}: {e}")


def exact_value(x) -> Fraction:
    """A binary float (Python float or mpmath mpf) as the exact rational it stores."""
    if hasattr(x, "_mpf_"):
        import mpmath

        if not mpmath.isfinite(x):
            raise ValueError(f"not a finite number: {x}")
        sign, man, ex, _ = x._mpf_          # (man_exp drops the sign)
        return (-1) ** sign * Fraction(int(man)) * Fraction(2) ** int(ex)
    return Fraction(x)


def overlaps(ball, value, tol: Fraction | int = 0, prec: int = 256) -> bool:
    """True when the number `value` (Fraction, float or mpf, taken exactly) lies within `tol` of
    some point of `ball`; False is then a proof that |value − x| > tol for the true x."""
    from flint import arb, ctx

    v, t = exact_value(value), Fraction(tol)
    old = ctx.prec
    ctx.prec = prec
    try:
        d = ball - arb(v.numerator) / v.denominator
        # `abs(d) > tol` is decided in balls: True only when every point of the ball exceeds tol
        return not bool(abs(d) > arb(t.numerator) / t.denominator)
    finally:
        ctx.prec = old

"""The activation class of seed 004's coercivity condition, checked for six activations.

The seed states: every activation φ with a globally Lipschitz derivative and a positive lower
bound on the second derivative satisfies the coercivity requirement, "e.g. leaky ReLU with slope
> 0 and smooth sigmoids".  Read literally the condition is

    (C)  φ ∈ C¹, φ' globally Lipschitz (sup |φ''| < ∞), and φ'' ≥ c > 0 on ℝ (a.e.),

and (C) forces φ(x) ≥ φ(0) + φ'(0)x + c x²/2, quadratic growth.  Theorem (as checked here):
none of ReLU, leaky ReLU (0 < a < 1), GELU, softplus, tanh, sigmoid satisfies (C).  Precisely:

| φ           | φ' Lipschitz (constant)  | inf φ''            | convex | φ'' > 0 pointwise | inf φ' |
|-------------|--------------------------|--------------------|--------|-------------------|--------|
| ReLU        | no (φ' jumps 0 → 1)      | 0 a.e. (δ at 0)    | yes    | no                | 0      |
| leaky ReLU  | no (φ' jumps a → 1)      | 0 a.e.             | yes    | no                | a > 0  |
| GELU xΦ(x)  | yes, √(2/π)              | −2φ_N(2) < 0       | no     | no (|x| > √2)     | < 0    |
| softplus    | yes, 1/4                 | 0, not attained    | yes    | yes               | 0      |
| tanh        | yes, 4/(3√3)             | −4/(3√3) < 0       | no     | no (x > 0)        | 0      |
| sigmoid     | yes, √3/18               | −√3/18 < 0         | no     | no (x > 0)        | 0      |

So the seed's examples do not satisfy its own condition: leaky ReLU has no second derivative
bounded below by a positive constant (φ'' = 0 off the kink) and its derivative is not
Lipschitz; sigmoids have φ'' of both signs.  The senses in which something holds: softplus has
a Lipschitz derivative and φ'' > 0 everywhere, with a positive lower bound σ(R)(1 − σ(R)) only
on compacts [−R, R]; leaky ReLU is the only one with a positive lower bound on the *first*
derivative (φ' ≥ a), which is presumably what "slope > 0" refers to.  No activation of at most
linear growth can satisfy (C) (all six grow at most linearly: φ(x)/x² → 0).

Exact route (sympy): φ', φ'' in closed form; the Lipschitz constants as maxima of φ'' written as
a polynomial in u = tanh x or u = σ(x) on the open interval, or, for GELU, from the roots of the
polynomial factor of φ'''; a negative value of φ'' at an exact point for GELU (x = 2), tanh and
sigmoid (x = 1); softplus's φ'' = e^x/(1 + e^x)² > 0 and → 0 at −∞; the jump of φ' for the
piecewise-linear ones; φ(x)/x² → 0 at ±∞ for all six.

Numeric route (mpmath, independent of sympy): φ'' by numerical differentiation of mpmath
implementations on a grid of [−12, 12] (and the one-sided difference quotients of φ at 0 for
the kinks) reproduces the same table: the sign pattern and sup |φ''| within the grid's error bound ½(step/2)²·sup|φ⁗| (`FOURTH_BOUND`).
"""

from __future__ import annotations

import sympy as sp

from riccati_verify.core.result import ProofResult, Status, Verdict, timed

__all__ = ["ACTIVATIONS", "CLAIM", "HYPOTHESES", "NAME", "SEED", "check", "numeric_check", "symbolic_check"]

NAME = "activation_class"
SEED = "004"
CLAIM = ("none of ReLU, leaky ReLU, GELU, softplus, tanh, sigmoid has a globally Lipschitz derivative and φ'' ≥ c > 0; "
         "softplus has φ'' > 0 pointwise only, leaky ReLU φ' ≥ a > 0 only (the seed's examples fail its condition)")
HYPOTHESES = ["leaky ReLU slope a ∈ (0, 1)"]
ACTIVATIONS = ("relu", "leaky_relu", "gelu", "softplus", "tanh", "sigmoid")

x = sp.Symbol("x", real=True)
a = sp.Symbol("a", positive=True)
u = sp.Symbol("u", real=True)

# the expected table, written from the mathematics in the docstring (not read off the code)
EXPECTED = {
    "relu": dict(lipschitz_derivative=False, lipschitz_constant=None, inf_second="0", convex=True,
                 second_positive=False, inf_first="0"),
    "leaky_relu": dict(lipschitz_derivative=False, lipschitz_constant=None, inf_second="0", convex=True,
                       second_positive=False, inf_first="a"),
    "gelu": dict(lipschitz_derivative=True, lipschitz_constant=sp.sqrt(2 / sp.pi), inf_second="negative",
                 convex=False, second_positive=False, inf_first="negative"),
    "softplus": dict(lipschitz_derivative=True, lipschitz_constant=sp.Rational(1, 4), inf_second="0",
                     convex=True, second_positive=True, inf_first="0"),
    "tanh": dict(lipschitz_derivative=True, lipschitz_constant=4 / (3 * sp.sqrt(3)), inf_second="negative",
                 convex=False, second_positive=False, inf_first="0"),
    "sigmoid": dict(lipschitz_derivative=True, lipschitz_constant=sp.sqrt(3) / 18, inf_second="negative",
                    convex=False, second_positive=False, inf_first="0"),
}


def _max_on_open_interval(p: sp.Expr, lo, hi) -> sp.Expr:
    """sup of |p(u)| over (lo, hi) for a polynomial p: the critical points inside and the end limits."""
    cands = [abs(p.subs(u, r)) for r in sp.solve(sp.diff(p, u), u) if r.is_real and lo < r < hi]
    cands += [abs(p.subs(u, lo)), abs(p.subs(u, hi))]
    # exact: the candidates are algebraic numbers (no nsimplify, which guesses a closed form from a
    # 30-digit float and read (1 + e^-50)^2/4 as 1/4; review s17)
    return sp.simplify(sp.Max(*cands))


def _smooth(name: str) -> dict:
    phi = {"gelu": x * (1 + sp.erf(x / sp.sqrt(2))) / 2, "softplus": sp.log(1 + sp.exp(x)),
           "tanh": sp.tanh(x), "sigmoid": 1 / (1 + sp.exp(-x))}[name]
    d1, d2 = sp.diff(phi, x), sp.diff(phi, x, 2)
    out = {}
    if name in ("tanh", "sigmoid", "softplus"):
        # φ'' as a polynomial in u = tanh x ∈ (−1, 1) or u = σ(x) ∈ (0, 1), checked to be equal
        if name == "tanh":
            p, sub, lo, hi = -2 * u * (1 - u ** 2), sp.tanh(x), -1, 1
        elif name == "sigmoid":
            p, sub, lo, hi = u * (1 - u) * (1 - 2 * u), 1 / (1 + sp.exp(-x)), 0, 1
        else:
            p, sub, lo, hi = u * (1 - u), 1 / (1 + sp.exp(-x)), 0, 1
        same = sp.simplify((d2 - p.subs(u, sub)).rewrite(sp.exp)) == 0
        out["second_derivative_as_polynomial"] = bool(same)
        out["lipschitz_constant"] = _max_on_open_interval(p, lo, hi) if same else None
        # on the open interval the range of p decides the sign of φ''
        crit = [r for r in sp.solve(sp.diff(p, u), u) if r.is_real and lo < r < hi]
        vals = [p.subs(u, r) for r in crit] + [p.subs(u, lo), p.subs(u, hi)]
        inf = sp.Min(*vals)
        out["inf_second"] = "negative" if inf.is_negative else ("0" if inf == 0 else str(inf))
        # φ'' > 0 on ℝ iff p > 0 on the open interval: no root inside and positive at the midpoint
        inside = [r for r in sp.Poly(p, u).real_roots() if lo < r < hi]
        out["second_positive"] = bool(same and not inside and p.subs(u, sp.Rational(lo + hi, 2)) > 0)
        # attained iff the infimum is a critical value inside the open interval (not an end limit)
        out["inf_second_attained"] = any(sp.simplify(p.subs(u, r) - inf) == 0 for r in crit)
        if name == "softplus":
            out["second_limit_minus_inf"] = str(sp.limit(d2, x, -sp.oo))
    else:   # GELU: φ'' = (2 − x²) φ_N(x), φ''' = −x(4 − x²) φ_N(x)
        phiN = sp.exp(-x ** 2 / 2) / sp.sqrt(2 * sp.pi)
        ok2 = sp.simplify(d2 - (2 - x ** 2) * phiN) == 0
        ok3 = sp.simplify(sp.diff(d2, x) + x * (4 - x ** 2) * phiN) == 0
        crit = [r for r in sp.solve(x * (4 - x ** 2), x)]
        vals = [sp.simplify(abs(d2.subs(x, r))) for r in crit] + [sp.limit(abs(d2), x, sp.oo), sp.limit(abs(d2), x, -sp.oo)]
        out["second_derivative_closed_form"] = bool(ok2 and ok3)
        out["lipschitz_constant"] = sp.simplify(sp.Max(*vals)) if ok2 and ok3 else None
        out["inf_second"] = "negative" if sp.simplify(d2.subs(x, 2)).is_negative else "?"
        # φ''(2) < 0 (exact sign) rules out φ'' > 0; undecided (None, no match) otherwise
        out["second_positive"] = False if sp.simplify(d2.subs(x, 2)).is_negative else None
    neg_pt = {"gelu": 2, "tanh": 1, "sigmoid": 1}.get(name)
    out["negative_second_at"] = None if neg_pt is None else (neg_pt, bool(sp.simplify(d2.subs(x, neg_pt)).is_negative))
    out["lipschitz_derivative"] = out["lipschitz_constant"] is not None and out["lipschitz_constant"].is_finite
    out["convex"] = out["inf_second"] == "0"
    if name == "gelu":
        # φ'(−√2) = (1 − erf 1)/2 − e^{-1}/√π (an exact identity), whose sign a ball decides (it was a
        # 30-digit float comparison)
        import flint

        closed = (1 - sp.erf(1)) / 2 - sp.exp(-1) / sp.sqrt(sp.pi)
        with flint.ctx.workprec(128):
            ball = (1 - flint.arb(1).erf()) / 2 - flint.arb(-1).exp() / flint.arb.pi().sqrt()
        negative = sp.simplify(d1.subs(x, -sp.sqrt(2)) - closed) == 0 and ball < 0
        out["inf_first"] = "negative" if negative else "?"
    else:
        # φ' as a polynomial q in the same u: φ' > 0 (q has no root inside, q > 0 at the midpoint),
        # and inf φ' = 0 because q vanishes at an end of the interval
        q = {"tanh": 1 - u ** 2, "sigmoid": u * (1 - u), "softplus": u}[name]
        same1 = sp.simplify((d1 - q.subs(u, sub)).rewrite(sp.exp)) == 0
        inside1 = [r for r in sp.Poly(q, u).real_roots() if lo < r < hi]
        positive = same1 and not inside1 and q.subs(u, sp.Rational(lo + hi, 2)) > 0
        out["inf_first"] = "0" if positive and 0 in (q.subs(u, lo), q.subs(u, hi)) else "?"
    out["quadratic_growth"] = sp.limit(phi / x ** 2, x, sp.oo) != 0 or sp.limit(phi / x ** 2, x, -sp.oo) != 0
    return out


def _inf_first_piecewise(slope) -> str:
    """inf φ' = min(slope, 1) for φ = slope·x (x < 0), x (x ≥ 0): "0" for ReLU; "a" for leaky ReLU with
    0 < a < 1, decided with a = 1/(1 + e), e > 0 (every a in (0, 1)), where 1 − a = e/(1 + e) > 0."""
    if slope == 0:
        return "0"
    e = sp.Symbol("e", positive=True)
    return "a" if slope == a and (1 - slope.subs(a, 1 / (1 + e))).is_positive else "?"


def _piecewise(name: str) -> dict:
    slope = 0 if name == "relu" else a
    phi = sp.Piecewise((slope * x, x < 0), (x, True))
    left, right = sp.diff(slope * x, x), sp.diff(x, x)
    out = {"derivative_jump_at_0": str(right - left),
           "lipschitz_derivative": bool(sp.simplify(right - left) != 0) is False,
           "lipschitz_constant": None,
           "inf_second": "0" if sp.diff(slope * x, x, 2) == 0 and sp.diff(x, x, 2) == 0 else "?",
           # convex: the derivative is non-decreasing across the kink (a ≤ 1)
           "convex": bool(sp.simplify(right - left).subs(a, sp.Rational(1, 2)) >= 0),
           "second_positive": bool(sp.diff(slope * x, x, 2) > 0 and sp.diff(x, x, 2) > 0),
           "inf_first": _inf_first_piecewise(slope),
           "quadratic_growth": sp.limit(phi.subs(x, sp.Symbol("y", positive=True)) / sp.Symbol("y", positive=True) ** 2,
                                        sp.Symbol("y", positive=True), sp.oo) != 0}
    return out


def classify(name: str) -> dict:
    """The exact classification of one activation (the table of the module docstring)."""
    return _piecewise(name) if name in ("relu", "leaky_relu") else _smooth(name)


def _agrees(got: dict, exp: dict) -> bool:
    for k, v in exp.items():
        g = got.get(k)
        if k == "lipschitz_constant":
            if (v is None) != (g is None) or (v is not None and sp.simplify(g - v) != 0):
                return False
        elif g != v:
            return False
    return not got.get("quadratic_growth", True)


def symbolic_check() -> Verdict:
    """Exact route: each activation's classification equals the table; none satisfies (C).  CERTIFIED then."""
    ev, ok = {}, True
    for n in ACTIVATIONS:
        c = classify(n)
        good = _agrees(c, EXPECTED[n])
        satisfies_C = c["lipschitz_derivative"] and c["inf_second"] not in ("0", "negative", "?")
        ev[n] = {k: (str(v) if isinstance(v, sp.Basic) else v) for k, v in c.items()} | {
            "matches_table": good, "satisfies_seed_condition": satisfies_C}
        ok &= good and not satisfies_C
    ev["seed_examples_satisfy_condition"] = {"leaky_relu": ev["leaky_relu"]["satisfies_seed_condition"],
                                             "sigmoid": ev["sigmoid"]["satisfies_seed_condition"]}
    return Verdict(Status.CERTIFIED if ok else Status.REFUTED, ev,
                   "exact: closed-form φ'', its range and the Lipschitz constant of φ' for each activation")


# ----------------------------------------------------------------------------- numeric route

def _mp_functions():
    import mpmath as mp

    return {"relu": lambda t: max(t, 0), "leaky_relu": lambda t: t if t >= 0 else t / 10,
            "gelu": lambda t: t * (1 + mp.erf(t / mp.sqrt(2))) / 2, "softplus": lambda t: mp.log(1 + mp.exp(t)),
            "tanh": mp.tanh, "sigmoid": lambda t: 1 / (1 + mp.exp(-t))}


FOURTH_BOUND = {"gelu": 2, "softplus": 1, "tanh": 5, "sigmoid": 1}
"""Upper bounds on sup|φ⁗| over ℝ for the numeric route's tolerance: tanh 4.09, GELU 1.60, sigmoid and
softplus 0.13 on an mpmath grid of step 0.02 (review s17), each rounded up with room to spare."""


def numeric_check(grid: int = 481) -> Verdict:
    """mpmath: φ'' by numerical differentiation on [−12, 12] (kinks: one-sided quotients at 0).

    CONFIRMED_NUMERICALLY when the sign pattern and the constants of the table are reproduced."""
    import mpmath as mp

    ev, ok = {}, True
    with mp.workdps(30):
        fns = _mp_functions()
        pts = [mp.mpf(-12) + 24 * mp.mpf(k) / (grid - 1) for k in range(grid)]
        for n in ACTIVATIONS:
            f = fns[n]
            if n in ("relu", "leaky_relu"):
                h = mp.mpf(10) ** -10
                jump = (f(h) - f(0)) / h - (f(0) - f(-h)) / h
                off = [mp.diff(f, t, 2) for t in (mp.mpf(-1), mp.mpf(1))]
                e = {"derivative_jump": float(jump), "second_off_kink": [float(v) for v in off]}
                good = jump > mp.mpf("0.5") and all(abs(v) < 1e-20 for v in off)
            else:
                d2 = [mp.diff(f, t, 2) for t in pts]
                lip = max(abs(v) for v in d2)
                lo = min(d2)
                expected = sp.N(EXPECTED[n]["lipschitz_constant"], 20)
                # a grid point lies within half a step of the maximiser of |φ''|, where φ‴ = 0: the grid
                # misses sup|φ''| by at most ½·(step/2)²·sup|φ⁗| (FOURTH_BOUND); mp.diff at 30 digits adds
                # far less than 1e-12 (the tolerance was 1e-3, below this bound for tanh: 1.28e-3)
                half = mp.mpf(12) / (grid - 1)
                tol = half ** 2 / 2 * FOURTH_BOUND[n] + mp.mpf(10) ** -12
                e = {"sup_abs_second": float(lip), "expected": float(expected), "min_second": float(lo),
                     "tolerance": float(tol)}
                good = abs(lip - mp.mpf(str(expected))) <= tol
                if EXPECTED[n]["inf_second"] == "negative":
                    good &= lo < 0
                else:
                    good &= lo > 0 and float(d2[0]) < 1e-4       # softplus: positive, → 0 at −∞
            ev[n] = e
            ok &= bool(good)
    return Verdict(Status.CONFIRMED_NUMERICALLY if ok else Status.REFUTED, ev,
                   "mpmath numerical second derivatives reproduce the signs and Lipschitz constants")


def check() -> ProofResult:
    """Both routes, timed."""
    return timed(lambda: ProofResult(NAME, SEED, CLAIM, symbolic_check(), numeric_check()))

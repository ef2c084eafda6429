"""The scalar case d = 1 (seed 000, MATH.md §6).

Theorem.  σ̇ = 2aσ + 2cσ² with c = vβ and σ(0) = σ0 > 0 is a Bernoulli equation; u = 1/σ solves
the linear u̇ = −2au − 2c, so

    σ(t) = 1 / ((1/σ0 + c/a) e^{−2at} − c/a)          (a ≠ 0),   σ(t) = σ0 / (1 − 2cσ0 t)   (a = 0).

* Blow-up happens iff c > 0 and a + cσ0 > 0, at T* = (1/2a) ln(1 + a/(cσ0)) (a ≠ 0),
  T* = 1/(2cσ0) (a = 0).
* The positive equilibrium σ* = −a/c exists iff a/c < 0; it is asymptotically stable iff
  a > 0 and c < 0 (the linearisation is 2a + 4cσ* = −2a).

Symbolic route: sympy checks that the formula solves the ODE, that u(T*) = 0, the a → 0 limit,
and the linearisation, and both "iff" conditions on every sign case of (a, c, a + cσ0)
(`_sign_cases`: positive symbols, so sympy's assumptions decide each sign exactly).  Numeric route (independent): DOP853 integration of the moment ODE on
seeded random rational (a, c, σ0), comparing the blow-up time, or σ(5), with the formulas.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from riccati_verify.core.bernoulli import scalar_blows_up, scalar_blowup_time
from riccati_verify.core.result import ProofResult, Status, Verdict, timed


NAME = "bernoulli_scalar"
SEED = "000"
CLAIM = ("d = 1: blow-up iff vβ > 0 and a + vβσ0 > 0, at T* = ln(1 + a/(vβσ0))/(2a); "
         "σ* = −a/(vβ) asymptotically stable iff a > 0 > vβ")
HYPOTHESES = ["d = 1", "σ0 > 0", "time-invariant parameters"]
RNG_SEED = 5


def _sign_cases():
    """Every sign pattern of (a, c, a + cσ0), each as a substitution in positive symbols p, q, w and σ0
    (a = 0 and c = 0 included); together they cover all real a, c and σ0 > 0."""
    p, q, w, s0 = sp.symbols("p q w sigma0", positive=True)
    return s0, [
        (p, q), (p, 0),               # a > 0, c ≥ 0 (then a + cσ0 > 0)
        (p, -p / (s0 * (1 + q))),     # a > 0 > c with a + cσ0 = pq/(1 + q) > 0
        (p, -p / s0),                 # a + cσ0 = 0
        (p, -(p + w) / s0),           # a > 0 > c with a + cσ0 = −w < 0
        (-p, (p + w) / s0),           # a < 0 < c with a + cσ0 = w > 0
        (-p, p / s0),                 # a + cσ0 = 0
        (-p, p / (s0 * (1 + q))),     # a < 0 < c with a + cσ0 = −pq/(1 + q) < 0
        (-p, 0), (-p, -q),            # a < 0, c ≤ 0 (then a + cσ0 < 0)
        (0, q), (0, 0), (0, -q),
    ]


def _blowup_truth(a, c, s0) -> bool | None:
    """Whether u = 1/σ (u(0) = 1/σ0 > 0) reaches 0 at some t > 0, decided by sympy's sign assumptions
    (None when they do not decide).  a ≠ 0: u(t) = (1/σ0 + c/a)e^{−2at} − c/a vanishes where
    e^{−2at} = ρ := cσ0/(a + cσ0), which needs ρ > 0 and ρ < 1 (a > 0) or ρ > 1 (a < 0); when
    a + cσ0 = 0, u ≡ −c/a is constant.  a = 0: u(t) = 1/σ0 − 2ct vanishes at t > 0 iff c > 0."""
    if a == 0:
        return sp.sympify(c).is_positive
    den = sp.simplify(a + c * s0)
    if den == 0:
        return False if sp.sympify(-c / a).is_positive else None
    rho = sp.simplify(c * s0 / den)
    if rho == 0 or rho.is_negative:
        return False
    if not rho.is_positive:
        return None
    below_one = sp.simplify(1 - rho).is_positive
    above_one = sp.simplify(rho - 1).is_positive
    if sp.sympify(a).is_positive:
        return True if below_one else (False if (above_one or sp.simplify(rho - 1) == 0) else None)
    return True if above_one else (False if (below_one or sp.simplify(rho - 1) == 0) else None)


def blowup_condition_holds(condition=lambda a, c, s0: (c > 0) & (a + c * s0 > 0)) -> bool:
    """The CLAIM's "blow-up iff c > 0 and a + cσ0 > 0", exactly: on every sign case of `_sign_cases`,
    the condition (a sympy boolean, decided by the assumptions) equals `_blowup_truth`."""
    s0, cases = _sign_cases()
    for a, c in cases:
        truth = _blowup_truth(sp.sympify(a), sp.sympify(c), s0)
        claimed = sp.simplify(condition(sp.sympify(a), sp.sympify(c), s0))
        if truth is None or claimed not in (sp.true, sp.false) or bool(claimed) != truth:
            return False
    return True


def stability_condition_holds() -> bool:
    """The CLAIM's "σ* = −a/c asymptotically stable iff a > 0 > c", exactly on every sign case: σ* is a
    (positive) variance iff −a/c > 0, and the linearisation 2a + 4cσ* = −2a is negative iff a > 0."""
    s0, cases = _sign_cases()
    for a, c in cases:
        a, c = sp.sympify(a), sp.sympify(c)
        if c == 0:
            continue                  # no σ* = −a/c
        star = sp.simplify(-a / c)
        lin = sp.simplify(2 * a + 4 * c * star)
        truth = bool(star.is_positive) and bool(lin.is_negative)
        if star.is_positive is None or lin.is_negative is None:
            return False
        claimed = sp.simplify(sp.sympify((a > 0) & (c < 0)))
        if claimed not in (sp.true, sp.false) or bool(claimed) != truth:
            return False
    return True


def symbolic_check() -> Verdict:
    """sympy checks the closed form, T* (the library's own `scalar_blowup_time`), the a → 0 limits and the linearisation."""
    a, c, s0, t = sp.symbols("a c sigma0 t", real=True)
    sigma = 1 / ((1 / s0 + c / a) * sp.exp(-2 * a * t) - c / a)
    ev = {}
    ev["solves_ode"] = sp.simplify(sp.diff(sigma, t) - (2 * a * sigma + 2 * c * sigma ** 2)) == 0
    ev["initial_value"] = sp.simplify(sigma.subs(t, 0) - s0) == 0
    T = scalar_blowup_time(a, c, s0, log1p=lambda x: sp.log(1 + x))   # the library's one formula
    ev["u_vanishes_at_T*"] = sp.simplify((1 / sigma).subs(t, T)) == 0
    ev["a_to_0_limit"] = sp.simplify(sp.limit(T, a, 0) - 1 / (2 * c * s0)) == 0
    ev["a_to_0_solution"] = sp.simplify(sp.limit(sigma, a, 0) - s0 / (1 - 2 * c * s0 * t)) == 0
    star = -a / c
    ev["equilibrium"] = sp.simplify(2 * a * star + 2 * c * star ** 2) == 0
    ev["linearisation_-2a"] = sp.simplify(2 * a + 4 * c * star + 2 * a) == 0
    # the CLAIM's "iff" conditions, on every sign case (they had rested on the numeric route alone)
    ev["blowup_iff_c>0_and_a+c*sigma0>0"] = blowup_condition_holds()
    ev["stable_iff_a>0>c"] = stability_condition_holds()
    iff = ("blowup_iff_c>0_and_a+c*sigma0>0", "stable_iff_a>0>c")
    identities = all(v for k, v in ev.items() if k not in iff)
    # a failed identity refutes; an "iff" case the assumptions leave undecided proves nothing either way
    status = (Status.CERTIFIED if identities and all(ev[k] for k in iff) else
              Status.REFUTED if not identities else Status.NOT_CERTIFIED)
    return Verdict(status, ev, "sympy: closed form, T*, limits, linearisation, and both iff conditions on every sign case")


def numeric_check(seed: int = RNG_SEED, n: int = 12) -> Verdict:
    """An independent cross-check: integration of the moment ODE against the closed forms on seeded random cases."""
    from fractions import Fraction

    from riccati_verify.numeric.flow import integrate_moments
    from riccati_verify.core.model import Gaussian, Params

    rng = np.random.default_rng(seed)
    cases, ok = [], True
    for _ in range(n):
        a, c = (Fraction(int(rng.integers(-6, 7)), 4) for _ in range(2))
        s0 = Fraction(int(rng.integers(1, 9)), 4)
        p = Params.from_arrays([[a]], [[c]], 1)
        blow = scalar_blows_up(a, c, s0)
        if blow:
            T = scalar_blowup_time(a, c, s0)
            res = integrate_moments(p, Gaussian.from_arrays([0], [[s0]]), 2 * float(T), blowup_norm=1e8)
            # at σ = 1e8·σ0 the remaining time to the pole is ≈ 1/(2cσ) ≤ 1e-8/(2cσ0): relative 1e-6 suffices
            good = res.blowup and abs(res.time - T) <= 1e-6 * T + 1e-7
            cases.append({"a": str(a), "vb": str(c), "s0": str(s0), "T*": T, "t_stop": res.time, "ok": good})
        else:   # no blow-up: compare σ(5) with the closed form
            res = integrate_moments(p, Gaussian.from_arrays([0], [[s0]]), 5.0)
            af, cf, sf = float(a), float(c), float(s0)
            if a == 0:
                val = sf / (1 - 2 * cf * sf * 5)
                terms = 1 / sf + 2 * abs(cf) * 5
            else:
                val = 1 / ((1 / sf + cf / af) * math.exp(-10 * af) - cf / af)
                terms = abs(1 / sf + cf / af) * math.exp(-10 * af) + abs(cf / af)
            # Tolerance: (i) the integrator's error, estimated a posteriori by the same solve at
            # rtol 1e-10 (its distance from the default rtol-1e-12 run is the looser run's error,
            # ~100× this one's); (ii) rounding in the closed form: 1/σ(5) is a difference of terms
            # of total size `terms`, each with a few eps of relative error (exp(−10a) adds 10|a|·eps),
            # so σ(5) carries relative error 4(1 + 10|a|)·eps·terms·|σ(5)|.
            loose = integrate_moments(p, Gaussian.from_arrays([0], [[s0]]), 5.0, rtol=1e-10, atol=1e-12)
            e_int = abs(float(loose.cov[0, 0]) - float(res.cov[0, 0]))
            e_cf = 4 * (1 + 10 * abs(af)) * np.finfo(float).eps * terms * abs(val)
            tol = 10 * (e_int + e_cf) + 1e-300
            good = not res.blowup and abs(float(res.cov[0, 0]) - val) <= tol
            cases.append({"a": str(a), "vb": str(c), "s0": str(s0), "sigma(5)": float(res.cov[0, 0]),
                          "closed_form": val, "tolerance": float(tol), "ok": good})
        ok &= good
    return Verdict(Status.CONFIRMED_NUMERICALLY if ok else Status.REFUTED, {"seed": seed, "cases": cases},
                   "DOP853 integration vs the closed forms")


def check() -> ProofResult:
    """Run both routes and combine them into one `ProofResult` (timed)."""
    return timed(lambda: ProofResult(NAME, SEED, CLAIM, symbolic_check(), numeric_check()))


def hypotheses(problem):
    """The hypotheses above, decided exactly on a parameter file (`riccati-verify hypotheses`)."""
    from riccati_verify.core import exact
    from riccati_verify.certify.hypotheses import HypothesisCheck

    params, state = problem.require_params(), problem.require_state()
    d = params.dim
    out = [HypothesisCheck(HYPOTHESES[0], d == 1, {"d": d})]
    if d == 1:
        s0 = state.cov[0][0]
        out.append(HypothesisCheck(HYPOTHESES[1], s0 > 0, {"sigma0": exact.frac_to_str(s0)}))
    else:
        out.append(HypothesisCheck(HYPOTHESES[1], None, {"reason": "only defined for d = 1"}))
    # A parameter file holds one constant θ: the time-invariance hypothesis holds by construction.
    out.append(HypothesisCheck(HYPOTHESES[2], True, {"parameters": "constant (parameter file)"}))
    return out


__all__ = ["CLAIM", "HYPOTHESES", "NAME", "SEED", "check", "hypotheses", "numeric_check", "symbolic_check"]

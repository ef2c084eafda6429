"""Gaussian mixtures are not invariant (MATH.md §12): a d = 1 symbolic certificate.

Model (d = 1): v(x) = a x + b + v·T(βx), T(c) the mean of the token law tilted
by e^{c y}.  For a mixture Σ_k w_k N(m_k, s_k), T(c) is the weighted average of
the components' tilted means, each m_k + s_k c by `moments.tilting_by_mgf`,
with weights w_k M_k(c), M_k(c) = e^{c m_k + c² s_k / 2}.

Pushing a component X ~ N(m, s) along the flow, X_t = X + t v(X) + O(t²), so

    d/dt κ3(X_t) |_{t=0} = 3 E[(X − m)² (v(X) − E v(X))] = 3 s² E[v''(X)]

(the first by expanding E[(U + tD)³], the second by the Gaussian identity
(x−m)² φ = s² φ'' + s φ and two integrations by parts — both checked here).
An affine v gives 0: a single Gaussian stays Gaussian.

For the symmetric mixture ½N(δ, s) + ½N(−δ, s) the derivation gives
T(c) = s c + δ tanh(δc), hence v''(x) = v β² δ³ f(βδx) with f = tanh'' =
−2 tanh·sech².  f is odd and negative on (0, ∞); X ~ N(δ, s) puts more mass
at u than at −u for every u > 0 (the density ratio is e^{2uδ/s} > 1), so
E[f(βδX)] has the sign of −β and is never 0.  Hence

    d/dt κ3 (component 1) at t = 0  ≠ 0   whenever v β δ ≠ 0, s > 0.

`certify_noninvariance` returns the chain's verdicts; each step is a sympy
identity or an assumption-based sign query, never a float.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from riccati_verify.symbolic.moments import tilting_by_mgf, moment_symbols

__all__ = [
    "NonInvarianceCertificate", "certify_noninvariance", "cumulant_rate_identity",
    "mixture_tilted_mean", "single_gaussian_second_derivative", "stein_check_on_polynomials",
    "stein_second_order_identity", "symmetric_mixture_second_derivative",
]

x, c, u, t = sp.symbols("x c u t", real=True)
delta, s = sp.symbols("delta s", positive=True)
a, b, v, beta = sp.symbols("a b v beta", real=True)


def mixture_tilted_mean(weights, means, variances) -> sp.Expr:
    """T(c) for Σ w_k N(m_k, s_k), from the per-component tilting identity."""
    one = moment_symbols(1)
    cc = sp.Matrix([sp.Symbol("c_1", real=True)])
    per = tilting_by_mgf(1)[0]          # m_1 + Sigma_11 c_1
    num, den = 0, 0
    for w, m, var in zip(weights, means, variances):
        Mk = sp.exp(c * m + c**2 * var / 2)
        num += w * Mk * per.subs({one.m[0]: m, one.S[0, 0]: var, cc[0]: c}, simultaneous=True)
        den += w * Mk
    return num / den


def single_gaussian_second_derivative() -> sp.Expr:
    """v'' for one Gaussian N(m, s): 0, since T(c) = m + s c is affine (the control case)."""
    m = sp.Symbol("m", real=True)
    T = mixture_tilted_mean([1], [m], [s])
    return sp.simplify(sp.diff(a * x + b + v * T.subs(c, beta * x), x, 2))


def cumulant_rate_identity() -> bool:
    """d/dt E[(U + tD)³] at t = 0 equals 3 E[U² D] (U = X − m, D = v − E v, E[D] = 0)."""
    U, D = sp.symbols("U D", real=True)
    return sp.expand(sp.diff((U + t * D) ** 3, t).subs(t, 0) - 3 * U**2 * D) == 0


def stein_second_order_identity() -> bool:
    """(x − m)² φ = s² φ'' + s φ for the N(m, s) density φ (s the variance)."""
    m = sp.Symbol("m", real=True)
    phi = sp.exp(-(x - m) ** 2 / (2 * s)) / sp.sqrt(2 * sp.pi * s)
    return sp.simplify((x - m) ** 2 * phi - (s**2 * sp.diff(phi, x, 2) + s * phi)) == 0


def stein_check_on_polynomials() -> bool:
    """E[(X−m)² f(X)] = s E f + s² E f'' for f = X³, X⁴ by explicit Gaussian integration."""
    m = sp.Symbol("m", real=True)
    phi = sp.exp(-(x - m) ** 2 / (2 * s)) / sp.sqrt(2 * sp.pi * s)
    E = lambda g: sp.integrate(g * phi, (x, -sp.oo, sp.oo))
    for f in (x**3, x**4):
        if sp.simplify(E((x - m) ** 2 * f) - s * E(f) - s**2 * E(sp.diff(f, x, 2))) != 0:
            return False
    return True


def symmetric_mixture_second_derivative() -> tuple[bool, sp.Expr]:
    """v'' for ½N(δ,s)+½N(−δ,s) equals v β² δ³ f(βδx) with f(u) = −2 tanh u sech² u."""
    T = mixture_tilted_mean([sp.Rational(1, 2)] * 2, [delta, -delta], [s, s])
    closed = s * c + delta * sp.tanh(delta * c)
    ok_T = sp.simplify((T - closed).rewrite(sp.exp)) == 0
    vel = a * x + b + v * T.subs(c, beta * x)
    f = -2 * sp.tanh(u) * sp.sech(u) ** 2
    vpp = sp.diff(vel, x, 2)
    ok_vpp = sp.simplify((vpp - v * beta**2 * delta**3 * f.subs(u, beta * delta * x)).rewrite(sp.exp)) == 0
    ok_f = sp.simplify((sp.diff(sp.tanh(u), u, 2) - f).rewrite(sp.exp)) == 0
    return ok_T and ok_vpp and ok_f, f


@dataclass(frozen=True)
class NonInvarianceCertificate:
    """The lemmas that together prove a symmetric two-Gaussian mixture leaves the Gaussian family (MATH.md §12)."""

    cumulant_rate: bool          # dκ3/dt = 3E[U²D]
    stein: bool                  # E[U²D] = s² E[v'']
    second_derivative: bool      # v'' = vβ²δ³ f(βδx)
    f_odd: bool
    f_negative_on_positive_axis: bool
    mass_asymmetry: bool         # φ(u−δ)/φ(u+δ) = e^{2uδ/s} > 1 for u > 0
    formula: sp.Expr             # dκ3/dt at 0, with E[f(βδX)] left as an unevaluated expectation

    @property
    def certified(self) -> bool:
        """True only when every lemma held: the sign of dκ3/dt follows from all of them together."""
        return all((self.cumulant_rate, self.stein, self.second_derivative, self.f_odd,
                    self.f_negative_on_positive_axis, self.mass_asymmetry))


def certify_noninvariance() -> NonInvarianceCertificate:
    """Check each lemma symbolically; the initial skewness rate dκ3/dt is ≠ 0 when all hold."""
    ok_vpp, f = symmetric_mixture_second_derivative()
    f_odd = sp.simplify(f.subs(u, -u) + f) == 0
    up = sp.Symbol("u_pos", positive=True)
    # tanh u > 0 and sech² u > 0 for u > 0, so f(u) = −2·tanh·sech² < 0 (sympy's assumption system)
    f_neg = bool(sp.tanh(up).is_positive) and bool((sp.sech(up) ** 2).is_positive)
    phi = lambda z: sp.exp(-(z - delta) ** 2 / (2 * s))
    ratio = sp.simplify(phi(up) / phi(-up))
    mass = sp.simplify(ratio - sp.exp(2 * up * delta / s)) == 0 and bool((2 * up * delta / s).is_positive)
    Ef = sp.Function("E_f")(beta * delta)   # E[f(βδX)], X ~ N(δ, s): ≠ 0 for β ≠ 0 by the sign lemma
    formula = 3 * s**2 * v * beta**2 * delta**3 * Ef
    return NonInvarianceCertificate(cumulant_rate_identity(), stein_second_order_identity(), ok_vpp,
                                    f_odd, f_neg, mass, formula)

"""Common noise (MATH.md §11): the Gaussian moment SDE and the senses of "energy decays".

The model: a scalar Brownian motion W shared by all tokens,

    dx_i = v[μ](x_i) dt + σ (x_i − m) dW      (Itô; `stratonovich=True` for ∘dW).

For a Gaussian law the velocity is affine, v(x) = J(x − m) + ṁ with J = A + VΣB,
so the centred token y = x − m solves dy = J y dt + σ y dW.  Everything below
is derived with sympy from Itô's formula

    df(y) = (∇f·a + ½ gᵀ (∇²f) g) dt + ∇f·g dW        (dy = a dt + g dW, scalar W)

and nothing is copied from MATH.md:

* `moment_sde(d)`: applying it to f = y_i y_j and averaging over y ~ N(0, Σ)
  (conditionally on W — the noise is common, so dW does not average out) gives
  dΣ = (JΣ + ΣJᵀ + σ²Σ) dt + 2σΣ dW (Itô), checked against that form;
* `stratonovich_correction`: ∘dW equals Itô with drift a + ½ (g·∇)g = a + ½σ² y;
* `pathwise_solution_identity`: Σ = e^{2Z} Σ̃ with Z = σW − σ²t/2 and
  dΣ̃/dt = JΣ̃ + Σ̃Jᵀ solves the moment SDE (Itô's formula for a product);
* `moment_exponent(p)`: for J = λI, E|y_t|^p = |y_0|^p e^{g(p)t} with
  g(p) = p(λ − σ²/2) + p²σ²/2; `pathwise_exponent`: d log|y| = (λ − σ²/2)dt + σdW.
* `energy_decay_senses(λ, σ)`: exact statement of which sense of "the energy
  2 tr Σ decays" holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from riccati_verify.symbolic.moments import _is_zero_matrix, general_matrix, symmetric_matrix, vector

__all__ = [
    "EnergyDecay", "MomentSDE", "check_exponents", "check_moment_sde", "energy_decay_senses",
    "ito_differential", "lam", "moment_exponent", "moment_sde", "p_sym", "pathwise_exponent",
    "pathwise_solution_identity", "sigma", "stratonovich_correction",
]

sigma = sp.Symbol("sigma", nonnegative=True)
lam = sp.Symbol("lambda", real=True)
p_sym = sp.Symbol("p", positive=True)


def ito_differential(f: sp.Expr, y: sp.Matrix, a: sp.Matrix, g: sp.Matrix) -> tuple[sp.Expr, sp.Expr]:
    """(drift, diffusion) of df(y) for dy = a dt + g dW with one Brownian motion."""
    grad = sp.Matrix([sp.diff(f, yi) for yi in y])
    hess = sp.hessian(f, list(y))
    drift = (grad.T * a)[0] + (g.T * hess * g)[0] / 2
    return sp.expand(drift), sp.expand((grad.T * g)[0])


def stratonovich_correction(d: int) -> sp.Matrix:
    """Itô drift minus Stratonovich drift for g(y) = σ y: ½ Σ_k g_k ∂_k g."""
    y = vector("y", d)
    g = sigma * y
    return sp.Matrix([sum(g[k] * sp.diff(g[i], y[k]) for k in range(d)) / 2 for i in range(d)])


def _gaussian_average_quadratic(expr: sp.Expr, y: sp.Matrix, S: sp.Matrix) -> sp.Expr:
    """E[expr] for y ~ N(0, Σ) when expr is a quadratic form in y (no other y-dependence)."""
    poly = sp.Poly(sp.expand(expr), *y)
    total = sp.Integer(0)
    for powers, coeff in poly.terms():
        idx = [i for i, k in enumerate(powers) for _ in range(k)]
        if len(idx) != 2:
            raise ValueError("not a quadratic form in y")
        total += coeff * S[idx[0], idx[1]]
    return sp.expand(total)


@dataclass(frozen=True)
class MomentSDE:
    """dΣ = drift dt + diffusion dW for a generic J, as sympy matrices (Itô unless built with stratonovich=True)."""

    d: int
    J: sp.Matrix
    S: sp.Matrix
    drift: sp.Matrix       # coefficient of dt in dΣ
    diffusion: sp.Matrix   # coefficient of dW in dΣ


def moment_sde(d: int, *, stratonovich: bool = False) -> MomentSDE:
    """dΣ = drift dt + diffusion dW for the centred Gaussian token law, by Itô's formula."""
    y, J, S = vector("y", d), general_matrix("J", d), symmetric_matrix("Sigma", d)
    a = J * y
    if stratonovich:
        a = a + stratonovich_correction(d)
    g = sigma * y
    drift, diff = sp.zeros(d), sp.zeros(d)
    for i in range(d):
        for j in range(d):
            dr, df = ito_differential(y[i] * y[j], y, a, g)
            drift[i, j] = _gaussian_average_quadratic(dr, y, S)
            diff[i, j] = _gaussian_average_quadratic(df, y, S)
    return MomentSDE(d, J, S, drift, diff)


def check_moment_sde(d: int) -> bool:
    """The derived Itô moment SDE equals (JΣ + ΣJᵀ + σ²Σ) dt + 2σΣ dW; Stratonovich adds σ²Σ dt."""
    ito, strat = moment_sde(d), moment_sde(d, stratonovich=True)
    J, S = ito.J, ito.S
    return (_is_zero_matrix(ito.drift - (J * S + S * J.T + sigma**2 * S))
            and _is_zero_matrix(ito.diffusion - 2 * sigma * S)
            and _is_zero_matrix(strat.drift - (J * S + S * J.T + 2 * sigma**2 * S))
            and _is_zero_matrix(strat.diffusion - 2 * sigma * S))


def pathwise_solution_identity(d: int) -> bool:
    """Σ = e^{2Z} Σ̃, dZ = −σ²/2 dt + σ dW, dΣ̃ = (JΣ̃ + Σ̃Jᵀ) dt solves the Itô moment SDE.

    Itô's formula in the variables (Z, Σ̃) — Σ̃ has no dW part, so only the
    ∂²/∂Z² term contributes a correction — gives dΣ's drift and diffusion,
    which must equal the moment SDE evaluated at Σ (with J the same matrix:
    J depends on Σ only through the state, which is the same point).
    """
    Z = sp.Symbol("Z", real=True)
    J, St = general_matrix("J", d), symmetric_matrix("T", d)
    F = sp.exp(2 * Z) * St
    Stdot = J * St + St * J.T
    drift = F.diff(Z) * (-sigma**2 / 2) + F.diff(Z, 2) * sigma**2 / 2 + sp.exp(2 * Z) * Stdot
    diffusion = F.diff(Z) * sigma
    return (_is_zero_matrix(drift - (J * F + F * J.T + sigma**2 * F))
            and _is_zero_matrix(diffusion - 2 * sigma * F))


def moment_exponent() -> sp.Expr:
    """g(p) with E|y_t|^p = |y_0|^p e^{g(p)t} for dy = λy dt + σy dW (y > 0; |y| for any sign)."""
    y = sp.Symbol("y", positive=True)
    drift, _ = ito_differential(y**p_sym, sp.Matrix([y]), sp.Matrix([lam * y]), sp.Matrix([sigma * y]))
    return sp.factor(sp.simplify(drift / y**p_sym))


def pathwise_exponent() -> sp.Expr:
    """The dt-coefficient of d log y: the almost-sure exponential rate (the dW part is o(t) a.s.)."""
    y = sp.Symbol("y", positive=True)
    drift, diff = ito_differential(sp.log(y), sp.Matrix([y]), sp.Matrix([lam * y]), sp.Matrix([sigma * y]))
    assert sp.simplify(diff - sigma) == 0
    return sp.simplify(drift)


def check_exponents() -> bool:
    """The derived moment and pathwise exponents match their closed forms, and g'(0) is the pathwise exponent."""
    g = moment_exponent()
    return (sp.simplify(g - (p_sym * (lam - sigma**2 / 2) + p_sym**2 * sigma**2 / 2)) == 0
            and sp.simplify(pathwise_exponent() - (lam - sigma**2 / 2)) == 0
            # the p → 0 slope of g is the pathwise exponent (Lyapunov exponent = g'(0))
            and sp.simplify(sp.diff(g, p_sym).subs(p_sym, 0) - pathwise_exponent()) == 0)


@dataclass(frozen=True)
class EnergyDecay:
    """Which sense of 'the energy E = 2 tr Σ decays' holds, for J = λI (exact rationals)."""

    lam: Fraction
    sigma2: Fraction
    pathwise_rate: Fraction            # a.s. rate of (1/2) log E: λ − σ²/2
    pathwise_decays: bool
    expected_energy_rate: Fraction     # rate of E[E] = g(2)
    expected_energy_decays: bool
    expected_norm_rate: Fraction       # rate of E|y| = g(1) (p = 1)
    expected_norm_decays: bool
    p_critical: Fraction | None        # E|y|^p decays iff 0 < p < p_critical (None: see all_p)
    all_p: bool = False                # σ = 0 and λ < 0: every moment decays

    def statement(self) -> str:
        """One sentence naming which senses of decay hold, for reports and the proof's evidence."""
        ps = ("for every p > 0" if self.all_p else "for no p > 0" if self.p_critical is None
              else f"exactly for 0 < p < {self.p_critical} (energy^q: q < {self.p_critical / 2})")
        return (f"λ = {self.lam}, σ² = {self.sigma2}: pathwise (a.s.) rate of ½log E is {self.pathwise_rate} "
                f"({'decays' if self.pathwise_decays else 'does not decay'}); E[E] has rate {self.expected_energy_rate} "
                f"({'decays' if self.expected_energy_decays else 'grows'}); E|y| has rate {self.expected_norm_rate} "
                f"({'decays' if self.expected_norm_decays else 'does not decay'}); E|y|^p decays {ps}")


def energy_decay_senses(lam_: Fraction, sigma2: Fraction) -> EnergyDecay:
    """Exact case analysis from g(p) = p(λ − σ²/2) + p²σ²/2 = p(λ − σ²/2 + pσ²/2)."""
    lam_, sigma2 = Fraction(lam_), Fraction(sigma2)
    g = lambda p: p * (lam_ - sigma2 / 2) + p * p * sigma2 / 2
    path = lam_ - sigma2 / 2
    if sigma2 == 0:                        # g(p) = pλ
        return EnergyDecay(lam_, sigma2, path, path < 0, g(2), g(2) < 0, g(1), g(1) < 0, None, lam_ < 0)
    root = 1 - 2 * lam_ / sigma2           # g(p) < 0 ⇔ 0 < p < 1 − 2λ/σ²
    return EnergyDecay(lam_, sigma2, path, path < 0, g(2), g(2) < 0, g(1), g(1) < 0, root if root > 0 else None)

"""Gaussian mixtures are not invariant under the attention flow (seed 000, MATH.md §12).

Theorem (d = 1).  Let the token law be ½N(δ, s) + ½N(−δ, s) with δ, s > 0 and
v(x) = ax + b + v·T(βx), T the tilted mean of the mixture.  Following each
component along the flow, the third cumulant of component 1 satisfies

    dκ3/dt |_{t=0} = 3 s² v β² δ³ E[f(βδX)],  X ~ N(δ, s),  f = tanh'' = −2 tanh·sech²,

and E[f(βδX)] ≠ 0 (its sign is that of −β), so the rate is nonzero whenever
vβδ ≠ 0: the components do not stay Gaussian, hence the law does not stay a
two-component Gaussian mixture of the same components.  (For one Gaussian,
δ = 0, v'' ≡ 0 and the rate vanishes — eq. 1.1.)

Symbolic route: `symbolic.mixture.certify_noninvariance` — the cumulant-rate
identity, the Gaussian second-order Stein identity, the closed form
T(c) = sc + δ tanh(δc) from the per-component tilting identity, v'' =
vβ²δ³f(βδx), f odd and negative on (0, ∞), and the mass asymmetry
φ(u − δ)/φ(u + δ) = e^{2uδ/s} > 1; each a sympy identity or sign query.

Numeric route (independent): (a) Gauss–Hermite quadrature of
3E[(X − m)²(v(X) − E v(X))] for each component against the formula with
E[f(βδX)] by adaptive quadrature; (b) particles with component labels: at T each
component's sample skewness exceeds 5 standard errors of the Gaussian null
(√(6/n)) — the component is not Gaussian — and moved in the predicted direction; (c) the Kolmogorov–Smirnov distance between all tokens and
the EM two-component fit is reported beside its 1 % critical value.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate

from riccati_verify.core.model import Params
from riccati_verify.numeric.simulate.mixture import GaussianMixture, kappa3_rate, mixture_run
from riccati_verify.symbolic import mixture as sym
from riccati_verify.core.result import ProofResult, Status, Verdict, timed

__all__ = [
    "CLAIM", "EX", "HYPOTHESES", "NAME", "RNG_SEED", "SEED", "Z_THRESHOLD", "check", "hypotheses",
    "numeric_check", "symbolic_check",
]

NAME = "mixture_noninvariance"
SEED = "000"
CLAIM = ("a symmetric two-component Gaussian mixture is not invariant: a component's third cumulant has "
         "dκ3/dt(0) = 3s²vβ²δ³E[tanh''(βδX)] ≠ 0 whenever vβδ ≠ 0")
HYPOTHESES = ["d = 1", "mixture ½N(δ, s) + ½N(−δ, s), δ, s > 0", "v ≠ 0, β ≠ 0"]
RNG_SEED = 20261129
Z_THRESHOLD = 5.0
EX = dict(a=-0.2, b=0.0, v=1.0, beta=1.0, delta=1.0, s=0.25)


def symbolic_check() -> Verdict:
    """Symbolic route: every lemma of `symbolic.mixture.certify_noninvariance`.

    CERTIFIED when every identity holds, REFUTED otherwise.
    """
    cert = sym.certify_noninvariance()
    control = sym.single_gaussian_second_derivative()
    ev = {k: getattr(cert, k) for k in ("cumulant_rate", "stein", "second_derivative", "f_odd",
                                         "f_negative_on_positive_axis", "mass_asymmetry")}
    ev["formula"] = str(cert.formula)
    ev["single_gaussian_v''"] = str(control)
    ok = cert.certified and control == 0
    return Verdict(Status.CERTIFIED if ok else Status.REFUTED, ev, "sympy identities and sign lemma")


def numeric_check(seed: int = RNG_SEED) -> Verdict:
    """Numeric cross-check: quadrature of the cumulant rate and labelled-particle skewness at T.

    At most CONFIRMED_NUMERICALLY (floats prove nothing).
    """
    e = EX
    p = Params.from_arrays([[e["a"]]], [[e["beta"]]], [[e["v"]]], [e["b"]])
    mix = GaussianMixture(np.array([0.5, 0.5]), np.array([[e["delta"]], [-e["delta"]]]),
                          np.array([[[e["s"]]], [[e["s"]]]]))
    f = lambda u: -2 * np.tanh(u) / np.cosh(u) ** 2
    sd = math.sqrt(e["s"])
    Ef, Ef_err = integrate.quad(lambda x: f(e["beta"] * e["delta"] * x) * math.exp(-(x - e["delta"]) ** 2 / (2 * e["s"]))
                           / math.sqrt(2 * math.pi * e["s"]), e["delta"] - 40 * sd, e["delta"] + 40 * sd,
                           epsabs=1e-13, epsrel=1e-12, limit=200)
    formula = 3 * e["s"] ** 2 * e["v"] * e["beta"] ** 2 * e["delta"] ** 3 * Ef
    rates = [kappa3_rate(p, mix, k) for k in range(2)]
    # Tolerance from the two quadratures' own error estimates: Gauss–Hermite converges faster than
    # any power for this analytic integrand, so the 60-node value's distance from the 120-node one
    # bounds the 60-node error and overestimates the 120-node error; QUADPACK reports its error
    # bound on E f, which the formula scales by |3s²vβ²δ³|; rounding adds about nodes·eps·|κ̇3|.
    coarse = [kappa3_rate(p, mix, k, nodes=60) for k in range(2)]
    scale = abs(3 * e["s"] ** 2 * e["v"] * e["beta"] ** 2 * e["delta"] ** 3)
    tol = 10 * (max(abs(r - c) for r, c in zip(rates, coarse)) + scale * Ef_err
                + 120 * np.finfo(float).eps * abs(formula))
    quad_ok = abs(rates[0] - formula) <= tol and abs(rates[1] + formula) <= tol
    run = mixture_run(p, mix, 3000, 0.5, 10, seed=seed)
    moves = []
    for s0, sT, r in zip(run.skew0, run.skewT, rates):
        change = sT.skewness - s0.skewness
        moves.append({"component": s0.component, "skew_0": s0.skewness, "skew_T": sT.skewness,
                      "stderr_gaussian_null": sT.stderr, "z": abs(sT.skewness) / sT.stderr,
                      "direction_as_predicted": bool(np.sign(change) == np.sign(r))})
    ok = quad_ok and all(m["z"] > Z_THRESHOLD and m["direction_as_predicted"] for m in moves)
    ev = {"seed": seed, "example": e, "E_f": Ef, "formula_rate": formula, "quadrature_rates": rates,
          "quadrature_agrees": quad_ok, "quadrature_tolerance": float(tol),
          "quadrature_error": max(abs(rates[0] - formula), abs(rates[1] + formula)), "component_skewness": moves,
          "ks_to_em_two_component_fit": run.ks_two_component, "ks_critical_1pct_fixed_law": run.ks_critical_1pct,
          "ess_min": run.ess_min}
    return Verdict(Status.CONFIRMED_NUMERICALLY if ok else Status.REFUTED, ev,
                   "quadrature matches the certified formula; component skewness at T beyond 5 null SE, direction as predicted")


def check() -> ProofResult:
    """Run both routes, timed; `ProofResult.status` combines their verdicts into the theorem's."""
    return timed(lambda: ProofResult(NAME, SEED, CLAIM, symbolic_check(), numeric_check()))


def hypotheses(problem, *, delta=None):
    """The hypotheses above, decided exactly on a parameter file (`riccati-verify hypotheses`).

    The file's Gaussian N(m, s) gives the components' common variance s and the mixture's centre
    m, which the theorem takes to be 0; the offset δ is not in a parameter file (--delta)."""
    from riccati_verify.core import exact
    from riccati_verify.certify.hypotheses import HypothesisCheck

    params, state = problem.require_params(), problem.require_state()
    d = params.dim
    out = [HypothesisCheck(HYPOTHESES[0], d == 1, {"d": d})]
    if d != 1:
        why = {"reason": "only defined for d = 1"}
        return out + [HypothesisCheck(HYPOTHESES[1], None, why), HypothesisCheck(HYPOTHESES[2], None, why)]
    m, s = state.mean[0], state.cov[0][0]
    w = {"centre_m": exact.frac_to_str(m), "s": exact.frac_to_str(s)}
    if delta is None:
        holds = False if (m != 0 or s <= 0) else None
        if holds is None:
            w["reason"], w["missing"] = "the component offset delta is not in a parameter file", "delta"
    else:
        w["delta"] = exact.frac_to_str(delta)
        holds = m == 0 and s > 0 and delta > 0
    out.append(HypothesisCheck(HYPOTHESES[1], holds, w))
    v, beta = params.V[0][0], params.B[0][0]
    out.append(HypothesisCheck(HYPOTHESES[2], v != 0 and beta != 0,
                               {"v": exact.frac_to_str(v), "beta": exact.frac_to_str(beta)}))
    return out

"""Synchronisation by common noise (seed 004, MATH.md §11).

Model: dx_i = v[μ^N](x_i) dt + σ (x_i − m^N) dW with one Brownian motion W (Itô).

Theorem (the precise form checked here).  For a Gaussian token law the
covariance follows the moment SDE dΣ = (JΣ + ΣJᵀ + σ²Σ) dt + 2σΣ dW, J = A + VΣB,
solved pathwise by Σ = e^{2σW − σ²t} Σ̃ with dΣ̃/dt = JΣ̃ + Σ̃Jᵀ.  For J = λI
(and, for constant J, with λ = max Re λ(J)) the interaction energy E = 2 tr Σ
satisfies

* pathwise (almost surely): (1/2t) log E_t → λ − σ²/2, so E → 0 a.s. iff σ² > 2λ;
* in p-th mean of |y| = E^{1/2}: E|y_t|^p = |y_0|^p e^{g(p)t}, g(p) = p(λ − σ²/2) + p²σ²/2,
  so E|y|^p decays iff 0 < p < 1 − 2λ/σ²;
* in particular E[E_t] (p = 2) has rate 2λ + σ² and E|y_t| (p = 1) rate λ: for λ > 0
  neither decays, however large σ is.

The seed's "σ² > 2λ_max(A) makes the expected energy decay" is therefore
imprecise: it is true pathwise and for the moments E[E^q] with q < ½ − λ/σ²
(small moments, log-energy), false for the expected energy itself when λ > 0.
Under the Stratonovich reading the pathwise rate is λ (no −σ²/2) and noise does
not synchronise at all.

Symbolic route: `symbolic.noise` derives the moment SDE, the Stratonovich
correction, the pathwise solution and g(p) from Itô's formula.  The case analysis is
done for symbolic λ and σ > 0 (`general_senses`): g(p) = (σ²p/2)(p − p_c) with
p_c = 1 − 2λ/σ², so for p > 0 the sign of g(p) is that of p − p_c; the pathwise rate
λ − σ²/2 is negative iff σ² > 2λ; g(2) = 2λ + σ² and g(1) = λ are positive for λ > 0.
It is repeated in exact rationals for the example λ = 1/5, σ² = 1.

Scope: the exponents are derived for J = λI (the scalar SDE dy = λy dt + σy dW).  For a
constant non-normal J the same rates with λ = max Re λ(J) follow from e^{Jt} ~ t^k e^{λt}
(polynomial factors do not change exponential rates); that step is not machine-checked.

Numeric route: (a) Monte Carlo p-th moment and pathwise exponents of the
Milstein scheme, compared with the *discrete-time* Milstein prediction
(Gauss–Hermite quadrature of one step's factor, no sampling) by z-scores, and
that prediction compared with g(p) (an O(h) gap); (b) the common-noise
particle system with attention switched off (V = 0, the closed-form case): the
final energy against the exact e^{2σW_T − σ²T}·2tr(e^{AT}Σ^N_0 e^{AᵀT}) on the
same Brownian path at several step sizes — the fitted strong orders must be
1/2 (Euler–Maruyama) and 1 (Milstein) within their 99 % CIs — and the pathwise
rate over T = 20 averaged over seeds.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy.linalg import expm

from riccati_verify.core.model import Gaussian, Params
from riccati_verify.numeric.simulate.noise import moment_exponents, simulate_common_noise
from riccati_verify.numeric.simulate.rates import fit_power_law
from riccati_verify.symbolic import noise as sym
from riccati_verify.core.result import ProofResult, Status, Verdict, timed
from riccati_verify.numeric.views import float_view

__all__ = [
    "CLAIM", "HYPOTHESES", "LEVELS", "NAME", "PATHS_FOR_ORDER", "RNG_SEED", "SEED", "Z_THRESHOLD",
    "check", "hypotheses", "milstein_discrete_rate", "numeric_check", "symbolic_check",
]

NAME = "common_noise"
SEED = "004"
CLAIM = ("for J = λI (any real λ, σ > 0), common noise σ(x − m)dW (Itô) synchronises tokens pathwise iff σ² > 2λ; "
         "E|y|^p (p > 0) decays iff p < 1 − 2λ/σ²; the expected energy (p = 2) does not decay for λ > 0 — the "
         "seed's 'expected energy decays' is imprecise (constant non-normal J, λ = max Re λ(J): same rates, "
         "not machine-checked)")
HYPOTHESES = ["Itô interpretation", "J = λI or constant J with λ = max Re λ(J)", "Gaussian token law"]
RNG_SEED = 20261129
LAM, SIGMA = Fraction(1, 5), Fraction(1)
Z_THRESHOLD = 5.0
LEVELS = (50, 100, 200, 400, 800)   # step counts on one Brownian path (increments summed from the finest)
PATHS_FOR_ORDER = 8


def general_senses() -> dict:
    """The case analysis for symbolic λ (real) and σ > 0, from the derived g(p) and pathwise exponent."""
    import sympy as sp

    lam, p = sym.lam, sym.p_sym
    sig = sp.Symbol("sigma", positive=True)
    g = sym.moment_exponent().subs(sym.sigma, sig)
    path = sym.pathwise_exponent().subs(sym.sigma, sig)
    p_c = 1 - 2 * lam / sig ** 2
    lam_pos = sp.Symbol("lambda_pos", positive=True)
    return {
        # p σ²/2 > 0 for p > 0, σ > 0: sign g(p) = sign(p − p_c)
        "g(p) = (σ² p/2)(p − p_c), p_c = 1 − 2λ/σ²": sp.simplify(g - sig ** 2 * p / 2 * (p - p_c)) == 0,
        "pathwise rate = (2λ − σ²)/2 (negative iff σ² > 2λ)": sp.simplify(path - (2 * lam - sig ** 2) / 2) == 0,
        "g(2) = 2λ + σ² > 0 for λ > 0": bool((g.subs({p: 2, lam: lam_pos})).is_positive)
        and sp.simplify(g.subs(p, 2) - (2 * lam + sig ** 2)) == 0,
        "g(1) = λ > 0 for λ > 0": bool(g.subs({p: 1, lam: lam_pos}).is_positive) and sp.simplify(g.subs(p, 1) - lam) == 0,
    }


def symbolic_check() -> Verdict:
    """Symbolic route: the moment SDE, pathwise solution and g(p) by Itô's formula; exact case analysis.

    CERTIFIED when every identity holds, REFUTED otherwise.
    """
    senses = sym.energy_decay_senses(LAM, SIGMA**2)
    ev = {"moment_sde_ito_and_stratonovich": sym.check_moment_sde(2),
          "pathwise_solution_identity": sym.pathwise_solution_identity(2),
          "exponents_g(p)_and_pathwise": sym.check_exponents(),
          "g(p)": str(sym.moment_exponent()),
          "example": senses.statement(),
          "seed_claim_expected_energy_decays": "false for this example: E[E] rate "
                                               f"{senses.expected_energy_rate} > 0 although σ² > 2λ",
          "senses_consistent": senses.pathwise_decays and not senses.expected_energy_decays
                               and senses.p_critical == Fraction(3, 5),
          "general_lambda_sigma": general_senses()}
    ok = all(ev[k] for k in ("moment_sde_ito_and_stratonovich", "pathwise_solution_identity",
                             "exponents_g(p)_and_pathwise", "senses_consistent")) and all(
        ev["general_lambda_sigma"].values())
    ev["scope"] = ("J = λI, symbolic λ and σ > 0 (and the example λ = 1/5, σ² = 1 in rationals); constant "
                   "non-normal J with λ = max Re λ(J) is not machine-checked")
    return Verdict(Status.CERTIFIED if ok else Status.REFUTED, ev,
                   "Itô-formula derivations; exact case analysis of the senses of decay")


def milstein_discrete_rate(lam: float, sigma: float, p: float, h: float, nodes: int = 80) -> float:
    """(1/h) log E|F|^p for one Milstein step factor F = 1 + λh + σ√h Z + ½σ²h(Z² − 1), by quadrature.

    p = 0 means the pathwise rate (1/h) E log|F|.  F > 0 for all Z when σ²h < 2(1+λh) − σ²h·0 …
    (its discriminant σ²h(1 − 2(1 + λh − σ²h/2)) is negative for small h), so the integrand is smooth.
    """
    z, w = np.polynomial.hermite_e.hermegauss(nodes)
    w = w / w.sum()
    F = 1 + lam * h + sigma * math.sqrt(h) * z + 0.5 * sigma**2 * h * (z * z - 1)
    assert np.all(F > 0)
    if p == 0:
        return float(w @ np.log(F)) / h
    return math.log(float(w @ F**p)) / h


def numeric_check(seed: int = RNG_SEED) -> Verdict:
    """Numeric cross-check: Monte Carlo exponents vs the Milstein prediction; closed-form energy at V = 0.

    At most CONFIRMED_NUMERICALLY (floats prove nothing).
    """
    lam, sigma = float(LAM), float(SIGMA)
    T, steps, paths = 1.0, 100, 200_000
    h = T / steps
    est, path = moment_exponents(lam, sigma, [0.25, 0.5, 1.0, 2.0], T, steps, paths, seed=seed)
    rows, zmax = [], 0.0
    for e in est + [path]:
        disc = milstein_discrete_rate(lam, sigma, e.p, h)
        z = abs(e.rate - disc) / e.stderr
        zmax = max(zmax, z)
        rows.append({"p": e.p or "pathwise", "mc_rate": e.rate, "stderr": e.stderr, "milstein_exact": disc,
                     "g(p)": e.predicted, "z": z})
    signs_ok = (path.rate < 0 and est[0].rate < 0 and est[1].rate < 0 and est[2].rate > 0 and est[3].rate > 0)
    # (b) particles, attention off (V = 0): closed form on the same Brownian path
    A = np.diag([0.3, -0.2])
    p = Params.from_arrays(A.tolist(), [[0.4, 0.0], [0.1, -0.2]], [[0, 0], [0, 0]], [0.1, 0.0])
    g0 = Gaussian.from_arrays([0.2, -0.1], [[1.0, 0.3], [0.3, 0.5]])
    s_ = 1.0
    rates = []
    orders = {}
    for scheme in ("euler", "milstein"):
        hs, errs = [], []
        for k in range(PATHS_FOR_ORDER):
            fine = np.random.default_rng([seed, 11, k]).standard_normal(LEVELS[-1]) * math.sqrt(2.0 / LEVELS[-1])
            row = []
            for n in LEVELS:
                r = simulate_common_noise(p, g0, 50, 2.0, n, sigma=s_, seed=seed, scheme=scheme,
                                          increments=fine.reshape(n, -1).sum(axis=1))
                E_exact = 2 * math.exp(2 * s_ * r.W[-1] - s_**2 * 2.0) * np.trace(
                    expm(A * 2.0) @ r.covs[0] @ expm(A.T * 2.0))
                row.append(abs(r.energy[-1] - E_exact) / E_exact)
            errs.append(row)
        fit = fit_power_law(2.0 / np.array(LEVELS), np.array(errs).T)
        orders[scheme] = {"order": fit.slope, "ci": fit.ci, "finest_rel_error_mean": float(np.mean(np.array(errs)[:, -1]))}
    Tlong = 20.0
    for k in range(6):
        r = simulate_common_noise(p, g0, 50, Tlong, 2000, sigma=s_, seed=seed + 1 + k, scheme="milstein")
        rates.append(r.pathwise_rate())
    # exact transient of the deterministic factor, (1/2T) log(tr(e^{AT}Σe^{AᵀT})/tr Σ) − λmax, bounds the bias
    S0 = float_view(g0)[1]
    transient = abs(math.log(np.trace(expm(A * Tlong) @ S0 @ expm(A.T * Tlong)) / np.trace(S0)) / (2 * Tlong) - 0.3)
    pred = 0.3 - s_**2 / 2
    se = s_ / math.sqrt(Tlong * len(rates))                 # σW_T/T averaged over independent paths
    z_rate = max(0.0, abs(float(np.mean(rates)) - pred) - transient) / se
    ev = {"seed": seed, "moment_exponents": rows, "max_z": zmax, "signs_as_predicted": signs_ok,
          "milstein_minus_g_gap_O(h)": max(abs(r_["milstein_exact"] - r_["g(p)"]) for r_ in rows),
          "strong_order_vs_closed_form": orders, "pathwise_rates_T20": rates,
          "pathwise_prediction": pred, "transient_bound": transient, "z_pathwise": z_rate}
    # strong orders: Euler–Maruyama 1/2, Milstein 1 (for this linear multiplicative noise)
    ok = (zmax < Z_THRESHOLD and signs_ok and z_rate < Z_THRESHOLD
          and orders["milstein"]["ci"][0] <= 1.0 <= orders["milstein"]["ci"][1]
          and orders["euler"]["ci"][0] <= 0.5 <= orders["euler"]["ci"][1])
    return Verdict(Status.CONFIRMED_NUMERICALLY if ok else Status.REFUTED, ev,
                   "Monte Carlo exponents match the Milstein prediction; closed-form energy reproduced")


def check() -> ProofResult:
    """Run both routes, timed; `ProofResult.status` combines their verdicts into the theorem's."""
    return timed(lambda: ProofResult(NAME, SEED, CLAIM, symbolic_check(), numeric_check()))


def hypotheses(problem, *, noise=None):
    """The hypotheses above, decided exactly on a parameter file (`riccati-verify hypotheses`).

    'J constant': for σ ≠ 0, J(t) = A + e^{2σW−σ²t} V Σ̃(t) B is deterministic iff the attention
    term vanishes identically, V e^{At}Σ0e^{Aᵀt}B ≡ 0 (a random non-constant factor times a
    deterministic matrix is constant only if the matrix is 0; continuity at t = 0 gives
    VΣ0B = 0, so J ≡ A); that is decided exactly by `attention_term_vanishes`.  When it vanishes
    J ≡ A for every σ; otherwise J is not constant for σ ≠ 0, and for σ = 0 (or σ not given,
    --noise) the check is undecided (a deterministic J can be constant at an equilibrium Σ0)."""
    from riccati_verify.core import exact
    from riccati_verify.certify.hypotheses import HypothesisCheck, attention_term_vanishes, gaussian_state

    params, state = problem.require_params(), problem.require_state()
    # The model dx = v dt + σ(x − m)dW is read in Itô's sense by this toolkit (simulate, symbolic.noise).
    out = [HypothesisCheck(HYPOTHESES[0], True, {"reading": "Ito (the toolkit's common-noise model)"})]
    att = attention_term_vanishes(params, state)
    w = dict(att.witness)
    if noise is not None:
        w["sigma"] = exact.frac_to_str(noise)
    if att.holds:
        w["J"] = "A"
        d, A = params.dim, params.A
        if A == exact.identity(d, A[0][0]):
            lam = A[0][0]
            w["lambda"] = exact.frac_to_str(lam)
            if noise is not None:   # the theorem's conclusion for this σ (pathwise rate λ − σ²/2)
                w["pathwise_synchronisation_sigma2_gt_2lambda"] = noise * noise > 2 * lam
        holds = True
    elif noise is not None and noise != 0:
        holds = False
    else:
        holds = None
        if noise is not None:
            w["reason"] = "sigma = 0: J(t) may be constant at an equilibrium; not decided"
        else:
            w["reason"], w["missing"] = "J is constant iff V Sigma(t) B == 0 only for sigma != 0", "noise"
    out.append(HypothesisCheck(HYPOTHESES[1], holds, w))
    out.append(gaussian_state(state))
    return out

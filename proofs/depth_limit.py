"""The depth limit of the residual Transformer with common noise (seed 004, MATH.md §10–11).

Claim (seed 004): the discrete residual Transformer with common noise,

    x_{k+1} = x_k + Δt v[μ_k](x_k) + σ (x_k − m_k) √Δt ξ_k,    ξ_k ~ N(0, 1) shared by all N tokens,

converges pathwise to its continuous-depth, mean-field limit at rate O(Δt^{1/2} + N^{-1/2}).

What is checked here.  The Δt part is the strong order of the Euler–Maruyama step; the N part
is the mean-field (Gaussian moment SDE) limit along the same Brownian path.

Exact route (sympy; it covers the linear case only, so the theorem is at best confirmed
numerically).  For the centred token of a Gaussian law, dy = λy dt + σy dW, one exact
step is y0·exp((λ − σ²/2)h + σ√h ξ) and one Euler step y0(1 + λh + σ√h ξ).  Expanding in √h and
taking Gaussian moments of ξ: the mean local error is λ²h²/2 + O(h³) and the mean-square local
error is σ⁴h²/2 + O(h³).  By Milstein's fundamental theorem (local mean order p1 = 2, mean-square
order p2 = 1, p1 ≥ p2 + 1/2) the global strong order is p2 − 1/2 = 1/2, and it is not better
when σ ≠ 0 (the h² coefficient σ⁴/2 is not 0).  Adding Milstein's term ½σ²(ξ² − 1)h y0 makes the
mean-square local error O(h³): order 1 (used below for the N-study, so the Δt error does not
mask N^{-1/2}).  For the N part: the empirical mean of N i.i.d. standard normals has second
moment exactly 1/N (checked for N = 1..4 by Gaussian moments), so the initial moment error that
the flow transports is N^{-1/2} in root mean square.

Numeric route (seeded).  (1) N = 16 tokens, Euler–Maruyama with Δt = 2^-5 .. 2^-8 against the
same tokens at Δt = 2^-12 driven by the same Brownian path (coarse increments are sums of fine
ones), 32 paths: the L² strong error (E|x_Δt(T) − x_ref(T)|²)^{1/2}, each path's error relative
to its tokens' spread (the common noise rescales the spread by e^{σW − σ²t/2}), has a fitted
Δt-slope whose 99 % percentile-bootstrap interval over paths contains 1/2.  Coarser layers
(Δt ≥ 1/8, σ√Δt ≈ 0.3) are outside the asymptotic regime: there the measured order is ≈ 0.8.
(2) N = 16 .. 1024 tokens (Milstein, Δt = 2^-7) against the Gaussian moment SDE along the same
path, 6 replicates: the relative moment error at T has a fitted N-slope whose 99 % interval
contains −1/2.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import sympy as sp

from riccati_verify.core.result import ProofResult, Status, Verdict, timed

__all__ = ["CLAIM", "HYPOTHESES", "NAME", "RNG_SEED", "SEED", "check", "dt_study", "n_study", "numeric_check",
           "symbolic_check"]

NAME = "depth_limit"
SEED = "004"
CLAIM = ("the discrete residual Transformer with common noise converges pathwise to the continuous-depth mean-field "
         "limit at rate O(Δt^{1/2} + N^{-1/2}) (Euler–Maruyama strong order 1/2, sharp for σ ≠ 0)")
HYPOTHESES = ["common scalar noise σ(x − m)dW", "Gaussian initial law (for the mean-field reference)",
              "no blow-up on [0, T] (decided for the noiseless flow only)"]
RNG_SEED = 20261203
TIME = 1.0
SIGMA = 0.8
FINE = 2 ** 12
COARSE = tuple(2 ** k for k in range(5, 9))
N_GRID = (16, 64, 256, 1024)


def _example():
    from riccati_verify.core.model import Gaussian, Params

    F = Fraction
    P = Params.from_arrays([[F(-1, 2), F(1, 2)], [F(-1, 2), F(-1, 4)]], [[F(1, 4), 0], [0, F(1, 8)]],
                           [[F(-1, 2), 0], [F(1, 4), F(-1, 2)]], [0, 0])
    return P, Gaussian.from_arrays([F(1, 2), 0], [[1, 0], [0, F(1, 2)]])


# ----------------------------------------------------------------------------- exact route

def local_errors() -> dict:
    """Mean and mean-square local errors of the Euler and Milstein steps for dy = λy dt + σy dW (y0 = 1)."""
    lam, sig = sp.symbols("lambda sigma", real=True)
    eps, xi = sp.symbols("epsilon xi", real=True)          # ε = √h
    order = 7
    exact = sp.series(sp.exp((lam - sig ** 2 / 2) * eps ** 2 + sig * eps * xi), eps, 0, order).removeO()
    euler = 1 + lam * eps ** 2 + sig * eps * xi
    milstein = euler + sig ** 2 * (xi ** 2 - 1) * eps ** 2 / 2

    def gauss_mean(expr):
        p = sp.Poly(sp.expand(expr), xi)
        return sp.expand(sum(c * (0 if k % 2 else sp.factorial2(k - 1)) for (k,), c in p.terms()))

    def trunc(expr, n):
        return sp.expand(sum(sp.expand(expr).coeff(eps, k) * eps ** k for k in range(n)))

    e_eu, e_mi = exact - euler, exact - milstein
    return {"mean_euler": trunc(gauss_mean(e_eu), 5), "ms_euler": trunc(gauss_mean(sp.expand(e_eu ** 2)), 5),
            "ms_milstein": trunc(gauss_mean(sp.expand(e_mi ** 2)), 6), "symbols": (lam, sig, eps)}


def symbolic_check() -> Verdict:
    """Exact route: local error orders (Euler: mean h², mean square σ⁴h²/2; Milstein: mean square O(h³));
    E[(mean of N standard normals)²] = 1/N for N = 1..4.  These prove the linear case only, so the verdict
    is NOT_CERTIFIED when all hold (the proof is then confirmed numerically at best) and REFUTED if one fails."""
    from riccati_verify.symbolic.multihead import gaussian_expectation

    le = local_errors()
    lam, sig, eps = le["symbols"]
    ev = {"mean_local_error_euler": str(le["mean_euler"]), "mean_square_local_error_euler": str(le["ms_euler"]),
          "mean_square_local_error_milstein_to_h^2": str(le["ms_milstein"])}
    ok_mean = sp.simplify(le["mean_euler"] - lam ** 2 * eps ** 4 / 2) == 0
    ok_ms = sp.simplify(le["ms_euler"] - sig ** 4 * eps ** 4 / 2) == 0
    ok_mil = sp.expand(le["ms_milstein"]) == 0            # no term below ε⁶ = h³
    ev.update(mean_order_p1_is_2=ok_mean, mean_square_order_p2_is_1=ok_ms, milstein_mean_square_is_O_h3=ok_mil,
              global_strong_order_euler="1/2 (Milstein's theorem: p2 − 1/2 with p1 ≥ p2 + 1/2)")
    ok_n = True
    for n in range(1, 5):
        zs = [sp.Symbol(f"z{i}", real=True) for i in range(n)]
        dummies = [sp.Symbol(f"w{i}", real=True) for i in range(n)]
        val = gaussian_expectation((sum(zs) / n) ** 2, list(zip(zs, dummies)), 0)
        ev[f"E[mean^2], N={n}"] = str(val)
        ok_n &= sp.simplify(val - sp.Rational(1, n)) == 0
    ok = ok_mean and ok_ms and ok_mil and ok_n
    ev["scope"] = ("exact for the linear (Gaussian-moment) token dynamics and for the initial moment error; "
                   "the rate of the nonlinear N-token attention system is not proved, only measured")
    # the identities are proved, but they do not prove the claim about the softmax system: not certified
    return Verdict(Status.NOT_CERTIFIED if ok else Status.REFUTED, ev,
                   "exact (linear case only): Euler–Maruyama local error orders give strong order 1/2, sharp; "
                   "1/N initial moment error")


# ----------------------------------------------------------------------------- numeric route

def _rms_slope(dts, E, rng, level=0.99, n_boot=1000):
    """Slope of log (E_paths err²)^{1/2} against log Δt and its percentile-bootstrap interval over paths."""
    x = np.log(dts)
    slope = lambda rows: float(np.polyfit(x, 0.5 * np.log(np.mean(rows ** 2, axis=1)), 1)[0])
    boots = np.array([slope(E[:, rng.integers(0, E.shape[1], E.shape[1])]) for _ in range(n_boot)])
    q = (1 - level) / 2
    return slope(E), (float(np.quantile(boots, q)), float(np.quantile(boots, 1 - q)))


def dt_study(seed: int = RNG_SEED, tokens: int = 16, paths: int = 32) -> dict:
    """L² strong error of Euler at Δt = T/n (n in COARSE) against Δt = T/FINE on the same tokens and path."""
    from riccati_verify.numeric.simulate.depth import strong_errors

    P, st = _example()
    E = strong_errors(P, st, tokens, TIME, SIGMA, FINE, COARSE, paths, seed=seed, scheme="euler")
    dts = [TIME / n for n in COARSE]
    slope, ci = _rms_slope(dts, E, np.random.default_rng([seed, 7]))
    return {"dt": dts, "fine_dt": TIME / FINE, "tokens": tokens, "paths": paths, "seed": seed,
            "rms_error": np.sqrt(np.mean(E ** 2, axis=1)), "slope": slope, "ci99": ci, "errors": E}


def n_study(seed: int = RNG_SEED, replicates: int = 6, steps: int = 128) -> dict:
    """Relative moment error of N tokens (Milstein) against the Gaussian moment SDE on the same path:
    |m_N − m|/√tr Σ + ‖Σ_N − Σ‖_F/‖Σ‖_F at T (scale-free: Σ carries the random factor e^{2σW})."""
    from riccati_verify.numeric.simulate.noise import simulate_common_noise
    from riccati_verify.numeric.simulate.rates import fit_power_law

    P, st = _example()
    errs = np.empty((len(N_GRID), replicates))
    ess = []
    for i, N in enumerate(N_GRID):
        for k in range(replicates):
            r = simulate_common_noise(P, st, int(N), TIME, steps, sigma=SIGMA, seed=seed + 100 * i + k,
                                      scheme="milstein")
            if r.blowup:
                raise ArithmeticError(r.reason)
            pm, pc = r.predicted_means[-1], r.predicted_covs[-1]
            errs[i, k] = float(np.linalg.norm(r.means[-1] - pm) / math.sqrt(np.trace(pc))
                               + np.linalg.norm(r.covs[-1] - pc) / np.linalg.norm(pc))
            ess.append(r.ess_median)
    fit = fit_power_law(N_GRID, errs)
    return {"N_grid": list(N_GRID), "replicates": replicates, "steps": steps, "seed": seed,
            "mean_error": errs.mean(axis=1), "slope": fit.slope, "ci99": fit.ci, "fit": fit, "errors": errs,
            "ess_median_min": float(min(ess))}


def numeric_check(seed: int = RNG_SEED) -> Verdict:
    """Fitted Δt-slope (99 % CI) contains 1/2 and N-slope contains −1/2.  At most CONFIRMED_NUMERICALLY."""
    dt, ns = dt_study(seed), n_study(seed)
    ev = {"dt": {k: v for k, v in dt.items() if k != "errors"},
          "N": {k: v for k, v in ns.items() if k not in ("fit", "errors")}, "sigma": SIGMA, "T": TIME}
    ok = dt["ci99"][0] <= 0.5 <= dt["ci99"][1] and ns["fit"].contains(-0.5)
    return Verdict(Status.CONFIRMED_NUMERICALLY if ok else Status.REFUTED, ev,
                   "pathwise Δt-slope (99 % CI) contains 1/2; moment-error N-slope contains −1/2")


def check() -> ProofResult:
    """Both routes, timed."""
    return timed(lambda: ProofResult(NAME, SEED, CLAIM, symbolic_check(), numeric_check()))


def hypotheses(problem, *, time=None):
    """The hypotheses above that concern a parameter file (`riccati-verify hypotheses`).

    The common-noise form σ(x − m)dW is the model itself (no condition on the file).  The initial
    law is the file's N(m0, Σ0) (Σ0 ⪰ 0, exactly).  'No blow-up on [0, T]' is decided rigorously
    for the noiseless moment flow only: with noise, Σ = e^{2Z}Σ̃ and Σ̃'s equation carries the random
    factor e^{2Z} in its quadratic term, so existence is a property of each path, not decided here."""
    from riccati_verify.certify.hypotheses import HypothesisCheck, gaussian_state, solution_exists_on_horizon

    params, state = problem.require_params(), problem.require_state()
    noise = HypothesisCheck(HYPOTHESES[0], True, {"model": "dx = v dt + sigma (x - m) dW, one W for all tokens"})
    return [noise, gaussian_state(state), solution_exists_on_horizon(params, state, time)]

"""The Riccati-reducible class V = vI (seed 000, MATH.md §7).

Theorem.  With V = vI and B_s = (B + Bᵀ)/2:

1. the covariance equation is the symmetric Riccati equation Σ̇ = AΣ + ΣAᵀ + 2vΣB_sΣ;
2. for invertible Σ, P = Σ⁻¹ solves the *linear* Lyapunov ODE Ṗ = −(AᵀP + PA) − 2vB_s, so
   P(t) = P* + e^{−Aᵀt}(P0 − P*)e^{−At} whenever AᵀP* + P*A = −2vB_s;
3. Radon's linearisation: if Ẋ = −AᵀX − 2vB_sY, Ẏ = AY, X(0) = I, Y(0) = Σ0, then
   Σ = YX⁻¹ solves the Riccati equation as long as X is invertible (Σ0 may be singular).

Symbolic route: sympy with generic entries (d = 2): (1) VΣBΣ + ΣBᵀΣVᵀ = 2vΣB_sΣ for symmetric Σ,
(2) −PΣ̇P = −(AᵀP + PA) − 2vB_s, (3) d/dt(YX⁻¹) = AΣ + ΣAᵀ + 2vΣB_sΣ with Σ = YX⁻¹ (the
derivative of X⁻¹ written as −X⁻¹ẊX⁻¹).  Numeric route (independent): DOP853 on the moment ODE vs
P(t)⁻¹ from the matrix-exponential formula (scipy expm) and vs the Radon pair, seeded random
instances, including a rank-deficient Σ0 for the Radon route.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp
from scipy.linalg import expm, solve_continuous_lyapunov

from riccati_verify.core.result import ProofResult, Status, Verdict, timed


NAME = "riccati_connection"
SEED = "000"
CLAIM = "V = vI: Σ̇ is a symmetric Riccati equation; P = Σ⁻¹ is linear (Lyapunov ODE); Σ = YX⁻¹ (Radon)"
HYPOTHESES = ["V = vI", "Σ(t) invertible for the P-form; X(t) invertible for the Radon form"]
RNG_SEED = 3


def _sym(name, d):
    return sp.Matrix(d, d, lambda i, j: sp.Symbol(f"{name}{min(i, j)}{max(i, j)}"))


def symbolic_check(d: int = 2) -> Verdict:
    """The symbolic route (sympy) of the Riccati connection."""
    from riccati_verify.proofs.stability import p_equation_identity

    A = sp.Matrix(d, d, sp.symbols(f"a0:{d * d}"))
    B = sp.Matrix(d, d, sp.symbols(f"b0:{d * d}"))
    S = _sym("s", d)
    v = sp.Symbol("v")
    Bs = (B + B.T) / 2
    V = v * sp.eye(d)
    ev = {"quadratic_term_is_2v_S_Bs_S": all(sp.expand(e) == 0 for e in
                                             (V * S * B * S + S * B.T * S * V.T - 2 * v * S * Bs * S))}
    ev["P_equation"] = p_equation_identity(d)
    X = sp.Matrix(d, d, sp.symbols(f"x0:{d * d}"))
    Y = sp.Matrix(d, d, sp.symbols(f"y0:{d * d}"))
    Xi = X.inv()
    Xdot = -A.T * X - 2 * v * Bs * Y
    Ydot = A * Y
    Sig = Y * Xi
    dSig = Ydot * Xi - Y * Xi * Xdot * Xi
    ev["radon"] = all(sp.simplify(e) == 0 for e in (dSig - (A * Sig + Sig * A.T + 2 * v * Sig * Bs * Sig)))
    ok = all(ev.values())
    return Verdict(Status.CERTIFIED if ok else Status.REFUTED, ev, f"sympy identities, generic d = {d}")


def numeric_check(seed: int = RNG_SEED) -> Verdict:
    """An independent numerical cross-check of the same identities."""
    from riccati_verify.numeric.flow import moment_rhs

    rng = np.random.default_rng(seed)
    cases, ok = [], True
    for k in range(4):
        d = 3
        A = rng.standard_normal((d, d)) * 0.5 + np.eye(d)
        B = rng.standard_normal((d, d)) * 0.5
        v = -0.7 if k % 2 == 0 else 0.3
        Bs = (B + B.T) / 2
        G = rng.standard_normal((d, d if k < 3 else 1))
        S0 = G @ G.T + (0.5 * np.eye(d) if k < 3 else 0)
        T = 0.4
        f = lambda t, y: moment_rhs(A, B, v * np.eye(d), np.zeros(d), np.zeros(d), y.reshape(d, d))[1].ravel()
        sol = solve_ivp(f, (0, T), S0.ravel(), method="DOP853", rtol=1e-12, atol=1e-14)
        entry = {"k": k, "v": v, "rank_S0": int(np.linalg.matrix_rank(S0))}
        if sol.status != 0 or not np.all(np.isfinite(sol.y)):
            # a blow-up before T (possible for indefinite vB_s): compare at half the stopping time
            T = 0.5 * float(sol.t[-1])
            entry["note"] = f"blow-up near t = {sol.t[-1]:.4g}; compared at t = {T:.4g}"
            sol = solve_ivp(f, (0, T), S0.ravel(), method="DOP853", rtol=1e-12, atol=1e-14)
        S_T = sol.y[:, -1].reshape(d, d)
        if k < 3:   # P-form, Σ0 invertible
            Pst = solve_continuous_lyapunov(A.T, -2 * v * Bs)
            E = expm(-A * T)
            P_T = Pst + E.T @ (np.linalg.inv(S0) - Pst) @ E
            err = float(np.abs(np.linalg.inv(P_T) - S_T).max() / np.abs(S_T).max())
            entry["rel_err_P_form"] = err
            ok &= err < 1e-9
        # Radon pair (also for the rank-deficient Σ0 of k = 3)
        H = np.block([[-A.T, -2 * v * Bs], [np.zeros((d, d)), A]])
        Z = expm(H * T) @ np.vstack([np.eye(d), S0])
        S_radon = Z[d:] @ np.linalg.inv(Z[:d])
        err_r = float(np.abs(S_radon - S_T).max() / np.abs(S_T).max())
        entry["rel_err_radon"] = err_r
        ok &= err_r < 1e-9   # DOP853 at rtol 1e-12 on a short horizon, O(1) condition numbers
        cases.append(entry)
    return Verdict(Status.CONFIRMED_NUMERICALLY if ok else Status.REFUTED, {"seed": seed, "cases": cases},
                   "moment ODE vs P(t)^-1 (expm formula) and vs the Radon pair")


def check() -> ProofResult:
    """Run both routes and combine them into one `ProofResult` (timed)."""
    return timed(lambda: ProofResult(NAME, SEED, CLAIM, symbolic_check(), numeric_check()))


def hypotheses(problem, *, time=None):
    """The hypotheses above, decided on a parameter file (`riccati-verify hypotheses`):
    V = vI exactly; Σ0 positive definite (so Σ(t) stays invertible while it exists, by rank
    invariance); and existence on [0, time] (X(t) invertible ⇔ no blow-up), proved rigorously."""
    from dataclasses import replace as _replace

    from riccati_verify.certify.hypotheses import solution_exists, sym_definiteness, v_is_scalar

    params, state = problem.require_params(), problem.require_state()
    # Σ0 is PSD (validated exactly on load): a definite symmetric part means positive definite
    pd = _replace(sym_definiteness(state.cov, "Σ0"), name="Σ0 positive definite")
    return [v_is_scalar(params), pd, solution_exists(params, state, time)]


__all__ = ["CLAIM", "HYPOTHESES", "NAME", "SEED", "check", "hypotheses", "numeric_check", "symbolic_check"]

"""Rank and inertia invariance (seed 000, MATH.md §3).

Theorem.  Let Φ̇ = J(t)Φ, Φ(0) = I, with J = A(t) + V(t)Σ(t)B(t).  Then
Σ(t) = Φ(t)Σ0Φ(t)ᵀ; since Φ(t) is invertible, rank Σ(t) = rank Σ0 and Σ(t) ⪰ 0
for all t and any (time-varying) controls, as long as the solution exists.

Symbolic route: Φ's entries are undefined functions, Φ̇ is replaced by JΦ, and
(ΦΣ0Φᵀ)' − (JΣ + ΣJᵀ) is shown to vanish identically (d = 1, 2, 3).  Invertibility of Φ:
Jacobi's formula (det Φ)' = tr J · det Φ is checked the same way (d = 1, 2, 3), so det Φ(t) =
exp(∫_0^t tr J) > 0 (Liouville).  Not machine-checked: that Σ(t) *is* ΦΣ0Φᵀ (uniqueness for the
locally Lipschitz moment ODE), and the linear algebra rank(MΣ0Mᵀ) = rank Σ0, MΣ0Mᵀ ⪰ 0 for
invertible M; and other dimensions than d = 1, 2, 3 (`evidence["scope"]`).

Numeric route: for seeded random piecewise-constant controls and
rank-deficient Σ0, integrate the moment ODE and, jointly, Φ̇ = JΦ; compare
Σ(t) with ΦΣ0Φᵀ and check that the numerical rank of Σ(t) stays rank Σ0.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from riccati_verify.numeric.flow import moment_rhs, numerical_rank
from riccati_verify.symbolic import moments
from riccati_verify.core.result import ProofResult, Status, Verdict, timed

__all__ = [
    "CLAIM", "HYPOTHESES", "NAME", "RNG_SEED", "RTOL", "SEED", "check", "covariance_and_flow_map",
    "hypotheses", "numeric_check", "random_controls", "symbolic_check",
]

NAME = "rank_invariance"
SEED = "000"
CLAIM = ("rank Σ(t) = rank Σ0 and Σ(t) ⪰ 0 for any time-varying controls, d = 1, 2, 3: Σ = ΦΣ0Φᵀ and "
         "(det Φ)' = tr J det Φ checked with symbolic entries (other d: same argument, not machine-checked)")
HYPOTHESES = ["the solution exists on [0, T] (no blow-up)"]
RNG_SEED = 7
RTOL = 1e-11


def symbolic_check(dims=(1, 2, 3)) -> Verdict:
    """Symbolic route: (ΦΣ0Φᵀ)' = JΣ + ΣJᵀ identically for each d in `dims`.

    CERTIFIED when every identity holds, REFUTED otherwise.
    """
    ev = {f"d={d}": moments.rank_invariance_identity(d) for d in dims}
    ev.update({f"d={d} Jacobi (det Φ)' = tr J det Φ": jacobi_identity(d) for d in dims})
    ok = all(ev.values())
    ev["scope"] = (f"d in {list(dims)} with symbolic entries; Σ(t) = ΦΣ0Φᵀ by uniqueness of the moment ODE's solution "
                   "and the rank/PSD step for invertible Φ are standard, not machine-checked")
    return Verdict(Status.CERTIFIED if ok else Status.REFUTED, ev,
                   "(ΦΣ0Φᵀ)' = JΣ + ΣJᵀ and (det Φ)' = tr J det Φ identically (Liouville: Φ invertible)")


def jacobi_identity(d: int, trace=None) -> bool:
    """(det Φ)' = tr J · det Φ for Φ̇ = JΦ, with Φ and J undefined functions of t (as in
    `moments.rank_invariance_identity`).  `trace` replaces tr (to show a wrong factor fails)."""
    import sympy as sp

    t = sp.Symbol("t", real=True)
    Phi = sp.Matrix(d, d, lambda i, j: sp.Function(f"Phi_{i + 1}{j + 1}")(t))
    J = sp.Matrix(d, d, lambda i, j: sp.Function(f"J_{i + 1}{j + 1}")(t))
    dPhi = J * Phi
    ddet = Phi.det().diff(t).subs({sp.Derivative(Phi[i, j], t): dPhi[i, j] for i in range(d) for j in range(d)})
    return sp.expand(ddet - (trace or (lambda M: M.trace()))(J) * Phi.det()) == 0


def random_controls(rng, d, pieces, scale=0.3):
    # Moderate norms keep cond(Φ) small, so that a numerical rank is meaningful at all.
    """Seeded random piecewise-constant controls (duration, A, B, V, b) for the numeric route."""
    return [(rng.uniform(0.1, 0.3), scale * rng.standard_normal((d, d)), scale * rng.standard_normal((d, d)),
             scale * rng.standard_normal((d, d)), rng.standard_normal(d)) for _ in range(pieces)]


def covariance_and_flow_map(controls, m0, S0, rtol=RTOL):
    """Integrate (m, Σ, Φ) jointly under piecewise-constant controls."""
    d = len(m0)
    y = np.concatenate([m0, S0.ravel(), np.eye(d).ravel()])
    for dur, A, B, V, b in controls:
        def f(t, y, A=A, B=B, V=V, b=b):
            m, S, Phi = y[:d], y[d:d + d * d].reshape(d, d), y[d + d * d:].reshape(d, d)
            dm, dS = moment_rhs(A, B, V, b, m, S)
            return np.concatenate([dm, dS.ravel(), ((A + V @ S @ B) @ Phi).ravel()])
        y = solve_ivp(f, (0, dur), y, method="DOP853", rtol=rtol, atol=rtol * 1e-2).y[:, -1]
    return y[d:d + d * d].reshape(d, d), y[d + d * d:].reshape(d, d)


def numeric_check(seed: int = RNG_SEED) -> Verdict:
    """Numeric cross-check: Σ(t) against ΦΣ0Φᵀ, and the numerical rank of Σ(t), under random controls.

    At most CONFIRMED_NUMERICALLY (floats prove nothing).
    """
    rng = np.random.default_rng(seed)
    cases = []
    ok = True
    for d, r in ((2, 1), (3, 1), (3, 2), (4, 2), (5, 3)):
        F = rng.standard_normal((d, r))
        S0 = F @ F.T
        controls, m0 = random_controls(rng, d, 4), rng.standard_normal(d)
        S, Phi = covariance_and_flow_map(controls, m0, S0)
        # The joint solve's global error, estimated a posteriori from the same solve at 100·RTOL
        # (whose own error this difference measures, and which bounds the RTOL run's), relative
        # to ‖Σ‖; rounding adds a few units of eps per entry of ΦΣ0Φᵀ, times cond(Φ)².
        S_l, Phi_l = covariance_and_flow_map(controls, m0, S0, rtol=100 * RTOL)
        e_int = float(max(np.linalg.norm(S_l - S), np.linalg.norm(Phi_l - Phi) * np.linalg.norm(Phi) * np.linalg.norm(S0))
                      / np.linalg.norm(S))
        cond_phi = float(np.linalg.cond(Phi))
        level = float(10 * (e_int + d * np.finfo(float).eps * cond_phi ** 2))
        gap = float(np.linalg.norm(S - Phi @ S0 @ Phi.T) / np.linalg.norm(S))
        # Eigenvalues below that error level count as zero; the case is informative only if the
        # r-th eigenvalue stands far (1e3×) above it, so a rank drop would be seen.
        w = np.sort(np.abs(np.linalg.eigvalsh((S + S.T) / 2)))[::-1] / np.linalg.norm(S, 2)
        rank = numerical_rank(S, rtol=level)
        min_eig = float(np.linalg.eigvalsh(S).min() / np.linalg.norm(S, 2))
        informative = bool(w[r - 1] > 1e3 * level)
        good = rank == r and gap < level and min_eig > -level and informative
        ok &= good
        cases.append({"d": d, "rank_sigma0": r, "rank_sigma_T": rank, "rel_gap_to_PhiS0PhiT": gap,
                      "min_eig_over_norm": min_eig, "cond_Phi": cond_phi, "integrator_error_estimate": e_int,
                      "error_level": level, "r-th_eigenvalue_over_norm": float(w[r - 1])})
    return Verdict(Status.CONFIRMED_NUMERICALLY if ok else Status.REFUTED, {"seed": seed, "cases": cases},
                   "moment ODE vs ΦΣ0Φᵀ under random piecewise-constant controls")


def check() -> ProofResult:
    """Run both routes, timed; `ProofResult.status` combines their verdicts into the theorem's."""
    return timed(lambda: ProofResult(NAME, SEED, CLAIM, symbolic_check(), numeric_check()))


def hypotheses(problem, *, time=None):
    """'The solution exists on [0, T]' (all t when time is None), decided rigorously
    (`riccati-verify hypotheses`); see `riccati_verify.certify.hypotheses.solution_exists`."""
    from riccati_verify.certify.hypotheses import solution_exists

    return [solution_exists(problem.require_params(), problem.require_state(), time)]

"""Checker for `lyapunov_stability` certificates: local asymptotic stability of an
equilibrium Σ* of the moment ODE, an explicit region of attraction, and
(optionally) that the certificate's initial state lies in it.

Claim:
    {"kind": "lyapunov_stability",
     "equilibrium": "positive_definite" | "zero" | "any",
     "mean_stable": bool,              # M = A + V + VΣ*B is Hurwitz, so m(t) → −M⁻¹b
     "initial_state_in_region": bool}  # the certificate's Σ0 converges to Σ*

Witness (exact rational strings):
    center, radius        the equilibrium ball (see check_equilibrium)
    X                     n×n symmetric, n = d(d+1)/2, on upper-triangle coordinates
    mu, xi                claimed:  −(LᵀX + XL) − μI ≻ 0  and  X − ξI ≻ 0,  μ, ξ > 0,
                          for L = DF(Σ) at every Σ of the ball (so at the true Σ*)
    eta, norm_V, norm_B   spectral-norm bounds, checked exactly as ηI − X ⪰ 0,
                          norm_V²I − VᵀV ⪰ 0, norm_B²I − BᵀB ⪰ 0
    Xm (if mean_stable)   d×d with Xm ≻ 0 and −(MᵀXm + XmM) ≻ 0 on the ball

Region of attraction.  With h the coordinates of H = Σ − Σ*, the exact
expansion F(Σ* + H) = DF(Σ*)[H] + VHBH + HBᵀHVᵀ and ‖q(h)‖ ≤ κ‖h‖²,
κ = 4·norm_V·norm_B (‖h‖ ≤ ‖H‖_F ≤ √2‖h‖ and ‖VHBH‖_F ≤ ‖V‖₂‖B‖₂‖H‖_F²), give for
W(h) = hᵀXh:
    Ẇ ≤ −μ‖h‖² + 2ηκ‖h‖³ < 0   for 0 < ‖h‖ < ρ := μ / (2ηκ),
so the sublevel set {W < ξρ²} lies in that ball, is forward invariant, and
every trajectory in it tends to Σ*.  The checker computes ρ and the level
itself; with κ = 0 (V = 0 or B = 0) the region is the whole space.
"""

from __future__ import annotations

import flint

from riccati_verify.checker import check_equilibrium as core
from riccati_verify.checker.verify import CheckResult, fmt_q

__all__ = ["MAX_LYAPUNOV_UNKNOWNS", "check", "lyapunov_form"]

CLAIM_KEYS = frozenset({"equilibrium", "mean_stable", "initial_state_in_region"})
"""The claim's keys besides `kind`; `verify_certificate` refuses any other."""
WITNESS_KEYS = frozenset({"center", "radius", "X", "Xm", "mu", "xi", "eta", "norm_V", "norm_B"})
"""The witness's keys (all routes); `verify_certificate` refuses any other."""

MAX_LYAPUNOV_UNKNOWNS = 136
"""d ≤ 16: the n × n products LᵀX of the check run in Python lists (n³ ≈ 2.5·10⁶ at d = 16;
a d = 33 certificate, n = 561, ran over 10 min)."""


def _sym_pd_over_ball(S_rows, exact_ok: bool) -> bool:
    return core.is_pd_exact(S_rows) if exact_ok else core.is_pd_ball(S_rows)


def lyapunov_form(L, X):
    """−(LᵀX + XL)."""
    LtX = core.mat_mul(core.mat_t(L), X)
    return [[-(LtX[i][j] + LtX[j][i]) for j in range(len(X))] for i in range(len(X))]


def check(claim: dict, problem, witness: dict) -> CheckResult:
    """Re-check one `lyapunov_stability` claim from its witness (the entry point `verify_certificate` calls)."""
    params = problem.require_params()
    d = params.dim
    n = d * (d + 1) // 2
    core.require_sym_size(d, MAX_LYAPUNOV_UNKNOWNS)
    A, B, V = core.q_matrix(params.A), core.q_matrix(params.B), core.q_matrix(params.V)
    center, radius = core.parse_equilibrium_witness(witness, d)

    kind = claim.get("equilibrium")
    if kind not in ("positive_definite", "zero", "any"):
        return CheckResult(False, "claim 'equilibrium' must be positive_definite, zero or any")
    mean_stable = claim.get("mean_stable")
    in_region = claim.get("initial_state_in_region")
    if not isinstance(mean_stable, bool) or not isinstance(in_region, bool):
        return CheckResult(False, "claim 'mean_stable' and 'initial_state_in_region' must be booleans")

    ok, why = core.verify_zero(A, B, V, center, radius)
    if not ok:
        return CheckResult(False, f"equilibrium: {why}")
    if kind == "zero" and (radius != 0 or any(x != 0 for r in center for x in r)):
        return CheckResult(False, "claim says the equilibrium is zero but the witness is not Σ = 0")
    if kind == "positive_definite" and not core.ball_is_pd(center, radius):
        return CheckResult(False, "the equilibrium ball is not certified positive definite")

    X = core.parse_matrix(witness["X"], n, "X")
    mu = core.parse_rational(witness["mu"], "mu")
    xi = core.parse_rational(witness["xi"], "xi")
    if not (mu > 0 and xi > 0):
        return CheckResult(False, "mu and xi must be positive")
    Xs = [[X[i][j] - (xi if i == j else 0) for j in range(n)] for i in range(n)]
    if not core.is_pd_exact(Xs):
        return CheckResult(False, "X - xi I is not positive definite (exact LDL^T)")

    exact_eq = radius == 0
    with flint.ctx.workprec(core.PREC):
        if exact_eq:
            S, Xr, Ar, Br, Vr = center, X, A, B, V
        else:
            S = core.sigma_ball(center, radius)
            Xr, Ar, Br, Vr = core.to_arb(X), core.to_arb(A), core.to_arb(B), core.to_arb(V)
        L = core.jacobian(Ar, Br, Vr, S)
        N = lyapunov_form(L, Xr)
        N = [[N[i][j] - (mu if i == j else 0) for j in range(n)] for i in range(n)]
        if not _sym_pd_over_ball(N, exact_eq):
            return CheckResult(False, "-(L^T X + X L) - mu I is not certified positive definite")

        notes = ["Sigma* locally asymptotically stable (L^T X + X L < -mu I)"]
        if mean_stable:
            Xm = core.parse_matrix(witness["Xm"], d, "Xm")
            if not core.is_pd_exact(Xm):
                return CheckResult(False, "Xm is not positive definite")
            M = core.mat_add(core.mat_add(Ar, Vr), core.mat_mul(core.mat_mul(Vr, S), Br))
            Xmr = Xm if exact_eq else core.to_arb(Xm)
            if not _sym_pd_over_ball(lyapunov_form(M, Xmr), exact_eq):
                return CheckResult(False, "-(M^T Xm + Xm M) is not certified positive definite")
            notes.append("M = A + V + V Sigma* B Hurwitz")

        if in_region:
            if problem.state is None:
                return CheckResult(False, "claim 'initial_state_in_region' needs a state in the certificate")
            eta = core.parse_rational(witness["eta"], "eta")
            nv = core.parse_rational(witness["norm_V"], "norm_V")
            nb = core.parse_rational(witness["norm_B"], "norm_B")
            if not (eta > 0 and nv >= 0 and nb >= 0):
                return CheckResult(False, "eta must be positive and the norm bounds non-negative")
            if not core.is_psd_exact([[(eta if i == j else 0) - X[i][j] for j in range(n)] for i in range(n)]):
                return CheckResult(False, "eta I - X is not positive semidefinite")
            for nm, c, M in (("norm_V", nv, V), ("norm_B", nb, B)):
                MtM = core.mat_mul(core.mat_t(M), M)
                if not core.is_psd_exact([[(c * c if i == j else 0) - MtM[i][j] for j in range(d)]
                                          for i in range(d)]):
                    return CheckResult(False, f"{nm}^2 I - M^T M is not positive semidefinite")
            S0 = core.q_matrix(problem.state.cov)
            idx = core.sym_pairs(d)
            if exact_eq:
                h = [S0[i][j] - center[i][j] for i, j in idx]
            else:
                h = [flint.arb(S0[i][j]) - S[i][j] for i, j in idx]
            W = sum((h[i] * X[i][j] * h[j] for i in range(n) for j in range(n)), 0 * h[0])
            kappa = 4 * nv * nb
            if kappa == 0:
                notes.append("quadratic term vanishes: the region of attraction is everything")
            else:
                rho = mu / (2 * eta * kappa)
                level = xi * rho * rho
                if not W < level:
                    return CheckResult(False, "the initial state is not certified inside the region of attraction")
                notes.append(f"initial state inside the region of attraction W < {fmt_q(level, 3)}")
    return CheckResult(True, "; ".join(notes))

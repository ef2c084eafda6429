"""Checker for `riccati_regime` certificates: global statements for the
Riccati-reducible class (MATH.md §7), proved through the linear equation for
P = Σ⁻¹.

Applies when the quadratic term is vI-type: V = vI (v may be 0), or V = 0, or
B = 0 (then v := 0).  For invertible Σ,  Ṗ = −(AᵀP + PA) − 2vB_s, and with
P* solving AᵀP* + P*A = −2vB_s,

    P(t) = P* + e^{−Aᵀt}(P0 − P*)e^{−At}
         = e^{−Aᵀt} P0 e^{−At} + ∫_0^t e^{−Aᵀs}(−2vB_s)e^{−As} ds.

Claim {"kind": "riccati_regime", "regime": R, "scope": S} with
  R = "equilibrium", S = "all_pd_states":  −A Hurwitz, −vB_s ⪰ 0, P* ≻ 0
      (second form: P(t) ≻ 0 for all t; first form: P(t) → P*), so Σ(t) → P*⁻¹.
  R = "equilibrium", S = "initial_state":   −A Hurwitz, P* ≻ 0, P0 − P* ⪰ 0
      (first form: P(t) ⪰ P* ≻ 0, P(t) → P*).
  R = "collapse",    S = "all_pd_states":   A Hurwitz, −vB_s ⪰ 0
      (second form: P(t) ⪰ e^{−Aᵀt}P0e^{−At} → ∞ in every direction), so Σ → 0.
  R = "collapse",    S = "initial_state":   A Hurwitz, P* ⪰ 0, P0 − P* ≻ 0.
  R = "growth",      S = "initial_state"/"all_pd_states":  vB_s = 0 (so F is linear,
      Σ(t) = e^{At}Σ0e^{Aᵀt}) and A has an eigenvalue with Re > ε ≥ 0, shown by a
      symmetric Y with (A − εI)ᵀY + Y(A − εI) = I and Y not negative semidefinite
      (Ostrowski–Schneider: In(A − εI) = In(Y)); witness "shift" = ε (default 0);
      then ‖Σ(t)‖ ≥ λ_min(Σ0)‖e^{At}‖² → ∞, with no blow-up.
"−A Hurwitz" / "A Hurwitz" are shown by the witness Y: AᵀY + YA = I (resp. −I)
exactly, and Y ≻ 0 (Lyapunov).  Witness: {"Y": d×d, "P_star": d×d} (P_star not
used for growth).  Both are pinned by exact equations, so a certificate is
bound to the parameters it was made for: changing A, B or v breaks them.
"""

from __future__ import annotations

import flint

from riccati_verify.checker import check_equilibrium as core
from riccati_verify.checker.verify import CheckResult

__all__ = ["check", "effective_v"]

CLAIM_KEYS = frozenset({"regime", "scope"})
"""The claim's keys besides `kind`; `verify_certificate` refuses any other."""
WITNESS_KEYS = frozenset({"Y", "P_star", "shift"})
"""The witness's keys (all routes); `verify_certificate` refuses any other."""


def _lyap(A, Y):
    """AᵀY + YA."""
    AtY = core.mat_mul(core.mat_t(A), Y)
    return [[AtY[i][j] + AtY[j][i] for j in range(len(A))] for i in range(len(A))]


def _neg(M):
    return [[-x for x in r] for r in M]


def effective_v(A, B, V):
    """v with VΣBΣ + ΣBᵀΣVᵀ = vΣ(B + Bᵀ)Σ for all Σ, or None when not of that form."""
    d = len(A)
    if all(x == 0 for r in V for x in r) or all(x == 0 for r in B for x in r):
        return flint.fmpq(0)
    v = V[0][0]
    if all(V[i][j] == (v if i == j else 0) for i in range(d) for j in range(d)):
        return v
    return None


def check(claim: dict, problem, witness: dict) -> CheckResult:
    """Re-check one `riccati_regime` claim from its witness (the entry point `verify_certificate` calls)."""
    params = problem.require_params()
    d = params.dim
    A, B, V = core.q_matrix(params.A), core.q_matrix(params.B), core.q_matrix(params.V)
    v = effective_v(A, B, V)
    if v is None:
        return CheckResult(False, "V is not a multiple of I (and neither V nor B is 0): not Riccati-reducible")
    regime, scope = claim.get("regime"), claim.get("scope")
    if regime not in ("equilibrium", "collapse", "growth") or scope not in ("all_pd_states", "initial_state"):
        return CheckResult(False, "claim needs regime in {equilibrium, collapse, growth} and scope in "
                                  "{all_pd_states, initial_state}")
    Bs = [[(B[i][j] + B[j][i]) / 2 for j in range(d)] for i in range(d)]
    vBs = [[v * x for x in r] for r in Bs]
    Y = core.parse_matrix(witness["Y"], d, "Y")
    if regime == "growth":
        eps = core.parse_rational(witness.get("shift", "0"), "shift")
        if eps < 0:
            return CheckResult(False, "shift must be non-negative")
        A = [[A[i][j] - (eps if i == j else 0) for j in range(d)] for i in range(d)]
    LY = _lyap(A, Y)
    sign = -1 if regime == "collapse" else 1
    if LY != [[flint.fmpq(sign if i == j else 0) for j in range(d)] for i in range(d)]:
        return CheckResult(False, f"Y does not solve A^T Y + Y A = {'-' if sign < 0 else ''}I exactly")

    P0 = None
    if scope == "initial_state":
        if problem.state is None:
            return CheckResult(False, "scope 'initial_state' needs a state in the certificate")
        S0 = core.q_matrix(problem.state.cov)
        if not core.is_pd_exact(S0):
            return CheckResult(False, "the initial covariance is not positive definite")
        P0 = (flint.fmpq_mat(S0).inv()).tolist()

    def p_star():
        P = core.parse_matrix(witness["P_star"], d, "P_star")
        rhs = [[-2 * x for x in r] for r in vBs]
        if _lyap(A, P) != rhs:
            raise _Fail("P_star does not solve A^T P + P A = -2 v B_s exactly")
        return P

    try:
        if regime == "growth":
            if any(x != 0 for r in vBs for x in r):
                return CheckResult(False, "growth certificate needs v B_s = 0 (a linear covariance flow)")
            if core.is_psd_exact(_neg(Y)):
                return CheckResult(False, "Y is negative semidefinite: no eigenvalue with Re > 0 shown")
            return CheckResult(True, "F is linear and A has an eigenvalue with Re > 0: ||Sigma(t)|| -> infinity "
                                     "exponentially, no finite-time blow-up")
        if not core.is_pd_exact(Y):
            return CheckResult(False, "Y is not positive definite")
        if regime == "equilibrium":
            if not core.is_pd_exact(LY):
                return CheckResult(False, "A^T Y + Y A is not positive definite: -A not shown Hurwitz")
            P = p_star()
            if not core.is_pd_exact(P):
                return CheckResult(False, "P_star is not positive definite")
            if scope == "all_pd_states":
                if not core.is_psd_exact(_neg(vBs)):
                    return CheckResult(False, "-v B_s is not positive semidefinite")
            elif not core.is_psd_exact([[P0[i][j] - P[i][j] for j in range(d)] for i in range(d)]):
                return CheckResult(False, "P0 - P_star is not positive semidefinite")
            return CheckResult(True, "P(t) stays positive definite and tends to P_star: Sigma(t) -> P_star^-1")
        # collapse
        if not core.is_pd_exact(_neg(LY)):
            return CheckResult(False, "A^T Y + Y A is not negative definite: A not shown Hurwitz")
        P = p_star()
        if scope == "all_pd_states":
            if not core.is_psd_exact(_neg(vBs)):
                return CheckResult(False, "-v B_s is not positive semidefinite")
        else:
            if not core.is_psd_exact(P):
                return CheckResult(False, "P_star is not positive semidefinite")
            if not core.is_pd_exact([[P0[i][j] - P[i][j] for j in range(d)] for i in range(d)]):
                return CheckResult(False, "P0 - P_star is not positive definite")
        return CheckResult(True, "P(t) stays positive definite and grows without bound: Sigma(t) -> 0")
    except _Fail as e:
        return CheckResult(False, str(e))


class _Fail(Exception):
    pass

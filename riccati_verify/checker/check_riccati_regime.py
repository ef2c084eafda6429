"""Checker for `riccati_regime` certificates: global statements for the
Riccati-reducible class (MATH.md §7), proved through the linear equation for
P = Σ⁻¹.

Applies when the quadratic term is vI-type: V = vI (v may be 0), or V = 0, or
B = 0 (then v := 0).  For invertible Σ,  Ṗ = −(AᵀP + PA) − 2vB_s, and with
P* solving AᵀP* + P*A = −2vB_s,

    P(t) = P* + e^{−Aᵀt}(P0 − P*)e^{−At}
         = e^{−Aᵀt} P0 e^{−At} + ∫_0^t e^{−Aᵀs}(−2vB_s)e^{−As} ds.

Σ(t) = P(t)⁻¹ exists exactly while P(t) ≻ 0, and ‖Σ(t)‖ = 1/λ_min(P(t)), so Σ
blows up in finite time iff P(t) stops being positive definite at a finite time.

Claim {"kind": "riccati_regime", "regime": R, "scope": S} with
  R = "equilibrium", S = "all_pd_states":  −A Hurwitz, −vB_s ⪰ 0, P* ≻ 0
      (second form: P(t) ≻ 0 for all t; first form: P(t) → P*), so Σ(t) → P*⁻¹.
  R = "equilibrium", S = "initial_state":   −A Hurwitz, P* ≻ 0, P0 − P* ⪰ 0
      (first form: P(t) ⪰ P* ≻ 0, P(t) → P*).
  R = "collapse",    S = "all_pd_states":   A Hurwitz, −vB_s ⪰ 0
      (second form: P(t) ⪰ e^{−Aᵀt}P0e^{−At} → ∞ in every direction), so Σ → 0;
      or A = 0 and −vB_s ≻ 0 (P(t) = P0 − 2tvB_s → ∞ in every direction; empty witness).
  R = "collapse",    S = "initial_state":   A Hurwitz, P* ⪰ 0, P0 − P* ≻ 0.
  R = "growth",      S = "initial_state"/"all_pd_states":  vB_s = 0 (so F is linear,
      Σ(t) = e^{At}Σ0e^{Aᵀt}) and A has an eigenvalue with Re > ε ≥ 0, shown by a
      symmetric Y with (A − εI)ᵀY + Y(A − εI) = I and Y not negative semidefinite
      (Ostrowski–Schneider: In(A − εI) = In(Y)); witness "shift" = ε (default 0);
      then ‖Σ(t)‖ ≥ λ_min(Σ0)‖e^{At}‖² → ∞, with no blow-up.
  R = "blowup" (finite-time blow-up; no bound on T* is claimed), by one of
      A = 0 (empty witness, any scope): P(t) = P0 − 2tvB_s, and vB_s has a positive
          eigenvalue (exact inertia): xᵀP(t)x → −∞ along its eigenvector x, so P(t)
          turns singular at a finite time, for every P0 ≻ 0;
      AᵀY + YA = I, Y ≻ 0 (−A Hurwitz; any scope), and P* has a negative eigenvalue
          (exact inertia): e^{−At} → 0, so P(t) → P* and P(t) turns singular at a
          finite time, for every P0 ≻ 0;
      AᵀY + YA = −I, Y ≻ 0 (A Hurwitz; S = "initial_state"), and P0 − P* has a
          negative eigenvalue, direction x: with y(t) = e^{At}x → 0,
          y(t)ᵀP(t)y(t) = y(t)ᵀP*y(t) + xᵀ(P0 − P*)x turns negative.
"−A Hurwitz" / "A Hurwitz" are shown by the witness Y: AᵀY + YA = I (resp. −I)
exactly, and Y ≻ 0 (Lyapunov).  Witness: {"Y": d×d, "P_star": d×d} (P_star not
used for growth; neither for the A = 0 routes, whose witness is empty).  Both are
pinned by exact equations, so a certificate is bound to the parameters it was
made for: changing A, B or v breaks them.  The Lyapunov equations are checked on
denominator-cleared integer matrices, refused past `check_equilibrium.MAX_PRODUCT_WORK`.
"""

from __future__ import annotations

from fractions import Fraction

import flint

from riccati_verify.core import exact
from riccati_verify.checker import check_equilibrium as core
from riccati_verify.checker.verify import CheckResult

__all__ = ["check", "effective_v"]

CLAIM_KEYS = frozenset({"regime", "scope"})
"""The claim's keys besides `kind`; `verify_certificate` refuses any other."""
WITNESS_KEYS = frozenset({"Y", "P_star", "shift"})
"""The witness's keys (all routes); `verify_certificate` refuses any other."""
REGIMES = ("equilibrium", "collapse", "growth", "blowup")

def _lyapunov(A, X):
    """AᵀX + XA exactly for a symmetric X (Y and P_star are parsed symmetric): XA = (AᵀX)ᵀ, so one
    product within the shared budget (`check_equilibrium.exact_matmul`)."""
    AtX = core.exact_matmul(core.mat_t(A), X)
    return core.mat_add(AtX, core.mat_t(AtX))


def _neg(M):
    return [[-x for x in r] for r in M]


def _sub(X, Y):
    return [[a - b for a, b in zip(r, s)] for r, s in zip(X, Y)]


def _inertia(M) -> tuple[int, int, int]:
    """Exact inertia by the trusted core's bounded elimination (`exact.ldl_inertia`)."""
    return exact.ldl_inertia(tuple(tuple(Fraction(int(x.p), int(x.q)) for x in r) for r in M))


def effective_v(A, B, V):
    """v with VΣBΣ + ΣBᵀΣVᵀ = vΣ(B + Bᵀ)Σ for all Σ, or None when not of that form."""
    d = len(A)
    if all(x == 0 for r in V for x in r) or all(x == 0 for r in B for x in r):
        return flint.fmpq(0)
    v = V[0][0]
    if all(V[i][j] == (v if i == j else 0) for i in range(d) for j in range(d)):
        return v
    return None


def _a_zero(regime: str, vBs, witness: dict) -> CheckResult:
    """The A = 0 routes: P(t) = P0 − 2t·vB_s exactly, for every P0 ≻ 0."""
    if witness:
        return CheckResult(False, f"the A = 0 route reads no witness; got {sorted(witness)}")
    if regime == "blowup":
        if _inertia(vBs)[0] == 0:
            return CheckResult(False, "A = 0 but v B_s has no positive eigenvalue: P(t) = P0 - 2tvB_s stays PD")
        return CheckResult(True, "A = 0 and v B_s has a positive eigenvalue (exact inertia): P(t) = P0 - 2tvB_s "
                                 "turns singular at a finite time, so Sigma blows up")
    if regime == "collapse":
        if not core.is_pd_exact(_neg(vBs)):
            return CheckResult(False, "A = 0 but -v B_s is not positive definite")
        return CheckResult(True, "A = 0 and -v B_s > 0: P(t) = P0 - 2tvB_s grows without bound, Sigma(t) -> 0")
    return CheckResult(False, f"the A = 0 route proves blowup or collapse, not {regime}")


def check(claim: dict, problem, witness: dict) -> CheckResult:
    """Re-check one `riccati_regime` claim from its witness (the entry point `verify_certificate` calls)."""
    params = problem.require_params()
    d = params.dim
    A, B, V = core.q_matrix(params.A), core.q_matrix(params.B), core.q_matrix(params.V)
    v = effective_v(A, B, V)
    if v is None:
        return CheckResult(False, "V is not a multiple of I (and neither V nor B is 0): not Riccati-reducible")
    regime, scope = claim.get("regime"), claim.get("scope")
    if regime not in REGIMES or scope not in ("all_pd_states", "initial_state"):
        return CheckResult(False, f"claim needs regime in {{{', '.join(REGIMES)}}} and scope in "
                                  "{all_pd_states, initial_state}")
    Bs = [[(B[i][j] + B[j][i]) / 2 for j in range(d)] for i in range(d)]
    vBs = [[v * x for x in r] for r in Bs]

    P0 = None
    if scope == "initial_state":
        if problem.state is None:
            return CheckResult(False, "scope 'initial_state' needs a state in the certificate")
        S0 = core.q_matrix(problem.state.cov)
        if not core.is_pd_exact(S0):
            return CheckResult(False, "the initial covariance is not positive definite")
        P0 = (flint.fmpq_mat(S0).inv()).tolist()
    if all(x == 0 for r in A for x in r) and regime in ("blowup", "collapse") and "Y" not in witness:
        return _a_zero(regime, vBs, witness)

    # a key the route does not read is refused, not ignored: a certificate must not carry a shift or a P*
    # that looks used (final read, session 18)
    unread = set(witness) & ({"P_star"} if regime == "growth" else {"shift"})
    if unread:
        return CheckResult(False, f"a {regime} certificate does not read the witness keys {sorted(unread)}")
    Y = core.parse_matrix(witness["Y"], d, "Y")
    if regime == "growth":
        eps = core.parse_rational(witness.get("shift", "0"), "shift")
        if eps < 0:
            return CheckResult(False, "shift must be non-negative")
        A = [[A[i][j] - (eps if i == j else 0) for j in range(d)] for i in range(d)]
    LY = _lyapunov(A, Y)
    plus_I = LY == [[flint.fmpq(1 if i == j else 0) for j in range(d)] for i in range(d)]
    minus_I = LY == [[flint.fmpq(-1 if i == j else 0) for j in range(d)] for i in range(d)]
    if regime == "blowup":
        sign = 1 if plus_I else -1
    else:
        sign = -1 if regime == "collapse" else 1
    if not (plus_I if sign > 0 else minus_I):
        want = "I or -I" if regime == "blowup" else ("-I" if sign < 0 else "I")
        return CheckResult(False, f"Y does not solve A^T Y + Y A = {want} exactly")

    def p_star():
        P = core.parse_matrix(witness["P_star"], d, "P_star")
        if _lyapunov(A, P) != [[-2 * x for x in r] for r in vBs]:
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
        # Y ≻ 0 with AᵀY + YA = ±I is Lyapunov's proof that ∓A is Hurwitz
        if not core.is_pd_exact(Y):
            return CheckResult(False, "Y is not positive definite")
        P = p_star()
        if regime == "blowup":
            if sign > 0:
                if _inertia(P)[1] == 0:
                    return CheckResult(False, "P_star has no negative eigenvalue: no blow-up shown")
                return CheckResult(True, "-A Hurwitz and P_star has a negative eigenvalue (exact inertia): P(t) "
                                         "-> P_star turns singular at a finite time, so Sigma blows up from every "
                                         "PD state")
            if P0 is None:
                return CheckResult(False, "with A Hurwitz, blow-up depends on Sigma0: scope must be 'initial_state'")
            if _inertia(_sub(P0, P))[1] == 0:
                return CheckResult(False, "P0 - P_star has no negative eigenvalue: no blow-up shown")
            return CheckResult(True, "A Hurwitz and P0 - P_star has a negative eigenvalue (exact inertia): P(t) "
                                     "turns singular at a finite time, so Sigma blows up")
        if regime == "equilibrium":
            if not core.is_pd_exact(P):
                return CheckResult(False, "P_star is not positive definite")
            if scope == "all_pd_states":
                if not core.is_psd_exact(_neg(vBs)):
                    return CheckResult(False, "-v B_s is not positive semidefinite")
            elif not core.is_psd_exact(_sub(P0, P)):
                return CheckResult(False, "P0 - P_star is not positive semidefinite")
            return CheckResult(True, "P(t) stays positive definite and tends to P_star: Sigma(t) -> P_star^-1")
        # collapse
        if scope == "all_pd_states":
            if not core.is_psd_exact(_neg(vBs)):
                return CheckResult(False, "-v B_s is not positive semidefinite")
        else:
            if not core.is_psd_exact(P):
                return CheckResult(False, "P_star is not positive semidefinite")
            if not core.is_pd_exact(_sub(P0, P)):
                return CheckResult(False, "P0 - P_star is not positive definite")
        return CheckResult(True, "P(t) stays positive definite and grows without bound: Sigma(t) -> 0")
    except _Fail as e:
        return CheckResult(False, str(e))


class _Fail(Exception):
    pass

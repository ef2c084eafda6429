"""Checker for `cone_collapse` certificates: Σ(t) → 0 from the certificate's initial state,
for any V, B, using the invariance of the PSD cone (MATH.md §3) and a *linear* Lyapunov function.

Claim:   {"kind": "cone_collapse"}
Witness: P (d×d symmetric) with AᵀP + PA = −I exactly (so A is Hurwitz and P ≻ 0),
         lam > 0 with P − lam·I ⪰ 0,
         norm_PV, norm_B with norm_PV²I − (PV)ᵀ(PV) ⪰ 0 and norm_B²I − BᵀB ⪰ 0  (spectral bounds).

Argument.  w = tr(PΣ), s = tr Σ.  Since Σ ⪰ 0 for all t, ‖Σ‖_F ≤ s and lam·s ≤ w.  Then
    ẇ = tr((PA + AᵀP)Σ) + tr(PVΣBΣ) + tr(VᵀPΣBᵀΣ) ≤ −s + 2k s²,   k = norm_PV·norm_B
(|tr(XY)| ≤ ‖X‖_F‖Y‖_F, ‖PVΣ‖_F ≤ ‖PV‖₂‖Σ‖_F).  If w(0) < lam/(2k) then s < 1/(2k) while w
stays below w(0), so ẇ < 0: w decreases, s ≤ w/lam stays bounded (no blow-up), and
ẇ ≤ −(1 − 2k·w(0)/lam)·s ≤ −c·w with c > 0, so w → 0 and Σ(t) → 0.  With k = 0 the
condition is void.  The checker verifies everything exactly in rationals.
"""

from __future__ import annotations

import flint

from riccati_verify.checker import check_equilibrium as core
from riccati_verify.checker.verify import CheckResult, fmt_q

__all__ = ["check"]

CLAIM_KEYS: frozenset = frozenset()
"""The claim's keys besides `kind`; `verify_certificate` refuses any other."""
WITNESS_KEYS = frozenset({"P", "lam", "norm_PV", "norm_B"})
"""The witness's keys (all routes); `verify_certificate` refuses any other."""


def check(claim: dict, problem, witness: dict) -> CheckResult:
    """Re-check one `cone_collapse` claim from its witness (the entry point `verify_certificate` calls)."""
    params = problem.require_params()
    if problem.state is None:
        return CheckResult(False, "a cone_collapse certificate needs the initial state")
    d = params.dim
    A, B, V = core.q_matrix(params.A), core.q_matrix(params.B), core.q_matrix(params.V)
    S0 = core.q_matrix(problem.state.cov)
    P = core.parse_matrix(witness["P"], d, "P")
    lam = core.parse_rational(witness["lam"], "lam")
    npv = core.parse_rational(witness["norm_PV"], "norm_PV")
    nb = core.parse_rational(witness["norm_B"], "norm_B")
    if not (lam > 0 and npv >= 0 and nb >= 0):
        return CheckResult(False, "lam must be positive and the norm bounds non-negative")
    AtP = core.mat_mul(core.mat_t(A), P)
    if [[AtP[i][j] + AtP[j][i] for j in range(d)] for i in range(d)] != \
            [[flint.fmpq(-1 if i == j else 0) for j in range(d)] for i in range(d)]:
        return CheckResult(False, "P does not solve A^T P + P A = -I exactly")
    if not core.is_psd_exact([[P[i][j] - (lam if i == j else 0) for j in range(d)] for i in range(d)]):
        return CheckResult(False, "P - lam I is not positive semidefinite")
    PV = core.mat_mul(P, V)
    for nm, c, M in (("norm_PV", npv, PV), ("norm_B", nb, B)):
        MtM = core.mat_mul(core.mat_t(M), M)
        if not core.is_psd_exact([[(c * c if i == j else 0) - MtM[i][j] for j in range(d)] for i in range(d)]):
            return CheckResult(False, f"{nm}^2 I - M^T M is not positive semidefinite")
    w0 = sum((P[i][j] * S0[j][i] for i in range(d) for j in range(d)), flint.fmpq(0))
    k = npv * nb
    if k != 0 and not 2 * k * w0 < lam:
        return CheckResult(False, "tr(P Sigma0) is not below lam / (2 norm_PV norm_B)")
    return CheckResult(True, f"A Hurwitz and tr(P Sigma0) = {fmt_q(w0)} < lam/(2k) = "
                             f"{fmt_q(lam / (2 * k)) if k else 'inf'}: Sigma(t) -> 0")

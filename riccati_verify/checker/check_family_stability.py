"""Checker for `family_stability` certificates: robust local stability over a box (MATH.md §5).

For every member θ of the box (any V, not only vI) the Bernoulli map F_θ(Σ) = AΣ + ΣAᵀ +
VΣBΣ + ΣBᵀΣVᵀ has exactly one zero Σ*(θ) in the witness ball {|Σ_ij − c_ij| ≤ r}, and one
common quadratic Lyapunov function W(h) = hᵀXh (h the upper-triangle coordinates of
Σ − Σ*) proves every Σ*(θ) locally asymptotically stable.

  1. Parametric Krawczyk: `check_equilibrium.verify_zero` run with A, B, V as ball matrices
     containing the box.  Its operator K = c − Y G(c; Θ) + (I − Y G'(ball; Θ))(ball − c)
     contains K_θ of every single member, so K ⊂ int(ball) proves the zero for each θ.
  2. X ≻ 0 exactly, μ > 0, and −(LᵀX + XL) − μI ≻ 0 in balls for L = DF(Σ; θ) over the
     equilibrium ball and the box: the remainder of a non-affine dependence on θ and Σ is
     inside the balls, so no vertex argument is needed.
  3. With "equilibrium": "positive_definite", every matrix of the ball is ≻ 0.

Claim {"kind": "family_stability", "equilibrium": "positive_definite" | "any"}; witness
{"center", "radius" (> 0), "X" (n×n, n = d(d+1)/2), "mu"}.
"""

from __future__ import annotations

import flint

from riccati_verify.core import balls
from riccati_verify.checker import check_equilibrium as core
from riccati_verify.checker._family import ball
from riccati_verify.checker.check_lyapunov_stability import lyapunov_form
from riccati_verify.checker.verify import CheckResult

__all__ = ["check"]

FAMILY = True
"""The params are an interval box (`core.io.box_from_dict`), not one model."""
CLAIM_KEYS = frozenset({"equilibrium"})
"""The claim's keys besides `kind`; `verify_certificate` refuses any other."""
WITNESS_KEYS = frozenset({"center", "radius", "X", "mu"})
"""The equilibrium ball and the common Lyapunov matrix with its margin."""


def check(claim: dict, box, witness: dict) -> CheckResult:
    """Re-check one `family_stability` claim over every member of the box."""
    kind = claim.get("equilibrium")
    if kind not in ("positive_definite", "any"):
        return CheckResult(False, "claim 'equilibrium' must be positive_definite or any")
    d = box.dim
    n = d * (d + 1) // 2
    center, radius = core.parse_equilibrium_witness(witness, d)
    if not radius > 0:
        return CheckResult(False, "a family's equilibrium ball needs a positive radius")
    with flint.ctx.workprec(core.PREC):
        Ab, Bb, Vb = ([[ball(x) for x in r] for r in getattr(box, nm)] for nm in ("A", "B", "V"))
        ok, why = core.verify_zero(Ab, Bb, Vb, center, radius)
    if not ok:
        return CheckResult(False, f"equilibrium for every member: {why}")
    if kind == "positive_definite" and not core.ball_is_pd(center, radius):
        return CheckResult(False, "the equilibrium ball is not certified positive definite")
    X = core.parse_matrix(witness["X"], n, "X")
    mu = core.parse_rational(witness["mu"], "mu")
    if not mu > 0:
        return CheckResult(False, "mu must be positive")
    if not core.is_pd_exact(X):
        return CheckResult(False, "X is not positive definite (exact)")
    with flint.ctx.workprec(core.PREC):
        L = core.jacobian(Ab, Bb, Vb, core.sigma_ball(center, radius))
        N = lyapunov_form(L, core.to_arb(X))
        N = flint.arb_mat([[N[i][j] - (mu if i == j else 0) for j in range(n)] for i in range(n)])
        if not balls.proves_positive_definite(balls.congruence_preconditioned(N)[0]):
            return CheckResult(False, "-(L^T X + X L) - mu I is not certified positive definite over the box")
    return CheckResult(True, "every member has exactly one equilibrium in the ball"
                             + (" (positive definite)" if kind == "positive_definite" else "")
                             + ", locally asymptotically stable by one common Lyapunov matrix X")

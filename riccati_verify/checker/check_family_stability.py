"""Checker for `family_stability` certificates: robust local stability over a box (MATH.md §5).

For every member θ of the box (any V, not only vI) the Bernoulli map F_θ(Σ) = AΣ + ΣAᵀ +
VΣBΣ + ΣBᵀΣVᵀ has exactly one zero Σ*(θ) in a witness ball {|Σ_ij − c_ij| ≤ r}, and one
common quadratic Lyapunov function W(h) = hᵀXh (h the upper-triangle coordinates of
Σ − Σ*) proves every Σ*(θ) of the ball's members locally asymptotically stable.

  1. Parametric Krawczyk: `check_equilibrium.verify_zero` run with A, B, V as ball matrices
     containing the box.  Its operator K = c − Y G(c; Θ) + (I − Y G'(ball; Θ))(ball − c)
     contains K_θ of every single member, so K ⊂ int(ball) proves the zero for each θ.
  2. X ≻ 0 exactly, μ > 0, and −(LᵀX + XL) − μI ≻ 0 in balls for L = DF(Σ; θ) over the
     equilibrium ball and the box: the remainder of a non-affine dependence on θ and Σ is
     inside the balls, so no vertex argument is needed.
  3. With "equilibrium": "positive_definite", every matrix of the ball is ≻ 0.

Subdivision: a witness {"splits": {key: pieces}, "cells": [cell, ...]} cuts the A, B, V
entries uniformly (`ParamBox.split`, a partition of the box, so the sub-boxes cover it) and
gives one cell {"center", "radius", "X", "mu"} per sub-box, in the order of `split`; steps 1-3
are checked on each sub-box with its own cell.  The claim then holds for every member of
the union, i.e. of the box: each member has a locally asymptotically stable equilibrium (in
the ball of a sub-box that contains it).

Claim {"kind": "family_stability", "equilibrium": "positive_definite" | "any"}; witness
{"center", "radius" (> 0), "X" (n×n, n = d(d+1)/2), "mu"}, or {"splits", "cells"}.
"""

from __future__ import annotations

import flint

from riccati_verify.core import balls
from riccati_verify.checker import check_equilibrium as core
from riccati_verify.checker._family import ball, split_pieces
from riccati_verify.checker._reduced_riccati import WitnessError, witness_checked
from riccati_verify.checker.check_lyapunov_stability import lyapunov_form
from riccati_verify.checker.verify import CheckResult

__all__ = ["check"]

FAMILY = True
"""The params are an interval box (`core.io.box_from_dict`), not one model."""
CLAIM_KEYS = frozenset({"equilibrium"})
"""The claim's keys besides `kind`; `verify_certificate` refuses any other."""
WITNESS_KEYS = frozenset({"center", "radius", "X", "mu", "splits", "cells"})
"""The equilibrium ball and the common Lyapunov matrix with its margin (one cell), or a
uniform subdivision with one such cell per sub-box."""

CELL_KEYS = frozenset({"center", "radius", "X", "mu"})
MAX_CELLS = 256
"""Most cells of a subdivided witness: each costs one Krawczyk test and one ball Lyapunov test
(up to about a second at d = 2 on a loaded machine), so the check's work stays bounded."""


def check(claim: dict, box, witness: dict) -> CheckResult:
    """Re-check one `family_stability` claim over every member of the box."""
    return witness_checked(_check, claim, box, witness)


def _check(claim: dict, box, witness: dict) -> CheckResult:
    kind = claim.get("equilibrium")
    if kind not in ("positive_definite", "any"):
        return CheckResult(False, "claim 'equilibrium' must be positive_definite or any")
    if "cells" not in witness and "splits" not in witness:
        why = _check_cell(kind, box, witness)
        return CheckResult(why is None, why or (
            "every member has exactly one equilibrium in the ball" + (" (positive definite)" if kind ==
            "positive_definite" else "") + ", locally asymptotically stable by one common Lyapunov matrix X"))
    if CELL_KEYS & set(witness):
        raise WitnessError("a subdivided witness has splits and cells only (each cell its own ball and X)")
    pieces = split_pieces(box, witness.get("splits"), MAX_CELLS)
    cells = witness.get("cells")
    if not isinstance(cells, list) or len(cells) != len(pieces):
        raise WitnessError(f"cells must be a list of {len(pieces)} cells, one per sub-box of the splits")
    for n, (sub, cell) in enumerate(zip(pieces, cells)):
        if not isinstance(cell, dict) or set(cell) != CELL_KEYS:
            raise WitnessError(f"cell {n} must have exactly the keys {sorted(CELL_KEYS)}")
        why = _check_cell(kind, sub, cell)
        if why is not None:
            return CheckResult(False, f"sub-box {n}: {why}")
    return CheckResult(True, "every member has a locally asymptotically stable equilibrium"
                             + (" (positive definite)" if kind == "positive_definite" else "")
                             + f": {len(pieces)} sub-boxes, each with one equilibrium ball and one common "
                               "Lyapunov matrix")


def _check_cell(kind: str, box, witness: dict) -> str | None:
    """None when the ball and X of `witness` prove steps 1-3 on `box`, else the reason."""
    d = box.dim
    n = d * (d + 1) // 2
    center, radius = core.parse_equilibrium_witness(witness, d)
    if not radius > 0:
        return "a family's equilibrium ball needs a positive radius"
    with flint.ctx.workprec(core.PREC):
        Ab, Bb, Vb = ([[ball(x) for x in r] for r in getattr(box, nm)] for nm in ("A", "B", "V"))
        ok, why = core.verify_zero(Ab, Bb, Vb, center, radius)
    if not ok:
        return f"equilibrium for every member: {why}"
    if kind == "positive_definite" and not core.ball_is_pd(center, radius):
        return "the equilibrium ball is not certified positive definite"
    X = core.parse_matrix(witness["X"], n, "X")
    mu = core.parse_rational(witness["mu"], "mu")
    if not mu > 0:
        return "mu must be positive"
    if not core.is_pd_exact(X):
        return "X is not positive definite (exact)"
    with flint.ctx.workprec(core.PREC):
        L = core.jacobian(Ab, Bb, Vb, core.sigma_ball(center, radius))
        N = lyapunov_form(L, core.to_arb(X))
        N = flint.arb_mat([[N[i][j] - (mu if i == j else 0) for j in range(n)] for i in range(n)])
        if not balls.proves_positive_definite(balls.congruence_preconditioned(N)[0]):
            return "-(L^T X + X L) - mu I is not certified positive definite over the box"
    return None

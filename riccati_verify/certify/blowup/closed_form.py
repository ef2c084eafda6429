"""Closed-form blow-up times (MATH.md §6-7), in mpmath and, where rigorous, in arb.

- d = 1 and diagonal decoupled systems (A, B, V, Σ0 all diagonal): each
  coordinate solves σ̇ = 2aσ + 2vβσ², which blows up iff c = vβσ0 > 0 and
  a + c > 0, at T = ln(1 + a/c)/(2a) (T = 1/(2c) for a = 0); T* is the least.
- A = 0, V = vI: N(t) = D⁻¹ - 2vt CᵀB_sC, so T* = 1/(2 λ_max(v B_s Σ0)) when
  that eigenvalue is positive, and there is no blow-up otherwise.  (MATH.md
  writes 1/(2v λ_max(B_sΣ0)), which is the same for v > 0 only.)
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import mpmath
from flint import arb

from riccati_verify.core import balls, exact
from riccati_verify.core.bernoulli import scalar_blowup_time as _bernoulli_time
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.certify.blowup.radon import psd_factor

__all__ = ["ClosedForm", "closed_form_blowup_time", "diagonal_blowup_ball", "is_diagonal_decoupled",
           "scalar_blowup_time", "scalar_coefficients"]


@dataclass(frozen=True)
class ClosedForm:
    """A closed-form blow-up time; value None means no blow-up at any time."""

    kind: str                  # "diagonal" (includes d = 1) or "A=0"
    value: mpmath.mpf | None


def _is_diagonal(M: exact.Matrix) -> bool:
    return all(M[i][j] == 0 for i in range(len(M)) for j in range(len(M)) if i != j)


def is_diagonal_decoupled(params: Params, state: Gaussian) -> bool:
    """A, B, V and Σ0 all diagonal: the coordinates decouple and the scalar closed form gives T* exactly."""
    return all(_is_diagonal(M) for M in (params.A, params.B, params.V, state.cov))


def scalar_coefficients(params: Params, state: Gaussian) -> list[tuple[Fraction, Fraction]]:
    """(a_i, c_i = v_i β_i σ_i) of the decoupled scalar equations."""
    return [(params.A[i][i], params.V[i][i] * params.B[i][i] * state.cov[i][i]) for i in range(params.dim)]


def scalar_blowup_time(a, c):
    """T for σ̇ = 2aσ + 2(c/σ0)σ² from σ0 (mpmath or arb numbers); None if no blow-up.

    c is the combined rate vβσ0, so the one formula `core.bernoulli.scalar_blowup_time` is called with s0 = 1.
    """
    if not (c > 0 and a + c > 0):
        return None
    return _bernoulli_time(a, c, log1p=None if isinstance(a, arb) else mpmath.log1p)


def closed_form_blowup_time(params: Params, state: Gaussian, dps: int = 50) -> ClosedForm | None:
    """The closed-form T* at `dps` digits, or None when no closed form applies."""
    with mpmath.workdps(dps + 10):
        q = lambda x: mpmath.mpf(x.numerator) / x.denominator
        if is_diagonal_decoupled(params, state):
            ts = [scalar_blowup_time(q(a), q(c)) for a, c in scalar_coefficients(params, state)]
            ts = [t for t in ts if t is not None]
            return ClosedForm("diagonal", +min(ts) if ts else None)
        v = params.V_scalar
        if v is not None and all(x == 0 for r in params.A for x in r):
            C, D = psd_factor(state.cov)
            if not D:
                return ClosedForm("A=0", None)
            Bs = exact.scale(v, exact.sym_part(params.B))
            # nonzero eigenvalues of vB_sΣ0 are those of D^{1/2} Cᵀ (vB_s) C D^{1/2}
            K = exact.matmul(exact.matmul(exact.transpose(C), Bs), C)
            r = len(D)
            M = mpmath.matrix(r, r)
            for i in range(r):
                for j in range(r):
                    M[i, j] = mpmath.sqrt(q(D[i])) * q(K[i][j]) * mpmath.sqrt(q(D[j]))
            lam = max(mpmath.eigsy(M, eigvals_only=True))
            return ClosedForm("A=0", +(1 / (2 * lam)) if lam > 0 else None)
    return None


def diagonal_blowup_ball(params: Params, state: Gaussian) -> arb | None:
    """Rigorous ball of the diagonal closed form at the current flint precision (None: no blow-up)."""
    best = None
    for a, c in scalar_coefficients(params, state):
        if c > 0 and a + c > 0:  # decided exactly, on the rationals
            t = scalar_blowup_time(balls.arb_of(a), balls.arb_of(c))
            best = t if best is None else best.min(t)
    return best

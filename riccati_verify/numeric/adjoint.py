"""Adjoint (costate) gradients of a terminal loss for the Gaussian moment system (MATH.md §14).

State x = (m, Σ), dynamics (eq. 1.1, Σ treated as a general d×d matrix so the
linearisation is unambiguous; the trajectory itself stays symmetric):

    ṁ = (A + V + VΣB) m + b,   Σ̇ = JΣ + ΣJᵀ,   J = A + VΣB.

Hamiltonian H = ⟨p, ṁ⟩ + ⟨P, Σ̇⟩ (Frobenius pairing).  With Q = PΣᵀ + PᵀΣ
the costate runs backward from (p, P)(T) = ∇L(m(T), Σ(T)):

    −ṗ = (A + V + VΣB)ᵀ p
    −Ṗ = Vᵀp (Bm)ᵀ + JᵀP + PJ + Vᵀ Q Bᵀ

and for controls held constant on a segment, dL/dθ = ∫_segment ∂H/∂θ dt:

    ∂H/∂A = p mᵀ + Q,   ∂H/∂b = p,
    ∂H/∂V = p (m + ΣBm)ᵀ + Q Bᵀ Σᵀ,   ∂H/∂B = Σᵀ Vᵀ (p mᵀ + Q).

One forward solve gives x(T); one backward solve per segment integrates the
state (backward), the costate and the gradient integrals together.  The same
formulas run on float arrays (scipy DOP853) and on numpy object arrays of
mpf (mpmath `odefun`, high precision), so the finite-difference check at high
precision tests the formulas and not an integrator's tolerance.

The minimal-energy mode (exact reach, SQP) lives in `min_energy`; its
closed-form Jacobian is cross-checked against `adjoint_gradient`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import mpmath
import numpy as np
from scipy.integrate import solve_ivp

from riccati_verify.numeric.flow import Segment, integrate_moments, integrate_segments_mp
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.numeric.views import float_view

__all__ = [
    "AdjointResult", "NAMES", "TerminalLoss", "adjoint_gradient", "costate_rhs",
    "directional_fd_check", "hamiltonian_gradients", "loss_mp", "perturbed",
]

NAMES = ("A", "B", "V", "b")


# ------------------------------------------------------------------ losses

def _mp_obj(M) -> np.ndarray:
    return np.array([[mpmath.mpf(x.numerator) / x.denominator for x in r] for r in M], dtype=object)


@dataclass(frozen=True)
class TerminalLoss:
    """L(m, Σ) against a target Gaussian: 'frobenius' |m − m1|² + ‖Σ − Σ1‖_F² (any rank) or
    'kl' = KL(N(m, Σ) ‖ N(m1, Σ1)) (Σ, Σ1 positive definite)."""

    kind: str
    target: Gaussian

    def __post_init__(self):
        if self.kind not in ("frobenius", "kl"):
            raise ValueError(f"unknown loss {self.kind!r}")
        if self.kind == "kl" and self.target.rank < self.target.dim:
            raise ValueError("the KL loss needs a positive definite target covariance")

    def _target(self, mp: bool):
        if mp:
            return (np.array([mpmath.mpf(x.numerator) / x.denominator for x in self.target.mean], dtype=object),
                    _mp_obj(self.target.cov))
        return tuple(np.array(a) for a in float_view(self.target))

    def value_and_grad(self, m: np.ndarray, S: np.ndarray):
        """(L, ∂L/∂m, ∂L/∂Σ) at the terminal state; mpf object arrays stay in mpf."""
        mp = m.dtype == object
        m1, S1 = self._target(mp)
        if self.kind == "frobenius":
            dm, dS = m - m1, S - S1
            return float(np.sum(dm * dm) + np.sum(dS * dS)) if not mp else np.sum(dm * dm) + np.sum(dS * dS), 2 * dm, 2 * dS
        d = len(m)
        if mp:
            Sm, S1m = mpmath.matrix(S.tolist()), mpmath.matrix(S1.tolist())
            S1i = np.array(mpmath.inverse(S1m).tolist(), dtype=object)
            Si = np.array(mpmath.inverse(Sm).tolist(), dtype=object)
            logdet = mpmath.log(mpmath.det(S1m)) - mpmath.log(mpmath.det(Sm))
        else:
            S1i, Si = np.linalg.inv(S1), np.linalg.inv(S)
            logdet = np.linalg.slogdet(S1)[1] - np.linalg.slogdet(S)[1]
        dm = m - m1
        val = (np.trace(S1i @ S) + dm @ S1i @ dm - d + logdet) / 2
        return val, S1i @ dm, (S1i.T - Si.T) / 2


# ------------------------------------------------------- the adjoint system

def costate_rhs(A, B, V, m, S, p, P):
    """(−ṗ, −Ṗ): the backward-time derivative of the costate."""
    VS = V @ S
    J = A + VS @ B
    Q = P @ S.T + P.T @ S
    Bm = B @ m
    return (A + V + VS @ B).T @ p, np.outer(V.T @ p, Bm) + J.T @ P + P @ J + V.T @ Q @ B.T


def hamiltonian_gradients(A, B, V, m, S, p, P):
    """(∂H/∂A, ∂H/∂B, ∂H/∂V, ∂H/∂b) at one instant."""
    Q = P @ S.T + P.T @ S
    pm = np.outer(p, m)
    return (pm + Q, S.T @ V.T @ (pm + Q), np.outer(p, m + S @ (B @ m)) + Q @ B.T @ S.T, p)


def _backward_rhs(A, B, V, b, d):
    n = d + d * d

    def F(y):
        m, S = y[:d], y[d:n].reshape(d, d)
        p, P = y[n:n + d], y[n + d:2 * n].reshape(d, d)
        VS = V @ S
        J = A + VS @ B
        JS = J @ S
        dm = J @ m + V @ m + b
        dp, dP = costate_rhs(A, B, V, m, S, p, P)
        gA, gB, gV, gb = hamiltonian_gradients(A, B, V, m, S, p, P)
        # reversed time s = t_end − t: state runs backward, costate forward in s
        return np.concatenate([-dm, -(JS + JS.T).ravel(), dp, dP.ravel(),
                               gA.ravel(), gB.ravel(), gV.ravel(), gb])

    return F


def _arrays(params: Params, mp: bool):
    if not mp:
        return tuple(np.array(a) for a in float_view(params))
    q = lambda x: mpmath.mpf(x.numerator) / x.denominator
    return (_mp_obj(params.A), _mp_obj(params.B), _mp_obj(params.V), np.array([q(x) for x in params.b], dtype=object))


@dataclass
class AdjointResult:
    """The loss at T and, per segment, its gradient (dA, dB, dV, db) with respect to that segment's controls."""

    loss: object                       # float or mpf
    grads: list[tuple]                 # per segment (dA, dB, dV, db)

    def flat(self) -> np.ndarray:
        """All gradients in one vector, segment by segment in the order A, B, V, b (row-major)."""
        return np.concatenate([np.concatenate([np.ravel(g) for g in gs]) for gs in self.grads])


def adjoint_gradient(segments: Sequence[Segment], state0: Gaussian, loss: TerminalLoss, *,
                     mp: bool = False, dps: int = 40, rtol: float = 1e-12, atol: float = 1e-14) -> AdjointResult:
    """L(x(T)) and dL/dθ_k for every segment by the costate equation."""
    d = state0.dim
    T = sum(Fraction(s.duration) for s in segments)
    if mp:
        with mpmath.workdps(dps):
            mT, ST = integrate_segments_mp(segments, state0, dps=dps)
            m = np.array(mT, dtype=object)
            S = np.array([list(r) for r in ST], dtype=object)
            return _backward(segments, m, S, loss, d, mp=True, dps=dps)
    fr = integrate_moments(list(segments), state0, float(T), rtol=rtol, atol=atol, n_samples=2)
    if fr.blowup:
        raise ArithmeticError(f"forward solve failed: {fr.reason}")
    return _backward(segments, fr.mean, fr.cov, loss, d, mp=False, rtol=rtol, atol=atol)


def _backward(segments, m, S, loss, d, *, mp, dps=40, rtol=1e-12, atol=1e-14):
    val, gm, gS = loss.value_and_grad(m, S)
    n = d + d * d
    y = np.concatenate([m, S.ravel(), gm, gS.ravel()])
    grads = []
    for seg in reversed(list(segments)):
        A, B, V, b = _arrays(seg.params, mp)
        F = _backward_rhs(A, B, V, b, d)
        zero = np.zeros(3 * d * d + d, dtype=object if mp else float)
        if mp:
            zero[:] = mpmath.mpf(0)
            tau = mpmath.mpf(Fraction(seg.duration).numerator) / Fraction(seg.duration).denominator
            y0 = list(np.concatenate([y, zero]))
            sol = mpmath.odefun(lambda s, u: list(F(np.array(u, dtype=object))), 0, y0,
                                tol=mpmath.mpf(10) ** (-dps), degree=None)
            z = np.array(sol(tau), dtype=object)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sol = solve_ivp(lambda s, u: F(u), (0.0, float(seg.duration)), np.concatenate([y, zero]),
                                method="DOP853", rtol=rtol, atol=atol)
            if sol.status != 0:
                raise ArithmeticError(f"backward solve failed: {sol.message}")
            z = sol.y[:, -1]
        y = z[:2 * n]
        g = z[2 * n:]
        grads.append((g[:d * d].reshape(d, d), g[d * d:2 * d * d].reshape(d, d),
                      g[2 * d * d:3 * d * d].reshape(d, d), g[3 * d * d:]))
    return AdjointResult(val, grads[::-1])


# ------------------------------------------------- finite-difference check

def perturbed(segments: Sequence[Segment], direction: Sequence[tuple], h: Fraction) -> list[Segment]:
    """θ + h·δ with exact rational δ = [(dA, dB, dV, db)] per segment."""
    out = []
    for seg, (dA, dB, dV, db) in zip(segments, direction):
        p = seg.params
        M = lambda X, D: tuple(tuple(x + h * Fraction(y) for x, y in zip(r, s)) for r, s in zip(X, D))
        out.append(Segment(seg.duration, Params(M(p.A, dA), M(p.B, dB), M(p.V, dV),
                                                tuple(x + h * Fraction(y) for x, y in zip(p.b, db)))))
    return out


def loss_mp(segments: Sequence[Segment], state0: Gaussian, loss: TerminalLoss, dps: int):
    """L(x(T)) at `dps` digits: the function the finite-difference check differentiates."""
    with mpmath.workdps(dps):
        mT, ST = integrate_segments_mp(segments, state0, dps=dps)
        return loss.value_and_grad(np.array(mT, dtype=object), np.array([list(r) for r in ST], dtype=object))[0]


def directional_fd_check(segments: Sequence[Segment], state0: Gaussian, loss: TerminalLoss,
                         direction: Sequence[tuple], *, dps: int = 40, h: Fraction = Fraction(1, 10 ** 12)
                         ) -> dict:
    """Compare ⟨∇L, δ⟩ (adjoint, high precision) with the central difference
    (L(θ + hδ) − L(θ − hδ))/2h at `dps` digits (truncation O(h²), rounding O(10^-dps/h))."""
    with mpmath.workdps(dps):
        adj = adjoint_gradient(segments, state0, loss, mp=True, dps=dps)
        dirflat = np.concatenate([np.concatenate([np.ravel(np.array(x, dtype=object)) for x in dd]) for dd in direction])
        dirflat = np.array([mpmath.mpf(Fraction(x).numerator) / Fraction(x).denominator for x in dirflat], dtype=object)
        g_dir = np.dot(adj.flat(), dirflat)
        hm = mpmath.mpf(h.numerator) / h.denominator
        fd = (loss_mp(perturbed(segments, direction, h), state0, loss, dps)
              - loss_mp(perturbed(segments, direction, -h), state0, loss, dps)) / (2 * hm)
        # Below |derivative| ≈ h the O(h²) truncation error is of the size of the
        # derivative itself, so relative error is measured against at least h.
        scale = max(abs(g_dir), abs(fd), hm, mpmath.mpf(10) ** (-dps // 2))
        return {"adjoint": g_dir, "finite_difference": fd, "relative_error": abs(g_dir - fd) / scale,
                "h": h, "dps": dps}


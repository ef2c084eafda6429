"""Training the head measure by mean-field Langevin dynamics (seed 001 §7–9, MATH.md §9, §14, §16).

The model.  Heads θ = (V, B) are particles of a measure ρ; with H heads the velocity on a
Gaussian token law N(m, Σ) is affine (`symbolic.multihead`):

    v_ρ(x) = A x + b + E_ρ[V (m + Σ B x)] = (A + M) x + V̄ m + b,   V̄ = E_ρ[V],  M = E_ρ[V Σ B].

Everything the loss sees of ρ is therefore V̄ and the fourth-order tensor
K = E_ρ[V ⊗ B] (K_ijkl = E V_ij B_kl), since M = K:Σ with (K:Σ)_il = Σ_jk K_ijkl Σ_jk.
So the first variation of any loss of the moments is a quadratic polynomial in θ,

    δL/δρ(θ) = ⟨G_V, V⟩ + ⟨G_K, V ⊗ B⟩,   G_V = ∂L/∂V̄,  G_K = ∂L/∂K,                 (1)

and its θ-gradient is ∇_V = G_V + G_K·B, ∇_B = G_Kᵀ·V (contractions over the other pair of
indices).  Two regimes:

- shallow (seed 001 Theorem 8.3): one residual step y = x + v_ρ(x) on x ~ N(m, Σ) and the
  regression loss L = E_x|y − (G x + c)|².  y is affine in (V̄, M), so L is a convex quadratic
  of the linear functionals V̄, K of ρ (`proofs.training_shallow` proves it in sympy);
- deep: the moment ODE on [0, T] (ṁ = (A + V̄ + M)m + b, Σ̇ = JΣ + ΣJᵀ, J = A + M, M = K:Σ)
  with a terminal loss of `adjoint.TerminalLoss` (Frobenius or KL to a target Gaussian), ρ
  constant in depth or piecewise constant (one ρ_k per depth segment).  G_V, G_K come from
  the costate of MATH.md §14 written in K: with Q = PΣᵀ + PᵀΣ,

      −ṗ = (A + V̄ + M)ᵀ p,   −Ṗ = K*(p mᵀ + Q) + JᵀP + PJ,   K*(X)_jk = Σ_il K_ijkl X_il,
      G_V = ∫ p mᵀ dt,        G_K = ∫ (p mᵀ + Q) ⊗ Σ dt   ((X ⊗ Σ)_ijkl = X_il Σ_jk).

  For one head K* (X) = VᵀXBᵀ and these are `adjoint.costate_rhs` / `hamiltonian_gradients`
  (tests compare them).

Training.  The free energy is F(ρ) = L(ρ) + (λ/2) E_ρ|θ|² + β ∫ρ log ρ and its particle version
is noisy gradient descent with the 1/H mean-field scaling, discretised by Euler–Maruyama:

    θ_h ← θ_h − η ∇_θ U(θ_h) + √(2βη) ξ_h,   U = δL/δρ[ρ̂_H] + λ|θ|²/2,  ξ_h ~ N(0, I) seeded.

By (1), ∇U is affine in θ.  Hence from a Gaussian initial law the H → ∞ limit of this scheme
stays Gaussian, N(μ_s, C_s), and follows the closed recursion (`closure_step`)

    μ ← μ − η(g + 𝐇μ),   C ← (I − η𝐇) C (I − η𝐇)ᵀ + 2βη I,   𝐇 = λI + [[0, Ĉ], [Ĉᵀ, 0]],

with g = (vec G_V, 0) and Ĉ the matrix of (V, B) ↦ ⟨G_K, V ⊗ B⟩, both evaluated at N(μ, C).
That is the exact mean-field reference of the particle run (same η), against which the
particle error O(1/H) is measured.

The entropy.  A sample of H particles has no density, so its entropy needs an estimator.
Because the mean-field law ρ_s is Gaussian here (above), we use the Gaussian plug-in estimator of
the particles' sample covariance, ½ log det(2πe Ĉ), with the exact bias correction for i.i.d.
Gaussian samples (E log det Ĉ = log det C + Σ_{i=1}^{D} [ψ((H − i)/2) − log((H − 1)/2)], Ĉ the
unbiased sample covariance).  The particles interact through the aggregates, so their joint law is
Gaussian and i.i.d. only at s = 0 and as H → ∞: the estimate is consistent (it targets the
entropy of the mean-field law), with an O(1/H) error at finite H.  It needs H > D = 2d² heads per
segment; otherwise the record has no free energy, only the regularised objective
L + (λ/2)E|θ|² (`TrainingRun.objective`).  Every run records
its seed.  Nothing here proves anything: floats, at most confirmed numerically.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import mpmath
import numpy as np
from scipy.integrate import solve_ivp
from scipy.special import digamma

from riccati_verify.core import exact
from riccati_verify.core.errors import InputError
from riccati_verify.core.model import Gaussian
from riccati_verify.core.progress import Progress
from riccati_verify.numeric.adjoint import TerminalLoss

__all__ = [
    "DeepModel", "LinearReadout", "MAX_TRAIN_HEADS", "MAX_TRAIN_STEPS", "REGIMES", "ShallowModel", "TrainingRun",
    "TrainingSpec", "aggregates", "closure_aggregates", "closure_fixed_point", "closure_step",
    "entropy_gaussian_estimate", "fd_check", "functional_gradient", "gaussian_entropy", "gradient_lipschitz",
    "head_gradients", "initial_heads", "load_spec", "local_rate_study", "ntk_gram", "particle_loss_mp",
    "spec_from_dict", "stall_search", "train",
]

REGIMES = ("shallow", "deep")
MAX_TRAIN_HEADS = 4096
MAX_TRAIN_STEPS = 200_000
MAX_SEGMENTS = 16
MAX_TRAIN_DIM = 4
MAX_DEPTH = 100.0
MAX_WORK = 2 * 10 ** 8
"""steps × heads × segments of one run (about an hour of shallow training on one core)."""
MIN_REL_SPREAD = 2.0 ** -40
"""With β > 0, init.spread ≥ MIN_REL_SPREAD·max(1, |V0|, |B0|): a smaller spread is lost to rounding (or its square
underflows), the particles' sample covariance is singular and the entropy has no estimate (review s18, M3)."""
INIT_SPREAD_DEFAULT = "1/2"
"""init.spread when a spec leaves it out (exact text: the float run and the exact bounds of `certify.training*` and
the proofs read the same default, so the certified constants describe the law the run draws from)."""
MAX_DEEP_SOLVES = 50_000
"""steps × segments of a deep run.  A step makes up to three loss evaluations (the particles, the H → ∞ step and,
at a record, the H → ∞ free energy), each a forward and a backward DOP853 solve per segment; the fixed-point phase
after training adds at most 300 + 3000 evaluations (`train`; d = 4 with 16 segments: 0.03 s each, so at most about
two minutes, shown as its own progress line) that this bound does not count (review s18, L3)."""


# --------------------------------------------------------------------------- aggregates

def aggregates(V: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(V̄, K) of H heads: V̄ = (1/H)Σ V_h, K_ijkl = (1/H)Σ V_h,ij B_h,kl (float or mpf object arrays)."""
    H = V.shape[0]
    return V.sum(axis=0) / H, np.einsum("hij,hkl->ijkl", V, B) / H


def contract(K: np.ndarray, S: np.ndarray) -> np.ndarray:
    """M = K:Σ, M_il = Σ_jk K_ijkl Σ_jk: the E_ρ[VΣB] of the aggregate K."""
    return np.einsum("ijkl,jk->il", K, S)


def head_gradients(GV: np.ndarray, GK: np.ndarray, V: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """∇_θ δL/δρ at each head, eq. (1): (G_V + G_K·B_h, G_Kᵀ·V_h), shapes (H, d, d) each."""
    return GV[None] + np.einsum("ijkl,hkl->hij", GK, B), np.einsum("ijkl,hij->hkl", GK, V)


# --------------------------------------------------------------------------- the shallow model

@dataclass(frozen=True)
class ShallowModel:
    """y = x + v_ρ(x) on x ~ N(m, Σ), L = E|y − (G x + c)|² (float arrays; `mp` variants on demand)."""

    A: np.ndarray
    b: np.ndarray
    m: np.ndarray
    S: np.ndarray
    G: np.ndarray
    c: np.ndarray

    def loss(self, Vbar, K):
        """(L, G_V, G_K).  With D = I + A + M − G and r = (D + V̄)m + b − c,
        L = |r|² + tr(DΣDᵀ), ∂L/∂M = 2 r mᵀ + 2DΣ, ∂L/∂V̄ = 2 r mᵀ, G_K = ∂L/∂M ⊗ Σ."""
        d = len(self.m)
        one = np.eye(d, dtype=object) if Vbar.dtype == object else np.eye(d)
        D = one + self.A + contract(K, self.S) - self.G
        r = (D + Vbar) @ self.m + self.b - self.c
        DS = D @ self.S
        L = r @ r + np.trace(DS @ D.T)
        gM = 2 * np.outer(r, self.m) + 2 * DS
        return L, 2 * np.outer(r, self.m), np.einsum("il,jk->ijkl", gM, self.S)

    def as_mp(self) -> "ShallowModel":
        """The same model in mpf object arrays (at the current mpmath precision)."""
        return ShallowModel(*(_to_mp(x) for x in (self.A, self.b, self.m, self.S, self.G, self.c)))


# --------------------------------------------------------------------------- the deep model

@dataclass(frozen=True)
class DeepModel:
    """The moment ODE on [0, T] split into equal depth segments (one (V̄_k, K_k) each), terminal loss."""

    A: np.ndarray
    b: np.ndarray
    m: np.ndarray
    S: np.ndarray
    T: float
    loss_fn: TerminalLoss
    segments: int = 1
    rtol: float = 1e-11
    atol: float = 1e-13

    def loss(self, aggs):
        """(L, [(G_V, G_K) per segment]) for aggs = [(V̄_k, K_k)], floats (DOP853) or mpf (odefun)."""
        mp = aggs[0][0].dtype == object
        tau = self.T / self.segments
        d = len(self.m)
        m, S = (_to_mp(self.m), _to_mp(self.S)) if mp else (self.m.astype(float), self.S.astype(float))
        A, b = (_to_mp(self.A), _to_mp(self.b)) if mp else (self.A, self.b)
        for Vbar, K in aggs:
            m, S = _forward(A, b, Vbar, K, m, S, tau, mp, self.rtol, self.atol)
        val, gm, gS = self.loss_fn.value_and_grad(m, S)
        y = np.concatenate([m, S.ravel(), gm, gS.ravel()])
        grads = []
        for Vbar, K in reversed(aggs):
            y, GV, GK = _backward(A, b, Vbar, K, y, d, tau, mp, self.rtol, self.atol)
            grads.append((GV, GK))
        return val, grads[::-1]


def _to_mp(x):
    x = np.asarray(x)
    if x.dtype == object:
        return x
    return np.vectorize(lambda v: mpmath.mpf(float(v)) if not isinstance(v, Fraction)
                        else mpmath.mpf(v.numerator) / v.denominator, otypes=[object])(x)


def _moment_rhs(A, b, Vbar, K, m, S):
    M = contract(K, S)
    J = A + M
    JS = J @ S
    return (A + Vbar + M) @ m + b, JS + JS.T


def _odefun(F, y0, tau):
    sol = mpmath.odefun(lambda _s, u: list(F(np.array(u, dtype=object))), 0, list(y0),
                        tol=mpmath.mpf(10) ** (-mpmath.mp.dps), degree=None)
    return np.array(sol(tau), dtype=object)


def _forward(A, b, Vbar, K, m, S, tau, mp, rtol, atol):
    d = len(m)

    def F(y):
        dm, dS = _moment_rhs(A, b, Vbar, K, y[:d], y[d:].reshape(d, d))
        return np.concatenate([dm, dS.ravel()])

    y0 = np.concatenate([m, S.ravel()])
    if mp:
        z = _odefun(F, y0, mpmath.mpf(tau))
    else:
        with np.errstate(all="ignore"):
            sol = solve_ivp(lambda _s, u: F(u), (0.0, float(tau)), y0, method="DOP853", rtol=rtol, atol=atol)
        if sol.status != 0 or not np.all(np.isfinite(sol.y[:, -1])):
            raise ArithmeticError(f"forward moment solve failed: {sol.message}")
        z = sol.y[:, -1]
    return z[:d], z[d:].reshape(d, d)


def _backward(A, b, Vbar, K, y, d, tau, mp, rtol, atol):
    n = d + d * d

    def F(u):
        m, S = u[:d], u[d:n].reshape(d, d)
        p, P = u[n:n + d], u[n + d:2 * n].reshape(d, d)
        dm, dS = _moment_rhs(A, b, Vbar, K, m, S)
        M = contract(K, S)
        J = A + M
        Q = P @ S.T + P.T @ S
        X = np.outer(p, m) + Q
        dp = (A + Vbar + M).T @ p
        dP = np.einsum("ijkl,il->jk", K, X) + J.T @ P + P @ J
        # reversed time s = t_end − t: the state runs backward, the costate and integrals forward
        return np.concatenate([-dm, -dS.ravel(), dp, dP.ravel(), np.outer(p, m).ravel(),
                               np.einsum("il,jk->ijkl", X, S).ravel()])

    z0 = np.concatenate([y, np.zeros(d * d + d ** 4, dtype=object if mp else float)])
    if mp:
        z0[2 * n:] = mpmath.mpf(0)
        z = _odefun(F, z0, mpmath.mpf(tau))
    else:
        with np.errstate(all="ignore"):
            sol = solve_ivp(lambda _s, u: F(u), (0.0, float(tau)), z0.astype(float), method="DOP853",
                            rtol=rtol, atol=atol)
        if sol.status != 0 or not np.all(np.isfinite(sol.y[:, -1])):
            raise ArithmeticError(f"backward (costate) solve failed: {sol.message}")
        z = sol.y[:, -1]
    g = z[2 * n:]
    return z[:2 * n], g[:d * d].reshape(d, d), g[d * d:].reshape(d, d, d, d)


# --------------------------------------------------------------------------- one interface

def functional_gradient(model, heads) -> tuple[object, list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]]:
    """L(ρ̂_H) and, per segment, (G_V, G_K, ∇_V δL/δρ(θ_h), ∇_B δL/δρ(θ_h)) at the empirical measure.

    `heads` is a list of (V, B) arrays (H, d, d), one pair per segment (one for the shallow model).
    The particle gradient ∂L(ρ̂_H)/∂θ_h is (1/H) ∇_θ δL/δρ(θ_h) (the mean-field scaling).
    """
    aggs = [aggregates(V, B) for V, B in heads]
    if isinstance(model, ShallowModel):
        L, GV, GK = (model.as_mp() if aggs[0][0].dtype == object else model).loss(*aggs[0])
        grads = [(GV, GK)]
    else:
        L, grads = model.loss(aggs)
    return L, [(GV, GK, *head_gradients(GV, GK, V, B)) for (GV, GK), (V, B) in zip(grads, heads)]


def particle_loss_mp(model, heads) -> object:
    """L(ρ̂_H) in mpf (at the current mpmath precision): what finite differences differentiate."""
    aggs = [aggregates(_to_mp(V), _to_mp(B)) for V, B in heads]
    if isinstance(model, ShallowModel):
        return model.as_mp().loss(*aggs[0])[0]
    return model.loss(aggs)[0]


def fd_check(model, heads, *, dps: int = 30, h_exp: int = 10, seed: int = 0) -> dict:
    """Compare H·∂L(ρ̂_H)/∂θ along a seeded random direction (central differences at `dps` digits,
    step 10^-h_exp) with Σ_h ⟨∇_θ δL/δρ(θ_h), δ_h⟩ from `functional_gradient` at the same precision.

    The central difference has truncation O(h²) and rounding O(10^-dps/h), both ≈ 1e-20 at the
    defaults, far below the 1e-8 the acceptance asks for."""
    rng = np.random.default_rng(seed)
    dirs = [(rng.standard_normal(V.shape), rng.standard_normal(B.shape)) for V, B in heads]
    H = heads[0][0].shape[0]
    with mpmath.workdps(dps):
        hm = [(_to_mp(V), _to_mp(B)) for V, B in heads]
        dm = [(_to_mp(a), _to_mp(b)) for a, b in dirs]
        _, per = functional_gradient(model, hm)
        analytic = sum(np.sum(gV * a) + np.sum(gB * b) for (_, _, gV, gB), (a, b) in zip(per, dm))
        h = mpmath.mpf(10) ** (-h_exp)
        shift = lambda e: [(V + e * a, B + e * b) for (V, B), (a, b) in zip(hm, dm)]
        fd = H * (particle_loss_mp(model, shift(h)) - particle_loss_mp(model, shift(-h))) / (2 * h)
        rel = abs(analytic - fd) / max(abs(fd), mpmath.mpf(10) ** (-dps // 2))
        return {"analytic": analytic, "finite_difference": fd, "relative_error": float(rel), "dps": dps,
                "h": f"1e-{h_exp}", "seed": seed}


def gradient_lipschitz(model, heads, *, eps: float = 1e-3, trials: int = 8, seed: int = 0) -> dict:
    """Measured ratios ‖∇δL/δρ[ρ'] − ∇δL/δρ[ρ]‖_{L²(ρ)} / c(ρ, ρ') for seeded perturbations θ_h → θ_h + εξ_h
    (shared ξ on even trials, independent ξ_h on odd ones).

    The gradient fields are compared at the same points θ_h (the measure argument moves, the
    point does not), and c = (mean_h |εξ_h|²)^{1/2} is the cost of the coupling θ_h ↔ θ_h + εξ_h,
    an upper bound of W2(ρ, ρ').  So every ratio is a lower bound of the Lipschitz constant of
    ρ ↦ ∇δL/δρ in W2 (seed 001 Theorem 6.2 / 9.1); the maximum over trials is reported, with
    `float_allowance`, the largest float error of a ratio (to first order)."""
    rng = np.random.default_rng(seed)
    _, base = functional_gradient(model, heads)
    ratios, allowance = [], 0.0
    # each gradient field carries a relative error ≤ tol: the DOP853 tolerance of the deep solves, or the
    # rounding of the shallow closed form (a few dozen operations per entry, 2⁻⁴⁷ covers 64 of them); the
    # difference of two fields then errs by ≤ 2·tol·|field| in L²(ρ), and the ratio by that over the cost
    tol = getattr(model, "rtol", 0.0) + 2.0 ** -47
    for k in range(trials):
        # odd trials move every head by its own draw, even ones move all heads by one shared draw (a
        # coherent shift moves the aggregates V̄, K by O(ε), independent draws only by O(ε/√H))
        draw = (lambda X: rng.standard_normal(X.shape)) if k % 2 else (lambda X: np.broadcast_to(
            rng.standard_normal(X.shape[1:]), X.shape))
        moved = [(V + eps * draw(V), B + eps * draw(B)) for V, B in heads]
        aggs = [aggregates(V, B) for V, B in moved]
        if isinstance(model, ShallowModel):
            _, GV, GK = model.loss(*aggs[0])
            grads = [(GV, GK)]
        else:
            grads = model.loss(aggs)[1]
        num = cost = field = 0.0
        for (GV, GK), (V, B), (V2, B2), (_, _, gV, gB) in zip(grads, heads, moved, base):
            nV, nB = head_gradients(GV, GK, V, B)
            num += float(np.mean(np.sum((nV - gV) ** 2, axis=(1, 2)) + np.sum((nB - gB) ** 2, axis=(1, 2))))
            cost += float(np.mean(np.sum((V2 - V) ** 2, axis=(1, 2)) + np.sum((B2 - B) ** 2, axis=(1, 2))))
            field += float(np.mean(np.sum(gV ** 2, axis=(1, 2)) + np.sum(gB ** 2, axis=(1, 2))))
        ratios.append(math.sqrt(num / cost))
        allowance = max(allowance, 2 * tol * math.sqrt(field / cost))
    return {"lipschitz_lower_bound": max(ratios), "ratios": ratios, "eps": eps, "trials": trials, "seed": seed,
            "float_allowance": allowance}


class LinearReadout:
    """The terminal "loss" ⟨c, m⟩ + ⟨C, Σ⟩: its first variation is that of one output coordinate."""

    def __init__(self, c: np.ndarray, C: np.ndarray):
        self.c, self.C = c, C

    def value_and_grad(self, m, S):
        """(value, ∂/∂m, ∂/∂Σ), as `adjoint.TerminalLoss.value_and_grad`."""
        return float(self.c @ m + np.sum(self.C * S)), self.c.copy(), self.C.copy()


def ntk_gram(model: DeepModel, heads) -> tuple[np.ndarray, np.ndarray]:
    """The neural tangent kernel of the outputs y = (m(T), Σ(T)_ij for i ≤ j) in the head parameters,
    K_kl = (1/H) Σ_h ⟨∇_θ δy_k/δρ(θ_h), ∇_θ δy_l/δρ(θ_h)⟩ (summed over depth segments), and the
    weights W (1 for m and diagonal Σ entries, 2 off the diagonal) with which the Frobenius loss
    counts them.  Along noiseless training near a minimiser with L = 0, dL/ds ≤ −4 λ_min(W^½ K W^½) L,
    so 4 λ_min is the predicted local linear rate (seed 001 Theorem 8.5).  Floats: no error bound."""
    import dataclasses

    d = len(model.m)
    H = heads[0][0].shape[0]
    rows, W = [], []
    for kind, i, j in [("m", i, None) for i in range(d)] + [("S", i, j) for i in range(d) for j in range(i, d)]:
        c, C = np.zeros(d), np.zeros((d, d))
        if kind == "m":
            c[i] = 1.0
            W.append(1.0)
        else:
            C[i, j] = 1.0
            W.append(1.0 if i == j else 2.0)
        _, per = functional_gradient(dataclasses.replace(model, loss_fn=LinearReadout(c, C)), heads)
        rows.append(np.concatenate([np.concatenate([gV.reshape(H, -1), gB.reshape(H, -1)], axis=1).ravel()
                                    for _, _, gV, gB in per]))
    G = np.array(rows)
    return G @ G.T / H, np.array(W)


def local_rate_study(model: DeepModel, teacher, *, perturbation: float = 0.05, step: float = 0.05, steps: int = 400,
                     window: tuple[float, float] = (0.75, 1.0), seed: int = 0) -> dict:
    """Noiseless training (β = λ = 0) of a student started near the teacher heads against the teacher's
    own outputs (so min L = 0): the fitted rate of log L on the last part of the run (`window`, as
    fractions of the run) against 4 λ_min(W^½ K W^½) at the teacher and at the student's end point."""
    model = _teacher_model(model, teacher)

    def pred(heads):
        K, W = ntk_gram(model, heads)
        w = np.sqrt(W)
        return 4 * float(np.linalg.eigvalsh(w[:, None] * K * w[None, :])[0])

    rng = np.random.default_rng(seed)
    student = [(V + perturbation * rng.standard_normal(V.shape), B + perturbation * rng.standard_normal(B.shape))
               for V, B in teacher]
    Ls = []
    for _ in range(steps):
        L, per = functional_gradient(model, student)
        Ls.append(float(L))
        student = [(V - step * gV, B - step * gB) for (V, B), (_, _, gV, gB) in zip(student, per)]
    Ls = np.array(Ls)
    s = np.arange(steps) * step
    a, b = int(window[0] * steps), int(window[1] * steps)
    rate = float(-np.polyfit(s[a:b], np.log(Ls[a:b]), 1)[0])
    return {"rate": rate, "predicted_at_teacher": pred(teacher), "predicted_at_end": pred(student),
            "loss_start": float(Ls[0]), "loss_end": float(Ls[-1]), "window_s": (float(s[a]), float(s[b - 1])),
            "perturbation": perturbation, "step": step, "steps": steps, "seed": seed}


def _teacher_model(model: DeepModel, teacher) -> DeepModel:
    """`model` with the Frobenius loss to the teacher's own outputs (so min L = 0 is attained)."""
    import dataclasses

    from riccati_verify.core.model import Gaussian

    m, S = model.m.astype(float), model.S.astype(float)
    tau = model.T / model.segments
    for V, B in teacher:
        Vb, K = aggregates(V, B)
        m, S = _forward(model.A, model.b, Vb, K, m, S, tau, False, model.rtol, model.atol)
    target = Gaussian.from_arrays([Fraction(float(x)) for x in m], [[Fraction(float(x)) for x in r] for r in (S + S.T) / 2])
    return dataclasses.replace(model, loss_fn=TerminalLoss("frobenius", target))


STALL_LOSS = 1e-3
"""A run "stalls" when it ends above this loss (the global minimum is 0) with a vanishing gradient."""


def stall_search(model: DeepModel, teacher, *, tries: int = 8, spread: float = 1.0, step: float = 0.02,
                 steps: int = 300, seed: int = 0, progress: bool = False) -> dict:
    """Look for training that stalls at a worse stationary point (seed 001 §8, deep regime).

    Noiseless gradient descent (β = λ = 0) of students from poor starts, heads i.i.d. N(0, spread²),
    against the teacher's outputs (min L = 0).  Draw j uses default_rng([seed, j]); a draw whose own
    flow blows up on [0, T] (L = ∞ at the start) is skipped and counted, up to 4·tries draws.  Each
    try ends "converged" (L below 1e-8 or 1e-6 of its start) or "blow-up in training" (a solve
    failed), or is polished by L-BFGS in the head parameters (scipy, with this gradient) and called
    "reaches the minimum when polished" (polished L < 1e-8), "stationary above the minimum"
    (polished ‖∇L‖ < 1e-7 with L > STALL_LOSS: a stalled run), or "undecided".  Floats: a found
    point is numerical evidence only."""
    from scipy.optimize import minimize

    model = _teacher_model(model, teacher)
    H = teacher[0][0].shape[0]
    shapes = [(V.shape, B.shape) for V, B in teacher]
    bar = Progress(tries, "stall search", enabled=progress)

    def unpack(x):
        out, i = [], 0
        for sV, sB in shapes:
            nV, nB = int(np.prod(sV)), int(np.prod(sB))
            out.append((x[i:i + nV].reshape(sV), x[i + nV:i + nV + nB].reshape(sB)))
            i += nV + nB
        return out

    def value_grad(x):
        L, per = functional_gradient(model, unpack(x))
        g = np.concatenate([np.concatenate([gV.ravel(), gB.ravel()]) for _, _, gV, gB in per]) / H
        return float(L), g

    runs, skipped, draw = [], [], 0
    while len(runs) < tries and draw < 4 * tries:
        rng = np.random.default_rng([seed, draw])
        x = np.concatenate([np.concatenate([spread * rng.standard_normal(sV).ravel(),
                                            spread * rng.standard_normal(sB).ravel()]) for sV, sB in shapes])
        draw += 1
        try:
            value_grad(x)
        except ArithmeticError:
            skipped.append(draw - 1)
            continue
        Ls, rec = [], {"try": len(runs), "seed": [seed, draw - 1]}
        try:
            for _ in range(steps):
                L, g = value_grad(x)
                Ls.append(L)
                x = x - step * H * g           # the mean-field time scale: θ_h ← θ_h − η ∇_θ δL/δρ(θ_h)
            outcome, note = None, ""
        except ArithmeticError as e:
            outcome, note = "blow-up in training", str(e)[:120]
        rec.update(loss_start=Ls[0], loss_end=Ls[-1], steps_run=len(Ls))
        if outcome is None and (Ls[-1] < 1e-8 or Ls[-1] < 1e-6 * Ls[0]):
            outcome = "converged"
        elif outcome is None:
            try:
                res = minimize(value_grad, x, jac=True, method="L-BFGS-B", options={"maxiter": 300, "gtol": 1e-12})
                Lp, gp = value_grad(res.x)
                gn = float(np.linalg.norm(gp))
                rec.update(polished_loss=Lp, polished_grad_norm=gn)
                outcome = ("reaches the minimum when polished" if Lp < 1e-8 else
                           "stationary above the minimum" if Lp > STALL_LOSS and gn < 1e-7 else "undecided")
                note = str(res.message)[:80]
            except ArithmeticError as e:
                outcome, note = "undecided", f"polishing left the no-blow-up region: {str(e)[:80]}"
        rec["outcome"], rec["note"] = outcome, note
        runs.append(rec)
        bar.step(f"try {rec['try']}: {outcome}")
    counts = {}
    for r in runs:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    return {"runs": runs, "counts": counts, "tries": len(runs), "skipped_draws": skipped, "spread": spread,
            "step": step, "steps": steps, "seed": seed, "heads": H, "stall_loss": STALL_LOSS}


# --------------------------------------------------------------------------- the specification

@dataclass(frozen=True)
class TrainingSpec:
    """A training run, parsed and bounded (floats; the file's exact rationals are converted once)."""

    regime: str
    model: object                       # ShallowModel or DeepModel
    heads: int
    beta: float
    weight_decay: float
    step: float
    steps: int
    seed: int
    init_V: np.ndarray
    init_B: np.ndarray
    init_spread: float
    record_every: int = 1
    loss_kind: str = "regression"
    rationals: dict | None = None       # the file's exact values, by their spec names (spec_from_dict(exact=True))

    @property
    def dim(self) -> int:
        """Token dimension d."""
        return len(self.model.m)

    @property
    def segments(self) -> int:
        """Number of depth segments with their own head measure (1 in the shallow regime)."""
        return 1 if self.regime == "shallow" else self.model.segments

    @property
    def head_dim(self) -> int:
        """D = 2d²: the dimension of one head θ = (V, B)."""
        return 2 * self.dim ** 2

    def to_dict(self) -> dict:
        """The run's settings as JSON-ready values (the seed included)."""
        return {"regime": self.regime, "loss": self.loss_kind, "d": self.dim, "heads": self.heads,
                "segments": self.segments, "beta": self.beta, "weight_decay": self.weight_decay, "step": self.step,
                "steps": self.steps, "seed": self.seed, "init_spread": self.init_spread,
                "T": getattr(self.model, "T", None)}


SPEC_KEYS = {"regime", "A", "b", "mean", "cov", "loss", "heads", "beta", "weight_decay", "step", "steps", "seed",
             "init", "T", "segments", "record_every", "name", "description"}
NONCONVEX_SHALLOW = {
    "frobenius": ("the Frobenius moment loss |m_y − m1|² + ‖Σ_y − Σ1‖_F² is quartic in E_ρ[VΣB] "
                  "(Σ_y = DΣDᵀ) and not convex in ρ"),
    "kl": "the KL loss contains −log det Σ_y = −2 log|det D| − log det Σ, not convex in E_ρ[VΣB]",
}


def _num(doc, key, lo, hi, *, integer=False, default=None, open_lo=False, into=None, name=None):
    """The entry as a float (an int for `integer`); its exact rational goes to into[name or key] (the default,
    read as a rational, when the key is absent)."""
    from riccati_verify.core.io import parse_entry

    if key not in doc:
        if default is None:
            raise InputError(f"training spec: '{key}' is required")
        if into is not None:
            into[name or key] = Fraction(default)
        return float(Fraction(default)) if isinstance(default, str) else default
    x = doc[key]
    if integer:
        if isinstance(x, bool) or not isinstance(x, int):
            raise InputError(f"training spec: '{key}' must be an integer, got {x!r}"[:200])
        if not lo <= x <= hi:
            raise InputError(f"training spec: '{key}' = {x} is outside {lo}..{hi}")
        return x
    q = parse_entry(x, f"training spec '{key}'")
    if q < lo or q > hi or (open_lo and q == lo):
        rel = ">" if open_lo else "≥"
        raise InputError(f"training spec: '{key}' = {float(q):g} must be {rel} {lo:g} and ≤ {hi:g}")
    if into is not None:
        into[name or key] = q
    return float(q)


def _arr(x, name, d=None, vector=False, into=None):
    """The entries as a float array; their exact rationals (a tuple, of rows for a matrix) go to into[name]."""
    from riccati_verify.core.io import parse_matrix, parse_vector

    if vector:
        v, _ = parse_vector(x, name)
        if into is not None:
            into[name] = v
        out = np.array([float(q) for q in v])
        if d is not None and len(out) != d:
            raise InputError(f"training spec: '{name}' has length {len(out)}, expected {d}")
        return out
    M, _ = parse_matrix(x, name)
    if into is not None:
        into[name] = M
    out = np.array([[float(q) for q in r] for r in M])
    if out.ndim != 2 or out.shape[0] != out.shape[1] or (d is not None and out.shape[0] != d):
        raise InputError(f"training spec: '{name}' must be a {d or 'square'}×{d or ''} matrix"
                         .replace("×}", "}").replace("square×", "square"))
    return out


def _exact_cov(S):
    """The token covariance (exact rationals, as parsed), refused unless symmetric positive semidefinite.

    Decided by exact LDLᵀ, not by float eigenvalues: an indefinite Σ within rounding of a PSD one makes the
    shallow loss |r|² + tr(DΣDᵀ) negative for some D, and the a-priori bounds of `certify.training_wellposed`
    need L ≥ 0 (review s18, H2)."""
    if not exact.is_symmetric(S):
        raise InputError("training spec: 'cov' must be symmetric (exactly: cov[i][j] = cov[j][i])")
    if not exact.is_psd(S):
        raise InputError("training spec: 'cov' must be positive semidefinite; exact LDLᵀ finds a negative "
                         "eigenvalue (the loss could then be negative)")
    return S


_is_pd = exact.is_pd          # spec_from_dict's keyword `exact` hides the module there


def spec_from_dict(doc, *, exact: bool = False) -> TrainingSpec:
    """Validate a parsed training spec (untrusted: every size bounded, no evaluation of text).

    With `exact`, `rationals` holds the file's exact values as read here, by their spec names ("A", "b",
    "mean", "cov", "beta", "weight_decay", "step", "init.V", "init.B", "init.spread", "loss.G", "loss.c";
    deep: "T", "loss.target.mean", "loss.target.cov"), absent entries as their defaults: the exact routes
    take them from here instead of parsing the file a second time (review s18 L6)."""
    R = {}
    if not isinstance(doc, dict):
        raise InputError("training spec: expected a JSON object")
    unknown = set(doc) - SPEC_KEYS
    if unknown:
        raise InputError(f"training spec: unknown keys {sorted(unknown)}")
    regime = doc.get("regime")
    if regime not in REGIMES:
        raise InputError(f"training spec: 'regime' must be one of {', '.join(REGIMES)}, got {regime!r}"[:200])
    if "A" not in doc or "mean" not in doc or "cov" not in doc:
        raise InputError("training spec: 'A', 'mean' and 'cov' are required")
    A = _arr(doc["A"], "A", into=R)
    d = A.shape[0]
    if d > MAX_TRAIN_DIM:
        raise InputError(f"training spec: dimension {d} exceeds {MAX_TRAIN_DIM} (K has d⁴ entries)")
    zero_v, zero_m = (Fraction(0),) * d, tuple((Fraction(0),) * d for _ in range(d))
    b = _arr(doc["b"], "b", d, vector=True, into=R) if "b" in doc else np.zeros(d)
    R.setdefault("b", zero_v)
    m = _arr(doc["mean"], "mean", d, vector=True, into=R)
    cov = {}
    S = _arr(doc["cov"], "cov", d, into=cov)
    S_exact = R["cov"] = _exact_cov(cov["cov"])
    H = _num(doc, "heads", 1, MAX_TRAIN_HEADS, integer=True)
    beta = _num(doc, "beta", 0, 1e6, into=R)
    lam = _num(doc, "weight_decay", 0, 1e6, into=R)
    eta = _num(doc, "step", 0, 10, open_lo=True, into=R)
    steps = _num(doc, "steps", 1, MAX_TRAIN_STEPS, integer=True)
    seed = _num(doc, "seed", 0, 2 ** 63 - 1, integer=True)
    rec = _num(doc, "record_every", 1, MAX_TRAIN_STEPS, integer=True, default=max(1, steps // 200))
    init = doc.get("init", {})
    if not isinstance(init, dict) or set(init) - {"V", "B", "spread"}:
        raise InputError("training spec: 'init' must be an object with optional keys V, B, spread")
    V0 = _arr(init["V"], "init.V", d, into=R) if "V" in init else np.zeros((d, d))
    B0 = _arr(init["B"], "init.B", d, into=R) if "B" in init else np.zeros((d, d))
    R.setdefault("init.V", zero_m)
    R.setdefault("init.B", zero_m)
    spread = _num(init, "spread", 0, 1e3, default=INIT_SPREAD_DEFAULT, into=R, name="init.spread")
    loss = doc.get("loss")
    if not isinstance(loss, dict) or "kind" not in loss:
        raise InputError("training spec: 'loss' must be an object with a 'kind'")
    kind = loss["kind"]
    if regime == "shallow":
        if kind in NONCONVEX_SHALLOW:
            raise InputError(f"training spec: the shallow regime needs a loss convex in the layer output; "
                             f"{NONCONVEX_SHALLOW[kind]}. Use kind 'regression' (E|y − (Gx + c)|²)")
        if kind != "regression":
            raise InputError(f"training spec: unknown shallow loss {kind!r}; the shallow regime takes 'regression'"[:200])
        if set(loss) - {"kind", "G", "c"} or "G" not in loss:
            raise InputError("training spec: a regression loss has keys kind, G and optional c")
        model = ShallowModel(A, b, m, S, _arr(loss["G"], "loss.G", d, into=R),
                             _arr(loss["c"], "loss.c", d, vector=True, into=R) if "c" in loss else np.zeros(d))
        R.setdefault("loss.c", zero_v)
        if "T" in doc or "segments" in doc:
            raise InputError("training spec: 'T' and 'segments' belong to the deep regime")
    else:
        if kind not in ("frobenius", "kl"):
            raise InputError(f"training spec: the deep regime takes the loss 'frobenius' or 'kl', got {kind!r}"[:200])
        if set(loss) - {"kind", "target"} or not isinstance(loss.get("target"), dict):
            raise InputError("training spec: a deep loss has keys kind and target {mean, cov}")
        from riccati_verify.core.io import parse_matrix, parse_vector

        t = loss["target"]
        if set(t) != {"mean", "cov"}:
            raise InputError("training spec: loss.target needs exactly 'mean' and 'cov'")
        tm, _ = parse_vector(t["mean"], "loss.target.mean")
        tS, _ = parse_matrix(t["cov"], "loss.target.cov")
        if len(tm) != d or len(tS) != d:
            raise InputError(f"training spec: loss.target must have dimension {d}")
        R["loss.target.mean"], R["loss.target.cov"] = tm, tS
        try:
            target = Gaussian(tm, tS)
            loss_fn = TerminalLoss(kind, target)
        except (ValueError, TypeError) as e:
            raise InputError(f"training spec: loss.target: {e}") from None
        T = _num(doc, "T", 0, MAX_DEPTH, open_lo=True, into=R)
        segs = _num(doc, "segments", 1, MAX_SEGMENTS, integer=True, default=1)
        if kind == "kl" and not _is_pd(S_exact):
            raise InputError("training spec: the KL loss needs a positive definite 'cov' (exact LDLᵀ)")
        if kind == "kl" and np.min(np.linalg.eigvalsh(S)) <= 0:      # the float run needs it as well
            raise InputError("training spec: the KL loss needs a positive definite 'cov'; its float rounding is "
                             "singular")
        model = DeepModel(A, b, m, S, T, loss_fn, segs)
    if beta > 0 and spread == 0:
        raise InputError("training spec: with beta > 0 the initial head law needs init.spread > 0 "
                         "(a point mass has entropy −∞)")
    floor = MIN_REL_SPREAD * max(1.0, float(np.abs(V0).max()), float(np.abs(B0).max()))
    if beta > 0 and spread < floor:
        raise InputError(f"training spec: with beta > 0, init.spread = {spread:.3g} is below {floor:.3g} "
                         f"(2^-40 × max(1, |V0|, |B0|)): in floats the initial heads would be (nearly) equal and "
                         f"their entropy could not be estimated")
    segs = 1 if regime == "shallow" else model.segments
    if steps * H * segs > MAX_WORK:
        raise InputError(f"training spec: steps × heads × segments = {steps * H * segs} exceeds {MAX_WORK:.0e}")
    if regime == "deep" and steps * segs > MAX_DEEP_SOLVES:
        raise InputError(f"training spec: the deep regime solves the moment ODE twice per step and segment; "
                         f"steps × segments = {steps * segs} exceeds {MAX_DEEP_SOLVES}")
    return TrainingSpec(regime, model, H, beta, lam, eta, steps, seed, V0, B0, spread, rec, kind,
                        R if exact else None)


def load_spec(path) -> TrainingSpec:
    """Read and validate a training spec file (JSON, bounded size; see `spec_from_dict`)."""
    from riccati_verify.core.io import read_json_file

    return spec_from_dict(read_json_file(path, "training spec"))


# --------------------------------------------------------------------------- entropy

def gaussian_entropy(C: np.ndarray) -> float:
    """Differential entropy ½ log det(2πe C) of N(·, C); −inf for a singular C."""
    sign, logdet = np.linalg.slogdet(C)
    D = C.shape[0]
    return 0.5 * (D * math.log(2 * math.pi * math.e) + logdet) if sign > 0 else -math.inf


def entropy_gaussian_estimate(X: np.ndarray) -> float | None:
    """Bias-corrected Gaussian entropy estimate from samples X (H, D); None when H ≤ D.

    Valid only for Gaussian samples: E log det Ĉ = log det C + Σ_{i=1}^{D} [ψ((H−i)/2) − log((H−1)/2)]
    for the unbiased sample covariance Ĉ (Wishart), so that term is subtracted.
    """
    H, D = X.shape
    if H <= D:
        return None
    C = np.cov(X, rowvar=False).reshape(D, D)
    sign, logdet = np.linalg.slogdet(C)
    if sign <= 0:
        return None
    bias = float(np.sum(digamma((H - np.arange(1, D + 1)) / 2)) - D * math.log((H - 1) / 2))
    return 0.5 * (D * math.log(2 * math.pi * math.e) + logdet - bias)


# --------------------------------------------------------------------------- the mean-field closure

def _flat(V, B):
    return np.concatenate([V.reshape(V.shape[0], -1), B.reshape(B.shape[0], -1)], axis=1)


def closure_aggregates(mu: np.ndarray, C: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    """(E V, E V⊗B) of N(μ, C) on θ = (vec V, vec B): E V⊗B = μ_V ⊗ μ_B + Cov(V, B)."""
    n = d * d
    mV, mB = mu[:n].reshape(d, d), mu[n:].reshape(d, d)
    K = np.einsum("ij,kl->ijkl", mV, mB) + C[:n, n:].reshape(d, d, d, d)
    return mV, K


def _drift_matrix(GV, GK, lam, d):
    n = d * d
    Ch = GK.reshape(n, n)
    Hm = lam * np.eye(2 * n)
    Hm[:n, n:] += Ch
    Hm[n:, :n] += Ch.T
    return np.concatenate([GV.ravel(), np.zeros(n)]), Hm


def _closure_loss(model, states, d):
    aggs = [closure_aggregates(mu, C, d) for mu, C in states]
    if isinstance(model, ShallowModel):
        L, GV, GK = model.loss(*aggs[0])
        return L, [(GV, GK)]
    return model.loss(aggs)


def closure_step(model, states, lam, beta, eta, d):
    """One Euler–Maruyama step of the H → ∞ (Gaussian) law; returns (new states, L, [(g, 𝐇)])."""
    L, grads = _closure_loss(model, states, d)
    out, mats = [], []
    for (mu, C), (GV, GK) in zip(states, grads):
        g, Hm = _drift_matrix(GV, GK, lam, d)
        R = np.eye(len(mu)) - eta * Hm
        out.append((mu - eta * (g + Hm @ mu), R @ C @ R.T + 2 * beta * eta * np.eye(len(mu))))
        mats.append((g, Hm))
    return out, L, mats


def closure_free_energy(model, states, lam, beta, d) -> tuple[float, float]:
    """(F, L) of the Gaussian states: F = L + (λ/2)Σ_k E|θ|² − β Σ_k h(N(μ_k, C_k))."""
    L, _ = _closure_loss(model, states, d)
    reg = sum(0.5 * lam * (mu @ mu + np.trace(C)) for mu, C in states)
    ent = sum(gaussian_entropy(C) for _, C in states) if beta > 0 else 0.0
    return float(L + reg - beta * ent), float(L)


def closure_fixed_point(model, states, lam, beta, eta, d, *, tol=1e-12, max_iter=300, damping=0.5,
                        max_plain=200_000, progress=None):
    """The stationary law of the discretised H → ∞ dynamics (a fixed point of `closure_step`).

    Damped proximal-Gibbs iteration: at the current law, the fixed point of the affine step with
    frozen (g, 𝐇) is μ = −𝐇⁻¹g and the solution C of the discrete Lyapunov equation
    C = (I − η𝐇)C(I − η𝐇)ᵀ + 2βηI; move a fraction `damping` towards it.  Converged when one
    `closure_step` moves the law by less than `tol`.  Where that iteration does not contract (a
    strong coupling), plain `closure_step` iteration from the start, at most `max_plain` steps.
    `progress` (a `core.progress.Progress`, optional) gets a note every 1000 iterations.
    Returns (states, iterations, converged)."""
    out = _gibbs_iteration(model, states, lam, beta, eta, d, tol, max_iter, damping, progress)
    if out[2]:
        return out
    for it in range(1, max_plain + 1):
        if progress is not None and it % 1000 == 0:
            progress.note(f"plain iteration {it} of at most {max_plain}")
        new, _, _ = closure_step(model, states, lam, beta, eta, d)
        delta = max(max(np.abs(a - c).max(), np.abs(b - e).max()) for (a, b), (c, e) in zip(new, states))
        states = new
        if not np.isfinite(delta):
            return states, max_iter + it, False
        if delta < tol:
            return states, max_iter + it, True
    return states, max_iter + max_plain, False


def _gibbs_iteration(model, states, lam, beta, eta, d, tol, max_iter, damping, progress=None):
    from scipy.linalg import solve_discrete_lyapunov

    for it in range(1, max_iter + 1):
        if progress is not None and it % 10 == 0:
            progress.note(f"Gibbs iteration {it} of at most {max_iter}")
        stepped, _, mats = closure_step(model, states, lam, beta, eta, d)
        delta = max(max(np.abs(a - c).max(), np.abs(b - e).max()) for (a, b), (c, e) in zip(stepped, states))
        if not np.isfinite(delta):
            return states, it, False
        if delta < tol:
            return states, it, True
        new = []
        for (mu, C), (g, Hm) in zip(states, mats):
            try:
                mu_t = -np.linalg.solve(Hm, g)
            except np.linalg.LinAlgError:
                return states, it, False
            R = np.eye(len(mu)) - eta * Hm
            C_t = solve_discrete_lyapunov(R, 2 * beta * eta * np.eye(len(mu))) if beta > 0 else np.zeros_like(C)
            new.append(((1 - damping) * mu + damping * mu_t, (1 - damping) * C + damping * (C_t + C_t.T) / 2))
        states = new
    return states, max_iter, False


# --------------------------------------------------------------------------- training

def initial_heads(spec: TrainingSpec, rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """H heads per segment from the Gaussian initial law V = V0 + sE, B = B0 + sF (E, F standard normal)."""
    d, H, s = spec.dim, spec.heads, spec.init_spread
    return [(spec.init_V + s * rng.standard_normal((H, d, d)), spec.init_B + s * rng.standard_normal((H, d, d)))
            for _ in range(spec.segments)]


@dataclass
class TrainingRun:
    """A training run: records along training time s, the mean-field reference and the verdict."""

    spec: TrainingSpec
    s: np.ndarray = field(repr=False)
    loss: np.ndarray = field(repr=False)                 # L(ρ̂_H)
    objective: np.ndarray = field(repr=False)            # L + (λ/2) mean|θ|² (regularised objective)
    free_energy: np.ndarray | None = field(repr=False)   # objective − β·(entropy estimate), or None
    moments: list[dict] = field(repr=False)              # head-measure statistics per record
    closure_free_energy: np.ndarray | None = field(default=None, repr=False)
    closure_loss: np.ndarray | None = field(default=None, repr=False)
    free_energy_star: float | None = None                # F at the closure's fixed point
    fixed_point_converged: bool = False
    stopped: str = ""
    entropy_note: str = ""
    seconds: float = 0.0
    heads: list | None = field(default=None, repr=False)              # the final particles, per segment
    closure_states: list | None = field(default=None, repr=False)     # the final H → ∞ law, per segment

    @property
    def seed(self) -> int:
        """The seed of every random draw of this run."""
        return self.spec.seed

    @property
    def status(self):
        """Confirmed numerically when the run finished with finite values and the (estimated) free energy,
        or the objective where there is none, ended below its start; not certified otherwise."""
        from riccati_verify.core.result import Status

        track = self.free_energy if self.free_energy is not None else self.objective
        if self.stopped or not np.all(np.isfinite(track)):
            return Status.NOT_CERTIFIED
        return Status.CONFIRMED_NUMERICALLY if track[-1] < track[0] else Status.NOT_CERTIFIED

    @property
    def certificate(self) -> None:
        """No certificate: a training run is floating-point evidence."""
        return None

    def gap(self) -> np.ndarray | None:
        """Particle free-energy gap F̂(s) − F*, F* from the closure's fixed point (None if unavailable)."""
        if self.free_energy is None or self.free_energy_star is None:
            return None
        return self.free_energy - self.free_energy_star

    def to_dict(self) -> dict:
        """JSON form: settings (seed included), the records and the reference."""
        from riccati_verify.core.serial import jsonable

        lst = lambda a: None if a is None else [float(x) for x in a]
        return jsonable({"status": str(self.status), "settings": self.spec.to_dict(), "seed": self.seed,
                         "s": lst(self.s), "loss": lst(self.loss), "objective": lst(self.objective),
                         "free_energy": lst(self.free_energy), "entropy_estimator": self.entropy_note,
                         "closure_free_energy": lst(self.closure_free_energy), "closure_loss": lst(self.closure_loss),
                         "free_energy_star": self.free_energy_star, "fixed_point_converged": self.fixed_point_converged,
                         "gap": lst(self.gap()), "moments": self.moments, "stopped": self.stopped,
                         "seconds": self.seconds})


def _moments(heads, d):
    out = []
    for V, B in heads:
        X = _flat(V, B)
        C = np.cov(X, rowvar=False) if X.shape[0] > 1 else np.zeros((X.shape[1], X.shape[1]))
        out.append({"mean_V": V.mean(axis=0).tolist(), "mean_B": B.mean(axis=0).tolist(),
                    "second_moment": float(np.mean(np.sum(X * X, axis=1))),
                    "cov_trace": float(np.trace(np.atleast_2d(C)))})
    return out


def train(spec: TrainingSpec, *, progress: bool = False, closure: bool = True, fixed_point: bool = True) -> TrainingRun:
    """Run H-particle mean-field Langevin on the heads (seeded) and record along s.

    With `closure`, the H → ∞ Gaussian law of the same discretisation runs alongside (the
    reference for the particle error) and, with `fixed_point`, its fixed point gives F*.
    """
    import time as _time

    t0 = _time.perf_counter()
    rng = np.random.default_rng(spec.seed)
    d, H, lam, beta, eta = spec.dim, spec.heads, spec.weight_decay, spec.beta, spec.step
    heads = initial_heads(spec, rng)
    D = spec.head_dim
    use_entropy = H > D
    note = ("bias-corrected Gaussian plug-in estimate from the particles' sample covariance (consistent: the "
            "H -> inf law is Gaussian; O(1/H) error at finite H; see numeric.training)" if use_entropy else
            f"no entropy estimate: H = {H} ≤ D = {D}; only the regularised objective L + (λ/2)E|θ|² is recorded")
    if beta == 0:
        note, use_entropy = "β = 0: the free energy is the regularised objective (no entropy term)", True
    mu0 = np.concatenate([spec.init_V.ravel(), spec.init_B.ravel()])
    states = [(mu0.copy(), spec.init_spread ** 2 * np.eye(D)) for _ in range(spec.segments)]
    rec_s, rec_L, rec_obj, rec_F, rec_mom, rec_cF, rec_cL = [], [], [], [], [], [], []
    bar = Progress(spec.steps, f"train ({spec.regime}, H={H})", enabled=progress and spec.steps >= 50)
    stopped = ""

    def record(k, L, heads, states):
        nonlocal use_entropy, note
        rec_s.append(k * eta)
        rec_L.append(float(L))
        reg = sum(0.5 * lam * float(np.mean(np.sum(_flat(V, B) ** 2, axis=1))) for V, B in heads)
        rec_obj.append(float(L) + reg)
        if use_entropy:
            ents = [0.0] if beta == 0 else [entropy_gaussian_estimate(_flat(V, B)) for V, B in heads]
            if any(e is None for e in ents):
                # a collapsed (singular) sample covariance has no estimate: drop the free energy for the
                # whole run rather than splice records of two different quantities
                use_entropy = False
                note = (f"no entropy estimate: the particles' sample covariance is singular at s = {k * eta:g}; "
                        f"only the regularised objective L + (λ/2)E|θ|² is recorded")
            else:
                rec_F.append(float(L) + reg - beta * sum(ents))
        rec_mom.append(_moments(heads, d))
        if closure:
            F, Lc = closure_free_energy(spec.model, states, lam, beta, d)
            rec_cF.append(F); rec_cL.append(Lc)

    with np.errstate(all="ignore"):
        for k in range(spec.steps + 1):
            try:
                L, per = functional_gradient(spec.model, heads)
            except ArithmeticError as e:
                stopped = f"step {k}: {e}"
                break
            if not np.isfinite(L):
                stopped = f"step {k}: the loss is not finite"
                break
            if k % spec.record_every == 0 or k == spec.steps:
                record(k, L, heads, states)
            if k == spec.steps:
                break
            new = []
            for (V, B), (_, _, gV, gB) in zip(heads, per):
                sd = math.sqrt(2 * beta * eta)
                new.append((V - eta * (gV + lam * V) + sd * rng.standard_normal(V.shape),
                            B - eta * (gB + lam * B) + sd * rng.standard_normal(B.shape)))
            heads = new
            if closure:
                try:
                    states, _, _ = closure_step(spec.model, states, lam, beta, eta, d)
                except ArithmeticError as e:
                    stopped = f"step {k}: mean-field reference: {e}"
                    break
            bar.step()
    run = TrainingRun(spec, np.array(rec_s), np.array(rec_L), np.array(rec_obj),
                      np.array(rec_F) if use_entropy else None, rec_mom,
                      np.array(rec_cF) if closure else None, np.array(rec_cL) if closure else None,
                      stopped=stopped, entropy_note=note, heads=heads, closure_states=states if closure else None)
    if closure and fixed_point and not stopped and (beta > 0 or lam > 0):
        try:
            with Progress(None, "mean-field fixed point (F*)", enabled=progress) as fp_bar:
                fp, _, ok = closure_fixed_point(spec.model, states, lam, beta, eta, d,
                                                tol=1e-9 if spec.regime == "deep" else 1e-13,
                                                max_plain=3000 if spec.regime == "deep" else 200_000,
                                                progress=fp_bar)
            run.fixed_point_converged = ok
            if ok:
                run.free_energy_star = closure_free_energy(spec.model, fp, lam, beta, d)[0]
        except ArithmeticError:
            pass
    run.seconds = _time.perf_counter() - t0
    return run

"""The NTK Gram matrix of the deep outputs in the head parameters, enclosed in ball arithmetic for any d
(seed 001 Theorem 8.5, local linear convergence; MATH.md §16).

The outputs y = (m(T), Σ(T)_ij, i ≤ j) of the moment flow depend on the head measure only through
the aggregates p = (V̄, K) (`numeric.training`), so with Φ = ∂y/∂p and, for one head θ = (V, B),
E_θ = ∂(V, V ⊗ B)/∂θ, the NTK Gram matrix of H heads is

    𝒦 = (1/H) Σ_h (Φ E_θh)(Φ E_θh)ᵀ = Φ 𝒲 Φᵀ,   𝒲 = (1/H) Σ_h E_θh E_θhᵀ   (exact rationals).

Φ solves the variational equations of the moment flow.  State, sensitivities and all together form
a *quadratic* polynomial ODE in z = (m, Σ, ∂m/∂p, ∂Σ/∂p) (the parameters are constant on a
segment): with M = K:Σ,

    ṁ = (A + V̄)m + b + Mm,   Σ̇ = AΣ + ΣAᵀ + MΣ + ΣMᵀ,
    (∂m)˙ = (A + V̄)∂m + δV̄ m + M∂m + (K:∂Σ)m + (δK:Σ)m,
    (∂Σ)˙ = A∂Σ + ∂ΣAᵀ + M∂Σ + ∂ΣMᵀ + (K:∂Σ)Σ + Σ(K:∂Σ)ᵀ + (δK:Σ)Σ + Σ(δK:Σ)ᵀ,

so the Taylor coefficients obey the Cauchy-product recursion
z_{k+1} = (c[k = 0] + ℓ(z_k) + Σ_{i+j=k} q(z_i, z_j))/(k + 1), q the bilinear part.  It is
integrated by Moore's interval Taylor method, as the checker's single-head flow is (a step is
accepted when the Picard box E satisfies X0 + [0, h]·f(E) ⊆ E, and the Lagrange remainder is the
K-th coefficient evaluated on E), here in python-flint `arb_mat` (rows of the sensitivity
matrices are the P = d² + d⁴ directions of p, row-major vec).

𝒦 is then a ball matrix, and λ_min(W^½ 𝒦 W^½) > t (W the loss weights of the outputs) is proved
by ball LDLᵀ of 𝒦 − tW⁻¹ (a congruence of W^½𝒦W^½ − tI) after an exact midpoint preconditioning
(`core.balls`).  One depth segment (ρ constant in depth).
"""

from __future__ import annotations

import math
from fractions import Fraction

from flint import arb, arb_mat, ctx, fmpq_mat

from riccati_verify.core.balls import (arb_matrix, arb_of, congruence_preconditioned, fmpq_of, identity,
                                       proves_positive_definite, symmetrized)

__all__ = ["enclose_segment_sensitivities", "enclose_sensitivities", "flow_step_work", "ntk_certified",
           "ntk_certified_segments"]

ORDER = 12
PICARD_TRIES = 12
SHRINK_TRIES = 30
MAX_STEPS = 500
MAX_NORM = 1e6
"""A state (or sensitivity) this large means a blow-up nearby: give up instead of creeping up to it."""
MIN_STEP = Fraction(1, 2 ** 30)


def flow_step_work(d: int, segments: int) -> int:
    """Work units of one validated step: d²·(sensitivity columns) plus a fixed part.  Measured (s18, 2 shared
    cores, T = 4, 20 steps): 1.0e-4 to 1.5e-4 s per unit for d = 1..3 and 1..16 segments (d = 3, 16 segments:
    13 024 units, 1.6 s a step), so a budget of W units bounds a flow by about 1.5e-4·W seconds."""
    return d * d * segments * (d * d + d ** 4) + 64


def _kron(X: arb_mat, Y: arb_mat) -> arb_mat:
    out = arb_mat(X.nrows() * Y.nrows(), X.ncols() * Y.ncols())
    for i in range(X.nrows()):
        for j in range(X.ncols()):
            x = X[i, j]
            if x == 0:
                continue
            for k in range(Y.nrows()):
                for l in range(Y.ncols()):
                    out[i * Y.nrows() + k, j * Y.ncols() + l] = x * Y[k, l]
    return out




def _vec(S: arb_mat) -> arb_mat:
    d = S.nrows()
    v = arb_mat(d * S.ncols(), 1)
    for i in range(d):
        for j in range(S.ncols()):
            v[i * S.ncols() + j, 0] = S[i, j]
    return v


def _unvec(v: arb_mat, d: int, col: int = 0) -> arb_mat:
    S = arb_mat(d, d)
    for i in range(d):
        for j in range(d):
            S[i, j] = v[i * d + j, col]
    return S


class _Field:
    """The quadratic field of the module docstring for fixed rational (A, b, V̄, K) of one depth segment.

    The sensitivity matrices have `cols` columns, the parameters of every segment; this segment's
    own block starts at column `off` (the forcing terms δV̄, δK act there only, the other columns
    follow the homogeneous variational equation)."""

    def __init__(self, A, b, Vbar, K, cols: int | None = None, off: int = 0):
        d = len(A)
        self.d, self.n, self.P = d, d * d, d * d + d ** 4
        self.cols, self.off = cols or self.P, off
        self.A, self.Vb = arb_matrix(A), arb_matrix(Vbar)
        self.b = arb_matrix([[x] for x in b])
        # Kmat[(i, l), (j, k)] = K_ijkl, so vec(K:Σ) = Kmat vec(Σ)
        self.Kmat = arb_mat(self.n, self.n)
        for i in range(d):
            for j in range(d):
                for k in range(d):
                    for l in range(d):
                        self.Kmat[i * d + l, j * d + k] = arb_of(K[i][j][k][l])
        I = identity(d)
        self.AV = self.A + self.Vb
        self.Alift = _kron(self.A, I) + _kron(I, self.A)
        # transpose permutation on row-major vec: vec(Xᵀ) = Tr vec(X)
        self.Tr = arb_mat(self.n, self.n)
        for i in range(d):
            for j in range(d):
                self.Tr[j * d + i, i * d + j] = 1

    def zero(self):
        d, n, c = self.d, self.n, self.cols
        return [arb_mat(d, 1), arb_mat(d, d), arb_mat(d, c), arb_mat(n, c)]

    def const(self):
        z = self.zero()
        z[0] = self.b
        return z

    def lin(self, z):
        m, S, Pm, PS = z
        d = self.d
        Pm1 = self.AV * Pm
        for i in range(d):                      # δV̄ = E_ij: (E_ij m)_i = m_j
            for j in range(d):
                Pm1[i, self.off + i * d + j] += m[j, 0]
        return [self.AV * m, self.A * S + S * self.A.transpose(), Pm1, self.Alift * PS]

    def quad(self, za, zb):
        """q(za, zb): each product's left factor from za, right factor from zb."""
        d, n = self.d, self.n
        ma, Sa, Pma, PSa = za
        mb, Sb, Pmb, PSb = zb
        M = _unvec(self.Kmat * _vec(Sa), d)
        I = identity(d)
        N = self.Kmat * PSa                     # columns: vec(K:∂Σ_e)
        Pm1 = M * Pmb + _kron(I, mb.transpose()) * N
        PS1 = (_kron(M, I) + _kron(I, M)) * PSb + (_kron(I, Sb.transpose()) + self.Tr * _kron(I, Sb)) * N
        # the δK directions, e = n + ((i d + j) d + k) d + l: δK:Σ = Σ_jk E_il
        for i in range(d):
            for j in range(d):
                for k in range(d):
                    for l in range(d):
                        e = self.off + n + ((i * d + j) * d + k) * d + l
                        s = Sa[j, k]
                        Pm1[i, e] += s * mb[l, 0]
                        for q in range(d):        # (E_il Σ_b)_{iq} = Σ_b[l, q], (Σ_b E_li)_{qi} = Σ_b[q, l]
                            PS1[i * d + q, e] += s * Sb[l, q]
                            PS1[q * d + i, e] += s * Sb[q, l]
        return [M * mb, M * Sb + Sb * M.transpose(), Pm1, PS1]

    def rhs(self, z):
        return _add(_add(self.const(), self.lin(z)), self.quad(z, z))

    def coefficients(self, z, K: int):
        zs = [z]
        c = self.const()
        for k in range(K):
            acc = self.lin(zs[k])
            if k == 0:
                acc = _add(acc, c)
            for i in range(k + 1):
                acc = _add(acc, self.quad(zs[i], zs[k - i]))
            zs.append([X * (arb(1) / (k + 1)) for X in acc])
        return zs


def _add(x, y):
    return [a + b for a, b in zip(x, y)]


def _entries(z):
    for X in z:
        for i in range(X.nrows()):
            for j in range(X.ncols()):
                yield X[i, j]


def _max_abs(z) -> float:
    return max((float(abs(e).upper()) for e in _entries(z)), default=0.0)


def _max_rad(z) -> float:
    return max((float(e.rad()) for e in _entries(z)), default=0.0)


def _inflate(z, delta: float):
    out = []
    for X in z:
        Y = arb_mat(X.nrows(), X.ncols())
        for i in range(X.nrows()):
            for j in range(X.ncols()):
                e = X[i, j]
                Y[i, j] = arb(e.mid(), e.rad() * 2) + arb(0, delta)
        out.append(Y)
    return out


def _contains(E, X) -> bool:
    return all(a.contains(b) for a, b in zip(_entries(E), _entries(X)))


def _hull(E, X):
    out = []
    for A, B in zip(E, X):
        Y = arb_mat(A.nrows(), A.ncols())
        for i in range(A.nrows()):
            for j in range(A.ncols()):
                Y[i, j] = A[i, j].union(B[i, j])
        out.append(Y)
    return out


def _horner(coeffs, h: arb):
    acc = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        acc = [a * h + b for a, b in zip(acc, c)]
    return acc


def _picard_box(z, F: _Field, H: arb, h: float):
    f = F.rhs(z)
    E = [X + Y * H for X, Y in zip(z, f)]
    delta = _max_abs(f) * h / 4 + 2.0 ** -40 * max(1.0, _max_abs(z))
    for _ in range(PICARD_TRIES):
        E = _inflate(E, delta)
        fE = F.rhs(E)
        N = [X + Y * H for X, Y in zip(z, fE)]
        if _contains(E, N):
            return E
        E = _hull(E, N)
    return None


def _dyadic(x: float) -> Fraction:
    e = max(0, 20 - math.frexp(x)[1])
    return Fraction(max(1, int(x * 2 ** e)), 2 ** e)


def enclose_sensitivities(A, b, m0, S0, Vbar, K, T, *, order: int = ORDER, prec: int = 128,
                          tol: float = 2.0 ** -60, max_steps: int = MAX_STEPS, max_attempts: int | None = None,
                          progress=None) -> dict:
    """Balls containing (m(T), Σ(T), ∂m(T)/∂p, ∂Σ(T)/∂p), p = (vec V̄, vec K); inputs exact rationals.

    Returns {"ok": True, "z": [m, Σ, ∂m, ∂Σ], "steps": n, "attempts": a, "radius": r} or {"ok": False,
    "reason": ...}."""
    return enclose_segment_sensitivities(A, b, m0, S0, [(Vbar, K)], T, order=order, prec=prec, tol=tol,
                                         max_steps=max_steps, max_attempts=max_attempts, progress=progress)


def enclose_segment_sensitivities(A, b, m0, S0, aggregates, T, *, order: int = ORDER, prec: int = 128,
                                  tol: float = 2.0 ** -60, max_steps: int = MAX_STEPS, max_attempts: int | None = None,
                                  progress=None) -> dict:
    """As `enclose_sensitivities` for n equal depth segments [(V̄_k, K_k)] over [0, T]: the sensitivity
    columns are the n parameter blocks p_k = (vec V̄_k, vec K_k) in order (max_steps over all segments).
    `max_attempts` (None: max_steps·SHRINK_TRIES, the loop's own bound) bounds the step attempts, each one
    Picard box and one remainder: the work of a flow is its attempts, a validated step may take SHRINK_TRIES
    of them.  `progress` (a `core.progress.Progress`, optional) counts one unit per validated step."""
    old = ctx.prec
    ctx.prec = prec
    try:
        d = len(A)
        P = d * d + d ** 4
        nseg = len(aggregates)
        fields = [_Field(A, b, Vb, Kk, cols=nseg * P, off=k * P) for k, (Vb, Kk) in enumerate(aggregates)]
        z = fields[0].zero()
        z[0] = arb_matrix([[x] for x in m0])
        z[1] = arb_matrix(S0)
        budget = {"steps": 0, "attempts": 0, "max_steps": max_steps,
                  "max_attempts": max_steps * SHRINK_TRIES if max_attempts is None else max_attempts}
        for k, F in enumerate(fields):
            out = _enclose_one(z, F, Fraction(T) / nseg, order, tol, budget, progress, f"segment {k + 1}/{nseg}")
            if not out["ok"]:
                return dict(out, attempts=budget["attempts"])
            z = out["z"]
        return {"ok": True, "z": z, "steps": budget["steps"], "attempts": budget["attempts"], "radius": _max_rad(z),
                "d": d}
    finally:
        ctx.prec = old


def _enclose_one(z, F: _Field, T: Fraction, order: int, tol: float, budget: dict, progress=None,
                 where: str = "") -> dict:
    """Moore's method over one segment of length T from the ball state z; `budget` holds the steps and attempts
    spent so far and their bounds (max_steps, max_attempts), updated in place."""
    t, max_steps = Fraction(0), budget["max_steps"]
    while t < T:
        steps = budget["steps"]
        if steps >= max_steps:
            return {"ok": False, "reason": f"step budget {max_steps} spent at {where} t = {float(t):.4g} (blow-up nearby?)"}
        if not _max_abs(z) < MAX_NORM:
            return {"ok": False, "reason": f"state norm above {MAX_NORM:.0e} at t = {float(t):.4g} (blow-up?)"}
        if _max_rad(z) > 1e-3 * max(1.0, _max_abs(z)):
            return {"ok": False, "reason": f"enclosure too wide at t = {float(t):.4g} (wrapping or blow-up)"}
        zs = F.coefficients(z, order)
        scale = max(1.0, _max_abs(z))
        la = max(_max_abs(zs[order - 1]) ** (1 / (order - 1)), _max_abs(zs[order]) ** (1 / order), 1e-300)
        h = min(Fraction(T - t), _dyadic(0.5 * (tol * scale) ** (1 / order) / la))
        if (T - t) - h < h / 16:
            h = T - t
        if h < MIN_STEP * T:
            return {"ok": False, "reason": f"step size collapsed at t = {float(t):.4g} (blow-up?)"}
        for _ in range(SHRINK_TRIES):
            if budget["attempts"] >= budget["max_attempts"]:
                return {"ok": False, "reason": f"attempt budget {budget['max_attempts']} spent at {where} "
                                               f"t = {float(t):.4g} after {steps} validated steps (step-size retries: "
                                               f"blow-up nearby?)"}
            budget["attempts"] += 1
            hb = arb_of(h)
            E = _picard_box(z, F, arb(0).union(hb), float(h))
            if E is not None:
                rem = [X * hb ** order for X in F.coefficients(E, order)[order]]
                if _max_abs(rem) <= tol * scale:
                    z = _add(_horner(zs[:order], hb), rem)
                    break
            h /= 2
        else:
            return {"ok": False, "reason": f"no validated step at t = {float(t):.4g} (blow-up inside?)"}
        t += h
        budget["steps"] = steps = steps + 1
        if progress is not None:
            progress.step(f"{where} t = {float(t):.3g} of {float(T):.3g}, step {steps} of at most {max_steps}")
    return {"ok": True, "z": z, "steps": budget["steps"]}


def _head_lift(V, B) -> fmpq_mat:
    """E_θ = ∂(vec V, vec V⊗B)/∂(vec V, vec B): P × 2d², exact."""
    d = len(V)
    n = d * d
    E = fmpq_mat(n + n * n, 2 * n)
    for a in range(n):
        E[a, a] = 1
    for i in range(d):
        for j in range(d):
            for k in range(d):
                for l in range(d):
                    e = n + ((i * d + j) * d + k) * d + l
                    E[e, i * d + j] = fmpq_of(B[k][l])
                    E[e, n + k * d + l] = fmpq_of(V[i][j])
    return E


def ntk_certified(A, b, m0, S0, T, heads, *, prec: int = 128, max_steps: int = MAX_STEPS,
                  max_attempts: int | None = None, progress=None) -> dict:
    """The NTK Gram matrix 𝒦 of y = (m(T), Σ(T)_ij i ≤ j) for exact rational heads [(V, B)], as a ball
    matrix, with rational t_I ≤ λ_min(𝒦) and t_W ≤ λ_min(W^½𝒦W^½) proved (None when not proved)."""
    return ntk_certified_segments(A, b, m0, S0, T, [heads], prec=prec, max_steps=max_steps,
                                  max_attempts=max_attempts, progress=progress)


def ntk_certified_segments(A, b, m0, S0, T, segment_heads, *, prec: int = 128, max_steps: int = MAX_STEPS,
                           max_attempts: int | None = None, progress=None) -> dict:
    """`ntk_certified` for ρ piecewise constant in depth: segment_heads[k] are the H heads of depth
    segment k (equal lengths T/n); 𝒦 = (1/H) Σ_k Σ_h (Φ_k E_θkh)(Φ_k E_θkh)ᵀ, summed over segments as
    `numeric.training.ntk_gram` does."""
    import numpy as np

    d = len(A)
    H = len(segment_heads[0])
    n = d * d
    P = n + n * n
    if any(len(hs) != H for hs in segment_heads):
        raise ValueError("every depth segment needs the same number of heads")
    from riccati_verify.numeric.training import aggregates

    # the float model's aggregates, on object arrays of Fractions: exact
    exact_heads = lambda heads, k: np.array([[[Fraction(x) for x in r] for r in h[k]] for h in heads], dtype=object)
    aggs = [tuple(a.tolist() for a in aggregates(exact_heads(heads, 0), exact_heads(heads, 1)))
            for heads in segment_heads]
    enc = enclose_segment_sensitivities(A, b, m0, S0, aggs, T, prec=prec, max_steps=max_steps,
                                        max_attempts=max_attempts, progress=progress)
    if not enc["ok"]:
        return {"proved": False, "reason": enc["reason"], "attempts": enc["attempts"]}
    old = ctx.prec
    ctx.prec = prec
    try:
        _, _, Pm, PS = enc["z"]
        rows, W = [], []
        for i in range(d):
            rows.append([Pm[i, e] for e in range(Pm.ncols())])
            W.append(Fraction(1))
        for i in range(d):
            for j in range(i, d):
                rows.append([PS[i * d + j, e] for e in range(PS.ncols())])
                W.append(Fraction(1) if i == j else Fraction(2))
        Phi = arb_mat(rows)
        Wh = fmpq_mat(len(segment_heads) * P, len(segment_heads) * P)
        for k, heads in enumerate(segment_heads):
            Wk = fmpq_mat(P, P)
            for V, B in heads:
                E = _head_lift([[Fraction(x) for x in r] for r in V], [[Fraction(x) for x in r] for r in B])
                Wk += E * E.transpose()
            for i in range(P):
                for j in range(P):
                    Wh[k * P + i, k * P + j] = Wk[i, j]
        Kntk = Phi * arb_mat(Wh) * Phi.transpose() / H
        mid = np.array([[float(Kntk[i, j].mid()) for j in range(Kntk.ncols())] for i in range(Kntk.nrows())])
        w = np.sqrt(np.array([float(x) for x in W]))
        out = {"K": Kntk, "W": W, "steps": enc["steps"], "attempts": enc["attempts"], "radius": enc["radius"], "prec": prec,
               "float_lambda_min": float(np.linalg.eigvalsh(mid)[0]),
               "float_lambda_min_W": float(np.linalg.eigvalsh(w[:, None] * mid * w[None, :])[0])}
        for key, weights, guess in (("I", [Fraction(1)] * len(W), out["float_lambda_min"]),
                                    ("W", W, out["float_lambda_min_W"])):
            out[f"lambda_min_{key}_at_least"] = _prove_lower(Kntk, weights, guess)
        out["proved"] = out["lambda_min_I_at_least"] is not None and out["lambda_min_W_at_least"] is not None
        return out
    finally:
        ctx.prec = old


def _prove_lower(Kntk: arb_mat, weights, guess: float) -> Fraction | None:
    """The largest of t = guess·(1 − 10^-k), k = 6..1 (rational), with 𝒦 − t·diag(1/w) proved positive definite."""
    if not guess > 0:
        return None
    n = Kntk.nrows()
    for k in range(6, 0, -1):
        t = Fraction(guess * (1 - 10.0 ** -k)).limit_denominator(10 ** 12)
        N = arb_mat(n, n)
        for i in range(n):
            for j in range(n):
                N[i, j] = Kntk[i, j] - (arb_of(t / weights[i]) if i == j else 0)
        N = symmetrized(N)
        Np, _ = congruence_preconditioned(N)
        if proves_positive_definite(Np):
            return t
    return None

"""Long-horizon enclosure of the moment flow (MATH.md eq. 1.1) without the wrapping effect.

    ṁ = (A + V) m + V Σ B m + b,   Σ̇ = J Σ + Σ Jᵀ,   J = A + V Σ B

Lohner's QR method (R. J. Lohner, "Enclosing the solutions of ordinary initial
and boundary value problems", in Computer Arithmetic, Teubner 1987; N. S.
Nedialkov, K. R. Jackson, G. F. Corliss, "Validated solutions of initial value
problems for ordinary differential equations", Appl. Math. Comput. 105 (1999),
§4, and Nedialkov & Jackson, "A new perspective on the wrapping effect in
interval methods for IVPs for ODEs", 2001), with the flow Jacobian enclosed
through the variational equation (the C¹ form used by CAPD).  Trusted core:
imports only the standard library, python-flint, `riccati_verify.core` and
`riccati_verify.checker._validated_flow` (whose Taylor recursion, Picard box
and Horner sum it reuses).

The state is x = (m, Σ_ij for i ≤ j) ∈ ℝⁿ, n = d + d(d+1)/2 (Σ stays symmetric).
After step j the enclosure is the parallelepiped  x_j ∈ x̂_j + C_j r_j  with a
point centre x̂_j, a point (exact dyadic) matrix C_j and a ball vector r_j.
One step [t_j, t_j + h], with X = the box hull of x̂_j and x̂_j + C_j r_j:

1. *A-priori box.*  `_validated_flow._picard_box` from the ball X gives E with
   X + [0, h]·f(E) ⊆ E: the solutions from every x0 ∈ X exist on the step and
   stay in E (see `_validated_flow`, point 1).
2. *Centre.*  φ_h(x̂_j) ∈ y := Σ_{k<K} x_k(x̂_j) h^k + x_K(E) h^K  (Lagrange
   remainder, `_validated_flow` point 3).
3. *Jacobian.*  Dφ_h(x0), for every x0 ∈ X, lies in
       Jh := Σ_{k<K'} Φ_k(X) h^k + Φ_{K'}(E) · F · h^{K'},
   where Φ_k(x) are the Taylor coefficients of the variational equation
   Φ̇ = Df(x(t)) Φ, Φ(0) = I (the derivative of the coefficient recursion,
   evaluated as an interval extension), the remainder uses that the
   coefficients are linear in Φ(ξ) (Φ_{K'}(x(ξ), Φ(ξ)) = Φ_{K'}(x(ξ), I) Φ(ξ),
   x(ξ) ∈ E) and F ⊇ Φ(s) for s ∈ [0, h]: with L ≥ ‖Df(E)‖_∞, Gronwall gives
   |Φ_ab(s)| ≤ ‖Φ(s)‖_∞ ≤ e^{hL}, refined once by Φ(s) = I + ∫ Df Φ ∈ I + [0, h]·Df(E)·F.
4. *Mean value form.*  Row by row, φ_h(x0)_a − φ_h(x̂_j)_a = ∇φ_{h,a}(ξ_a)·(x0 − x̂_j)
   with ξ_a on the segment [x̂_j, x0] ⊆ X (a convex box).  With x0 = x̂_j + C_j ρ,
   ρ ∈ r_j:  φ_h(x0) ∈ y + (Jh C_j) r_j  (ball products contain every product of members).
5. *Re-representation (QR).*  M := Jh C_j, x̂_{j+1} := mid(y); C_{j+1} := Q, an
   orthonormalised (Gram-Schmidt, in floats: any invertible point matrix is
   sound) copy of mid(M) with its columns ordered by ‖col‖·|r|, largest first
   (Lohner's pivoting); Q⁻¹ is enclosed by a ball inverse, and
       r_{j+1} := (Q⁻¹ M) r_j + Q⁻¹ (y − x̂_{j+1}).
   Every point of y + M r_j is then x̂_{j+1} + Q ρ' with ρ' ∈ r_{j+1}.

Because C_j is (nearly) orthogonal and Q⁻¹M is nearly triangular, the radii
of r follow the linearised flow's singular values, i.e. the true contraction
or expansion, instead of growing like e^{‖|J|‖ t} as plain balls do.  Step
sizes, pivoting, Q and the centre are heuristics on midpoints: they change
the width, never soundness.  Failure (blow-up, radii that explode, a step size
that collapses, a spent step budget, a horizon beyond `MAX_DURATION`) is a
`LohnerEnclosure(ok=False, reason=...)`, never an exception.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import flint
from flint import arb, arb_mat

from riccati_verify.core import exact
from riccati_verify.core.balls import arb_of
from riccati_verify.checker._validated_flow import (
    BLOWUP_NORM, DEFAULT_ORDER, MIN_STEP_FRACTION, PICARD_TRIES, SAFETY, _contains, _dyadic_below, _Field,
    _horner, _hull, _inflate, _max_abs, _picard_box, _step_log2_guesses, ball_state, max_radius)

DEFAULT_PREC = 256
DEFAULT_JAC_ORDER = 12        # Taylor order of the variational (Jacobian) enclosure
DEFAULT_TOL_BITS = 100        # per-step remainder ≤ 2^-tol_bits · max(1, |state|)
JAC_TOL = 2.0 ** -30          # per step, |Jacobian remainder| ≤ JAC_TOL · max(1, |Jacobian|)
DEFAULT_MAX_STEPS = 20000
MAX_DURATION = Fraction(10 ** 4)
SHRINK_TRIES = 30
QR_PREC = 64
JAC_PREC = 128
STEP_CAP = 1.0              # h ≤ STEP_CAP / (∞-norm of Df's diagonal blocks): Picard rarely passes beyond

__all__ = ["LohnerEnclosure", "enclose_lohner", "enclose_lohner_params", "MAX_DURATION"]


@dataclass
class LohnerEnclosure:
    """Result of `enclose_lohner`: the final ball state, or ok=False with a reason.

    mean (d×1) and cov (d×d) are ball matrices containing m(T) and Σ(T) (None
    when not ok); t is the time reached (= the duration when ok); radius the
    largest entry radius of the final state; history the (t, radius) after
    each step (reports only)."""

    ok: bool
    mean: arb_mat | None
    cov: arb_mat | None
    steps: int
    reason: str = ""
    radius: float = 0.0
    t: Fraction = Fraction(0)
    history: list = field(default_factory=list)


class _Coords:
    """x = (m_0..m_{d-1}, Σ_ij for i ≤ j): conversions and index maps."""

    def __init__(self, d: int):
        self.d = d
        self.sidx = [(i, j) for i in range(d) for j in range(i, d)]
        self.N = len(self.sidx)
        self.n = d + self.N
        pos = {ij: d + e for e, ij in enumerate(self.sidx)}
        self.pos = lambda i, j: pos[(i, j) if i <= j else (j, i)]
        N, n = self.N, self.n
        # blockwise transpose of a d × N·d "hstack" (block e transposed in place)
        self.bt = [p * N * d + e * d + i for i in range(d) for e in range(N) for p in range(d)]
        # assembly of the n×n Jacobian from D (d×n, flat) and H (d×N·d, flat): index into D + H + [0]
        zero = d * n + d * N * d
        amap = [r * n + c for r in range(d) for c in range(n)]
        for (p, q) in self.sidx:
            amap += [zero] * d + [d * n + p * N * d + e * d + q for e in range(N)]
        self.amap = amap

    def to_state(self, x: arb_mat) -> tuple[arb_mat, arb_mat]:
        d = self.d
        m = arb_mat(d, 1, [x[i, 0] for i in range(d)])
        S = arb_mat(d, d, [x[self.pos(i, j), 0] for i in range(d) for j in range(d)])
        return m, S

    def to_vector(self, m: arb_mat, S: arb_mat) -> arb_mat:
        return arb_mat(self.n, 1, [m[i, 0] for i in range(self.d)] + [S[i, j] for (i, j) in self.sidx])

    def assemble(self, D: arb_mat, H: arb_mat) -> arb_mat:
        flat = D.entries() + H.entries() + [arb(0)]
        return arb_mat(self.n, self.n, [flat[k] for k in self.amap])


class _Variational:
    """Taylor coefficients of the flow Jacobian Φ (Φ̇ = Df(x)Φ, Φ(0) = I), batched.

    D_k (d×n) holds the mean rows of Φ_k; H_k (d × N·d) holds, block e, the
    symmetric Σ-part δΣ_k of column d + e (the m-columns have δΣ = 0: Σ does not
    depend on m).  Derivative of `_Field.coefficients`' recursion:
        (k+1) δm_{k+1} = (A+V) δm_k + V Σ_j (δS_j B m_{k−j} + S_j B δm_{k−j})
        (k+1) δS_{k+1} = δP + δPᵀ,  δP = A δS_k + V Σ_j (δS_j B S_{k−j} + S_j B δS_{k−j}).
    With δS, S symmetric, the right products are blockwise transposes of left
    ones: (δS_j B S_{k−j})ᵀ = S_{k−j} Bᵀ δS_j and (δS_j B m)ᵀ = (B m)ᵀ δS_j."""

    def __init__(self, F: _Field, co: _Coords):
        self.F, self.co = F, co
        d, N, n = co.d, co.N, co.n
        self.Bt = F.B.transpose()
        H0 = arb_mat(d, N * d)
        for e, (i, j) in enumerate(co.sidx):
            H0[i, e * d + j] = 1
            H0[j, e * d + i] = 1
        D0 = arb_mat(d, n)
        for i in range(d):
            D0[i, i] = 1
        self.H0, self.D0 = H0, D0

    def _bt(self, X: arb_mat) -> arb_mat:
        ent = X.entries()
        return arb_mat(X.nrows(), X.ncols(), [ent[k] for k in self.co.bt])

    def coefficients(self, ms: list, Ss: list, K: int) -> tuple[list, list]:
        """(D_k, H_k) for k = 0..K from the state coefficients ms[0..K-1], Ss[0..K-1], at JAC_PREC
        bits (balls at any precision are sound; the Jacobian's width only needs to be small
        relative to 1, not to the state's)."""
        old = flint.ctx.prec
        flint.ctx.prec = min(old, JAC_PREC)
        try:
            return self._coefficients(ms, Ss, K)
        finally:
            flint.ctx.prec = old

    def _coefficients(self, ms: list, Ss: list, K: int) -> tuple[list, list]:
        F, co = self.F, self.co
        d, N = co.d, co.N
        Hs, Ds = [self.H0], [self.D0]
        SB = [S * F.B for S in Ss[:K]] if F.quadratic else []
        SBt = [S * self.Bt for S in Ss[:K]] if F.quadratic else []
        Bm = [(F.B * m).transpose() for m in ms[:K]] if F.quadratic else []
        for k in range(K):
            inv = arb(1) / (k + 1)
            P = F.A * Hs[k]
            Dn = F.AV * Ds[k]
            if F.quadratic:
                U = SB[0] * Hs[k]
                U2 = SBt[k] * Hs[0]
                row = Bm[k] * Hs[0]
                c = SB[0] * Ds[k]
                for j in range(1, k + 1):
                    U = U + SB[j] * Hs[k - j]
                    U2 = U2 + SBt[k - j] * Hs[j]
                    row = row + Bm[k - j] * Hs[j]
                    c = c + SB[j] * Ds[k - j]
                P = P + F.V * (U + self._bt(U2))
                rent = row.entries()
                R = arb_mat(d, co.n, [arb(0) if c_ < d else rent[(c_ - d) * d + i]
                                      for i in range(d) for c_ in range(co.n)])
                Dn = Dn + F.V * (c + R)
            Hs.append((P + self._bt(P)) * inv)
            Ds.append(Dn * inv)
        return Ds, Hs


def _hull_point(X: arb_mat, x: arb_mat) -> arb_mat:
    return arb_mat(X.nrows(), X.ncols(), [a.union(b) for a, b in zip(X.entries(), x.entries())])


def _block(M: arb_mat, lo: int, hi: int) -> arb_mat:
    """The diagonal block M[lo:hi, lo:hi]."""
    w = hi - lo
    return arb_mat(w, w, [M[lo + i, lo + j] for i in range(w) for j in range(w)])


def _mid(X: arb_mat) -> arb_mat:
    return X.mid()


def _inf_norm_upper(M: arb_mat) -> float:
    n, c = M.nrows(), M.ncols()
    ent = M.entries()
    return max(math.fsum(float(abs(ent[i * c + j]).upper()) for j in range(c)) for i in range(n))


def _orthonormal(M: arb_mat, order: list[int]) -> arb_mat | None:
    """Gram-Schmidt (twice) of M's columns in `order`, at QR_PREC bits; a point matrix, or None."""
    n = M.nrows()
    old = flint.ctx.prec
    flint.ctx.prec = QR_PREC
    try:
        ent = M.entries()
        Q = arb_mat(n, n)
        for slot, c in enumerate(order):
            v = arb_mat(n, 1, [arb(ent[i * n + c].mid()) for i in range(n)])
            norm0 = float((v.transpose() * v)[0, 0].mid()) ** 0.5
            for _ in range(2):
                v = v - Q * (Q.transpose() * v)
                v = v.mid()
            nrm = float((v.transpose() * v)[0, 0].mid()) ** 0.5
            if not nrm > 1e-12 * norm0 or not math.isfinite(nrm):
                return None
            inv = arb(1.0 / nrm)
            for i in range(n):
                Q[i, slot] = arb((v[i, 0] * inv).mid())
        return Q
    finally:
        flint.ctx.prec = old


def _jacobian_box(DfE: arb_mat, H: arb, G: arb_mat) -> arb_mat | None:
    """A ball matrix G ⊇ Φ(s) for s ∈ [0, h] (Φ̇ = Df(x(s))Φ, Φ(0) = I, Df(x(s)) ∈ DfE), by the
    Picard test I + [0, h]·DfE·G ⊆ G (the linear Picard operator then maps the continuous
    functions with values in the box G into themselves, and its iterates converge to Φ), or None.
    G: the first candidate (a heuristic: the Taylor polynomial of Φ over [0, h])."""
    n = DfE.nrows()
    Id = arb_mat(n, n)
    for i in range(n):
        Id[i, i] = 1
    for _ in range(PICARD_TRIES):
        delta = arb(0, arb(2.0 ** -20 * max(1.0, _max_abs(G))))
        G = _inflate(G, delta)
        N = Id + (DfE * G) * H
        if _contains(G, N):
            return N
        G = _hull(G, N)
    return None


def enclose_lohner_params(params, mean: exact.Vector, cov: exact.Matrix, duration: Fraction,
                          **kw) -> LohnerEnclosure:
    """`enclose_lohner` from exact inputs: a `core.model.Params` (A, B, V, b) and a rational
    initial point state (mean, cov); keyword arguments as for `enclose_lohner`."""
    m, S = ball_state(mean, cov, kw.get("prec", DEFAULT_PREC))
    return enclose_lohner(m, S, params.A, params.B, params.V, params.b, duration, **kw)


def enclose_lohner(mean: arb_mat, cov: arb_mat, A: exact.Matrix, B: exact.Matrix, V: exact.Matrix,
                   b: exact.Vector, duration: Fraction, *, order: int = DEFAULT_ORDER,
                   jac_order: int = DEFAULT_JAC_ORDER, prec: int = DEFAULT_PREC,
                   tol_bits: int = DEFAULT_TOL_BITS, max_steps: int = DEFAULT_MAX_STEPS,
                   max_duration: Fraction = MAX_DURATION) -> LohnerEnclosure:
    """Enclose (m, Σ) after `duration` under constant rational controls by Lohner's QR method.

    mean (d×1) and cov (d×d, symmetric) are ball matrices containing the initial
    state (radius 0 for a point).  Same inputs as `_validated_flow.enclose_segment`,
    plus jac_order (order of the Jacobian's Taylor enclosure) and the bounds on the
    work: at most max_steps steps, and a duration above max_duration is refused.
    tol_bits: each step's Taylor remainder ≤ 2^-tol_bits · max(1, |state|).
    Runs at `prec` bits and restores the ambient precision."""
    if order < 2 or jac_order < 2:
        raise ValueError("the Taylor orders must be at least 2")
    duration = Fraction(duration)
    if duration <= 0:
        return LohnerEnclosure(False, None, None, 0, "non-positive duration")
    if duration > max_duration:
        return LohnerEnclosure(False, None, None, 0,
                               f"horizon {float(duration):.6g} exceeds the limit {float(max_duration):.6g}")
    old = flint.ctx.prec
    flint.ctx.prec = prec
    try:
        return _run(mean, cov, _Field(A, B, V, b), duration, order, jac_order, tol_bits, max_steps)
    finally:
        flint.ctx.prec = old


def _fail(steps, t, hist, why):
    return LohnerEnclosure(False, None, None, steps, f"{why} at t = {float(t):.6g}", 0.0, t, hist)


def _run(m0, S0, F: _Field, duration: Fraction, K: int, Kj: int, tol_bits: int, max_steps: int):
    co = _Coords(F.d)
    var = _Variational(F, co)
    n = co.n
    x0 = co.to_vector(m0, (S0 + S0.transpose()) * arb(0.5))   # symmetric part: same balls as S0 when symmetric
    xc = _mid(x0)                                             # centre x̂ (point)
    C = arb_mat(n, n)
    for i in range(n):
        C[i, i] = 1
    r = x0 - xc                                               # r ∋ x0 − x̂
    tol = 2.0 ** -tol_bits
    t, steps, hist = Fraction(0), 0, []
    while t < duration:
        if steps >= max_steps:
            return _fail(steps, t, hist, f"step budget ({max_steps}) spent (horizon {float(duration):.6g})")
        X = _hull_point(xc + C * r, xc)
        size = _max_abs(X)
        if not size < BLOWUP_NORM:
            return _fail(steps, t, hist, f"state norm exceeds {BLOWUP_NORM:.3g} (blow-up?)")
        scale = max(1.0, size)
        if max_radius(X) > 2.0 ** -(tol_bits // 2) * scale:
            return _fail(steps, t, hist, f"enclosure radius {max_radius(X):.3g} too wide "
                                        "(expanding flow or a blow-up nearby)")
        mc, Sc = co.to_state(xc)
        mX, SX = co.to_state(X)
        ms, Ss = F.coefficients(mc, Sc, K)
        guesses = _step_log2_guesses(ms, Ss, K, tol * scale)
        # Jacobian coefficients on the box X (independent of h); Φ_1(X) = Df(X) also caps h
        xs, Xs = F.coefficients(mX, SX, Kj - 1)
        Dj, Hj = var.coefficients(xs, Xs, Kj - 1)
        remaining = duration - t
        Df = co.assemble(Dj[1], Hj[1])
        d = co.d
        lip = max(_inf_norm_upper(_block(Df, 0, d)), _inf_norm_upper(_block(Df, d, n)))
        cap = STEP_CAP / max(lip, 1e-300)
        h = (_dyadic_below(SAFETY * min(2.0 ** max(min(guesses), -1000.0), cap), remaining)
             if guesses else _dyadic_below(min(cap, float(remaining)), remaining))
        if remaining - h < h / 16:
            h = remaining
        step = None
        for _ in range(SHRINK_TRIES):
            if h < duration * MIN_STEP_FRACTION:
                break
            step = _step(F, var, co, mX, SX, ms, Ss, Dj, Hj, h, K, Kj, tol * scale)
            if step is not None:
                break
            h = h / 2
        if step is None:
            return _fail(steps, t, hist, "no a-priori enclosure / remainder bound for any step size "
                                         "(blow-up inside the horizon?)")
        y, Jh = step
        M = Jh * C
        xn = _mid(y)
        Mm = M.mid()
        rw = [float(abs(e).upper()) for e in r.entries()]
        norms = [math.sqrt(sum(float(Mm[i, c]) ** 2 for i in range(n))) * rw[c] for c in range(n)]
        order = sorted(range(n), key=lambda c: -norms[c])
        Q = _orthonormal(Mm, order)
        if Q is None:
            return _fail(steps, t, hist, "degenerate Jacobian (QR failed)")
        try:
            Qi = Q.inv()
        except ZeroDivisionError:
            return _fail(steps, t, hist, "could not invert the preconditioner Q")
        r = (Qi * M) * r + Qi * (y - xn)
        C, xc = Q, xn
        if not all(e.is_finite() for e in r.entries()):
            return _fail(steps, t, hist, "non-finite enclosure")
        t += h
        steps += 1
        hist.append((float(t), max_radius(xc + C * r)))
    mF, SF = co.to_state(xc + C * r)
    return LohnerEnclosure(True, mF, SF, steps, "", max_radius(mF, SF), t, hist)


def _step(F, var, co, mX, SX, ms, Ss, Dj, Hj, h: Fraction, K: int, Kj: int, tol: float):
    """(y ∋ φ_h(x̂), Jh ∋ Dφ_h(X)) for a step of length h, or None when it cannot be validated."""
    hb = arb_of(h)
    H = arb(0).union(hb)
    E = _picard_box(mX, SX, F, H, h)
    if E is None:
        return None
    Em, ES = E
    rm, rS = F.coefficients(Em, ES, K)
    hK = hb ** K
    Rm, RS = rm[K] * hK, rS[K] * hK
    if _max_abs(Rm, RS) > tol:
        return None
    y = co.to_vector(_horner(ms[:K], hb) + Rm, _horner(Ss[:K], hb) + RS)
    De, He = var.coefficients(rm, rS, Kj)
    DfE = co.assemble(De[1], He[1])
    F1 = _jacobian_box(DfE, H, co.assemble(_horner(De[:Kj], H), _horner(He[:Kj], H)))
    if F1 is None:
        return None
    Jrem = (co.assemble(De[Kj], He[Kj]) * F1) * (hb ** Kj)
    Jpoly = co.assemble(_horner(Dj[:Kj], hb), _horner(Hj[:Kj], hb))
    if _max_abs(Jrem) > JAC_TOL * max(1.0, _max_abs(Jpoly)):
        return None
    return y, Jpoly + Jrem

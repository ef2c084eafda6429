"""The tail of a `blowup_general` certificate when V = vI: a continuum of equilibria at infinity
(MATH.md §15, "A continuum at infinity: V = vI").  `check_blowup_general` calls it when the
witness has ``"tail": {"kind": "continuum", ...}``; stage 1 (the Lohner flow) stays there.

**Chart.**  C = e1e1ᵀ (the checker sets it, the witness cannot), so w = 1/Σ̃_11, S = wΣ̃ has
S_11 ≡ 1 along solutions, and the Schur-complement chart

    S = [[1, pᵀ], [p, ppᵀ + E]],   x = (p, y),   p ∈ ℝ^{d−1},   y = (E_ij (1 ≤ i ≤ j), w) ∈ ℝ^m,

m = d(d−1)/2 + 1, is a polynomial bijection onto {S_11 = 1}.  With z′ = G(z) the compactified
field of `check_blowup_general`, the chart field is x′ = Dψ(z)G(z) for the inverse chart
ψ(S, w) = (S_{2:,1}, S_{2:,2:} − S_{2:,1}S_{2:,1}ᵀ, w):

    p′ = S′_{2:,1},   E′ = S′_{2:,2:} − p′pᵀ − pp′ᵀ,   w′ = −wg,   g = ⟨C, Q(S)⟩ + w⟨C, L(S)⟩.

Its y-Jacobian is Dψ(φ(x))·DG(φ(x))·∂_yφ: the second-derivative term of ψ pairs two
perturbations of S_{2:,1}, and moving y leaves S_{2:,1} = p fixed.

**Lemma (V = vI).**  At y = 0, S = uuᵀ with u = (1, p), and Q(uuᵀ) = v·uuᵀ(B + Bᵀ)uuᵀ =
2v(uᵀBu)uuᵀ, so S′ = Q − ⟨C, Q⟩S = 0 and w′ = 0: G(p, 0) = 0 for every p — the rank-one stratum
at w = 0 is a continuum of equilibria, and no ellipsoid around one of them contracts (DG has the
zero eigenvalues of the p directions).  The checker verifies V = vI exactly (rationals) before
it uses the lemma; Ṽ = T⁻¹(vI)T = vI in any frame.

**Proof of the tail.**  The witness gives p̂, half-widths r_p, a rational P ≻ 0 on y, ρ², β > 0;
Z = {|p − p̂|_j ≤ r_p,j} × (the box hull of {yᵀPy ≤ ρ²}) is convex in y and contains y = 0.  By
the lemma and the mean-value theorem on the segment from (p, 0) to (p, y) ⊂ Z,

    y′ = G_y(p, y) − G_y(p, 0) = M y,   p′ = G_p(p, y) − G_p(p, 0) = N y,
    M = ∫₀¹ ∂_yG_y(p, τy) dτ ∈ ∂_yG_y(Z),   N ∈ ∂_yG_p(Z)   (interval hulls),

and in ball arithmetic the checker proves

1. P ≻ 0 and −(PM + MᵀP) − 2βP ≻ 0 for every M in the ball matrix ∂_yG_y(Z) (interval
   Cholesky), so (yᵀPy)′ ≤ −2β yᵀPy while x ∈ Z;
2. entry: for every Σ̃(t1) of the stage-1 enclosure, Σ̃_11 > 0, ρ1² := sup y1ᵀPy1 < ρ², and
   |p1 − p̂|_j + drift_j < r_p,j with drift_j = Σ_i sup|N_ji|·√(ρ1²(P⁻¹)_ii)/β;
3. g ∈ [λ_lo, λ_hi] on Z with λ_lo > 0;
4. the rate: ‖T uuᵀ Tᵀ‖_F / g(u uᵀ, 0) over the p-box (u = (1, p)) lies in [rate_lower, rate_upper].

While x ∈ Z, 1 gives yᵀPy ≤ ρ1² e^{−2β(s−s1)}, so |y_i| ≤ √(ρ1²(P⁻¹)_ii) e^{−β(s−s1)} and
|p_j(s) − p_j(s1)| ≤ ∫|p′_j| ≤ drift_j.  Let s* be the supremum of the s ≥ s1 up to which the
solution exists and stays in Z: on [s1, s*) the bounds above hold, and by 2 they keep x strictly
inside Z (yᵀPy ≤ ρ1² < ρ², |p − p̂|_j < r_p,j); the field is polynomial and Z compact, so s* < ∞
would let the solution continue inside Z beyond s* — hence s* = ∞: the solution exists for all
s ≥ s1, y → 0 and p → p∞ (p′ is integrable) with (p∞, 0) ∈ Z.  Then, exactly as for an isolated
equilibrium (`check_blowup_general`, stage 2), 3 gives w′/w ∈ [−λ_hi, −λ_lo], t(s) = t1 + ∫ w
increases to T∞ ∈ [t1 + w1/λ_hi, t1 + w1/λ_lo] while Σ̃_11 = 1/w → ∞, so T* = T∞; and since
g(s) → g∞ = g(p∞, 0) > 0, T* − t = ∫_s^∞ w ~ w/g∞, hence ‖Σ‖_F(T* − t) = ‖TSTᵀ‖_F(T* − t)/w →
‖T u∞u∞ᵀ Tᵀ‖_F/g∞ with u∞ = (1, p∞), which 4 encloses.

The drift bound divides by β only: it never needs β to exceed the rate of w, which for V = vI it
cannot (the y-Jacobian at (p, 0) is −g(p)·I: E contracts exactly as fast as w).

Untrusted witness: every size is bounded by d (≤ the caller's MAX_DIM), and every malformed entry
raises WitnessError, which the caller turns into an invalid result.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, arb_mat

from riccati_verify.core import balls, exact
from riccati_verify.checker._reduced_riccati import WitnessError, rational, rational_matrix, tail_keys

__all__ = ["TAIL_KEYS", "ContinuumTail", "first_axis"]

TAIL_KEYS = frozenset({"kind", "p_centre", "r_p", "P", "rho2", "beta"})
"""The keys of witness["tail"] (kind "continuum")."""
REPLACED_KEYS = ("C", "centre", "P", "rho2", "beta")
"""The isolated-equilibrium keys of the witness; a continuum tail carries its own and refuses these."""


def first_axis(d: int) -> exact.Matrix:
    """C = e1e1ᵀ: the chart needs S_11 ≡ 1."""
    return [[Fraction(int(i == j == 0)) for j in range(d)] for i in range(d)]


def _vector(x, where: str, n: int) -> list[Fraction]:
    if not isinstance(x, list) or len(x) != n:
        raise WitnessError(f"{where} must be a list of {n} rationals")
    return [rational(v, f"{where}[{k}]") for k, v in enumerate(x)]


def _fro(M: arb_mat) -> arb:
    d = M.nrows()
    return sum((M[i, j] * M[i, j] for i in range(d) for j in range(d)), arb(0)).sqrt()


class ContinuumTail:
    """The checks 1-4 of the module docstring on the compactified field F (a
    `check_blowup_general._Compactified` built with C = first_axis(d), passed in so that the
    field and its Jacobian have one copy).  Call inside the caller's working precision."""

    def __init__(self, F, tail, V: exact.Matrix, witness: dict):
        d = F.d
        if d < 2:
            raise WitnessError("a continuum tail needs d >= 2 (d = 1 has no direction to drift)")
        tail_keys(tail, witness, "continuum", TAIL_KEYS, REPLACED_KEYS)
        # the lemma G(p, 0) = 0 holds for V = vI only: checked exactly, never on floats
        if any(V[i][j] != (V[0][0] if i == j else 0) for i in range(d) for j in range(d)):
            raise WitnessError("a continuum tail needs V = vI exactly")
        self.F, self.d = F, d
        self.m = d * (d - 1) // 2 + 1
        self.p_hat = _vector(tail["p_centre"], "tail.p_centre", d - 1)
        self.r_p = _vector(tail["r_p"], "tail.r_p", d - 1)
        if not all(r > 0 for r in self.r_p):
            raise WitnessError("tail.r_p must be positive")
        P = rational_matrix(tail["P"], "tail.P", self.m, self.m)
        if not exact.is_symmetric(P):
            raise WitnessError("tail.P must be symmetric")
        self.rho2, self.beta = rational(tail["rho2"], "tail.rho2"), rational(tail["beta"], "tail.beta")
        if not (self.rho2 > 0 and self.beta > 0):
            raise WitnessError("tail.rho2 and tail.beta must be positive")
        self.P = balls.arb_matrix(P)
        # z-index of S_ij (i ≤ j), and the y coordinates: E_ij for 1 ≤ i ≤ j, then w
        self.zi = {ij: k for k, ij in enumerate(F.pairs)}
        self.epairs = [(i, j) for (i, j) in F.pairs if i >= 1]

    def _S(self, p: list[arb], E: dict) -> arb_mat:
        """φ: S = [[1, pᵀ], [p, ppᵀ + E]] (E = {} for the rank-one stratum y = 0)."""
        d = self.d
        S = arb_mat(d, d)
        S[0, 0] = 1
        for i in range(1, d):
            S[i, 0] = S[0, i] = p[i - 1]
        for (i, j) in self.epairs:
            S[i, j] = S[j, i] = p[i - 1] * p[j - 1] + E.get((i, j), arb(0))
        return S

    def _chart_rows(self, col: arb_mat, p: list[arb]) -> tuple[list[arb], list[arb]]:
        """Dψ applied to a z-vector: (its p part, its y part) — p′ = S′_{2:,1},
        E′ = S′_{2:,2:} − p′pᵀ − pp′ᵀ, w′."""
        dp = [col[self.zi[(0, i)], 0] for i in range(1, self.d)]
        dy = [col[self.zi[(i, j)], 0] - dp[i - 1] * p[j - 1] - p[i - 1] * dp[j - 1] for (i, j) in self.epairs]
        return dp, dy + [col[self.F.n - 1, 0]]

    def y_jacobians(self, p: list[arb], y: list[arb]) -> tuple[arb_mat, arb_mat, arb_mat]:
        """(S = φ(p, y), ∂_yG_y, ∂_yG_p) enclosed over the balls p, y: the y columns of DG (E_ij
        moves S_ij = S_ji, w moves w), mapped by Dψ (module docstring, Chart)."""
        F, m = self.F, self.m
        S = self._S(p, {ij: y[k] for k, ij in enumerate(self.epairs)})
        J = F.jacobian(F.pack(S, y[m - 1]))
        M, N = arb_mat(m, m), arb_mat(self.d - 1, m)
        for c, k in enumerate([self.zi[ij] for ij in self.epairs] + [F.n - 1]):
            col = arb_mat(F.n, 1)
            for r in range(F.n):
                col[r, 0] = J[r, k]
            dp, dy = self._chart_rows(col, p)
            for r in range(m):
                M[r, c] = dy[r]
            for r in range(self.d - 1):
                N[r, c] = dp[r]
        return S, M, N

    def neighbourhood(self, T, r_lo: Fraction, r_hi: Fraction) -> str | None:
        """Checks 1, 3 and 4 on Z (before the flow: a tampered tail fails cheaply); None when
        they hold, else the reason.  Keeps λ = g(Z) and the drift coefficients for `entry`."""
        F, m = self.F, self.m
        if not balls.proves_positive_definite(self.P):
            return "tail.P ≻ 0 is not proved"
        rho2b, betab = balls.arb_of(self.rho2), balls.arb_of(self.beta)
        Pinv = self.P.inv()
        self.yhalf = [(rho2b * Pinv[i, i]).sqrt() for i in range(m)]
        self.sqrt_pinv = [Pinv[i, i].sqrt() for i in range(m)]
        p = [balls.arb_of(c) + arb(0, 1) * balls.arb_of(r) for c, r in zip(self.p_hat, self.r_p)]
        y = [arb(0, 1) * h for h in self.yhalf]
        if not all(x.is_finite() for x in p + y):
            return "the box Z of the continuum tail is not finite"
        S, M, N = self.y_jacobians(p, y)
        # 1. the transverse contraction at rate β on Z
        K = self.P * M
        if not balls.proves_positive_definite(-(K + K.transpose()) - self.P * (2 * betab)):
            return "−(PM + MᵀP) − 2βP ≻ 0 on the box of the continuum tail is not proved"
        # 3. the exponential rate of w on Z
        self.lam = F.g(S, y[m - 1])
        if not self.lam > 0:
            return "g = ⟨C, Q(S)⟩ + w⟨C, L(S)⟩ > 0 on the box of the continuum tail is not proved"
        # 4. the rate at the limit (p∞, 0), p∞ in the p-box
        S0 = self._S(p, {})
        So = S0 if T is None else balls.arb_matrix(T) * S0 * balls.arb_matrix(exact.transpose(T))
        self.rate = _fro(So) / F.g(S0, arb(0))
        if not (balls.arb_of(r_lo) <= self.rate.lower() and self.rate.upper() <= balls.arb_of(r_hi)):
            return f"the proved rate {self.rate.str(8)} is not inside [rate_lower, rate_upper]"
        # drift_j = ρ1 · Σ_i sup|N_ji| √(P⁻¹)_ii / β (check 2)
        self.drift_per_rho = [sum((abs(N[j, i]).upper() * self.sqrt_pinv[i] for i in range(m)), arb(0)) / betab
                              for j in range(self.d - 1)]
        return None

    def half_widths(self) -> list[float]:
        """Z's half-widths (floats: they only size the caller's early stop of the flow)."""
        return [float(r) for r in self.r_p] + [float(h.upper()) for h in self.yhalf]

    def entry(self, S1: arb_mat, E: int) -> tuple[arb | None, str]:
        """Check 2 on the stage-1 enclosure Σ̃(t1)/2^E: (w1, "") or (None, the reason)."""
        c1 = S1[0, 0]
        if not c1 > 0:
            return None, "Σ̃_11(t1) > 0 is not proved"
        w1 = balls.arb_of(Fraction(1, 2 ** E)) / c1
        Sn = S1 * (1 / c1)
        p1 = [Sn[i, 0] for i in range(1, self.d)]
        y1 = arb_mat(self.m, 1)
        for k, (i, j) in enumerate(self.epairs):
            y1[k, 0] = Sn[i, j] - p1[i - 1] * p1[j - 1]
        y1[self.m - 1, 0] = w1
        rho1sq = (y1.transpose() * self.P * y1)[0, 0]
        if not rho1sq < balls.arb_of(self.rho2):
            return None, ("Σ(t1) is not proved to enter the neighbourhood of infinity "
                          "(y1ᵀPy1 < ρ² fails in the continuum tail)")
        rho1 = rho1sq.upper().sqrt()
        for j in range(self.d - 1):
            reach = abs(p1[j] - balls.arb_of(self.p_hat[j])) + self.drift_per_rho[j] * rho1
            if not reach < balls.arb_of(self.r_p[j]):
                return None, (f"Σ(t1) is not proved to enter the neighbourhood of infinity: p_{j + 1} may "
                              f"drift out of its box (|p1 − p̂| + drift < r_p fails)")
        return w1, ""

"""Checker for `all_equilibria` certificates: every positive-semidefinite equilibrium in a region.

    F(Σ) = AΣ + ΣAᵀ + VΣBΣ + ΣBᵀΣVᵀ,   Σ symmetric,   G(s) = F(Σ(s)) on the n = d(d+1)/2
    upper-triangle coordinates s.

Claim:   {"kind": "all_equilibria", "radius": R,
          "equilibria": [{"center": C_k, "radius": r_k, "status": "pd" | "psd" | "excluded" | "undecided"}, ...]}
         "Every PSD zero Σ of F with max_i Σ_ii ≤ R (so every one with ‖Σ‖₂ ≤ R) lies in one of
          the listed balls {|Σ_ij − C_k,ij| ≤ r_k}; each ball holds exactly one zero and the balls
          are disjoint, so the zeros are distinct.  Status pd: every matrix of the ball is ≻ 0;
          psd: r_k = 0 and C_k ⪰ 0 exactly, or (with "factor": {"center": u, "radius": ρ})
          the zero is u*u*ᵀ for a zero u* of Au + (uᵀBu)Vu proved in the box u ± ρ (pd and psd balls
          also lie in the region: every matrix of the ball has max_i Σ_ii ≤ R); excluded: no matrix of the ball is PSD with
          max_i Σ_ii ≤ R; undecided: nothing said."
         Hence the PSD equilibria in the region are the pd/psd ones, plus possibly the
         undecided ones.
Witness: {"tree": [token, ...]} a bisection tree of the root box, in preorder.
         Root box: Σ_ii ∈ [−R/3, 4R/3], Σ_ij ∈ [−8R/7, 6R/5] (i < j).  It contains the region
         (a PSD Σ has |Σ_ij| ≤ max Σ_ii), and the odd end points keep 0, R/2, ... off the
         bisection planes, where a zero could not lie in a box's interior.
         token = an integer i: bisect coordinate i at its midpoint; the lower half's subtree
                 follows, then the upper half's;
         "o":  the box meets no PSD matrix with max Σ_ii ≤ R (a diagonal interval outside
               [0, R], an off-diagonal one outside [−R, R], or a 2×2 principal minor
               Σ_iiΣ_jj − Σ_ij² negative on the whole box), decided in exact rationals;
         "x":  F has no zero in the box: a coordinate of the centred form
               G(c) + G'(c)h + Q(h), Q(H) = VHBH + HBᵀHVᵀ (F is quadratic, so this is exact),
               excludes 0 for all |h| ≤ r, or the Krawczyk image misses the box;
         "z<k>": the box widened by 1/8 of its half-widths on each side, X', holds exactly one
               zero (Krawczyk: K(X') ⊂ interior X'), and ball k lies in X': the zeros in the
               box are the zero of ball k.

Every zero in the box satisfies x = K(x), so K(X) ∩ X = ∅ excludes zeros for any
preconditioner Y (here mid(G'(c))⁻¹), and K(X') ⊂ int X' proves exactly one.  Arithmetic:
exact rationals for the "o" tests and the geometry, arb balls at `PREC` bits for F.
"""

from __future__ import annotations

from fractions import Fraction

import flint

from riccati_verify.checker.check_equilibrium import (ball_is_pd, is_psd_exact, jacobian, parse_matrix,
                                                      parse_rational, q_matrix, sym_pairs, verify_zero)
from riccati_verify.checker.verify import CheckResult, fmt_q
from riccati_verify.core import balls
from riccati_verify.core.psd_cover import diagonal_within, outside_region as _outside, root_box

__all__ = ["CLAIM_KEYS", "MAX_BALLS", "MAX_DEPTH_PER_COORD", "MAX_DIM", "MAX_NODES", "MAX_RADIUS", "WITNESS_KEYS", "check"]

CLAIM_KEYS = frozenset({"radius", "equilibria"})
"""The claim's keys besides `kind`."""
WITNESS_KEYS = frozenset({"tree"})
"""The witness's keys."""

PREC = 128
MAX_DIM = 3
"""d ≤ 3 (n ≤ 6 coordinates): beyond that a box cover is not a practical proof."""
MAX_NODES = 1_000_000
"""Tokens of the tree: about 0.06 ms of arb work each (measured), so a check stays near a minute."""
MAX_DEPTH_PER_COORD = 64
"""A box is bisected at most 64·n times along its path (the producer stops at 2^-45 of the root box per
coordinate): the end points' sizes, and so each token's cost, stay bounded (a tree [0, 0, 0, ...]
had made both grow with the tree's length: 4.6 s and 877 MB at 80,000 tokens)."""
MAX_BALLS = 64
MAX_RADIUS = Fraction(2) ** 40
STATUSES = ("pd", "psd", "excluded", "undecided")
WIDEN = Fraction(9, 8)


def _arb_sym(vals, d):
    M = flint.arb_mat(d, d)
    for (i, j), x in zip(sym_pairs(d), vals):
        M[i, j] = x
        M[j, i] = x
    return M


class _Field:
    """F, G' and the two box tests in arb for one parameter set."""

    def __init__(self, A, B, V):
        self.d = len(A)
        self.n = self.d * (self.d + 1) // 2
        self.A, self.B, self.V = (flint.arb_mat([[flint.arb(x) for x in r] for r in M]) for M in (A, B, V))
        self.idx = sym_pairs(self.d)
        # G' is linear in Σ: G'(Σ(s)) = J0 + Σ_k s_k L_k, with J0 and L_k exact (the six-term
        # formula at Σ = 0 and at the basis matrices), so on a box it is enclosed without the
        # overestimate of an interval evaluation of the formula.
        zero = [[flint.fmpq(0)] * self.d for _ in range(self.d)]
        J0 = jacobian(A, B, V, zero)
        self.J0 = flint.arb_mat([[flint.arb(x) for x in r] for r in J0])
        self.Lk = []
        for i, j in self.idx:
            E = [[flint.fmpq(1 if {p, q} == {i, j} else 0) for q in range(self.d)] for p in range(self.d)]
            Jk = jacobian(A, B, V, E)
            self.Lk.append(flint.arb_mat([[flint.arb(x - y) for x, y in zip(r, r0)] for r, r0 in zip(Jk, J0)]))

    def g(self, C):
        JS = (self.A + self.V * C * self.B) * C
        F = JS + JS.transpose()
        return flint.arb_mat([[F[i, j]] for i, j in self.idx])

    def jac(self, s):
        """G' on the box or point with coordinates s (arb balls)."""
        J = self.J0
        for x, L in zip(s, self.Lk):
            J = J + x * L
        return J

    def prepare(self, c: list[Fraction], r: list[Fraction]):
        """(g(c), G'(c), Y) at the centre c."""
        cs = [balls.arb_of(x) for x in c]
        C = _arb_sym(cs, self.d)
        gc = self.g(C)
        Jc = self.jac(cs)
        try:
            Y = Jc.mid().inv().mid()
        except ZeroDivisionError:
            Y = None
        return cs, gc, Jc, Y

    def excludes(self, c, r) -> bool:
        """No zero in the box c ± r: the centred form, then the Krawczyk image."""
        cs, gc, Jc, Y = self.prepare(c, r)
        h = flint.arb_mat([[flint.arb(0, balls.arb_of(x).abs_upper())] for x in r])
        H = _arb_sym([h[k, 0] for k in range(self.n)], self.d)
        X = self.V * H * self.B * H
        enc = gc + Jc * h
        Q = X + X.transpose()
        for k, (i, j) in enumerate(self.idx):
            v = enc[k, 0] + Q[i, j]
            if v > 0 or v < 0:
                return True
        if Y is None:
            return False
        delta = self._krawczyk(cs, gc, Y, h)
        return any(delta[k, 0] > balls.arb_of(x) or delta[k, 0] < -balls.arb_of(x) for k, x in enumerate(r))

    def _krawczyk(self, cs, gc, Y, h):
        """K(X) − c = −Y g(c) + (I − Y G'(X)) h for the box X = c ± |h|."""
        X = [x + h[k, 0] for k, x in enumerate(cs)]
        I = flint.arb_mat(self.n, self.n)
        for k in range(self.n):
            I[k, k] = flint.arb(1)
        return -(Y * gc) + (I - Y * self.jac(X)) * h

    def unique(self, c, r) -> bool:
        """K(X) ⊂ interior X for the box c ± r: exactly one zero there."""
        cs, gc, _, Y = self.prepare(c, r)
        if Y is None:
            return False
        h = flint.arb_mat([[flint.arb(0, balls.arb_of(x).abs_upper())] for x in r])
        delta = self._krawczyk(cs, gc, Y, h)
        return all(delta[k, 0].abs_upper() < balls.arb_of(x) for k, x in enumerate(r))


def _parse_balls(items, d):
    if not isinstance(items, list) or len(items) > MAX_BALLS:
        raise ValueError(f"claim 'equilibria' must be a list of at most {MAX_BALLS} balls")
    out = []
    for k, e in enumerate(items):
        if not isinstance(e, dict) or not {"center", "radius", "status"} <= set(e) <= {"center", "radius", "status",
                                                                                     "factor"}:
            raise ValueError(f"equilibria[{k}]: expected keys center, radius, status (and factor)")
        if e["status"] not in STATUSES:
            raise ValueError(f"equilibria[{k}]: status must be one of {', '.join(STATUSES)}")
        center = parse_matrix(e["center"], d, f"equilibria[{k}].center")
        radius = parse_rational(e["radius"], f"equilibria[{k}].radius")
        if radius < 0:
            raise ValueError(f"equilibria[{k}]: negative radius")
        factor = None
        if "factor" in e:
            f = e["factor"]
            if e["status"] != "psd" or not isinstance(f, dict) or set(f) != {"center", "radius"} \
                    or not isinstance(f["center"], list) or len(f["center"]) != d:
                raise ValueError(f"equilibria[{k}].factor: a psd ball's {{center: d numbers, radius}}")
            factor = ([parse_rational(x, f"equilibria[{k}].factor.center") for x in f["center"]],
                      parse_rational(f["radius"], f"equilibria[{k}].factor.radius"))
            if factor[1] <= 0:
                raise ValueError(f"equilibria[{k}].factor: the radius must be positive")
        out.append((center, radius, e["status"], factor))
    return out


def _rank_one_zero(A, B, V, center, radius, factor) -> bool:
    """A zero uuᵀ of F with u in the factor box, and every such uuᵀ in the ball.

    For u ≠ 0, F(uuᵀ) = wuᵀ + uwᵀ with w = (A + VuuᵀB)u, which vanishes iff w = 0.  So a zero
    u* of H(u) = Au + (uᵀBu)Vu (Krawczyk on the box, with H' = A + (uᵀBu)V + Vu uᵀ(B + Bᵀ))
    gives the PSD zero u*u*ᵀ of F; inside the ball, whose zero is unique, it is that zero.
    """
    d = len(A)
    c, r = factor
    with flint.ctx.workprec(PREC):
        Aa, Ba, Va = (flint.arb_mat([[flint.arb(x) for x in row] for row in M]) for M in (A, B, V))
        Bs = Ba + Ba.transpose()
        rad = flint.arb(0, flint.arb(r).abs_upper())

        def H(u):
            return Aa * u + (u.transpose() * Ba * u)[0, 0] * (Va * u)

        def DH(u):
            q = (u.transpose() * Ba * u)[0, 0]
            return Aa + q * Va + (Va * u) * (u.transpose() * Bs)

        uc = flint.arb_mat([[flint.arb(x)] for x in c])
        U = flint.arb_mat([[flint.arb(x) + rad] for x in c])
        try:
            Y = DH(uc).mid().inv().mid()
        except ZeroDivisionError:
            return False
        I = flint.arb_mat(d, d)
        for i in range(d):
            I[i, i] = flint.arb(1)
        h = flint.arb_mat([[rad] for _ in range(d)])
        delta = -(Y * H(uc)) + (I - Y * DH(U)) * h
        if not all(delta[i, 0].abs_upper() < flint.arb(r) for i in range(d)):
            return False
        rho = flint.arb(radius)
        return all((U[i, 0] * U[j, 0] - flint.arb(center[i][j])).abs_upper() <= rho
                   for i in range(d) for j in range(d))


def _frac(x) -> Fraction:
    return Fraction(int(x.p), int(x.q))


def _ball_box(center, radius, d):
    c = [_frac(center[i][j]) for i, j in sym_pairs(d)]
    r = _frac(radius)
    return [x - r for x in c], [x + r for x in c]


def _status_ok(A, B, V, center, radius, status, factor, R, d) -> bool:
    if status == "undecided":
        return True
    if status == "pd":
        return ball_is_pd(center, radius)
    if status == "psd":
        if factor is not None:
            return _rank_one_zero(A, B, V, center, radius, factor)
        return radius == 0 and is_psd_exact(center)
    lo, hi = _ball_box(center, radius, d)
    if _outside(lo, hi, R, d):
        return True
    with flint.ctx.workprec(PREC):
        r = flint.arb(0, flint.arb(radius).abs_upper()) if radius != 0 else flint.arb(0)
        M = flint.arb_mat([[flint.arb(x) + r for x in row] for row in center])
        return balls.proves_not_positive_semidefinite(M)


def check(claim: dict, problem, witness: dict) -> CheckResult:
    """Re-check an `all_equilibria` claim: the balls, their statuses, and the whole box cover."""
    params = problem.require_params()
    d = params.dim
    if d > MAX_DIM:
        return CheckResult(False, f"d = {d}: the box cover is checked only for d <= {MAX_DIM}")
    R = _frac(parse_rational(claim["radius"], "radius"))
    if not 0 < R <= MAX_RADIUS:
        return CheckResult(False, f"radius must lie in (0, 2^40], got {fmt_q(R)}")
    eqs = _parse_balls(claim["equilibria"], d)
    tree = witness["tree"]
    if not isinstance(tree, list) or not 0 < len(tree) <= MAX_NODES:
        return CheckResult(False, f"witness 'tree' must be a non-empty list of at most {MAX_NODES} tokens")
    A, B, V = q_matrix(params.A), q_matrix(params.B), q_matrix(params.V)
    boxes = [_ball_box(c, r, d) for c, r, _, _ in eqs]
    for k, (c, r, status, factor) in enumerate(eqs):
        ok, why = verify_zero(A, B, V, c, r)
        if not ok:
            return CheckResult(False, f"equilibria[{k}]: {why}")
        if status in ("pd", "psd") and not diagonal_within(boxes[k][1], R, d):
            return CheckResult(False, f"equilibria[{k}]: status '{status}' counts a zero of the region, but the "
                                      f"ball reaches past max diag {fmt_q(R)}: its zero may lie outside")
        if not _status_ok(A, B, V, c, r, status, factor, R, d):
            return CheckResult(False, f"equilibria[{k}]: status '{status}' not proved")
        for m in range(k):
            lo1, hi1 = boxes[k]
            lo2, hi2 = boxes[m]
            if all(lo1[i] <= hi2[i] and lo2[i] <= hi1[i] for i in range(len(lo1))):
                return CheckResult(False, f"equilibria[{m}] and [{k}] overlap: their zeros may coincide")
    n = d * (d + 1) // 2
    stack = [(*root_box(R, d), 0)]
    leaves = {"o": 0, "x": 0, "z": 0}
    with flint.ctx.workprec(PREC):
        field = _Field(A, B, V)          # its balls at PREC bits, as the leaf tests assume
        for pos, tok in enumerate(tree):
            if not stack:
                return CheckResult(False, f"tree token {pos}: the cover is complete, extra tokens follow")
            lo, hi, depth = stack.pop()
            if isinstance(tok, int) and not isinstance(tok, bool):
                if not 0 <= tok < n:
                    return CheckResult(False, f"tree token {pos}: no coordinate {tok}")
                if depth >= MAX_DEPTH_PER_COORD * n:
                    return CheckResult(False, f"tree token {pos}: bisection deeper than {MAX_DEPTH_PER_COORD * n}")
                mid = (lo[tok] + hi[tok]) / 2
                upper = (lo[:tok] + [mid] + lo[tok + 1:], hi, depth + 1)
                lower = (lo, hi[:tok] + [mid] + hi[tok + 1:], depth + 1)
                stack += [upper, lower]
                continue
            if not isinstance(tok, str) or not tok:
                return CheckResult(False, f"tree token {pos}: expected an integer or a leaf string")
            c = [(a + b) / 2 for a, b in zip(lo, hi)]
            r = [(b - a) / 2 for a, b in zip(lo, hi)]
            if tok == "o":
                if not _outside(lo, hi, R, d):
                    return CheckResult(False, f"tree token {pos}: the box meets the PSD matrices of the region")
            elif tok == "x":
                if not field.excludes(c, r):
                    return CheckResult(False, f"tree token {pos}: a zero of F in the box is not excluded")
            elif tok[0] == "z" and tok[1:].isdigit() and len(tok) <= 4:
                k = int(tok[1:])
                if k >= len(eqs):
                    return CheckResult(False, f"tree token {pos}: no equilibria[{k}]")
                rw = [x * WIDEN for x in r]
                blo, bhi = boxes[k]
                if not all(ci - ri <= a and b <= ci + ri for ci, ri, a, b in zip(c, rw, blo, bhi)):
                    return CheckResult(False, f"tree token {pos}: equilibria[{k}] is not inside the widened box")
                if not field.unique(c, rw):
                    return CheckResult(False, f"tree token {pos}: uniqueness of the zero in the widened box not proved")
            else:
                return CheckResult(False, f"tree token {pos}: unknown leaf {tok!r}")
            leaves[tok[0]] += 1
    if stack:
        return CheckResult(False, f"the tree ends with {len(stack)} boxes of the cover unchecked")
    n_psd = sum(e[2] in ("pd", "psd") for e in eqs)
    n_und = sum(e[2] == "undecided" for e in eqs)
    return CheckResult(True, f"box cover of {sum(leaves.values())} boxes ({leaves['o']} outside the PSD region, "
                             f"{leaves['x']} without a zero, {leaves['z']} with a listed one): the PSD equilibria "
                             f"with max diag <= {fmt_q(R)} are {n_psd} proved PSD"
                             + (f" and at most {n_und} undecided" if n_und else ""))

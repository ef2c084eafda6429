"""The tail of a `blowup_general` certificate when the blow-up direction keeps TURNING in the
invariant plane of a complex pair of V (MATH.md §15, "A turning direction at infinity").
`check_blowup_general` calls it when the witness has ``"tail": {"kind": "turning", ...}``; stage 1
(the Lohner flow to t1, in the witness's frame T) stays there.

There is no equilibrium at infinity to contract to: S = Σ/⟨C, Σ⟩ follows a rank-one direction that
turns for ever in the plane, with infinitely many turns before T*.  The proof replaces the
neighbourhood of an equilibrium by a return map that holds at every scale at once.

**Homogeneity.**  If Σ solves Σ̇ = AΣ + ΣAᵀ + VΣBΣ + ΣBᵀΣVᵀ, then for ε > 0 and a time t,
Z(τ) = εΣ(t + ετ) solves the same equation with A replaced by εA (dZ/dτ = ε²Σ̇; the quadratic
part is homogeneous of degree 2).  The checker's flow accepts a ball A, so one validated flow
with A in the entrywise ball ⊇ {εA : 0 ≤ ε ≤ ε̄} encloses Z for every scale ε ≤ ε̄ at once.

**The tube K.**  In the frame T (C = e1e1ᵀ + e2e2ᵀ, set by the checker: the trace of the plane
block), with rational r_det < 1/4, r_off, r_oo from the witness,

    K = {S ≻ 0 : S11 + S22 = 1, det2(S) := S11S22 − S12² ≤ r_det,
                 S1i² + S2i² ≤ r_off² and |S_ik| ≤ r_oo for all i, k ≥ 3}.

K is invariant under the rotations diag(R, I), R ∈ SO(2) (det2, S11 + S22, the length of
(S1i, S2i) and the block S_{3:,3:} are).  The true Σ(t) is positive definite for all t (rank and
inertia are invariant, MATH.md §3), so positivity needs no check.

**Phase and cells (cover by construction).**  For S ∈ K put r = √((S11 − S22)² + 4S12²); then
r² = (S11 + S22)² − 4det2 = 1 − 4det2 ∈ [1 − 4r_det, 1], so 1 ≥ r ≥ r² ≥ 1 − 4r_det > 0 and
q(S) = (S11 − S22, 2S12)/r is a point of the unit circle (the doubled angle of the phase).  A
rotation by θ in the plane (S ↦ diag(R_θ, I)ᵀ S diag(R_θ, I)) turns q by −2θ.  The witness gives
N boundary parameters b_k and, per cell k, a centre parameter t_k, each naming the exact rational
rotation R(t) = [[c, −s], [s, c]], c = (1 − t²)/(1 + t²), s = 2t/(1 + t²); the boundary points
are p_k = (c_k² − s_k², 2c_ks_k) (doubled angle).  The checker proves, exactly, that cross(p_k,
p_{k+1}) > 0 for every k (cyclically): each counter-clockwise step from p_k to p_{k+1} is an angle
in (0, π), the steps return to p_0, so their sum is a positive multiple of 2π and the arcs
[p_k, p_{k+1}] cover the circle.  Cell k is the set of S ∈ K with q(S) on arc k.

**The cell box.**  In the frame T_k = T·diag(R(t_k), I) the arc's end points are p′ = p rotated by
the cell's doubled angle backwards; the checker requires both to have a positive first
coordinate, so the short arc between them lies in the open right half-plane, where the first
coordinate is at least c_min = min(p′_k,1, p′_{k+1},1) and the second runs monotonically from
p′_k,2 to p′_{k+1},2.  With S′ the state in T_k: S′11 − S′22 = r q′1, 2S′12 = r q′2, S′11 + S′22 = 1, so

    S′22 = (1 − r q′1)/2 ∈ [0, a],  a = (1 − (1 − 4r_det) c_min)/2,   S′11 = 1 − S′22 ∈ [1 − a, 1],
    S′12 ∈ [min(0, p′_k,2), max(0, p′_{k+1},2)]/2,   |S′1i|, |S′2i| ≤ r_off,   |S′ik| ≤ r_oo,

a rational box X_k containing cell k (the plane rotation keeps the length of (S1i, S2i)).

**The return map.**  For each cell k the checker runs the Lohner flow from the box X_k for the
witness's rational time τ_k, with the controls of the frame T_k (Ã_k = T_k⁻¹AT_k, B̃_k, Ṽ_k, exact,
`core.frame`) and A replaced by the ball ⊇ [0, ε̄]·Ã_k, and proves on its image box Z1:

  (i)   κ := ⟨C, Z1⟩ ∈ [κlo_k, κhi_k] with κlo_k > 1;
  (ii)  Z1/κ ∈ K: det2(Z1)/κ² ≤ r_det, (Z1_1i² + Z1_2i²)/κ² ≤ r_off², |Z1_ik|/κ ≤ r_oo
        (ball arithmetic over the box Z1 and the ball κ: every true image satisfies them).

A true state S ∈ cell k has ⟨C, S⟩ = 1, so its image Z(τ_k) has ⟨C, Z⟩ = κ ∈ [κlo_k, κhi_k] and
Z/κ ∈ K.

**Induction.**  Let the stage-1 enclosure give, at t1, S1 = Σ̃(t1)/⟨C, Σ̃(t1)⟩ ∈ K (checked on the
enclosure) and ε1 := 1/⟨C, Σ̃(t1)⟩ ≤ ε̄.  Suppose at time t_n the state S_n = ε_nΣ̃(t_n) is in K with
ε_n = 1/⟨C, Σ̃(t_n)⟩ ≤ ε̄, in some cell k_n.  Then Z(τ) = ε_nΣ̃(t_n + ε_nτ) solves the equation
with A replaced by ε_nÃ, which lies in the flow's ball, so (the frame change to T_k being exact
and bijective) Σ̃ exists on [t_n, t_n + ε_nτ_k], and at t_{n+1} = t_n + ε_nτ_{k_n}: ⟨C, Σ̃⟩ = κ_n/ε_n,
i.e. ε_{n+1} = ε_n/κ_n ≤ ε_n ≤ ε̄, and S_{n+1} = Z/κ_n ∈ K.  So Σ̃ exists on [t1, T∞) with
T∞ = t1 + Σ_n ε_nτ_{k_n} (finite: ε_n ≤ ε1 κ_min^{-n}), and ⟨C, Σ̃(t_n)⟩ = 1/ε_n → ∞: Σ̃ is unbounded
as t → T∞, hence T* = T∞.

**The bracket.**  With U = max_k τ_kκlo_k/(κlo_k − 1) and L = min_k τ_kκhi_k/(κhi_k − 1): every return
has κ_n ∈ [κlo, κhi] of its cell, and κ/(κ − 1) decreases in κ, so τ_{k_n} ≤ U(1 − 1/κ_n) and
τ_{k_n} ≥ L(1 − 1/κ_n), i.e. ε_nτ_{k_n} ≤ ε_nU − ε_{n+1}U and ≥ ε_nL − ε_{n+1}L.  Summing
(telescoping, ε_n → 0): ε1L ≤ T* − t1 ≤ ε1U, so T* ∈ [t1 + ε1_lo·L, t1 + ε1_hi·U].

No blow-up rate is claimed: ‖Σ‖_F(T* − t) has no limit along a turning direction (it oscillates
with the phase), so a turning tail refuses rate keys in the claim.

Untrusted witness: N ≤ MAX_CELLS, τ_k ∈ (0, MAX_TAU], the flow's order, precision and steps
(in total over the cells) are bounded; every malformed entry raises WitnessError.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, arb_mat, ctx

from riccati_verify.core import balls, exact
from riccati_verify.core.frame import moment_frame
from riccati_verify.checker._lohner import enclose_lohner
from riccati_verify.checker._reduced_riccati import WitnessError, rational

__all__ = ["TAIL_KEYS", "CELL_KEYS", "TurningTail", "plane_trace"]

TAIL_KEYS = frozenset({"kind", "eps_bar", "r_det", "r_off", "r_oo", "boundaries", "cells", "flow",
                       "precision_bits"})
"""The keys of witness["tail"] (kind "turning")."""
CELL_KEYS = frozenset({"t", "tau"})
FLOW_KEYS = frozenset({"order", "jac_order", "tol_bits", "max_steps"})
REPLACED_KEYS = ("C", "centre", "P", "rho2", "beta")
MAX_CELLS = 256
MAX_TAU = Fraction(100)
MAX_PREC = 512
MAX_ORDER = 40
MAX_JAC_ORDER = 16
MAX_STEPS_TOTAL = 40_000
MAX_PARAM_BITS = 40
"""Bits of a rotation parameter's numerator and denominator (the frames T_k stay short)."""


def plane_trace(d: int) -> exact.Matrix:
    """C = e1e1ᵀ + e2e2ᵀ: the trace of the plane block (frame T's first two columns span the plane)."""
    return [[Fraction(int(i == j and i < 2)) for j in range(d)] for i in range(d)]


def _int(x, where: str, lo: int, hi: int) -> int:
    if not isinstance(x, int) or isinstance(x, bool) or not lo <= x <= hi:
        raise WitnessError(f"{where} must be an integer in {lo}..{hi}")
    return x


def _param(x, where: str) -> Fraction:
    t = rational(x, where)
    if max(t.numerator.bit_length(), t.denominator.bit_length()) > MAX_PARAM_BITS:
        raise WitnessError(f"{where} must have numerator and denominator of at most {MAX_PARAM_BITS} bits")
    return t


def rotation(t: Fraction) -> tuple[Fraction, Fraction]:
    """(cos θ, sin θ) of the exact rational rotation with parameter t = tan(θ/2)."""
    n = 1 + t * t
    return (1 - t * t) / n, 2 * t / n


def _doubled(t: Fraction) -> tuple[Fraction, Fraction]:
    c, s = rotation(t)
    return c * c - s * s, 2 * c * s


def _cross(p, q) -> Fraction:
    return p[0] * q[1] - p[1] * q[0]


def _inner(C: exact.Matrix, S: arb_mat) -> arb:
    d = S.nrows()
    return sum((S[i, j] for i in range(d) for j in range(d) if C[i][j]), arb(0))


class TurningTail:
    """The checks of the module docstring.  `returns` (the cells' flows, before stage 1: a tampered
    tail fails before the expensive part), then `entry` on the stage-1 enclosure and `bracket`."""

    def __init__(self, tail, witness: dict, d: int, T: exact.Matrix | None):
        if d < 2:
            raise WitnessError("a turning tail needs d >= 2")
        if T is None:
            raise WitnessError("a turning tail needs a frame whose first two columns span V's invariant plane")
        if not isinstance(tail, dict) or set(tail) != TAIL_KEYS or tail.get("kind") != "turning":
            raise WitnessError(f"tail must have exactly the keys {sorted(TAIL_KEYS)} and kind 'turning'")
        clash = [k for k in REPLACED_KEYS if k in witness]
        if clash:
            raise WitnessError(f"a witness with a turning tail must not have the keys {clash}")
        self.d, self.T = d, T
        self.C = plane_trace(d)
        self.eps_bar = rational(tail["eps_bar"], "tail.eps_bar")
        self.r_det = rational(tail["r_det"], "tail.r_det")
        self.r_off = rational(tail["r_off"], "tail.r_off")
        self.r_oo = rational(tail["r_oo"], "tail.r_oo")
        if not (self.eps_bar > 0 and 0 < self.r_det < Fraction(1, 4) and self.r_off >= 0 and self.r_oo >= 0):
            raise WitnessError("the tail needs eps_bar > 0, 0 < r_det < 1/4, r_off >= 0, r_oo >= 0")
        self.prec = _int(tail["precision_bits"], "tail.precision_bits", 64, MAX_PREC)
        flow = tail["flow"]
        if not isinstance(flow, dict) or set(flow) != FLOW_KEYS:
            raise WitnessError(f"tail.flow must have exactly the keys {sorted(FLOW_KEYS)}")
        self.order = _int(flow["order"], "tail.flow.order", 4, MAX_ORDER)
        self.jac_order = _int(flow["jac_order"], "tail.flow.jac_order", 3, MAX_JAC_ORDER)
        self.tol_bits = _int(flow["tol_bits"], "tail.flow.tol_bits", 20, self.prec - 8)
        self.max_steps = _int(flow["max_steps"], "tail.flow.max_steps", 1, MAX_STEPS_TOTAL)
        bnd, cells = tail["boundaries"], tail["cells"]
        if not isinstance(bnd, list) or not isinstance(cells, list) or not 3 <= len(bnd) <= MAX_CELLS \
                or len(cells) != len(bnd):
            raise WitnessError(f"tail.boundaries and tail.cells must be lists of the same length 3..{MAX_CELLS}")
        self.bounds = [_param(b, f"tail.boundaries[{k}]") for k, b in enumerate(bnd)]
        self.cells = []
        for k, c in enumerate(cells):
            if not isinstance(c, dict) or set(c) != CELL_KEYS:
                raise WitnessError(f"tail.cells[{k}] must have exactly the keys {sorted(CELL_KEYS)}")
            tau = rational(c["tau"], f"tail.cells[{k}].tau")
            if not 0 < tau <= MAX_TAU:
                raise WitnessError(f"tail.cells[{k}].tau must be in (0, {MAX_TAU}]")
            self.cells.append((_param(c["t"], f"tail.cells[{k}].t"), tau))

    # --- the cover and the cell boxes (exact) ---------------------------------------------

    def cell_boxes(self) -> list[list[list[tuple[Fraction, Fraction]]]]:
        """Per cell, the rational box X_k (lo, hi per entry, in the frame T_k) of the module
        docstring; WitnessError when the boundaries do not cover the circle or a cell's arc is not
        in the right half-plane of its frame."""
        N, d = len(self.bounds), self.d
        pts = [_doubled(b) for b in self.bounds]
        for k in range(N):
            if not _cross(pts[k], pts[(k + 1) % N]) > 0:
                raise WitnessError(f"the tail's boundaries {k} and {(k + 1) % N} are not a counter-clockwise "
                                   f"step of less than a half turn: the cells are not proved to cover K")
        boxes = []
        shrink = 1 - 4 * self.r_det
        for k, (t, _) in enumerate(self.cells):
            cc, ss = _doubled(t)
            # rotate the doubled-angle points by −2θ_k: the arc in the cell's own frame
            ends = [(p[0] * cc + p[1] * ss, p[1] * cc - p[0] * ss) for p in (pts[k], pts[(k + 1) % N])]
            if not (ends[0][0] > 0 and ends[1][0] > 0):
                raise WitnessError(f"the arc of cell {k} is not inside the right half-plane of its frame")
            a = (1 - shrink * min(ends[0][0], ends[1][0])) / 2
            box = [[(-self.r_oo, self.r_oo) for _ in range(d)] for _ in range(d)]
            box[0][0], box[1][1] = (1 - a, Fraction(1)), (Fraction(0), a)
            box[0][1] = box[1][0] = (min(Fraction(0), ends[0][1]) / 2, max(Fraction(0), ends[1][1]) / 2)
            for i in range(2, d):
                for j in (0, 1):
                    box[i][j] = box[j][i] = (-self.r_off, self.r_off)
            boxes.append(box)
        return boxes

    def _frame(self, t: Fraction) -> exact.Matrix:
        """T_k = T·diag(R(t), I)."""
        c, s = rotation(t)
        D = [[Fraction(int(i == j)) for j in range(self.d)] for i in range(self.d)]
        D[0][0], D[0][1], D[1][0], D[1][1] = c, -s, s, c
        return exact.matmul(self.T, D)

    # --- the return maps (balls) ------------------------------------------------------------

    def in_tube(self, Z: arb_mat, kappa: arb) -> str:
        """"" when Z/κ ∈ K is proved (κ > 0 proved by the caller), else which bound fails."""
        d, k2 = self.d, kappa * kappa
        if not (Z[0, 0] * Z[1, 1] - Z[0, 1] * Z[0, 1]) / k2 <= balls.arb_of(self.r_det):
            return "det2 ≤ r_det"
        for i in range(2, d):
            if not (Z[0, i] * Z[0, i] + Z[1, i] * Z[1, i]) / k2 <= balls.arb_of(self.r_off * self.r_off):
                return f"S1{i + 1}² + S2{i + 1}² ≤ r_off²"
            for j in range(2, d):
                if not abs(Z[i, j]) / kappa <= balls.arb_of(self.r_oo):
                    return f"|S{i + 1}{j + 1}| ≤ r_oo"
        return ""

    def returns(self, params) -> str | None:
        """Flow every cell box for its τ_k (A in the ball [0, ε̄]·Ã_k, in the unscaled variables:
        ε = 1/⟨C, Σ̃⟩ with Σ̃ = T⁻¹ΣT⁻ᵀ); keeps (τ_k, κ_k) for the bracket.  None when every return
        is proved, else the reason."""
        boxes = self.cell_boxes()
        self.kappas, steps = [], 0
        with ctx.workprec(self.prec):
            eps_ball = balls.interval(Fraction(0), self.eps_bar)
            for k, ((t, tau), box) in enumerate(zip(self.cells, boxes)):
                Tk = self._frame(t)
                try:
                    _, Ak, Bk, Vk, _ = moment_frame(Tk, params.A, params.B, params.V, exact.identity(self.d))
                except ValueError as e:
                    raise WitnessError(f"the frame of cell {k} is not usable ({e})") from None
                Ab = balls.arb_matrix(Ak) * eps_ball
                X = arb_mat(self.d, self.d)
                for i in range(self.d):
                    for j in range(self.d):
                        X[i, j] = balls.interval(*box[i][j])
                r = enclose_lohner(None, X, Ab, Bk, Vk, None, tau, order=self.order,
                                   jac_order=self.jac_order, prec=self.prec, tol_bits=self.tol_bits,
                                   max_steps=self.max_steps - steps, covariance_only=True, high_order_box=True,
                                   width_limit=0.5)
                if not r.ok:
                    return f"the return map of cell {k} is not enclosed ({r.reason})"
                steps += r.steps
                Z = r.cov
                kappa = _inner(self.C, Z)
                if not kappa > 1:
                    return f"the growth factor ⟨C, Z1⟩ > 1 of cell {k} is not proved (got {kappa.str(6)})"
                why = self.in_tube(Z, kappa)
                if why:
                    return f"the return of cell {k} is not proved to land in the tube K ({why} fails)"
                self.kappas.append((balls.arb_of(tau), kappa))
        return None

    def entry(self, S1: arb_mat, E: int) -> tuple[arb | None, str]:
        """(ε1, "") when S1 = Σ̃(t1)/2^E (the stage-1 enclosure) normalised lies in K and
        ε1 = 2^-E/⟨C, S1⟩ ≤ ε̄ is proved; else (None, the reason)."""
        c1 = _inner(self.C, S1)
        if not c1 > 0:
            return None, "⟨C, Σ̃(t1)⟩ > 0 is not proved"
        why = self.in_tube(S1, c1)
        if why:
            return None, f"Σ(t1) is not proved to enter the tube K of the turning tail ({why} fails)"
        eps1 = balls.arb_of(Fraction(1, 2 ** E)) / c1
        if not eps1 <= balls.arb_of(self.eps_bar):
            return None, "ε1 = 1/⟨C, Σ̃(t1)⟩ ≤ eps_bar is not proved"
        return eps1, ""

    def bracket(self, eps1: arb) -> tuple[arb, arb]:
        """(ε1_lo·L, ε1_hi·U): T* − t1 lies between them (module docstring, The bracket)."""
        U = max((tau * k.lower() / (k.lower() - 1) for tau, k in self.kappas), key=lambda x: x.upper())
        L = min((tau * k.upper() / (k.upper() - 1) for tau, k in self.kappas), key=lambda x: x.lower())
        return arb(eps1.lower()) * arb(L.lower()), arb(eps1.upper()) * arb(U.upper())

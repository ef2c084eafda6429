"""The tail of a `blowup_general` certificate when the blow-up direction keeps TURNING in the
invariant plane of a complex pair of V (MATH.md §15, "A turning direction at infinity").
`check_blowup_general` calls it when the witness has ``"tail": {"kind": "turning", ...}``; stage 1
(the Lohner flow to t1, in the witness's frame T) stays there.

There is no equilibrium at infinity: S = Σ/⟨C, Σ⟩ follows a rank-one direction that turns for ever
in the plane, with infinitely many turns before T*.  The proof is a return map of one box that holds
at every scale at once.

**Homogeneity.**  If Σ solves Σ̇ = AΣ + ΣAᵀ + VΣBΣ + ΣBᵀΣVᵀ, then for ε > 0 and a time t,
Z(τ) = εΣ(t + ετ) solves the same equation with A replaced by εA (dZ/dτ = ε²Σ̇; the quadratic
part is homogeneous of degree 2).  The checker's flow accepts a ball A, so one validated flow
with A in the entrywise ball ⊇ {εA : 0 ≤ ε ≤ ε̄} encloses Z for every scale ε ≤ ε̄ at once.

**The box.**  In the frame T·D, D = diag(scale) with scale_1 = 1 (all of Σ̃ = (TD)⁻¹Σ(TD)⁻ᵀ, Ã, B̃, Ṽ
exact, `core.frame`; D only rescales coordinates: Σ̃_ij = Σ̂_ij/(scale_i·scale_j) for Σ̂ in the frame T
of stage 1, and Σ̃11 = Σ̂11), C = e1e1ᵀ (set by the checker) and a rational symmetric H ≥ 0 from the
witness with H_11 = 0:

    X = {S symmetric : S11 = 1, |S_ij| ≤ H_ij for (i, j) ≠ (1, 1)}.

D lets the producer make X about as wide in every coordinate: the Lohner flow's Jacobian tolerance is
relative to its largest entry, so a box 10⁶ times narrower off the plane than in the phase is
swamped by it (general_instance(4, 0, 7)).

The producer puts T's first column on the turning direction at a chosen phase, so X is a thin box
around e1e1ᵀ: the phase offset S12, the second eigen-direction S22 and the off-plane entries.

**The return map.**  The checker runs the Lohner flow from X (S11 = 1 exactly: a ball of radius 0)
for the witness's rational time τ with A replaced by the ball ⊇ [0, ε̄]·Ã, and proves on its image
box Z1 (ball arithmetic):

  (i)  κ := Z1_11 ∈ [κlo, κhi] with κlo > 1;
  (ii) |Z1_ij|/κ ≤ H_ij for every (i, j) ≠ (1, 1), i.e. Z/Z11 ∈ X for every true image Z.

No entry is divided by a ball with a large centre but the ones centred near 0, so normalising the
image does not count a relative spread twice (the shortcut MATH.md §15 (i) records).

**Induction.**  Let the stage-1 enclosure give, at t1, Σ̃11(t1) > 0, S1 = Σ̃(t1)/Σ̃11(t1) ∈ X and
ε1 := 1/Σ̃11(t1) ≤ ε̄.  Suppose at t_n the state S_n = ε_nΣ̃(t_n) is in X with ε_n = 1/Σ̃11(t_n) ≤ ε̄.
Then Z(τ′) = ε_nΣ̃(t_n + ε_nτ′) solves the equation with A replaced by ε_nÃ, a member of the flow's
ball, from Z(0) = S_n ∈ X; so Σ̃ exists on [t_n, t_n + ε_nτ] and at t_{n+1} = t_n + ε_nτ,
Σ̃11 = κ_n/ε_n with κ_n = Z11(τ) ∈ [κlo, κhi]: ε_{n+1} = ε_n/κ_n < ε_n ≤ ε̄ and S_{n+1} = Z(τ)/κ_n ∈ X.
Hence Σ̃ exists on [t1, T∞), T∞ = t1 + τ Σ_n ε_n ≤ t1 + τε1 Σ_n κlo^{-n} < ∞, and Σ̃11(t_n) = 1/ε_n → ∞:
Σ̃ is unbounded as t → T∞, so T* = T∞ (the frame is a linear bijection: T* is Σ's too).

**The bracket.**  ε_{n+1} = ε_n/κ_n with κ_n ∈ [κlo, κhi], so ε1κhi^{-n} ≤ ε_{n+1} ≤ ε1κlo^{-n}, and
summing the geometric series, T* − t1 = τ Σ_{n≥1} ε_n ∈ [ε1 τκhi/(κhi − 1), ε1 τκlo/(κlo − 1)].

No blow-up rate is claimed: ‖Σ‖_F(T* − t) has no limit along a turning direction (it oscillates
with the phase), so a turning tail refuses rate keys in the claim.

Untrusted witness: τ ∈ (0, MAX_TAU], the flow's order, precision and step budget are bounded, and
every malformed entry raises WitnessError.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, arb_mat, ctx

from riccati_verify.core import balls, exact
from riccati_verify.core.frame import moment_frame
from riccati_verify.checker._lohner import enclose_lohner
from riccati_verify.checker._reduced_riccati import WitnessError, integer, rational, rational_matrix, tail_keys

__all__ = ["TAIL_KEYS", "TurningTail"]

TAIL_KEYS = frozenset({"kind", "eps_bar", "H", "tau", "flow", "precision_bits", "scale"})
"""The keys of witness["tail"] (kind "turning")."""
FLOW_KEYS = frozenset({"order", "jac_order", "tol_bits", "max_steps"})
REPLACED_KEYS = ("C", "centre", "P", "rho2", "beta")
MAX_TAU = Fraction(100)
MAX_PREC = 512
MAX_ORDER = 40
MAX_JAC_ORDER = 16
MAX_STEPS = 40_000
MAX_SCALE_BITS = 64
"""Bits of a scale entry's numerator and denominator (the tail's frame T·D stays short)."""
WIDTH_LIMIT = 8.0
"""The tail's flow stops once a radius exceeds 8·max(1, |state|): the image test (ii) could not pass
then (a saving of work only, never a verdict)."""


class _Controls:
    """Ã, B̃, Ṽ of the tail's frame T·D (what the flow reads)."""

    def __init__(self, A, B, V):
        self.A, self.B, self.V = A, B, V


class TurningTail:
    """The checks of the module docstring: `returns` (the return map, before stage 1: a tampered tail
    fails before the expensive part), then `entry` on the stage-1 enclosure and `bracket`."""

    def __init__(self, tail, witness: dict, d: int):
        if d < 2:
            raise WitnessError("a turning tail needs d >= 2")
        tail_keys(tail, witness, "turning", TAIL_KEYS, REPLACED_KEYS)
        self.d = d
        self.eps_bar = rational(tail["eps_bar"], "tail.eps_bar")
        self.tau = rational(tail["tau"], "tail.tau")
        if not (self.eps_bar > 0 and 0 < self.tau <= MAX_TAU):
            raise WitnessError(f"the tail needs eps_bar > 0 and 0 < tau <= {MAX_TAU}")
        H = rational_matrix(tail["H"], "tail.H", d, d)
        if not exact.is_symmetric(H) or H[0][0] != 0 or any(x < 0 for r in H for x in r):
            raise WitnessError("tail.H must be symmetric, non-negative, with H[0][0] = 0 (S11 = 1 exactly)")
        self.H = H
        sc = tail["scale"]
        if not isinstance(sc, list) or len(sc) != d:
            raise WitnessError(f"tail.scale must be a list of {d} positive rationals")
        self.scale = [rational(x, f"tail.scale[{k}]") for k, x in enumerate(sc)]
        if self.scale[0] != 1 or not all(x > 0 for x in self.scale) or any(
                max(x.numerator.bit_length(), x.denominator.bit_length()) > MAX_SCALE_BITS for x in self.scale):
            raise WitnessError(f"tail.scale must be positive rationals of at most {MAX_SCALE_BITS} bits, "
                               f"the first equal to 1")
        self.prec = integer(tail["precision_bits"], "tail.precision_bits", 64, MAX_PREC)
        flow = tail["flow"]
        if not isinstance(flow, dict) or set(flow) != FLOW_KEYS:
            raise WitnessError(f"tail.flow must have exactly the keys {sorted(FLOW_KEYS)}")
        self.order = integer(flow["order"], "tail.flow.order", 4, MAX_ORDER)
        self.jac_order = integer(flow["jac_order"], "tail.flow.jac_order", 3, MAX_JAC_ORDER)
        self.tol_bits = integer(flow["tol_bits"], "tail.flow.tol_bits", 20, self.prec - 8)
        self.max_steps = integer(flow["max_steps"], "tail.flow.max_steps", 1, MAX_STEPS)

    def in_box(self, Z: arb_mat, kappa: arb) -> str:
        """"" when |Z_ij|/κ ≤ H_ij is proved for every (i, j) ≠ (1, 1) (κ > 0 proved by the caller),
        else the first entry that fails."""
        for i in range(self.d):
            for j in range(i, self.d):
                if (i, j) != (0, 0) and not abs(Z[i, j]) / kappa <= balls.arb_of(self.H[i][j]):
                    return f"|S{i + 1}{j + 1}| ≤ H{i + 1}{j + 1}"
        return ""

    def returns(self, frame_params) -> str | None:
        """The return map from X (module docstring, (i) and (ii)); keeps κ for the bracket.  None
        when it is proved, else the reason.  `frame_params`: Ã, B̃, Ṽ in the witness's frame T
        (unscaled V: ε = 1/Σ̃11); the box lives in the frame T·D (module docstring, The box)."""
        d = self.d
        D = [[self.scale[i] if i == j else Fraction(0) for j in range(d)] for i in range(d)]
        _, A, B, V, _ = moment_frame(D, frame_params.A, frame_params.B, frame_params.V, exact.identity(d))
        frame_params = _Controls(A, B, V)
        with ctx.workprec(self.prec):
            X = arb_mat(d, d)
            for i in range(d):
                for j in range(d):
                    X[i, j] = arb(1) if i == j == 0 else arb(0) + arb(0, 1) * balls.arb_of(self.H[i][j])
            Ab = balls.arb_matrix(frame_params.A) * balls.interval(Fraction(0), self.eps_bar)
            r = enclose_lohner(None, X, Ab, frame_params.B, frame_params.V, None, self.tau, order=self.order,
                               jac_order=self.jac_order, prec=self.prec, tol_bits=self.tol_bits,
                               max_steps=self.max_steps, covariance_only=True, high_order_box=True,
                               width_limit=WIDTH_LIMIT)
            if not r.ok:
                return f"the return map of the turning tail is not enclosed ({r.reason})"
            Z = r.cov
            self.kappa = Z[0, 0]
            if not self.kappa > 1:
                return f"the growth Z11 > 1 of the return map is not proved (got {self.kappa.str(6)})"
            why = self.in_box(Z, self.kappa)
            if why:
                return f"the return map is not proved to land in its box ({why} fails)"
        return None

    def entry(self, S1: arb_mat, E: int) -> tuple[arb | None, str]:
        """(ε1, "") when S1 = Σ̃(t1)/2^E (the stage-1 enclosure) normalised by S1_11 lies in X and
        ε1 = 2^-E/S1_11 ≤ ε̄ is proved; else (None, the reason)."""
        c1 = S1[0, 0]
        if not c1 > 0:
            return None, "Σ̃11(t1) > 0 is not proved"
        S1 = arb_mat(S1)
        for i in range(self.d):
            for j in range(self.d):
                S1[i, j] = S1[i, j] / balls.arb_of(self.scale[i] * self.scale[j])
        why = self.in_box(S1, c1)
        if why:
            return None, f"Σ(t1) is not proved to enter the box of the turning tail ({why} fails)"
        eps1 = balls.arb_of(Fraction(1, 2 ** E)) / c1
        if not eps1 <= balls.arb_of(self.eps_bar):
            return None, "ε1 = 1/Σ̃11(t1) ≤ eps_bar is not proved"
        return eps1, ""

    def bracket(self, eps1: arb) -> tuple[arb, arb]:
        """(ε1_lo·τκhi/(κhi − 1), ε1_hi·τκlo/(κlo − 1)): T* − t1 lies between them."""
        tau = balls.arb_of(self.tau)
        klo, khi = arb(self.kappa.lower()), arb(self.kappa.upper())
        below = arb(eps1.lower()) * tau * khi / (khi - 1)
        above = arb(eps1.upper()) * tau * klo / (klo - 1)
        return arb(below.lower()), arb(above.upper())

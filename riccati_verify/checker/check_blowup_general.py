"""Checker for `blowup_general` certificates: the blow-up time T* of Σ̇ = AΣ + ΣAᵀ + Q(Σ),
Q(Σ) = VΣBΣ + ΣBᵀΣVᵀ, for any (A, B, V), from a validated flow and a neighbourhood of the
equilibrium at infinity (MATH.md §15).

Claim: ``lower``, ``upper`` (T* ∈ (lower, upper]) and ``rate_lower``, ``rate_upper``
(‖Σ(t)‖_F (T* − t) → C ∈ [rate_lower, rate_upper] as t → T*; absent, and refused, with a turning tail).

**Stage 1 (finite part).**  The checker's own Lohner flow (`_lohner.enclose_lohner`) encloses
Σ over the witness's segments, t1 = Σ durations (a segment may carry its own tol_bits and order,
which change the work and the width, never what is proved).  Σ's equation does not involve the mean, so
the flow encloses Σ alone (`covariance_only`: its state is the Σ_ij, i ≤ j).  Before segment k the
enclosure is divided by 2^{e_k} (exact): Σ̃ = Σ/2^E solves the same equation with V
replaced by 2^E V, so the state stays below the flow's blow-up guard while ‖Σ‖ grows.  The
witness's flow.box picks the flow's a-priori box: "picard" (the default) or "high_order" (the
high-order box, `_lohner` points 1', 3 and 3': no step limit h ≲ 1/‖Df‖); both are proofs.
With two CPUs the chain is checked in two halves at once (`_stage1`: a second process starts the second
half from a box around a midpoint march, and its result counts only when that box is proved to contain
this process's enclosure at the cut; otherwise this process goes on from its own enclosure).

**Stage 2 (the tail, in compactified variables).**  For a symmetric C, w = 1/⟨C, Σ⟩ and
S = wΣ, with time ds = dt/w, solve (exactly, by the chain rule; no normalisation assumed)

    S′ = Q(S) − ⟨C, Q(S)⟩S + w(L(S) − ⟨C, L(S)⟩S),   w′ = −w g(S, w),
    g(S, w) = ⟨C, Q(S)⟩ + w⟨C, L(S)⟩,   L(S) = AS + SAᵀ,

a polynomial field G on z = (S_ij (i ≤ j), w) ∈ ℝⁿ, n = d(d+1)/2 + 1.  The witness gives a
centre ẑ = (Ŝ, 0), a rational P ≻ 0, ρ² > 0 and β > 0.  With the ellipsoid
N = {(z − ẑ)ᵀP(z − ẑ) ≤ ρ²} and Z ⊇ N its box (half-widths ρ·√(P⁻¹)_ii), the checker proves
in balls:

1. P ≻ 0, and −(PM + MᵀP) − 2βP ≻ 0 for every M in the interval Jacobian DG(Z)
   (interval Cholesky: every symmetric member of the ball matrix is then PD);
2. G(ẑ)ᵀP G(ẑ) < β²ρ²;
3. z1 = (S1, w1) ∈ N for every Σ(t1) in the stage-1 enclosure, with ⟨C, Σ(t1)⟩ > 0;
4. g > 0 on Z: λ_lo ≤ g ≤ λ_hi there.

On ∂N, e = z − ẑ: (d/ds) eᵀPe = 2eᵀP G(ẑ) + eᵀ(PM_e + M_eᵀP)e with M_e = ∫DG(ẑ + τe)dτ ∈
DG(Z) (Z is convex), so by 1, 2 and Cauchy-Schwarz it is ≤ 2ρ(√(G(ẑ)ᵀPG(ẑ)) − βρ) < 0: N is
forward invariant, and by 1 the flow contracts the P-norm on N at rate β, so the solution
from z1 tends to the unique equilibrium z∞ = (S∞, 0) in N.  On N, w′/w = −g ∈ [−λ_hi, −λ_lo],
so t(s) = t1 + ∫_{s1}^s w increases to T∞ ∈ [t1 + w1/λ_hi, t1 + w1/λ_lo] while
|⟨C, Σ⟩| = 1/w → ∞: Σ = S/w solves the moment ODE up to T∞ and is unbounded there, so
T* = T∞.  Near T*, T* − t = ∫_s^∞ w ds ~ w/g(z∞), so ‖Σ‖_F(T* − t) → ‖S∞‖_F/g(z∞), enclosed
by ‖S‖_F(Z)/g(Z).

**Frame (optional).**  With an invertible rational T (witness "frame"), Σ̃ = T⁻¹ΣT⁻ᵀ solves the
same moment equation with Ã = T⁻¹AT, B̃ = TᵀBT, Ṽ = T⁻¹VT (substitute Σ = TΣ̃Tᵀ: T⁻¹(VΣBΣ)T⁻ᵀ =
ṼΣ̃B̃Σ̃), from Σ̃0 = T⁻¹Σ0T⁻ᵀ, all computed exactly; Σ ↦ Σ̃ is a linear bijection, so both exist on
the same interval and are unbounded together: T* is the same.  Stages 1 and 2 run on the tilde
problem (C, centre, P, segments are in its coordinates); only the rate is mapped back:
‖Σ‖_F = ‖TS̃Tᵀ‖_F/w, so the rate is ‖TS∞Tᵀ‖_F/g(z∞), enclosed by ‖T S(Z) Tᵀ‖_F/g(Z).  A frame
matters for the work only: the ball Taylor coefficients on a box grow with the absolute values
|Ṽ|, |B̃| (no cancellation), so a frame in which the blow-up direction is a basis vector and V is
nearly block-triangular allows the flow several times longer steps.

**V = vI (witness "tail", kind "continuum").**  Every rank-one direction is then an equilibrium at
infinity: a continuum, around which no ellipsoid contracts.  The witness replaces C, centre, P, rho2
and beta by a tail; stage 1 is the same, and stage 2 is the continuum argument of `_continuum_tail`
(its docstring is that proof): C = e1e1ᵀ, a Schur chart S = [[1, pᵀ], [p, ppᵀ + E]], transverse
contraction of y = (E, w) at rate β on a box Z, and a bounded drift of the neutral p inside Z.

**A turning direction (witness "tail", kind "turning").**  When the direction at infinity keeps turning
in the plane of a complex pair of V there is no equilibrium at infinity.  The tail of `_turning_tail`
(its docstring is that proof) replaces C, centre, P, rho2 and beta: in the witness's frame times an
exact diagonal scale, C = e1e1ᵀ and a box X = {S11 = 1, |S_ij| ≤ H_ij} that one validated flow of
time τ, with A in the ball
[0, ε̄]·Ã (homogeneity: every later scale at once), maps into itself after normalising by Z11 while
Z11 grows by κ ∈ [κlo, κhi], κlo > 1; then T* − t1 ∈ [ε1τκhi/(κhi − 1), ε1τκlo/(κlo − 1)], ε1 = 1/Σ̃11(t1).
The claim then has no rate keys (‖Σ‖_F(T* − t) has no limit along a turning direction).

Everything is recomputed from the parameters and the witness in ball arithmetic; the witness
is data to re-check, and its sizes (d, segments, orders, precision, steps) are bounded.  Their product
is not small: at d = 8 with the largest order, precision and step budget one stage-1 step takes about
0.5 s, so a hostile witness can ask for hours (review s19); `verify_certificate(max_seconds=...)` and
`riccati-verify verify --max-seconds` bound the wall time (`core.deadline`).
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, arb_mat, ctx

from riccati_verify.core import balls, exact
from riccati_verify.core.frame import moment_frame
from riccati_verify.core.progress import Progress
from riccati_verify.checker.verify import CheckResult, fmt_q
from riccati_verify.checker._stage1 import BOXES, Segment, candidates
from riccati_verify.checker._continuum_tail import ContinuumTail, first_axis
from riccati_verify.checker._turning_tail import TurningTail
from riccati_verify.checker._reduced_riccati import WitnessError, integer, rational, rational_matrix, witness_checked

__all__ = ["check", "CLAIM_KEYS", "WITNESS_KEYS", "lohner_options", "MAX_PREC"]

CLAIM_KEYS = frozenset({"lower", "upper", "rate_lower", "rate_upper"})
"""The claim's keys besides `kind`; `verify_certificate` refuses any other."""
WITNESS_KEYS = frozenset({"precision_bits", "flow", "segments", "C", "centre", "P", "rho2", "beta", "frame",
                          "tail"})
"""The witness's keys; `verify_certificate` refuses any other ("frame" is optional; "tail", a
continuum tail for V = vI (`_continuum_tail`) or a turning tail (`_turning_tail`), replaces C,
centre, P, rho2 and beta)."""
FLOW_KEYS = frozenset({"order", "jac_order", "tol_bits", "max_steps"})
SEGMENT_KEYS = frozenset({"duration", "rescale_log2"})
SEGMENT_FLOW_KEYS = frozenset({"tol_bits", "order"})
"""A segment's optional own flow tolerance and Taylor order (else the witness flow's): work only."""

MAX_DIM = 8
MAX_SEGMENTS = 64
MAX_RESCALE_LOG2 = 64
MAX_PREC = 1024
MAX_ORDER = 60
MAX_JAC_ORDER = 20
MAX_STEPS_TOTAL = 40_000


def check(claim: dict, problem, witness: dict) -> CheckResult:
    """Re-check one `blowup_general` claim from its witness (the entry point `verify_certificate` calls)."""
    return witness_checked(_check, claim, problem, witness)


def _sym(M: exact.Matrix, where: str) -> exact.Matrix:
    if not exact.is_symmetric(M):
        raise WitnessError(f"{where} must be symmetric")
    return M


# --- stage 1 -------------------------------------------------------------------------------

def lohner_options(witness: dict, prec: int, optional: frozenset = frozenset()) -> tuple[int, int, int, int]:
    """(order, jac_order, tol_bits, max_steps) from witness["flow"], each bounded; `optional`: the
    keys the caller reads itself and allows besides those."""
    flow = witness.get("flow")
    if not isinstance(flow, dict) or not FLOW_KEYS <= set(flow) <= FLOW_KEYS | optional:
        extra = f" (optional: {sorted(optional)})" if optional else ""
        raise WitnessError(f"flow must have exactly the keys {sorted(FLOW_KEYS)}{extra}")
    return (integer(flow["order"], "flow.order", 4, MAX_ORDER),
            integer(flow["jac_order"], "flow.jac_order", 3, MAX_JAC_ORDER),
            integer(flow["tol_bits"], "flow.tol_bits", 20, prec - 8),
            integer(flow["max_steps"], "flow.max_steps", 1, MAX_STEPS_TOTAL))


def _segments(witness: dict, prec: int) -> tuple[list[Segment], int, int, str]:
    """The witness's segments, parsed and bounded, with (jac_order, max_steps, the flow's box: one of BOXES)."""
    order, jac_order, tol_bits, max_steps = lohner_options(witness, prec, frozenset({"box"}))
    box = witness["flow"].get("box", "picard")
    if box not in BOXES:
        raise WitnessError(f"flow.box must be one of {', '.join(BOXES)}")
    segs = witness.get("segments")
    if not isinstance(segs, list) or not 1 <= len(segs) <= MAX_SEGMENTS:
        raise WitnessError(f"segments must be a list of 1..{MAX_SEGMENTS} segments")
    out = []
    for k, seg in enumerate(segs):
        if not isinstance(seg, dict) or not SEGMENT_KEYS <= set(seg) <= SEGMENT_KEYS | SEGMENT_FLOW_KEYS:
            raise WitnessError(f"segments[{k}] must have the keys duration, rescale_log2 "
                               f"(optional: {', '.join(sorted(SEGMENT_FLOW_KEYS))})")
        dur = rational(seg["duration"], f"segments[{k}].duration")
        e = integer(seg["rescale_log2"], f"segments[{k}].rescale_log2", 0, MAX_RESCALE_LOG2)
        if not dur > 0:
            raise WitnessError(f"segments[{k}].duration must be positive")
        # a segment's own tolerance and order (work parameters, bounded like the flow's): later
        # segments need fewer bits (MATH.md §15, "How many bits the flow needs")
        seg_order = integer(seg["order"], f"segments[{k}].order", 4, MAX_ORDER) if "order" in seg else order
        seg_tol = integer(seg["tol_bits"], f"segments[{k}].tol_bits", 20, prec - 8) if "tol_bits" in seg else tol_bits
        out.append(Segment(dur, e, seg_order, seg_tol))
    return out, jac_order, max_steps, box


def _stage1(params, cov, witness: dict, prec: int, width_limit: float | None, lower: Fraction, finish,
            before=None):
    """Stage 1 by the Lohner flow over the witness's segments (`_stage1.candidates`: the chain, on two
    cores with a speculative second half), then finish(t1, Σ(t1)/2^E, E) -> CheckResult, the caller's
    entry test and bracket: the first enclosure that finish accepts decides, else the chain's verdict.
    before(): checks that run first (raising WitnessError), while the second half already starts.
    The flow stops early once a relative radius passes `width_limit` (work only)."""
    segs, jac_order, max_steps, box = _segments(witness, prec)
    t1 = sum((seg.duration for seg in segs), Fraction(0))
    # tens of seconds at 30 digits: the segments count as units, each step a note
    res = None
    with Progress(len(segs), "flow to blow-up") as bar:
        for S1, E in candidates(params.A, params.B, params.V, cov, segs, prec, jac_order, box, width_limit,
                                max_steps, lower - t1 if lower > t1 else None, bar.note, before=before,
                                done=lambda k, n: bar.step(f"segment {k + 1}: {n} steps")):
            res = finish(t1, S1, E)
            if res.valid:
                break
    return res


# --- stage 2: the compactified field in balls ---------------------------------------------

def _inner(C: arb_mat, S: arb_mat) -> arb:
    d = C.nrows()
    return sum((C[i, j] * S[i, j] for i in range(d) for j in range(d)), arb(0))


def _sym2(X: arb_mat) -> arb_mat:
    return X + X.transpose()


class _Compactified:
    """G(z) and its Jacobian for the compactification w = 1/⟨C, Σ⟩, S = wΣ (module docstring)."""

    def __init__(self, A, B, V, C):
        self.A, self.B, self.V, self.C = (balls.arb_matrix(M) for M in (A, B, V, C))
        self.d = len(A)
        self.pairs = exact.sym_pairs(self.d)
        self.n = len(self.pairs) + 1

    def unpack(self, z: arb_mat) -> tuple[arb_mat, arb]:
        S = arb_mat(self.d, self.d)
        for k, (i, j) in enumerate(self.pairs):
            S[i, j] = S[j, i] = z[k, 0]
        return S, z[self.n - 1, 0]

    def pack(self, S: arb_mat, w: arb) -> arb_mat:
        z = arb_mat(self.n, 1)
        for k, (i, j) in enumerate(self.pairs):
            z[k, 0] = S[i, j]
        z[self.n - 1, 0] = w
        return z

    def parts(self, S: arb_mat):
        QS = _sym2(self.V * S * self.B * S)
        LS = _sym2(self.A * S)
        return QS, LS, _inner(self.C, QS), _inner(self.C, LS)

    def g(self, S: arb_mat, w: arb) -> arb:
        _, _, cq, cl = self.parts(S)
        return cq + w * cl

    def field(self, z: arb_mat) -> arb_mat:
        S, w = self.unpack(z)
        QS, LS, cq, cl = self.parts(S)
        return self.pack(QS - S * cq + (LS - S * cl) * w, -w * (cq + w * cl))

    def jacobian(self, z: arb_mat) -> arb_mat:
        """DG on the ball vector z (an enclosure of DG(x) for every x in z)."""
        S, w = self.unpack(z)
        QS, LS, cq, cl = self.parts(S)
        VSB, BS = self.V * S * self.B, self.B * S
        J = arb_mat(self.n, self.n)
        for c, (i, j) in enumerate(self.pairs):
            E = arb_mat(self.d, self.d)
            E[i, j] = E[j, i] = 1
            dQ = _sym2(self.V * E * BS + VSB * E)
            dL = _sym2(self.A * E)
            cdq, cdl = _inner(self.C, dQ), _inner(self.C, dL)
            col = self.pack(dQ - S * cdq - E * cq + (dL - S * cdl - E * cl) * w, -w * cdq - w * w * cdl)
            for r in range(self.n):
                J[r, c] = col[r, 0]
        col = self.pack(LS - S * cl, -cq - 2 * w * cl)
        for r in range(self.n):
            J[r, self.n - 1] = col[r, 0]
        return J


class _Moments:
    """The controls of the moment equation in a frame (A, B, V: what `_stage1` and `_Compactified` read)."""

    def __init__(self, A, B, V):
        self.A, self.B, self.V = A, B, V


def _framed(witness: dict, params, cov, d: int):
    """(T, controls, Σ0) in the witness's frame T (module docstring; `core.frame`), exact;
    (None, params, cov) without one."""
    if "frame" not in witness:
        return None, params, cov
    T = rational_matrix(witness["frame"], "frame", d, d)
    try:
        _, A, B, V, S0 = moment_frame(T, params.A, params.B, params.V, cov)
    except ValueError as e:
        raise WitnessError(f"frame must be an invertible matrix of short rationals ({e})") from None
    return T, _Moments(A, B, V), S0


def _quad(P: arb_mat, e: arb_mat) -> arb:
    return (e.transpose() * P * e)[0, 0]


def _check(claim: dict, problem, witness: dict) -> CheckResult:
    params, state = problem.params, problem.state
    if params is None or state is None:
        return CheckResult(False, "a blow-up certificate needs parameters and a Gaussian state")
    d = params.dim
    if d > MAX_DIM:
        return CheckResult(False, f"blowup_general is checked up to d = {MAX_DIM} (got d = {d})")
    lo, hi = rational(claim.get("lower"), "claim.lower"), rational(claim.get("upper"), "claim.upper")
    tail = witness.get("tail")
    if isinstance(tail, dict) and tail.get("kind") == "turning":
        if not 0 <= lo < hi:
            raise WitnessError("the claim needs 0 <= lower < upper")
        if "rate_lower" in claim or "rate_upper" in claim:
            raise WitnessError("a turning tail proves no limit rate ‖Σ‖_F(T* − t) (along a turning direction "
                               "it oscillates with the phase): the claim must not state one")
        prec = integer(witness.get("precision_bits"), "precision_bits", 64, MAX_PREC)
        return _check_turning(claim, params, state.cov, witness, prec, (lo, hi))
    r_lo, r_hi = rational(claim.get("rate_lower"), "claim.rate_lower"), rational(claim.get("rate_upper"),
                                                                                   "claim.rate_upper")
    if not (0 <= lo < hi and 0 < r_lo <= r_hi):
        raise WitnessError("the claim needs 0 <= lower < upper and 0 < rate_lower <= rate_upper")
    prec = integer(witness.get("precision_bits"), "precision_bits", 64, MAX_PREC)
    if "tail" in witness:
        return _check_continuum(claim, params, state.cov, witness, prec, (lo, hi, r_lo, r_hi))
    n = d * (d + 1) // 2 + 1
    C = _sym(rational_matrix(witness.get("C"), "C", d, d), "C")
    S_hat = _sym(rational_matrix(witness.get("centre"), "centre", d, d), "centre")
    P = _sym(rational_matrix(witness.get("P"), "P", n, n), "P")
    rho2, beta = rational(witness.get("rho2"), "rho2"), rational(witness.get("beta"), "beta")
    if not (rho2 > 0 and beta > 0):
        raise WitnessError("rho2 and beta must be positive")

    T, params, cov = _framed(witness, params, state.cov, d)
    with ctx.workprec(prec):
        F = _Compactified(params.A, params.B, params.V, C)
        Pb = balls.arb_matrix(P)
        if not balls.proves_positive_definite(Pb):
            return CheckResult(False, "P ≻ 0 is not proved")
        zc = F.pack(balls.arb_matrix(S_hat), arb(0))
        rho2b, betab = balls.arb_of(rho2), balls.arb_of(beta)
        # the box Z ⊇ N
        Pinv = Pb.inv()
        Z = arb_mat(n, 1)
        for i in range(n):
            Z[i, 0] = zc[i, 0] + arb(0, 1) * (rho2b * Pinv[i, i]).sqrt()
        if not all(x.is_finite() for x in Z.entries()):
            return CheckResult(False, "the box around the neighbourhood is not finite")
        # 1. contraction of the P-norm on Z
        K = Pb * F.jacobian(Z)
        Nm = -(K + K.transpose()) - Pb * (2 * betab)
        if not balls.proves_positive_definite(Nm):
            return CheckResult(False, "−(PM + MᵀP) − 2βP ≻ 0 on the box is not proved")
        # 2. the centre is close enough to an equilibrium
        g0 = F.field(zc)
        if not _quad(Pb, g0) < betab * betab * rho2b:
            return CheckResult(False, "G(ẑ)ᵀP G(ẑ) < β²ρ² is not proved: the centre is not close enough "
                                      "to an equilibrium at infinity")
        # 4. the exponential rate of w on Z
        SZ, wZ = F.unpack(Z)
        lam = F.g(SZ, wZ)
        if not lam > 0:
            return CheckResult(False, "g = ⟨C, Q(S)⟩ + w⟨C, L(S)⟩ > 0 on the box is not proved")
        # the rate ‖S∞‖_F / g(z∞), z∞ ∈ N ⊆ Z
        SZo = SZ if T is None else balls.arb_matrix(T) * SZ * balls.arb_matrix(exact.transpose(T))
        nS = sum((SZo[i, j] * SZo[i, j] for i in range(d) for j in range(d)), arb(0)).sqrt()
        rate = nS / lam
        if not (balls.arb_of(r_lo) <= rate.lower() and rate.upper() <= balls.arb_of(r_hi)):
            return CheckResult(False, f"the proved rate {rate.str(8)} is not inside [rate_lower, rate_upper]")
        # S1/⟨C, S1⟩ has norm ≈ 1, so once Σ's relative radius exceeds the box Z's largest
        # half-width the entry test 3 cannot pass: the flow may stop there (it saves work only).
        # The flow's own default, 2^-(tol_bits/2), would force tol_bits to twice the bits of ‖Σ(t1)‖
        # although the bracket needs only the digits asked.
        half = max(float(Z[i, 0].rad()) for i in range(n))
        width_limit = min(2.0 ** -10, half)
    # the expensive part last: a tampered neighbourhood fails before the flow runs
    def finish(t1, S1, E):
        with ctx.workprec(prec):
            # 3. entry: z1 = (Σ̃1/⟨C, Σ̃1⟩, 2^-E/⟨C, Σ̃1⟩) lies in N
            c1 = _inner(F.C, S1)
            if not c1 > 0:
                return CheckResult(False, "⟨C, Σ(t1)⟩ > 0 is not proved")
            w1 = balls.arb_of(Fraction(1, 2 ** E)) / c1
            e1 = F.pack(S1 * (1 / c1), w1) - zc
            if not _quad(Pb, e1) < rho2b:
                return CheckResult(False, "Σ(t1) is not proved to enter the neighbourhood of infinity "
                                          "((z1 − ẑ)ᵀP(z1 − ẑ) < ρ² fails)")
            outside = _outside_bracket(t1, w1, lam, lo, hi)
        if outside:
            return CheckResult(False, outside)
        return CheckResult(True, f"T* ∈ ({claim['lower']}, {claim['upper']}]: Lohner flow to t1 = {fmt_q(t1, 12)} "
                                 f"({len(witness['segments'])} segments), then a contracting ellipsoid around the "
                                 f"equilibrium at infinity with w′/w ∈ [−{lam.upper().str(6, radius=False)}, "
                                 f"−{lam.lower().str(6, radius=False)}] (arb, {prec} bits)")
    return _stage1(params, cov, witness, prec, width_limit, lo, finish)


def _outside_bracket(t1: Fraction, w1: arb, lam: arb, lo: Fraction, hi: Fraction) -> str:
    """"" when the proved T* ∈ [t1 + w1/λ_hi, t1 + w1/λ_lo] lies inside (lower, upper], else the reason."""
    T = balls.arb_of(t1) + w1 / lam
    if balls.arb_of(lo) < T.lower() and T.upper() <= balls.arb_of(hi):
        return ""
    return (f"the proved T* ∈ [{T.lower().str(20, radius=False)}, {T.upper().str(20, radius=False)}] "
            f"is not inside (lower, upper]")


def _check_continuum(claim: dict, params, cov, witness: dict, prec: int, bounds) -> CheckResult:
    """Stage 1, then the continuum tail of `_continuum_tail` (V = vI) in place of the ellipsoid."""
    lo, hi, r_lo, r_hi = bounds
    d = params.dim
    T, params, cov = _framed(witness, params, cov, d)
    with ctx.workprec(prec):
        tail = ContinuumTail(_Compactified(params.A, params.B, params.V, first_axis(d)), witness["tail"],
                             params.V, witness)
        why = tail.neighbourhood(T, r_lo, r_hi)
        if why is not None:
            return CheckResult(False, why)
        # as in `_check`: once Σ's relative radius passes Z's largest half-width the entry cannot pass
        width_limit = min(2.0 ** -10, max(tail.half_widths()))

    def finish(t1, S1, E):
        with ctx.workprec(prec):
            w1, why = tail.entry(S1, E)
            if w1 is None:
                return CheckResult(False, why)
            outside = _outside_bracket(t1, w1, tail.lam, lo, hi)
        if outside:
            return CheckResult(False, outside)
        return CheckResult(True, f"T* ∈ ({claim['lower']}, {claim['upper']}]: Lohner flow to t1 = {fmt_q(t1, 12)} "
                                 f"({len(witness['segments'])} segments), then the continuum of rank-one "
                                 f"equilibria at infinity of V = vI: transverse contraction at rate "
                                 f"{witness['tail']['beta']}, bounded drift along it, w′/w ∈ "
                                 f"[−{tail.lam.upper().str(6, radius=False)}, −{tail.lam.lower().str(6, radius=False)}] "
                                 f"(arb, {prec} bits)")
    return _stage1(params, cov, witness, prec, width_limit, lo, finish)


def _check_turning(claim: dict, params, cov, witness: dict, prec: int, bounds) -> CheckResult:
    """The return map of `_turning_tail` (a direction turning in a complex pair's plane), then
    stage 1 and the entry into the tail's box."""
    lo, hi = bounds
    d = params.dim
    _, framed, cov = _framed(witness, params, cov, d)
    tail = TurningTail(witness["tail"], witness, d)

    def returns():
        # the return map first: a tampered tail fails before the chain
        why = tail.returns(framed)
        if why is not None:
            raise WitnessError(why)

    def finish(t1, S1, E):
        with ctx.workprec(prec):
            eps1, why = tail.entry(S1, E)
            if eps1 is None:
                return CheckResult(False, why)
            below, above = tail.bracket(eps1)
            Tlo, Thi = balls.arb_of(t1) + below, balls.arb_of(t1) + above
            if not (balls.arb_of(lo) < Tlo.lower() and Thi.upper() <= balls.arb_of(hi)):
                return CheckResult(False, f"the proved T* ∈ [{Tlo.lower().str(20, radius=False)}, "
                                          f"{Thi.upper().str(20, radius=False)}] is not inside (lower, upper]")
        return CheckResult(True, f"T* ∈ ({claim['lower']}, {claim['upper']}]: Lohner flow to t1 = {fmt_q(t1, 12)} "
                                 f"({len(witness['segments'])} segments), then a return map of a direction "
                                 f"turning in V's invariant plane, valid at every scale ε ≤ "
                                 f"{fmt_q(tail.eps_bar, 3)}: Σ̃11 grows by κ ∈ [{tail.kappa.lower().str(8, radius=False)}, "
                                 f"{tail.kappa.upper().str(8, radius=False)}] per return of τ = {fmt_q(tail.tau, 6)} "
                                 f"(arb, {prec} and {tail.prec} bits)")
    return _stage1(framed, cov, witness, prec, 2.0 ** -10, lo, finish, returns)
